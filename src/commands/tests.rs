//! Tests of the flag rules every command shares (`commands/mod.rs`).

use crate::cli::GlobalArgs;
use crate::cloud::ami::KubeVersion;

/// `--kubernetes-version`: one rule for every command — the early check (`global_flags`),
/// the commands that parse it (`drift`, `ami`, `nodes`, live `provision`) and `convert`,
/// which writes it into SSM parameter paths: an empty value is the flag not given (as kubectl
/// takes an empty flag value), a malformed one exit 2, a good one `X.Y`.
#[test]
fn kubernetes_version_flag_is_one_rule_everywhere() {
    type Case<'a> = (Option<&'a str>, Result<Option<KubeVersion>, &'a str>);
    let cases: [Case; 6] = [
        (None, Ok(None)),
        (Some(""), Ok(None)),
        (Some("1.30"), Ok(Some(KubeVersion::new(1, 30)))),
        (Some("v1.29.3"), Ok(Some(KubeVersion::new(1, 29)))),
        (
            Some(" "),
            Err("--kubernetes-version: invalid Kubernetes version"),
        ),
        (
            Some("latest"),
            Err("--kubernetes-version: invalid Kubernetes version"),
        ),
    ];
    for (flag, want) in cases {
        let global = GlobalArgs {
            kubernetes_version: flag.map(str::to_string),
            ..GlobalArgs::default()
        };
        let parsed = super::kubernetes_version_flag(&global);
        let early = super::global_flags(&global);
        let convert = super::convert::options(&global);
        match want {
            Ok(version) => {
                assert_eq!(parsed.unwrap(), version, "{flag:?}");
                assert!(early.is_ok(), "{flag:?}");
                assert_eq!(
                    convert.unwrap().kubernetes_version,
                    version.map(|v| v.to_string()),
                    "{flag:?}"
                );
            }
            Err(text) => {
                for e in [
                    parsed.unwrap_err(),
                    early.unwrap_err(),
                    convert.unwrap_err(),
                ] {
                    assert_eq!(e.exit, crate::error::Exit::Input, "{flag:?}");
                    assert!(e.message.starts_with(text), "{flag:?}: {}", e.message);
                }
            }
        }
    }
}
