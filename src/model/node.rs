//! The slim node: what scheduling, drift and replacement read of a Kubernetes Node.

use std::collections::BTreeMap;

use super::resources::Resources;
use super::taints::Taint;

/// A node (or an in-flight NodeClaim that has not registered yet).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Node {
    /// Name.
    pub name: String,
    /// Labels.
    pub labels: BTreeMap<String, String>,
    /// Annotations this tool reads (hashes, drift markers, launch records).
    pub annotations: BTreeMap<String, String>,
    /// Taints, including the cordon taint's equivalent when `unschedulable`.
    pub taints: Vec<Taint>,
    /// The startup taints of its NodeClaim (or, without one, of its NodePool): while the node is
    /// not initialized, scheduling ignores them (docs/karpenter.md §6.4 step 3a).
    pub startup_taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// Capacity.
    pub capacity: Resources,
    /// Allocatable.
    pub allocatable: Resources,
    /// `spec.providerID`, e.g. `aws:///us-east-1a/i-0123`.
    pub provider_id: Option<String>,
    /// `Ready=True`.
    pub ready: bool,
    /// Karpenter's `karpenter.sh/initialized=true` label, or true for nodes no pool owns. What
    /// Karpenter's simulations rely on is [`Node::counts_as_initialized`].
    pub initialized: bool,
    /// No NodeClaim (or Machine) stands for the node: it is not Karpenter's (`StateNode.Managed()`
    /// false) — a node this tool launched, or one no pool owns. Set where nodes are read with
    /// their NodeClaims ([`mark_claimless`], from `api::Manifests`); `false` for a node built
    /// from a NodeClaim.
    pub claimless: bool,
    /// `metadata.deletionTimestamp` is set.
    pub deleting: bool,
    /// A NodeClaim launched whose Node has not registered: it registers no topology domain but
    /// its hostname (`core v1.14.1 topology.go countDomains` skips state nodes without a Node;
    /// `existingnode.go NewExistingNode` registers every state node's `HostName()`).
    pub in_flight: bool,
    /// RFC 3339 creation time.
    pub creation_timestamp: Option<String>,
}

impl Node {
    /// The EC2 instance id from the provider id.
    pub fn instance_id(&self) -> Option<&str> {
        self.provider_id
            .as_deref()
            .and_then(|p| p.rsplit('/').next())
            .filter(|s| s.starts_with("i-"))
    }

    /// Whether the node's instance is in `region`, as far as its provider id
    /// (`aws:///<zone>/<id>`) tells: its zone is the region's (`us-east-1a`, or a Local Zone's
    /// `us-east-1-bos-1a`). A provider id naming no zone says nothing against it.
    pub fn in_region(&self, region: &str) -> bool {
        let zone = self.provider_id.as_deref().and_then(|p| {
            let mut parts = p.rsplit('/');
            parts.next();
            parts.next().filter(|z| !z.is_empty())
        });
        zone.is_none_or(|z| z.starts_with(region))
    }

    /// `StateNode.Initialized()` (core v1.14.1: `pkg/controllers/state/statenode.go`): a node
    /// no NodeClaim stands for is not managed, so initialized; a managed one once labelled
    /// `karpenter.sh/initialized=true`. Disruption's simulations use it (a pod is never moved
    /// onto a node that is not initialized); `provision`, which brings up the nodes it launched
    /// itself, reads [`Node::initialized`] (their pool's startup taints until it labels them).
    pub fn counts_as_initialized(&self) -> bool {
        self.initialized || self.claimless
    }

