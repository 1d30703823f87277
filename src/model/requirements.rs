//! The requirements algebra shared by scheduling and drift (docs/karpenter.md §1.6,
//! `core: pkg/scheduling/requirement.go`, `requirements.go`).
//!
//! A requirement is a possibly-complemented set of values with optional integer bounds:
//! `In [a,b]` is the set {a,b}; `NotIn [a]` is "everything but a"; `Exists` is "everything";
//! `DoesNotExist` is the empty set; `Gt 3` is "every integer ≥ 4". Intersecting two requirements
//! on the same key narrows them, which is how pods, NodePools and instance types are matched.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::labels::{self, normalize_key};

/// A node-selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// The label has one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
    /// The label is an integer greater than the value.
    Gt,
    /// The label is an integer less than the value.
    Lt,
    /// The label is an integer greater than or equal to the value.
    Gte,
    /// The label is an integer less than or equal to the value.
    Lte,
}

impl Operator {
    /// Parses the API spelling.
    pub fn parse(text: &str) -> Option<Operator> {
        Some(match text {
            "In" => Operator::In,
            "NotIn" => Operator::NotIn,
            "Exists" => Operator::Exists,
            "DoesNotExist" => Operator::DoesNotExist,
            "Gt" => Operator::Gt,
            "Lt" => Operator::Lt,
            "Gte" => Operator::Gte,
            "Lte" => Operator::Lte,
            _ => return None,
        })
    }
    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::In => "In",
            Operator::NotIn => "NotIn",
            Operator::Exists => "Exists",
            Operator::DoesNotExist => "DoesNotExist",
            Operator::Gt => "Gt",
            Operator::Lt => "Lt",
            Operator::Gte => "Gte",
            Operator::Lte => "Lte",
        }
    }
    /// NotIn and DoesNotExist: satisfied by a node without the label.
    pub fn is_negative(self) -> bool {
        matches!(self, Operator::NotIn | Operator::DoesNotExist)
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A requirement as written in a manifest (`{key, operator, values, minValues}`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeSelectorRequirement {
    /// Label key (as written; normalised when turned into a [`Requirement`]).
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (empty for Exists/DoesNotExist).
    pub values: Vec<String>,
    /// Minimum number of distinct values the launch must keep (NodePool requirements only).
    pub min_values: Option<u32>,
}

impl NodeSelectorRequirement {
    /// Builds one from literals.
    pub fn new(key: &str, operator: Operator, values: &[&str]) -> Self {
        Self {
            key: key.to_string(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
            min_values: None,
        }
    }

    /// Checks the API's rules for values per operator; returns a message naming the problem.
    pub fn validate(&self) -> Result<(), String> {
        match self.operator {
            Operator::In if self.values.is_empty() => Err(format!(
                "requirement {}: operator In needs at least one value",
                self.key
            )),
            Operator::Exists | Operator::DoesNotExist if !self.values.is_empty() => Err(format!(
                "requirement {}: operator {} takes no values",
                self.key, self.operator
            )),
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte => {
                match self.values.as_slice() {
                    [v] if v.parse::<i64>().is_ok_and(|n| n >= 0) => Ok(()),
                    _ => Err(format!(
                        "requirement {}: operator {} needs exactly one non-negative integer value, got {:?}",
                        self.key, self.operator, self.values
                    )),
                }
            }
            _ => Ok(()),
        }?;
        if let Some(min) = self.min_values {
            if !(1..=50).contains(&min) {
                return Err(format!(
                    "requirement {}: minValues must be between 1 and 50",
                    self.key
                ));
            }
            if self.operator == Operator::In && (min as usize) > self.values.len() {
                return Err(format!(
                    "requirement {}: minValues {min} is more than the {} values given",
                    self.key,
                    self.values.len()
                ));
            }
        }
        Ok(())
    }
}

/// One key's constraint in set form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The normalised label key.
    pub key: String,
    complement: bool,
    values: BTreeSet<String>,
    gte: Option<i64>,
    lte: Option<i64>,
    /// `minValues`, kept as the maximum of everything intersected.
    pub min_values: Option<u32>,
}

/// What a complement without exclusions counts as (`math.MaxInt64`).
const ALL_VALUES: usize = i64::MAX as usize;

fn within(value: &str, gte: Option<i64>, lte: Option<i64>) -> bool {
    if gte.is_none() && lte.is_none() {
        return true;
    }
    match value.parse::<i64>() {
        Ok(n) => gte.is_none_or(|g| n >= g) && lte.is_none_or(|l| n <= l),
        Err(_) => false,
    }
}

impl Requirement {
    /// Builds a requirement. Bounded operators with a non-integer value yield an empty set.
    pub fn new(
        key: &str,
        operator: Operator,
        values: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let key = normalize_key(key).to_string();
        let values: BTreeSet<String> = values.into_iter().map(Into::into).collect();
        let bound = || values.iter().next().and_then(|v| v.parse::<i64>().ok());
        let base = |complement, values| Requirement {
            key: key.clone(),
            complement,
            values,
            gte: None,
            lte: None,
            min_values: None,
        };
        match operator {
            Operator::In => base(false, values),
            Operator::NotIn => base(true, values),
            Operator::Exists => base(true, BTreeSet::new()),
            Operator::DoesNotExist => base(false, BTreeSet::new()),
            Operator::Gt | Operator::Gte | Operator::Lt | Operator::Lte => match bound() {
                None => base(false, BTreeSet::new()),
                Some(n) => {
                    let mut r = base(true, BTreeSet::new());
                    // `Gt n` is `Gte n+1`, `Lt n` is `Lte n-1`; past the integer range there is
                    // nothing (core: `Gt MaxInt` → DoesNotExist, requirement_test.go "should
                    // return DoesNotExist for Gt MaxInt"; `Lt MinInt` likewise, where Go wraps).
                    let bound = match operator {
                        Operator::Gt => n.checked_add(1),
                        Operator::Lt => n.checked_sub(1),
                        _ => Some(n),
                    };
                    match (operator, bound) {
                        (_, None) => return base(false, BTreeSet::new()),
                        (Operator::Gt | Operator::Gte, Some(b)) => r.gte = Some(b),
                        (_, Some(b)) => r.lte = Some(b),
                    }
                    r
                }
            },
        }
    }

    /// From a manifest requirement (keeps `minValues`).
    pub fn from_selector(req: &NodeSelectorRequirement) -> Self {
        let mut r = Requirement::new(&req.key, req.operator, req.values.iter().cloned());
        r.min_values = req.min_values;
        r
    }

    /// `Exists` on `key`: what an absent key means.
    pub fn exists(key: &str) -> Self {
        Requirement::new(key, Operator::Exists, std::iter::empty::<String>())
    }

    /// `In [value]`.
    pub fn single(key: &str, value: &str) -> Self {
        Requirement::new(key, Operator::In, [value])
    }

    /// The operator this set corresponds to (bounded complements count as Exists).
    pub fn operator(&self) -> Operator {
        match (self.complement, self.values.is_empty()) {
            (true, false) => Operator::NotIn,
            (true, true) => Operator::Exists,
            (false, false) => Operator::In,
            (false, true) => Operator::DoesNotExist,
        }
    }

    /// Whether this is a complement set ("all values but …").
    pub fn is_complement(&self) -> bool {
        self.complement
    }

    /// The explicit values: allowed ones for In, excluded ones for NotIn.
    pub fn values(&self) -> &BTreeSet<String> {
        &self.values
    }

    /// Inclusive lower bound, if any.
    pub fn gte(&self) -> Option<i64> {
        self.gte
    }

    /// Inclusive upper bound, if any.
    pub fn lte(&self) -> Option<i64> {
        self.lte
    }

    /// Whether `value` satisfies the requirement.
    pub fn has(&self, value: &str) -> bool {
        self.values.contains(value) != self.complement && within(value, self.gte, self.lte)
    }

    /// Number of admitted values: Karpenter's `Len`, `MaxInt64 - excluded` for complements
    /// (bounds do not count).
    pub fn len(&self) -> usize {
        if self.complement {
            ALL_VALUES - self.values.len()
        } else {
            self.values.len()
        }
    }

    /// Whether no value is admitted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The set intersection of two requirements on the same key.
    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let complement = self.complement && other.complement;
        let gte = match (self.gte, other.gte) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let lte = match (self.lte, other.lte) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let min_values = self.min_values.max(other.min_values);
        if let (Some(g), Some(l)) = (gte, lte) {
            if g > l {
                let mut r = Requirement::new(
                    &self.key,
                    Operator::DoesNotExist,
                    std::iter::empty::<String>(),
                );
                r.min_values = min_values;
                return r;
            }
        }
        let values: BTreeSet<String> = match (self.complement, other.complement) {
            (true, true) => self.values.union(&other.values).cloned().collect(),
            (true, false) => other.values.difference(&self.values).cloned().collect(),
            (false, true) => self.values.difference(&other.values).cloned().collect(),
            (false, false) => self.values.intersection(&other.values).cloned().collect(),
        };
        let values = values.into_iter().filter(|v| within(v, gte, lte)).collect();
        let (gte, lte) = if complement { (gte, lte) } else { (None, None) };
        Requirement {
            key: self.key.clone(),
            complement,
            values,
            gte,
            lte,
            min_values,
        }
    }

    /// Whether two requirements on the same key can both hold (Karpenter's per-key `Intersects`):
    /// some value satisfies both, or both are negative (NotIn/DoesNotExist), which a node without
    /// the label satisfies.
    pub fn intersects(&self, other: &Requirement) -> bool {
        self.intersection_is_nonempty(other)
            || (self.operator().is_negative() && other.operator().is_negative())
    }

    /// Whether [`Requirement::intersection`] would admit anything, without building it (the
    /// solver asks this millions of times).
    pub fn intersection_is_nonempty(&self, other: &Requirement) -> bool {
        let gte = match (self.gte, other.gte) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let lte = match (self.lte, other.lte) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let (Some(g), Some(l)) = (gte, lte) {
            if g > l {
                return false;
            }
        }
        match (self.complement, other.complement) {
            (true, true) => true,
            (true, false) => other
                .values
                .iter()
                .any(|v| !self.values.contains(v) && within(v, gte, lte)),
            (false, true) => self
                .values
                .iter()
                .any(|v| !other.values.contains(v) && within(v, gte, lte)),
            (false, false) => {
                let (small, large) = if self.values.len() <= other.values.len() {
                    (&self.values, &other.values)
                } else {
                    (&other.values, &self.values)
                };
                small.iter().any(|v| large.contains(v))
            }
        }
    }

    /// One value that satisfies the requirement, chosen deterministically (Karpenter picks an
    /// arbitrary one): the smallest explicit value, or the smallest non-negative integer within
    /// the bounds that is not excluded. `None` for DoesNotExist.
    pub fn any(&self) -> Option<String> {
        if !self.complement {
            return self.values.iter().next().cloned();
        }
        let mut n = self.gte.unwrap_or(0).max(0);
        loop {
            let s = n.to_string();
            if self.lte.is_some_and(|l| n > l) {
                return None;
            }
            if !self.values.contains(&s) {
                return Some(s);
            }
            n += 1;
        }
    }

    /// Back to manifest form, as Karpenter's `NodeSelectorRequirement()`: a bounded
    /// complement is written `Gte`/`Lte` with its inclusive bound (the lower one if both are
    /// set: see [`Requirement::to_selectors`]), otherwise In/NotIn/Exists/DoesNotExist.
    pub fn to_selector(&self) -> NodeSelectorRequirement {
        let (operator, values): (Operator, Vec<String>) = if let Some(g) = self.gte {
            (Operator::Gte, vec![g.to_string()])
        } else if let Some(l) = self.lte {
            (Operator::Lte, vec![l.to_string()])
        } else {
            (self.operator(), self.values.iter().cloned().collect())
        };
        NodeSelectorRequirement {
            key: self.key.clone(),
            operator,
            values,
            min_values: self.min_values,
        }
    }

    /// Back to manifest form, every bound kept: `Gte` and `Lte` both when the range is closed
    /// (Karpenter's `BoundedNodeSelectorRequirements`), else the one [`Requirement::to_selector`].
    pub fn to_selectors(&self) -> Vec<NodeSelectorRequirement> {
        match (self.gte, self.lte) {
            (Some(g), Some(l)) => [(Operator::Gte, g), (Operator::Lte, l)]
                .into_iter()
                .map(|(operator, bound)| NodeSelectorRequirement {
                    key: self.key.clone(),
                    operator,
                    values: vec![bound.to_string()],
                    min_values: self.min_values,
                })
                .collect(),
            _ => vec![self.to_selector()],
        }
    }
}

/// Karpenter's `Requirement.String()`: `key In [a b]` (at most five values, then `and N
/// others`), `key Exists >=2 <=8` for bounds, ` minValues N` when set.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = self.operator();
        write!(f, "{} {op}", self.key)?;
        if !matches!(op, Operator::Exists | Operator::DoesNotExist) {
            let shown: Vec<&str> = self.values.iter().take(5).map(String::as_str).collect();
            write!(f, " [{}", shown.join(" "))?;
            if self.values.len() > 5 {
                write!(f, " and {} others", self.values.len() - 5)?;
            }
            f.write_str("]")?;
        }
        if let Some(g) = self.gte {
            write!(f, " >={g}")?;
        }
        if let Some(l) = self.lte {
            write!(f, " <={l}")?;
        }
        if let Some(m) = self.min_values {
            write!(f, " minValues {m}")?;
        }
        Ok(())
    }
}

