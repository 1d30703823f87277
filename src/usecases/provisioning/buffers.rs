//! Karpenter's `CapacityBuffer` feature gate for a plan (docs/karpenter.md §6.13): with it on,
//! each ready buffer's virtual pods join the pending pods (`core v1.14.1: provisioning/
//! provisioner.go` `GetPendingPods`, after the provisionable filter); with it off (the default,
//! `pkg/operator/options/options.go`) Karpenter runs no buffer controller and the buffers
//! change nothing.

use crate::api::Manifests;
use crate::error::CommandError;
use crate::k8s::Cluster;
use crate::model::time::format_rfc3339;

/// The gate's name in `--feature-gates` / `FEATURE_GATES`.
pub const GATE: &str = "CapacityBuffer";

/// Said of each buffer with the gate off.
pub const GATE_OFF: &str = "Karpenter provisions for a CapacityBuffer only with its CapacityBuffer feature gate (off by default); --feature-gates CapacityBuffer=true plans for it";

/// With the gate on, adds the virtual pods of every buffer that provisions to the pending pods,
/// created `now` (they sort after the real pods of their size), and returns one warning per
/// buffer that provisions nothing (unresolvable reference, zero replicas). With it off, lists
/// each buffer among the ignored objects, naming the gate.
pub fn apply_gate(manifests: &mut Manifests, gate: bool, now: i64) -> Vec<String> {
    if !gate {
        for b in &manifests.buffers {
            manifests.ignored.push(format!(
                "CapacityBuffer/{}{} ({}): {GATE_OFF}",
                namespace_prefix(&b.buffer.namespace),
                b.buffer.name,
                b.at
            ));
        }
        return Vec::new();
    }
    let pods = crate::api::virtual_pods(&manifests.buffers, &format_rfc3339(now));
    manifests.pods.extend(pods);
    manifests
        .buffers
        .iter()
        .filter_map(|b| b.warning())
        .collect()
}

/// Live, with the gate on: the cluster's buffers (and the objects they name) into
/// `manifests.buffers`, for [`apply_gate`]; returns what could not be read, one line each (no
/// CRD, no permission). With the gate off nothing is read.
pub fn read_live(
    cluster: &dyn Cluster,
    gate: bool,
    manifests: &mut Manifests,
) -> Result<Vec<String>, CommandError> {
    if !gate {
        return Ok(Vec::new());
    }
    let read = crate::k8s::buffers::read(cluster)?;
    manifests.buffers = read.buffers;
    Ok(read.warnings)
}

/// [`read_live`] and the warning of each buffer Karpenter provisions nothing for: what a live
/// disruption command tells before deciding (its [`apply_gate`] runs inside the decision).
pub fn read_live_telling(
    cluster: &dyn Cluster,
    gate: bool,
    manifests: &mut Manifests,
) -> Result<Vec<String>, CommandError> {
    let mut said = read_live(cluster, gate, manifests)?;
    said.extend(manifests.buffers.iter().filter_map(|b| b.warning()));
    Ok(said)
}

/// `namespace/` outside `default`, as object names are written.
fn namespace_prefix(namespace: &str) -> String {
    if namespace == "default" {
        String::new()
    } else {
        format!("{namespace}/")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUFFER: &str = "apiVersion: v1\nkind: PodTemplate\nmetadata: {name: t}\ntemplate:\n  metadata: {labels: {app: buf}}\n  spec:\n    containers: [{name: c, image: i, resources: {requests: {cpu: '2'}}}]\n---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: b}\nspec:\n  podTemplateRef: {name: t}\n  replicas: 2\n---\napiVersion: autoscaling.x-k8s.io/v1beta1\nkind: CapacityBuffer\nmetadata: {name: lost, namespace: team}\nspec:\n  scalableRef: {kind: Deployment, name: gone}\n  percentage: 50\n";

    /// Gate off (core v1.14.1 `controllers.go` registers no buffer controller, `provisioner.go`
    /// injects nothing): no pod, each buffer noted naming the gate.
    #[test]
    fn with_the_gate_off_buffers_are_noted_and_add_nothing() {
        let mut m = crate::api::load_str("b.yaml", BUFFER).unwrap();
        assert!(apply_gate(&mut m, false, 0).is_empty());
        assert!(m.pods.is_empty());
        assert_eq!(m.ignored.len(), 2, "{:?}", m.ignored);
        assert!(m.ignored[0].starts_with("CapacityBuffer/b (b.yaml (document 2)): Karpenter provisions for a CapacityBuffer only with its CapacityBuffer feature gate (off by default"));
        assert!(m.ignored[1].starts_with("CapacityBuffer/team/lost"));
    }

    /// Gate on: the ready buffer's 2 virtual pods (`virtualpods/utilities.go` `BuildVirtualPods`)
    /// and a warning naming the buffer whose Deployment is missing (`controller.go`
    /// `ScalableRefNotFound`; `capacitybuffer/suite_test.go` "should set
    /// ReadyForProvisioning=False when scalable ref is not found").
    #[test]
    fn with_the_gate_on_ready_buffers_add_their_virtual_pods() {
        let mut m = crate::api::load_str("b.yaml", BUFFER).unwrap();
        let warnings = apply_gate(&mut m, true, 0);
        let names: Vec<_> = m.pods.iter().map(|p| p.key()).collect();
        assert_eq!(
            names,
            ["default/capacity-buffer-b-1", "default/capacity-buffer-b-2"]
        );
        assert_eq!(m.pods[0].requests.get("cpu"), 2000);
        assert_eq!(m.pods[0].labels["app"], "buf");
        assert_eq!(
            m.pods[0].creation_timestamp.as_deref(),
            Some("1970-01-01T00:00:00Z")
        );
        assert_eq!(
            warnings,
            ["CapacityBuffer/team/lost (b.yaml (document 3)): Deployment gone is not in namespace team (ReadyForProvisioning=False, ScalableRefNotFound): Karpenter provisions nothing for it"]
        );
    }
}
