//! The custom catalog format (`--catalog FILE`, docs/spec.md §5.5): instance types written out by the
//! user as JSON or YAML, parsed with one-line errors naming the file and field path, and turned
//! into instance types for a node class (kubelet `maxPods`, AWS overhead formulas where the file
//! gives none, Windows relabelling, subnet zones).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::instance_type::{InstanceType, Offering, Overhead, ON_DEMAND, RESERVED, SPOT};
use crate::model::labels;
use crate::model::overhead::{self, AmiFamily};
use crate::model::quantity::{parse_milli, QuantityError, ONE};
use crate::model::requirements::{Operator, Requirement, Requirements};
use crate::model::resources::{Resources, PODS};

use super::aws::{put, put_opt};
use super::names::labels_from_name;
use super::{one_line, CatalogError, InstanceTypeContext, Result};

/// The kubelet's default `maxPods`, for custom catalog entries that give no `pods` capacity.
pub(super) const DEFAULT_CUSTOM_PODS: i64 = 110;

#[derive(Debug)]
pub(super) struct CustomCatalog {
    pub(super) file: String,
    pub(super) types: Vec<CustomType>,
}

#[derive(Debug)]
pub(super) struct CustomType {
    pub(super) name: String,
    pub(super) capacity: Resources,
    pub(super) overhead: Option<Resources>,
    /// Derived labels overlaid with the file's labels, keys normalised.
    pub(super) labels: BTreeMap<String, String>,
    /// Whether the file set `kubernetes.io/os` itself (Windows families otherwise relabel).
    pub(super) explicit_os: bool,
    pub(super) offerings: Vec<Offering>,
}

/// Label keys a custom catalog may not set: they come from `name` and `offerings`.
pub(super) const RESERVED_LABELS: [(&str, &str); 3] = [
    (
        labels::INSTANCE_TYPE,
        "the instance type is the entry's `name`",
    ),
    (labels::ZONE, "zones come from `offerings[].zone`"),
    (
        labels::CAPACITY_TYPE,
        "capacity types come from `offerings[].capacityType`",
    ),
];

/// Resources whose presence makes a type a GPU type, for the GPU-count requirement.
pub(super) const GPU_RESOURCES: [&str; 3] = [
    overhead::NVIDIA_GPU,
    overhead::AMD_GPU,
    overhead::HABANA_GAUDI,
];

impl CustomCatalog {
    pub(super) fn parse(file: &str, text: &str) -> Result<CustomCatalog> {
        let syntax = |message: String| CatalogError::Syntax {
            file: file.to_string(),
            message: one_line(&message),
        };
        let doc: Value = if file.ends_with(".json") {
            serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?
        } else {
            serde_saphyr::from_str_with_options(
                text,
                serde_saphyr::options! { with_snippet: false },
            )
            .map_err(|e| syntax(e.to_string()))?
        };
        let p = Parser { file };
        let Value::Object(root) = doc else {
            return Err(syntax(
                "expected a mapping with an `instanceTypes` list".to_string(),
            ));
        };
        for key in root.keys() {
            if !matches!(key.as_str(), "instanceTypes" | "apiVersion" | "kind") {
                return Err(p.invalid(key, "unknown field (expected instanceTypes)"));
            }
        }
        let list = match root.get("instanceTypes") {
            None => return Err(p.invalid("instanceTypes", "required field is missing")),
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(p.invalid(
                    "instanceTypes",
                    format!("expected a list, got {}", kind(other)),
                ))
            }
        };
        let mut types: Vec<CustomType> = Vec::with_capacity(list.len());
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for (i, entry) in list.iter().enumerate() {
            let path = format!("instanceTypes[{i}]");
            let t = p.instance_type(&path, entry)?;
            if let Some(first) = seen.insert(t.name.clone(), i) {
                return Err(p.invalid(
                    &format!("{path}.name"),
                    format!(
                        "duplicate instance type {:?} (also instanceTypes[{first}])",
                        t.name
                    ),
                ));
            }
            types.push(t);
        }
        Ok(CustomCatalog {
            file: file.to_string(),
            types,
        })
    }

    pub(super) fn instance_types(&self, ctx: &InstanceTypeContext) -> Vec<InstanceType> {
        let family = ctx.family();
        self.types
            .iter()
            .filter_map(|t| {
                let arch = t.labels.get(labels::ARCH).map(String::as_str);
                if family.is_windows() && arch != Some("amd64") {
                    return None;
                }
                let offerings: Vec<Offering> = t
                    .offerings
                    .iter()
                    .filter(|o| ctx.zone_allowed(&o.zone))
                    .cloned()
                    .collect();
                if offerings.is_empty() {
                    return None;
                }
                let mut capacity = t.capacity.clone();
                if !capacity.contains(PODS) {
                    let pods = ctx
                        .kubelet
                        .and_then(|k| k.max_pods)
                        .unwrap_or(DEFAULT_CUSTOM_PODS);
                    capacity.set(PODS, pods * ONE);
                }
                let overhead = match &t.overhead {
                    Some(total) => Overhead {
                        kube_reserved: total.clone(),
                        ..Overhead::default()
                    },
                    None => overhead::overhead_for_capacity(&capacity, ctx.kubelet),
                };
                Some(InstanceType {
                    name: t.name.clone(),
                    requirements: t.requirements(family, &offerings),
                    capacity,
                    overhead,
                    offerings,
                })
            })
            .collect()
    }
}

