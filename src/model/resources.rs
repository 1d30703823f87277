//! Resource lists (requests, capacity, allocatable, limits) as exact milli-unit integers.
//!
//! The four resources every pod and node has are plain fields so the solver's hot path never
//! hashes a string; anything else (GPUs, hugepages, `vpc.amazonaws.com/pod-eni`, …) lives in a
//! small sorted vector that is empty for almost every pod.

use std::collections::BTreeMap;
use std::fmt;

use super::quantity::{format_milli, parse_milli, QuantityError};

/// Resource names with a dedicated field.
pub const CPU: &str = "cpu";
/// Memory, in bytes.
pub const MEMORY: &str = "memory";
/// Pod count.
pub const PODS: &str = "pods";
/// Ephemeral storage, in bytes.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";

/// A resource list. Every value is in milli-units (see [`super::quantity`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    /// Millicores.
    pub cpu: i64,
    /// Milli-bytes.
    pub memory: i64,
    /// Milli-pods.
    pub pods: i64,
    /// Milli-bytes.
    pub ephemeral_storage: i64,
    /// Other resources, sorted by name, no duplicates, no zero values.
    pub extended: Vec<(String, i64)>,
}

impl Resources {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a list from `(name, quantity string)` pairs, e.g. a manifest's `resources.requests`.
    pub fn parse<'a>(
        entries: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, (String, QuantityError)> {
        let mut out = Resources::new();
        for (name, text) in entries {
            let milli = parse_milli(text).map_err(|e| (name.to_string(), e))?;
            out.set(name, milli);
        }
        Ok(out)
    }

    /// Convenience constructor for tests and fixtures: `Resources::from_pairs(&[("cpu", "1")])`.
    /// Panics on a malformed quantity, so only for literals.
    pub fn from_pairs(entries: &[(&str, &str)]) -> Self {
        Self::parse(entries.iter().copied()).expect("literal quantities are valid")
    }

