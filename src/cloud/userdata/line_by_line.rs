//! The user data each family writes, read line by line against `aws v1.14.1:
//! pkg/providers/amifamily/bootstrap/` (session 29, docs/upstream-tests.md "AMI families, user
//! data, subnets and security groups, line by line").

use super::*;
use crate::model::taints::Effect;

fn bootstrap() -> Bootstrap {
    Bootstrap {
        cluster_name: "test-cluster".into(),
        endpoint: "https://test-cluster".into(),
        ca_bundle: "Y2E=".into(),
        service_cidr: Some("10.100.0.0/16".into()),
        cluster_dns: vec!["10.0.100.10".into()],
        labels: [("karpenter.sh/nodepool".to_string(), "default".to_string())].into(),
        taints: vec![Taint::new("foo", "bar", Effect::NoExecute)],
        max_pods: Some(110),
        ..Bootstrap::default()
    }
}

/// `bottlerocketsettings.go` `UnmarshalTOML`/`MarshalTOML` and `bottlerocket.go` `Script`
/// (launchtemplate/suite_test.go "Bottlerocket" › "should merge in custom user data", inputs
/// and outputs `testdata/br_userdata_{input,merged}.golden`): of a class's TOML only `settings`
/// survives; in `settings.kubernetes` a key or table `BottlerocketKubernetes` does not name is
/// dropped, `node-taints` is the NodeClaim's alone; other `settings.*` tables stay.
#[test]
fn bottlerocket_keeps_of_the_class_toml_what_karpenter_reads_back() {
    let mut b = bootstrap();
    b.custom = Some(
        "[settings.kubernetes]\n\"unknown-setting\" = \"unknown\"\ncloud-provider = 'external'\nmax-pods = 9999 # replaced\n\n\
[settings.kubernetes.eviction-hard]\n\"memory.available\" = \"12%\"\n\n\
[settings.kubernetes.labels]\n\"replace\" = \"me\"\n\n\
[settings.kubernetes.node-labels]\n\"custom-node-label\" = \"custom\"\n\n\
[settings.kubernetes.node-taints]\n\"replace\" = [\"me:NoSchedule\"]\n\n\
[settings.network]\nhostname = \"test.local\"\n\n\
[other]\nkey = 1\n"
            .into(),
    );
    let got = render(Family::Bottlerocket, &b).unwrap();
    for kept in [
        "cloud-provider = 'external'",
        "max-pods = 110",
        "[settings.kubernetes.eviction-hard]\n\"memory.available\" = \"12%\"",
        "\"custom-node-label\" = \"custom\"",
        "\"karpenter.sh/nodepool\" = \"default\"",
        "[settings.kubernetes.node-taints]\n\"foo\" = [\"bar:NoExecute\"]\n",
        "[settings.network]\nhostname = \"test.local\"",
    ] {
        assert!(got.contains(kept), "{kept:?} missing in\n{got}");
    }
    for dropped in [
        "unknown-setting",
        "[settings.kubernetes.labels]",
        "\"replace\"",
        "[other]",
        "max-pods = 9999",
    ] {
        assert!(!got.contains(dropped), "{dropped:?} kept in\n{got}");
    }
    // No taints: the class's node-taints go all the same (`NodeTaints = map{}`, omitted empty).
    b.taints.clear();
    let got = render(Family::Bottlerocket, &b).unwrap();
    assert!(!got.contains("node-taints"), "{got}");
}

/// `bottlerocket.go` `Script`: a kubelet map the class sets replaces the user's table whole
/// (`s.Settings.Kubernetes.KubeReserved = b.KubeletConfig.KubeReserved`; suite_test.go
/// "should override kube reserved values in user data": exactly the class's 3 entries); a map
/// the class leaves unset keeps the user's.
#[test]
fn bottlerocket_class_kubelet_maps_replace_the_users_tables() {
    let mut b = bootstrap();
    b.kubelet.kube_reserved = [("cpu".to_string(), "2".to_string())].into();
    b.custom = Some(
        "[settings.kubernetes.kube-reserved]\nmemory = \"1Gi\"\n\n[settings.kubernetes.system-reserved]\nmemory = \"2Gi\"\n"
            .into(),
    );
    let got = render(Family::Bottlerocket, &b).unwrap();
    assert!(!got.contains("memory = \"1Gi\""), "{got}");
    assert!(
        got.contains("[settings.kubernetes.kube-reserved]\n\"cpu\" = \"2\"\n"),
        "{got}"
    );
    assert!(
        got.contains("[settings.kubernetes.system-reserved]\nmemory = \"2Gi\""),
        "{got}"
    );
}

/// `eksbootstrap.go` `Script` (`lo.Compact` drops an empty user data) and `nodeadm.go`
/// `parseUserData` (`userData == ""`: no entry): `userData: ""` adds no MIME part.
#[test]
fn an_empty_user_data_adds_no_part() {
    for family in [Family::Al2, Family::Al2023] {
        let mut b = bootstrap();
        let without = render(family, &b).unwrap();
        b.custom = Some(String::new());
        assert_eq!(render(family, &b).unwrap(), without, "{family:?}");
    }
}