impl CustomType {
    /// Labels as `In [value]`, zone and capacity type from the offerings, and — as for AWS
    /// types — `DoesNotExist` for GPU/accelerator counts the type does not have, so AMI
    /// variants and pods that avoid accelerators still match.
    pub(super) fn requirements(&self, family: AmiFamily, offerings: &[Offering]) -> Requirements {
        let mut r = Requirements::new();
        for (k, v) in &self.labels {
            if family.is_windows() && k == labels::OS && !self.explicit_os {
                put(&mut r, k, "windows");
            } else {
                put(&mut r, k, v);
            }
        }
        if !self.labels.contains_key(labels::WINDOWS_BUILD) {
            put_opt(&mut r, labels::WINDOWS_BUILD, family.windows_build());
        }
        r.add(Requirement::new(
            labels::ZONE,
            Operator::In,
            offerings.iter().map(|o| o.zone.clone()),
        ));
        r.add(Requirement::new(
            labels::CAPACITY_TYPE,
            Operator::In,
            offerings.iter().map(|o| o.capacity_type.clone()),
        ));
        if !self.labels.contains_key(labels::INSTANCE_GPU_COUNT) {
            let gpus: i64 = GPU_RESOURCES.iter().map(|g| self.capacity.get(g)).sum();
            let count = (gpus > 0).then(|| (gpus / ONE).to_string());
            put_opt(&mut r, labels::INSTANCE_GPU_COUNT, count.as_deref());
        }
        if !self.labels.contains_key(labels::INSTANCE_ACCELERATOR_COUNT) {
            let neurons = self.capacity.get(overhead::AWS_NEURON);
            let count = (neurons > 0).then(|| (neurons / ONE).to_string());
            put_opt(&mut r, labels::INSTANCE_ACCELERATOR_COUNT, count.as_deref());
        }
        r
    }
}