    /// Whether a registered node has finished starting, as Karpenter's initialization controller
    /// decides it before labelling it `karpenter.sh/initialized=true` (`core v1.14.1:
    /// pkg/controllers/nodeclaim/lifecycle/initialization.go` `Reconcile`, in its order): it is
    /// Ready; none of its NodeClaim's `startup_taints` is still on it (matched by key and
    /// effect, `MatchTaint`); no known ephemeral taint is (`KnownEphemeralTaintsRemoved`,
    /// `readiness.k8s.io/*` included); and every resource its NodeClaim `requested` (non-zero)
    /// is non-zero in its allocatable (`RequestedResourcesRegistered`: a device plugin has
    /// registered it). DRA driver pools are not modelled (`--ignore-dra-requests`, the default).
    pub fn initialization(
        &self,
        startup_taints: &[Taint],
        requested: &Resources,
    ) -> Result<(), NotInitialized> {
        if !self.ready {
            return Err(NotInitialized::NotReady);
        }
        if let Some(t) = startup_taints
            .iter()
            .find_map(|s| self.taints.iter().find(|t| s.matches(t)))
        {
            return Err(NotInitialized::StartupTaint(t.clone()));
        }
        if let Some(t) = self
            .taints
            .iter()
            .find(|t| super::taints::is_known_ephemeral(t))
        {
            return Err(NotInitialized::EphemeralTaint(t.clone()));
        }
        if let Some((name, _)) = requested
            .iter()
            .find(|(name, _)| self.allocatable.get(name) == 0)
        {
            return Err(NotInitialized::ResourceNotRegistered(name.to_string()));
        }
        Ok(())
    }

    /// The taints scheduling holds against pods (`StateNode.Taints`): all of them on an
    /// initialized (or unmanaged) node; on a managed node not initialized yet, not the known
    /// ephemeral taints nor its startup taints — pods are expected to land there once it is up.
    pub fn scheduling_taints(&self) -> Vec<Taint> {
        if self.initialized {
            return self.taints.clone();
        }
        self.taints
            .iter()
            .filter(|t| {
                !super::taints::is_known_ephemeral(t)
                    && !self.startup_taints.iter().any(|s| s.matches(t))
            })
            .cloned()
            .collect()
    }

    /// What a managed node not initialized yet offers, as Karpenter's cluster state reads it
    /// (`core v1.14.1: pkg/controllers/state/statenode.go` `Capacity()`, `Allocatable()`): each
    /// resource its Node reports as zero — or not at all, the kubelet not having registered it
    /// yet (a device plugin still starting) — is taken from its NodeClaim's status, which says
    /// what the instance type has. So a pod asking for a GPU waits for the launched GPU node
    /// instead of asking for another one. Call it only for a node its NodeClaim stands for and
    /// that is not initialized (once initialized, the Node's own numbers hold).
    pub fn fill_from_claim(&mut self, capacity: &Resources, allocatable: &Resources) {
        for (mine, claims) in [
            (&mut self.capacity, capacity),
            (&mut self.allocatable, allocatable),
        ] {
            for (name, v) in claims.iter() {
                if mine.get(name) == 0 {
                    mine.set(name, v);
                }
            }
        }
    }

    /// The NodePool (or Provisioner) that owns the node, if Karpenter manages it.
    pub fn node_pool(&self) -> Option<&str> {
        self.labels
            .get(super::labels::NODEPOOL)
            .or_else(|| self.labels.get(super::labels::PROVISIONER_NAME))
            .map(String::as_str)
    }
}

/// Why a registered node is not initialized yet ([`Node::initialization`]); upstream's reasons
/// on the NodeClaim's `Initialized=Unknown` condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotInitialized {
    /// `NodeNotReady`.
    NotReady,
    /// `StartupTaintsExist`: this startup taint is still on the node.
    StartupTaint(Taint),
    /// `KnownEphemeralTaintsExist`.
    EphemeralTaint(Taint),
    /// `ResourceNotRegistered`: this resource was requested but is not allocatable.
    ResourceNotRegistered(String),
}

impl std::fmt::Display for NotInitialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotInitialized::NotReady => write!(f, "Node status is NotReady"),
            NotInitialized::StartupTaint(t) => {
                write!(f, "StartupTaint {:?} still exists", t.to_string())
            }
            NotInitialized::EphemeralTaint(t) => {
                write!(f, "KnownEphemeralTaint {:?} still exists", t.to_string())
            }
            NotInitialized::ResourceNotRegistered(r) => {
                write!(f, "Resource {r:?} was requested but not registered")
            }
        }
    }
}

