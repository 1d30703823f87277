//! Label selectors (`matchLabels` + `matchExpressions`) as used by pod affinity, topology
//! spread and PDBs.

use std::collections::BTreeMap;

/// A label-selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SelectorOp {
    /// The label has one of the values.
    In,
    /// The label is absent or has none of the values.
    NotIn,
    /// The label is present.
    Exists,
    /// The label is absent.
    DoesNotExist,
}

impl SelectorOp {
    /// Parses the API spelling.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "In" => Some(Self::In),
            "NotIn" => Some(Self::NotIn),
            "Exists" => Some(Self::Exists),
            "DoesNotExist" => Some(Self::DoesNotExist),
            _ => None,
        }
    }
}

/// One `matchExpressions` entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SelectorExpr {
    /// Label key.
    pub key: String,
    /// Operator.
    pub op: SelectorOp,
    /// Values.
    pub values: Vec<String>,
}

/// A label selector. The empty selector matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LabelSelector {
    /// Equality terms.
    pub match_labels: BTreeMap<String, String>,
    /// Set-based terms.
    pub match_expressions: Vec<SelectorExpr>,
}

impl LabelSelector {
    /// A selector from `key=value` pairs.
    pub fn eq(pairs: &[(&str, &str)]) -> Self {
        Self {
            match_labels: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            match_expressions: vec![],
        }
    }

    /// Whether the labels satisfy every term.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|e| {
                let value = labels.get(&e.key);
                match e.op {
                    SelectorOp::In => value.is_some_and(|v| e.values.contains(v)),
                    SelectorOp::NotIn => value.is_none_or(|v| !e.values.contains(v)),
                    SelectorOp::Exists => value.is_some(),
                    SelectorOp::DoesNotExist => value.is_none(),
                }
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selector_semantics() {
        let labels: BTreeMap<String, String> = [("app".to_string(), "web".to_string())]
            .into_iter()
            .collect();
        assert!(LabelSelector::default().matches(&labels));
        assert!(LabelSelector::eq(&[("app", "web")]).matches(&labels));
        assert!(!LabelSelector::eq(&[("app", "db")]).matches(&labels));
        let expr = |op, values: &[&str]| LabelSelector {
            match_labels: BTreeMap::new(),
            match_expressions: vec![SelectorExpr {
                key: "app".into(),
                op,
                values: values.iter().map(|v| v.to_string()).collect(),
            }],
        };
        assert!(expr(SelectorOp::In, &["web", "db"]).matches(&labels));
        assert!(!expr(SelectorOp::NotIn, &["web"]).matches(&labels));
        assert!(expr(SelectorOp::Exists, &[]).matches(&labels));
        assert!(!expr(SelectorOp::DoesNotExist, &[]).matches(&labels));
        assert!(expr(SelectorOp::NotIn, &["web"]).matches(&BTreeMap::new()));
    }
}