/// Walks the parsed document, turning every problem into a one-line error with its field path.
pub(super) struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    pub(super) fn invalid(&self, field: &str, message: impl Into<String>) -> CatalogError {
        CatalogError::Invalid {
            file: self.file.to_string(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    pub(super) fn object<'v>(
        &self,
        path: &str,
        value: &'v Value,
    ) -> Result<&'v serde_json::Map<String, Value>> {
        value
            .as_object()
            .ok_or_else(|| self.invalid(path, format!("expected a mapping, got {}", kind(value))))
    }

    pub(super) fn only_fields(
        &self,
        path: &str,
        map: &serde_json::Map<String, Value>,
        allowed: &[&str],
    ) -> Result<()> {
        match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            None => Ok(()),
            Some(k) => Err(self.invalid(
                &field(path, k),
                format!("unknown field (expected one of {})", allowed.join(", ")),
            )),
        }
    }

    pub(super) fn string(&self, path: &str, value: Option<&Value>) -> Result<String> {
        match value {
            None | Some(Value::Null) => Err(self.invalid(path, "required field is missing")),
            Some(Value::String(s)) if s.trim().is_empty() => {
                Err(self.invalid(path, "must not be empty"))
            }
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => {
                Err(self.invalid(path, format!("expected a string, got {}", kind(other))))
            }
        }
    }

    pub(super) fn instance_type(&self, path: &str, value: &Value) -> Result<CustomType> {
        let map = self.object(path, value)?;
        self.only_fields(
            path,
            map,
            &["name", "capacity", "overhead", "labels", "offerings"],
        )?;
        let name = self.string(&format!("{path}.name"), map.get("name"))?;
        let capacity = match map.get("capacity") {
            None | Some(Value::Null) => {
                return Err(self.invalid(&format!("{path}.capacity"), "required field is missing"))
            }
            Some(v) => self.resources(&format!("{path}.capacity"), v)?,
        };
        let overhead = match map.get("overhead") {
            None | Some(Value::Null) => None,
            Some(v) => Some(self.resources(&format!("{path}.overhead"), v)?),
        };
        let mut labels = labels_from_name(&name);
        let mut explicit_os = false;
        if let Some(v) = map.get("labels").filter(|v| !v.is_null()) {
            let lpath = format!("{path}.labels");
            for (key, value) in self.object(&lpath, v)? {
                let kpath = field(&lpath, key);
                let key = labels::normalize_key(key.trim());
                if key.is_empty() {
                    return Err(self.invalid(&kpath, "label keys must not be empty"));
                }
                if let Some((_, why)) = RESERVED_LABELS.iter().find(|(k, _)| *k == key) {
                    return Err(self.invalid(&kpath, format!("cannot be set as a label: {why}")));
                }
                let value = match value {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    other => {
                        return Err(
                            self.invalid(&kpath, format!("expected a string, got {}", kind(other)))
                        )
                    }
                };
                explicit_os |= key == labels::OS;
                labels.insert(key.to_string(), value);
            }
        }
        let offerings = self.offerings(&format!("{path}.offerings"), map.get("offerings"))?;
        Ok(CustomType {
            name,
            capacity,
            overhead,
            labels,
            explicit_os,
            offerings,
        })
    }

    pub(super) fn resources(&self, path: &str, value: &Value) -> Result<Resources> {
        let mut out = Resources::new();
        for (name, v) in self.object(path, value)? {
            let rpath = field(path, name);
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => {
                    return Err(self.invalid(
                        &rpath,
                        format!(
                            "expected a quantity such as \"4\" or \"16Gi\", got {}",
                            kind(other)
                        ),
                    ))
                }
            };
            let milli = parse_milli(&text).map_err(|e| match e {
                QuantityError::Syntax(_) => {
                    self.invalid(&rpath, format!("invalid quantity {text:?}"))
                }
                QuantityError::Overflow(_) => {
                    self.invalid(&rpath, format!("quantity {text:?} is too large"))
                }
            })?;
            if milli < 0 {
                return Err(self.invalid(&rpath, format!("quantity {text:?} is negative")));
            }
            out.set(name, milli);
        }
        Ok(out)
    }

    pub(super) fn offerings(&self, path: &str, value: Option<&Value>) -> Result<Vec<Offering>> {
        let list = match value {
            None | Some(Value::Null) => return Err(self.invalid(path, "required field is missing")),
            Some(Value::Array(list)) => list,
            Some(other) => {
                return Err(self.invalid(path, format!("expected a list, got {}", kind(other))))
            }
        };
        if list.is_empty() {
            return Err(self.invalid(path, "at least one offering is required"));
        }
        let mut out: Vec<Offering> = Vec::with_capacity(list.len());
        for (i, entry) in list.iter().enumerate() {
            let opath = format!("{path}[{i}]");
            let map = self.object(&opath, entry)?;
            self.only_fields(&opath, map, &["zone", "capacityType", "price", "available"])?;
            let zone = self.string(&format!("{opath}.zone"), map.get("zone"))?;
            let ct_path = format!("{opath}.capacityType");
            let capacity_type = self.string(&ct_path, map.get("capacityType"))?;
            if ![ON_DEMAND, SPOT, RESERVED].contains(&capacity_type.as_str()) {
                return Err(self.invalid(
                    &ct_path,
                    format!("invalid capacity type {capacity_type:?} (expected on-demand, spot or reserved)"),
                ));
            }
            let price_path = format!("{opath}.price");
            let price = match map.get("price") {
                None | Some(Value::Null) => {
                    return Err(self.invalid(&price_path, "required field is missing"))
                }
                Some(Value::Number(n)) => n.as_f64().filter(|p| p.is_finite() && *p >= 0.0),
                Some(Value::String(s)) => s
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|p| p.is_finite() && *p >= 0.0),
                Some(other) => {
                    return Err(self.invalid(
                        &price_path,
                        format!("expected a number, got {}", kind(other)),
                    ))
                }
            }
            .ok_or_else(|| {
                self.invalid(
                    &price_path,
                    "expected a non-negative number of USD per hour",
                )
            })?;
            let available = match map.get("available") {
                None | Some(Value::Null) => true,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(self.invalid(
                        &format!("{opath}.available"),
                        format!("expected true or false, got {}", kind(other)),
                    ))
                }
            };
            if let Some(j) = out
                .iter()
                .position(|o| o.zone == zone && o.capacity_type == capacity_type)
            {
                return Err(self.invalid(
                    &opath,
                    format!("duplicate offering {zone}/{capacity_type} (also {path}[{j}])"),
                ));
            }
            out.push(Offering {
                zone,
                capacity_type,
                price,
                available,
            });
        }
        Ok(out)
    }
}

