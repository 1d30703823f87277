//! The state changes an action makes: nodes marked for deletion, the pods it moves committed to
//! where its simulation put them, replacements added as uninitialized nodes
//! (`core v1.14.1: pkg/controllers/disruption/queue.go StartCommand`).

use super::{Engine, Notes, Record};
use crate::disruption::consolidation::cluster::{PodExtra, Status};
use crate::disruption::consolidation::input::{ClaimFacts, Release};
use crate::disruption::consolidation::price::{held_back, Choice};
use crate::disruption::consolidation::report::Method;
use crate::disruption::consolidation::sim::{PodRef, SimRequest, SimResult, Simulator};
use crate::model::instance_type::{InstanceType, Offering};
use crate::model::labels;
use crate::model::node::Node;

impl<S: Simulator> Engine<S> {
    /// Pods of nodes already deleting in the input are placed once, as the provisioner would
    /// (new NodeClaims included); those that fit nowhere stay in every later simulation,
    /// where they fail it as Karpenter's would.
    pub(super) fn settle_deleting(&mut self) {
        let deleting: Vec<usize> = (0..self.c.nodes.len())
            .filter(|&i| self.c.nodes[i].status == Status::Deleting)
            .collect();
        let mut pods = Vec::new();
        for &i in &deleting {
            let facts = self.facts(i);
            pods.extend(facts.sim_pods.iter().map(|&p| (i, p)));
        }
        if pods.is_empty() {
            return;
        }
        // Placed here or stuck, they are scheduled again in every simulation Karpenter runs
        // (`helpers.go SimulateScheduling`: `deletingNodes.CurrentlyReschedulablePods`), so
        // never counted on their node; the pods the node keeps count.
        for &i in &deleting {
            let facts = self.facts(i);
            self.c.moved_off(i, &facts.sim_pods);
        }
        let request = SimRequest {
            candidates: Vec::new(),
            pods,
            consolidation: false,
            with_pending: false,
            reasons: true,
        };
        let result = self.sim.simulate(&mut self.c, &request);
        let stuck = result.unschedulable_pods();
        self.commit(&result, None);
        // The provisioner nominates the existing nodes it places these pods on.
        for (node, placed) in &result.placements {
            let mut from: Vec<usize> = placed
                .iter()
                .filter_map(|r| match r {
                    PodRef::Bound { node, .. } => Some(*node),
                    PodRef::Pending(_) | PodRef::Stuck(_) => None,
                })
                .collect();
            from.sort_unstable();
            from.dedup();
            self.c.nodes[*node].receives_from_deleting = from;
        }
        for (k, claim) in result.claims.iter().enumerate() {
            let choice = Choice::from_claim(&self.c, claim, k);
            let offer = self.take_offer(&choice);
            self.launch(&choice, &result, None, offer);
        }
        self.c.stuck = stuck.iter().map(|r| r.pod(&self.c).clone()).collect();
    }

    /// Moves the simulated pods that are not pending onto their existing destinations.
    fn commit(&mut self, result: &SimResult, action: Option<usize>) {
        for (node, pods) in &result.placements {
            // Only real pods nominate their node; CapacityBuffer virtual pods never do (core
            // v1.14.1 `scheduling/scheduler.go` `Results.Record`, `isVirtualBufferPod`).
            let real = pods.iter().any(|&r| match r {
                PodRef::Pending(i) => self.c.pending[i].buffer.is_none(),
                PodRef::Bound { .. } | PodRef::Stuck(_) => true,
            });
            for &r in pods {
                if let Some((pod, extra)) = self.moved_pod(r) {
                    self.c.add_pod(*node, pod, extra);
                }
            }
            if real && self.c.release != Release::V0_31 {
                if let Some(a) = action {
                    self.c.nodes[*node].receives_from = Some(a);
                }
            }
        }
    }

    fn moved_pod(&self, r: PodRef) -> Option<(crate::model::pod::Pod, PodExtra)> {
        match r {
            PodRef::Bound { node, pod } => Some((
                self.c.pods(node)[pod].clone(),
                self.c.nodes[node].extras[pod],
            )),
            PodRef::Stuck(i) => Some((
                self.c.stuck[i].clone(),
                PodExtra {
                    priority: None,
                    deletion_cost: None,
                    not_ready: false,
                },
            )),
            PodRef::Pending(_) => None,
        }
    }

    /// What `choice` launches, taking an instance of its reservation when it launches into one
    /// (so the next NodeClaim of the same action, and later passes, see one fewer).
    fn take_offer(&mut self, choice: &Choice) -> Option<(InstanceType, Offering)> {
        let offer = choice
            .launch(&self.c)
            .map(|(it, o)| (it.clone(), o.clone()));
        if let Some(r) = offer.as_ref().and_then(|(_, o)| o.reservation.as_ref()) {
            let id = r.id.clone();
            self.c.use_reservation(&id);
        }
        offer
    }

