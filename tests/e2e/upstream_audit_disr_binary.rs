//! The disruption-side Its no earlier pass mirrored, replayed through the built binary
//! (docs/upstream-tests.md, "Disruption Its left unmirrored, audited (s24-audit-disr)"): core
//! v1.14.1 `pkg/apis/v1/nodepool_budgets_test.go` (its budget fixture by reason),
//! `pkg/controllers/disruption/balanced_scoring_test.go` and `balanced_adversarial_test.go`
//! (what a Balanced move saves), aws v1.14.1 `pkg/apis/v1/ec2nodeclass_hash_test.go` (the hashed
//! fields no drift replay had: connection tracking, CPU options, instance profile, order).
//! `consolidate -f - --now … -o json --catalog …` and `drift check -f … -o json` on the
//! scenarios; the helpers are the earlier replays' (`upstream_disruption_binary.rs`,
//! `upstream_drift_binary.rs`). Each test names its upstream file and It.

use serde_json::{json, Value};

use crate::upstream_disruption_binary::{
    fake_price, fake_type, offering, pool, Report, Sc, EARLIER, MOST,
};
use crate::upstream_drift_binary::{assert_all, base_class, case};
use crate::upstream_e2e_disruption::disrupted_by;

// ---------------------------------------------------------------------------------------------
// nodepool_budgets_test.go › GetAllowedDisruptionsByReason
// ---------------------------------------------------------------------------------------------

/// The suite's `BeforeEach` budgets: "10", "100", "100%" always active (`* * * * *`, 1h);
/// "15" for Drifted and Underutilized, "5" for Drifted (active); "0" for all three reasons
/// `@weekly` (inactive on a Monday noon, as on the suite's Thursday 12:30).
fn fixture() -> Vec<Value> {
    let always = |nodes: &str, reasons: &[&str]| {
        let mut b = json!({"nodes": nodes, "schedule": "* * * * *", "duration": "1h"});
        if !reasons.is_empty() {
            b["reasons"] = json!(reasons);
        }
        b
    };
    vec![
        always("10", &[]),
        always("100", &[]),
        always("100%", &[]),
        always("15", &["Drifted", "Underutilized"]),
        always("5", &["Drifted"]),
        json!({"nodes": "0", "schedule": "@weekly", "duration": "1h",
               "reasons": ["Underutilized", "Drifted", "Empty"]}),
    ]
}

/// Twenty nodes of the most expensive type under `budgets`: empty (`Empty`), each holding a
/// pod and drifted (`Drifted`), or each holding a 1-CPU pod (`Underutilized`). Returns how
/// many the report disrupts for the reason (its method: emptiness, drift; any for
/// Underutilized).
fn disrupted_for(reason: &str, budgets: &[Value], tag: &str) -> usize {
    let mut sc = Sc::new();
    if reason == "Drifted" {
        // Never: the drifted nodes are no consolidation candidates in later passes.
        sc.disruption("default")["consolidateAfter"] = json!("Never");
    }
    sc.disruption("default")["budgets"] = json!(budgets);
    sc.nodes(20, MOST);
    for i in 0..20 {
        let node = format!("n{i}");
        match reason {
            "Empty" => {}
            "Drifted" => {
                sc.drifted(&node, EARLIER).pod(&format!("p{i}"), &node, "");
            }
            _ => {
                sc.pod(&format!("p{i}"), &node, "1");
            }
        }
    }
    let r = sc.run(&format!("s24-budget-{tag}-{reason}"));
    let method = match reason {
        "Empty" => "emptiness",
        "Drifted" => "drift",
        _ => return r.disrupted(),
    };
    disrupted_by(&r.doc, method)
}

