//! `--wait`: polls once a second until every launched instance has a Ready, initialized Node
//! and the planned pods are bound, labelling each node registered once Ready and initialized once
//! it is (`Node::initialization`), the way Karpenter's controllers do.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use super::{Event, Launch, WaitReport, WaitStatus, Waited};
use crate::api::{core, Location};
use crate::cloud::types::Compute;
use crate::error::CommandError;
use crate::k8s::{ops, Cluster};
use crate::model::pod::Owner;
use crate::usecases::clock::Clock;
use crate::usecases::live::Live;
use crate::usecases::Sink;

/// How often the wait looks.
const POLL: Duration = Duration::from_secs(1);

impl<C: Cluster, P: Compute, K: Clock + ?Sized> Live<'_, C, P, K> {
    /// Waits until every `launched` instance has a Ready, initialized Node and the planned pods
    /// are bound, or `timeout` passes, or Ctrl-C.
    pub fn wait(
        &self,
        launched: &[Launch],
        timeout: Duration,
        events: &mut dyn Sink<Event>,
    ) -> Result<Waited, CommandError> {
        let started = self.clock.monotonic();
        let pods: Vec<(&str, &str)> = launched
            .iter()
            .flat_map(|l| l.pods.iter())
            .filter_map(|p| p.split_once('/'))
            .collect();
        let ids: BTreeSet<&str> = launched.iter().map(|l| l.instance_id.as_str()).collect();
        events.emit(Event::WaitStarted);
        loop {
            let ready = self.initialized_nodes(launched)?;
            let bound = self.bound(&pods, &ready)?;
            let status = WaitStatus {
                ready: ready.len(),
                nodes: ids.len(),
                bound,
                pods: pods.len(),
            };
            events.emit(Event::Waiting(status));
            let elapsed = self.clock.monotonic() - started;
            if ready.len() == ids.len() && bound == pods.len() {
                events.emit(Event::WaitDone(status));
                return Ok(Waited::Ready(WaitReport {
                    nodes: ready,
                    pods_bound: bound,
                    pods: pods.len(),
                    seconds: (elapsed.as_secs_f64() * 10.0).round() / 10.0,
                }));
            }
            if elapsed >= timeout {
                let registered = self.registered_instances()?;
                return Ok(Waited::TimedOut {
                    after: timeout,
                    status,
                    unregistered: launched
                        .iter()
                        .filter(|l| !registered.contains(&l.instance_id))
                        .map(|l| (l.node_claim.clone(), l.instance_id.clone()))
                        .collect(),
                });
            }
            if !self.clock.sleep(POLL) {
                return Ok(Waited::Stopped(status));
            }
        }
    }

    /// The instances that have a Node (registered, Ready or not), read now.
    fn registered_instances(&self) -> Result<BTreeSet<String>, CommandError> {
        Ok(self
            .nodes()?
            .iter()
            .filter_map(|n| n.instance_id().map(str::to_string))
            .collect())
    }

    /// Every Node, read now.
    fn nodes(&self) -> Result<Vec<crate::model::node::Node>, CommandError> {
        let mut nodes = Vec::new();
        ops::list(
            self.cluster,
            "/api/v1/nodes",
            &ops::ListQuery::default(),
            |n: core::Node| {
                if let Ok(node) = crate::api::convert_node(&n, &Location::file("cluster")) {
                    nodes.push(node);
                }
            },
        )?;
        Ok(nodes)
    }

    /// Instance id → name of the Nodes of `launched` that are Ready and initialized, each
    /// registered and labelled as Karpenter's controllers would on the way
    /// ([`Live::sync_registered`]: once, when first seen, the NodeClaim's labels — the launched
    /// type's among them, which could not be in the user data every type of the fleet shares —
    /// and the taints its kubelet did not register; `karpenter.sh/initialized` once initialized).
    pub(super) fn initialized_nodes(
        &self,
        launched: &[Launch],
    ) -> Result<BTreeMap<String, String>, CommandError> {
        let nodes = self.nodes()?;
        let mut out = BTreeMap::new();
        // Registered on sight (Ready or not, as Karpenter's registration: the startup taints
        // are put on before the agents that remove them run); initialized once Ready.
        for node in &nodes {
            let Some(l) = launched
                .iter()
                .find(|l| node.instance_id() == Some(l.instance_id.as_str()))
            else {
                continue;
            };
            let initialized = node.initialization(&l.startup_taints, &l.requests).is_ok();
            let taints: Vec<_> = l.taints.iter().chain(&l.startup_taints).collect();
            let tainted = self.sync_registered(
                node,
                || l.node_labels.clone(),
                &l.node_annotations,
                &taints,
                initialized,
            )?;
            let initialized = initialized && !tainted;
            if initialized {
                out.insert(l.instance_id.clone(), node.name.clone());
            }
        }
        Ok(out)
    }

    /// How many of the planned `pods` count as bound. The scheduler may bind other pending
    /// pods than the ones planned to a new node (they are interchangeable replicas), so the
    /// wait is over when the planned pods are bound anywhere, or the new nodes hold as many
    /// pods as were planned.
    fn bound(
        &self,
        pods: &[(&str, &str)],
        ready: &BTreeMap<String, String>,
    ) -> Result<usize, CommandError> {
        let mut bound_planned = 0;
        for (ns, name) in pods {
            let pod: Option<core::Pod> = ops::get(
                self.cluster,
                &format!("/api/v1/namespaces/{ns}/pods/{name}"),
            )?;
            let is_bound = pod.as_ref().is_some_and(|p| {
                p.spec
                    .as_ref()
                    .and_then(|s| s.node_name.as_deref())
                    .is_some_and(|n| !n.is_empty())
            });
            if is_bound {
                bound_planned += 1;
            }
        }
        let mut on_new_nodes = 0;
        for node in ready.values() {
            ops::list(
                self.cluster,
                "/api/v1/pods",
                &ops::ListQuery {
                    field_selector: Some(&format!("spec.nodeName={node}")),
                    ..Default::default()
                },
                |p: core::Pod| {
                    let daemon = p.metadata.owner_references.iter().flatten().any(|o| {
                        // An `apps/v1` DaemonSet's pod, as `is_daemonset_pod` reads it.
                        let (kind, version) = (o.kind.as_deref(), o.api_version.as_deref());
                        kind.zip(version)
                            .is_some_and(|(k, v)| Owner::from_reference(k, "", v).is_daemonset())
                    });
                    if !daemon {
                        on_new_nodes += 1;
                    }
                },
            )?;
        }
        Ok(bound_planned.max(on_new_nodes).min(pods.len()))
    }
}
