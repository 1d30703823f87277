//! Node-class pieces shared by AWSNodeTemplate and both EC2NodeClass generations: selector
//! terms, block devices, tags, AMI aliases and the status a controller last wrote.

use super::error::{Ctx, InputError};
use super::meta::{
    AmiSelectorTermSpec, BlockDeviceMappingSpec, EbsSpec, IntOrString, NodeClassStatusSpec,
    SelectorTermSpec, StringMap,
};
use super::validate::{self, NODEPOOL_OPERATORS_V1};
use crate::model::labels;
use crate::model::nodepool::{
    AmiSelectorTerm, AmiStatus, BlockDevice, EbsVolume, NodeClass, NodeClassStatus, SelectorTerm,
    StatusSubnet,
};

/// Converts block device mappings (only what capacity needs is interpreted). `crd` applies
/// the v1beta1 and v1 CRDs' rules (`aws v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`,
/// v0.37.8's alike; tests `ec2nodeclass_validation_cel_test.go` Context "BlockDeviceMappings"):
/// at most 50, `volumeSize` a string of whole G/Gi/T/Ti within EBS's limits, `volumeType`
/// one of EBS's, `snapshotID` or `volumeSize` set, `volumeInitializationRate` 100–300 and only
/// with a `snapshotID`. The v1alpha5 AWSNodeTemplate's schema had none of them.
pub(crate) fn block_devices(
    ctx: &Ctx,
    path: &str,
    specs: Option<&[BlockDeviceMappingSpec]>,
    crd: bool,
) -> Result<Vec<BlockDevice>, InputError> {
    let specs = specs.unwrap_or_default();
    if crd {
        validate::max_items(ctx, path, specs.len(), 50, "block device mappings")?;
    }
    if specs.iter().filter(|b| b.root_volume == Some(true)).count() > 1 {
        return Err(ctx.invalid(
            path,
            "only one block device mapping may set rootVolume: true",
        ));
    }
    specs
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if let (true, Some(ebs)) = (crd, b.ebs.as_ref()) {
                ebs_crd_rules(ctx, &format!("{path}[{i}].ebs"), ebs)?;
            }
            let volume_size = match b.ebs.as_ref().and_then(|e| e.volume_size.as_ref()) {
                Some(q) => Some(validate::quantity(
                    ctx,
                    &format!("{path}[{i}].ebs.volumeSize"),
                    &q.as_text(),
                )?),
                None => None,
            };
            let ebs = b.ebs.clone().unwrap_or_default();
            Ok(BlockDevice {
                device_name: b.device_name.clone(),
                root_volume: b.root_volume == Some(true),
                volume_size,
                ebs: EbsVolume {
                    delete_on_termination: ebs.delete_on_termination,
                    encrypted: ebs.encrypted,
                    iops: ebs.iops,
                    kms_key_id: ebs.kms_key_id,
                    snapshot_id: ebs.snapshot_id,
                    throughput: ebs.throughput,
                    volume_initialization_rate: ebs.volume_initialization_rate,
                    volume_type: ebs.volume_type,
                },
            })
        })
        .collect()
}

fn ebs_crd_rules(ctx: &Ctx, path: &str, ebs: &EbsSpec) -> Result<(), InputError> {
    const VOLUME_TYPES: [&str; 7] = ["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"];
    if let Some(problem) = ebs.volume_size.as_ref().and_then(volume_size_problem) {
        return Err(ctx.invalid(format!("{path}.volumeSize"), problem));
    }
    if let Some(t) = ebs
        .volume_type
        .as_deref()
        .filter(|t| !VOLUME_TYPES.contains(t))
    {
        return Err(ctx.invalid(
            format!("{path}.volumeType"),
            format!(
                "unknown volume type {t:?} (expected {})",
                VOLUME_TYPES.join(", ")
            ),
        ));
    }
    if ebs.snapshot_id.is_none() && ebs.volume_size.is_none() {
        return Err(ctx.invalid(path, "snapshotID or volumeSize must be defined"));
    }
    if let Some(rate) = ebs.volume_initialization_rate {
        if !(100..=300).contains(&rate) {
            return Err(ctx.invalid(
                format!("{path}.volumeInitializationRate"),
                format!("must be between 100 and 300, got {rate}"),
            ));
        }
        if ebs.snapshot_id.as_deref().is_none_or(str::is_empty) {
            return Err(ctx.invalid(
                path,
                "snapshotID must be set when volumeInitializationRate is set",
            ));
        }
    }
    Ok(())
}