/// `path.key`, or `path["key"]` when the key has dots (resource and label names usually do).
pub(super) fn field(path: &str, key: &str) -> String {
    if key.contains(['.', '[', ']', ' ']) || key.is_empty() {
        format!("{path}[{key:?}]")
    } else {
        format!("{path}.{key}")
    }
}

pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{find, label, values};
    use super::super::Catalog;
    use super::*;
    use crate::model::quantity::{GIB, MIB};

    const SPEC_EXAMPLE: &str = r#"
instanceTypes:
- name: c6a.2xlarge
  capacity: {cpu: "8", memory: 16Gi, pods: "58", ephemeral-storage: 20Gi}
  overhead: {cpu: 90m, memory: 893Mi}
  labels: {kubernetes.io/arch: amd64, kubernetes.io/os: linux, karpenter.k8s.aws/instance-category: c}
  offerings:
  - {zone: us-east-1a, capacityType: on-demand, price: 0.306, available: true}
- name: m6g.large
  capacity: {cpu: 2, memory: 8Gi, nvidia.com/gpu: 1}
  offerings:
  - {zone: us-east-1a, capacityType: spot, price: 0.03}
  - {zone: us-east-1b, capacityType: on-demand, price: "0.077", available: false}
"#;

    #[test]
    fn custom_catalog_in_the_spec_format_loads() {
        let catalog = Catalog::from_custom_text("catalog.yaml", SPEC_EXAMPLE).expect("loads");
        assert!(catalog.is_custom());
        let types = catalog
            .instance_types(&InstanceTypeContext::new("anywhere", "AL2023"))
            .unwrap();
        assert_eq!(types.len(), 2);
        let c = find(&types, "c6a.2xlarge");
        assert_eq!(c.capacity.cpu, 8000);
        assert_eq!(c.capacity.memory, 16 * GIB);
        assert_eq!(c.allocatable().cpu, 7910);
        assert_eq!(c.allocatable().memory, 16 * GIB - 893 * MIB);
        assert_eq!(label(c, labels::INSTANCE_FAMILY), "c6a");
        assert_eq!(label(c, labels::ZONE), "us-east-1a");
        assert_eq!(label(c, labels::CAPACITY_TYPE), "on-demand");
        assert_eq!(c.offerings[0].price, 0.306);
        assert_eq!(
            c.requirements.get(labels::INSTANCE_GPU_COUNT).operator(),
            Operator::DoesNotExist
        );

        let g = find(&types, "m6g.large");
        assert_eq!(label(g, labels::ARCH), "arm64");
        assert_eq!(label(g, labels::INSTANCE_CATEGORY), "m");
        assert_eq!(label(g, labels::INSTANCE_GENERATION), "6");
        assert_eq!(label(g, labels::INSTANCE_GPU_COUNT), "1");
        assert_eq!(
            g.capacity.pods,
            110 * ONE,
            "kubelet default when pods are not given"
        );
        // No overhead in the file: the AWS formulas, for the resources the entry has.
        assert_eq!(g.overhead.kube_reserved.cpu, 70);
        assert_eq!(g.overhead.kube_reserved.memory, (11 * 110 + 255) * MIB);
        assert_eq!(g.overhead.eviction_threshold.memory, 100 * MIB);
        assert_eq!(
            g.allocatable().ephemeral_storage,
            0,
            "nothing reserved from an absent resource"
        );
        assert_eq!(values(g, labels::CAPACITY_TYPE), vec!["on-demand", "spot"]);
        assert!(!g.offerings[1].available);

        // Subnet zones filter offerings; types left with none disappear.
        let zones = vec!["us-east-1b".to_string()];
        let mut ctx = InstanceTypeContext::new("anywhere", "AL2023");
        ctx.zones = Some(&zones);
        let names: Vec<String> = catalog
            .instance_types(&ctx)
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, vec!["m6g.large"]);
    }

    #[test]
    fn custom_catalog_as_json() {
        let json = r#"{"instanceTypes":[{"name":"n2-standard-4","capacity":{"cpu":"4","memory":"16Gi","pods":"110",
            "ephemeral-storage":"100Gi"},"labels":{"kubernetes.io/arch":"amd64","team":"a"},
            "offerings":[{"zone":"z1","capacityType":"spot","price":0.05}]}]}"#;
        let catalog = Catalog::from_custom_text("shapes.json", json).unwrap();
        let t = &catalog
            .instance_types(&InstanceTypeContext::new("r", "AL2"))
            .unwrap()[0];
        assert_eq!(label(t, "team"), "a");
        assert!(
            !t.requirements.has(labels::INSTANCE_FAMILY),
            "not an AWS-shaped name"
        );
        assert_eq!(t.overhead.eviction_threshold.ephemeral_storage, 10 * GIB);
        assert_eq!(t.overhead.kube_reserved.ephemeral_storage, GIB);
    }

    #[test]
    fn custom_catalog_errors_are_one_line_with_the_field_path() {
        let cases = [
            (
                "instanceTypes:\n- name: a.large\n  capacity: {memory: 16Gx}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].capacity.memory: invalid quantity \"16Gx\"",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n- capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[1].name: required field is missing",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spt, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].capacityType: invalid capacity type \"spt\" (expected on-demand, spot or reserved)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {nvidia.com/gpu: x}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].capacity[\"nvidia.com/gpu\"]: invalid quantity \"x\"",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capcity: {cpu: 1}\n",
                "catalog.yaml: instanceTypes[0].capcity: unknown field (expected one of name, capacity, overhead, labels, offerings)",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: -1}]\n",
                "catalog.yaml: instanceTypes[0].offerings[0].price: expected a non-negative number of USD per hour",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: []\n",
                "catalog.yaml: instanceTypes[0].offerings: at least one offering is required",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  labels: {topology.kubernetes.io/zone: z}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[0].labels[\"topology.kubernetes.io/zone\"]: cannot be set as a label: zones come from `offerings[].zone`",
            ),
            (
                "instanceTypes:\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n- name: a.large\n  capacity: {cpu: 1}\n  offerings: [{zone: z, capacityType: spot, price: 1}]\n",
                "catalog.yaml: instanceTypes[1].name: duplicate instance type \"a.large\" (also instanceTypes[0])",
            ),
            ("types: []\n", "catalog.yaml: types: unknown field (expected instanceTypes)"),
            ("", "catalog.yaml: expected a mapping with an `instanceTypes` list"),
        ];
        for (text, want) in cases {
            let err = Catalog::from_custom_text("catalog.yaml", text)
                .unwrap_err()
                .to_string();
            assert_eq!(err, want);
            assert!(!err.contains('\n'));
        }
        let err = Catalog::from_custom_text("catalog.yaml", "instanceTypes: [\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("catalog.yaml: ") && !err.contains('\n'),
            "{err}"
        );
        let err = Catalog::from_file("/nonexistent/catalog.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("/nonexistent/catalog.yaml: cannot read: "),
            "{err}"
        );
    }
}