/// "should return 0 for all reasons if a budget is active for all reasons", "should return
/// MaxInt32 for all reasons when there are no active budgets", "should ignore reason-defined
/// budgets when inactive", "should return the budget for all disruption reasons when
/// undefined", "should get the minimum budget for each reason" (+ a "4" for Empty): how many of
/// twenty nodes go per reason (upstream's numbers are of 100 nodes; "100%" of twenty is 20,
/// above the "10" that binds).
#[test]
fn the_budget_fixture_by_reason_through_consolidate() {
    let reasons = ["Empty", "Drifted", "Underutilized"];
    let mut all_active = fixture();
    all_active[5]["schedule"] = json!("* * * * *");
    let mut none_active = fixture();
    for b in &mut none_active {
        b["schedule"] = json!("@yearly");
    }
    let mut reasons_inactive = fixture();
    reasons_inactive[3]["schedule"] = json!("@yearly");
    reasons_inactive[4]["schedule"] = json!("@yearly");
    let undefined = fixture()[..1].to_vec();
    let mut minimum = fixture();
    minimum.push(
        json!({"nodes": "4", "schedule": "* * * * *", "duration": "1h",
                        "reasons": ["Empty"]}),
    );
    let cases: [(&str, &Vec<Value>, [usize; 3]); 5] = [
        ("all-active", &all_active, [0, 0, 0]),
        // Unlimited: every empty node goes; of the others all but the one their pods move to.
        ("none-active", &none_active, [20, 19, 19]),
        ("reasons-inactive", &reasons_inactive, [10, 10, 10]),
        ("undefined", &undefined, [10, 10, 10]),
        ("minimum", &minimum, [4, 5, 10]),
    ];
    let mut wrong = Vec::new();
    for (tag, budgets, want) in cases {
        for (reason, want) in reasons.iter().zip(want) {
            let got = disrupted_for(reason, budgets, tag);
            if got != want {
                wrong.push(format!("{tag}/{reason}: want {want}, got {got}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// balanced_scoring_test.go, balanced_adversarial_test.go (a Balanced move's savings)
// ---------------------------------------------------------------------------------------------

/// A pool of policy `policy` whose template allows on-demand only.
fn on_demand_pool(policy: &str) -> Value {
    let mut p = pool("default");
    p["spec"]["disruption"]["consolidationPolicy"] = json!(policy);
    p["spec"]["template"]["spec"]["requirements"] = json!([
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]);
    p
}

const SOURCE: &str = "source-test-zone-1-on-demand";
const DEST: &str = "dest-test-zone-1-on-demand";

/// "should REJECT a move when EstimatedSavings excludes spot offerings for an on-demand-only
/// NodePool": `source` (on-demand $0.50, three pods) and `full` (the same type, five pods,
/// `do-not-disrupt`: no candidate, but in the pool's totals) — the pool costs $1.00 and its
/// disruption is (1 + 3) + (1 + 5) = 10. The only cheaper type offers spot at $0.10 and
/// on-demand at $0.40: the replacement saves $0.10, score (0.10 / 1.00) / (4 / 10) = 0.25 <
/// 0.5, rejected (had the spot price leaked in: 0.40 / 0.40 = 1, approved). The same cluster
/// under WhenEmptyOrUnderutilized replaces `source` with the on-demand offering.
#[test]
fn a_balanced_move_saves_what_the_allowed_offering_saves() {
    let catalog = json!({"instanceTypes": [
        fake_type(SOURCE, 2, 4, vec![offering("test-zone-1", "on-demand", 0.50, true)]),
        fake_type(DEST, 2, 4, vec![offering("test-zone-1", "spot", 0.10, true),
                                   offering("test-zone-1", "on-demand", 0.40, true)]),
    ]});
    let scenario = |policy: &str| {
        let mut sc = Sc::new().catalog(catalog.clone());
        *sc.pool("default") = on_demand_pool(policy);
        let alloc = [("cpu", "2"), ("memory", "4Gi"), ("pods", "5")];
        sc.node_with("source", "default", SOURCE, &alloc)
            .pods("s", 3, "source", "");
        sc.node_with("full", "default", SOURCE, &alloc)
            .pods("f", 5, "full", "")
            .annotate_node("full", "karpenter.sh/do-not-disrupt", "true");
        sc
    };
    let r = scenario("Balanced").run("s24-balanced-od-only");
    r.left_because("source", &["Balanced", "0.250"]);
    assert!(r.actions().is_empty(), "{:#}", r.doc);

    let r = scenario("WhenEmptyOrUnderutilized").run("s24-balanced-od-only-control");
    assert_eq!(r.row("source")["decision"], "replace", "{:#}", r.doc);
    assert_eq!(r.replacement_types("source"), vec![DEST.to_string()]);
    assert_savings(&r, 0.10);
}

/// balanced_scoring_test.go "should attribute savings proportionally in cross-NodePool
/// scenarios" (`EvaluateBalancedMove`: a move across pools credits each Balanced pool with the
/// savings times its share of the source cost). Balanced `default`: `b0` ($1, nine pods) and a
/// `do-not-disrupt` `b1` ($2, room for every pod) — cost $3, disruption 10 + 1; pool `other`
/// (WhenEmptyOrUnderutilized): `e0` ($1, one pod). Deleting `e0` and `b0` together saves $2, of
/// which `default`'s share is $1: (1/3) / (10/11) = 0.37 < 0.5, rejected (the whole $2 would
/// score 0.73). So no multi-node command; single-node deletes `e0` and leaves `b0`, whose delete
/// alone scores the same 0.37 (`CanPassThreshold`).
#[test]
fn a_cross_pool_move_credits_a_balanced_pool_with_its_share() {
    let small = "small-test-zone-1-on-demand";
    let big = "big-test-zone-1-on-demand";
    let catalog = json!({"instanceTypes": [
        fake_type(small, 4, 8, vec![offering("test-zone-1", "on-demand", 1.0, true)]),
        fake_type(big, 16, 32, vec![offering("test-zone-1", "on-demand", 2.0, true)]),
    ]});
    let mut sc = Sc::new().catalog(catalog);
    sc.disruption("default")["consolidationPolicy"] = json!("Balanced");
    sc.push(pool("other"));
    // Full (nine pods of nine): what moves goes to `b1`.
    sc.node_with("b0", "default", small, &[("cpu", "4"), ("pods", "9")])
        .pods("b", 9, "b0", "");
    sc.node_with("b1", "default", big, &[("cpu", "16"), ("pods", "100")])
        .annotate_node("b1", "karpenter.sh/do-not-disrupt", "true");
    sc.node_with("e0", "other", small, &[("cpu", "4"), ("pods", "100")])
        .pod("e", "e0", "");
    let r = sc.run("s24-balanced-cross-pool");
    assert_eq!(r.row("e0")["decision"], "delete", "{:#}", r.doc);
    assert_ne!(r.row("e0")["method"], "multi", "{:#}", r.doc);
    r.left_because("b0", &["Balanced"]);
}

/// consolidation_logging_test.go (Go tests, no Its) `TestGetCommandEstimatedSavings_ZoneRequirement`
/// (the pool allows zone-1 only; the cheaper type offers zone-2 at $0.05 and zone-1 at $0.45:
/// saves $0.05) and `…_NoCapacityTypeRestriction` (spot allowed: the $0.10 spot offering is
/// launched, saves $0.40); `…_OnDemandOnlyNodePool` is the control case above. One pod on an
/// on-demand $0.50 node, the report's `savingsPerHour`.
#[test]
fn estimated_savings_count_only_the_offerings_the_replacement_may_use() {
    let zonal = json!({"instanceTypes": [
        fake_type(SOURCE, 2, 4, vec![offering("test-zone-1", "on-demand", 0.50, true)]),
        fake_type(DEST, 2, 4, vec![offering("test-zone-2", "on-demand", 0.05, true),
                                   offering("test-zone-1", "on-demand", 0.45, true)]),
    ]});
    let any_ct = json!({"instanceTypes": [
        fake_type(SOURCE, 2, 4, vec![offering("test-zone-1", "on-demand", 0.50, true)]),
        fake_type(DEST, 2, 4, vec![offering("test-zone-1", "spot", 0.10, true),
                                   offering("test-zone-1", "on-demand", 0.40, true)]),
    ]});
    let zone_1 = json!([{"key": "topology.kubernetes.io/zone", "operator": "In",
                         "values": ["test-zone-1"]}]);
    let both = json!([{"key": "karpenter.sh/capacity-type", "operator": "In",
                       "values": ["on-demand", "spot"]}]);
    for (tag, catalog, requirements, want) in [
        ("s24-savings-zone", zonal, zone_1, 0.05),
        ("s24-savings-any-ct", any_ct, both, 0.40),
    ] {
        let mut sc = Sc::new().catalog(catalog);
        sc.pool("default")["spec"]["template"]["spec"]["requirements"] = requirements;
        sc.node_with("source", "default", SOURCE, &[("cpu", "2"), ("pods", "5")])
            .pod("p0", "source", "");
        let r = sc.run(tag);
        assert_eq!(r.row("source")["decision"], "replace", "{tag}: {:#}", r.doc);
        assert_savings(&r, want);
    }
}

/// consolidation_logging_test.go `TestGetCommandEstimatedSavings_MultipleReplacements`: a
/// command with two replacement NodeClaims saves the source's price minus both of theirs. A
/// drifted node of the most expensive type (64 CPU) holds two 20-CPU pods; the pool allows only
/// the 32-CPU/32-GiB on-demand type, so drift launches two of it.
#[test]
fn savings_subtract_every_replacement() {
    let allowed = "32-cpu-32-mem-amd64-linux-test-zone-1-on-demand";
    let mut sc = Sc::new();
    sc.disruption("default")["consolidateAfter"] = json!("Never");
    sc.pool("default")["spec"]["template"]["spec"]["requirements"] = json!([
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": [allowed]}]);
    sc.node_with("n0", "default", MOST, &[("cpu", "64"), ("pods", "100")])
        .drifted("n0", EARLIER)
        .pods("p", 2, "n0", "20");
    let r = sc.run("s24-savings-two-replacements");
    assert_eq!(r.row("n0")["method"], "drift", "{:#}", r.doc);
    let action = &r.actions()[0];
    let launched: Vec<&Value> = std::iter::once(&action["replacement"])
        .chain(
            action["additionalReplacements"]
                .as_array()
                .into_iter()
                .flatten(),
        )
        .collect();
    assert_eq!(launched.len(), 2, "{action:#}");
    assert_savings(&r, fake_price(64, 128) - 2.0 * fake_price(32, 32));
}

/// The only action's savings per hour.
fn assert_savings(r: &Report, want: f64) {
    let got = r.actions()[0]["savingsPerHour"].as_f64().unwrap();
    assert!(
        (got - want).abs() < 1e-6,
        "{}: savings {got}, want {want}",
        r.tag
    );
}

/// balanced_adversarial_test.go "should approve single-node pool DELETE with expected scoring"
/// (the pool's only node, one pod: savings and disruption fractions both 1, score 1 ≥ 0.5) and
/// "should use source pricing that ignores availability" (the node's own offering, zone-1
/// on-demand at $1.00, is unavailable; zone-2 offers it at $5.00: the node costs $1.00). The
/// pod moves to a node of another pool (`do-not-disrupt`), so the move is a delete saving
/// $1.00.
#[test]
fn a_balanced_pools_only_node_is_deleted_at_its_own_offerings_price() {
    let it = "ice-test-zone-1-on-demand";
    let catalog = json!({"instanceTypes": [
        fake_type(it, 4, 8, vec![offering("test-zone-1", "on-demand", 1.00, false),
                                 offering("test-zone-2", "on-demand", 5.00, true)]),
    ]});
    let mut sc = Sc::new().catalog(catalog);
    *sc.pool("default") = on_demand_pool("Balanced");
    sc.push(pool("other"));
    let alloc = [("cpu", "4"), ("memory", "8Gi"), ("pods", "5")];
    sc.node_with("only", "default", it, &alloc)
        .pod("p0", "only", "1");
    sc.node_with("host", "other", it, &alloc)
        .pod("h0", "host", "1")
        .annotate_node("host", "karpenter.sh/do-not-disrupt", "true");
    let r = sc.run("s24-balanced-single-node-delete");
    assert_eq!(r.row("only")["decision"], "delete", "{:#}", r.doc);
    assert_savings(&r, 1.00);
}

// ---------------------------------------------------------------------------------------------
// ec2nodeclass_hash_test.go (hashed fields, through drift check)
// ---------------------------------------------------------------------------------------------

/// "should change hash when static fields are updated" › "ConnectionTracking
/// TCPEstablishedTimeout", "… UDPStreamTimeout", "… UDPTimeout", "CPUOptions
/// NestedVirtualization" and "should change hash when instanceProfile is updated" (the role
/// gone, one instance profile at launch, another now): `NodeClassDrift`. "should not change hash
/// when tags are re-ordered" and "… blockDeviceMappings are re-ordered" (a second device at
/// launch, the two swapped now): not drifted.
#[test]
fn ec2nodeclass_hash_fields_through_drift_check() {
    let with_profile = |profile: &str| {
        let mut c = base_class();
        c.as_object_mut().unwrap().remove("role");
        c["instanceProfile"] = json!(profile);
        c
    };
    let mut two_devices = base_class();
    two_devices["blockDeviceMappings"]
        .as_array_mut()
        .unwrap()
        .push(json!({"deviceName": "map-device-2"}));
    let mut swapped = two_devices.clone();
    swapped["blockDeviceMappings"]
        .as_array_mut()
        .unwrap()
        .reverse();
    let mut cases = Vec::new();
    for (entry, patch) in [
        (
            "ConnectionTracking TCPEstablishedTimeout",
            json!({"connectionTracking": {"tcpEstablishedTimeout": 300}}),
        ),
        (
            "ConnectionTracking UDPStreamTimeout",
            json!({"connectionTracking": {"udpStreamTimeout": 120}}),
        ),
        (
            "ConnectionTracking UDPTimeout",
            json!({"connectionTracking": {"udpTimeout": 45}}),
        ),
        (
            "CPUOptions NestedVirtualization",
            json!({"cpuOptions": {"nestedVirtualization": "enabled"}}),
        ),
    ] {
        cases.push(case(entry, Some("NodeClassDrift")).class_edit(patch));
    }
    cases.extend([
        case(
            "should change hash when instanceProfile is updated",
            Some("NodeClassDrift"),
        )
        .with(|c| {
            c.launch_class = with_profile("test-instance-profile");
            c.class = with_profile("other-instance-profile");
        }),
        case("should not change hash when tags are re-ordered", None).with(|c| {
            c.launch_class["tags"] = json!({"keyTag-1": "valueTag-1", "keyTag-2": "valueTag-2"});
            c.class["tags"] = json!({"keyTag-2": "valueTag-2", "keyTag-1": "valueTag-1"});
        }),
        case(
            "should not change hash when blockDeviceMappings are re-ordered",
            None,
        )
        .with(|c| {
            c.launch_class = two_devices.clone();
            c.class = swapped.clone();
        }),
    ]);
    assert_all("s24-hash", &cases);
}
