//! Karpenter's hashed structs, rebuilt from a spec as JSON (the object as the API server stores
//! it, after CRD defaulting): Go type names, exported field names, declaration order and `hash`
//! tags as in the release that defines each hash version.
//!
//! Sources (read, not copied): kubernetes-sigs/karpenter `pkg/apis/v1/nodepool.go`
//! (`NodeClaimTemplate`, `NodeClaimTemplateSpec`, `ObjectMeta`), `pkg/apis/v1/nodeclaim.go`
//! (`NodeClassReference`), `pkg/apis/v1/duration.go` (`NillableDuration`) at v1.0.0–v1.14.1;
//! aws/karpenter-provider-aws `pkg/apis/v1/ec2nodeclass.go` (`EC2NodeClassSpec` and its parts,
//! `Hash()`, `AMIFamily()`) at v1.0.8, v1.11.3 and v1.14.1.
//!
//! A Go field is left out when it is a zero value (`IgnoreZeroValue`): a pointer field when
//! absent, a plain string when empty, a bool when false, a slice or map when absent (an empty
//! `[]`/`{}` is *not* zero: JSON decoding makes a non-nil empty value).

use serde_json::{Map, Value};

use super::go::{GoValue, StructBuilder};
use super::units::canonical_quantity;
use crate::model::time::parse_go_duration;

type Obj = Map<String, Value>;

/// Why a value could not be rebuilt.
pub type BuildError = String;

fn obj<'a>(v: &'a Obj, key: &str, at: &str) -> Result<Option<&'a Obj>, BuildError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(_) => Err(format!("{at}.{key} is not an object")),
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `*string` (or a named string behind a pointer): present ⇒ hashed, even when empty.
fn ptr_str(v: &Obj, key: &str) -> Option<GoValue> {
    v.get(key).and_then(text).map(GoValue::Str)
}

/// `string`: hashed only when non-empty.
fn plain_str(v: &Obj, key: &str) -> Option<GoValue> {
    ptr_str(v, key).filter(|s| *s != GoValue::str(""))
}

/// `*bool`: present ⇒ hashed, even when false.
fn ptr_bool(v: &Obj, key: &str) -> Option<GoValue> {
    v.get(key).and_then(Value::as_bool).map(GoValue::Bool)
}

/// `bool`: hashed only when true.
fn plain_bool(v: &Obj, key: &str) -> Option<GoValue> {
    ptr_bool(v, key).filter(|b| *b == GoValue::Bool(true))
}

fn int(v: &Obj, key: &str, at: &str) -> Result<Option<i64>, BuildError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{at}.{key} is not an integer")),
        Some(Value::String(s)) => s
            .parse()
            .map(Some)
            .map_err(|_| format!("{at}.{key} is not an integer")),
        Some(_) => Err(format!("{at}.{key} is not an integer")),
    }
}

/// `*int64`.
fn ptr_i64(v: &Obj, key: &str, at: &str) -> Result<Option<GoValue>, BuildError> {
    Ok(int(v, key, at)?.map(GoValue::I64))
}

/// `*int32`.
fn ptr_i32(v: &Obj, key: &str, at: &str) -> Result<Option<GoValue>, BuildError> {
    int(v, key, at)?
        .map(|n| {
            i32::try_from(n)
                .map(GoValue::I32)
                .map_err(|_| format!("{at}.{key} is out of int32 range"))
        })
        .transpose()
}

/// `int32` (non-pointer): hashed only when non-zero.
fn plain_i32(v: &Obj, key: &str, at: &str) -> Result<Option<GoValue>, BuildError> {
    Ok(ptr_i32(v, key, at)?.filter(|n| *n != GoValue::I32(0)))
}