/// Why a `volumeSize` fails the v1beta1 / v1 CRDs' type and pattern ([`is_volume_size`]).
pub(crate) fn volume_size_problem(size: &IntOrString) -> Option<String> {
    let ok = match size {
        IntOrString::String(s) => is_volume_size(s),
        IntOrString::Int(_) => false,
    };
    (!ok).then(|| {
        format!(
            "invalid value {:?} (a whole size from 1Gi to 59000Gi, 1G to 64000G, or in Ti / T, such as \"20Gi\")",
            size.as_text()
        )
    })
}

/// The CRDs' `volumeSize` pattern, as written:
/// `^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$`
/// — 1–59000Gi, 1–64000G, 1–64T; in Ti only 1–9, 10–17, 20–27, …, 50–57 and 58 (the
/// pattern's second digit is `[0-7]`). A bare `Ti` / `T` (the empty alternatives) passes the
/// pattern and is then refused as no quantity.
fn is_volume_size(text: &str) -> bool {
    let number = |n: &str, max: u32| {
        !n.starts_with('0')
            && !n.is_empty()
            && n.len() <= 5
            && n.bytes().all(|b| b.is_ascii_digit())
            && n.parse::<u32>().is_ok_and(|v| v <= max)
    };
    if let Some(n) = text.strip_suffix("Gi") {
        return number(n, 59_000);
    }
    if let Some(n) = text.strip_suffix("Ti") {
        let b = n.as_bytes();
        return match b {
            [] => true,
            [d] => (b'1'..=b'9').contains(d),
            [t, u] => ((b'1'..=b'5').contains(t) && (b'0'..=b'7').contains(u)) || n == "58",
            _ => false,
        };
    }
    if let Some(n) = text.strip_suffix('G') {
        return number(n, 64_000);
    }
    if let Some(n) = text.strip_suffix('T') {
        return n.is_empty() || number(n, 64);
    }
    false
}

