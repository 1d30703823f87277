//! The EC2NodeClass launch options this tool passes to EC2 as written (kept as JSON), checked
//! as the CRDs check them (`aws v1.14.1: pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`;
//! tests: `pkg/apis/v1/ec2nodeclass_validation_cel_test.go` Contexts "MetadataOptions",
//! "NetworkInterfaces", "ConnectionTracking", "CPUOptions"): their fields, enums, integer
//! ranges and CEL rules. Without this a typo or an out-of-range value reached CreateFleet's
//! launch template, where the API server would have refused the object.

use serde_json::{Map, Value};

use super::error::{Ctx, InputError};
use crate::model::nodepool::MetadataOptions;

/// One field of an option object: its name and what it takes.
enum Kind {
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// An integer in this range.
    Int(i64, i64),
}

/// Checks that `value` is an object of `fields`, each of the right kind.
fn object<'a>(
    ctx: &Ctx,
    path: &str,
    value: &'a Value,
    fields: &[(&str, Kind)],
) -> Result<&'a Map<String, Value>, InputError> {
    let Value::Object(map) = value else {
        return Err(ctx.invalid(path, "invalid type: expected an object"));
    };
    for (key, v) in map {
        // A null the schema does not make nullable is pruned by the API server, then defaulted
        // where the field has a default (apiextensions `PruneNonNullableNullsWithoutDefaults`,
        // `Default`): a Helm value left empty (`httpEndpoint: {{ .httpEndpoint }}`) is absent.
        if v.is_null() {
            continue;
        }
        let at = format!("{path}.{key}");
        let Some((_, kind)) = fields.iter().find(|(name, _)| name == key) else {
            let known: Vec<&str> = fields.iter().map(|(n, _)| *n).collect();
            return Err(ctx.invalid(at, format!("unknown field (expected {})", known.join(", "))));
        };
        match kind {
            Kind::Enum(allowed) => match v.as_str() {
                Some(s) if allowed.contains(&s) => {}
                _ => {
                    return Err(ctx.invalid(
                        at,
                        format!("invalid value {v} (expected {})", allowed.join(" or ")),
                    ))
                }
            },
            Kind::Int(min, max) => match v.as_i64() {
                Some(n) if (*min..=*max).contains(&n) => {}
                Some(n) => {
                    return Err(ctx.invalid(at, format!("must be between {min} and {max}, got {n}")))
                }
                None => {
                    return Err(ctx.invalid(at, format!("invalid value {v} (expected an integer)")))
                }
            },
        }
    }
    Ok(map)
}

const ENABLED: &[&str] = &["enabled", "disabled"];

/// What a generation's CRD says of `metadataOptions`.
#[derive(Clone, Copy)]
pub(crate) enum MetadataCrd {
    /// v1alpha1 (AWSNodeTemplate): no enums, ranges or defaults; the fields as written (`None`
    /// when absent), only their types checked.
    AsWritten,
    /// v1beta1 and v1: the enums and hop-limit range, and each field defaulted as the API
    /// server stores it (`httpEndpoint: enabled`, `httpProtocolIPv6: disabled`, `httpTokens:
    /// required`, this hop limit: 2 in v1beta1, 1 in v1), also for an absent object.
    Checked {
        /// The default `httpPutResponseHopLimit`.
        hop_limit: i64,
    },
}

/// `metadataOptions` (every generation), read as `crd` says: the one reader of it.
pub(crate) fn metadata_options(
    ctx: &Ctx,
    path: &str,
    value: Option<&Value>,
    crd: MetadataCrd,
) -> Result<Option<MetadataOptions>, InputError> {
    let hop_limit = match crd {
        MetadataCrd::AsWritten => None,
        MetadataCrd::Checked { hop_limit } => {
            if let Some(value) = value {
                object(
                    ctx,
                    path,
                    value,
                    &[
                        ("httpEndpoint", Kind::Enum(ENABLED)),
                        ("httpProtocolIPv6", Kind::Enum(ENABLED)),
                        ("httpPutResponseHopLimit", Kind::Int(1, 64)),
                        ("httpTokens", Kind::Enum(&["required", "optional"])),
                    ],
                )?;
            }
            Some(hop_limit)
        }
    };
    let empty = Map::new();
    let obj = match value {
        None | Some(Value::Null) if hop_limit.is_none() => return Ok(None),
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(_) => return Err(ctx.invalid(path, "must be an object")),
    };
    let text = |key: &str, default: &str| -> Result<Option<String>, InputError> {
        match obj.get(key) {
            None | Some(Value::Null) => Ok(hop_limit.is_some().then(|| default.to_string())),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ctx.invalid(format!("{path}.{key}"), "must be a string")),
        }
    };
    let hops = match obj.get("httpPutResponseHopLimit") {
        None | Some(Value::Null) => hop_limit,
        Some(v) => Some(v.as_i64().ok_or_else(|| {
            ctx.invalid(
                format!("{path}.httpPutResponseHopLimit"),
                "must be an integer",
            )
        })?),
    };
    Ok(Some(MetadataOptions {
        http_endpoint: text("httpEndpoint", "enabled")?,
        http_protocol_ipv6: text("httpProtocolIPv6", "disabled")?,
        http_put_response_hop_limit: hops,
        http_tokens: text("httpTokens", "required")?,
    }))
}

