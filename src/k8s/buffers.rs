//! CapacityBuffers read live (docs/karpenter.md §6.13): the `autoscaling.x-k8s.io/v1beta1`
//! buffers LISTed, then only the objects they name GET — each PodTemplate, Deployment,
//! StatefulSet or ReplicaSet once (`core v1.14.1: pkg/utils/apps/resolve.go` reads them one
//! `Get` each) — and resolved by the same code as `-f` input ([`BufferSources::resolve`]).
//! Read only behind the `CapacityBuffer` gate: with it off nothing is listed.

use super::ops::{self, ListQuery};
use super::snapshot::SnapshotError;
use super::{Cluster, ClusterError};
use crate::api::buffer::{BufferSources, CapacityBuffer, PodTemplate, Reference, ResolvedBuffer};
use crate::api::core::Workload;
use crate::api::live::LIVE_SOURCE;
use crate::api::Location;

/// Where the buffers are listed.
pub const BUFFERS_PATH: &str = "/apis/autoscaling.x-k8s.io/v1beta1/capacitybuffers";

/// The buffers read, resolved, and what could not be read (one line each).
#[derive(Debug, Default)]
pub struct LiveBuffers {
    /// Every buffer the cluster holds, with the status Karpenter's buffer controller writes.
    pub buffers: Vec<ResolvedBuffer>,
    /// A list or read the cluster refused (no CRD, no permission): planned without it.
    pub warnings: Vec<String>,
}

/// Reads the cluster's CapacityBuffers and what they name. The CRD missing (404) or the list
/// forbidden (403) is a warning and no buffer; a named object forbidden is a warning and its
/// buffers left out; a named object missing is the buffer's `…NotFound` (no virtual pod).
pub fn read(c: &dyn Cluster) -> Result<LiveBuffers, SnapshotError> {
    let at = Location::file(LIVE_SOURCE);
    let mut listed: Vec<CapacityBuffer> = Vec::new();
    match ops::list(c, BUFFERS_PATH, &ListQuery::default(), |b| listed.push(b)) {
        Ok(_) => {}
        Err(e) if e.status() == Some(404) => return Ok(without(format!(
            "the CapacityBuffer feature gate is on, but the cluster serves no autoscaling.x-k8s.io/v1beta1 CapacityBuffers ({e}): planned without buffers"
        ))),
        Err(e) if e.is_forbidden() => return Ok(without(format!(
            "cannot list capacitybuffers ({e}): planned without the CapacityBuffers' capacity"
        ))),
        Err(e) => return Err(e.into()),
    }
    let mut sources = BufferSources::default();
    for b in &listed {
        sources.add_buffer(b, &at)?;
    }
    let mut warnings = Vec::new();
    for r in sources.references() {
        match fetch(c, &r) {
            Ok(Some(Named::Template(t))) => sources.add_pod_template(&t),
            Ok(Some(Named::Workload(w))) => sources.add_workload(&w),
            Ok(None) => {}
            Err(e) if e.is_forbidden() => {
                warnings.push(format!(
                    "cannot read {} {}/{} ({e}): the CapacityBuffers naming it are left out",
                    r.kind, r.namespace, r.name
                ));
                sources.drop_naming(&r);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(LiveBuffers {
        buffers: sources.resolve()?,
        warnings,
    })
}

fn without(warning: String) -> LiveBuffers {
    LiveBuffers {
        buffers: Vec::new(),
        warnings: vec![warning],
    }
}

/// What a reference names, as read.
enum Named {
    Template(PodTemplate),
    Workload(Workload),
}

/// GETs the object `r` names; `None` when it does not exist.
fn fetch(c: &dyn Cluster, r: &Reference) -> Result<Option<Named>, ClusterError> {
    let (ns, name) = (ops::encode(&r.namespace), ops::encode(&r.name));
    if r.kind == "PodTemplate" {
        let path = format!("/api/v1/namespaces/{ns}/podtemplates/{name}");
        return Ok(ops::get::<PodTemplate>(c, &path)?.map(Named::Template));
    }
    let resource = format!("{}s", r.kind.to_ascii_lowercase());
    let path = format!("/apis/apps/v1/namespaces/{ns}/{resource}/{name}");
    Ok(ops::get::<Workload>(c, &path)?.map(|mut w| {
        // A GET answers with the kind, but the resolution keys on it: set it as asked.
        w.kind = Some(r.kind.clone());
        Named::Workload(w)
    }))
}

#[cfg(test)]
#[path = "buffers_tests.rs"]
mod tests;
