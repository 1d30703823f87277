//! AWS provider Its through the binary, part 3 (session 32, docs/upstream-tests/aws.md "AWS
//! provider Its through the binary, part 3 (s32-itaws3)"): the AL2 custom-user-data Its of
//! `aws v1.14.1: pkg/providers/launchtemplate/suite_test.go` › "AL2 Custom UserData".

use super::*;
use crate::model::taints::Effect;

/// The launch-template suite's world (`suite_test.go` BeforeEach and the goldens' values): its
/// cluster, CA, DNS and service CIDR, `maxPods: 110`, the NodeClaim's labels and the
/// `karpenter.sh/unregistered` taint upstream appends (given here so whole goldens compare; our
/// launches leave it out, docs/karpenter.md §6.8).
pub(super) fn suite_world() -> Bootstrap {
    let labels = [
        ("karpenter.k8s.aws/ec2nodeclass", "default"),
        ("karpenter.sh/capacity-type", "on-demand"),
        ("karpenter.sh/do-not-sync-taints", "true"),
        ("karpenter.sh/nodepool", "default"),
        ("testing/cluster", "unspecified"),
    ];
    Bootstrap {
        cluster_name: "test-cluster".into(),
        endpoint: "https://test-cluster".into(),
        ca_bundle: "Y2EtYnVuZGxlCg==".into(),
        service_cidr: Some("10.100.0.0/16".into()),
        cluster_dns: vec!["10.0.100.10".into()],
        labels: labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        taints: vec![Taint::new(
            "karpenter.sh/unregistered",
            "",
            Effect::NoExecute,
        )],
        max_pods: Some(110),
        ..Bootstrap::default()
    }
}

/// The suite's world on AL2 with the class's `userData`.
fn al2(custom: Option<&str>) -> String {
    let b = Bootstrap {
        custom: custom.map(str::to_string),
        ..suite_world()
    };
    render(Family::Al2, &b).unwrap()
}

/// The suite's comparison: line breaks removed.
fn flat(s: &str) -> String {
    s.replace('\n', "")
}

const KARPENTERS: &str = "--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n#!/bin/bash -xe\nexec > >(tee /var/log/user-data.log|logger -t user-data -s 2>/dev/console) 2>&1\n/etc/eks/bootstrap.sh 'test-cluster' --apiserver-endpoint 'https://test-cluster' --b64-cluster-ca 'Y2EtYnVuZGxlCg==' \\\n--dns-cluster-ip '10.0.100.10' \\\n--use-max-pods false \\\n--kubelet-extra-args '--node-labels=\"karpenter.k8s.aws/ec2nodeclass=default,karpenter.sh/capacity-type=on-demand,karpenter.sh/do-not-sync-taints=true,karpenter.sh/nodepool=default,testing/cluster=unspecified\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\" --max-pods=110'\n--//--\n";

/// It: "should merge in custom user data" (`testdata/al2_userdata_input.golden`),
/// It: "should merge in custom user data when Content-Type is before MIME-Version"
/// (`al2_userdata_content_type_first_input.golden`),
/// It: "should merge in custom user data not in multi-part mime format"
/// (`al2_no_mime_userdata_input.golden`): all three give `al2_userdata_merged.golden` byte for
/// byte (the class's script first, then Karpenter's); It: "should handle empty custom user data":
/// `al2_userdata_unmerged.golden` (Karpenter's part alone).
#[test]
fn al2_custom_user_data_merges_as_the_goldens() {
    let script = "#!/bin/bash\necho \"Running custom user data script\"\n";
    let part = "--BOUNDARY\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n";
    let mime_first = format!(
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n{part}{script}\n--BOUNDARY--"
    );
    let type_first = format!(
        "Content-Type: multipart/mixed; boundary=\"BOUNDARY\"\nMIME-Version: 1.0\n\n{part}{script}\n--BOUNDARY--"
    );
    let head = "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n";
    let merged = format!(
        "{head}--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\n{script}\n{KARPENTERS}"
    );
    for (what, input) in [
        ("MIME", mime_first.as_str()),
        ("Content-Type first", type_first.as_str()),
        ("not MIME", script),
    ] {
        assert_eq!(flat(&al2(Some(input))), flat(&merged), "{what}");
    }
    let unmerged = flat(&format!("{head}{KARPENTERS}"));
    assert_eq!(flat(&al2(None)), unmerged);
    assert_eq!(flat(&al2(Some(""))), unmerged, "empty userData");
}