/// Marks the `nodes` no NodeClaim of `claims` stands for ([`Node::claimless`]): a NodeClaim
/// stands for the node its `status.nodeName` names or whose provider id it has, as Karpenter's
/// cluster state pairs them (by provider id).
pub fn mark_claimless(nodes: &mut [Node], claims: &[super::nodeclaim::NodeClaim]) {
    let names: std::collections::HashSet<&str> = claims
        .iter()
        .filter_map(|c| c.node_name.as_deref())
        .collect();
    let ids: std::collections::HashSet<&str> = claims
        .iter()
        .filter_map(|c| c.provider_id.as_deref())
        .collect();
    for n in nodes {
        n.claimless = !names.contains(n.name.as_str())
            && !n.provider_id.as_deref().is_some_and(|p| ids.contains(p));
    }
}

/// The NodeClaims whose launch has not resolved yet (no `status.providerID`): while there is
/// one, Karpenter's cluster state is not synced and neither its provisioner nor its disruption
/// controller acts (`core v1.14.1: pkg/controllers/state/cluster.go` `Synced`, checked first by
/// `provisioning/provisioner.go` `Schedule` and `disruption/controller.go` `Reconcile`;
/// `state/suite_test.go` "shouldn't consider the cluster state synced if a nodeclaim hasn't
/// resolved its provider id", "… without a providerID is deleted" — deleting, it still counts
/// until it is gone). Their names, in input order.
pub fn unsynced_claims(claims: &[super::nodeclaim::NodeClaim]) -> Vec<&str> {
    claims
        .iter()
        .filter(|c| c.provider_id.as_deref().is_none_or(str::is_empty))
        .map(|c| c.name.as_str())
        .collect()
}

/// What a run knows of EC2's instances, for [`ghost_instances`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing<'r> {
    /// Some instances' states, nothing said of the others: one not among them is not known
    /// (offline, where no instance is described).
    Partial,
    /// Every node's instance described in `region` through an `instance-id` filter (so an id
    /// EC2 no longer knows is left out of the answer, not an error): a NodePool's node of that
    /// region without a NodeClaim whose instance is not among them is one EC2 forgot
    /// (terminated about an hour ago or more). A node of another region says nothing: its
    /// instance was not asked where it lives.
    Described {
        /// The region EC2 was asked in.
        region: &'r str,
    },
    /// Every instance this tool launched for the cluster, in every state (its
    /// `kubectl-karpenter.io/launched-by` tag): a node of a pool without a NodeClaim whose
    /// instance is not among them is not a live instance of this tool's either.
    AllOfTheTools,
}

/// The instances of `nodes` that are no capacity although their Node is registered — this
/// tool's own rule, not Karpenter's (upstream relies on NodeClaims and asks EC2 nothing here): a
/// node without a NodeClaim ([`Node::claimless`]) whose instance `instances` says is
/// `shutting-down` or `terminated`, or, with [`Listing::AllOfTheTools`] or
/// [`Listing::Described`], a NodePool's node without a NodeClaim whose instance is not listed
/// at all ([`InstanceGone::NotFound`], as [`gone_nodes`] takes it). Its kubelet, still running
/// while the instance shuts down, may register the deleted Node again for a moment (Ready,
/// empty, unmarked: a ghost, docs/reliability.md); a pod planned onto it would be left pending.
/// A node with a NodeClaim is Karpenter's to judge (its NodeClaim says when it goes).
pub fn ghost_instances(
    nodes: &[Node],
    instances: &[super::instance::Instance],
    listing: Listing<'_>,
) -> std::collections::BTreeSet<String> {
    let states: std::collections::HashMap<&str, &str> = instances
        .iter()
        .map(|i| (i.id.as_str(), i.state.as_str()))
        .collect();
    nodes
        .iter()
        .filter(|n| n.claimless)
        .filter_map(|n| {
            let id = n.instance_id()?;
            let gone = match states.get(id) {
                Some(state) => InstanceGone::of_state(state).is_some(),
                None => match listing {
                    Listing::Partial => false,
                    // Every instance was asked for: a managed node's is forgotten (a node no
                    // pool owns is not looked at, as in `gone_nodes`).
                    Listing::Described { region } => n.node_pool().is_some() && n.in_region(region),
                    // Only a NodePool's node (v1beta1 on, where every node of Karpenter's has
                    // a NodeClaim): a v1alpha5 Provisioner's node may predate Machines
                    // (< v0.28), its instance not the tool's.
                    Listing::AllOfTheTools => n.labels.contains_key(super::labels::NODEPOOL),
                },
            };
            gone.then(|| id.to_string())
        })
        .collect()
}

