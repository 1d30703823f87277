//! NodePool disruption budgets (docs/karpenter.md §5.2; `core main: pkg/apis/v1/nodepool.go
//! GetAllowedDisruptionsByReason`, `disruption/helpers.go BuildDisruptionBudgetMapping`):
//!
//! 1. a budget is active with no schedule, or when its cron (UTC) last hit within `duration`;
//! 2. `nodes` is a count or a percentage of the pool's managed, initialized, not-terminating
//!    nodes, rounded **up**;
//! 3. allowed for a reason = the minimum over active budgets whose `reasons` is empty or names
//!    the reason (no active budget: unlimited);
//! 4. minus the pool's nodes that are NotReady or already being deleted; floor 0.
//!
//! Karpenter treats an invalid budget as "0 allowed" (nothing is disrupted rather than too much);
//! so does [`allowed_disruptions`], and it says which budget was invalid.

use std::fmt;

use std::collections::BTreeSet;

use super::time::{parse_duration, Schedule, TimeError};
use crate::model::node::Node;
use crate::model::nodeclaim::NodeClaim;
use crate::model::nodepool::{Budget, NodePool};

/// A reason Karpenter disrupts for (budget `reasons` values, v1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DisruptionReason {
    /// Drift.
    Drifted,
    /// Consolidation of underutilized nodes.
    Underutilized,
    /// Emptiness.
    Empty,
}

impl DisruptionReason {
    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            DisruptionReason::Drifted => "Drifted",
            DisruptionReason::Underutilized => "Underutilized",
            DisruptionReason::Empty => "Empty",
        }
    }
}

impl fmt::Display for DisruptionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a budget cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// `nodes` is neither a count nor a percentage.
    #[error("nodes {0:?} is not a count or a percentage (e.g. 5 or 10%)")]
    Nodes(String),
    /// A schedule without a duration, or the other way round.
    #[error("schedule and duration must be set together")]
    ScheduleWithoutDuration,
    /// Bad schedule or duration.
    #[error(transparent)]
    Time(#[from] TimeError),
}

/// `nodes` of a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodesValue {
    /// A count.
    Count(u32),
    /// A percentage of the pool's nodes (0–100), rounded up.
    Percent(u32),
}

impl NodesValue {
    /// Parses `5` or `10%`.
    pub fn parse(text: &str) -> Result<NodesValue, BudgetError> {
        let t = text.trim();
        let bad = || BudgetError::Nodes(text.to_string());
        if let Some(p) = t.strip_suffix('%') {
            let n: u32 = p.parse().map_err(|_| bad())?;
            if n > 100 {
                return Err(bad());
            }
            return Ok(NodesValue::Percent(n));
        }
        t.parse().map(NodesValue::Count).map_err(|_| bad())
    }

    /// The count against `total` nodes (percentages rounded up, as
    /// `intstr.GetScaledValueFromIntOrPercent(…, roundUp=true)`).
    pub fn scaled(self, total: u32) -> u32 {
        match self {
            NodesValue::Count(n) => n,
            NodesValue::Percent(p) => ((u64::from(p) * u64::from(total)).div_ceil(100)) as u32,
        }
    }
}

/// A budget, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedBudget {
    /// `nodes`.
    pub nodes: NodesValue,
    /// Schedule and window length in seconds.
    pub window: Option<(Schedule, i64)>,
    /// Reasons (empty: all).
    pub reasons: Vec<String>,
}

impl ParsedBudget {
    /// Validates a budget.
    pub fn parse(b: &Budget) -> Result<ParsedBudget, BudgetError> {
        let nodes = NodesValue::parse(&b.nodes)?;
        let window = match (&b.schedule, &b.duration) {
            (None, None) => None,
            (Some(s), Some(d)) => Some((Schedule::parse(s)?, parse_duration(d)?)),
            _ => return Err(BudgetError::ScheduleWithoutDuration),
        };
        Ok(ParsedBudget {
            nodes,
            window,
            reasons: b.reasons.clone(),
        })
    }

    /// Active at `now`.
    pub fn active(&self, now: i64) -> bool {
        match &self.window {
            None => true,
            Some((schedule, duration)) => schedule.active(now, *duration),
        }
    }

    /// Applies to `reason`.
    pub fn applies_to(&self, reason: DisruptionReason) -> bool {
        self.reasons.is_empty() || self.reasons.iter().any(|r| r == reason.as_str())
    }
}

