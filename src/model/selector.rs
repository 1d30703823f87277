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
    /// The label pairs every object it matches must carry: its `matchLabels` and its
    /// single-valued `In` expressions (what an index of objects by label can look up).
    pub fn required_pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.match_labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(self.match_expressions.iter().filter_map(|e| {
                match (e.op, e.values.as_slice()) {
                    (SelectorOp::In, [v]) => Some((e.key.as_str(), v.as_str())),
                    _ => None,
                }
            }))
    }

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

    /// Parses kubectl's `-l` syntax: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`,
    /// `!k`, comma-separated (commas inside parentheses belong to the set). The error names the
    /// term that does not parse.
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let mut terms = Vec::new();
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in text.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    terms.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        terms.push(&text[start..]);
        let mut sel = LabelSelector::default();
        let bad = |t: &str, why: &str| format!("{text:?}: {t:?} {why}");
        for raw in terms {
            let t = raw.trim();
            if t.is_empty() {
                return Err(bad(t, "is empty"));
            }
            let expr = |key: &str, op, values: Vec<String>| SelectorExpr {
                key: key.trim().to_string(),
                op,
                values,
            };
            if let Some((k, v)) = t.split_once("!=") {
                sel.match_expressions
                    .push(expr(k, SelectorOp::NotIn, vec![v.trim().to_string()]));
            } else if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
                if k.trim().is_empty() {
                    return Err(bad(t, "has no key"));
                }
                sel.match_labels
                    .insert(k.trim().to_string(), v.trim().to_string());
            } else if let Some(k) = t.strip_prefix('!') {
                sel.match_expressions
                    .push(expr(k, SelectorOp::DoesNotExist, vec![]));
            } else if let Some(open) = t.find('(') {
                let head: Vec<&str> = t[..open].split_whitespace().collect();
                let close = t.rfind(')').ok_or_else(|| bad(t, "misses ')'"))?;
                let values: Vec<String> = t[open + 1..close]
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect();
                let op = match head.as_slice() {
                    [_, "in"] => SelectorOp::In,
                    [_, "notin"] => SelectorOp::NotIn,
                    _ => return Err(bad(t, "is not `key in (...)` or `key notin (...)`")),
                };
                sel.match_expressions.push(expr(head[0], op, values));
            } else if t.split_whitespace().count() == 1 {
                sel.match_expressions
                    .push(expr(t, SelectorOp::Exists, vec![]));
            } else {
                return Err(bad(t, "is not a selector term"));
            }
        }
        Ok(sel)
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

    #[test]
    fn selectors_parse_like_kubectl() {
        let s = LabelSelector::parse("team=a,tier!=db,zone in (a, b),!gpu,spot,env notin (dev)")
            .unwrap();
        assert_eq!(s.match_labels["team"], "a");
        let ops: Vec<(String, SelectorOp, usize)> = s
            .match_expressions
            .iter()
            .map(|e| (e.key.clone(), e.op, e.values.len()))
            .collect();
        assert_eq!(
            ops,
            [
                ("tier".to_string(), SelectorOp::NotIn, 1),
                ("zone".to_string(), SelectorOp::In, 2),
                ("gpu".to_string(), SelectorOp::DoesNotExist, 0),
                ("spot".to_string(), SelectorOp::Exists, 0),
                ("env".to_string(), SelectorOp::NotIn, 1),
            ]
        );
        assert_eq!(
            LabelSelector::parse("a==b").unwrap(),
            LabelSelector::eq(&[("a", "b")])
        );
        for bad in ["", "a,,b", "=x", "zone in (a", "zone within (a)", "a b"] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            LabelSelector::parse("a,,b").unwrap_err(),
            "\"a,,b\": \"\" is empty"
        );
    }
}
