//! `EC2NodeClass.spec.capacityReservationSelectorTerms` and `status.capacityReservations` (v1,
//! AWS provider v1.3+), read from the JSON the manifest carries (the spec keeps it as written, so
//! the `ec2nodeclass-hash` sees it unchanged) and checked with the CRD's own rules
//! (`aws: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`, vendored in
//! `tests/fixtures/crds/v1/`).

use serde_json::Value;

use super::error::{Ctx, InputError};
use crate::model::nodepool::ReservationStatus;
use crate::model::reservation::{is_reservation_id, CapacityReservationTerm};

/// The CRD's `maxItems`.
const MAX_TERMS: usize = 30;
/// The CRD's `maxProperties` of `tags`.
const MAX_TAGS: usize = 20;

/// `capacityReservationSelectorTerms`, validated. Unknown fields are the schema check's
/// (`api::schema`); this checks types, patterns and the CEL rules.
pub(crate) fn terms(
    ctx: &Ctx,
    path: &str,
    value: Option<&Value>,
) -> Result<Vec<CapacityReservationTerm>, InputError> {
    let list = match value {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(ctx.invalid(path, "expected a list of selector terms")),
    };
    if list.len() > MAX_TERMS {
        return Err(ctx.invalid(
            path,
            format!("must have at most {MAX_TERMS} items, got {}", list.len()),
        ));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let tpath = format!("{path}[{i}]");
        let Value::Object(map) = item else {
            return Err(ctx.invalid(tpath, "expected a mapping"));
        };
        let text = |key: &str| -> Result<Option<String>, InputError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(ctx.invalid(format!("{tpath}.{key}"), "expected a string")),
            }
        };
        let id = text("id")?;
        if let Some(id) = &id {
            if !is_reservation_id(id) {
                return Err(ctx.invalid(
                    format!("{tpath}.id"),
                    format!("{id:?} does not match ^cr-[0-9a-z]+$"),
                ));
            }
        }
        let owner_id = text("ownerID")?;
        if let Some(owner) = &owner_id {
            if owner.len() != 12 || !owner.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ctx.invalid(
                    format!("{tpath}.ownerID"),
                    format!("{owner:?} does not match ^[0-9]{{12}}$"),
                ));
            }
        }
        let criteria = text("instanceMatchCriteria")?;
        if let Some(c) = &criteria {
            if c != "open" && c != "targeted" {
                return Err(ctx.invalid(
                    format!("{tpath}.instanceMatchCriteria"),
                    format!("unsupported value {c:?} (expected open or targeted)"),
                ));
            }
        }
        let mut tags = std::collections::BTreeMap::new();
        match map.get("tags") {
            None | Some(Value::Null) => {}
            Some(Value::Object(t)) => {
                if t.len() > MAX_TAGS {
                    return Err(ctx.invalid(
                        format!("{tpath}.tags"),
                        format!("must have at most {MAX_TAGS} tags, got {}", t.len()),
                    ));
                }
                for (k, v) in t {
                    let Value::String(v) = v else {
                        return Err(
                            ctx.invalid(format!("{tpath}.tags[{k:?}]"), "expected a string")
                        );
                    };
                    if k.is_empty() || v.is_empty() {
                        return Err(ctx.invalid(
                            format!("{tpath}.tags"),
                            "empty tag keys or values aren't supported",
                        ));
                    }
                    tags.insert(k.clone(), v.clone());
                }
            }
            Some(_) => return Err(ctx.invalid(format!("{tpath}.tags"), "expected a mapping")),
        }
        // The CRD's first CEL rule: every term selects by something.
        if id.is_none() && tags.is_empty() && criteria.is_none() {
            return Err(ctx.invalid(
                tpath,
                "expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']",
            ));
        }
        out.push(CapacityReservationTerm {
            id,
            owner_id,
            tags,
            instance_match_criteria: criteria,
        });
    }
    // The CRD's second CEL rule, as written upstream (`!self.all(x, has(x.id) && (...))`): it
    // only refuses a list in which *every* term combines `id` with something else. A single such
    // term among others is accepted by the API server, and selects by both (see
    // `CapacityReservationTerm::selects`). `all` of an empty list is true, so `[]` is refused too
    // (aws v1.14.1 `karpenter.k8s.aws_ec2nodeclasses.yaml`; session 30 sweep).
    let mixed = |t: &CapacityReservationTerm| {
        t.id.is_some()
            && (!t.tags.is_empty() || t.owner_id.is_some() || t.instance_match_criteria.is_some())
    };
    if out.iter().all(mixed) {
        return Err(ctx.invalid(
            path,
            "'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term",
        ));
    }
    Ok(out)
}

