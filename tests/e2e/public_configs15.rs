//! Public configurations swept in session 34 (docs/upstream-tests.md "Public configurations
//! swept (session 34)"), through the binary. Fixtures: `tests/fixtures/public/s34/`, each with
//! its source in its first comment (and `SOURCES.md`).

use crate::support::{claims_launched as claims, fixture, fixture_json, karpenter};

fn path(file: &str) -> String {
    fixture(&format!("public/s34/{file}"))
        .to_string_lossy()
        .into_owned()
}

/// jrussell9000/cloudpipe: a NodeOverlay giving g4dn/g5/g6/g6e 3 `nvidia.com/gpu` (the device
/// plugin's time-slicing) packs three 1-GPU pods a node (core `nodeoverlay`, capacity overlays).
#[test]
fn a_gpu_timeslice_overlay_packs_three_gpu_pods_a_node() {
    let (run, plan) = fixture_json(
        &["provision", "--dry-run"],
        "public/s34/cloudpipe-gpu-timeslice.yaml",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        vec![
            ("gpu-nodepool".into(), "g4dn.xlarge".into(), 3),
            ("gpu-nodepool".into(), "g4dn.xlarge".into(), 3),
        ]
    );
}

/// A README's cicd-builders pool puts `labels` under `template.spec`: refused in one line naming
/// the field (kubectl strict field validation); `--validate=warn` plans the rest, the untainted
/// pool of the highest weight taking the inflate pods (`nodepoolutils.OrderByWeight`).
#[test]
fn a_readme_pool_with_labels_under_template_spec_is_refused_then_planned_with_warn() {
    let file = path("readme-ten-pools.yaml");
    karpenter(&["provision", "--dry-run", "-f", &file], b"").assert_refused_in_one_line(
        "labels under template.spec",
        "NodePool/cicd-builders: spec.template.spec.labels: unknown field",
    );
    let (run, plan) = fixture_json(
        &["provision", "--dry-run", "--validate=warn"],
        "public/s34/readme-ten-pools.yaml",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        claims(&plan),
        vec![("general-ondemand".into(), "c6a.2xlarge".into(), 5)]
    );
}

/// Saramin's spot pool: three types offered in five zones while the class's other types reach a
/// sixth, which Karpenter's universe of domains holds (`buildDomainGroups`): the sixth replica of
/// a DoNotSchedule zone spread is left pending, and the reason names the zone it needs, as
/// Karpenter's "no instance type met the scheduling requirements" does.
#[test]
fn a_zone_spread_left_pending_names_the_zone_no_type_is_offered_in() {
    let (run, plan) = fixture_json(
        &["provision", "--dry-run"],
        "public/s34/saramin-one-pool-spread.yaml",
    );
    // 1: the finding is positive (a pod is left pending), docs/spec.md §2.
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(claims(&plan).len(), 5);
    let pending = plan["unschedulable"].as_array().unwrap();
    assert_eq!(pending.len(), 1);
    let reason = pending[0]["reason"].as_str().unwrap();
    assert!(
        reason.contains("topology.kubernetes.io/zone In [us-east-1e]"),
        "{reason}"
    );
}
