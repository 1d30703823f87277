//! Public configurations swept in session 30, pools and classes (docs/upstream-tests.md "Public
//! configurations swept (session 30, pools and classes)"), through the binary.

use crate::support::{fixture, karpenter};

fn plan_of(file: &str) -> (i32, serde_json::Value, String) {
    let file = fixture(&format!("sweep16/{file}"));
    let file = file.to_string_lossy();
    let run = karpenter(&["provision", "--dry-run", "-f", &file, "-o", "json"], b"");
    let plan = serde_json::from_str(&run.stdout).unwrap_or(serde_json::Value::Null);
    (run.code, plan, run.stderr)
}

/// A Terraform file's NodePool whose `nodeClassRef.group` is `karpenter.sh` (index id
/// 71190193166): Karpenter v1.14.1 passes over a pool no provider supports (core
/// `nodepool.go` `IsManaged`, `provisioner.go` `NewScheduler`), so both pods stay pending. We
/// matched the class by kind and name and planned a node.
#[test]
fn a_pool_whose_node_class_ref_names_group_karpenter_sh_takes_no_pod() {
    let (code, plan, stderr) = plan_of("nodeclassref-group-karpenter-sh.yaml");
    assert_eq!(code, 1, "{stderr}");
    assert!(
        plan["nodeClaims"].as_array().unwrap().is_empty(),
        "{plan:#}"
    );
    let unschedulable = plan["unschedulable"].as_array().unwrap();
    assert_eq!(unschedulable.len(), 2, "{plan:#}");
    assert_eq!(unschedulable[0]["reasonCode"], "NodePoolNotManaged");
    let reason = unschedulable[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("\"karpenter.sh\""), "{reason}");
}

/// An EC2NodeClass with `capacityReservationSelectorTerms: []` (a Terraform accelerator module,
/// index id 62509974129, omits the key for that reason): the aws v1.14.1 CRD's rule
/// `!self.all(x, has(x.id) && (...))` is false for an empty list, so the API server refuses the
/// class. We read it as no terms and planned.
#[test]
fn an_empty_list_of_reservation_terms_is_refused_as_the_crd_refuses_it() {
    let file = fixture("sweep16/empty-reservation-terms.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(&["provision", "--dry-run", "-f", &file], b"");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("EC2NodeClass/p5-spot")
            && run
                .stderr
                .contains("spec.capacityReservationSelectorTerms: 'id' is mutually exclusive"),
        "{}",
        run.stderr
    );
}
