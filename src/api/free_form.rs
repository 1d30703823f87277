//! The fields this tool reads free-form (kept as JSON: a Deployment's `selector`, an
//! EC2NodeClass's `placementGroupSelector`, a pod's `schedulingGates` …), checked against the
//! schema after the typed read. `serde_ignored` reports only what a typed read leaves unread,
//! so without this a typo inside such a field (`selector: {matchLabel: …}`) was taken silently
//! where `kubectl apply --validate=strict` refuses it.

use serde_json::Value;

use super::core::PodSpec;
use super::objects::ApiObject;
use super::schema::{self, Step, UnknownField};

/// The unknown fields inside `object`'s free-form fields, for its schema `root`.
pub(super) fn unknown_inside(object: &ApiObject, root: u16, kind: &str) -> Vec<UnknownField> {
    let mut found: Vec<(Vec<Step>, &Value)> = Vec::new();
    match object {
        ApiObject::Ec2NodeClassV1(c) => {
            if let Some(spec) = &c.spec {
                spec_fields(
                    [
                        ("placementGroupSelector", &spec.placement_group_selector),
                        (
                            "capacityReservationSelectorTerms",
                            &spec.capacity_reservation_selector_terms,
                        ),
                    ],
                    &mut found,
                );
            }
        }
        ApiObject::Pod(p) => {
            if let Some(spec) = &p.spec {
                pod_spec(vec![key("spec")], spec, &mut found);
            }
        }
        ApiObject::Workload(w) => {
            if let Some(spec) = &w.spec {
                spec_fields([("selector", &spec.selector)], &mut found);
                if let Some(pod) = spec.template.as_ref().and_then(|t| t.spec.as_ref()) {
                    let at = vec![key("spec"), key("template"), key("spec")];
                    pod_spec(at, pod, &mut found);
                }
            }
        }
        ApiObject::PersistentVolume(v) => {
            if let Some(spec) = &v.spec {
                spec_fields(
                    [
                        ("awsElasticBlockStore", &spec.aws_elastic_block_store),
                        ("local", &spec.local),
                        ("hostPath", &spec.host_path),
                    ],
                    &mut found,
                );
            }
        }
        _ => {}
    }
    found
        .into_iter()
        .flat_map(|(at, value)| schema::unknown_in_value(root, kind, &at, value))
        .collect()
}

/// The free-form fields set among `spec.<name>`.
fn spec_fields<'a, const N: usize>(
    fields: [(&str, &'a Option<Value>); N],
    found: &mut Vec<(Vec<Step>, &'a Value)>,
) {
    for (name, value) in fields {
        found.extend(value.iter().map(|v| (vec![key("spec"), key(name)], v)));
    }
}

/// A pod spec's free-form fields: its resource claims and scheduling gates, and each
/// container's resource claims.
fn pod_spec<'a>(at: Vec<Step>, spec: &'a PodSpec, found: &mut Vec<(Vec<Step>, &'a Value)>) {
    let under =
        |path: &[Step]| -> Vec<Step> { at.iter().cloned().chain(path.iter().cloned()).collect() };
    for (field, list) in [
        ("resourceClaims", &spec.resource_claims),
        ("schedulingGates", &spec.scheduling_gates),
    ] {
        for (i, v) in list.iter().flatten().enumerate() {
            found.push((under(&[key(field), Step::Index(i)]), v));
        }
    }
    for (field, containers) in [
        ("containers", &spec.containers),
        ("initContainers", &spec.init_containers),
    ] {
        for (i, c) in containers.iter().flatten().enumerate() {
            let claims = c.resources.as_ref().and_then(|r| r.claims.as_ref());
            for (j, v) in claims.into_iter().flatten().enumerate() {
                let path = [
                    key(field),
                    Step::Index(i),
                    key("resources"),
                    key("claims"),
                    Step::Index(j),
                ];
                found.push((under(&path), v));
            }
        }
    }
}

fn key(name: &str) -> Step {
    Step::Key(name.to_string())
}
