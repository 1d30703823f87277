//! Issue threads, round 11 (session 35, s35-threads11; docs/upstream-tests.md "Issue threads,
//! round 11 (s35-threads11)"): the reporters' inputs rebuilt as small manifests in
//! `tests/fixtures/threads11/` (our own, the embedded catalog in us-east-1) and replayed through
//! the binary, where our output had to answer the thread's question.

use crate::support::{run_fixture, Run};

/// `kubectl-karpenter ARGS -f threads11/NAME --region us-east-1`.
fn run(name: &str, args: &[&str]) -> Run {
    run_fixture(&format!("threads11/{name}"), args)
}

/// kubernetes-sigs/karpenter#1088 (also core#1212, aws#5676, aws#3872): a pod asking less memory
/// than the type advertises fits no new node. aws v1.14.1 `types.go` (`memory` less
/// `VM_MEMORY_OVERHEAD_PERCENT`, `kubeReservedResources`, `evictionThreshold`) and core
/// `computeAllocatable` leave 25437Mi after the DaemonSet; the reason now says on which type and
/// what each share takes.
#[test]
fn a_memory_shortfall_is_broken_down_on_the_largest_type() {
    let run = run("memory-after-overhead.yaml", &["provision", "--dry-run"]);
    // Exit 1: a pod stays pending (docs/spec.md §2).
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "NodePool c4-4xlarge: no instance type has memory 25Gi (largest available after \
             overhead: 25437Mi, on c4.4xlarge: capacity 28416Mi (30Gi less 7.5% for the VM) less \
             kube-reserved 2829Mi and eviction threshold 100Mi; the NodePool's DaemonSets request \
             50Mi of it)"
        ),
        "{}",
        run.stdout
    );
}

/// aws/karpenter-provider-aws#6394: a node kept only by Cluster Autoscaler's
/// `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"` is consolidated: Karpenter v1.14.1
/// reads no such key, so the decision stands (`delete`) and a warning says why.
#[test]
fn an_unread_cluster_autoscaler_annotation_is_named() {
    let args = ["consolidate", "--now", "2026-06-01T01:00:00Z"];
    let run = run("cluster-autoscaler-safe-to-evict.yaml", &args);
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
            "warning: pod default/worker-0 has cluster-autoscaler.kubernetes.io/safe-to-evict=false, \
             which Karpenter does not read: it does not hold the node from Karpenter's disruption \
             (karpenter.sh/do-not-disrupt: \"true\" does)"
        ),
        "{}",
        run.stderr
    );
}
