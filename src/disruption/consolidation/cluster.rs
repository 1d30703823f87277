//! The cluster as the passes change it. The scheduler's [`Input`] is kept whole for the run —
//! node *i* is `sched.existing_nodes[i]` — so a simulation only flips flags on it instead of
//! copying 150,000 pods, and the pods live in one place.
//!
//! Between passes an action's nodes stay (marked deleting, as Karpenter's `MarkForDeletion`),
//! the pods it moves are added to the nodes its simulation chose, and its replacements join as
//! nodes that are not initialized yet (v0.31: as finished nodes, since it waited for them).

use rustc_hash::FxHashMap;

use super::input::{BoundPod, ClaimFacts, ConsolidationInput, FeatureGates, NodeInput, Release};
use super::pdb::{self, Pdb};
use crate::disruption::time::parse_duration;
use crate::model::instance_type::InstanceType;
use crate::model::labels;
use crate::model::node::Node;
use crate::model::nodepool::NodePool;
use crate::model::pod::Pod;
use crate::model::resources::Resources;
use crate::scheduling::{ExistingNode, Input, MinValuesPolicy, MovingPods, Options, SolveMemo};

/// What disruption reads of a pod beyond the slim pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct PodExtra {
    pub priority: Option<i32>,
    pub deletion_cost: Option<f64>,
    pub not_ready: bool,
}

/// Where a node stands in the simulated timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Running.
    Active,
    /// Marked for deletion (by the input, or by an action of an earlier pass).
    Deleting,
    /// Deleted by a finished action (v0.31).
    Gone,
}

/// A node's own state.
#[derive(Debug, Clone)]
pub(crate) struct NodeState {
    pub claim: Option<ClaimFacts>,
    /// Parallel to the scheduler node's pods.
    pub extras: Vec<PodExtra>,
    /// Pods the node had in the input (the rest were moved here by actions).
    pub original_pods: usize,
    /// Nominated in the input.
    pub nominated: bool,
    /// Hosts CapacityBuffer virtual pods in the input ([`ConsolidationInput::buffer_nodes`]).
    pub buffer_pods: bool,
    /// The action whose pods come here (which nominates the node).
    pub receives_from: Option<usize>,
    /// Nodes deleting in the input whose pods the provisioner places here: Karpenter's
    /// provisioner schedules a deleting node's reschedulable pods and nominates the existing
    /// nodes it puts them on (`provisioner.go Schedule` → `Results.Record` →
    /// `NominateNodeForPod`), so this node is no candidate while they move.
    pub receives_from_deleting: Vec<usize>,
    pub status: Status,
    pub pool: Option<usize>,
    /// Bumped whenever the node's capacity, pods or status change.
    pub version: u64,
}

/// `consolidateAfter` as the releases read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Not set (v1beta1 `WhenUnderutilized`).
    Unset,
    /// `Never`.
    Never,
    /// Seconds.
    Seconds(i64),
}

/// A NodePool's disruption settings, parsed once.
#[derive(Debug, Clone)]
pub(crate) struct PoolFacts {
    pub consolidate_after: After,
    /// Pre-v1 node lifetime (v1 reads the NodeClaim's own).
    pub expire_after: Option<i64>,
    /// Instance type index by name.
    pub types: FxHashMap<String, usize>,
}