    /// Adds a replacement NodeClaim as a node holding the pods its simulation gave it, launched
    /// on `offer` (its type and offering; `None`: the first option, no offering).
    pub(super) fn launch(
        &mut self,
        choice: &Choice,
        result: &SimResult,
        action: Option<usize>,
        offer: Option<(InstanceType, Offering)>,
    ) {
        let claim = &result.claims[choice.claim];
        let finished = self.c.release == Release::V0_31;
        let (it, offering) = match offer {
            Some((it, o)) => (it, Some(o)),
            None => (
                self.c.sched.pools[choice.pool].instance_types[choice.options[0]].clone(),
                None,
            ),
        };
        self.launched += 1;
        let name = match action {
            Some(a) => format!(
                "{}-replacement-{}-{}",
                claim.planned.node_pool,
                a + 1,
                self.launched
            ),
            None => format!("{}-provisioned-{}", claim.planned.node_pool, self.launched),
        };
        let mut node_labels = claim.planned.labels.clone();
        node_labels.insert(labels::INSTANCE_TYPE.to_string(), it.name.clone());
        node_labels.insert(labels::HOSTNAME.to_string(), name.clone());
        if let Some(o) = &offering {
            node_labels.insert(labels::ZONE.to_string(), o.zone.clone());
            node_labels.insert(labels::CAPACITY_TYPE.to_string(), o.capacity_type.clone());
        }
        if finished {
            node_labels.insert("karpenter.sh/initialized".to_string(), "true".to_string());
        }
        let node = Node {
            name: name.clone(),
            labels: node_labels,
            taints: claim.planned.taints.clone(),
            capacity: it.capacity.clone(),
            allocatable: it.allocatable(),
            ready: finished,
            initialized: finished,
            ..Node::default()
        };
        let facts = ClaimFacts {
            name,
            created: self.c.now,
            initialized_at: finished.then_some(self.c.now),
            ..ClaimFacts::default()
        };
        let i = self.c.add_node(node, facts, choice.pool);
        self.facts.push(None);
        self.decided.push(None);
        self.notes.push(Notes::default());
        for &r in &claim.pods {
            if let Some((pod, extra)) = self.moved_pod(r) {
                self.c.add_pod(i, pod, extra);
            }
        }
    }

    /// Starts an action: its nodes go (deleting; v0.31: gone), its pods move, its
    /// replacements join.
    pub(super) fn apply(
        &mut self,
        method: Method,
        nodes: &[usize],
        result: Option<SimResult>,
        choices: Vec<Choice>,
        left_pending: Vec<PodRef>,
    ) {
        let a = self.records.len();
        let forceful = method == Method::Expiration && self.c.release == Release::V1_14;
        let source: f64 = nodes
            .iter()
            .map(|&i| self.node_price(i).unwrap_or(0.0))
            .sum();
        // Each NodeClaim in turn: one that launches into a reservation takes an instance of it
        // before the next is priced (aws v1.14.1 `capacityreservation` `MarkLaunched`; core
        // `ReservationManager`: one simulation never plans more on a reservation than it has).
        let mut replacements = Vec::new();
        let mut offers = Vec::new();
        let mut launched_price = 0.0;
        for c in &choices {
            replacements.push(c.report(&self.c));
            launched_price += c.price(&self.c);
            offers.push(self.take_offer(c));
        }
        let savings = source - launched_price;
        let mut moved: Vec<String> = Vec::new();
        if let Some(r) = &result {
            let placed = r.placements.iter().flat_map(|(_, pods)| pods);
            let launched = r.claims.iter().flat_map(|c| &c.pods);
            moved = placed
                .chain(launched)
                .filter(|p| !p.is_pending())
                .map(|p| p.pod(&self.c).key())
                .collect();
            moved.sort();
        }
        let pending_names: Vec<String> =
            left_pending.iter().map(|r| r.pod(&self.c).key()).collect();
        let pending_pods: Vec<_> = left_pending
            .iter()
            .map(|r| {
                let mut p = r.pod(&self.c).clone();
                p.node_name = None;
                p
            })
            .collect();
        let replace = !choices.is_empty() && !forceful;
        // core#3225: a replacement where a node held back by its own consolidateAfter had room.
        let held_back = match &result {
            Some(r) if replace && matches!(method, Method::Single | Method::Multi) => {
                let launched: Vec<PodRef> = r
                    .claims
                    .iter()
                    .flat_map(|c| c.pods.iter().copied())
                    .filter(|p| !p.is_pending())
                    .collect();
                held_back(&self.c, &launched)
            }
            _ => Vec::new(),
        };
        self.records.push(Record {
            pass: self.pass,
            method,
            nodes: nodes.to_vec(),
            // v1 expiration is forceful: deleted first, the provisioner launches afterwards.
            replace,
            savings,
            moved,
            left_pending: pending_names,
            replacements,
            held_back,
        });
        if let Some(r) = &result {
            self.commit(r, Some(a));
            for (choice, offer) in choices.iter().zip(offers) {
                self.launch(choice, r, Some(a), offer);
            }
            // Every stuck pod had to find a place for the action to be possible.
            if r.failures.is_empty() && !self.c.stuck.is_empty() {
                self.c.stuck.clear();
            }
        }
        // v1 moves only the pods it can evict now; the drain waits for the others (forceful
        // expiration, and drift under a terminationGracePeriod: eventual disruption).
        if self.c.release == Release::V1_14 {
            for &i in nodes {
                let facts = self.facts(i);
                let held: Vec<String> = facts
                    .reschedulable
                    .iter()
                    .filter(|p| !facts.sim_pods.contains(p))
                    .map(|&p| self.c.pods(i)[p].key())
                    .collect();
                if !held.is_empty() {
                    self.drain_waits.insert(i, held);
                }
            }
        }
        let status = if self.c.release == Release::V0_31 {
            Status::Gone
        } else {
            Status::Deleting
        };
        for &i in nodes {
            let facts = self.facts(i);
            self.c.moved_off(i, &facts.sim_pods);
            self.c.remove(i, status);
            self.decided[i] = Some(a);
        }
        self.c.pending.extend(pending_pods);
    }

    pub(super) fn node_price(&self, i: usize) -> Option<f64> {
        let p = self.c.nodes[i].pool?;
        let (it, zone, ct) = self.c.offering_labels(i);
        self.c
            .instance_type(p, it?)?
            .offerings
            .iter()
            .find(|o| Some(o.zone.as_str()) == zone && Some(o.capacity_type.as_str()) == ct)
            .map(|o| o.price)
    }
}
