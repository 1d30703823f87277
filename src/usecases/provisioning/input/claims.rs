//! The NodeClaims beside the Nodes: a node's own claim (its startup taints, initialization),
//! claims being deleted (their nodes' pods scheduled again), and claims launched but not
//! registered yet (in-flight capacity) (`core v1.14.1: pkg/controllers/state/statenode.go`).

use std::collections::BTreeMap;

use crate::api::Manifests;
use crate::error::CommandError;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::NodeClassRef;
use crate::model::pod::Pod;
use crate::model::requirements::Requirements;
use crate::scheduling::{ExistingNode, ExistingPlacement, Input};

/// A Node with what its NodeClaim says about its taints (`core v1.14.1:
/// pkg/controllers/state/statenode.go` `Taints()`) and, until it is initialized, its resources
/// ([`Node::fill_from_claim`]): the startup taints scheduling ignores until
/// it is initialized — its NodeClaim's, or, when the input has no NodeClaim for it, its
/// NodePool's (the template its NodeClaim was made from) — and, while a managed node has not
/// registered (`karpenter.sh/registered` not `true`), the NodeClaim's taints instead of the
/// Node's.
pub(super) fn with_claim_state(manifests: &Manifests, mut node: Node) -> Node {
    if node.initialized {
        return node;
    }
    match claim_of(manifests, &node) {
        Some(c) => {
            node.startup_taints = c.startup_taints.clone();
            node.fill_from_claim(&c.capacity, &c.allocatable);
            let registered = node
                .labels
                .get(labels::REGISTERED)
                .is_some_and(|v| v == "true");
            if !registered {
                let cordon = node
                    .taints
                    .iter()
                    .find(|t| t.key == labels::UNSCHEDULABLE_TAINT)
                    .cloned();
                node.taints = c.taints.clone();
                node.taints.extend(cordon.filter(|_| node.unschedulable));
            }
        }
        None => {
            let pool = node
                .node_pool()
                .and_then(|name| manifests.node_pools.iter().find(|p| p.name == name));
            if let Some(p) = pool {
                node.startup_taints = p.startup_taints.clone();
            }
        }
    }
    node
}

/// The NodeClaim of `node` in the input, if any (by node name or provider id).
fn claim_of<'m>(
    manifests: &'m Manifests,
    node: &Node,
) -> Option<&'m crate::model::nodeclaim::NodeClaim> {
    manifests.node_claims.iter().find(|c| {
        c.node_name.as_deref() == Some(node.name.as_str())
            || (node.provider_id.is_some() && c.provider_id == node.provider_id)
    })
}

/// The NodeClaims being deleted, by the node name and provider id they name: `core v1.14.1:
/// pkg/controllers/state/statenode.go` `Deleted()` — a NodeClaim with a `deletionTimestamp` or
/// `InstanceTerminating=True` marks its Node deleting (a Node without a NodeClaim: its own
/// `deletionTimestamp`, already read). Such a node takes no pods and its pods are scheduled
/// again ([`reschedule_deleting`]). Built once per input: few claims are ever deleting, and a
/// search of every claim per node is quadratic on a big cluster.
pub(super) struct DeletingClaims<'m> {
    nodes: std::collections::HashSet<&'m str>,
    provider_ids: std::collections::HashSet<&'m str>,
}

impl<'m> DeletingClaims<'m> {
    pub(super) fn of(manifests: &'m Manifests) -> Self {
        let deleting = manifests.node_claims.iter().filter(|c| {
            c.deleting
                || c.conditions
                    .get("InstanceTerminating")
                    .is_some_and(|s| s == "True")
        });
        let mut claims = DeletingClaims {
            nodes: Default::default(),
            provider_ids: Default::default(),
        };
        for c in deleting {
            claims.nodes.extend(c.node_name.as_deref());
            claims.provider_ids.extend(c.provider_id.as_deref());
        }
        claims
    }

    /// Whether `node` is deleting, by itself or through its NodeClaim.
    pub(super) fn marks(&self, node: &Node) -> bool {
        node.deleting
            || self.nodes.contains(node.name.as_str())
            || node
                .provider_id
                .as_deref()
                .is_some_and(|p| self.provider_ids.contains(p))
    }
}

/// Whether a pod is bound to a node being deleted (its NodeClaim's deletion counts): what
/// [`reschedule_deleting`] may plan again even when no pod is pending.
pub fn deleting_node_pods(manifests: &Manifests) -> bool {
    let claims = DeletingClaims::of(manifests);
    let deleting: std::collections::BTreeSet<&str> = manifests
        .nodes
        .iter()
        .filter(|n| claims.marks(n))
        .map(|n| n.name.as_str())
        .collect();
    !deleting.is_empty()
        && manifests
            .bound_pods
            .iter()
            .any(|p| p.node_name.as_deref().is_some_and(|n| deleting.contains(n)))
}