/// The cluster during the passes.
pub(crate) struct Cluster {
    pub now: i64,
    pub release: Release,
    pub gates: FeatureGates,
    pub sched: Input,
    /// What the solver derives from the nodes, kept between simulations.
    pub memo: SolveMemo,
    pub nodes: Vec<NodeState>,
    pub pools: Vec<PoolFacts>,
    pub pool_by_name: FxHashMap<String, usize>,
    pub node_by_name: FxHashMap<String, usize>,
    /// Per node: its place in name order (ties in candidate order break by name, and comparing
    /// ranks is cheaper than comparing names pass after pass).
    pub name_rank: Vec<u32>,
    /// Provisionable pods (and pods a forceful deletion left without a place).
    pub pending: Vec<Pod>,
    /// Pods of nodes deleting in the input that fit nowhere: they stay in every simulation.
    pub stuck: Vec<Pod>,
    pub pdbs: Vec<Pdb>,
    pdbs_by_namespace: FxHashMap<String, Vec<usize>>,
    /// Per pool: capacity of its nodes that are not deleting (what limits count).
    pub usage: Vec<Resources>,
    /// Bumped by every change to the cluster.
    pub epoch: u64,
    /// Bumped by every launch into a reservation ([`Cluster::use_reservation`]): what a memo
    /// prepared of the pools' offerings before it is stale.
    pub offerings: u64,
    /// Every node's pods by label pair (`label_key`), kept as pods are added: the pods a
    /// spread constraint counts, found without reading every pod.
    pub pods_by_label: FxHashMap<u64, Vec<(u32, u32)>>,
}

/// The key of a label pair in [`Cluster::pods_by_label`] (a collision only adds pods that the
/// selector then refuses).
pub(crate) fn label_key(key: &str, value: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    key.hash(&mut h);
    value.hash(&mut h);
    h.finish()
}

fn parse_after(text: Option<&str>) -> After {
    match text {
        None => After::Unset,
        Some("Never") => After::Never,
        Some(d) => parse_duration(d).map_or(After::Never, After::Seconds),
    }
}