    /// The value of one resource (0 when absent).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.cpu,
            MEMORY => self.memory,
            PODS => self.pods,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            _ => self
                .extended
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
                .map(|i| self.extended[i].1)
                .unwrap_or(0),
        }
    }

    /// Whether the resource is listed (a core field counts when non-zero).
    pub fn contains(&self, name: &str) -> bool {
        self.get(name) != 0
    }

    /// Sets one resource.
    pub fn set(&mut self, name: &str, milli: i64) {
        match name {
            CPU => self.cpu = milli,
            MEMORY => self.memory = milli,
            PODS => self.pods = milli,
            EPHEMERAL_STORAGE => self.ephemeral_storage = milli,
            _ => match self
                .extended
                .binary_search_by(|(n, _)| n.as_str().cmp(name))
            {
                Ok(i) if milli == 0 => {
                    self.extended.remove(i);
                }
                Ok(i) => self.extended[i].1 = milli,
                Err(_) if milli == 0 => {}
                Err(i) => self.extended.insert(i, (name.to_string(), milli)),
            },
        }
    }

    /// Every non-zero entry, core resources first, then extended ones by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> + '_ {
        [
            (CPU, self.cpu),
            (MEMORY, self.memory),
            (PODS, self.pods),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
        ]
        .into_iter()
        .filter(|(_, v)| *v != 0)
        .chain(self.extended.iter().map(|(n, v)| (n.as_str(), *v)))
    }

    /// `self + other`, element-wise.
    pub fn add(&self, other: &Resources) -> Resources {
        let mut out = self.clone();
        out.add_assign(other);
        out
    }

    /// `self += other`, element-wise. Saturating: a quantity as large as the API server takes
    /// ([`crate::model::quantity::parse_milli`] holds it as `i64::MAX`) stays "more than anything".
    pub fn add_assign(&mut self, other: &Resources) {
        self.cpu = self.cpu.saturating_add(other.cpu);
        self.memory = self.memory.saturating_add(other.memory);
        self.pods = self.pods.saturating_add(other.pods);
        self.ephemeral_storage = self
            .ephemeral_storage
            .saturating_add(other.ephemeral_storage);
        for (n, v) in &other.extended {
            let cur = self.get(n);
            self.set(n, cur.saturating_add(*v));
        }
    }

    /// `self - other`, element-wise (may go negative; saturating like [`Resources::add_assign`]).
    pub fn sub(&self, other: &Resources) -> Resources {
        let mut out = self.subtract_listed(other);
        for (n, v) in &other.extended {
            if self.get(n) == 0 {
                out.set(n, 0i64.saturating_sub(*v));
            }
        }
        out
    }

    /// Karpenter's `resources.Subtract(lhs, rhs)` (`core v1.14.1: pkg/utils/resources/resources.go`):
    /// `self - other` for the resources `self` lists — the four core ones always, an extended one
    /// when present — so a resource only `other` lists (a `pid` kube-reserved, say) is dropped
    /// rather than going negative.
    pub fn subtract_listed(&self, other: &Resources) -> Resources {
        let mut out = self.clone();
        out.cpu = out.cpu.saturating_sub(other.cpu);
        out.memory = out.memory.saturating_sub(other.memory);
        out.pods = out.pods.saturating_sub(other.pods);
        out.ephemeral_storage = out
            .ephemeral_storage
            .saturating_sub(other.ephemeral_storage);
        for (n, v) in &mut out.extended {
            *v = v.saturating_sub(other.get(n));
        }
        out.extended.retain(|(_, v)| *v != 0);
        out
    }

    /// Element-wise maximum.
    pub fn max(&self, other: &Resources) -> Resources {
        let mut out = self.clone();
        out.cpu = out.cpu.max(other.cpu);
        out.memory = out.memory.max(other.memory);
        out.pods = out.pods.max(other.pods);
        out.ephemeral_storage = out.ephemeral_storage.max(other.ephemeral_storage);
        for (n, v) in &other.extended {
            let cur = out.get(n);
            out.set(n, cur.max(*v));
        }
        out
    }

    /// Element-wise minimum of the resources both lists hold (`core v1.14.1
    /// pkg/utils/resources/resources.go MinResources`: a resource missing from either is left out).
    pub fn min_each(&self, other: &Resources) -> Resources {
        Resources {
            cpu: self.cpu.min(other.cpu),
            memory: self.memory.min(other.memory),
            pods: self.pods.min(other.pods),
            ephemeral_storage: self.ephemeral_storage.min(other.ephemeral_storage),
            extended: self
                .extended
                .iter()
                .map(|(n, v)| (n.clone(), (*v).min(other.get(n))))
                .filter(|(_, v)| *v != 0)
                .collect(),
        }
    }

    /// Karpenter's `resources.Fits`: every requested resource is at most what is available
    /// (a resource missing from `available` is 0), and nothing available is negative.
    pub fn fits_in(&self, available: &Resources) -> bool {
        if available.cpu < 0
            || available.memory < 0
            || available.pods < 0
            || available.ephemeral_storage < 0
            || available.extended.iter().any(|(_, v)| *v < 0)
        {
            return false;
        }
        self.cpu <= available.cpu
            && self.memory <= available.memory
            && self.pods <= available.pods
            && self.ephemeral_storage <= available.ephemeral_storage
            && self.extended.iter().all(|(n, v)| *v <= available.get(n))
    }

    /// The names of the resources for which `self` exceeds `available`, for error messages.
    pub fn exceeded(&self, available: &Resources) -> Vec<String> {
        self.iter()
            .filter(|(n, v)| *v > available.get(n))
            .map(|(n, _)| n.to_string())
            .collect()
    }

    /// Whether every value is zero.
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// As a sorted map of human-readable quantity strings (for JSON/YAML output).
    pub fn to_strings(&self) -> BTreeMap<String, String> {
        self.iter()
            .map(|(n, v)| (n.to_string(), format_milli(n, v)))
            .collect()
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .iter()
            .map(|(n, v)| format!("{n}={}", format_milli(n, v)))
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `core v1.14.1 pkg/utils/resources/suite_test.go` "MaxResources" and "MinResources" (8 It):
    /// `max` per resource over the lists (a resource in some lists only is kept), `min_each` over
    /// the resources present in every list (absent and zero are one here, as in `Fits`).
    /// Upstream It: "should return the maximum of each resource across multiple lists".
    /// Upstream It: "should return the minimum of each resource across multiple lists".
    #[test]
    fn max_resources_and_min_resources_as_upstream() {
        let r = |pairs: &[(&str, &str)]| Resources::from_pairs(pairs);
        let fold_max = |lists: &[Resources]| lists.iter().fold(Resources::new(), |m, l| m.max(l));
        let fold_min = |lists: &[Resources]| match lists.split_first() {
            Some((first, rest)) => rest.iter().fold(first.clone(), |m, l| m.min_each(l)),
            None => Resources::new(),
        };
        // "should return empty list for no inputs"
        assert!(fold_max(&[]).is_empty());
        assert!(fold_min(&[]).is_empty());
        // "should return the same list for a single input"
        let one = r(&[("cpu", "1"), ("memory", "1Gi")]);
        assert_eq!(fold_max(std::slice::from_ref(&one)), one);
        assert_eq!(fold_min(std::slice::from_ref(&one)), one);
        // "should return the maximum / minimum of each resource across multiple lists"
        let a = r(&[("cpu", "1"), ("memory", "4Gi")]);
        let b = r(&[("cpu", "3"), ("memory", "2Gi")]);
        let c = r(&[("cpu", "2"), ("memory", "3Gi")]);
        let all = [a.clone(), b.clone(), c.clone()];
        assert_eq!(fold_max(&all), r(&[("cpu", "3"), ("memory", "4Gi")]));
        assert_eq!(fold_min(&all), r(&[("cpu", "1"), ("memory", "2Gi")]));
        // "should include resources that only appear in some lists" (max)
        let gpu = r(&[("cpu", "1"), ("nvidia.com/gpu", "2")]);
        let mem = r(&[("memory", "1Gi")]);
        assert_eq!(
            fold_max(&[gpu.clone(), mem.clone()]),
            r(&[("cpu", "1"), ("memory", "1Gi"), ("nvidia.com/gpu", "2")])
        );
        // "should only include resources present in all lists" (min)
        let cpu_gpu = r(&[("cpu", "2"), ("nvidia.com/gpu", "1")]);
        assert_eq!(cpu_gpu.min_each(&r(&[("cpu", "1")])), r(&[("cpu", "1")]));
        assert_eq!(
            gpu.min_each(&cpu_gpu),
            r(&[("cpu", "1"), ("nvidia.com/gpu", "1")])
        );
    }

    #[test]
    fn arithmetic_and_fit() {
        let a = Resources::from_pairs(&[("cpu", "1"), ("memory", "1Gi"), ("nvidia.com/gpu", "1")]);
        let b = Resources::from_pairs(&[("cpu", "500m"), ("pods", "1")]);
        let sum = a.add(&b);
        assert_eq!(sum.get("cpu"), 1500);
        assert_eq!(sum.get("pods"), 1000);
        assert_eq!(sum.get("nvidia.com/gpu"), 1000);
        assert!(b.fits_in(&a.add(&Resources::from_pairs(&[("pods", "1")]))));
        assert!(!a.fits_in(&b), "gpu and memory missing from b");
        assert_eq!(a.exceeded(&b), vec!["cpu", "memory", "nvidia.com/gpu"]);
        let neg = b.sub(&a);
        assert!(
            !Resources::new().fits_in(&neg),
            "negative availability never fits"
        );
        assert_eq!(a.to_strings()["memory"], "1Gi");
        assert_eq!(format!("{b}"), "cpu=500m,pods=1");
        let mut c = a.clone();
        c.set("nvidia.com/gpu", 0);
        assert!(c.extended.is_empty());
    }

    /// `core v1.14.1: pkg/utils/resources/resources.go` `Subtract` ranges over the left list only.
    #[test]
    fn subtract_listed_keeps_only_the_left_lists_resources() {
        let capacity =
            Resources::from_pairs(&[("cpu", "2"), ("memory", "4Gi"), ("nvidia.com/gpu", "1")]);
        let overhead =
            Resources::from_pairs(&[("cpu", "100m"), ("pid", "1000"), ("nvidia.com/gpu", "1")]);
        let left = capacity.subtract_listed(&overhead);
        assert_eq!(left.get("cpu"), 1900);
        assert_eq!(left.get("pid"), 0, "only the overhead lists pid: dropped");
        assert!(left.extended.is_empty(), "gpu 1 - 1 = 0 is not kept");
        assert!(Resources::from_pairs(&[("cpu", "1")]).fits_in(&left));
        assert_eq!(
            capacity.sub(&overhead).get("pid"),
            -1_000_000,
            "sub keeps both sides' keys"
        );
    }
}
