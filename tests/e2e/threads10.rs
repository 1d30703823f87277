//! Issue threads swept (session 34, s34-threads10; docs/upstream-tests.md "Issue threads, round 10
//! (s34-threads10)"): the reporters' inputs rebuilt as small manifests in
//! `tests/fixtures/threads10/` (our own, the embedded catalog in us-east-1) and replayed through
//! the binary, where our output had to answer the thread's question.

use crate::support::{run_fixture, Run};

/// `kubectl-karpenter ARGS -f threads10/NAME --region us-east-1`.
fn run(name: &str, args: &[&str]) -> Run {
    run_fixture(&format!("threads10/{name}"), args)
}

/// aws/karpenter-provider-aws#4192 (also #4407, #7713): a pod mounting EBS volumes in three
/// zones. Core v1.14.1 `volumetopology.go` `mergeVolumeRequirementAlternatives` keeps the
/// incompatible intersection, `topology.kubernetes.io/zone DoesNotExist`, which the reporter
/// could not read. The reason said "no instance type of the NodePool is offered where the pod's
/// volumes are (topology.kubernetes.io/zone DoesNotExist)"; it now names each claim's zone.
#[test]
fn volumes_in_three_zones_are_named_claim_by_claim() {
    let run = run("volumes-in-three-zones.yaml", &["provision", "--dry-run"]);
    // Exit 1: a pod stays pending (docs/spec.md §2).
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "NodePool default: volume topology: the pod's volumes cannot share a node: \
             PersistentVolumeClaim default/data-0 needs topology.kubernetes.io/zone In \
             [us-east-1a]; PersistentVolumeClaim default/data-1 needs topology.kubernetes.io/zone \
             In [us-east-1b]; PersistentVolumeClaim default/data-2 needs \
             topology.kubernetes.io/zone In [us-east-1c] (together: topology.kubernetes.io/zone \
             DoesNotExist)"
        ),
        "{}",
        run.stdout
    );
}

/// aws/karpenter-provider-aws#6861: after the upgrade to v1.0 a node whose pod carries
/// `karpenter.sh/do-not-evict: "true"` is consolidated. Core v1.14.1 reads only
/// `karpenter.sh/do-not-disrupt` (`pkg/utils/pod/scheduling.go` `IsDoNotDisruptActive`), so the
/// decision stands (`delete`); the report now says why the annotation did not hold the node.
#[test]
fn an_unread_do_not_evict_is_named() {
    let args = ["consolidate", "--now", "2026-06-01T01:00:00Z"];
    let run = run("do-not-evict-on-v1.yaml", &args);
    // Exit 1: the finding is positive (actions; docs/spec.md §2).
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("a      default    m5.xlarge   0.1920   delete"),
        "{}",
        run.stdout
    );
    assert!(
        run.stderr.contains(
            "warning: pod default/job-0 has karpenter.sh/do-not-evict, which Karpenter v1 no \
             longer reads (v0.31–v0.37 did): it does not hold the node from Karpenter's \
             disruption (karpenter.sh/do-not-disrupt does)"
        ),
        "{}",
        run.stderr
    );
}
