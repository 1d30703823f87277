//! Tests of manifest loading against the real example manifests, the seed walkthroughs, a
//! corpus of broken inputs, and workload expansion.

mod bad_input;
mod cel;
mod examples;
mod overlays;
mod seeds;
mod streaming;
mod workloads;

use super::{load_paths, load_str, InputError, Manifests};

/// A path under `tests/fixtures` (our example manifests and the vendored CRDs).
fn data(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Loads files without stdin.
fn load(paths: &[&str]) -> Result<Manifests, InputError> {
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    load_paths(&paths, &mut std::io::empty())
}

/// The error message of loading `text` as `name`, which must fail.
fn error_of(name: &str, text: &str) -> String {
    match load_str(name, text) {
        Ok(m) => panic!("{name} loaded but should have failed: {m:#?}"),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "error is not one line: {s:?}");
            s
        }
    }
}

/// Where nodes meet their NodeClaims, each node learns whether one stands for it (by
/// `status.nodeName` or provider id): without one it is not Karpenter's and counts as
/// initialized though never labelled (`core v1.14.1: pkg/controllers/state/statenode.go`
/// `Initialized()`/`Managed()`); with one, once labelled.
#[test]
fn a_node_without_a_nodeclaim_is_marked_so_at_conversion() {
    let node = |name: &str, id: &str| {
        format!("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: {name}\n  labels: {{karpenter.sh/nodepool: default}}\nspec:\n  providerID: aws:///us-east-1a/{id}\n")
    };
    let claim = "---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata: {name: default-x}\nspec:\n  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n  requirements: []\nstatus: {providerID: aws:///us-east-1a/i-1}\n";
    let text = format!(
        "{}{}{claim}",
        node("managed", "i-1"),
        node("launched", "i-2")
    );
    let m = load_str("in.yaml", &text).unwrap();
    let facts: Vec<(&str, bool, bool, bool)> = m
        .nodes
        .iter()
        .map(|n| {
            (
                n.name.as_str(),
                n.claimless,
                n.initialized,
                n.counts_as_initialized(),
            )
        })
        .collect();
    assert_eq!(
        facts,
        [
            ("managed", false, false, false),
            ("launched", true, false, true)
        ]
    );
}