/// A budget's window for people (`"0 9 * * *" for 1h`), saying when its schedule never comes
/// round: Karpenter then treats the budget as always active (core v1.14.1
/// `pkg/apis/v1/nodepool.go` `IsActive` on robfig's zero time), which the window alone would
/// hide.
pub fn window_text(budget: &Budget, now: i64) -> Option<String> {
    let text = budget.window()?;
    let never = budget
        .schedule
        .as_deref()
        .and_then(|s| Schedule::parse(s).ok())
        .is_some_and(|s| !s.comes_round(now));
    Some(match never {
        true => format!("{text} (a schedule that never comes round: always active)"),
        false => text,
    })
}

/// How many nodes of a pool may be disrupted now for one reason, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowance {
    /// Nodes that may start disrupting now; `None` = unlimited (no active budget applies).
    pub allowed: Option<u32>,
    /// Nodes the percentages are scaled against (managed, initialized, not terminating).
    pub counted_nodes: u32,
    /// Nodes already disrupting (NotReady or being deleted), subtracted.
    pub disrupting: u32,
    /// Index (in `spec.disruption.budgets`) of the budget that set the limit.
    pub limiting_budget: Option<usize>,
    /// A budget Karpenter would reject (it allows 0 then), with the problem.
    pub invalid: Option<(usize, BudgetError)>,
}

impl Allowance {
    /// Whether at least one more node may be disrupted.
    pub fn permits_one(&self) -> bool {
        self.allowed.is_none_or(|n| n > 0)
    }

    /// One line for people: `1 of 10 nodes (budget #0: nodes 10%, 0 disrupting)`.
    pub fn explain(&self, pool: &NodePool) -> String {
        if let Some((i, e)) = &self.invalid {
            return format!(
                "0 allowed: budget #{i} of NodePool {} is invalid: {e}",
                pool.name
            );
        }
        let budget = |i: usize| {
            pool.disruption
                .budgets
                .get(i)
                .map(|b| {
                    let mut s = format!("nodes {}", b.nodes);
                    if let Some(w) = b.window() {
                        s.push_str(&format!(", schedule {w}"));
                    }
                    if !b.reasons.is_empty() {
                        s.push_str(&format!(", reasons {}", b.reasons.join(",")));
                    }
                    s
                })
                .unwrap_or_default()
        };
        match (self.allowed, self.limiting_budget) {
            (None, _) => format!(
                "unlimited (no active budget of NodePool {} applies)",
                pool.name
            ),
            (Some(n), Some(i)) => format!(
                "{n} allowed (budget #{i}: {} of {} nodes, {} already disrupting)",
                budget(i),
                self.counted_nodes,
                self.disrupting
            ),
            (Some(n), None) => format!("{n} allowed"),
        }
    }
}

/// The pool's nodes as budgets count them: `(counted, disrupting)`.
pub fn count_nodes<'a>(pool: &NodePool, nodes: impl IntoIterator<Item = &'a Node>) -> (u32, u32) {
    let mut counted = 0u32;
    let mut disrupting = 0u32;
    for n in nodes {
        if n.labels.get(pool.owner_label()) != Some(&pool.name) || !n.initialized {
            continue;
        }
        counted += 1;
        if !n.ready || n.deleting {
            disrupting += 1;
        }
    }
    (counted, disrupting)
}

/// The nodes whose NodeClaim says its instance is already terminating (`InstanceTerminating=True`:
/// drained, and the cloud provider's delete succeeded). Budgets leave them out altogether —
/// neither counted nor disrupting: `core v1.14.1: pkg/controllers/disruption/helpers.go`
/// `BuildDisruptionBudgetMapping` skips them before counting (so `nodes: 50%` of 10 nodes,
/// one of them terminating, is ceil(9 × 50%) = 5 with none disrupting, not 5 − 1). Matched
/// to Nodes by `status.nodeName` or `status.providerID`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminatingInstances {
    names: BTreeSet<String>,
    provider_ids: BTreeSet<String>,
}

