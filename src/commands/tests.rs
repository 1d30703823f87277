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

/// Issue 13 / docs/spec.md §10: once the lease is lost the run ends with exit 4 naming the
/// loss — whatever the lost lease made of the run: a launch refused ("could not be
/// launched", exit 3), a wait or a queue stopped ("interrupted", exit 3 or 1), a pass that
/// went well. Before, only `--watch` of `provision` and `consolidate` said so; `provision
/// --yes`, `consolidate --yes` and `drift replace` ended with what the stop caused.
#[test]
fn a_lost_lease_is_the_run_s_error_whatever_the_run_made_of_it() {
    use crate::error::{CommandError, Exit};
    let gate = crate::k8s::WriteGate::default();
    let launched: Result<Exit, CommandError> = Err(CommandError::remote(
        "1 of 1 NodeClaim(s) could not be launched",
    ));
    assert_eq!(
        super::live::after(Some(&gate), Ok(Exit::Finding)).unwrap(),
        Exit::Finding
    );
    gate.close("the operator lease was taken over by bob@desk pid 7 [0badc0de]".into());
    for result in [launched, Ok(Exit::Finding), Ok(Exit::Ok)] {
        let err = super::live::after(Some(&gate), result).unwrap_err();
        assert_eq!(err.exit, Exit::Refused);
        assert_eq!(
            err.message,
            "the operator lease was taken over by bob@desk pid 7 [0badc0de]: this run stops"
        );
    }
    assert_eq!(
        super::live::after(None, Ok(Exit::Ok)).unwrap(),
        Exit::Ok,
        "no lease, no loss"
    );
}