/// `map[string]string`: present ⇒ hashed (an empty map too).
fn string_map(v: &Obj, key: &str, at: &str) -> Result<Option<GoValue>, BuildError> {
    let Some(m) = obj(v, key, at)? else {
        return Ok(None);
    };
    m.iter()
        .map(|(k, val)| {
            text(val)
                .map(|t| (GoValue::str(k), GoValue::Str(t)))
                .ok_or_else(|| format!("{at}.{key}.{k} is not a string"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|entries| Some(GoValue::Map(entries)))
}

/// A slice of objects, each built by `item`: present ⇒ hashed as a set (an empty one too).
fn set_of(
    v: &Obj,
    key: &str,
    at: &str,
    item: impl Fn(&Obj, &str) -> Result<GoValue, BuildError>,
) -> Result<Option<GoValue>, BuildError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let here = format!("{at}.{key}[{i}]");
                match x {
                    Value::Object(o) => item(o, &here),
                    _ => Err(format!("{here} is not an object")),
                }
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|items| Some(GoValue::Set(items))),
        Some(_) => Err(format!("{at}.{key} is not a list")),
    }
}

/// `[]string` hashed as a set.
fn string_set(v: &Obj, key: &str, at: &str) -> Result<Option<GoValue>, BuildError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|x| text(x).map(GoValue::Str))
            .collect::<Option<Vec<_>>>()
            .map(|items| Some(GoValue::Set(items)))
            .ok_or_else(|| format!("{at}.{key} holds a non-string")),
        Some(_) => Err(format!("{at}.{key} is not a list")),
    }
}

/// `metav1.Duration{Duration time.Duration}` from its text.
fn metav1_duration(s: &str) -> Result<GoValue, BuildError> {
    let ns = parse_go_duration(s)?;
    Ok(StructBuilder::new("Duration")
        .field("Duration", (ns != 0).then_some(GoValue::I64(ns)))
        .build())
}

/// `corev1.Taint{Key, Value, Effect, TimeAdded *metav1.Time}`.
fn taint(t: &Obj, at: &str) -> Result<GoValue, BuildError> {
    if t.get("timeAdded").is_some_and(|v| !v.is_null()) {
        return Err(format!(
            "{at}.timeAdded is set (time values are not hashed by this tool)"
        ));
    }
    Ok(StructBuilder::new("Taint")
        .field("Key", plain_str(t, "key"))
        .field("Value", plain_str(t, "value"))
        .field("Effect", plain_str(t, "effect"))
        .build())
}

/// `spec.template.metadata` as the template's `ObjectMeta`: only its labels and annotations
/// are hashed (both generations' `NodeClaimTemplate`).
fn template_object_meta(template: &Obj) -> Result<StructBuilder, BuildError> {
    let at = "spec.template";
    let mut object_meta = StructBuilder::new("ObjectMeta");
    if let Some(m) = obj(template, "metadata", at)? {
        let here = format!("{at}.metadata");
        object_meta = object_meta
            .field("Labels", string_map(m, "labels", &here)?)
            .field("Annotations", string_map(m, "annotations", &here)?);
    }
    Ok(object_meta)
}

