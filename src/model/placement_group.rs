//! EC2 placement groups an EC2NodeClass selects (`spec.placementGroupSelector`, aws v1.14+):
//! the selector, the group it resolves to, and the requirements a resolved group puts on the
//! class's instance types.
//!
//! Upstream (`aws v1.14.1`): `pkg/providers/placementgroup/types.go` (`PlacementGroup`,
//! `Query.DescribePlacementGroupsInput`: by `GroupIds` when the selector has an id, else by
//! `GroupNames`, always `state=available`), `provider.go` `Get` (the first group answered, none
//! when the answer is empty), `pkg/providers/instancetype/offering/offering.go` `InjectOfferings`
//! (the requirements) and `offering/placement_group_resolver.go` (one offering per partition).

use serde_json::Value;

use super::labels;
use super::nodepool::{ApiGeneration, NodeClass};
use super::requirements::{Operator, Requirement, Requirements};

/// `spec.placementGroupSelector`: `id` or `name` (the CRD requires exactly one).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlacementGroupSelector {
    /// `id` (`pg-…`).
    pub id: Option<String>,
    /// `name`.
    pub name: Option<String>,
}

impl PlacementGroupSelector {
    /// The selector of a v1 class, when it sets one.
    pub fn of(class: &NodeClass) -> Option<PlacementGroupSelector> {
        if class.generation.is_some_and(|g| g != ApiGeneration::V1) {
            return None;
        }
        let s = class.raw_spec.as_ref()?.get("placementGroupSelector")?;
        let text = |k: &str| {
            s.get(k)
                .and_then(Value::as_str)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        if !s.is_object() {
            return None;
        }
        Some(PlacementGroupSelector {
            id: text("id"),
            name: text("name"),
        })
    }

    /// Whether `group` answers this selector's DescribePlacementGroups query (`Query`: the id
    /// when given, else the name).
    pub fn matches(&self, group: &PlacementGroup) -> bool {
        match (&self.id, &self.name) {
            (Some(id), _) => *id == group.id,
            (None, Some(name)) => *name == group.name,
            (None, None) => false,
        }
    }

    /// The group this selector resolves to among `groups` (available ones), if any
    /// (`provider.go` `Get`: the first answered).
    pub fn resolve<'a>(&self, groups: &'a [PlacementGroup]) -> Option<&'a PlacementGroup> {
        groups.iter().find(|g| self.matches(g))
    }
}

impl std::fmt::Display for PlacementGroupSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.id, &self.name) {
            (Some(id), _) => write!(f, "id {id}"),
            (None, Some(name)) => write!(f, "name {name}"),
            (None, None) => f.write_str("(empty)"),
        }
    }
}

/// A placement group's strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Strategy {
    /// `cluster`.
    Cluster,
    /// `partition`.
    Partition,
    /// `spread`.
    Spread,
}

impl Strategy {
    /// EC2's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Cluster => "cluster",
            Strategy::Partition => "partition",
            Strategy::Spread => "spread",
        }
    }

    /// From EC2's value.
    pub fn parse(s: &str) -> Option<Strategy> {
        match s {
            "cluster" => Some(Strategy::Cluster),
            "partition" => Some(Strategy::Partition),
            "spread" => Some(Strategy::Spread),
            _ => None,
        }
    }
}

/// A resolved placement group (`placementgroup.PlacementGroup`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacementGroup {
    /// `GroupId`.
    pub id: String,
    /// `GroupName`.
    pub name: String,
    /// `Strategy`.
    pub strategy: Strategy,
    /// `PartitionCount` (partition groups; 0 otherwise).
    pub partition_count: u32,
    /// `SpreadLevel` (`rack`, `host`) of a spread group; read, not used for planning.
    pub spread_level: Option<String>,
}

impl PlacementGroup {
    /// The partitions an instance may be launched into, `1..=partitionCount`, of a partition
    /// group; none otherwise.
    pub fn partitions(&self) -> Vec<String> {
        if self.strategy != Strategy::Partition {
            return Vec::new();
        }
        (1..=self.partition_count).map(|p| p.to_string()).collect()
    }

    /// Adds the group's requirements to an instance type's (`offering.go` `InjectOfferings`):
    /// `placement-group-id In [id]`, and for a partition group with partitions
    /// `placement-group-partition In [1..N]`, so the scheduler discovers the partitions as
    /// topology domains.
    pub fn constrain(&self, r: &mut Requirements) {
        r.remove(labels::PLACEMENT_GROUP_ID);
        r.add(Requirement::single(labels::PLACEMENT_GROUP_ID, &self.id));
        let partitions = self.partitions();
        if !partitions.is_empty() {
            r.remove(labels::PLACEMENT_GROUP_PARTITION);
            r.add(Requirement::new(
                labels::PLACEMENT_GROUP_PARTITION,
                Operator::In,
                partitions,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(strategy: Strategy, partitions: u32) -> PlacementGroup {
        PlacementGroup {
            id: "pg-0123".into(),
            name: "pg-a".into(),
            strategy,
            partition_count: partitions,
            spread_level: None,
        }
    }

    /// `aws v1.14.1: pkg/providers/placementgroup/suite_test.go` "should resolve by ID" /
    /// "should resolve by name" / "should return nil when not found" (the query is the id when
    /// the selector has one, else the name).
    #[test]
    fn a_selector_resolves_by_id_else_by_name() {
        let groups = [group(Strategy::Cluster, 0)];
        let by_id = PlacementGroupSelector {
            id: Some("pg-0123".into()),
            name: None,
        };
        let by_name = PlacementGroupSelector {
            id: None,
            name: Some("pg-a".into()),
        };
        let missing = PlacementGroupSelector {
            id: None,
            name: Some("pg-b".into()),
        };
        assert_eq!(by_id.resolve(&groups), Some(&groups[0]));
        assert_eq!(by_name.resolve(&groups), Some(&groups[0]));
        assert_eq!(missing.resolve(&groups), None);
    }

    /// `aws v1.14.1: pkg/providers/instancetype/suite_test.go` placement-group entries and
    /// `offering.go` `InjectOfferings`: every group gives `placement-group-id In [id]`; a
    /// partition group also `placement-group-partition In [1..N]`.
    #[test]
    fn a_group_constrains_the_types_requirements() {
        let mut r = Requirements::new();
        group(Strategy::Cluster, 0).constrain(&mut r);
        assert!(r.get(labels::PLACEMENT_GROUP_ID).has("pg-0123"));
        assert!(r.get_ref(labels::PLACEMENT_GROUP_PARTITION).is_none());
        let mut r = Requirements::new();
        group(Strategy::Partition, 3).constrain(&mut r);
        let p = r.get(labels::PLACEMENT_GROUP_PARTITION);
        assert_eq!(p.values().len(), 3);
        assert!(p.has("1") && p.has("3") && !p.has("4"));
    }
}
