//! The checks, one function per reason, and the order they run in (docs/karpenter.md §4.2).
//!
//! Each check answers [`Outcome`]: drifted (with an explanation), clean, or not checkable (and
//! whether that leaves the verdict `Unknown`). The first drifted check wins, as in Karpenter's
//! `isDrifted`, so the reason shown is the one Karpenter would record.

use std::collections::BTreeSet;

use super::facts::{class_key, ClassFacts, ExpectedImage, Fact, IdSet};
use super::hash::CaTerm;
use super::record::TemplateRecord;
use super::requirements::violations;
use super::static_hash;
use crate::model::placement_group::PlacementGroupSelector;

use super::{Change, DriftReason, DriftSnapshot, ManagedNode, NodeDrift, Status};
use crate::model::labels;
use crate::model::nodepool::{ApiGeneration, NodeClass, NodePool};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::time::parse_rfc3339;

/// `InstanceTypeNotFound` only judges NodeClaims older than this, strictly (docs/karpenter.md §4.2
/// step 3).
const INSTANCE_TYPE_MIN_AGE_SECONDS: i64 = 3600;

/// A reason found.
pub(super) struct Finding {
    reason: DriftReason,
    detail: String,
    changes: Vec<Change>,
    expected_image_ids: Vec<String>,
}

impl Finding {
    pub(super) fn new(reason: DriftReason, detail: String, changes: Vec<Change>) -> Self {
        Finding {
            reason,
            detail,
            changes,
            expected_image_ids: vec![],
        }
    }
}

/// What one check concluded.
pub(super) enum Outcome {
    Drifted(Finding),
    Clean,
    /// Could not run; `deciding` makes the verdict Unknown if nothing drifted.
    NotChecked {
        why: String,
        deciding: bool,
        expected_image_ids: Vec<String>,
    },
}

pub(super) fn not_checked(why: impl Into<String>, deciding: bool) -> Outcome {
    Outcome::NotChecked {
        why: why.into(),
        deciding,
        expected_image_ids: vec![],
    }
}

pub(super) fn change(field: &str, old: Option<String>, new: Option<String>) -> Change {
    Change {
        field: field.to_string(),
        old,
        new,
    }
}

/// Ids, comma-separated.
fn list(ids: &BTreeSet<&str>) -> String {
    if ids.is_empty() {
        "none".to_string()
    } else {
        ids.iter().copied().collect::<Vec<_>>().join(",")
    }
}

/// Evaluates one node.
pub(super) fn evaluate_node(
    snap: &DriftSnapshot,
    mn: &ManagedNode,
    ca: &Result<CaTerm, String>,
) -> NodeDrift {
    let created = mn.created().map(str::to_string);
    let age = created
        .as_deref()
        .and_then(parse_rfc3339)
        .map(|t| (snap.now - t).max(0));
    let pool_name = mn.pool_name().map(str::to_string);
    let pool = pool_name
        .as_deref()
        .and_then(|name| find_pool(snap, name, mn));
    let class = pool.and_then(|p| find_class(snap, p));
    let mut result = NodeDrift {
        name: mn.node.name.clone(),
        node_pool: pool_name.clone(),
        node_class: pool
            .and_then(|p| p.node_class_ref.as_ref())
            .map(|r| r.name.clone()),
        node_claim: mn.node_claim.as_ref().map(|c| c.name.clone()),
        instance_id: mn.instance_id(),
        instance_type: mn.instance_type().map(str::to_string),
        zone: mn.zone().map(str::to_string),
        created,
        age_seconds: age,
        launched_by: if mn.launched_by_tool() {
            "kubectl-karpenter"
        } else {
            "karpenter"
        },
        status: Status::Ok,
        drifted: false,
        reason: None,
        detail: String::new(),
        image_id: mn.image_id().map(str::to_string),
        expected_image_ids: vec![],
        changes: vec![],
        not_checked: vec![],
    };
    let Some(pool) = pool else {
        // Karpenter does not evaluate a NodeClaim whose NodePool is gone (docs/karpenter.md §4.1).
        result.status = Status::Unknown;
        result.detail = match &pool_name {
            Some(name) => format!("NodePool (or Provisioner) {name} not found"),
            None => "no karpenter.sh/nodepool label or tag names its NodePool".to_string(),
        };
        return result;
    };
    if let Some(why) = not_judged(mn) {
        result.status = Status::Unknown;
        result.detail = why;
        return result;
    }
    result.image_id = mn.drift_image_id(pool.generation).map(str::to_string);
    let outcomes = checks(snap, mn, pool, class, age, ca);
    let mut deciding_gap: Option<String> = None;
    for outcome in outcomes {
        match outcome {
            Outcome::Drifted(f) => {
                result.status = Status::Drifted;
                result.drifted = true;
                result.reason = Some(f.reason);
                result.detail = f.detail;
                result.changes = f.changes;
                if !f.expected_image_ids.is_empty() {
                    result.expected_image_ids = f.expected_image_ids;
                }
                return result;
            }
            Outcome::Clean => {}
            Outcome::NotChecked {
                why,
                deciding,
                expected_image_ids,
            } => {
                if !expected_image_ids.is_empty() {
                    result.expected_image_ids = expected_image_ids;
                }
                if deciding && deciding_gap.is_none() {
                    deciding_gap = Some(why.clone());
                }
                result.not_checked.push(why);
            }
        }
    }
    if let Some(why) = deciding_gap {
        result.status = Status::Unknown;
        result.detail = why;
    }
    result
}