/// `karpenter.sh/v1` `NodeClaimTemplate` (NodePool hash version `v3`, Karpenter v1.0–v1.14)
/// from `spec.template`. Expects CRD defaults applied ([`default_v1_template`]).
pub fn v1_node_claim_template(template: &Obj) -> Result<GoValue, BuildError> {
    let at = "spec.template";
    let object_meta = template_object_meta(template)?;
    let empty = Obj::new();
    let spec = obj(template, "spec", at)?.unwrap_or(&empty);
    let here = format!("{at}.spec");
    let class_ref = obj(spec, "nodeClassRef", &here)?.map(|r| {
        StructBuilder::new("NodeClassReference")
            .field("Kind", plain_str(r, "kind"))
            .field("Name", plain_str(r, "name"))
            .field("Group", plain_str(r, "group"))
            .build()
    });
    let grace = match spec.get("terminationGracePeriod").and_then(text) {
        Some(s) => Some(metav1_duration(&s)?),
        None => None,
    };
    // NillableDuration{*time.Duration; Raw []byte `hash:"ignore"`}: "Never" leaves both nil,
    // so the whole field is a zero value and skipped.
    let expire = match spec.get("expireAfter").and_then(text) {
        Some(s) if s == "Never" => None,
        Some(s) => Some(
            StructBuilder::new("NillableDuration")
                .field("Duration", Some(GoValue::I64(parse_go_duration(&s)?)))
                .build(),
        ),
        None => None,
    };
    let spec_value = StructBuilder::new("NodeClaimTemplateSpec")
        .field("Taints", set_of(spec, "taints", &here, taint)?)
        .field(
            "StartupTaints",
            set_of(spec, "startupTaints", &here, taint)?,
        )
        .field("NodeClassRef", class_ref)
        .field("TerminationGracePeriod", grace)
        .field("ExpireAfter", expire);
    // `Requirements` is `hash:"ignore"` but still counts for the struct's IsZero.
    let spec_is_zero = spec_value.is_empty() && !spec.contains_key("requirements");
    Ok(StructBuilder::new("NodeClaimTemplate")
        .field(
            "ObjectMeta",
            (!object_meta.is_empty()).then(|| object_meta.build()),
        )
        .field("Spec", (!spec_is_zero).then(|| spec_value.build()))
        .build())
}

/// `karpenter.sh/v1beta1` `NodeClaimTemplate` (NodePool hash versions `v1`, Karpenter
/// v0.33–v0.35, and `v2`, v0.36–v0.37) from `spec.template`: `NodeClaimSpec{Taints,
/// StartupTaints, Requirements ignore, Resources ignore, Kubelet, NodeClassRef{Kind, Name,
/// APIVersion}}` (core `pkg/apis/v1beta1/nodeclaim.go` at v0.37.7). `v1` hashed kubelet
/// `systemReserved`/`kubeReserved` as `ResourceList` (the values' Quantity structs, not their
/// text); with those set a `v1` hash is refused, as no vector pins it.
pub fn v1beta1_node_claim_template(
    template: &Obj,
    version_v1: bool,
) -> Result<GoValue, BuildError> {
    let at = "spec.template";
    let object_meta = template_object_meta(template)?;
    let empty = Obj::new();
    let spec = obj(template, "spec", at)?.unwrap_or(&empty);
    let here = format!("{at}.spec");
    let kubelet_obj = obj(spec, "kubelet", &here)?;
    if let Some(k) = kubelet_obj {
        if version_v1 && (k.contains_key("systemReserved") || k.contains_key("kubeReserved")) {
            return Err(format!(
                "{here}.kubelet: systemReserved/kubeReserved under nodepool-hash v1 are hashed as Quantity structs, which this tool does not reproduce"
            ));
        }
        if k.contains_key("containerRuntime") {
            return Err(format!(
                "{here}.kubelet.containerRuntime (v0.32 only) is not hashed by this tool"
            ));
        }
    }
    let class_ref = obj(spec, "nodeClassRef", &here)?.map(|r| {
        StructBuilder::new("NodeClassReference")
            .field("Kind", plain_str(r, "kind"))
            .field("Name", plain_str(r, "name"))
            .field("APIVersion", plain_str(r, "apiVersion"))
            .build()
    });
    let spec_value = StructBuilder::new("NodeClaimSpec")
        .field("Taints", set_of(spec, "taints", &here, taint)?)
        .field(
            "StartupTaints",
            set_of(spec, "startupTaints", &here, taint)?,
        )
        .field(
            "Kubelet",
            kubelet_obj
                .map(|k| kubelet(k, &format!("{here}.kubelet")))
                .transpose()?,
        )
        .field("NodeClassRef", class_ref);
    // `Requirements` and `Resources` are ignored but still count for the struct's IsZero.
    let spec_is_zero = spec_value.is_empty()
        && !spec.contains_key("requirements")
        && !spec.contains_key("resources");
    Ok(StructBuilder::new("NodeClaimTemplate")
        .field(
            "ObjectMeta",
            (!object_meta.is_empty()).then(|| object_meta.build()),
        )
        .field("Spec", (!spec_is_zero).then(|| spec_value.build()))
        .build())
}