/// Whether `id` contains a match of the CRD's unanchored `pattern: {prefix}[0-9a-z]+` (`aws
/// v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`: `ami-`, `subnet-`, `sg-`).
fn id_matches(id: &str, prefix: &str) -> bool {
    id.match_indices(prefix).any(|(at, _)| {
        id[at + prefix.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    })
}

fn check_id(ctx: &Ctx, at: &str, id: Option<&String>, prefix: &str) -> Result<(), InputError> {
    match id {
        Some(id) if !id_matches(id, prefix) => Err(ctx.invalid(
            format!("{at}.id"),
            format!("{id:?} does not match the pattern {prefix}[0-9a-z]+"),
        )),
        _ => Ok(()),
    }
}

/// Converts subnet or security-group terms with the CRD's CEL rules (`aws v1.14.1:
/// pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`, the same in v0.37.8's v1beta1): every
/// term selects something (`self.all(x, has(x.tags) || has(x.id) || has(x.name))`), and `id` /
/// `name` combined with other fields are refused only when **every** term combines them
/// (`!self.all(x, has(x.id) && (has(x.tags) || has(x.name)))`, likewise for `name`) — so
/// `[{id, tags}, {tags}]` is valid; the provider then selects by `id`, else `name`, else tags
/// (`pkg/providers/{subnet,securitygroup}` `getFilterSets`; ours `cloud::network::filter_sets`).
pub(crate) fn selector_terms(
    ctx: &Ctx,
    path: &str,
    specs: &[SelectorTermSpec],
) -> Result<Vec<SelectorTerm>, InputError> {
    let terms = specs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let at = format!("{path}[{i}]");
            let tags = t.tags.clone().unwrap_or_default();
            check_term_tags(ctx, &at, &tags)?;
            if path.ends_with("subnetSelectorTerms") {
                check_id(ctx, &at, t.id.as_ref(), "subnet-")?;
            } else if path.ends_with("securityGroupSelectorTerms") {
                check_id(ctx, &at, t.id.as_ref(), "sg-")?;
            }
            if t.id.is_none() && t.name.is_none() && t.tags.is_none() {
                return Err(ctx.invalid(at, "a selector term needs tags, id or name"));
            }
            Ok(SelectorTerm {
                id: t.id.clone(),
                name: t.name.clone(),
                tags,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let every = |f: fn(&SelectorTermSpec) -> bool| !specs.is_empty() && specs.iter().all(f);
    if every(|t| t.id.is_some() && (t.tags.is_some() || t.name.is_some())) {
        return Err(ctx.invalid(
            path,
            "'id' is mutually exclusive, cannot be set with a combination of other fields in a selector term",
        ));
    }
    if every(|t| t.name.is_some() && (t.tags.is_some() || t.id.is_some())) {
        return Err(ctx.invalid(
            path,
            "'name' is mutually exclusive, cannot be set with a combination of other fields in a selector term",
        ));
    }
    Ok(terms)
}

fn check_term_tags(ctx: &Ctx, at: &str, tags: &StringMap) -> Result<(), InputError> {
    for (k, v) in tags {
        if k.is_empty() || v.is_empty() {
            return Err(ctx.invalid(
                format!("{at}.tags"),
                "empty tag keys or values aren't supported",
            ));
        }
    }
    Ok(())
}

/// AMI families an alias may name, with the `amiFamily` each implies.
const ALIAS_FAMILIES: &[(&str, &str)] = &[
    ("al2", "AL2"),
    ("al2023", "AL2023"),
    ("bottlerocket", "Bottlerocket"),
    ("windows2019", "Windows2019"),
    ("windows2022", "Windows2022"),
    ("windows2025", "Windows2025"),
];

/// The `amiFamily` an alias implies (`al2023@latest` → `AL2023`).
pub(crate) fn alias_family(alias: &str) -> Option<&'static str> {
    let family = alias.split('@').next()?;
    ALIAS_FAMILIES
        .iter()
        .find(|(a, _)| *a == family)
        .map(|(_, f)| *f)
}

/// Converts AMI terms. `aliases` says whether the generation has them (v1).
pub(crate) fn ami_terms(
    ctx: &Ctx,
    path: &str,
    specs: &[AmiSelectorTermSpec],
    aliases: bool,
) -> Result<Vec<AmiSelectorTerm>, InputError> {
    let mut out = Vec::with_capacity(specs.len());
    for (i, t) in specs.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let tags = t.tags.clone().unwrap_or_default();
        check_term_tags(ctx, &at, &tags)?;
        check_id(ctx, &at, t.id.as_ref(), "ami-")?;
        let others = t.tags.is_some() || t.name.is_some() || t.owner.is_some();
        if let Some(alias) = &t.alias {
            if !aliases {
                return Err(ctx.invalid(
                    format!("{at}.alias"),
                    "aliases exist only in karpenter.k8s.aws/v1",
                ));
            }
            // The CRD's `maxLength: 30` on `alias`.
            if alias.len() > 30 {
                return Err(ctx.invalid(
                    format!("{at}.alias"),
                    format!("{alias:?} is longer than 30 characters"),
                ));
            }
            let (family, version) = alias.split_once('@').unwrap_or((alias, ""));
            if version.is_empty() || family.is_empty() {
                return Err(ctx.invalid(
                    format!("{at}.alias"),
                    format!("{alias:?} must have the form family@version, e.g. al2023@latest"),
                ));
            }
            if alias_family(alias).is_none() {
                return Err(ctx.invalid(
                    format!("{at}.alias"),
                    format!("unknown alias family {family:?} (expected al2, al2023, bottlerocket, windows2019, windows2022 or windows2025)"),
                ));
            }
            if family.starts_with("windows") && version != "latest" {
                return Err(ctx.invalid(
                    format!("{at}.alias"),
                    "windows families may only specify version 'latest'",
                ));
            }
            if others || t.id.is_some() || t.ssm_parameter.is_some() {
                return Err(ctx.invalid(at, "alias cannot be combined with other fields in a term"));
            }
            if specs.len() != 1 {
                return Err(ctx.invalid(path, "an alias term must be the only amiSelectorTerm"));
            }
        } else if t.id.is_some() {
            // v1: `!self.exists(x, has(x.id) && …)`, per term; v1beta1 (v0.37.8):
            // `!self.all(x, has(x.id) && (has(x.tags) || has(x.name) || has(x.owner)))`, only
            // when every term combines (checked after the loop). The provider takes the id.
            if aliases && (others || t.ssm_parameter.is_some()) {
                return Err(ctx.invalid(at, "id cannot be combined with other fields in a term"));
            }
        } else if t.tags.is_none() && t.name.is_none() && t.ssm_parameter.is_none() {
            return Err(ctx.invalid(
                at,
                "a term needs one of tags, id, name, alias or ssmParameter",
            ));
        }
        out.push(AmiSelectorTerm {
            alias: t.alias.clone(),
            id: t.id.clone(),
            name: t.name.clone(),
            owner: t.owner.clone(),
            tags,
            ssm_parameter: t.ssm_parameter.clone(),
        });
    }
    let combined = |t: &AmiSelectorTermSpec| {
        t.id.is_some() && (t.tags.is_some() || t.name.is_some() || t.owner.is_some())
    };
    if !aliases && !specs.is_empty() && specs.iter().all(combined) {
        return Err(ctx.invalid(
            path,
            "'id' is mutually exclusive, cannot be set with a combination of other fields in amiSelectorTerms",
        ));
    }
    Ok(out)
}

/// Rejects tags Karpenter sets itself (the CRD's CEL rules).
pub(crate) fn check_tags(
    ctx: &Ctx,
    path: &str,
    tags: &StringMap,
    restricted: &[&str],
) -> Result<(), InputError> {
    for k in tags.keys() {
        if k.is_empty() {
            return Err(ctx.invalid(path, "empty tag keys aren't supported"));
        }
        if k.starts_with(labels::CLUSTER_TAG_PREFIX) || restricted.contains(&k.as_str()) {
            return Err(ctx.invalid(
                validate::key_path(path, k),
                format!("tag {k:?} is restricted: Karpenter sets it"),
            ));
        }
    }
    Ok(())
}

/// Checks `amiFamily` against a generation's list.
pub(crate) fn check_family(
    ctx: &Ctx,
    path: &str,
    family: &str,
    allowed: &[&str],
) -> Result<(), InputError> {
    if allowed.contains(&family) {
        Ok(())
    } else {
        Err(ctx.invalid(
            path,
            format!(
                "unknown AMI family {family:?} (expected {})",
                allowed.join(", ")
            ),
        ))
    }
}

/// Converts a status written by a controller. Its AMI requirements use any operator the newest
/// API knows, since they are the controller's output, not the user's.
pub(crate) fn status(
    ctx: &Ctx,
    path: &str,
    s: &NodeClassStatusSpec,
) -> Result<NodeClassStatus, InputError> {
    let amis = s
        .amis
        .as_deref()
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, a)| {
            Ok(AmiStatus {
                id: a.id.clone().unwrap_or_default(),
                name: a.name.clone(),
                requirements: validate::requirements(
                    ctx,
                    &format!("{path}.amis[{i}].requirements"),
                    a.requirements.as_deref().unwrap_or_default(),
                    NODEPOOL_OPERATORS_V1,
                    validate::RequirementRules::Core,
                )?,
                deprecated: a.deprecated.unwrap_or(false),
            })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    Ok(NodeClassStatus {
        subnets: s
            .subnets
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|n| StatusSubnet {
                id: n.id.clone().unwrap_or_default(),
                zone: n.zone.clone().unwrap_or_default(),
                zone_id: n.zone_id.clone().filter(|z| !z.is_empty()),
            })
            .collect(),
        security_groups: s
            .security_groups
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|g| {
                (
                    g.id.clone().unwrap_or_default(),
                    g.name.clone().unwrap_or_default(),
                )
            })
            .collect(),
        amis,
        instance_profile: s.instance_profile.clone(),
        capacity_reservations: super::reservation::status(
            ctx,
            &format!("{path}.capacityReservations"),
            s.capacity_reservations.as_ref(),
        )?,
        conditions: with_selection_readiness(
            s,
            super::nodepool::conditions(s.conditions.as_deref()),
        ),
    })
}

