//! v1alpha1 selector maps (`subnetSelector`, `securityGroupSelector`, `amiSelector`) → v1
//! selector terms.

use super::super::meta::{AmiSelectorTermSpec, SelectorTermSpec, StringMap};
use super::super::validate::key_path;
use super::{Notes, CLUSTER_NAME_PLACEHOLDER};
use crate::model::legacy_selector::{is_ids_key, split_list};

/// v1 has at most this many terms in each selector list.
const MAX_TERMS: usize = 30;

/// v1alpha1 ORed the comma-separated values of each tag (`tag:k=[a, b]`) and ANDed the tags;
/// v1 takes a tag value literally and ORs terms. So each combination of values becomes one
/// term (usually one tag holds a list and this is one term per value).
fn tag_combinations(notes: &mut Notes, field: &str, tags: &StringMap) -> Vec<StringMap> {
    let mut sets = vec![StringMap::new()];
    let mut split = Vec::new();
    let mut wildcards = Vec::new();
    for (k, v) in tags {
        let mut values = if v.trim() == "*" {
            vec!["*".to_string()]
        } else {
            split_list(v)
        };
        if values.is_empty() {
            // An empty value: v1 rejects it; `*` ("the tag exists") is the closest.
            wildcards.push(k.clone());
            values = vec!["*".to_string()];
        }
        if values.len() > 1 {
            split.push(k.clone());
        }
        sets = sets
            .into_iter()
            .flat_map(|s| {
                values.iter().map(move |value| {
                    let mut s = s.clone();
                    s.insert(k.clone(), value.clone());
                    s
                })
            })
            .collect();
    }
    if !wildcards.is_empty() {
        notes.add(
            field,
            format!(
                "empty values of {} became *: v1 rejects empty tag values and * selects any value",
                wildcards.join(", ")
            ),
        );
    }
    match split.as_slice() {
        [] => {}
        [one] => notes.add(
            key_path(field, one),
            format!(
                "{:?} became one term per value: v1 does not split tag values at commas",
                tags[one]
            ),
        ),
        many => notes.add(
            field,
            format!(
                "tags {} each hold a comma-separated list: wrote one term per combination ({} terms, the cross product), because v1 does not split tag values at commas",
                many.join(", "),
                sets.len()
            ),
        ),
    }
    if sets.len() > MAX_TERMS {
        notes.add(
            field,
            format!(
                "became {} terms, more than the {MAX_TERMS} v1 accepts: narrow the selector",
                sets.len()
            ),
        );
    }
    sets
}

/// The ids of a v1alpha1 selector that uses `aws-ids`/`aws::ids`, which must stand alone: any
/// other key next to it is dropped, with a note.
fn id_list(notes: &mut Notes, field: &str, sel: &StringMap, what: &str) -> Option<Vec<String>> {
    let (key, ids) = sel.iter().find(|(k, _)| is_ids_key(k))?;
    let others: Vec<&str> = sel
        .keys()
        .filter(|k| *k != key)
        .map(String::as_str)
        .collect();
    if !others.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: {key} selects {what} by ID alone",
                others.join(", ")
            ),
        );
    }
    Some(split_list(ids))
}