/// Whether some offering of the node's instance type is compatible with its NodeClaim's labels
/// (core v1.14.1: `nodeclaim/disruption/drift.go instanceTypeNotFound`, `Offerings.HasCompatible`
/// with well-known labels allowed undefined, available or not; `drift_test.go` "…offerings
/// aren't compatible with the nodeclaim", "Reserved Capacity"). A reserved NodeClaim may have
/// been demoted to on-demand since: it fits a reserved or an on-demand offering, the
/// reservation's own labels left out.
fn offerings_fit(mn: &ManagedNode, offerings: &[Requirements]) -> bool {
    let claim_labels = mn
        .node_claim
        .as_ref()
        .map_or(&mn.node.labels, |c| &c.labels);
    let mut reqs = Requirements::from_labels(claim_labels);
    if claim_labels.get(labels::CAPACITY_TYPE).map(String::as_str) == Some("reserved") {
        reqs.remove(labels::CAPACITY_TYPE);
        reqs.add(Requirement::new(
            labels::CAPACITY_TYPE,
            Operator::In,
            ["reserved", "on-demand"],
        ));
        for key in [
            labels::CAPACITY_RESERVATION_ID,
            labels::CAPACITY_RESERVATION_TYPE,
            labels::CAPACITY_RESERVATION_INTERRUPTIBLE,
        ] {
            reqs.remove(key);
        }
    }
    offerings
        .iter()
        .any(|o| reqs.is_compatible(o, labels::is_well_known))
}

/// Whether a NodeClaim's `nodeClassRef` names a class of another provider, so that this
/// Karpenter does not manage it (core v1.14.1 `pkg/utils/nodeclaim/nodeclaim.go` `IsManaged`:
/// its group and kind not among the provider's `GetSupportedNodeClasses` — aws: `EC2NodeClass`).
/// An empty group (v1beta1 `apiVersion`-less refs, hand-written manifests) and EKS Auto Mode's
/// `NodeClass` count as this provider's.
pub fn of_another_provider(r: &crate::model::nodepool::NodeClassRef) -> bool {
    !(r.is_managed_here() || r.is_eks_auto_mode())
}

/// Why Karpenter does not judge the node's NodeClaim for drift at all, if it does not:
///
/// - its `Launched` condition is there and not True (core v1.14.1:
///   `pkg/controllers/nodeclaim/disruption/drift.go` `Reconcile` clears `Drifted` on a NodeClaim
///   not launched; `drift_test.go` "should remove the status condition from the nodeClaim when
///   the nodeClaim launch condition is unknown" / "… is false"). A NodeClaim without conditions
///   (manifests written by hand) is judged as before: nothing says it is not launched;
/// - its `nodeClassRef` names a class of another provider (core v1.14.1:
///   `nodeclaim/disruption/controller.go` skips a NodeClaim `nodeclaimutils.IsManaged` rejects,
///   its group and kind not among the provider's `GetSupportedNodeClasses` — aws:
///   `EC2NodeClass`; `drift_test.go` "should ignore drift for NodeClaims not managed by this
///   instance of Karpenter"). EKS Auto Mode's `NodeClass` is judged as before.
fn not_judged(mn: &ManagedNode) -> Option<String> {
    let claim = mn.node_claim.as_ref()?;
    if let Some(status) = claim.conditions.get("Launched").filter(|s| *s != "True") {
        return Some(format!(
            "NodeClaim {} is not launched (Launched={status}): Karpenter judges drift only once it is",
            claim.name
        ));
    }
    let r = claim.node_class_ref.as_ref()?;
    of_another_provider(r).then(|| {
        format!(
            "NodeClaim {} names node class {}/{} {}, not one of this provider's: Karpenter does not judge it",
            claim.name, r.group, r.kind, r.name
        )
    })
}