impl TerminatingInstances {
    /// The terminating ones of `claims`.
    pub fn of<'a>(claims: impl IntoIterator<Item = &'a NodeClaim>) -> TerminatingInstances {
        let mut t = TerminatingInstances::default();
        for c in claims.into_iter().filter(|c| {
            c.conditions
                .get("InstanceTerminating")
                .is_some_and(|s| s == "True")
        }) {
            t.names.extend(c.node_name.clone());
            t.provider_ids.extend(c.provider_id.clone());
        }
        t
    }

    /// Whether `node`'s NodeClaim is terminating.
    pub fn holds(&self, node: &Node) -> bool {
        self.names.contains(&node.name)
            || node
                .provider_id
                .as_ref()
                .is_some_and(|p| self.provider_ids.contains(p))
    }

    /// `nodes` without the terminating ones: what budgets count.
    pub fn counted<'a>(&self, nodes: impl IntoIterator<Item = &'a Node>) -> Vec<Node> {
        nodes
            .into_iter()
            .filter(|n| !self.holds(n))
            .cloned()
            .collect()
    }
}

/// How many of the pool's nodes may start disrupting for `reason` at `now` (epoch seconds).
/// `nodes` may hold any nodes; only the pool's managed, initialized ones count. A NodeClaim
/// whose instance is already terminating should be left out by the caller (Karpenter skips it):
/// [`TerminatingInstances::counted`].
pub fn allowed_disruptions<'a>(
    pool: &NodePool,
    nodes: impl IntoIterator<Item = &'a Node>,
    reason: DisruptionReason,
    now: i64,
) -> Allowance {
    let (counted, disrupting) = count_nodes(pool, nodes);
    allowed_for_counts(pool, counted, disrupting, reason, now)
}