/// The v1 NodePool CRD's defaults inside `spec.template`: `spec.expireAfter: 720h`
/// (`karpenter.sh_nodepools.yaml`, Karpenter v1.0–v1.14).
pub fn default_v1_template(template: &mut Obj) {
    let spec = template
        .entry("spec")
        .or_insert_with(|| Value::Object(Obj::new()));
    if let Value::Object(spec) = spec {
        spec.entry("expireAfter")
            .or_insert_with(|| Value::String("720h".into()));
    }
}

/// The EC2NodeClass CRD's defaults: `metadataOptions` defaults to `{httpEndpoint: enabled,
/// httpProtocolIPv6: disabled, httpPutResponseHopLimit: H, httpTokens: required}`, and each of
/// those fields is defaulted inside a partial object (`karpenter.k8s.aws_ec2nodeclasses.yaml`:
/// H = 1 for v1, provider v1.0–v1.14; H = 2 for v1beta1, v0.32–v0.37).
pub fn default_class(spec: &mut Obj, hop_limit: i64) {
    let m = spec
        .entry("metadataOptions")
        .or_insert_with(|| Value::Object(Obj::new()));
    if let Value::Object(m) = m {
        for (k, v) in [
            ("httpEndpoint", Value::from("enabled")),
            ("httpProtocolIPv6", Value::from("disabled")),
            ("httpPutResponseHopLimit", Value::from(hop_limit)),
            ("httpTokens", Value::from("required")),
        ] {
            m.entry(k).or_insert(v);
        }
    }
}

fn block_device(e: &Obj, at: &str, layout: ClassLayout) -> Result<GoValue, BuildError> {
    let size = match e.get("volumeSize").and_then(text) {
        Some(_) if layout == ClassLayout::V1Beta1Early => {
            return Err(format!(
                "{at}.volumeSize under ec2nodeclass-hash v1 is hashed as a Quantity struct, which this tool does not reproduce"
            ))
        }
        Some(s) => Some(GoValue::Str(canonical_quantity(&s)?)),
        None => None,
    };
    Ok(StructBuilder::new("BlockDevice")
        .field("DeleteOnTermination", ptr_bool(e, "deleteOnTermination"))
        .field("Encrypted", ptr_bool(e, "encrypted"))
        .field("IOPS", ptr_i64(e, "iops", at)?)
        .field("KMSKeyID", ptr_str(e, "kmsKeyID"))
        .field("SnapshotID", ptr_str(e, "snapshotID"))
        .field("Throughput", ptr_i64(e, "throughput", at)?)
        .field(
            "VolumeInitializationRate",
            ptr_i32(e, "volumeInitializationRate", at)?,
        )
        .field("VolumeSize", size)
        .field("VolumeType", ptr_str(e, "volumeType"))
        .build())
}

fn block_device_mapping(b: &Obj, at: &str, layout: ClassLayout) -> Result<GoValue, BuildError> {
    let ebs = match obj(b, "ebs", at)? {
        Some(e) => Some(block_device(e, &format!("{at}.ebs"), layout)?),
        None => None,
    };
    Ok(StructBuilder::new("BlockDeviceMapping")
        .field("DeviceName", ptr_str(b, "deviceName"))
        .field("EBS", ebs)
        .field("RootVolume", plain_bool(b, "rootVolume"))
        .build())
}