/// Runs the checks lazily in order, stopping at the first drift (later checks may be costly to
/// explain and Karpenter never reports them).
fn checks<'a>(
    snap: &'a DriftSnapshot,
    mn: &'a ManagedNode,
    pool: &'a NodePool,
    class: Option<&'a NodeClass>,
    age: Option<i64>,
    ca: &'a Result<CaTerm, String>,
) -> impl Iterator<Item = Outcome> + 'a {
    type Check<'a> = Box<dyn Fn() -> Outcome + 'a>;
    let class_ref = pool.node_class_ref.as_ref();
    let facts = class.and_then(|c| snap.class_facts.get(&class_key(&c.kind, &c.name)));
    let missing_class = move || -> Outcome {
        let r = class_ref.map(|r| format!("{} {}", r.kind, r.name));
        not_checked(
            format!(
                "{} not found: AMI, security-group and subnet drift not evaluated",
                r.unwrap_or_else(|| "node class".into())
            ),
            true,
        )
    };
    let mut list: Vec<Check<'a>> = Vec::new();
    if pool.generation == Some(ApiGeneration::V1Alpha5) {
        // v0.21–v0.28 only knew AMI drift, and a Provisioner without providerRef (inline
        // `spec.provider`) was never drifted (docs/karpenter.md §4.2, pre-v1).
        let inline = class_ref.is_none_or(|r| r.kind == "Provisioner");
        if !inline {
            list.push(Box::new(move || match class {
                Some(c) => ami_drift(snap, mn, c, facts),
                None => missing_class(),
            }));
        }
    } else {
        list.push(Box::new(move || nodepool_drift(mn, pool)));
        list.push(Box::new(move || requirements_drift(mn, pool)));
        // A class being deleted is not found for the provider (aws v1.14.1
        // `cloudprovider.go resolveNodeClassFromNodePool`): no types, no provider reason.
        let deleting = class.filter(|c| c.deleting);
        let mut stopped = false;
        if pool.generation == Some(ApiGeneration::V1) {
            // Older than an hour, a class whose types cannot be listed ends the check here
            // (core `isDrifted` returns `GetInstanceTypes`' error before the provider's).
            let unlisted = class
                .filter(|c| !c.deleting)
                .and_then(|c| types_unlisted(pool, c, facts));
            if let (Some(why), true) = (unlisted, age.is_some_and(old_enough)) {
                let rest = format!(
                    "node-class, AMI, security-group, subnet, capacity-reservation and \
                     placement-group drift not evaluated: {why} (Karpenter's drift check fails at \
                     its instance-type check then)"
                );
                let why = format!("InstanceTypeNotFound not evaluated: {why}");
                list.push(Box::new(move || not_checked(why.clone(), false)));
                list.push(Box::new(move || not_checked(rest.clone(), false)));
                stopped = true;
            } else {
                list.push(Box::new(move || {
                    instance_type_drift(snap, mn, pool, deleting, age)
                }));
            }
        }
        match class {
            _ if stopped => {}
            None => list.push(Box::new(missing_class)),
            Some(c) if c.deleting => list.push(Box::new(move || {
                not_checked(
                    format!(
                        "node-class, AMI, security-group, subnet, capacity-reservation and \
                         placement-group drift not evaluated: {} {} is being deleted (Karpenter \
                         resolves it as not found)",
                        c.kind, c.name
                    ),
                    false,
                )
            })),
            Some(c) => {
                list.push(Box::new(move || static_hash::node_class_drift(mn, c, ca)));
                // An empty security-group or subnet selection makes the provider's drift check
                // fail: v1.14.1 after AMI drift, v0.37 before it (it computes every provider
                // reason before returning the first).
                let empty = empty_selection(c, facts);
                let beta = pool.generation == Some(ApiGeneration::V1Beta1);
                if let (Some(why), true) = (empty.clone(), beta) {
                    list.push(Box::new(move || not_checked(why.clone(), false)));
                } else if let Some(fails) = ami_check_fails(snap, mn, pool, c, facts) {
                    // The provider's AMI check errs: no provider reason at all (s28-linedrift).
                    let rest = format!(
                        "security-group, subnet, capacity-reservation and placement-group drift \
                         not evaluated: {} (Karpenter's drift check fails at its AMI check then)",
                        fails.cause
                    );
                    match fails.ami {
                        Some(why) => list.push(Box::new(move || not_checked(why.clone(), false))),
                        None => list.push(Box::new(move || ami_drift(snap, mn, c, facts))),
                    }
                    list.push(Box::new(move || not_checked(rest.clone(), false)));
                } else {
                    list.push(Box::new(move || ami_drift(snap, mn, c, facts)));
                    match empty {
                        Some(why) => list.push(Box::new(move || not_checked(why.clone(), false))),
                        None => {
                            list.push(Box::new(move || security_group_drift(mn, c, facts)));
                            list.push(Box::new(move || subnet_drift(mn, c, facts)));
                            list.push(Box::new(move || capacity_reservation_drift(mn, c)));
                            list.push(Box::new(move || placement_group_drift(mn, c, facts)));
                        }
                    }
                }
            }
        }
    }
    list.into_iter().map(|c| c())
}

/// Why the provider's drift check would fail for `class`: it resolves no security group or no
/// subnet (`aws v1.14.1: pkg/cloudprovider/drift.go` `areSecurityGroupsDrifted` "no security
/// groups are present in the status", `isSubnetDrifted` "no subnets are discovered";
/// `pkg/cloudprovider/suite_test.go` "should return an error if the security groups are empty",
/// "should return an error if subnets are empty"). The error leaves the NodeClaim's Drifted
/// condition as it was, so no security-group, subnet or reservation drift is reported, even where
/// one of them alone would be. Unknown facts are not empty: each check says so itself.
fn empty_selection(class: &NodeClass, facts: Option<&ClassFacts>) -> Option<String> {
    let facts = facts?;
    let empty = |f: &Fact<IdSet>| matches!(f, Fact::Known(set) if set.ids.is_empty());
    let what = if class.launch_template.is_none() && empty(&facts.security_groups) {
        "no security group"
    } else if empty(&facts.subnets) {
        "no subnet"
    } else {
        return None;
    };
    Some(format!(
        "security-group, subnet and capacity-reservation drift not evaluated: {} {} resolves {what} (Karpenter's drift check fails then)",
        class.kind, class.name
    ))
}

