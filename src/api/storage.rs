//! StorageClasses, PersistentVolumeClaims, PersistentVolumes and CSINodes → the slim storage
//! model ([`crate::model::storage`]), with the API server's defaults (`volumeBindingMode:
//! Immediate`) and validation of the fields scheduling reads.

use super::core::{self, NodeSelectorTermSpec};
use super::error::{object_name, Ctx, InputError, Location};
use super::validate::{self, CLASSIC_OPERATORS};
use crate::model::requirements::{NodeSelectorRequirement, Operator};
use crate::model::storage::{
    PersistentVolume, PersistentVolumeClaim, StorageClass, VolumeBindingMode,
    BIND_COMPLETED_ANNOTATION, DEFAULT_CLASS_ANNOTATIONS,
};

/// A StorageClass.
pub fn convert_storage_class(
    sc: &core::StorageClass,
    at: &Location,
) -> Result<StorageClass, InputError> {
    let name = sc.metadata.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name("StorageClass", None, Some(&name)));
    let provisioner = sc
        .provisioner
        .clone()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ctx.invalid("provisioner", "required"))?;
    // `pkg/apis/storage/validation` `ValidateStorageClass`: a qualified name (lower-cased
    // first), and a reclaim policy of Delete or Retain.
    if let Some(problem) = validate::label_key_problem(&provisioner.to_ascii_lowercase()) {
        let why = problem.replacen("invalid label key", "invalid provisioner", 1);
        return Err(ctx.invalid("provisioner", why));
    }
    if let Some(policy) = sc.reclaim_policy.as_deref() {
        if !matches!(policy, "Delete" | "Retain") {
            return Err(ctx.invalid(
                "reclaimPolicy",
                format!("unsupported value {policy:?} (expected Delete or Retain)"),
            ));
        }
    }
    let binding_mode = match sc.volume_binding_mode.as_deref() {
        None | Some("Immediate") => VolumeBindingMode::Immediate,
        Some("WaitForFirstConsumer") => VolumeBindingMode::WaitForFirstConsumer,
        Some(other) => {
            return Err(ctx.invalid(
                "volumeBindingMode",
                format!("unknown mode {other:?} (expected Immediate or WaitForFirstConsumer)"),
            ))
        }
    };
    let mut allowed_topologies = Vec::new();
    for (i, term) in sc.allowed_topologies.iter().flatten().enumerate() {
        let mut reqs = Vec::new();
        for (j, e) in term.match_label_expressions.iter().flatten().enumerate() {
            let at = format!("allowedTopologies[{i}].matchLabelExpressions[{j}]");
            let key = e
                .key
                .clone()
                .filter(|k| !k.is_empty())
                .ok_or_else(|| ctx.invalid(format!("{at}.key"), "required"))?;
            if let Some(problem) = validate::label_key_problem(&key) {
                return Err(ctx.invalid(format!("{at}.key"), problem));
            }
            let values = e.values.clone().unwrap_or_default();
            if values.is_empty() {
                return Err(ctx.invalid(format!("{at}.values"), "must have at least one value"));
            }
            reqs.push(NodeSelectorRequirement {
                key,
                operator: Operator::In,
                values,
                min_values: None,
            });
        }
        allowed_topologies.push(reqs);
    }
    let annotations = sc.metadata.annotations.clone().unwrap_or_default();
    Ok(StorageClass {
        name,
        provisioner,
        binding_mode,
        allowed_topologies,
        is_default: DEFAULT_CLASS_ANNOTATIONS
            .iter()
            .any(|a| annotations.get(*a).is_some_and(|v| v == "true")),
        created: sc.metadata.creation_timestamp.clone(),
    })
}

/// What `kubectl apply` refuses of a PersistentVolumeClaim read from a manifest
/// (`pkg/apis/core/validation` `ValidatePersistentVolumeClaimSpec`): no access mode or an
/// unknown one, no `resources.requests.storage` or one not above zero, an unknown
/// `volumeMode`.
pub(crate) fn check_claim(
    pvc: &core::PersistentVolumeClaim,
    at: &Location,
) -> Result<(), InputError> {
    let meta = &pvc.metadata;
    let ctx = Ctx::new(
        at,
        object_name(
            "PersistentVolumeClaim",
            meta.namespace.as_deref(),
            meta.name.as_deref(),
        ),
    );
    let spec = pvc.spec.clone().unwrap_or_default();
    let modes = spec.access_modes.unwrap_or_default();
    if modes.is_empty() {
        return Err(ctx.invalid("spec.accessModes", "at least 1 access mode is required"));
    }
    const MODES: [&str; 4] = [
        "ReadWriteOnce",
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOncePod",
    ];
    if let Some((i, m)) = modes
        .iter()
        .enumerate()
        .find(|(_, m)| !MODES.contains(&m.as_str()))
    {
        return Err(ctx.invalid(
            format!("spec.accessModes[{i}]"),
            format!("unsupported value {m:?} (expected ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod)"),
        ));
    }
    if let Some(mode) = spec.volume_mode.as_deref() {
        if !matches!(mode, "Filesystem" | "Block") {
            return Err(ctx.invalid(
                "spec.volumeMode",
                format!("unsupported value {mode:?} (expected Filesystem or Block)"),
            ));
        }
    }
    let path = "spec.resources.requests[storage]";
    let storage = spec
        .resources
        .and_then(|r| r.requests)
        .and_then(|r| r.get("storage").cloned())
        .ok_or_else(|| ctx.invalid(path, "required"))?;
    if validate::quantity(&ctx, path, &storage.as_text())? <= 0 {
        return Err(ctx.invalid(path, "must be greater than zero"));
    }
    Ok(())
}