/// `bootstrap.go` `nodeTaintArg` prints `corev1.Taint.ToString`: `key:Effect` for a taint
/// without a value (`testdata/al2_userdata_unmerged.golden`:
/// `--register-with-taints="karpenter.sh/unregistered:NoExecute"`).
#[test]
fn al2_prints_a_taint_without_value_as_key_and_effect() {
    let mut b = bootstrap();
    b.taints = vec![
        Taint::new("karpenter.sh/unregistered", "", Effect::NoExecute),
        Taint::new("foo", "bar", Effect::NoSchedule),
    ];
    let got = al2_script(&b);
    assert!(
        got.contains(
            "--register-with-taints=\"karpenter.sh/unregistered:NoExecute,foo=bar:NoSchedule\""
        ),
        "{got}"
    );
}

/// `eksbootstrap.go` `copyCustomUserDataParts` copies each part of the class's archive with all
/// its headers (`writer.CreatePart(p.Header)`, written sorted by key, keys canonical); nodeadm's
/// `mime.NewArchive` keeps only the content type. A base64 part thus stays one on AL2.
#[test]
fn al2_keeps_every_header_of_the_class_parts_and_al2023_only_the_content_type() {
    let mut b = bootstrap();
    b.custom = Some(
        "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"==B==\"\n\n--==B==\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\ncontent-transfer-encoding: base64\n\nZWNobyBoaQo=\n--==B==--\n"
            .into(),
    );
    let al2 = render(Family::Al2, &b).unwrap();
    assert!(
        al2.contains("--//\nContent-Transfer-Encoding: base64\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\nZWNobyBoaQo=\n--//\n"),
        "{al2}"
    );
    let al2023 = render(Family::Al2023, &b).unwrap();
    assert!(
        al2023.contains(
            "--//\nContent-Type: text/x-shellscript; charset=\"us-ascii\"\n\nZWNobyBoaQo=\n--//\n"
        ),
        "{al2023}"
    );
}

/// aws v1.14.1 `resolver.go` `RejectForbiddenLabels` (launchtemplate/suite_test.go DescribeTable
/// "should not pass any labels in restricted domains", its 6 Entries): no label of the
/// `node-restriction.kubernetes.io`, `kubernetes.io` or `k8s.io` domains, nor of their
/// subdomains, reaches the user data; others do.
#[test]
fn labels_in_restricted_domains_are_not_passed_to_the_kubelet() {
    for restricted in [
        "node-restriction.kubernetes.io/bar",
        "kubernetes.io/bar",
        "k8s.io/bar",
        "foo.node-restriction.kubernetes.io/bar",
        "foo.kubernetes.io/bar",
        "foo.k8s.io/bar",
    ] {
        assert!(!kubelet_may_set(restricted), "{restricted}");
    }
    for allowed in [
        "team",
        "example.com/bar",
        "karpenter.sh/nodepool",
        "kubernetes.iox/bar",
    ] {
        assert!(kubelet_may_set(allowed), "{allowed}");
    }
}

/// aws v1.14.1 `bootstrap/windows.go` `Script` (launchtemplate/suite_test.go "Windows" ›
/// "should merge and bootstrap with custom user data", "should bootstrap when custom user data
/// is empty": `testdata/windows_userdata_{unmerged,merged}.golden`): a Windows class gets the
/// PowerShell bootstrap — before, it fell back to AL2's bash script, which a Windows AMI does
/// not run. The family comes from `amiFamily` or the alias.
#[test]
fn windows_classes_get_the_powershell_bootstrap() {
    let mut b = bootstrap();
    b.taints = vec![Taint::new(
        "karpenter.sh/unregistered",
        "",
        Effect::NoExecute,
    )];
    let head = "<powershell>\n";
    let tail = "[string]$EKSBootstrapScriptFile = \"$env:ProgramFiles\\Amazon\\EKS\\Start-EKSBootstrap.ps1\"\n& $EKSBootstrapScriptFile -EKSClusterName 'test-cluster' -APIServerEndpoint 'https://test-cluster' -Base64ClusterCA 'Y2E=' -KubeletExtraArgs '--node-labels=\"karpenter.sh/nodepool=default\" --register-with-taints=\"karpenter.sh/unregistered:NoExecute\" --max-pods=110' -DNSClusterIP '10.0.100.10'\n</powershell>";
    assert_eq!(
        render(Family::Windows, &b).unwrap(),
        format!("{head}{tail}")
    );
    b.custom = Some("Write-Host \"custom\"".into());
    assert_eq!(
        render(Family::Windows, &b).unwrap(),
        format!("{head}Write-Host \"custom\"\n{tail}")
    );
    for family in ["Windows2019", "Windows2022", "Windows2025"] {
        assert_eq!(Family::parse(family), Some(Family::Windows), "{family}");
    }
    assert_eq!(
        Family::from_alias("windows2022@latest"),
        Some(Family::Windows)
    );
}