/// Why the provider's AMI check fails for the node, which ends its drift check with an error
/// before any later provider reason (aws v1.14.1 `pkg/cloudprovider/drift.go` `isAMIDrifted`,
/// v0.37 alike).
struct AmiCheckFails {
    /// What failed, for the later checks' note.
    cause: String,
    /// The AMI check's own note, when [`ami_drift`] would not say it.
    ami: Option<String>,
}

/// The node's instance type is not among `GetInstanceTypes(nodePool)` ("finding node instance
/// type"; core's `InstanceTypeNotFound` judges that only after an hour), the class resolves no
/// AMI (`len(nodeClass.Status.AMIs) == 0`, "no amis exist given constraints"), or a v1 NodeClaim
/// has no `status.imageID` and nothing else tells the node's image. Unknown facts are none of
/// these: each check says so itself. A class with a `launchTemplate` (v1alpha5) never gets here.
fn ami_check_fails(
    snap: &DriftSnapshot,
    mn: &ManagedNode,
    pool: &NodePool,
    class: &NodeClass,
    facts: Option<&ClassFacts>,
) -> Option<AmiCheckFails> {
    if class.launch_template.is_some() {
        return None;
    }
    if let Some(why) = types_unlisted(pool, class, facts) {
        return Some(AmiCheckFails {
            ami: Some(format!("AMI drift not checked: {why}")),
            cause: why,
        });
    }
    if let Some(offered) = snap.instance_types.get(&pool.name) {
        let t = mn.instance_type();
        if !t.is_some_and(|t| offered.contains(t)) {
            let cause = match t {
                Some(t) => format!(
                    "instance type {t} is not among NodePool {}'s instance types now",
                    pool.name
                ),
                None => format!("the node has no {} label", labels::INSTANCE_TYPE),
            };
            let ami = format!(
                "AMI drift not checked: {cause} (Karpenter's drift check fails then; \
                 InstanceTypeNotFound judges the node once it is an hour old)"
            );
            return Some(AmiCheckFails {
                cause,
                ami: Some(ami),
            });
        }
    }
    if let Some(Fact::Known(images)) = facts.map(|f| &f.images) {
        if images.is_empty() {
            return Some(AmiCheckFails {
                cause: format!("{} {} resolves no AMI", class.kind, class.name),
                ami: None,
            });
        }
    }
    // "no ami ID found in nodeClaim status" (v1): nothing else tells the node's image either.
    let claim = mn.node_claim.as_ref()?;
    (pool.generation == Some(ApiGeneration::V1) && mn.drift_image_id(pool.generation).is_none())
        .then(|| AmiCheckFails {
            cause: format!("NodeClaim {} has no status.imageID", claim.name),
            ami: None,
        })
}

/// Why `GetInstanceTypes(nodePool)` errs for a v1 pool: its class resolves no subnet (aws v1.14.1
/// `providers/instancetype/instancetype.go List`, "no subnets found": `ZoneInfo` reads
/// `status.subnets`). Unknown subnets are not empty: the subnet check says so itself.
fn types_unlisted(
    pool: &NodePool,
    class: &NodeClass,
    facts: Option<&ClassFacts>,
) -> Option<String> {
    let empty = matches!(facts.map(|f| &f.subnets), Some(Fact::Known(set)) if set.ids.is_empty());
    (pool.generation == Some(ApiGeneration::V1) && empty).then(|| {
        format!(
            "{} {} resolves no subnet: Karpenter lists no instance type for NodePool {} (\"no subnets found\")",
            class.kind, class.name, pool.name
        )
    })
}

/// Old enough for `InstanceTypeNotFound` (core v1.14.1 `nodeclaim/disruption/drift.go isDrifted`:
/// `clock.Since(creation) > time.Hour`, so a NodeClaim exactly an hour old at `--now` is not yet).
fn old_enough(age: i64) -> bool {
    age > INSTANCE_TYPE_MIN_AGE_SECONDS
}

/// The pool by name; a Provisioner and a NodePool may share a name, so the node's own label
/// decides which generation it belongs to.
fn find_pool<'a>(snap: &'a DriftSnapshot, name: &str, mn: &ManagedNode) -> Option<&'a NodePool> {
    let legacy = mn.node.labels.contains_key(labels::PROVISIONER_NAME)
        && !mn.node.labels.contains_key(labels::NODEPOOL);
    let matching = || snap.node_pools.iter().filter(|p| p.name == name);
    matching()
        .find(|p| (p.generation == Some(ApiGeneration::V1Alpha5)) == legacy)
        .or_else(|| matching().next())
}