/// A PersistentVolumeClaim.
pub fn convert_claim(pvc: &core::PersistentVolumeClaim) -> PersistentVolumeClaim {
    let meta = &pvc.metadata;
    let spec = pvc.spec.clone().unwrap_or_default();
    PersistentVolumeClaim {
        namespace: meta.namespace_or_default(),
        name: meta.name.clone().unwrap_or_default(),
        storage_class: spec.storage_class_name,
        volume_name: spec.volume_name.filter(|v| !v.is_empty()),
        bind_completed: meta
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(BIND_COMPLETED_ANNOTATION)),
        deleting: meta.deletion_timestamp.is_some(),
        lost: pvc
            .status
            .as_ref()
            .and_then(|s| s.phase.as_deref())
            .is_some_and(|p| p == "Lost"),
    }
}

fn node_selector_term(
    ctx: &Ctx,
    path: &str,
    t: &NodeSelectorTermSpec,
) -> Result<Vec<NodeSelectorRequirement>, InputError> {
    validate::requirements(
        ctx,
        &format!("{path}.matchExpressions"),
        t.match_expressions.as_deref().unwrap_or_default(),
        CLASSIC_OPERATORS,
        validate::RequirementRules::Core,
    )
}

/// A PersistentVolume.
pub fn convert_volume(
    pv: &core::PersistentVolume,
    at: &Location,
) -> Result<PersistentVolume, InputError> {
    let name = pv.metadata.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name("PersistentVolume", None, Some(&name)));
    let spec = pv.spec.clone().unwrap_or_default();
    let mut node_affinity = Vec::new();
    let required = spec
        .node_affinity
        .as_ref()
        .and_then(|a| a.required.as_ref());
    let terms = required.and_then(|r| r.node_selector_terms.as_ref());
    if required.is_some() {
        let path = "spec.nodeAffinity.required.nodeSelectorTerms";
        super::validate::node_selector_terms(&ctx, path, terms.map(Vec::as_slice))?;
    }
    for (i, t) in terms.into_iter().flatten().enumerate() {
        node_affinity.push(node_selector_term(
            &ctx,
            &format!("spec.nodeAffinity.required.nodeSelectorTerms[{i}]"),
            t,
        )?);
    }
    let csi_driver = match (&spec.csi, &spec.aws_elastic_block_store) {
        (Some(csi), _) => csi.driver.clone().filter(|d| !d.is_empty()),
        (None, Some(_)) => Some("ebs.csi.aws.com".to_string()),
        (None, None) => None,
    };
    Ok(PersistentVolume {
        name,
        node_affinity,
        local: spec.local.is_some() || spec.host_path.is_some(),
        csi_driver,
        deleting: pv.metadata.deletion_timestamp.is_some(),
    })
}

/// A CSINode: its node's name and each driver's attach limit.
pub fn convert_csi_node(
    n: &core::CsiNode,
    at: &Location,
) -> Result<(String, std::collections::BTreeMap<String, u32>), InputError> {
    let name = n.metadata.name.clone().unwrap_or_default();
    let ctx = Ctx::new(at, object_name("CSINode", None, Some(&name)));
    let mut limits = std::collections::BTreeMap::new();
    let drivers = n.spec.as_ref().and_then(|s| s.drivers.as_ref());
    for (i, d) in drivers.into_iter().flatten().enumerate() {
        let Some(count) = d.allocatable.as_ref().and_then(|a| a.count) else {
            continue;
        };
        let count = u32::try_from(count).map_err(|_| {
            ctx.invalid(
                format!("spec.drivers[{i}].allocatable.count"),
                format!("must not be negative, got {count}"),
            )
        })?;
        let driver = d
            .name
            .clone()
            .filter(|d| !d.is_empty())
            .ok_or_else(|| ctx.invalid(format!("spec.drivers[{i}].name"), "required"))?;
        limits.insert(driver, count);
    }
    Ok((name, limits))
}
