//! Subnets and security groups of a node class (docs/spec.md §5.2, docs/karpenter.md §1.2, §8): selector
//! terms → DescribeSubnets / DescribeSecurityGroups filter sets, then the union of what they
//! return.
//!
//! v1beta1/v1 terms are ORed, tags within a term ANDed, `*` means "tag key exists"; `id` terms
//! are merged into one `subnet-id`/`group-id` filter set and `name` terms into one
//! `group-name` set (`aws main: pkg/providers/{subnet,securitygroup}`). A v1alpha1
//! `subnetSelector`/`securityGroupSelector` map is one filter set with every key ANDed:
//! `aws-ids`/`aws::ids` is a comma list of ids, other values are comma lists of tag values.

use std::collections::BTreeMap;

use super::types::{Cloud, CloudError, Filter, SecurityGroup, Subnet, TagValues};
use crate::model::legacy_selector::{is_ids_key, split_list};
use crate::model::nodepool::{ApiGeneration, NodeClass, SelectorTerm};

/// Subnets or security groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Subnets.
    Subnet,
    /// Security groups.
    SecurityGroup,
}

impl Kind {
    fn id_filter(self) -> &'static str {
        match self {
            Kind::Subnet => "subnet-id",
            Kind::SecurityGroup => "group-id",
        }
    }
    fn legacy_key(self) -> &'static str {
        match self {
            Kind::Subnet => "subnetSelector",
            Kind::SecurityGroup => "securityGroupSelector",
        }
    }
}

/// One Describe request and the terms it serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterSet {
    /// The terms as written (`tags: {karpenter.sh/discovery: demo}`, `id: subnet-1`, …).
    pub terms: Vec<String>,
    /// Filters, ANDed.
    pub filters: Vec<Filter>,
}

fn term_label(t: &SelectorTerm) -> String {
    if let Some(id) = &t.id {
        return format!("id: {id}");
    }
    if let Some(n) = &t.name {
        return format!("name: {n}");
    }
    let tags: Vec<String> = t.tags.iter().map(|(k, v)| format!("{k}: {v}")).collect();
    format!("tags: {{{}}}", tags.join(", "))
}

/// The filter sets of a class's subnet or security-group selection.
pub fn filter_sets(class: &NodeClass, kind: Kind) -> Vec<FilterSet> {
    if class.generation == Some(ApiGeneration::V1Alpha5) {
        if let Some(selector) = class
            .legacy_selectors
            .get(kind.legacy_key())
            .filter(|s| !s.is_empty())
        {
            let mut filters = Vec::new();
            let mut tags = BTreeMap::new();
            for (k, v) in selector {
                if is_ids_key(k) {
                    filters.push(Filter::new(kind.id_filter(), split_list(v)));
                } else {
                    tags.insert(k.clone(), v.clone());
                }
            }
            filters.extend(Filter::tags(&tags, TagValues::CommaList));
            let shown: Vec<String> = selector.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            return vec![FilterSet {
                terms: vec![format!("{}: {{{}}}", kind.legacy_key(), shown.join(", "))],
                filters,
            }];
        }
    }
    let terms = match kind {
        Kind::Subnet => &class.subnet_selector_terms,
        Kind::SecurityGroup => &class.security_group_selector_terms,
    };
    let mut out = Vec::new();
    let (mut ids, mut id_terms) = (Vec::new(), Vec::new());
    let (mut names, mut name_terms) = (Vec::new(), Vec::new());
    for t in terms {
        if let Some(id) = &t.id {
            ids.push(id.clone());
            id_terms.push(term_label(t));
        } else if let (Some(name), Kind::SecurityGroup) = (&t.name, kind) {
            names.push(name.clone());
            name_terms.push(term_label(t));
        } else {
            out.push(FilterSet {
                terms: vec![term_label(t)],
                filters: Filter::tags(&t.tags, TagValues::Literal),
            });
        }
    }
    if !ids.is_empty() {
        out.push(FilterSet {
            terms: id_terms,
            filters: vec![Filter::new(kind.id_filter(), ids)],
        });
    }
    if !names.is_empty() {
        out.push(FilterSet {
            terms: name_terms,
            filters: vec![Filter::new("group-name", names)],
        });
    }
    out
}