fn find_class<'a>(snap: &'a DriftSnapshot, pool: &NodePool) -> Option<&'a NodeClass> {
    let r = pool.node_class_ref.as_ref()?;
    snap.node_classes
        .iter()
        .find(|c| c.name == r.name && (r.kind.is_empty() || c.kind == r.kind))
}

/// Step 1, `NodePoolDrifted`. For nodes this tool launched, the launch record says which fields
/// changed; otherwise the static hash check ([`static_hash::node_pool_drift`]).
fn nodepool_drift(mn: &ManagedNode, pool: &NodePool) -> Outcome {
    if let Some(text) = mn.launch_record() {
        return match TemplateRecord::parse(text) {
            Ok(record) => {
                let mut taints = mn.node.taints.clone();
                if let Some(c) = &mn.node_claim {
                    taints.extend(c.taints.iter().cloned());
                }
                let mut node_labels = mn.node.labels.clone();
                if let Some(c) = &mn.node_claim {
                    node_labels.extend(c.labels.clone());
                }
                let diff = record.diff(pool, &node_labels, &mn.node.annotations, &taints);
                if diff.is_empty() {
                    Outcome::Clean
                } else {
                    let detail = format!(
                        "template changed since launch: {}",
                        diff.iter()
                            .map(|c| c.summary.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    );
                    let changes = diff
                        .iter()
                        .map(|c| change(c.field, None, Some(c.summary.clone())))
                        .collect();
                    Outcome::Drifted(Finding::new(DriftReason::NodePoolDrifted, detail, changes))
                }
            }
            Err(e) => not_checked(format!("NodePoolDrifted: {e}"), false),
        };
    }
    static_hash::node_pool_drift(mn, pool)
}

/// Step 2, `RequirementsDrifted`.
fn requirements_drift(mn: &ManagedNode, pool: &NodePool) -> Outcome {
    let v = violations(mn.labels(), &pool.requirements);
    if v.is_empty() {
        return Outcome::Clean;
    }
    // Whose labels `ManagedNode::labels` read: the NodeClaim's when it has any.
    let holder = match &mn.node_claim {
        Some(c) if !c.labels.is_empty() => "its NodeClaim",
        _ => "node",
    };
    let detail = v
        .iter()
        .map(|x| x.explain(holder))
        .collect::<Vec<_>>()
        .join("; ");
    let changes = v
        .iter()
        .map(|x| change(&x.key, x.node_value.clone(), Some(x.requirement.clone())))
        .collect();
    Outcome::Drifted(Finding::new(
        DriftReason::RequirementsDrifted,
        detail,
        changes,
    ))
}

/// Step 3, `InstanceTypeNotFound` (v1.1+): only NodeClaims older than an hour. A class being
/// deleted lists no type (aws v1.14.1 `cloudprovider.go GetInstanceTypes` returns none for a
/// class it resolves as not found), so every such NodeClaim is drifted.
fn instance_type_drift(
    snap: &DriftSnapshot,
    mn: &ManagedNode,
    pool: &NodePool,
    deleting_class: Option<&NodeClass>,
    age: Option<i64>,
) -> Outcome {
    let offered = match (deleting_class, snap.instance_types.get(&pool.name)) {
        (Some(c), _) => Err(c),
        (None, Some(offered)) => Ok(offered),
        (None, None) => {
            return not_checked(
                format!(
                    "InstanceTypeNotFound: instance types of NodePool {} unknown",
                    pool.name
                ),
                false,
            )
        }
    };
    match age {
        Some(a) if old_enough(a) => {}
        Some(_) => return Outcome::Clean,
        None => {
            return not_checked(
                "InstanceTypeNotFound: creation time unknown (only nodes older than 1h are judged)",
                false,
            )
        }
    }
    let offered = match offered {
        Ok(offered) => offered,
        Err(c) => {
            return Outcome::Drifted(Finding::new(
                DriftReason::InstanceTypeNotFound,
                format!(
                    "{} {} is being deleted: Karpenter lists no instance type for NodePool {}",
                    c.kind, c.name, pool.name
                ),
                vec![],
            ))
        }
    };
    let Some(t) = mn.instance_type() else {
        return Outcome::Drifted(Finding::new(
            DriftReason::InstanceTypeNotFound,
            format!("no {} label", labels::INSTANCE_TYPE),
            vec![],
        ));
    };
    if offered.contains(t) {
        return match snap.offerings.get(&pool.name).and_then(|m| m.get(t)) {
            Some(offerings) if !offerings_fit(mn, offerings) => Outcome::Drifted(Finding::new(
                DriftReason::InstanceTypeNotFound,
                format!(
                    "no offering of instance type {t} (NodePool {}) fits the node's zone and capacity type now",
                    pool.name
                ),
                vec![],
            )),
            _ => Outcome::Clean,
        };
    }
    Outcome::Drifted(Finding::new(
        DriftReason::InstanceTypeNotFound,
        format!(
            "instance type {t} is no longer offered to NodePool {} ({} types are)",
            pool.name,
            offered.len()
        ),
        vec![change(labels::INSTANCE_TYPE, Some(t.to_string()), None)],
    ))
}

/// The instance type's requirements as far as the AMIs' requirement keys go, read from the
/// node's labels: Karpenter labels a node with every single-valued requirement of its type, and
/// an absent count (`instance-gpu-count`, …) means `DoesNotExist` (docs/karpenter.md §2.2).
fn type_requirements(mn: &ManagedNode, images: &[ExpectedImage]) -> Requirements {
    let labels_ = mn.labels();
    let mut keys: BTreeSet<String> = images
        .iter()
        .flat_map(|i| {
            i.requirements
                .iter()
                .map(|r| labels::normalize_key(&r.key).to_string())
        })
        .collect();
    keys.insert(labels::ARCH.to_string());
    let mut reqs = Requirements::new();
    for k in keys {
        let value = labels_
            .iter()
            .find(|(lk, _)| labels::normalize_key(lk) == k)
            .map(|(_, v)| v.clone());
        reqs.add(match value {
            Some(v) => Requirement::single(&k, &v),
            None => Requirement::new(&k, Operator::DoesNotExist, std::iter::empty::<String>()),
        });
    }
    reqs
}

/// `MapToInstanceTypes` for one type (docs/karpenter.md §3.5): the first image, in order, whose
/// requirements are compatible — only the newest compatible AMI counts. Images whose
/// requirements are unknown (ids given offline) are all accepted.
fn expected_images<'a>(mn: &ManagedNode, images: &'a [ExpectedImage]) -> Vec<&'a ExpectedImage> {
    let type_reqs = type_requirements(mn, images);
    let mut out: Vec<&ExpectedImage> = images
        .iter()
        .filter(|i| i.requirements.is_empty())
        .collect();
    if let Some(first) = images.iter().find(|i| {
        !i.requirements.is_empty()
            && type_reqs
                .compatible(
                    &Requirements::from_selectors(&i.requirements),
                    labels::is_well_known,
                )
                .is_ok()
    }) {
        out.push(first);
    }
    // The same id can serve two requirement sets (AL2 GPU: nvidia and neuron).
    let mut seen = BTreeSet::new();
    out.retain(|i| seen.insert(i.id.clone()));
    out
}

