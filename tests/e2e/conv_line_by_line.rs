//! Conversion (v1alpha5 → v1beta1 → v1), line by line (s29-lineconv; docs/upstream-tests.md
//! "Conversion (v1alpha5 → v1beta1 → v1), line by line"): the scenarios of Karpenter's own
//! conversions — aws v0.32.10 `tools/karpenter-convert` with `pkg/utils/nodeclass`, core/aws
//! v1.0.8 `pkg/apis/v1/*_conversion.go` — that show through `convert`, each converted and, where
//! it plans, planned before and after. Fixtures: `tests/fixtures/conv-line-by-line/` (ours).

use serde_json::Value;

use crate::support::{fixture, karpenter, Run};

fn path(name: &str) -> String {
    fixture(&format!("conv-line-by-line/{name}"))
        .to_string_lossy()
        .into_owned()
}

fn convert(name: &str) -> (Run, Vec<Value>) {
    let run = karpenter(&["convert", "-f", &path(name)], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let docs = serde_saphyr::from_multiple(&run.stdout).unwrap();
    (run, docs)
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind}/{name} in {docs:#?}"))
}

/// `provision --dry-run` of `files` with the fixture Deployment: (instance type, pods) per claim.
fn plan(files: &[&str]) -> Vec<(String, usize)> {
    let web = path("web.yaml");
    let mut args = vec!["provision", "--dry-run", "-o", "json", "-f", web.as_str()];
    for f in files {
        args.extend(["-f", f]);
    }
    let run = karpenter(&args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    json["nodeClaims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["instanceType"].as_str().unwrap_or_default().to_string(),
                c["pods"].as_array().map_or(0, Vec::len),
            )
        })
        .collect()
}

/// The fixture `name` and its conversion (`run`'s output) plan the same claims.
fn assert_plans_same(name: &str, run: &Run) {
    let converted = crate::support::write_temp(&format!("conv-line-{name}"), run.stdout.as_bytes());
    let converted = converted.to_string_lossy().into_owned();
    assert_eq!(plan(&[&path(name)]), plan(&[&converted]), "{}", run.stdout);
}

/// `aws::name: "a, b"`: v0.31/v0.32 split it at commas into one term per name (aws v0.32.10
/// `pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms`, used by karpenter-convert and by the
/// v0.31 runtime); before s29 `convert` wrote one term with the literal `a,b`, a name no AMI has.
#[test]
fn an_ami_name_list_converts_to_one_term_per_name_and_plans_the_same() {
    let (run, docs) = convert("ami-name-list.yaml");
    let terms = &find(&docs, "EC2NodeClass", "named")["spec"]["amiSelectorTerms"];
    let got: Vec<(&str, &str)> = terms
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["owner"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("team-eks-a-*", "123456789012"),
            ("team-eks-b-*", "123456789012")
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "spec.amiSelector[aws::name]: \"team-eks-a-*, team-eks-b-*\" became one term per name"
        ),
        "{}",
        run.stderr
    );
    assert_plans_same("ami-name-list.yaml", &run);
}

/// A v1beta1 class served by Karpenter v1.0 carries a v1 pin in
/// `compatibility.karpenter.k8s.aws/v1-alias-version`; aws v1.0.8 `ec2nodeclass_conversion.go`
/// `ConvertFrom` restores `al2023@<version>` ("should convert v1beta1 ec2nodeclass ami family
/// (alias version annotation)"); before s29 `convert` dropped the annotation and wrote `@latest`.
/// The pool's `WhenUnderutilized` + `consolidateAfter: Never` (consolidation disabled in v0.37)
/// stays disabled, where core v1.0.8 `nodepool_conversion.go` writes 0s; the note says so.
#[test]
fn a_v1beta1_class_from_v1_0_keeps_its_pinned_alias_and_a_disabled_pool_stays_disabled() {
    let (run, docs) = convert("v1beta1-from-v1-0.yaml");
    let class = find(&docs, "EC2NodeClass", "pinned");
    assert_eq!(
        class["spec"]["amiSelectorTerms"][0]["alias"], "al2023@v20240625",
        "{}",
        run.stdout
    );
    let pool = find(&docs, "NodePool", "steady");
    assert_eq!(
        pool["spec"]["disruption"]["consolidationPolicy"],
        "WhenEmptyOrUnderutilized"
    );
    assert_eq!(pool["spec"]["disruption"]["consolidateAfter"], "Never");
    assert!(
        run.stderr.contains(
            "NodePool/steady: spec.disruption.consolidateAfter: kept Never: v1beta1 never consolidated this pool"
        ),
        "{}",
        run.stderr
    );
    assert_plans_same("v1beta1-from-v1-0.yaml", &run);
}

/// v1 objects that Karpenter v1.0 converted pass through unchanged, with notes on what v1.1 and
/// later ignore: the pool's v1beta1 kubelet annotation (aws v1.0.8 `utils.go`
/// `GetKubletConfigurationWithNodePool` read it; our plans, as v1.14.1, do not — 12 pods on one
/// node, not 8 per node) and the Ubuntu class marked incompatible with `ami-placeholder`.
#[test]
fn v1_objects_from_v1_0_pass_through_with_notes_on_what_later_releases_ignore() {
    let (run, docs) = convert("v1-from-v1-0.yaml");
    let pool = find(&docs, "NodePool", "dense");
    assert_eq!(
        pool["metadata"]["annotations"]["compatibility.karpenter.sh/v1beta1-kubelet-conversion"],
        "{\"maxPods\":8}"
    );
    assert!(
        run.stderr.contains(
            "NodePool/dense: metadata.annotations[compatibility.karpenter.sh/v1beta1-kubelet-conversion]: Karpenter v1.0 applied these kubelet settings ({\"maxPods\":8})"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "EC2NodeClass/ubuntu: spec.amiSelectorTerms: the compatibility.karpenter.k8s.aws/v1beta1-ubuntu annotation says"
        ),
        "{}",
        run.stderr
    );
    let claims = plan(&[&path("v1-from-v1-0.yaml")]);
    assert_eq!(claims.iter().map(|c| c.1).sum::<usize>(), 12, "{claims:?}");
    assert!(claims.iter().all(|c| c.1 > 8), "{claims:?}");
}