/// How a node's instance is gone, as EC2 describes it ([`gone_nodes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InstanceGone {
    /// `shutting-down`.
    ShuttingDown,
    /// `terminated`.
    Terminated,
    /// Not described at all: EC2 forgets a terminated instance after about an hour.
    NotFound,
}

impl InstanceGone {
    /// The state an instance in `state` is gone in, if it is.
    pub fn of_state(state: &str) -> Option<InstanceGone> {
        match state {
            "shutting-down" => Some(InstanceGone::ShuttingDown),
            "terminated" => Some(InstanceGone::Terminated),
            _ => None,
        }
    }
}

/// A node whose instance is gone or going: no capacity and nothing to disrupt.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoneInstance {
    /// The instance id.
    pub instance: String,
    /// How it is gone.
    pub state: InstanceGone,
    /// A NodeClaim stands for the node (Karpenter's garbage collection deletes it).
    pub claimed: bool,
}

/// The nodes that need their instance described for [`gone_nodes`]: the managed ones (a
/// NodeClaim stands for them, or a NodePool/Provisioner label names their pool) with an EC2
/// provider id in `region` (described elsewhere, an instance of another region would look
/// gone). Their instance ids, sorted, without repeats.
pub fn managed_instance_ids(nodes: &[Node], region: &str) -> Vec<String> {
    let ids: std::collections::BTreeSet<&str> = managed_in(nodes, region)
        .filter_map(Node::instance_id)
        .collect();
    ids.into_iter().map(str::to_string).collect()
}

fn managed_in<'n>(nodes: &'n [Node], region: &'n str) -> impl Iterator<Item = &'n Node> {
    nodes
        .iter()
        .filter(move |n| (!n.claimless || n.node_pool().is_some()) && n.in_region(region))
}