/// The node's kind of machine, as an AMI variant sees it: `amd64`, `arm64 nvidia`, …
fn variant(mn: &ManagedNode) -> String {
    let l = mn.labels();
    let mut parts = vec![l
        .get(labels::ARCH)
        .cloned()
        .unwrap_or_else(|| "unknown-arch".into())];
    if l.contains_key(labels::INSTANCE_GPU_COUNT) {
        parts.push("gpu".into());
    }
    if l.contains_key(labels::INSTANCE_ACCELERATOR_COUNT) {
        parts.push("accelerator".into());
    }
    if l.get(labels::OS).is_some_and(|o| o == "windows") {
        parts.push("windows".into());
    }
    parts.join(" ")
}

fn named(snap: &DriftSnapshot, id: &str, name: Option<&String>) -> String {
    match name.or_else(|| snap.image_names.get(id)) {
        Some(n) => format!("{id} ({n})"),
        None => id.to_string(),
    }
}

/// Step 4.2, `AMIDrift`: the node's image is not what the class gives its instance type now.
fn ami_drift(
    snap: &DriftSnapshot,
    mn: &ManagedNode,
    class: &NodeClass,
    facts: Option<&ClassFacts>,
) -> Outcome {
    if class.launch_template.is_some() {
        return not_checked(
            format!(
                "AMIDrift: {} {} uses launchTemplate {} (Karpenter skips AMI drift)",
                class.kind,
                class.name,
                class.launch_template.as_deref().unwrap_or_default()
            ),
            false,
        );
    }
    let images = match facts.map(|f| &f.images) {
        Some(Fact::Known(images)) => images,
        Some(Fact::Unknown(why)) => {
            return not_checked(format!("AMI drift not checked: {why}"), true)
        }
        None => {
            return not_checked(
                format!(
                    "AMI drift not checked: {} {} was not resolved",
                    class.kind, class.name
                ),
                true,
            )
        }
    };
    if images.is_empty() {
        return not_checked(
            format!(
                "AMI drift not checked: {} {} resolves no AMI",
                class.kind, class.name
            ),
            true,
        );
    }
    let expected = expected_images(mn, images);
    let expected_ids: Vec<String> = expected.iter().map(|i| i.id.clone()).collect();
    let Some(current) = mn.drift_image_id(class.generation) else {
        return Outcome::NotChecked {
            why: format!(
                "AMI drift not checked: the node's image is unknown (no instance facts, NodeClaim status.imageID or {} annotation)",
                labels::IMAGE_ID_ANNOTATION
            ),
            deciding: true,
            expected_image_ids: expected_ids,
        };
    };
    if expected.iter().any(|i| i.id == current) {
        return Outcome::Clean;
    }
    let runs = format!("runs {}", named(snap, current, None));
    let detail = if expected.is_empty() {
        let all: BTreeSet<&str> = images.iter().map(|i| i.id.as_str()).collect();
        format!(
            "{runs}; {} has no AMI for {} (it resolves {})",
            class.name,
            variant(mn),
            list(&all)
        )
    } else {
        let targets = expected
            .iter()
            .map(|i| format!("{} via {}", named(snap, &i.id, i.name.as_ref()), i.source))
            .collect::<Vec<_>>()
            .join(" or ");
        format!(
            "{runs}; {} resolves {} → {targets}",
            class.name,
            variant(mn)
        )
    };
    Outcome::Drifted(Finding {
        reason: DriftReason::AmiDrift,
        detail,
        changes: vec![change(
            "image",
            Some(current.to_string()),
            (!expected_ids.is_empty()).then(|| expected_ids.join(",")),
        )],
        expected_image_ids: expected_ids,
    })
}