/// A status that lists no AMIs, subnets or security groups (the field present and empty) is
/// what the node class controller writes when a selector matched nothing, and it then sets the
/// class `Ready=False` (aws v1.14.1: `pkg/controllers/nodeclass/ami.go` "AMINotFound",
/// `subnet.go` "SubnetsNotFound", `securitygroup.go` "SecurityGroupsNotFound"): without a `Ready`
/// condition in the manifest, the same condition is read, so its NodePools launch nothing (aws:
/// `cloudprovider/suite_test.go` "should launch instances with an alternate NodePool when a
/// NodeClass selects 0 subnets, security groups, or amis"). A manifest's own `Ready` wins.
fn with_selection_readiness(
    s: &NodeClassStatusSpec,
    mut conditions: Vec<crate::model::nodepool::Condition>,
) -> Vec<crate::model::nodepool::Condition> {
    if conditions.iter().any(|c| c.type_ == "Ready") {
        return conditions;
    }
    let empty = |v: Option<usize>| v == Some(0);
    let found = [
        (
            empty(s.amis.as_ref().map(Vec::len)),
            "AMINotFound",
            "AMISelector did not match any AMIs",
        ),
        (
            empty(s.subnets.as_ref().map(Vec::len)),
            "SubnetsNotFound",
            "SubnetSelector did not match any Subnets",
        ),
        (
            empty(s.security_groups.as_ref().map(Vec::len)),
            "SecurityGroupsNotFound",
            "SecurityGroupSelector did not match any SecurityGroups",
        ),
    ]
    .into_iter()
    .find(|(empty, _, _)| *empty);
    if let Some((_, reason, message)) = found {
        conditions.push(crate::model::nodepool::Condition {
            type_: "Ready".into(),
            status: crate::model::nodepool::ConditionStatus::False,
            reason: reason.into(),
            message: message.into(),
            observed_generation: None,
        });
    } else if let Some(ready) = root_from_dependents(&conditions) {
        conditions.push(ready);
    }
    conditions
}