fn kubelet(k: &Obj, at: &str) -> Result<GoValue, BuildError> {
    let grace = match obj(k, "evictionSoftGracePeriod", at)? {
        Some(m) => Some(GoValue::Map(
            m.iter()
                .map(|(key, v)| {
                    let s = text(v).ok_or_else(|| {
                        format!("{at}.evictionSoftGracePeriod.{key} is not a duration")
                    })?;
                    Ok((GoValue::str(key), metav1_duration(&s)?))
                })
                .collect::<Result<Vec<_>, BuildError>>()?,
        )),
        None => None,
    };
    Ok(StructBuilder::new("KubeletConfiguration")
        .field("ClusterDNS", string_set(k, "clusterDNS", at)?)
        .field("MaxPods", ptr_i32(k, "maxPods", at)?)
        .field("PodsPerCore", ptr_i32(k, "podsPerCore", at)?)
        .field("SystemReserved", string_map(k, "systemReserved", at)?)
        .field("KubeReserved", string_map(k, "kubeReserved", at)?)
        .field("EvictionHard", string_map(k, "evictionHard", at)?)
        .field("EvictionSoft", string_map(k, "evictionSoft", at)?)
        .field("EvictionSoftGracePeriod", grace)
        .field(
            "EvictionMaxPodGracePeriod",
            ptr_i32(k, "evictionMaxPodGracePeriod", at)?,
        )
        .field(
            "ImageGCHighThresholdPercent",
            ptr_i32(k, "imageGCHighThresholdPercent", at)?,
        )
        .field(
            "ImageGCLowThresholdPercent",
            ptr_i32(k, "imageGCLowThresholdPercent", at)?,
        )
        .field("CPUCFSQuota", ptr_bool(k, "cpuCFSQuota"))
        .build())
}

fn nested(
    spec: &Obj,
    key: &str,
    at: &str,
    build: impl Fn(&Obj, &str) -> Result<GoValue, BuildError>,
) -> Result<Option<GoValue>, BuildError> {
    obj(spec, key, at)?
        .map(|o| build(o, &format!("{at}.{key}")))
        .transpose()
}

/// Which `EC2NodeClassSpec` a hash version hashes: the fields differ between releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClassLayout {
    /// `karpenter.k8s.aws/v1beta1`, provider v0.33–v0.35 (hash `v1`): as [`Self::V1Beta1`] but
    /// `volumeSize` was hashed as a `Quantity` struct (only its format, commit 94105980d "Hash
    /// volume size quantity value as a string"); no vector pins that, so it is refused.
    V1Beta1Early,
    /// `karpenter.k8s.aws/v1beta1`, provider v0.36–v0.37 (hash `v2`): `amiFamily` hashed,
    /// `volumeSize` as its `String()`.
    V1Beta1,
    /// `karpenter.k8s.aws/v1`, provider v1.0.x (hash `v3`): `kubelet` is `hash:"ignore"`.
    V1WithoutKubelet,
    /// `karpenter.k8s.aws/v1`, provider v1.1+ (hash `v4`/`v5`, commit bbff05cc7 "Drop conversion
    /// webhooks" started hashing `kubelet`).
    V1,
}