/// A v1alpha1 `amiSelector` map → v1 terms (docs/karpenter.md §1.2, §3.3).
pub(super) fn legacy_ami_terms(
    notes: &mut Notes,
    field: &str,
    sel: &StringMap,
) -> Vec<AmiSelectorTermSpec> {
    if let Some(ids) = id_list(notes, field, sel, "AMIs") {
        return ids
            .into_iter()
            .map(|id| AmiSelectorTermSpec {
                id: Some(id),
                ..AmiSelectorTermSpec::default()
            })
            .collect();
    }
    let unknown: Vec<&str> = sel
        .keys()
        .filter(|k| k.starts_with("aws::") && !matches!(k.as_str(), "aws::name" | "aws::owners"))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        notes.add(
            field,
            format!(
                "dropped {}: not an amiSelector key v1alpha1 knew (aws::ids, aws::name, aws::owners)",
                unknown.join(", ")
            ),
        );
    }
    // v0.31/v0.32 split `aws::name` at commas into one term per name (`aws v0.32.10:
    // pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms`, which karpenter-convert used); an AMI
    // name has no commas, so a comma always separated names.
    let mut names: Vec<Option<String>> = match sel.get("aws::name").map(|n| split_list(n)) {
        Some(n) if !n.is_empty() => n.into_iter().map(Some).collect(),
        _ => vec![None],
    };
    if names.len() > 1 {
        notes.add(
            key_path(field, "aws::name"),
            format!(
                "{:?} became one term per name: v1alpha1 split it at commas, v1 takes a name literally",
                sel["aws::name"]
            ),
        );
    }
    let named = names.iter().any(Option::is_some);
    let tags: StringMap = sel
        .iter()
        .filter(|(k, _)| !k.starts_with("aws::"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let owners: Vec<Option<String>> = match sel.get("aws::owners").map(|o| split_list(o)) {
        Some(o) if !o.is_empty() => o.into_iter().map(Some).collect(),
        // v1 defaults the owners of a term with a name to self and amazon, as v1alpha1 did.
        _ if named => vec![None],
        _ => {
            notes.add(
                field,
                "no aws::owners: wrote one term per v1alpha1 default owner (self, amazon), because a v1 term without a name matches images of any owner",
            );
            vec![Some("self".into()), Some("amazon".into())]
        }
    };
    if !named && tags.is_empty() {
        // v1 needs tags, a name, an id or an alias in each term: name `*` matches any name.
        names = vec![Some("*".into())];
        notes.add(
            field,
            "only aws::owners: wrote name: * in each term, because a v1 term needs a name, tags or an id",
        );
    }
    let tag_sets = tag_combinations(notes, field, &tags);
    let mut terms = Vec::new();
    for owner in &owners {
        for name in &names {
            for t in &tag_sets {
                terms.push(AmiSelectorTermSpec {
                    name: name.clone(),
                    owner: owner.clone(),
                    tags: (!t.is_empty()).then(|| t.clone()),
                    ..AmiSelectorTermSpec::default()
                });
            }
        }
    }
    terms
}

/// A v1alpha1 `subnetSelector`/`securityGroupSelector` map → v1 terms; a placeholder when
/// there is none (v1 requires terms, v1alpha1 did not with a launch template).
pub(super) fn legacy_terms(
    notes: &mut Notes,
    field: &str,
    sel: Option<&StringMap>,
    what: &str,
) -> Vec<SelectorTermSpec> {
    let Some(sel) = sel.filter(|s| !s.is_empty()) else {
        notes.add(
            field,
            format!("absent: v1 requires terms selecting {what}; wrote the placeholder {{tags: {{karpenter.sh/discovery: {CLUSTER_NAME_PLACEHOLDER}}}}}: replace it with the {what} the nodes should use"),
        );
        let mut tags = StringMap::new();
        tags.insert(
            "karpenter.sh/discovery".into(),
            CLUSTER_NAME_PLACEHOLDER.into(),
        );
        return vec![SelectorTermSpec {
            tags: Some(tags),
            ..SelectorTermSpec::default()
        }];
    };
    if let Some(ids) = id_list(notes, field, sel, what) {
        return ids
            .into_iter()
            .map(|id| SelectorTermSpec {
                id: Some(id),
                ..SelectorTermSpec::default()
            })
            .collect();
    }
    tag_combinations(notes, field, sel)
        .into_iter()
        .map(|tags| SelectorTermSpec {
            tags: Some(tags),
            ..SelectorTermSpec::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;

    #[test]
    fn ami_selector_maps_to_terms() {
        let class = |selector: &str| {
            let c = conv(&format!(
                "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    a: b\n  securityGroupSelector:\n    a: b\n  amiSelector:\n{selector}"
            ));
            load_str("out.yaml", &c.to_yaml()).unwrap_or_else(|e| panic!("{e}\n{}", c.to_yaml()));
            doc(&c, "EC2NodeClass", "t").clone()
        };
        let terms = |d: &Document| at(&d.value, "spec.amiSelectorTerms").clone();

        let d = class("    aws::ids: ami-1, ami-2\n");
        assert_eq!(text(&d.value, "spec.amiFamily"), "AL2");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[0].id"), "ami-1");
        assert_eq!(text(&d.value, "spec.amiSelectorTerms[1].id"), "ami-2");

        let d = class("    aws::name: eks-*\n    aws::owners: self,123456789012\n    team: a\n");
        let t = terms(&d);
        assert_eq!(t.as_sequence().unwrap().len(), 2);
        assert_eq!(text(&t, "[0].owner"), "self");
        assert_eq!(text(&t, "[1].owner"), "123456789012");
        assert_eq!(text(&t, "[1].name"), "eks-*");
        assert_eq!(text(&t, "[1].tags.team"), "a");

        // Tags only: v1alpha1's default owners become explicit.
        let d = class("    team: a\n");
        let t = terms(&d);
        assert_eq!(text(&t, "[0].owner"), "self");
        assert_eq!(text(&t, "[1].owner"), "amazon");
        note(&d, "spec.amiSelector", "self, amazon");

        // A name without owners keeps v1's own default owners (the same).
        let d = class("    aws::name: my-ami\n");
        assert!(!has(terms(&d).item(0).unwrap(), "owner"));

        // A comma list in one tag: one term per value.
        let d = class("    aws::owners: self\n    version: v1,v2\n");
        let t = terms(&d);
        assert_eq!(text(&t, "[0].tags.version"), "v1");
        assert_eq!(text(&t, "[1].tags.version"), "v2");
        note(
            &d,
            "spec.amiSelector.version",
            "does not split tag values at commas",
        );

        // Two comma lists: the cross product, noted.
        let d = class("    aws::owners: self\n    a: x,y\n    b: p,q\n");
        assert_eq!(terms(&d).as_sequence().unwrap().len(), 4);
        note(&d, "spec.amiSelector", "cross product");

        // A comma list in aws::name: one term per name, as v0.31/v0.32 split it
        // (aws v0.32.10 pkg/utils/nodeclass/nodeclass.go NewAMISelectorTerms).
        let d = class("    aws::name: eks-a-*, eks-b-*\n    aws::owners: self,amazon\n");
        let t = terms(&d);
        let got: Vec<(String, String)> = t
            .as_sequence()
            .unwrap()
            .iter()
            .map(|v| (text(v, "owner"), text(v, "name")))
            .collect();
        let want = [
            ("self", "eks-a-*"),
            ("self", "eks-b-*"),
            ("amazon", "eks-a-*"),
            ("amazon", "eks-b-*"),
        ];
        assert_eq!(
            got,
            want.map(|(o, n)| (o.to_string(), n.to_string())),
            "{t:?}"
        );
        note(&d, "spec.amiSelector[aws::name]", "one term per name");

        // Owners only: a v1 term needs a name, tags or id.
        let d = class("    aws::owners: self\n");
        assert_eq!(text(&terms(&d), "[0].name"), "*");
    }

    #[test]
    fn subnet_and_security_group_selectors_map_to_terms() {
        let c = conv("apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: t\nspec:\n  instanceProfile: p\n  subnetSelector:\n    aws::ids: subnet-1,subnet-2\n  securityGroupSelector:\n    Name: \"*\"\n    tier: web,api\n");
        let d = doc(&c, "EC2NodeClass", "t");
        assert_eq!(text(&d.value, "spec.subnetSelectorTerms[0].id"), "subnet-1");
        assert_eq!(text(&d.value, "spec.subnetSelectorTerms[1].id"), "subnet-2");
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[0].tags.Name"),
            "*"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[0].tags.tier"),
            "web"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[1].tags.tier"),
            "api"
        );
        assert_eq!(
            text(&d.value, "spec.securityGroupSelectorTerms[1].tags.Name"),
            "*"
        );
        note(d, "spec.securityGroupSelector.tier", "one term per value");
        load_str("out.yaml", &c.to_yaml()).unwrap();
    }
}