fn node_security_groups(mn: &ManagedNode) -> Option<BTreeSet<String>> {
    if let Some(i) = &mn.instance {
        if !i.security_group_ids.is_empty() {
            return Some(i.security_group_ids.iter().cloned().collect());
        }
    }
    mn.node
        .annotations
        .get(labels::SECURITY_GROUPS_ANNOTATION)
        .map(|v| {
            crate::model::legacy_selector::split_list(v)
                .into_iter()
                .collect()
        })
}

fn node_subnet(mn: &ManagedNode) -> Option<String> {
    mn.instance
        .as_ref()
        .and_then(|i| i.subnet_id.clone())
        .or_else(|| mn.node.annotations.get(labels::SUBNET_ANNOTATION).cloned())
        .filter(|s| !s.is_empty())
}

/// The subnets or security groups `class` selects (its status, or resolved), for `reason`'s
/// check (`SubnetDrift`, `SecurityGroupDrift`); not checked when unknown or when it selects none.
fn selected<'f>(
    fact: Option<&'f Fact<IdSet>>,
    class: &NodeClass,
    (reason, what): (&str, &str),
) -> Result<&'f IdSet, Outcome> {
    match fact {
        Some(Fact::Known(set)) if !set.ids.is_empty() => Ok(set),
        Some(Fact::Unknown(why)) => Err(not_checked(format!("{reason}: {why}"), false)),
        _ => Err(not_checked(
            format!("{reason}: {} {} resolves no {what}", class.kind, class.name),
            false,
        )),
    }
}

/// Step 4.3, `SecurityGroupDrift`: set inequality, extra or missing groups both drift.
fn security_group_drift(
    mn: &ManagedNode,
    class: &NodeClass,
    facts: Option<&ClassFacts>,
) -> Outcome {
    if class.launch_template.is_some() {
        return not_checked(
            "SecurityGroupDrift: the class uses a launchTemplate (Karpenter skips it)",
            false,
        );
    }
    let want = match selected(
        facts.map(|f| &f.security_groups),
        class,
        ("SecurityGroupDrift", "security group"),
    ) {
        Ok(set) => set,
        Err(outcome) => return outcome,
    };
    let Some(have) = node_security_groups(mn) else {
        return not_checked(
            "SecurityGroupDrift: the instance's security groups are unknown (no instance facts)",
            false,
        );
    };
    if have == want.ids {
        return Outcome::Clean;
    }
    let have_s: BTreeSet<&str> = have.iter().map(String::as_str).collect();
    let want_s: BTreeSet<&str> = want.ids.iter().map(String::as_str).collect();
    let left: BTreeSet<&str> = have_s.difference(&want_s).copied().collect();
    let joined: BTreeSet<&str> = want_s.difference(&have_s).copied().collect();
    let mut why = Vec::new();
    if !left.is_empty() {
        why.push(format!("{} left the selection", list(&left)));
    }
    if !joined.is_empty() {
        why.push(format!("{} joined it", list(&joined)));
    }
    Outcome::Drifted(Finding::new(
        DriftReason::SecurityGroupDrift,
        format!(
            "security groups {} → {} ({})",
            list(&have_s),
            list(&want_s),
            why.join("; ")
        ),
        vec![change(
            "securityGroups",
            Some(list(&have_s)),
            Some(list(&want_s)),
        )],
    ))
}

/// Step 4.4, `SubnetDrift`: the instance's subnet is not in the selection.
fn subnet_drift(mn: &ManagedNode, class: &NodeClass, facts: Option<&ClassFacts>) -> Outcome {
    let want = match selected(facts.map(|f| &f.subnets), class, ("SubnetDrift", "subnet")) {
        Ok(set) => set,
        Err(outcome) => return outcome,
    };
    let Some(have) = node_subnet(mn) else {
        return not_checked(
            "SubnetDrift: the instance's subnet is unknown (no instance facts)",
            false,
        );
    };
    if want.ids.contains(&have) {
        return Outcome::Clean;
    }
    let now: BTreeSet<&str> = want.ids.iter().map(String::as_str).collect();
    Outcome::Drifted(Finding::new(
        DriftReason::SubnetDrift,
        format!("subnet {have} left the selection (now: {})", list(&now)),
        vec![change("subnet", Some(have), Some(list(&now)))],
    ))
}