/// Why two requirement sets are incompatible: the key and a human explanation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incompatibility {
    /// The label key at fault.
    pub key: String,
    /// What is wrong, e.g. `kubernetes.io/arch In [arm64] conflicts with allowed [amd64]` or
    /// `label "team" does not have known values`.
    pub detail: String,
}

impl fmt::Display for Incompatibility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.detail)
    }
}

/// A set of requirements, one per key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Requirements {
    by_key: BTreeMap<String, Requirement>,
}

impl Requirements {
    /// No requirement at all.
    pub fn new() -> Self {
        Self::default()
    }

    /// From manifest requirements (intersecting repeated keys).
    pub fn from_selectors<'a>(reqs: impl IntoIterator<Item = &'a NodeSelectorRequirement>) -> Self {
        let mut out = Requirements::new();
        for r in reqs {
            out.add(Requirement::from_selector(r));
        }
        out
    }

    /// `In [value]` for every label.
    pub fn from_labels<'a>(labels: impl IntoIterator<Item = (&'a String, &'a String)>) -> Self {
        let mut out = Requirements::new();
        for (k, v) in labels {
            out.add(Requirement::single(k, v));
        }
        out
    }

    /// Intersects `req` into the set.
    pub fn add(&mut self, req: Requirement) {
        match self.by_key.get_mut(&req.key) {
            Some(existing) => *existing = existing.intersection(&req),
            None => {
                self.by_key.insert(req.key.clone(), req);
            }
        }
    }

    /// Intersects every requirement of `other` into the set.
    pub fn add_all(&mut self, other: &Requirements) {
        for r in other.by_key.values() {
            self.add(r.clone());
        }
    }

    /// Removes a key.
    pub fn remove(&mut self, key: &str) {
        self.by_key.remove(key);
    }

    /// Whether the key is constrained.
    pub fn has(&self, key: &str) -> bool {
        self.by_key.contains_key(key)
    }

    /// The requirement on `key`; an absent key means `Exists`.
    pub fn get(&self, key: &str) -> Requirement {
        self.by_key
            .get(key)
            .cloned()
            .unwrap_or_else(|| Requirement::exists(key))
    }

    /// The requirement on `key`, if constrained.
    pub fn get_ref(&self, key: &str) -> Option<&Requirement> {
        self.by_key.get(key)
    }

    /// Iterates in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Requirement> {
        self.by_key.values()
    }

    /// Number of constrained keys.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether nothing is constrained.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Karpenter's `Intersects`: every key present in both sets has a common value (two
    /// negative requirements always intersect). Returns the first conflicting key.
    pub fn intersects(&self, other: &Requirements) -> Result<(), Incompatibility> {
        let (small, large, swapped) = if self.len() <= other.len() {
            (self, other, false)
        } else {
            (other, self, true)
        };
        for (key, a) in &small.by_key {
            if let Some(b) = large.by_key.get(key) {
                let (existing, incoming) = if swapped { (b, a) } else { (a, b) };
                if !existing.intersects(incoming) {
                    return Err(Incompatibility {
                        key: key.clone(),
                        detail: format!("{incoming} conflicts with {}", describe_values(existing)),
                    });
                }
            }
        }
        Ok(())
    }

    /// Karpenter's `Compatible(other, allowUndefined)`: every key of `other` must either be
    /// defined here, be allowed undefined, or be negative (NotIn/DoesNotExist) — and the
    /// defined keys must intersect. The scheduler allows well-known labels to be undefined;
    /// drift allows nothing.
    pub fn compatible(
        &self,
        other: &Requirements,
        allow_undefined: impl Fn(&str) -> bool,
    ) -> Result<(), Incompatibility> {
        for (key, req) in &other.by_key {
            if allow_undefined(key) || self.has(key) || req.operator().is_negative() {
                continue;
            }
            return Err(Incompatibility {
                key: key.clone(),
                detail: format!(
                    "label {key:?} does not have known values{}",
                    self.label_hint(key, &allow_undefined)
                ),
            });
        }
        self.intersects(other)
    }

    /// Karpenter's `labelHint`: ` (typo of "K"?)` for the first allowed-undefined well-known
    /// label, then the first key of this set, that contains `key` or ends with its part after
    /// the `/` (upstream walks Go maps, in no set order; ours is [`labels::well_known`]'s order,
    /// then key order).
    fn label_hint(&self, key: &str, allow_undefined: impl Fn(&str) -> bool) -> String {
        let suffix = key.split_once('/').map_or(key, |(_, after)| after);
        let close = |candidate: &str| candidate.contains(key) || candidate.ends_with(suffix);
        let defined = self.by_key.keys().map(String::as_str);
        labels::well_known()
            .filter(|k| allow_undefined(k))
            .map(|k| -> &str { k })
            .chain(defined)
            .find(|k| close(k))
            .map_or_else(String::new, |k| format!(" (typo of {k:?}?)"))
    }

    /// [`Requirements::intersects`] without building an explanation.
    pub fn intersects_ok(&self, other: &Requirements) -> bool {
        let (small, large) = if self.len() <= other.len() {
            (self, other)
        } else {
            (other, self)
        };
        small
            .by_key
            .iter()
            .all(|(key, a)| large.by_key.get(key).is_none_or(|b| a.intersects(b)))
    }

    /// [`Requirements::compatible`] without building an explanation.
    pub fn is_compatible(
        &self,
        other: &Requirements,
        allow_undefined: impl Fn(&str) -> bool,
    ) -> bool {
        other
            .by_key
            .iter()
            .all(|(key, req)| allow_undefined(key) || self.has(key) || req.operator().is_negative())
            && self.intersects_ok(other)
    }

    /// Labels implied by single-valued `In` requirements.
    pub fn single_value_labels(&self) -> BTreeMap<String, String> {
        self.by_key
            .values()
            .filter(|r| r.operator() == Operator::In && r.values.len() == 1)
            .map(|r| {
                (
                    r.key.clone(),
                    r.values.iter().next().cloned().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// Back to manifest form, in key order (a closed range is two, Karpenter's
    /// `NodeSelectorRequirements`).
    pub fn to_selectors(&self) -> Vec<NodeSelectorRequirement> {
        self.by_key
            .values()
            .flat_map(Requirement::to_selectors)
            .collect()
    }
}

fn describe_values(r: &Requirement) -> String {
    match r.operator() {
        Operator::In => format!(
            "allowed [{}]",
            r.values.iter().cloned().collect::<Vec<_>>().join(" ")
        ),
        Operator::DoesNotExist => "DoesNotExist".to_string(),
        _ => r.to_string(),
    }
}

/// Karpenter's `Requirements.String()`: sorted, without the restricted `kubernetes.io/hostname`.
impl fmt::Display for Requirements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .by_key
            .values()
            .filter(|r| r.key != labels::HOSTNAME)
            .map(|r| r.to_string())
            .collect();
        f.write_str(&parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::Operator::*;
    use super::*;

    fn req(op: Operator, values: &[&str]) -> Requirement {
        Requirement::new("key", op, values.iter().copied())
    }

    /// Every operator pair, as in Karpenter's requirement_test.go: does the intersection admit
    /// anything, and what does it become?
    #[test]
    fn intersection_table() {
        let cases: Vec<(Requirement, Requirement, Operator, Vec<&str>)> = vec![
            (req(In, &["a", "b"]), req(In, &["b", "c"]), In, vec!["b"]),
            (req(In, &["a"]), req(In, &["b"]), DoesNotExist, vec![]),
            (req(In, &["a", "b"]), req(NotIn, &["a"]), In, vec!["b"]),
            (req(NotIn, &["a"]), req(In, &["a", "b"]), In, vec!["b"]),
            (
                req(NotIn, &["a"]),
                req(NotIn, &["b"]),
                NotIn,
                vec!["a", "b"],
            ),
            (req(Exists, &[]), req(In, &["a"]), In, vec!["a"]),
            (req(Exists, &[]), req(NotIn, &["a"]), NotIn, vec!["a"]),
            (req(Exists, &[]), req(Exists, &[]), Exists, vec![]),
            (
                req(Exists, &[]),
                req(DoesNotExist, &[]),
                DoesNotExist,
                vec![],
            ),
            (
                req(DoesNotExist, &[]),
                req(NotIn, &["a"]),
                DoesNotExist,
                vec![],
            ),
            (
                req(In, &["1", "5", "9"]),
                req(Gt, &["4"]),
                In,
                vec!["5", "9"],
            ),
            (req(In, &["1", "5", "9"]), req(Lt, &["5"]), In, vec!["1"]),
            (req(In, &["x", "5"]), req(Gt, &["1"]), In, vec!["5"]),
            (req(Gt, &["4"]), req(Lt, &["5"]), DoesNotExist, vec![]),
            (req(Gt, &["4"]), req(Lt, &["6"]), Exists, vec![]),
            (req(Gte, &["4"]), req(Lte, &["4"]), Exists, vec![]),
            (req(NotIn, &["5", "7"]), req(Gt, &["6"]), NotIn, vec!["7"]),
        ];
        for (a, b, op, values) in cases {
            let got = a.intersection(&b);
            assert_eq!(got.operator(), op, "{a} ∩ {b} = {got}");
            let got_values: Vec<&str> = got.values().iter().map(String::as_str).collect();
            assert_eq!(got_values, values, "{a} ∩ {b}");
            // Intersection is commutative in what it admits.
            let rev = b.intersection(&a);
            for v in ["a", "b", "c", "1", "4", "5", "6", "7", "9", "x"] {
                assert_eq!(got.has(v), rev.has(v), "{a} ∩ {b} vs reverse on {v}");
                assert_eq!(got.has(v), a.has(v) && b.has(v), "{a} ∩ {b} admits {v}?");
            }
        }
    }

    #[test]
    fn bounds_only_admit_integers() {
        let gt = req(Gt, &["2"]);
        assert!(gt.has("3"));
        assert!(!gt.has("2"));
        assert!(!gt.has("abc"));
        let lt = req(Lt, &["2"]);
        assert!(lt.has("1") && !lt.has("2"));
        assert_eq!(
            req(Gt, &["x"]).operator(),
            DoesNotExist,
            "non-integer bound admits nothing"
        );
        assert_eq!(gt.to_selector().values, vec!["3"]);
        assert_eq!(gt.to_selector().operator, Gte);
        assert_eq!(gt.any().as_deref(), Some("3"));
        assert_eq!(req(NotIn, &["0", "1"]).any().as_deref(), Some("2"));
        assert_eq!(req(In, &["b", "a"]).any().as_deref(), Some("a"));
        assert_eq!(req(DoesNotExist, &[]).any(), None);
    }

    #[test]
    fn negative_requirements_always_intersect() {
        assert!(req(NotIn, &["a"]).intersects(&req(DoesNotExist, &[])));
        assert!(req(DoesNotExist, &[]).intersects(&req(DoesNotExist, &[])));
        assert!(!req(In, &["a"]).intersects(&req(DoesNotExist, &[])));
        assert!(!req(In, &["a"]).intersects(&req(NotIn, &["a"])));
        assert!(req(Exists, &[]).intersects(&req(In, &["a"])));
    }

    #[test]
    fn keys_are_normalised_and_min_values_kept() {
        let r = Requirement::new("beta.kubernetes.io/arch", In, ["amd64"]);
        assert_eq!(r.key, "kubernetes.io/arch");
        let mut a = NodeSelectorRequirement::new("k", In, &["a", "b", "c"]);
        a.min_values = Some(2);
        let b = Requirement::from_selector(&a).intersection(&req(In, &["a"]));
        assert_eq!(b.min_values, Some(2));
    }

    fn reqs(items: &[(&str, Operator, &[&str])]) -> Requirements {
        let mut out = Requirements::new();
        for (k, op, vs) in items {
            out.add(Requirement::new(k, *op, vs.iter().copied()));
        }
        out
    }

    /// The requirement-drift table of docs/karpenter.md §4.2: node labels vs NodePool requirements,
    /// no undefined keys allowed.
    #[test]
    fn compatibility_as_drift_uses_it() {
        let node = Requirements::from_labels(
            [
                ("team".to_string(), "a".to_string()),
                ("kubernetes.io/arch".to_string(), "amd64".to_string()),
            ]
            .iter()
            .map(|(k, v)| (k, v)),
        );
        let none = |_: &str| false;
        // Narrowing so the node's value is excluded drifts.
        assert!(node
            .compatible(&reqs(&[("team", In, &["b"])]), none)
            .is_err());
        // Widening does not.
        assert!(node
            .compatible(&reqs(&[("team", In, &["a", "b"])]), none)
            .is_ok());
        assert!(node
            .compatible(&reqs(&[("team", Exists, &[])]), none)
            .is_ok());
        // A new positive requirement on a key the node lacks drifts.
        let err = node
            .compatible(&reqs(&[("zone", In, &["x"])]), none)
            .unwrap_err();
        assert_eq!(err.key, "zone");
        assert!(node
            .compatible(&reqs(&[("zone", Exists, &[])]), none)
            .is_err());
        // NotIn / DoesNotExist on an absent key does not.
        assert!(node
            .compatible(&reqs(&[("zone", NotIn, &["x"])]), none)
            .is_ok());
        assert!(node
            .compatible(&reqs(&[("zone", DoesNotExist, &[])]), none)
            .is_ok());
        // DoesNotExist on a key the node has drifts.
        assert!(node
            .compatible(&reqs(&[("team", DoesNotExist, &[])]), none)
            .is_err());
        // Gt/Lt compare the label as an integer.
        let gen = Requirements::from_labels([(&"gen".to_string(), &"5".to_string())]);
        assert!(gen.compatible(&reqs(&[("gen", Gt, &["4"])]), none).is_ok());
        assert!(gen.compatible(&reqs(&[("gen", Gt, &["5"])]), none).is_err());
        // The scheduler lets well-known labels be undefined.
        let pool = reqs(&[("karpenter.k8s.aws/instance-category", In, &["c"])]);
        assert!(Requirements::new()
            .compatible(&pool, crate::model::labels::is_well_known)
            .is_ok());
        assert!(Requirements::new().compatible(&pool, none).is_err());
    }
}