/// Moves the pods of the nodes being deleted that Karpenter schedules again into the pods to
/// place, and says which they were, by node (`core v1.14.1:
/// pkg/controllers/provisioning/provisioner.go` `Schedule`: `nodes.Deleting()
/// .CurrentlyReschedulablePods`, scheduled with the pending pods against the active nodes only;
/// which pods: [`crate::disruption::consolidation::currently_reschedulable`]). `now`: Unix
/// seconds, for do-not-disrupt durations.
pub fn reschedule_deleting(
    input: &mut Input,
    pdbs: &[crate::api::core::PodDisruptionBudget],
    now: i64,
) -> Result<Vec<ExistingPlacement>, CommandError> {
    if !input.existing_nodes.iter().any(|n| n.node.deleting) {
        return Ok(Vec::new());
    }
    // Read as consolidation reads them (`maxUnavailable: "0"` included, AlwaysAllow for a pod
    // whose Ready is False), and only when a node is being deleted.
    let pdbs = pdbs
        .iter()
        .map(crate::usecases::consolidate::pdb_input)
        .collect::<Result<Vec<_>, _>>()?;
    let mut moved = Vec::new();
    for node in input.existing_nodes.iter_mut().filter(|n| n.node.deleting) {
        let (go, stay): (Vec<Pod>, Vec<Pod>) =
            std::mem::take(&mut node.pods).into_iter().partition(|pod| {
                crate::disruption::consolidation::currently_reschedulable(pod, &pdbs, now)
            });
        node.pods = stay;
        if !go.is_empty() {
            moved.push(ExistingPlacement {
                node: node.node.name.clone(),
                pods: go.iter().map(Pod::key).collect(),
            });
            input.pods.extend(go);
        }
    }
    Ok(moved)
}

/// NodeClaims launched but not registered as Nodes yet: capacity the scheduler fills first, like
/// Karpenter's in-flight nodes (labels from the NodeClaim, its taints, its reported allocatable).
pub(super) fn in_flight_claims(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| !c.deleting)
        // A NodeClaim of another provider's class or EKS Auto Mode's is not in Karpenter's state
        // (`state/informer/nodeclaim.go`, `IsManaged`): no in-flight capacity (s29-linestate).
        .filter(|c| {
            c.node_class_ref
                .as_ref()
                .is_none_or(NodeClassRef::is_managed_here)
        })
        // A launched NodeClaim that reports no allocatable yet takes no pod, but a static pool's
        // still counts toward its replicas: Karpenter's state tracks it (`state/statenodepool.go`
        // `GetNodeCount`; `static/provisioning/suite_test.go` "should not create additional
        // nodeclaims": one NodeClaim with only a providerID counts). One without a provider id
        // is the scale-down's `unresolved` member (`usecases/provisioning/statics.rs`). Other
        // pools' are counted against their limits only ([`launched_without_allocatable`]).
        .filter(|c| !c.allocatable.is_empty() || launched_static_claim(manifests, c))
        .filter(|c| !has_node(manifests, c))
        .map(|c| {
            let mut labels = claim_labels(c);
            for (k, v) in Requirements::from_selectors(&c.requirements).single_value_labels() {
                labels.entry(k).or_insert(v);
            }
            ExistingNode {
                node: Node {
                    name: c.node_name.clone().unwrap_or_else(|| c.name.clone()),
                    labels,
                    annotations: c.annotations.clone(),
                    taints: c.taints.clone(),
                    startup_taints: c.startup_taints.clone(),
                    capacity: c.capacity.clone(),
                    allocatable: c.allocatable.clone(),
                    provider_id: c.provider_id.clone(),
                    in_flight: true,
                    ..Default::default()
                },
                pods: Vec::new(),
            }
        })
        .collect()
}

/// NodeClaims launched (a `status.providerID`), with no Node and no `status.allocatable` yet:
/// no capacity to schedule on, but Karpenter's cluster state already holds them as state nodes
/// whose `Capacity()` is the NodeClaim's, which the scheduler subtracts from their pool's limits
/// (`core v1.14.1: pkg/controllers/state/cluster.go` `UpdateNodeClaim`, `scheduling/
/// scheduler.go` `updateRemainingResources`; provisioning suite "Resource Limits › should not
/// schedule when limits are exceeded": a NodeClaim of 100 CPUs under `cpu: 20`). Counted in
/// [`pool_usage`] only.
pub(super) fn launched_without_allocatable(manifests: &Manifests) -> Vec<ExistingNode> {
    manifests
        .node_claims
        .iter()
        .filter(|c| c.provider_id.is_some() && c.allocatable.is_empty())
        .filter(|c| !launched_static_claim(manifests, c))
        .filter(|c| !has_node(manifests, c))
        .map(|c| ExistingNode {
            node: Node {
                name: c.name.clone(),
                labels: claim_labels(c),
                capacity: c.capacity.clone(),
                deleting: c.deleting,
                ..Default::default()
            },
            pods: Vec::new(),
        })
        .collect()
}

/// A NodeClaim's labels, with `karpenter.sh/nodepool` from its pool when it lacks the label.
fn claim_labels(c: &NodeClaim) -> BTreeMap<String, String> {
    let mut labels = c.labels.clone();
    if let Some(pool) = &c.nodepool {
        labels
            .entry(labels::NODEPOOL.to_string())
            .or_insert_with(|| pool.clone());
    }
    labels
}

/// A launched NodeClaim (a provider ID) of a static pool: one of its replicas, held by
/// [`in_flight_claims`] whether it reports allocatable yet or not.
fn launched_static_claim(manifests: &Manifests, claim: &NodeClaim) -> bool {
    claim.provider_id.is_some()
        && manifests
            .node_pools
            .iter()
            .any(|p| p.replicas.is_some() && claim.nodepool.as_deref() == Some(p.name.as_str()))
}

/// Whether a Node of the input is `claim`'s (its `status.nodeName` or provider ID).
fn has_node(manifests: &Manifests, claim: &NodeClaim) -> bool {
    manifests.nodes.iter().any(|n| {
        Some(&n.name) == claim.node_name.as_ref()
            || (n.provider_id.is_some() && n.provider_id == claim.provider_id)
    })
}