/// The `Ready` operatorpkg derives from the class's dependent conditions when the manifest lists
/// some but not `Ready` itself (aws v1.14.1 `pkg/apis/v1/ec2nodeclass_status.go`
/// `StatusConditions`; operatorpkg `ConditionSet.recomputeRootCondition`): any dependent False
/// makes it False "UnhealthyDependents", else any Unknown makes it Unknown
/// "ReconcilingDependents"; the message lists the unhealthy ones, `Type=Status`, in status order.
/// All True (or none listed) says nothing: an offline class stays ready by default.
fn root_from_dependents(
    conditions: &[crate::model::nodepool::Condition],
) -> Option<crate::model::nodepool::Condition> {
    use crate::model::nodepool::ConditionStatus;
    const DEPENDENTS: [&str; 7] = [
        "AMIsReady",
        "SubnetsReady",
        "SecurityGroupsReady",
        "InstanceProfileReady",
        "ValidationSucceeded",
        "PlacementGroupReady",
        "CapacityReservationsReady",
    ];
    let unhealthy: Vec<_> = conditions
        .iter()
        .filter(|c| DEPENDENTS.contains(&c.type_.as_str()) && c.status != ConditionStatus::True)
        .collect();
    if unhealthy.is_empty() {
        return None;
    }
    let any_false = unhealthy.iter().any(|c| c.status == ConditionStatus::False);
    let message = unhealthy
        .iter()
        .map(|c| format!("{}={:?}", c.type_, c.status))
        .collect::<Vec<_>>()
        .join(", ");
    Some(crate::model::nodepool::Condition {
        type_: "Ready".into(),
        status: if any_false {
            ConditionStatus::False
        } else {
            ConditionStatus::Unknown
        },
        reason: if any_false {
            "UnhealthyDependents"
        } else {
            "ReconcilingDependents"
        }
        .into(),
        message,
        observed_generation: None,
    })
}