/// [`allowed_disruptions`] for a caller that counted the pool's nodes itself (`counted`
/// managed, initialized, not terminating; `disrupting` of them NotReady or being deleted), e.g.
/// a simulation whose own actions are in flight.
pub fn allowed_for_counts(
    pool: &NodePool,
    counted: u32,
    disrupting: u32,
    reason: DisruptionReason,
    now: i64,
) -> Allowance {
    let mut allowance = Allowance {
        allowed: None,
        counted_nodes: counted,
        disrupting,
        limiting_budget: None,
        invalid: None,
    };
    for (i, b) in pool.disruption.budgets.iter().enumerate() {
        let parsed = match ParsedBudget::parse(b) {
            Ok(p) => p,
            Err(e) => {
                allowance.allowed = Some(0);
                allowance.limiting_budget = Some(i);
                allowance.invalid = Some((i, e));
                return allowance;
            }
        };
        if !parsed.applies_to(reason) || !parsed.active(now) {
            continue;
        }
        let n = parsed.nodes.scaled(counted);
        if allowance.allowed.is_none_or(|cur| n < cur) {
            allowance.allowed = Some(n);
            allowance.limiting_budget = Some(i);
        }
    }
    if let Some(n) = allowance.allowed {
        allowance.allowed = Some(n.saturating_sub(disrupting));
    }
    allowance
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::labels;
    use crate::model::time::parse_rfc3339;

    fn node(name: &str, pool: &str, ready: bool, deleting: bool) -> Node {
        Node {
            name: name.into(),
            labels: [(labels::NODEPOOL.to_string(), pool.to_string())]
                .into_iter()
                .collect(),
            ready,
            initialized: true,
            deleting,
            ..Node::default()
        }
    }

    fn nodes(n: usize) -> Vec<Node> {
        (0..n)
            .map(|i| node(&format!("n{i}"), "default", true, false))
            .collect()
    }

    fn budget(
        nodes: &str,
        schedule: Option<&str>,
        duration: Option<&str>,
        reasons: &[&str],
    ) -> Budget {
        Budget {
            nodes: nodes.into(),
            schedule: schedule.map(str::to_string),
            duration: duration.map(str::to_string),
            reasons: reasons.iter().map(|r| r.to_string()).collect(),
        }
    }

    fn pool(budgets: Vec<Budget>) -> NodePool {
        let mut p = NodePool {
            name: "default".into(),
            generation: Some(crate::model::nodepool::ApiGeneration::V1),
            ..NodePool::default()
        };
        p.disruption.budgets = budgets;
        p
    }

    fn at(text: &str) -> i64 {
        parse_rfc3339(text).unwrap()
    }

    const NOON_MONDAY: &str = "2024-06-24T12:00:00Z";

    #[test]
    fn percentages_round_up_against_the_pools_nodes() {
        let p = pool(vec![budget("10%", None, None, &[])]);
        let now = at(NOON_MONDAY);
        for (count, want) in [(0, 0), (1, 1), (9, 1), (10, 1), (11, 2), (25, 3)] {
            let a = allowed_disruptions(&p, &nodes(count), DisruptionReason::Drifted, now);
            assert_eq!(a.allowed, Some(want), "{count} nodes");
        }
        // Other pools' and uninitialized nodes do not count.
        let mut ns = nodes(10);
        ns.push(node("other", "gpu", true, false));
        let mut fresh = node("fresh", "default", true, false);
        fresh.initialized = false;
        ns.push(fresh);
        let a = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, now);
        assert_eq!(a.counted_nodes, 10);
        assert_eq!(NodesValue::parse("0%").unwrap().scaled(7), 0);
        assert_eq!(NodesValue::parse("100%").unwrap().scaled(7), 7);
    }

    #[test]
    fn the_minimum_of_active_budgets_applies() {
        let p = pool(vec![
            budget("50%", None, None, &[]),
            budget("3", None, None, &[]),
            budget("0", Some("0 9 * * mon-fri"), Some("8h"), &[]),
        ]);
        let ns = nodes(20);
        let a = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, at(NOON_MONDAY));
        assert_eq!(a.allowed, Some(0), "business hours freeze");
        assert_eq!(a.limiting_budget, Some(2));
        let evening = allowed_disruptions(
            &p,
            &ns,
            DisruptionReason::Drifted,
            at("2024-06-24T17:00:00Z"),
        );
        assert_eq!(evening.allowed, Some(3), "window closed at 17:00");
        let weekend = allowed_disruptions(
            &p,
            &ns,
            DisruptionReason::Drifted,
            at("2024-06-23T12:00:00Z"),
        );
        assert_eq!(weekend.allowed, Some(3));
        assert!(weekend
            .explain(&p)
            .starts_with("3 allowed (budget #1: nodes 3 of 20 nodes"));
    }

    #[test]
    fn reasons_filter_budgets_and_no_active_budget_is_unlimited() {
        let p = pool(vec![
            budget("0", None, None, &["Underutilized", "Empty"]),
            budget("2", Some("@daily"), Some("1h"), &["Drifted"]),
        ]);
        let ns = nodes(10);
        let midnight = at("2024-06-24T00:30:00Z");
        assert_eq!(
            allowed_disruptions(&p, &ns, DisruptionReason::Drifted, midnight).allowed,
            Some(2)
        );
        assert_eq!(
            allowed_disruptions(&p, &ns, DisruptionReason::Empty, midnight).allowed,
            Some(0)
        );
        let a = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, at(NOON_MONDAY));
        assert_eq!(a.allowed, None, "the drift budget is outside its window");
        assert!(a.permits_one());
        assert!(a.explain(&p).starts_with("unlimited"));
    }

    #[test]
    fn not_ready_and_deleting_nodes_are_subtracted_with_a_floor_of_zero() {
        let p = pool(vec![budget("3", None, None, &[])]);
        let mut ns = nodes(8);
        ns.push(node("sick", "default", false, false));
        ns.push(node("going", "default", true, true));
        let a = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, at(NOON_MONDAY));
        assert_eq!((a.allowed, a.disrupting, a.counted_nodes), (Some(1), 2, 10));
        ns.push(node("sick2", "default", false, true));
        ns.push(node("sick3", "default", false, false));
        let a = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, at(NOON_MONDAY));
        assert_eq!(a.allowed, Some(0));
        assert!(!a.permits_one());
    }

    #[test]
    fn invalid_budgets_allow_nothing_and_say_why() {
        for b in [
            budget("ten", None, None, &[]),
            budget("120%", None, None, &[]),
            budget("1", Some("0 9 * *"), Some("1h"), &[]),
            budget("1", Some("0 9 * * *"), None, &[]),
            budget("1", Some("0 9 * * *"), Some("1y"), &[]),
        ] {
            let p = pool(vec![budget("10", None, None, &[]), b.clone()]);
            let a = allowed_disruptions(&p, &nodes(5), DisruptionReason::Drifted, at(NOON_MONDAY));
            assert_eq!(a.allowed, Some(0), "{b:?}");
            assert!(
                a.explain(&p)
                    .contains("budget #1 of NodePool default is invalid"),
                "{}",
                a.explain(&p)
            );
        }
    }

    /// A Drifted-only weekend window written `0 0 * * 6,7` (session 26 sweep): robfig's
    /// day-of-week stops at 6, so core v1.14.1 `pkg/apis/v1/nodepool.go`
    /// `GetAllowedDisruptionsByReason` returns an error with the budget's 0, and
    /// `MustGetAllowedDisruptions` (`disruption/helpers.go` `BuildDisruptionBudgetMapping`)
    /// turns any error into 0 for every reason: on a Wednesday an empty node is not deleted.
    #[test]
    fn a_day_of_week_seven_blocks_every_reason_as_karpenter_fails_closed() {
        let p = pool(vec![
            budget("0", Some("0 0 * * 6,7"), Some("24h"), &["Drifted"]),
            budget("100%", None, None, &[]),
        ]);
        let wednesday = at("2024-06-05T02:00:00Z");
        for reason in [DisruptionReason::Empty, DisruptionReason::Underutilized] {
            let a = allowed_disruptions(&p, &nodes(5), reason, wednesday);
            assert_eq!(a.allowed, Some(0), "{reason}");
            assert!(
                a.explain(&p).contains("7 is outside 0-6"),
                "{}",
                a.explain(&p)
            );
        }
        let sunday_zero = pool(vec![
            budget("0", Some("0 0 * * 6,0"), Some("24h"), &["Drifted"]),
            budget("100%", None, None, &[]),
        ]);
        let a = allowed_disruptions(&sunday_zero, &nodes(5), DisruptionReason::Empty, wednesday);
        assert_eq!(a.allowed, Some(5));
    }

    /// Session 27 sweep: a budget whose schedule never comes round — `* * 31 2 *`, the CronJob
    /// idiom for "never", written to switch a budget off. robfig/cron v3 `SpecSchedule.Next`
    /// returns Go's zero time when no hit comes within five years, and core v1.14.1
    /// `pkg/apis/v1/nodepool.go` `IsActive` (`!nextHit.After(now)`) takes that as active: the
    /// budget's 0 holds its reasons forever instead of never.
    #[test]
    fn a_schedule_that_never_comes_round_is_always_active() {
        let p = pool(vec![
            budget(
                "0",
                Some("* * 31 2 *"),
                Some("1h"),
                &["Drifted", "Underutilized"],
            ),
            budget("100%", None, None, &[]),
        ]);
        for now in [
            "2024-06-05T02:00:00Z",
            "2025-02-28T23:59:00Z",
            "2031-01-01T00:00:00Z",
        ] {
            let a = allowed_disruptions(&p, &nodes(5), DisruptionReason::Underutilized, at(now));
            assert_eq!(a.allowed, Some(0), "{now}");
            let a = allowed_disruptions(&p, &nodes(5), DisruptionReason::Empty, at(now));
            assert_eq!(a.allowed, Some(5), "{now}");
        }
        // Said so where the window is shown: "in its window … for 1h" alone reads as one hour.
        let now = at("2024-06-05T02:00:00Z");
        assert_eq!(
            window_text(&p.disruption.budgets[0], now).unwrap(),
            "\"* * 31 2 *\" for 1h (a schedule that never comes round: always active)"
        );
        let daily = budget("0", Some("0 9 * * *"), Some("1h"), &[]);
        assert_eq!(window_text(&daily, now).unwrap(), "\"0 9 * * *\" for 1h");
        assert_eq!(window_text(&budget("0", None, None, &[]), now), None);
    }

    /// core v1.14.1 `pkg/apis/v1/nodepool_budgets_test.go`, its `BeforeEach` budgets on 100
    /// nodes at the suite's clock (2000-06-15 12:30:30 UTC, a Thursday): "10", "100", "100%",
    /// "15" for Drifted+Underutilized, "5" for Drifted (all `* * * * *` for 1h) and "0" for all
    /// three reasons `@weekly`. GetAllowedDisruptionsByReason: "should return 0 for all reasons
    /// if a budget is active for all reasons", "should return MaxInt32 for all reasons when there
    /// are no active budgets" (unlimited: `None`), "should ignore reason-defined budgets when
    /// inactive", "should return the budget for all disruption reasons when undefined", "should
    /// get the minimum budget for each reason"; AllowedDisruptions: "should return MaxInt32 when
    /// a budget is inactive", "… the int value …", "… the string value when a budget is active",
    /// "should return zero values if a schedule is invalid" / "… if a nodes value is invalid".
    #[test]
    fn nodepool_budgets_test_fixture_by_reason() {
        let now = at("2000-06-15T12:30:30Z");
        let every = |n: &str, reasons: &[&str]| budget(n, Some("* * * * *"), Some("1h"), reasons);
        let fixture = || {
            vec![
                every("10", &[]),
                every("100", &[]),
                every("100%", &[]),
                every("15", &["Drifted", "Underutilized"]),
                every("5", &["Drifted"]),
                budget(
                    "0",
                    Some("@weekly"),
                    Some("1h"),
                    &["Underutilized", "Drifted", "Empty"],
                ),
            ]
        };
        let reasons = [
            DisruptionReason::Empty,
            DisruptionReason::Underutilized,
            DisruptionReason::Drifted,
        ];
        let ns = nodes(100);
        let by_reason = |budgets: Vec<Budget>| -> Vec<Option<u32>> {
            let p = pool(budgets);
            reasons
                .iter()
                .map(|&r| allowed_disruptions(&p, &ns, r, now).allowed)
                .collect()
        };

        let mut all_active = fixture();
        all_active[5].schedule = Some("* * * * *".into());
        assert_eq!(by_reason(all_active), [Some(0); 3]);

        let mut none_active = fixture();
        for b in &mut none_active {
            b.schedule = Some("@yearly".into());
        }
        assert_eq!(by_reason(none_active), [None; 3]);

        let mut reasons_inactive = fixture();
        reasons_inactive[3].schedule = Some("@yearly".into());
        reasons_inactive[4].schedule = Some("@yearly".into());
        assert_eq!(by_reason(reasons_inactive), [Some(10); 3]);

        assert_eq!(by_reason(fixture()[..1].to_vec()), [Some(10); 3]);

        let mut minimum = fixture();
        minimum.push(every("4", &["Empty"]));
        // Empty 4, Underutilized 10 (the reason-less "10" is below the "15"), Drifted 5.
        assert_eq!(by_reason(minimum), [Some(4), Some(10), Some(5)]);

        // AllowedDisruptions of single budgets.
        let one = |b: Budget| allowed_disruptions(&pool(vec![b]), &ns, reasons[0], now);
        let mut inactive = fixture()[0].clone();
        inactive.schedule = Some("@yearly".into());
        assert_eq!(one(inactive).allowed, None);
        assert_eq!(one(fixture()[0].clone()).allowed, Some(10));
        assert_eq!(one(fixture()[2].clone()).allowed, Some(100));
        let mut bad_schedule = fixture()[0].clone();
        bad_schedule.schedule = Some("@wrongly".into());
        let mut bad_nodes = fixture()[0].clone();
        bad_nodes.nodes = "1000a%".into();
        for b in [bad_schedule, bad_nodes] {
            let a = one(b.clone());
            assert_eq!((a.allowed, a.invalid.is_some()), (Some(0), true), "{b:?}");
        }
    }

    /// core v1.14.1 `helpers.go BuildDisruptionBudgetMapping`: a node whose NodeClaim is
    /// `InstanceTerminating=True` is neither counted nor disrupting — 10 nodes, `nodes: 50%`,
    /// one terminating (and being deleted): ceil(9 × 50%) = 5 allowed.
    #[test]
    fn a_node_whose_instance_is_terminating_is_left_out_of_the_count() {
        let p = pool(vec![budget("50%", None, None, &[])]);
        let mut ns = nodes(10);
        ns[3].deleting = true;
        ns[3].provider_id = Some("aws:///us-west-2a/i-3".into());
        let claim = |name: Option<&str>, id: Option<&str>, status: &str| NodeClaim {
            name: "c".into(),
            node_name: name.map(Into::into),
            provider_id: id.map(Into::into),
            conditions: [("InstanceTerminating".to_string(), status.to_string())]
                .into_iter()
                .collect(),
            ..NodeClaim::default()
        };
        let all = allowed_disruptions(&p, &ns, DisruptionReason::Drifted, 0);
        assert_eq!(
            (all.allowed, all.counted_nodes, all.disrupting),
            (Some(4), 10, 1)
        );
        for c in [
            claim(Some("n3"), None, "True"),
            claim(None, Some("aws:///us-west-2a/i-3"), "True"),
        ] {
            let counted = TerminatingInstances::of([&c]).counted(&ns);
            let a = allowed_disruptions(&p, &counted, DisruptionReason::Drifted, 0);
            assert_eq!((a.allowed, a.counted_nodes, a.disrupting), (Some(5), 9, 0));
        }
        let not_yet = TerminatingInstances::of([&claim(Some("n3"), None, "False")]);
        assert_eq!(not_yet.counted(&ns).len(), 10);
    }
}