/// `EC2NodeClassSpec` from `spec` (defaults applied, see [`default_class`]). Selector terms
/// and `ipPrefixCount` are `hash:"ignore"`; v1 ignores `amiFamily` too (its resolved value is
/// hashed beside the spec instead). Fields a layout's release does not have are absent from
/// such objects (the CRD prunes them), so one builder serves every layout.
pub fn ec2nodeclass_spec(spec: &Obj, layout: ClassLayout) -> Result<GoValue, BuildError> {
    let at = "spec";
    let kubelet_value = match layout {
        ClassLayout::V1 => nested(spec, "kubelet", at, kubelet)?,
        ClassLayout::V1WithoutKubelet | ClassLayout::V1Beta1 | ClassLayout::V1Beta1Early => None,
    };
    let ami_family = match layout {
        ClassLayout::V1Beta1 | ClassLayout::V1Beta1Early => ptr_str(spec, "amiFamily"),
        ClassLayout::V1 | ClassLayout::V1WithoutKubelet => None,
    };
    Ok(StructBuilder::new("EC2NodeClassSpec")
        .field(
            "PlacementGroupSelector",
            nested(spec, "placementGroupSelector", at, |p, _| {
                Ok(StructBuilder::new("PlacementGroupSelector")
                    .field("Name", ptr_str(p, "name"))
                    .field("ID", ptr_str(p, "id"))
                    .build())
            })?,
        )
        .field(
            "AssociatePublicIPAddress",
            ptr_bool(spec, "associatePublicIPAddress"),
        )
        .field("AMIFamily", ami_family)
        .field("UserData", ptr_str(spec, "userData"))
        .field("Role", plain_str(spec, "role"))
        .field("InstanceProfile", ptr_str(spec, "instanceProfile"))
        .field("Tags", string_map(spec, "tags", at)?)
        .field("Kubelet", kubelet_value)
        .field(
            "BlockDeviceMappings",
            set_of(spec, "blockDeviceMappings", at, |b, here| {
                block_device_mapping(b, here, layout)
            })?,
        )
        .field("InstanceStorePolicy", ptr_str(spec, "instanceStorePolicy"))
        .field(
            "NetworkInterfaces",
            set_of(spec, "networkInterfaces", at, |n, here| {
                Ok(StructBuilder::new("NetworkInterface")
                    .field("NetworkCardIndex", plain_i32(n, "networkCardIndex", here)?)
                    .field("DeviceIndex", plain_i32(n, "deviceIndex", here)?)
                    .field("InterfaceType", plain_str(n, "interfaceType"))
                    .build())
            })?,
        )
        .field("DetailedMonitoring", ptr_bool(spec, "detailedMonitoring"))
        .field(
            "MetadataOptions",
            nested(spec, "metadataOptions", at, |m, here| {
                Ok(StructBuilder::new("MetadataOptions")
                    .field("HTTPEndpoint", ptr_str(m, "httpEndpoint"))
                    .field("HTTPProtocolIPv6", ptr_str(m, "httpProtocolIPv6"))
                    .field(
                        "HTTPPutResponseHopLimit",
                        ptr_i64(m, "httpPutResponseHopLimit", here)?,
                    )
                    .field("HTTPTokens", ptr_str(m, "httpTokens"))
                    .build())
            })?,
        )
        .field(
            "ConnectionTracking",
            nested(spec, "connectionTracking", at, |c, here| {
                Ok(StructBuilder::new("ConnectionTracking")
                    .field(
                        "TCPEstablishedTimeout",
                        ptr_i32(c, "tcpEstablishedTimeout", here)?,
                    )
                    .field("UDPStreamTimeout", ptr_i32(c, "udpStreamTimeout", here)?)
                    .field("UDPTimeout", ptr_i32(c, "udpTimeout", here)?)
                    .build())
            })?,
        )
        .field("Context", ptr_str(spec, "context"))
        .field(
            "CPUOptions",
            nested(spec, "cpuOptions", at, |c, _| {
                Ok(StructBuilder::new("CPUOptions")
                    .field("NestedVirtualization", ptr_str(c, "nestedVirtualization"))
                    .build())
            })?,
        )
        .build())
}

/// `EC2NodeClass.AMIFamily()`: `spec.amiFamily`, else the family of the first alias term
/// (`al2023@latest` → `AL2023`), else `Custom`.
pub fn v1_ami_family(spec: &Obj) -> String {
    if let Some(f) = spec.get("amiFamily").and_then(Value::as_str) {
        return f.to_string();
    }
    let alias = spec
        .get("amiSelectorTerms")
        .and_then(Value::as_array)
        .and_then(|terms| {
            terms
                .iter()
                .filter_map(|t| t.get("alias").and_then(Value::as_str))
                .find(|a| !a.is_empty())
        });
    let family = alias.and_then(|a| a.split('@').next()).and_then(|f| {
        [
            "AL2",
            "AL2023",
            "Bottlerocket",
            "Windows2019",
            "Windows2022",
            "Windows2025",
        ]
        .into_iter()
        .find(|known| known.to_lowercase() == f)
    });
    family.unwrap_or("Custom").to_string()
}