/// What a class's selection found: each request with what it returned, and the union.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution<T> {
    /// Requests and their answers.
    pub sets: Vec<(FilterSet, Vec<T>)>,
    /// The union: subnets by free IPs (most first), then id; groups by id.
    pub items: Vec<T>,
}

/// Resolves classes' subnets and security groups, sending each distinct filter set once.
pub struct NetworkResolver<'a> {
    cloud: &'a dyn Cloud,
    subnets: BTreeMap<Vec<Filter>, Vec<Subnet>>,
    groups: BTreeMap<Vec<Filter>, Vec<SecurityGroup>>,
}

impl<'a> NetworkResolver<'a> {
    /// A resolver over `cloud`.
    pub fn new(cloud: &'a dyn Cloud) -> Self {
        NetworkResolver {
            cloud,
            subnets: BTreeMap::new(),
            groups: BTreeMap::new(),
        }
    }

    /// The class's subnets.
    pub fn subnets(&mut self, class: &NodeClass) -> Result<Resolution<Subnet>, CloudError> {
        let mut sets = Vec::new();
        let mut union: BTreeMap<String, Subnet> = BTreeMap::new();
        for set in filter_sets(class, Kind::Subnet) {
            let found = match self.subnets.get(&set.filters) {
                Some(f) => f.clone(),
                None => {
                    let f = self.cloud.describe_subnets(&set.filters)?;
                    self.subnets.insert(set.filters.clone(), f.clone());
                    f
                }
            };
            for s in &found {
                union.insert(s.id.clone(), s.clone());
            }
            sets.push((set, found));
        }
        let mut items: Vec<Subnet> = union.into_values().collect();
        items.sort_by(|a, b| {
            b.available_ips
                .cmp(&a.available_ips)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(Resolution { sets, items })
    }

    /// The class's security groups.
    pub fn security_groups(
        &mut self,
        class: &NodeClass,
    ) -> Result<Resolution<SecurityGroup>, CloudError> {
        let mut sets = Vec::new();
        let mut union: BTreeMap<String, SecurityGroup> = BTreeMap::new();
        for set in filter_sets(class, Kind::SecurityGroup) {
            let found = match self.groups.get(&set.filters) {
                Some(f) => f.clone(),
                None => {
                    let f = self.cloud.describe_security_groups(&set.filters)?;
                    self.groups.insert(set.filters.clone(), f.clone());
                    f
                }
            };
            for g in &found {
                union.insert(g.id.clone(), g.clone());
            }
            sets.push((set, found));
        }
        Ok(Resolution {
            sets,
            items: union.into_values().collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloud::fake::FakeCloud;

    fn tags(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn subnet(id: &str, zone: &str, ips: i64, t: &[(&str, &str)]) -> Subnet {
        Subnet {
            id: id.into(),
            zone: zone.into(),
            available_ips: ips,
            tags: tags(t),
            ..Subnet::default()
        }
    }

    fn group(id: &str, name: &str, t: &[(&str, &str)]) -> SecurityGroup {
        SecurityGroup {
            id: id.into(),
            name: name.into(),
            tags: tags(t),
            ..SecurityGroup::default()
        }
    }

    fn fake() -> FakeCloud {
        let mut f = FakeCloud::new();
        f.subnets = vec![
            subnet(
                "subnet-a",
                "us-east-1a",
                100,
                &[("discovery", "demo"), ("Name", "private-a")],
            ),
            subnet(
                "subnet-b",
                "us-east-1b",
                300,
                &[("discovery", "demo"), ("Name", "private-b")],
            ),
            subnet(
                "subnet-c",
                "us-east-1c",
                300,
                &[("Name", "public-c"), ("role", "elb")],
            ),
        ];
        f.security_groups = vec![
            group("sg-1", "nodes", &[("discovery", "demo")]),
            group(
                "sg-2",
                "cluster",
                &[("kubernetes.io/cluster/demo", "owned")],
            ),
            group("sg-3", "other", &[("team", "other")]),
        ];
        f
    }

    fn v1_class(subnets: Vec<SelectorTerm>, groups: Vec<SelectorTerm>) -> NodeClass {
        NodeClass {
            name: "c".into(),
            generation: Some(ApiGeneration::V1),
            subnet_selector_terms: subnets,
            security_group_selector_terms: groups,
            ..NodeClass::default()
        }
    }

    fn tag_term(t: &[(&str, &str)]) -> SelectorTerm {
        SelectorTerm {
            tags: tags(t),
            ..SelectorTerm::default()
        }
    }

    fn id_term(id: &str) -> SelectorTerm {
        SelectorTerm {
            id: Some(id.into()),
            ..SelectorTerm::default()
        }
    }

    fn ids<T>(items: &[T], id: impl Fn(&T) -> &str) -> Vec<String> {
        items.iter().map(|i| id(i).to_string()).collect()
    }

    #[test]
    fn v1_terms_are_ored_tags_anded_ids_merged_and_sorted_by_free_ips() {
        let class = v1_class(
            vec![
                tag_term(&[("discovery", "demo"), ("Name", "private-*")]),
                id_term("subnet-c"),
                id_term("subnet-a"),
            ],
            vec![],
        );
        let sets = filter_sets(&class, Kind::Subnet);
        assert_eq!(sets.len(), 2, "{sets:?}");
        assert_eq!(
            sets[1].filters,
            vec![Filter::new("subnet-id", ["subnet-c", "subnet-a"])]
        );
        let f = fake();
        let got = NetworkResolver::new(&f).subnets(&class).unwrap();
        // b and c tie on free IPs: id breaks the tie.
        assert_eq!(
            ids(&got.items, |s| &s.id),
            ["subnet-b", "subnet-c", "subnet-a"]
        );
        assert_eq!(f.call_counts().get("EC2.DescribeSubnets"), 2);
    }

    #[test]
    fn star_means_tag_key_and_v1_does_not_split_commas() {
        let class = v1_class(
            vec![
                tag_term(&[("role", "*")]),
                tag_term(&[("Name", "private-a,private-b")]),
            ],
            vec![],
        );
        let sets = filter_sets(&class, Kind::Subnet);
        assert_eq!(sets[0].filters, vec![Filter::new("tag-key", ["role"])]);
        assert_eq!(
            sets[1].filters,
            vec![Filter::new("tag:Name", ["private-a,private-b"])]
        );
        let f = fake();
        let got = NetworkResolver::new(&f).subnets(&class).unwrap();
        assert_eq!(ids(&got.items, |s| &s.id), ["subnet-c"]);
    }

    #[test]
    fn v1alpha1_selector_is_one_anded_request_with_comma_lists() {
        let mut class = NodeClass {
            generation: Some(ApiGeneration::V1Alpha5),
            ..NodeClass::default()
        };
        class.legacy_selectors.insert(
            "subnetSelector".into(),
            tags(&[("Name", "private-a, private-b"), ("discovery", "*")]),
        );
        class.legacy_selectors.insert(
            "securityGroupSelector".into(),
            tags(&[("aws-ids", "sg-3,sg-1")]),
        );
        let f = fake();
        let mut r = NetworkResolver::new(&f);
        let s = r.subnets(&class).unwrap();
        assert_eq!(s.sets.len(), 1);
        assert_eq!(
            s.sets[0].0.filters,
            vec![
                Filter::new("tag:Name", ["private-a", "private-b"]),
                Filter::new("tag-key", ["discovery"])
            ]
        );
        assert_eq!(ids(&s.items, |s| &s.id), ["subnet-b", "subnet-a"]);
        let g = r.security_groups(&class).unwrap();
        assert_eq!(
            g.sets[0].0.filters,
            vec![Filter::new("group-id", ["sg-3", "sg-1"])]
        );
        assert_eq!(ids(&g.items, |g| &g.id), ["sg-1", "sg-3"]);
    }

    #[test]
    fn group_names_merge_and_identical_sets_are_asked_once_across_classes() {
        let name = |n: &str| SelectorTerm {
            name: Some(n.into()),
            ..SelectorTerm::default()
        };
        let a = v1_class(
            vec![],
            vec![
                name("nodes"),
                name("cluster"),
                tag_term(&[("team", "other")]),
            ],
        );
        let b = v1_class(
            vec![],
            vec![
                name("nodes"),
                name("cluster"),
                tag_term(&[("team", "other")]),
            ],
        );
        let f = fake();
        let mut r = NetworkResolver::new(&f);
        let ga = r.security_groups(&a).unwrap();
        let gb = r.security_groups(&b).unwrap();
        assert_eq!(ga, gb);
        assert_eq!(ids(&ga.items, |g| &g.id), ["sg-1", "sg-2", "sg-3"]);
        assert_eq!(
            ga.sets[1].0.filters,
            vec![Filter::new("group-name", ["nodes", "cluster"])]
        );
        assert_eq!(f.call_counts().get("EC2.DescribeSecurityGroups"), 2);
    }

    /// `aws v1.14.1: pkg/providers/subnet/suite_test.go` "List" and
    /// `pkg/providers/securitygroup/suite_test.go`, one row per It on upstream's fake data
    /// (`subnet-test1..3`, `sg-test1..3` named `securityGroup-test1..3`, tagged `Name` and
    /// `foo: bar` / `TestTag`): an `id` term selects by id alone (its tags are ignored: "IDs
    /// intersected with tags" finds the id), a `name` term by name alone, tags within a term
    /// are ANDed, terms ORed ("should correctly disambiguate AND vs OR semantics for tags"),
    /// `*` any value. The nodeclass controller's `subnet_test.go` / `securitygroup_test.go`
    /// ("Should resolve a valid selectors … by tags / ids", "… updated …", "Should have the
    /// correct ordering for the Subnets": most free IPs first, then id) read the same.
    #[test]
    fn provider_suites_select_by_id_name_and_tags_as_upstream() {
        let mut f = FakeCloud::new();
        f.subnets = vec![
            subnet(
                "subnet-test1",
                "test-zone-1a",
                100,
                &[("Name", "test-subnet-1"), ("foo", "bar")],
            ),
            subnet(
                "subnet-test2",
                "test-zone-1b",
                100,
                &[("Name", "test-subnet-2"), ("foo", "bar")],
            ),
            subnet(
                "subnet-test3",
                "test-zone-1c",
                100,
                &[("Name", "test-subnet-3"), ("TestTag", "x"), ("foo", "bar")],
            ),
        ];
        f.security_groups = vec![
            group(
                "sg-test1",
                "securityGroup-test1",
                &[("Name", "test-security-group-1"), ("foo", "bar")],
            ),
            group(
                "sg-test2",
                "securityGroup-test2",
                &[("Name", "test-security-group-2"), ("foo", "bar")],
            ),
            group(
                "sg-test3",
                "securityGroup-test3",
                &[
                    ("Name", "test-security-group-3"),
                    ("TestTag", "x"),
                    ("foo", "bar"),
                ],
            ),
        ];
        let name_term = |n: &str| SelectorTerm {
            name: Some(n.into()),
            ..SelectorTerm::default()
        };
        let with = |t: SelectorTerm, tags_: &[(&str, &str)]| SelectorTerm {
            tags: tags(tags_),
            ..t
        };
        type Case = (&'static str, Vec<SelectorTerm>, &'static [&'static str]);
        let subnet_cases: Vec<Case> = vec![
            (
                "should discover subnet by ID",
                vec![id_term("subnet-test1")],
                &["subnet-test1"],
            ),
            (
                "should discover subnets by IDs",
                vec![id_term("subnet-test1"), id_term("subnet-test2")],
                &["subnet-test1", "subnet-test2"],
            ),
            (
                "should discover subnets by IDs and tags",
                vec![
                    with(id_term("subnet-test1"), &[("foo", "bar")]),
                    with(id_term("subnet-test2"), &[("foo", "bar")]),
                ],
                &["subnet-test1", "subnet-test2"],
            ),
            (
                "should discover subnets by a single tag",
                vec![tag_term(&[("Name", "test-subnet-1")])],
                &["subnet-test1"],
            ),
            (
                "should discover subnets by multiple tag values",
                vec![
                    tag_term(&[("Name", "test-subnet-1")]),
                    tag_term(&[("Name", "test-subnet-2")]),
                ],
                &["subnet-test1", "subnet-test2"],
            ),
            (
                "should discover subnets by IDs intersected with tags",
                vec![with(id_term("subnet-test2"), &[("foo", "bar")])],
                &["subnet-test2"],
            ),
            (
                "AND within a term",
                vec![tag_term(&[("Name", "test-subnet-3"), ("TestTag", "*")])],
                &["subnet-test3"],
            ),
            (
                "AND within a term, nothing matches both",
                vec![tag_term(&[("Name", "test-subnet-1"), ("TestTag", "*")])],
                &[],
            ),
            (
                "any value",
                vec![tag_term(&[("*", "*")])],
                &["subnet-test1", "subnet-test2", "subnet-test3"],
            ),
        ];
        for (it, terms, want) in subnet_cases {
            let got = NetworkResolver::new(&f)
                .subnets(&v1_class(terms, vec![]))
                .unwrap();
            assert_eq!(ids(&got.items, |s| &s.id), want, "{it}");
        }
        let group_cases: Vec<Case> = vec![
            (
                "should default to the clusters security groups",
                vec![tag_term(&[("*", "*")])],
                &["sg-test1", "sg-test2", "sg-test3"],
            ),
            (
                "should discover security groups by tag",
                vec![tag_term(&[("Name", "test-security-group-1")])],
                &["sg-test1"],
            ),
            (
                "should discover security groups by multiple tag values",
                vec![
                    tag_term(&[("Name", "test-security-group-1")]),
                    tag_term(&[("Name", "test-security-group-2")]),
                ],
                &["sg-test1", "sg-test2"],
            ),
            (
                "should discover security groups by ID",
                vec![id_term("sg-test1")],
                &["sg-test1"],
            ),
            (
                "should discover security groups by IDs",
                vec![id_term("sg-test1"), id_term("sg-test2")],
                &["sg-test1", "sg-test2"],
            ),
            (
                "should discover security groups by IDs and tags",
                vec![
                    with(id_term("sg-test1"), &[("foo", "bar")]),
                    with(id_term("sg-test2"), &[("foo", "bar")]),
                ],
                &["sg-test1", "sg-test2"],
            ),
            (
                "should discover security groups by IDs intersected with tags",
                vec![with(id_term("sg-test2"), &[("foo", "bar")])],
                &["sg-test2"],
            ),
            (
                "should discover security groups by names",
                vec![
                    name_term("securityGroup-test2"),
                    name_term("securityGroup-test3"),
                ],
                &["sg-test2", "sg-test3"],
            ),
            (
                "should discover security groups by names intersected with tags",
                vec![with(name_term("securityGroup-test3"), &[("TestTag", "*")])],
                &["sg-test3"],
            ),
        ];
        for (it, terms, want) in group_cases {
            let got = NetworkResolver::new(&f)
                .security_groups(&v1_class(vec![], terms))
                .unwrap();
            assert_eq!(ids(&got.items, |g| &g.id), want, "{it}");
        }
    }

    #[test]
    fn cloud_errors_surface() {
        let f = fake();
        f.fail(
            "EC2.DescribeSubnets",
            CloudError::Api {
                service: "EC2".into(),
                operation: "DescribeSubnets".into(),
                code: "UnauthorizedOperation".into(),
                message: "You are not authorized".into(),
            },
        );
        let class = v1_class(vec![tag_term(&[("discovery", "demo")])], vec![]);
        let err = NetworkResolver::new(&f).subnets(&class).unwrap_err();
        assert!(err.is_permission());
    }
}