/// The managed nodes of `region` ([`managed_instance_ids`]) whose instance `described` says is
/// `shutting-down` or `terminated`, or does not list at all — `described` being those nodes'
/// instances, described by id (an `instance-id` filter, so an unknown id is not an error), by
/// node name. Karpenter's rule for a node with a NodeClaim (core v1.14.1:
/// `pkg/controllers/nodeclaim/garbagecollection/controller.go`): a Registered NodeClaim whose
/// instance the cloud provider no longer lists (aws v1.14.1: `instance.go`
/// `instanceStateFilter` lists pending, running, stopping, stopped and shutting-down) is
/// deleted, and a deleting NodeClaim is no place to schedule (`statenode.go`
/// `MarkedForDeletion`, `helpers.go` `SimulateScheduling` schedules onto `Active()` nodes
/// only). Two choices of this tool's, on the safe side: `shutting-down` is gone too (as in
/// [`ghost_instances`]; when Karpenter terminates an instance its NodeClaim is
/// `InstanceTerminating`, deleting, anyway), and a Ready Node does not keep its instance
/// alive (upstream waits for NotReady before collecting: the kubelet of a shutting-down
/// instance may still report Ready, or register the Node again — the ghost of
/// docs/reliability.md).
pub fn gone_nodes(
    nodes: &[Node],
    described: &[super::instance::Instance],
    region: &str,
) -> std::collections::BTreeMap<String, GoneInstance> {
    let states: std::collections::HashMap<&str, &str> = described
        .iter()
        .map(|i| (i.id.as_str(), i.state.as_str()))
        .collect();
    managed_in(nodes, region)
        .filter_map(|n| {
            let id = n.instance_id()?;
            let state = match states.get(id) {
                Some(state) => InstanceGone::of_state(state)?,
                None => InstanceGone::NotFound,
            };
            Some((
                n.name.clone(),
                GoneInstance {
                    instance: id.to_string(),
                    state,
                    claimed: !n.claimless,
                },
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::instance::Instance;
    use crate::model::nodeclaim::NodeClaim;

    /// docs/reliability.md, the ghost node: a node without a NodeClaim is no capacity when its
    /// instance is shutting down or terminated, or — with the full listing of the tool's
    /// instances — not listed; a node with a NodeClaim, or whose instance is not known from a
    /// listing by id, is capacity.
    #[test]
    fn a_node_whose_instance_is_gone_is_no_capacity() {
        let nodes = vec![
            pool(node("running", "i-1", true), true),
            pool(node("shutting", "i-2", true), true),
            pool(node("terminated", "i-3", true), true),
            pool(node("unlisted", "i-4", true), true),
            pool(node("karpenters", "i-5", true), false),
            Node {
                claimless: true,
                ..node("foreign", "i-6", true)
            },
            Node {
                claimless: true,
                labels: [(
                    crate::model::labels::PROVISIONER_NAME.to_string(),
                    "default".to_string(),
                )]
                .into(),
                ..node("provisioners", "i-7", true)
            },
        ];
        let instances = [
            instance("i-1", "running"),
            instance("i-2", "shutting-down"),
            instance("i-3", "terminated"),
            instance("i-5", "terminated"),
        ];
        let ids = |listing| {
            ghost_instances(&nodes, &instances, listing)
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(Listing::Partial), ["i-2", "i-3"]);
        assert_eq!(ids(Listing::AllOfTheTools), ["i-2", "i-3", "i-4"]);
        // Every node's instance asked for in their region: the Provisioner's node's instance
        // is forgotten too; asked in another region, nothing is.
        let described = |region| ids(Listing::Described { region });
        assert_eq!(described("us-east-1"), ["i-2", "i-3", "i-4", "i-7"]);
        assert_eq!(described("eu-west-1"), ["i-2", "i-3"]);
    }

    /// Core v1.14.1 `garbagecollection/controller.go` (`suite_test.go` "should delete the
    /// NodeClaim when the Node is there in a NotReady state and the instance is gone"): a
    /// managed node's instance not listed (terminated, or unknown) is gone; ours adds
    /// `shutting-down`. Unmanaged nodes are not looked at; running and stopped are capacity.
    #[test]
    fn a_managed_node_whose_instance_is_not_listed_is_gone() {
        let nodes = vec![
            pool(node("running", "i-1", true), false),
            pool(node("stopped", "i-2", true), false),
            pool(node("shutting", "i-3", true), false),
            pool(node("terminated", "i-4", true), true),
            pool(node("unlisted", "i-5", true), false),
            Node {
                claimless: true,
                ..node("foreign", "i-6", true)
            },
        ];
        assert_eq!(
            managed_instance_ids(&nodes, "us-east-1"),
            ["i-1", "i-2", "i-3", "i-4", "i-5"]
        );
        // Described in another region, none of them is looked at.
        assert!(managed_instance_ids(&nodes, "eu-west-1").is_empty());
        assert!(gone_nodes(&nodes, &[], "eu-west-1").is_empty());
        let described = [
            instance("i-1", "running"),
            instance("i-2", "stopped"),
            instance("i-3", "shutting-down"),
            instance("i-4", "terminated"),
        ];
        let gone: Vec<(String, String, InstanceGone, bool)> =
            gone_nodes(&nodes, &described, "us-east-1")
                .into_iter()
                .map(|(n, g)| (n, g.instance, g.state, g.claimed))
                .collect();
        let row = |n: &str, i: &str, s, c| (n.to_string(), i.to_string(), s, c);
        assert_eq!(
            gone,
            [
                row("shutting", "i-3", InstanceGone::ShuttingDown, true),
                row("terminated", "i-4", InstanceGone::Terminated, false),
                row("unlisted", "i-5", InstanceGone::NotFound, true),
            ]
        );
    }

    /// `state/suite_test.go` "Cluster State Sync": a NodeClaim without a provider id keeps the
    /// state unsynced ("shouldn't consider the cluster state synced if a nodeclaim hasn't
    /// resolved its provider id", also while deleting); with one, or none at all, synced
    /// ("should consider the cluster state synced when all nodeclaims are tracked").
    #[test]
    fn a_nodeclaim_without_a_provider_id_keeps_the_state_unsynced() {
        let claim = |name: &str, id: Option<&str>, deleting| NodeClaim {
            name: name.into(),
            provider_id: id.map(str::to_string),
            deleting,
            ..NodeClaim::default()
        };
        assert!(unsynced_claims(&[]).is_empty());
        let claims = [
            claim("launched", Some("aws:///us-east-1a/i-1"), false),
            claim("launching", None, false),
            claim("empty", Some(""), false),
            claim("deleting", None, true),
        ];
        assert_eq!(unsynced_claims(&claims), ["launching", "empty", "deleting"]);
        assert!(unsynced_claims(&claims[..1]).is_empty());
    }

    /// `n` labelled with pool `default`, with or without a NodeClaim.
    fn pool(mut n: Node, claimless: bool) -> Node {
        n.labels
            .insert(crate::model::labels::NODEPOOL.into(), "default".into());
        n.claimless = claimless;
        n
    }

    fn instance(id: &str, state: &str) -> Instance {
        Instance {
            id: id.into(),
            state: state.into(),
            ..Instance::default()
        }
    }

    fn node(name: &str, id: &str, initialized: bool) -> Node {
        Node {
            name: name.into(),
            provider_id: Some(format!("aws:///us-east-1a/{id}")),
            initialized,
            ..Node::default()
        }
    }

    /// `statenode.go` `Initialized()`/`Managed()`: a node without a NodeClaim counts as
    /// initialized whatever its labels say; one with a NodeClaim once labelled (found by name
    /// or by provider id).
    #[test]
    fn a_node_without_a_nodeclaim_counts_as_initialized() {
        let mut nodes = vec![
            node("by-name", "i-1", false),
            node("by-id", "i-2", false),
            node("launched", "i-3", false),
            node("labelled", "i-4", true),
        ];
        let claims = vec![
            NodeClaim {
                name: "a".into(),
                node_name: Some("by-name".into()),
                ..NodeClaim::default()
            },
            NodeClaim {
                name: "b".into(),
                provider_id: Some("aws:///us-east-1a/i-2".into()),
                ..NodeClaim::default()
            },
            NodeClaim {
                name: "c".into(),
                node_name: Some("labelled".into()),
                ..NodeClaim::default()
            },
        ];
        mark_claimless(&mut nodes, &claims);
        let seen: Vec<(bool, bool)> = nodes
            .iter()
            .map(|n| (n.claimless, n.counts_as_initialized()))
            .collect();
        assert_eq!(
            seen,
            [(false, false), (false, false), (true, true), (false, true)]
        );
        // The label fact is kept: `provision` reads it for the nodes it launched.
        assert!(!nodes[2].initialized);
    }

    /// `core v1.14.1: pkg/controllers/nodeclaim/lifecycle/initialization_test.go`, one row per
    /// case of the rule (the NodeClaim requests cpu 2, memory 50Mi, pods 5; the Node has
    /// allocatable cpu 8, memory 80Mi, pods 110, as upstream's). The Its about who does it —
    /// "should ignore NodeClaims which aren't managed by this Karpenter instance", "shouldn't
    /// consider the nodeClaim initialized when it has not registered" (two Nodes for one
    /// provider id) — are n.a. here: this tool applies the rule to the nodes it launched, found
    /// by instance id; "should add the initialization label to the node …" is the label
    /// (`usecases::provisioning::tests`).
    #[test]
    fn initialization_table() {
        use crate::model::taints::Effect;
        let taint = |k: &str, v: &str, e| Taint::new(k, v, e);
        let startup = vec![
            taint(
                "custom-startup-taint",
                "custom-startup-value",
                Effect::NoSchedule,
            ),
            taint(
                "other-custom-startup-taint",
                "other-custom-startup-value",
                Effect::NoExecute,
            ),
        ];
        let requests = Resources::from_pairs(&[("cpu", "2"), ("memory", "50Mi"), ("pods", "5")]);
        let mut gpu_requests = requests.clone();
        gpu_requests.set("fake.com/vendor-a", 1000);
        let node = |ready: bool, taints: Vec<Taint>, extra: &[(&str, &str)]| {
            let mut allocatable =
                Resources::from_pairs(&[("cpu", "8"), ("memory", "80Mi"), ("pods", "110")]);
            allocatable.add_assign(&Resources::from_pairs(extra));
            Node {
                name: "n".into(),
                ready,
                taints,
                allocatable,
                ..Node::default()
            }
        };
        let none = Resources::default();
        let ephemeral = vec![
            taint("node.kubernetes.io/not-ready", "", Effect::NoSchedule),
            taint("node.kubernetes.io/unreachable", "", Effect::NoSchedule),
            taint(
                "node.cloudprovider.kubernetes.io/uninitialized",
                "true",
                Effect::NoSchedule,
            ),
            taint("karpenter.sh/unregistered", "", Effect::NoExecute),
        ];
        use NotInitialized::*;
        // (It, node, startup taints, requests, outcome)
        type Case<'a> = (
            &'a str,
            Node,
            &'a [Taint],
            &'a Resources,
            Result<(), NotInitialized>,
        );
        let cases: Vec<Case> = vec![
            (
                "should consider the NodeClaim initialized when all initialization conditions are met",
                node(true, vec![], &[]),
                &[],
                &requests,
                Ok(()),
            ),
            (
                "should not consider the Node to be initialized when the status of the Node is NotReady",
                node(false, vec![], &[]),
                &[],
                &requests,
                Err(NotReady),
            ),
            (
                "should not consider the Node to be initialized when all requested resources aren't registered",
                node(true, vec![], &[]),
                &[],
                &gpu_requests,
                Err(ResourceNotRegistered("fake.com/vendor-a".into())),
            ),
            (
                "… (registered at zero: kubelet zeroes it until the device plugin runs)",
                node(true, vec![], &[("fake.com/vendor-a", "0")]),
                &[],
                &gpu_requests,
                Err(ResourceNotRegistered("fake.com/vendor-a".into())),
            ),
            (
                "should consider the node to be initialized once all the resources are registered",
                node(true, vec![], &[("fake.com/vendor-a", "2")]),
                &[],
                &gpu_requests,
                Ok(()),
            ),
            (
                "should not consider the Node to be initialized when all startupTaints aren't removed",
                node(true, startup.clone(), &[]),
                &startup,
                &requests,
                Err(StartupTaint(startup[0].clone())),
            ),
            (
                "… (one left, whatever its value)",
                node(
                    true,
                    vec![taint("other-custom-startup-taint", "", Effect::NoExecute)],
                    &[],
                ),
                &startup,
                &requests,
                Err(StartupTaint(taint("other-custom-startup-taint", "", Effect::NoExecute))),
            ),
            (
                "… (the key with another effect is not the startup taint, MatchTaint)",
                node(
                    true,
                    vec![taint("custom-startup-taint", "", Effect::NoExecute)],
                    &[],
                ),
                &startup,
                &requests,
                Ok(()),
            ),
            (
                "should consider the Node to be initialized once the startupTaints are removed",
                node(true, vec![], &[]),
                &startup,
                &requests,
                Ok(()),
            ),
            (
                "should not consider the Node to be initialized when all ephemeralTaints aren't removed",
                node(true, ephemeral.clone(), &[]),
                &startup,
                &requests,
                Err(EphemeralTaint(ephemeral[0].clone())),
            ),
            (
                "… (the last of them)",
                node(true, ephemeral[3..].to_vec(), &[]),
                &startup,
                &requests,
                Err(EphemeralTaint(ephemeral[3].clone())),
            ),
            (
                "should consider the Node to be initialized once the ephemeralTaints are removed",
                node(true, vec![], &[]),
                &startup,
                &requests,
                Ok(()),
            ),
            (
                "should not consider the Node to be initialized while a readiness.k8s.io/ taint is present, …",
                node(
                    true,
                    vec![taint("readiness.k8s.io/some-rule", "", Effect::NoSchedule)],
                    &[],
                ),
                &[],
                &none,
                Err(EphemeralTaint(taint("readiness.k8s.io/some-rule", "", Effect::NoSchedule))),
            ),
            (
                "… and initialize once it is removed",
                node(true, vec![], &[]),
                &[],
                &none,
                Ok(()),
            ),
        ];
        for (name, n, startup, requested, want) in cases {
            assert_eq!(n.initialization(startup, requested), want, "{name}");
        }
        assert_eq!(
            NotInitialized::StartupTaint(startup[0].clone()).to_string(),
            "StartupTaint \"custom-startup-taint=custom-startup-value:NoSchedule\" still exists"
        );
    }
}