impl Cluster {
    pub fn new(input: ConsolidationInput) -> Cluster {
        let ConsolidationInput {
            now,
            release,
            feature_gates,
            min_values_policy,
            preference_policy,
            mut nodes,
            mut pending_pods,
            buffer_nodes,
            pdbs,
            pools,
            daemonsets,
            namespace_labels,
            storage,
        } = input;
        // The option came with v1.4 (`options.go`); earlier releases honour preferences.
        if release == Release::V1_14 {
            preference_policy.apply(
                pending_pods.iter_mut().chain(
                    nodes
                        .iter_mut()
                        .flat_map(|n| n.pods.iter_mut().map(|b| &mut b.pod)),
                ),
            );
        }
        let pdbs = {
            let mut all: Vec<(&Pod, bool)> = Vec::new();
            for n in &nodes {
                for p in &n.pods {
                    all.push((&p.pod, !p.not_ready && !p.pod.terminating));
                }
            }
            all.extend(pending_pods.iter().map(|p| (p, false)));
            pdb::evaluate(pdbs, &all)
        };
        let mut pdbs_by_namespace: FxHashMap<String, Vec<usize>> = FxHashMap::default();
        for (i, p) in pdbs.iter().enumerate() {
            pdbs_by_namespace
                .entry(p.input.namespace.clone())
                .or_default()
                .push(i);
        }
        let pool_by_name: FxHashMap<String, usize> = pools
            .iter()
            .enumerate()
            .map(|(i, p)| (p.pool.name.clone(), i))
            .collect();
        let pool_facts = pools
            .iter()
            .map(|p| PoolFacts {
                consolidate_after: parse_after(p.pool.disruption.consolidate_after.as_deref()),
                expire_after: match parse_after(p.pool.expire_after.as_deref()) {
                    After::Seconds(s) => Some(s),
                    After::Unset | After::Never => None,
                },
                types: p
                    .instance_types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.name.clone(), i))
                    .collect(),
            })
            .collect();
        let mut states = Vec::with_capacity(nodes.len());
        let mut existing = Vec::with_capacity(nodes.len());
        for n in nodes {
            let NodeInput {
                mut node,
                claim,
                pods,
                nominated,
            } = n;
            node.deleting |= claim
                .as_ref()
                .is_some_and(|c| c.deleting || c.gone.is_some());
            // The simulation sees Karpenter's `StateNode.Initialized()` (the model's rule): a
            // node no NodeClaim stands for — one `provision` launched, which no controller ever
            // labels — is initialized, so pods may move onto it.
            node.initialized = node.counts_as_initialized();
            let pool = claim
                .as_ref()
                .and(node.node_pool())
                .and_then(|p| pool_by_name.get(p).copied());
            let (pods, extras): (Vec<Pod>, Vec<PodExtra>) = pods
                .into_iter()
                .map(
                    |BoundPod {
                         pod,
                         priority,
                         deletion_cost,
                         not_ready,
                     }| {
                        (
                            pod,
                            PodExtra {
                                priority,
                                deletion_cost,
                                not_ready,
                            },
                        )
                    },
                )
                .unzip();
            states.push(NodeState {
                status: if node.deleting {
                    Status::Deleting
                } else {
                    Status::Active
                },
                claim,
                original_pods: pods.len(),
                extras,
                nominated,
                buffer_pods: buffer_nodes.contains(&node.name),
                receives_from: None,
                receives_from_deleting: Vec::new(),
                pool,
                version: 0,
            });
            existing.push(ExistingNode { node, pods });
        }
        let node_by_name = existing
            .iter()
            .enumerate()
            .map(|(i, e)| (e.node.name.clone(), i))
            .collect();
        let mut cluster = Cluster {
            now,
            release,
            gates: feature_gates,
            sched: Input {
                pods: Vec::new(),
                existing_nodes: existing,
                pools,
                daemonsets,
                namespace_labels,
                storage,
                // The pods that move stay listed where they are: a simulation marks them.
                moving: MovingPods::default(),
                // Karpenter's disruption simulations let reserved capacity fall back
                // (`core: pkg/controllers/disruption/helpers.go` builds its scheduler without
                // `DisableReservedCapacityFallback`), and read volumes without validating them.
                options: Options {
                    reserved_fallback: true,
                    disruption_volumes: true,
                    // The policy came with v1 (`options.go`); before, minValues were strict.
                    min_values_policy: match release {
                        Release::V1_14 => min_values_policy,
                        Release::V0_37 | Release::V0_31 => MinValuesPolicy::Strict,
                    },
                    ..Options::default()
                },
            },
            // Nodes are only appended here and every change goes through `touch`.
            memo: SolveMemo::tracking(),
            nodes: states,
            pools: pool_facts,
            pool_by_name,
            node_by_name,
            name_rank: Vec::new(),
            pending: pending_pods,
            stuck: Vec::new(),
            pdbs,
            pdbs_by_namespace,
            usage: Vec::new(),
            epoch: 0,
            offerings: 0,
            pods_by_label: FxHashMap::default(),
        };
        for (n, e) in cluster.sched.existing_nodes.iter().enumerate() {
            for (p, pod) in e.pods.iter().enumerate() {
                for (k, v) in &pod.labels {
                    cluster
                        .pods_by_label
                        .entry(label_key(k, v))
                        .or_default()
                        .push((n as u32, p as u32));
                }
            }
        }
        cluster.usage = (0..cluster.pools.len())
            .map(|p| {
                let mut u = Resources::new();
                for (i, n) in cluster.nodes.iter().enumerate() {
                    if n.pool == Some(p) && n.status == Status::Active {
                        u.add_assign(&cluster.sched.existing_nodes[i].node.capacity);
                    }
                }
                u
            })
            .collect();
        cluster.rank_names();
        cluster
    }

    pub fn node(&self, i: usize) -> &Node {
        &self.sched.existing_nodes[i].node
    }

    pub fn pods(&self, i: usize) -> &[Pod] {
        &self.sched.existing_nodes[i].pods
    }

    pub fn pool(&self, p: usize) -> &NodePool {
        &self.sched.pools[p].pool
    }

    pub fn instance_type(&self, pool: usize, name: &str) -> Option<&InstanceType> {
        self.pools[pool]
            .types
            .get(name)
            .map(|&t| &self.sched.pools[pool].instance_types[t])
    }

    /// The PDBs of a pod's namespace.
    pub fn pdbs_for(&self, namespace: &str) -> Vec<&Pdb> {
        self.pdbs_by_namespace
            .get(namespace)
            .map(|v| v.iter().map(|&i| &self.pdbs[i]).collect())
            .unwrap_or_default()
    }

    /// Whether the node counts as initialized for simulations: v0.31 also wants it Ready
    /// (`deprovisioning/helpers.go simulateScheduling`).
    pub fn usable_destination(&self, i: usize) -> bool {
        let n = self.node(i);
        n.initialized && (self.release != Release::V0_31 || n.ready)
    }

    /// v1.14: a destination whose pool's `consolidateAfter` has not elapsed since its last pod
    /// event takes no pods from consolidation candidates (`scheduling/scheduler.go
    /// addToExistingNode`, `utils/disruption IsUnderConsolidateAfter`; test "should not
    /// consolidate pods onto a destination node that is under its consolidateAfter window").
    pub fn under_consolidate_after(&self, i: usize) -> bool {
        self.consolidate_after_left(i).is_some()
    }

    /// How long node `i` stays within its own `consolidateAfter` (seconds), when it is.
    pub fn consolidate_after_left(&self, i: usize) -> Option<i64> {
        if self.release != Release::V1_14 {
            return None;
        }
        let (Some(claim), Some(pool)) = (&self.nodes[i].claim, self.nodes[i].pool) else {
            return None;
        };
        let (After::Seconds(after), Some(initialized)) =
            (self.pools[pool].consolidate_after, claim.initialized_at)
        else {
            return None;
        };
        let left = after - (self.now - claim.last_pod_event.unwrap_or(initialized));
        (after > 0 && left > 0).then_some(left)
    }

    /// The active nodes other than `except` that have room for `requests` but take no pods from
    /// consolidation because they are within their own `consolidateAfter` (core#3225; see
    /// [`Cluster::under_consolidate_after`]), with the seconds left: what explains a replacement
    /// (or no action) where a delete was expected. A resource check only, to say why, not decide.
    pub fn held_back_destinations(
        &self,
        except: &[usize],
        requests: &Resources,
    ) -> Vec<(String, i64)> {
        (0..self.nodes.len())
            .filter(|i| !except.contains(i) && self.nodes[*i].status == Status::Active)
            .filter_map(|i| Some((i, self.consolidate_after_left(i)?)))
            .filter(|&(i, _)| {
                let used = self
                    .pods(i)
                    .iter()
                    .fold(Resources::new(), |acc, p| acc.add(&p.requests));
                requests.fits_in(&self.node(i).allocatable.sub(&used))
            })
            .map(|(i, left)| (self.node(i).name.clone(), left))
            .collect()
    }

    /// The usage the solver reads: that of the pools with limits (the only ones whose
    /// usage changes what may launch).
    pub fn limited_usage(&self) -> Vec<Resources> {
        self.usage
            .iter()
            .enumerate()
            .map(|(p, u)| {
                if self.pool(p).limits.is_empty() {
                    Resources::new()
                } else {
                    u.clone()
                }
            })
            .collect()
    }

    /// Marks a change: the node's cached facts and the simulations that used it are stale.
    pub fn touch(&mut self, i: usize) {
        self.epoch += 1;
        self.nodes[i].version = self.epoch;
        self.memo.changed(i);
    }

    /// Marks the node deleting (an action's candidate) or gone (a finished v0.31 action).
    pub fn remove(&mut self, i: usize, status: Status) {
        if self.nodes[i].status == Status::Active {
            if let Some(p) = self.nodes[i].pool {
                let capacity = self.node(i).capacity.clone();
                self.usage[p] = self.usage[p].sub(&capacity);
            }
        }
        self.nodes[i].status = status;
        self.sched.existing_nodes[i].node.deleting = true;
        // A deleted node's pods are gone with it (v0.31 waits for the deletion).
        if status == Status::Gone {
            let all: Vec<usize> = (0..self.pods(i).len()).collect();
            self.moved_off(i, &all);
        }
        self.touch(i);
    }

    /// Marks pods of node `i` as moved off it for good — placed elsewhere, or pending again —
    /// while the node still lists them: topology counts them where they went, not here. The
    /// pods a deleting node keeps (`do-not-disrupt`, held by a PDB, DaemonSet and mirror pods)
    /// still count (`core v1.14.1 pkg/controllers/provisioning/scheduling/topology.go
    /// countDomains` skips only `excludedPods`).
    pub fn moved_off(&mut self, i: usize, pods: &[usize]) {
        for &p in pods {
            self.sched.moving.insert(i, p);
        }
        self.touch(i);
    }

    /// Whether pod `p` of node `i` counts for topology where it is bound (not moved off).
    pub fn counts_where_bound(&self, i: usize, p: usize) -> bool {
        !self.sched.moving.contains(i, p)
    }

    /// Adds a pod moved onto node `i`.
    pub fn add_pod(&mut self, i: usize, pod: Pod, extra: PodExtra) {
        let mut pod = pod;
        pod.node_name = Some(self.node(i).name.clone());
        let at = (i as u32, self.sched.existing_nodes[i].pods.len() as u32);
        for (k, v) in &pod.labels {
            self.pods_by_label
                .entry(label_key(k, v))
                .or_default()
                .push(at);
        }
        self.sched.existing_nodes[i].pods.push(pod);
        self.nodes[i].extras.push(extra);
        self.touch(i);
    }

    /// A replacement launched into reservation `id` takes one of its instances for the passes
    /// after it: the provider counts each launch (aws v1.14.1 `providers/capacityreservation`
    /// `MarkLaunched`), so the next simulation's offering has one fewer, and none left is
    /// unavailable (`reserved_capacity_resolver.go`). Found by the consolidation fuzzer (s33:
    /// a drift and a later consolidation both launched into a reservation with one left).
    pub fn use_reservation(&mut self, id: &str) {
        for pool in &mut self.sched.pools {
            for o in pool
                .instance_types
                .iter_mut()
                .flat_map(|it| &mut it.offerings)
            {
                if let Some(r) = o.reservation.as_mut().filter(|r| r.id == id) {
                    r.count = r.count.saturating_sub(1);
                    if r.count == 0 {
                        o.available = false;
                    }
                }
            }
        }
        // The solver's memo prepared the pools' offerings while the instance was there: a used-up
        // reservation would stay an option of later simulations (s35-noticed).
        self.memo.offerings_changed();
        self.offerings += 1;
        self.epoch += 1;
    }

    /// Adds a node (a replacement NodeClaim).
    pub fn add_node(&mut self, node: Node, claim: ClaimFacts, pool: usize) -> usize {
        let i = self.nodes.len();
        self.usage[pool].add_assign(&node.capacity);
        self.node_by_name.insert(node.name.clone(), i);
        self.sched.existing_nodes.push(ExistingNode {
            node,
            pods: Vec::new(),
        });
        self.nodes.push(NodeState {
            claim: Some(claim),
            extras: Vec::new(),
            original_pods: 0,
            nominated: false,
            buffer_pods: false,
            receives_from: None,
            receives_from_deleting: Vec::new(),
            status: Status::Active,
            pool: Some(pool),
            version: 0,
        });
        self.touch(i);
        self.rank_names();
        i
    }

    /// Works out [`Cluster::name_rank`] for every node.
    fn rank_names(&mut self) {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by(|&a, &b| self.node(a).name.cmp(&self.node(b).name));
        self.name_rank = vec![0; order.len()];
        for (rank, i) in order.into_iter().enumerate() {
            self.name_rank[i] = rank as u32;
        }
    }

    /// The node's labels that name its offering: instance type, zone, capacity type.
    pub fn offering_labels(&self, i: usize) -> (Option<&str>, Option<&str>, Option<&str>) {
        let l = &self.node(i).labels;
        (
            l.get(labels::INSTANCE_TYPE).map(String::as_str),
            l.get(labels::ZONE).map(String::as_str),
            l.get(labels::CAPACITY_TYPE).map(String::as_str),
        )
    }
}
