//! AMI families, user data, subnets and security groups, line by line (session 29,
//! docs/upstream-tests.md "… line by line (s29-lineami)"): what `provision --yes` writes into the
//! launch template moto stores, against `aws v1.14.1: pkg/providers/amifamily/bootstrap/`.

use crate::aws_launch::all_template_data;
use crate::provision_live::Walk;
use crate::support::root;

/// The user data of every launch template moto holds, base64-decoded.
pub(crate) fn template_user_data(walk: &Walk) -> Vec<String> {
    all_template_data(&walk.moto)
        .iter()
        .map(|d| {
            let encoded = d["UserData"].as_str().expect("UserData");
            let bytes = kubectl_karpenter::cloud::userdata::base64_decode(encoded).expect("base64");
            String::from_utf8(bytes).expect("utf-8")
        })
        .collect()
}

/// `provision --yes` of a fixture (one pending pod), then every launch template's user data.
fn provisioned_user_data(test: &str, fixture: &str) -> Vec<String> {
    let walk = Walk::with(
        &format!("ami-line-by-line-{test}"),
        false,
        "crds/v1",
        |_| Vec::new(),
    );
    let manifest =
        std::fs::read_to_string(root().join("tests/fixtures/ami-line-by-line").join(fixture))
            .unwrap();
    walk.apply(fixture, &manifest);
    walk.wait_unschedulable(1);
    let out = walk.run(&["karpenter", "provision", "--yes"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let user_data = template_user_data(&walk);
    assert!(!user_data.is_empty(), "no launch template");
    user_data
}

/// `bottlerocketsettings.go` `UnmarshalTOML`/`MarshalTOML` and `bottlerocket.go` `Script`
/// (launchtemplate/suite_test.go "Bottlerocket" › "should merge in custom user data",
/// `testdata/br_userdata_{input,merged}.golden`; "should override kube reserved values in user
/// data"): the class's own `node-taints` entry, its `kube-reserved` table (the class sets
/// `kubelet.kubeReserved`), an unknown `settings.kubernetes` key and a table outside `settings`
/// do not reach the node; `settings.ntp` does. Before: all were kept, so the node registered
/// with a taint Karpenter's would not carry.
#[test]
fn bottlerocket_user_data_keeps_what_karpenter_keeps() {
    let user_data = provisioned_user_data("br", "bottlerocket-userdata.yaml");
    for ud in &user_data {
        for kept in [
            "[settings.ntp]",
            "[settings.kubernetes.kube-reserved]\n\"cpu\" = \"200m\"",
            "[settings.kubernetes.node-labels]",
        ] {
            assert!(ud.contains(kept), "{kept:?} missing:\n{ud}");
        }
        for dropped in [
            "users-own",
            "unknown-setting",
            "memory = \"1Gi\"",
            "[outside]",
        ] {
            assert!(!ud.contains(dropped), "{dropped:?} kept:\n{ud}");
        }
    }
}

/// aws v1.14.1 `amifamily/resolver.go` `RejectForbiddenLabels` (launchtemplate/suite_test.go
/// DescribeTable "should not pass any labels in restricted domains", Entry
/// `node-restriction.kubernetes.io`): a pool's `node-restriction.kubernetes.io/team` label is
/// not in the NodeConfig's `--node-labels` (a kubelet may not set it: NodeRestriction refuses
/// the Node); its other label is. Before: it was passed, and the node could not register.
#[test]
fn a_node_restriction_label_is_not_passed_to_the_kubelet() {
    for ud in provisioned_user_data("restricted", "restricted-label.yaml") {
        assert!(ud.contains("eks-immersion-team=my-team"), "{ud}");
        assert!(!ud.contains("node-restriction.kubernetes.io"), "{ud}");
    }
}

/// aws v1.14.1 `bootstrap/windows.go` `Script` (launchtemplate/suite_test.go "Windows" ›
/// "should bootstrap when custom user data is empty"): a `windows2022@latest` class launches
/// with the PowerShell bootstrap. Before: AL2's bash script, which a Windows AMI does not run.
#[test]
fn a_windows_class_launches_with_the_powershell_bootstrap() {
    for ud in provisioned_user_data("windows", "windows.yaml") {
        assert!(ud.starts_with("<powershell>\n"), "{ud}");
        assert!(ud.contains("Start-EKSBootstrap.ps1"), "{ud}");
        assert!(!ud.contains("/etc/eks/bootstrap.sh"), "{ud}");
    }
}