/// `status.capacityReservations`: `None` when the status does not have the field.
pub(crate) fn status(
    ctx: &Ctx,
    path: &str,
    value: Option<&Value>,
) -> Result<Option<Vec<ReservationStatus>>, InputError> {
    let list = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(ctx.invalid(path, "expected a list")),
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let ipath = format!("{path}[{i}]");
        let field = |key: &str| -> Result<String, InputError> {
            match item.get(key) {
                Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
                _ => Err(ctx.invalid(format!("{ipath}.{key}"), "required string is missing")),
            }
        };
        let id = field("id")?;
        if !is_reservation_id(&id) {
            return Err(ctx.invalid(
                format!("{ipath}.id"),
                format!("{id:?} does not match ^cr-[0-9a-z]+$"),
            ));
        }
        out.push(ReservationStatus {
            id,
            instance_type: field("instanceType")?,
            zone: field("availabilityZone")?,
        });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use crate::api::load_str;

    fn class(terms: &str, status: &str) -> String {
        format!(
            "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: gpu}}\nspec:\n  role: R\n  \
             amiSelectorTerms: [{{alias: al2023@latest}}]\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  \
             securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n  capacityReservationSelectorTerms: {terms}\n{status}"
        )
    }

    #[test]
    fn selector_terms_and_status_are_read() {
        let text = class(
            "[{id: cr-0a1}, {tags: {team: ml}, ownerID: \"123456789012\"}, {instanceMatchCriteria: open}]",
            "status:\n  capacityReservations:\n  - {id: cr-0a1, instanceType: p5.48xlarge, availabilityZone: us-east-1a, ownerID: \"123456789012\", instanceMatchCriteria: targeted}\n",
        );
        let m = load_str("gpu.yaml", &text).unwrap();
        let c = &m.node_classes[0];
        let terms = &c.capacity_reservation_selector_terms;
        assert_eq!(terms.len(), 3);
        assert_eq!(terms[0].id.as_deref(), Some("cr-0a1"));
        assert_eq!(terms[1].tags["team"], "ml");
        assert_eq!(terms[1].owner_id.as_deref(), Some("123456789012"));
        assert_eq!(terms[2].instance_match_criteria.as_deref(), Some("open"));
        let status = c.status.capacity_reservations.as_ref().unwrap();
        assert_eq!(status[0].id, "cr-0a1");
        assert_eq!(status[0].instance_type, "p5.48xlarge");

        let m = load_str("gpu.yaml", &class("[{id: cr-0a1}]", "")).unwrap();
        assert_eq!(
            m.node_classes[0].status.capacity_reservations, None,
            "no status field is not an empty selection"
        );
    }

    /// The CRD's patterns, enums and CEL rules (`tests/fixtures/crds/v1/
    /// karpenter.k8s.aws_ec2nodeclasses.yaml`), each a one-line error naming the field.
    #[test]
    fn the_crds_rules_are_enforced() {
        let cases = [
            ("[{id: r-1}]", "spec.capacityReservationSelectorTerms[0].id: \"r-1\" does not match ^cr-[0-9a-z]+$"),
            ("[{ownerID: \"123456789012\"}]", "spec.capacityReservationSelectorTerms[0]: expected at least one, got none, ['tags', 'id', 'instanceMatchCriteria']"),
            ("[{tags: {a: b}, ownerID: \"12\"}]", "spec.capacityReservationSelectorTerms[0].ownerID: \"12\" does not match ^[0-9]{12}$"),
            ("[{tags: {a: \"\"}}]", "spec.capacityReservationSelectorTerms[0].tags: empty tag keys or values aren't supported"),
            ("[{instanceMatchCriteria: any}]", "spec.capacityReservationSelectorTerms[0].instanceMatchCriteria: unsupported value \"any\" (expected open or targeted)"),
            ("[{id: cr-1, tags: {a: b}}]", "spec.capacityReservationSelectorTerms: 'id' is mutually exclusive, cannot be set along with other fields in a capacity reservation selector term"),
        ];
        for (terms, want) in cases {
            let err = load_str("gpu.yaml", &class(terms, ""))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{terms}: {err}");
            assert!(err.contains("EC2NodeClass"), "{err}");
        }
        // The second CEL rule as written upstream refuses only when every term mixes `id`.
        load_str(
            "gpu.yaml",
            &class("[{id: cr-1, tags: {a: b}}, {id: cr-2}]", ""),
        )
        .unwrap();
    }

    /// The second CEL rule, `!self.all(x, has(x.id) && (...))`, is false for an empty list (`all`
    /// of nothing is true), so the API server refuses `capacityReservationSelectorTerms: []` with
    /// the rule's message, as a Terraform source that merges the key in only for reserved pools
    /// says (session 30 sweep, index id 62509974129: "Karpenter v1 CRD validation rejects an
    /// empty [] ('id' is mutually exclusive)"). We read it as no terms.
    #[test]
    fn an_empty_list_of_reservation_terms_is_refused_as_the_crd_refuses_it() {
        let err = load_str("gpu.yaml", &class("[]", ""))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("spec.capacityReservationSelectorTerms: 'id' is mutually exclusive"),
            "{err}"
        );
        // Absent or null (the API server drops a null): no terms, no error.
        load_str("gpu.yaml", &class("null", "")).unwrap();
    }
}