/// `networkInterfaces`, `connectionTracking`, `cpuOptions`, `placementGroupSelector` and
/// `ipPrefixCount` (v1).
pub(crate) fn v1(
    ctx: &Ctx,
    network_interfaces: Option<&Value>,
    connection_tracking: Option<&Value>,
    cpu_options: Option<&Value>,
    placement_group_selector: Option<&Value>,
    ip_prefix_count: Option<&Value>,
) -> Result<(), InputError> {
    // `ipPrefixCount`: `minimum: 0`, `format: int32`.
    if let Some(v) = ip_prefix_count.filter(|v| !v.is_null()) {
        if !v
            .as_i64()
            .is_some_and(|n| (0..=i64::from(i32::MAX)).contains(&n))
        {
            return Err(ctx.invalid(
                "spec.ipPrefixCount",
                format!("invalid value {v} (expected an integer from 0 to 2147483647)"),
            ));
        }
    }
    if let Some(value) = placement_group_selector {
        self::placement_group_selector(ctx, value)?;
    }
    if let Some(value) = network_interfaces {
        self::network_interfaces(ctx, value)?;
    }
    if let Some(value) = connection_tracking {
        const PATH: &str = "spec.connectionTracking";
        let map = object(
            ctx,
            PATH,
            value,
            &[
                ("tcpEstablishedTimeout", Kind::Int(60, 432_000)),
                ("udpStreamTimeout", Kind::Int(60, 180)),
                ("udpTimeout", Kind::Int(30, 60)),
            ],
        )?;
        if map.values().all(Value::is_null) {
            return Err(ctx.invalid(
                PATH,
                "at least one of tcpEstablishedTimeout, udpStreamTimeout or udpTimeout must be set",
            ));
        }
    }
    if let Some(value) = cpu_options {
        object(
            ctx,
            "spec.cpuOptions",
            value,
            &[("nestedVirtualization", Kind::Enum(ENABLED))],
        )?;
    }
    Ok(())
}

/// `placementGroupSelector`: `id` (`^pg-[0-9a-z]+$`) or a non-empty `name`, exactly one (the
/// CRD's pattern, `minLength` and two CEL rules: `aws v1.14.1:
/// pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`, `ec2nodeclass.go PlacementGroupSelector`).
fn placement_group_selector(ctx: &Ctx, value: &Value) -> Result<(), InputError> {
    const PATH: &str = "spec.placementGroupSelector";
    let Value::Object(map) = value else {
        return Err(ctx.invalid(PATH, "invalid type: expected an object"));
    };
    let text = |key: &str| match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(v) => Err(ctx.invalid(
            format!("{PATH}.{key}"),
            format!("invalid value {v} (expected a string)"),
        )),
    };
    let (id, name) = (text("id")?, text("name")?);
    if let Some(id) = id {
        let digits = id.strip_prefix("pg-").unwrap_or("");
        if digits.is_empty()
            || !digits
                .bytes()
                .all(|b| b.is_ascii_digit() || b.is_ascii_lowercase())
        {
            return Err(ctx.invalid(
                format!("{PATH}.id"),
                format!("{id:?} does not match ^pg-[0-9a-z]+$"),
            ));
        }
    }
    if name == Some("") {
        return Err(ctx.invalid(format!("{PATH}.name"), "must be at least 1 character"));
    }
    match (id, name) {
        (None, None) => Err(ctx.invalid(PATH, "expected at least one, got none, ['name', 'id']")),
        (Some(_), Some(_)) => Err(ctx.invalid(PATH, "'name' and 'id' are mutually exclusive")),
        _ => Ok(()),
    }
}

fn network_interfaces(ctx: &Ctx, value: &Value) -> Result<(), InputError> {
    const PATH: &str = "spec.networkInterfaces";
    let Value::Array(items) = value else {
        return Err(ctx.invalid(PATH, "invalid type: expected a list"));
    };
    if items.len() > 150 {
        return Err(ctx.invalid(
            PATH,
            format!("at most 150 network interfaces, got {}", items.len()),
        ));
    }
    let mut nics = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{PATH}[{i}]");
        let map = object(
            ctx,
            &at,
            item,
            &[
                ("deviceIndex", Kind::Int(0, i64::from(i32::MAX))),
                ("interfaceType", Kind::Enum(&["interface", "efa-only"])),
                ("networkCardIndex", Kind::Int(0, i64::from(i32::MAX))),
            ],
        )?;
        let field = |name: &str| {
            map.get(name)
                .filter(|v| !v.is_null())
                .ok_or_else(|| ctx.invalid(format!("{at}.{name}"), "required"))
        };
        let card = field("networkCardIndex")?.as_i64().unwrap_or_default();
        let device = field("deviceIndex")?.as_i64().unwrap_or_default();
        let efa = field("interfaceType")?.as_str() == Some("efa-only");
        nics.push((card, device, efa));
    }
    // The CRD's two rules: a primary interface (card 0, device 0, `interface`) in a non-empty
    // list; no (card, device) pair twice, and at most one `efa-only` per card.
    if !nics.is_empty() && !nics.contains(&(0, 0, false)) {
        return Err(ctx.invalid(
            PATH,
            "networkInterfaces must include a primary interface with interfaceType='interface'",
        ));
    }
    let clash = nics.iter().any(|&(card, device, efa)| {
        let same_slot = nics.iter().filter(|n| n.0 == card && n.1 == device).count();
        let efas_on_card = nics.iter().filter(|n| n.0 == card && n.2).count();
        same_slot != 1 || (efa && efas_on_card != 1)
    });
    if clash {
        return Err(ctx.invalid(
            PATH,
            "networkInterfaces must not have duplicate networkCardIndex and deviceIndex pairs, and can have at most one efa device per network card",
        ));
    }
    Ok(())
}
