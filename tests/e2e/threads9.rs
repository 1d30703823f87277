//! Issue threads swept (session 33, s33-threads9; docs/upstream-tests.md "Issue threads swept
//! (session 33, s33-threads9)"): the reporters' inputs rebuilt as small manifests in
//! `tests/fixtures/threads9/` (our own, the embedded catalog in us-east-1) and replayed through
//! the binary, where our output had to answer the thread's question.

use crate::support::{run_fixture, Run};

/// `kubectl-karpenter provision --dry-run -f threads9/NAME --region us-east-1`.
fn plan(name: &str) -> Run {
    run_fixture(&format!("threads9/{name}"), &["provision", "--dry-run"])
}

/// kubernetes-sigs/karpenter#1334: a pod whose *preferred* node affinity says
/// `karpenter.sh/nodepool DoesNotExist` is ignored by Karpenter (core v1.14.1
/// `scheduling/requirements.go` `newPodRequirements` adds the heaviest preference;
/// `provisioner.go` `validateKarpenterManagedLabelCanExist` reads it). The reason said only
/// "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist)", which the reporter read
/// as impossible for a soft affinity; it now names the preference and its weight.
#[test]
fn a_preferred_opt_out_is_named_as_a_preference() {
    let run = plan("preferred-no-nodepool.yaml");
    // Exit 1: a pod stays pending (docs/spec.md §2).
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "opts out of Karpenter nodes (karpenter.sh/nodepool DoesNotExist in its heaviest \
             preferred node affinity term, weight 100: Karpenter reads that preference as \
             required and ignores the pod)"
        ),
        "{}",
        run.stdout
    );
}

/// aws/karpenter-provider-aws#6540: a StatefulSet pod whose EBS PersistentVolume is pinned to
/// a node by hostname (core v1.14.1 `volumetopology.go` `getPersistentVolumeRequirements`
/// drops the hostname only for Local/HostPath volumes). The reason read "the pod's volumes
/// need ; the pod and the NodePool allow kubernetes.io/hostname In
/// [hostname-placeholder-default-0]": the hostname was left out of the volume's side.
#[test]
fn a_volume_pinned_to_a_node_names_the_node() {
    let run = plan("volume-pinned-to-a-node.yaml");
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "NodePool default: volume topology: the pod's volumes need kubernetes.io/hostname \
             In [ip-10-0-1-5.ec2.internal]; a new node has a hostname of its own, so only that \
             node can take the pod"
        ),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout.contains("hostname-placeholder"),
        "{}",
        run.stdout
    );
}