/// Step 4.5, `CapacityReservationDrift` (`aws v1.14.1: pkg/cloudprovider/drift.go`
/// `isCapacityReservationDrifted`; upstream test "should dynamically drift nodeclaims for
/// capacity reservations", `pkg/cloudprovider/suite_test.go`): a node launched into a capacity
/// reservation drifts when the reservation is not among the class's
/// `status.capacityReservations` — no longer selected, or no longer active. A node that never was
/// (or fell back to on-demand: the provider then drops its reservation labels) is not checked.
///
/// Without a controller the status may be stale or absent, so the class's own selector terms
/// decide first where they can: a reservation that no term can select any more (only `id` terms
/// remain, none naming it, or no terms at all) has drifted whatever the status says.
fn capacity_reservation_drift(mn: &ManagedNode, class: &NodeClass) -> Outcome {
    let labels = mn.labels();
    let Some(id) = labels
        .get(labels::CAPACITY_RESERVATION_ID)
        .or_else(|| mn.node.labels.get(labels::CAPACITY_RESERVATION_ID))
    else {
        let reserved = labels.get(labels::CAPACITY_TYPE).map(String::as_str)
            == Some(crate::model::instance_type::RESERVED);
        return if reserved {
            not_checked(
                format!(
                    "CapacityReservationDrift: the node is reserved capacity without a {} label",
                    labels::CAPACITY_RESERVATION_ID
                ),
                false,
            )
        } else {
            Outcome::Clean
        };
    };
    let who = format!("{} {}", class.kind, class.name);
    let terms = &class.capacity_reservation_selector_terms;
    let by_id: BTreeSet<&str> = terms.iter().filter_map(|t| t.id.as_deref()).collect();
    let by_filter = terms
        .iter()
        .any(|t| !t.tags.is_empty() || t.instance_match_criteria.is_some());
    let drifted = |detail: String, now: String| {
        Outcome::Drifted(Finding::new(
            DriftReason::CapacityReservationDrift,
            detail,
            vec![change("capacityReservation", Some(id.clone()), Some(now))],
        ))
    };
    if !by_id.contains(id.as_str()) && !by_filter {
        return drifted(
            format!(
                "capacity reservation {id} is no longer selected by {who}'s capacityReservationSelectorTerms (now: {})",
                list(&by_id)
            ),
            list(&by_id),
        );
    }
    match &class.status.capacity_reservations {
        Some(status) => {
            let now: BTreeSet<&str> = status.iter().map(|r| r.id.as_str()).collect();
            if now.contains(id.as_str()) {
                Outcome::Clean
            } else {
                drifted(
                    format!(
                        "capacity reservation {id} is not in {who} status.capacityReservations (now: {}): no longer selected or no longer active",
                        list(&now)
                    ),
                    list(&now),
                )
            }
        }
        None => not_checked(
            format!(
                "CapacityReservationDrift: whether capacity reservation {id} is {} needs {who}'s status.capacityReservations (DescribeCapacityReservations)",
                if by_id.contains(id.as_str()) {
                    "still active"
                } else {
                    "selected by its tags and still active"
                }
            ),
            false,
        ),
    }
}

/// Step 4.6, `PlacementGroupDrift` (`aws v1.14.1: pkg/cloudprovider/drift.go`
/// `isPlacementGroupDrifted`, checked after `CapacityReservationDrift`): the node's
/// `karpenter.k8s.aws/placement-group-id` label (none: the empty id) differs from the id of the
/// group the class resolves to now (none: no selector, or no available group) — the selector
/// was added, removed or changed, or the group was recreated under a new id.
fn placement_group_drift(
    mn: &ManagedNode,
    class: &NodeClass,
    facts: Option<&ClassFacts>,
) -> Outcome {
    let have = mn
        .labels()
        .get(labels::PLACEMENT_GROUP_ID)
        .or_else(|| mn.node.labels.get(labels::PLACEMENT_GROUP_ID))
        .cloned()
        .unwrap_or_default();
    let now = if PlacementGroupSelector::of(class).is_none() {
        String::new()
    } else {
        match facts.map(|f| &f.placement_group) {
            Some(Fact::Known(id)) => id.clone().unwrap_or_default(),
            Some(Fact::Unknown(why)) => return not_checked(why.clone(), false),
            None => {
                return not_checked(
                    format!(
                        "PlacementGroupDrift: {} {}'s placement group is not resolved",
                        class.kind, class.name
                    ),
                    false,
                )
            }
        }
    };
    if have == now {
        return Outcome::Clean;
    }
    let shown = |id: &str| {
        if id.is_empty() {
            "none".to_string()
        } else {
            id.to_string()
        }
    };
    Outcome::Drifted(Finding::new(
        DriftReason::PlacementGroupDrift,
        format!(
            "placement group {} is not {} {}'s now ({})",
            shown(&have),
            class.kind,
            class.name,
            shown(&now)
        ),
        vec![change(
            "placementGroup",
            Some(shown(&have)),
            Some(shown(&now)),
        )],
    ))
}