/// Whether `version` names what an alias's family publishes: `latest`, or a release —
/// `v<YYYYMMDD>` for the EKS-optimized AL2 and AL2023 AMIs (the SSM names
/// `amazon-eks-node-<k8s>-v20240807` …), `[v]<major>.<minor>.<patch>` for Bottlerocket (aws
/// v1.14.1 `pkg/providers/amifamily/bottlerocket.go` trims the `v`). Windows takes only `latest`
/// (the CRD's rule, checked above). `None`: a family this check does not know.
fn alias_version_is_published(family: &str, version: &str) -> Option<bool> {
    if version == "latest" {
        return Some(true);
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match family {
        "al2" | "al2023" => Some(
            version
                .strip_prefix('v')
                .is_some_and(|d| d.len() == 8 && digits(d)),
        ),
        "bottlerocket" => {
            let parts: Vec<&str> = version.trim_start_matches('v').split('.').collect();
            Some(parts.len() == 3 && parts.iter().all(|p| digits(p)))
        }
        _ => None,
    }
}

/// A warning per class whose alias version is neither `latest` nor a release of its family
/// (`al2@latest-gpu`): the CRD takes any `family@version`, but the provider reads the version
/// as a pinned release (aws v1.14.1 `pkg/providers/amifamily/al2.go` `DescribeImageQuery`:
/// `amazon-eks-gpu-node-<k8s>-latest-gpu`), no such SSM parameter exists, and the class resolves
/// no AMI ("failed to discover any AMIs for alias"): it is not Ready and nothing launches for
/// its pools. Offline no SSM is read, so the plan is made as if it resolved: said here.
pub(crate) fn unpublished_alias_versions(classes: &[NodeClass]) -> Vec<String> {
    let mut out = Vec::new();
    for class in classes {
        for alias in class
            .ami_selector_terms
            .iter()
            .filter_map(|t| t.alias.as_deref())
        {
            let Some((family, version)) = alias.split_once('@') else {
                continue;
            };
            if alias_version_is_published(family, version) == Some(false) {
                let release = if family == "bottlerocket" {
                    "a release such as 1.20.3"
                } else {
                    "a release such as v20240807"
                };
                out.push(format!(
                    "{} {}: amiSelectorTerms alias {alias:?}: version {version:?} is neither latest nor {release}; Karpenter looks it up in SSM as a pinned release, finds none and resolves no AMI for the class (not Ready: nothing launches for its pools); offline no SSM is read and the plan assumes it resolved",
                    class.kind, class.name
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    /// Session 34's public configuration (`readme-ten-pools`, docs/upstream-tests/
    /// public-configurations.md): `al2@latest-gpu` passes the CRD (`^[a-zA-Z0-9]+@.+$`) but aws
    /// v1.14.1 `al2.go` `DescribeImageQuery` reads `latest-gpu` as a pinned release, finds no
    /// SSM parameter and resolves no AMI. Offline the input says so; `latest`, a release
    /// (`v20240807`; Bottlerocket `1.20.3` or `v1.20.3`) and Windows' `latest` say nothing.
    #[test]
    fn an_alias_version_that_is_no_release_is_warned_of() {
        let warnings = |alias: &str| {
            let text = format!(
                "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: gpu}}\nspec:\n  \
                 role: r\n  amiSelectorTerms: [{{alias: \"{alias}\"}}]\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  \
                 securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\n"
            );
            crate::api::load_str("in.yaml", &text).unwrap().warnings
        };
        assert_eq!(
            warnings("al2@latest-gpu"),
            ["EC2NodeClass gpu: amiSelectorTerms alias \"al2@latest-gpu\": version \"latest-gpu\" is \
              neither latest nor a release such as v20240807; Karpenter looks it up in SSM as a pinned \
              release, finds none and resolves no AMI for the class (not Ready: nothing launches for \
              its pools); offline no SSM is read and the plan assumes it resolved"]
        );
        for odd in [
            "al2023@20240807",
            "al2023@v2024",
            "bottlerocket@1.20",
            "bottlerocket@newest",
        ] {
            assert_eq!(warnings(odd).len(), 1, "{odd}");
        }
        for fine in [
            "al2@latest",
            "al2@v20240807",
            "al2023@v20250115",
            "bottlerocket@1.20.3",
            "bottlerocket@v1.20.3",
            "bottlerocket@latest",
            "windows2022@latest",
        ] {
            assert!(warnings(fine).is_empty(), "{fine}: {:?}", warnings(fine));
        }
    }

    /// The `Ready` condition read from a class with the given `status` (YAML flow), as
    /// "Status Reason Message".
    fn ready_of(status: &str) -> Option<String> {
        let text = format!(
            "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: {{name: c}}\nspec:\n  role: r\n  \
             amiSelectorTerms: [{{alias: al2023@latest}}]\n  subnetSelectorTerms: [{{tags: {{a: b}}}}]\n  \
             securityGroupSelectorTerms: [{{tags: {{a: b}}}}]\nstatus: {status}\n"
        );
        let m = crate::api::load_str("in.yaml", &text).unwrap();
        m.node_classes[0]
            .status
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| format!("{:?} {} {}", c.status, c.reason, c.message))
    }

    /// aws: cloudprovider/suite_test.go "should launch instances with an alternate NodePool when a
    /// NodeClass selects 0 subnets, security groups, or amis": an empty list in the status reads
    /// as the controller's `Ready=False` (its reason), unless the manifest states `Ready`; an
    /// absent list says nothing.
    #[test]
    fn a_status_selecting_nothing_reads_as_not_ready() {
        let ready = |status: &str| {
            ready_of(status).map(|r| r.splitn(3, ' ').take(2).collect::<Vec<_>>().join(" "))
        };
        let sn = "{id: subnet-a, zone: us-east-1a}";
        let sg = "{id: sg-a}";
        let ami = "{id: ami-0aaaaaaaaaaaaaaa1}";
        assert_eq!(
            ready(&format!(
                "{{subnets: [], securityGroups: [{sg}], amis: [{ami}]}}"
            ))
            .as_deref(),
            Some("False SubnetsNotFound")
        );
        assert_eq!(
            ready(&format!(
                "{{subnets: [{sn}], securityGroups: [], amis: [{ami}]}}"
            ))
            .as_deref(),
            Some("False SecurityGroupsNotFound")
        );
        assert_eq!(
            ready(&format!(
                "{{subnets: [{sn}], securityGroups: [{sg}], amis: []}}"
            ))
            .as_deref(),
            Some("False AMINotFound")
        );
        assert_eq!(ready(&format!("{{subnets: [{sn}]}}")), None);
        assert_eq!(
            ready("{subnets: [], conditions: [{type: Ready, status: \"True\"}]}").as_deref(),
            Some("True ")
        );
    }

    /// aws v1.14.1 `pkg/apis/v1/ec2nodeclass_status.go` `StatusConditions`: `Ready` is the root
    /// of AMIsReady, SubnetsReady, SecurityGroupsReady, InstanceProfileReady,
    /// ValidationSucceeded, PlacementGroupReady (and CapacityReservationsReady), recomputed by
    /// operatorpkg's `recomputeRootCondition` on every `Set`: a status that lists a dependent
    /// False (Unknown) without `Ready` reads as `Ready=False` (`Unknown`), "UnhealthyDependents".
    #[test]
    fn a_status_with_a_dependent_condition_not_true_and_no_ready_reads_as_not_ready() {
        let ready = |conditions: &str| ready_of(&format!("{{conditions: {conditions}}}"));
        assert_eq!(
            ready("[{type: SubnetsReady, status: \"True\"}, {type: InstanceProfileReady, status: \"False\", reason: InstanceProfileNotFound}]").as_deref(),
            Some("False UnhealthyDependents InstanceProfileReady=False")
        );
        assert_eq!(
            ready("[{type: ValidationSucceeded, status: Unknown}]").as_deref(),
            Some("Unknown ReconcilingDependents ValidationSucceeded=Unknown")
        );
        assert_eq!(
            ready("[{type: AMIsReady, status: Unknown}, {type: PlacementGroupReady, status: \"False\"}]").as_deref(),
            Some("False UnhealthyDependents AMIsReady=Unknown, PlacementGroupReady=False")
        );
        // all dependents listed True, or none listed: nothing is said (an offline manifest).
        assert_eq!(ready("[{type: SubnetsReady, status: \"True\"}]"), None);
        assert_eq!(ready("[{type: Foo, status: \"False\"}]"), None);
        // the manifest's own Ready wins.
        assert_eq!(
            ready("[{type: Ready, status: \"True\"}, {type: AMIsReady, status: \"False\"}]")
                .as_deref(),
            Some("True  ")
        );
    }
}
