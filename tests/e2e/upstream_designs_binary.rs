//! The worked examples of Karpenter's design documents (`designs/*.md` of core and provider at
//! v1.14.1) replayed through the built binary: `consolidate -f - --now T -o json --catalog FILE`.
//! Designs can be outdated or never built; the v1.14.1 code each one led to is the contract, and
//! where the document says otherwise the test says which and follows the code.
//! docs/upstream-tests.md "Design documents through the binary (s22-designs)" maps each example
//! to its test. Helpers and the assorted catalog are upstream_disruption_binary's.

use serde_json::{json, Value};

use crate::support::{karpenter, provision_json};
use crate::upstream_disruption_binary::{fake_type, offering, pdb, Sc, EARLIER, MOST};
use crate::upstream_scheduling_binary::{
    any_capacity, class, plan, pool as sched_pool, req, sized, Plan, CAPACITY_TYPE, CPUS,
    INSTANCE_TYPE,
};

/// A price ladder `I0 … I(n-1)` of one capacity type: `I(k)` has `k + 1` CPUs and costs
/// `0.01 × (k + 1)`, so a pod that fits `I(k)` fits every dearer type — spot-consolidation.md
/// appendix 1's premise. Names end in the capacity type, as the shared helpers read it.
fn ladder(prefix: &str, ct: &str, n: u32) -> Value {
    let types: Vec<Value> = (0..n)
        .map(|k| {
            fake_type(
                &format!("{prefix}{k:02}-{ct}"),
                k + 1,
                256,
                vec![offering("test-zone-1", ct, 0.01 * f64::from(k + 1), true)],
            )
        })
        .collect();
    json!({ "instanceTypes": types })
}

/// One node of ladder type `k` (its CPUs allocatable) with one pod requesting `cpu`.
fn on_ladder(sc: &mut Sc, prefix: &str, ct: &str, k: u32, cpu: &str) {
    let it = format!("{prefix}{k:02}-{ct}");
    let cpus = (k + 1).to_string();
    sc.node_with("n0", "default", &it, &[("cpu", &cpus), ("pods", "5")])
        .pod("p0", "n0", cpu);
}

fn spot_ladder_scenario(k: u32, cpu: &str, requirements: Value) -> Sc {
    let mut sc = Sc::new().catalog(ladder("i", "spot", 70));
    sc.pool("default")["spec"]["template"]["spec"]["requirements"] = requirements;
    on_ladder(&mut sc, "i", "spot", k, cpu);
    sc
}

fn names(prefix: &str, ct: &str, range: std::ops::Range<u32>) -> Vec<String> {
    range.map(|k| format!("{prefix}{k:02}-{ct}")).collect()
}

// ---------------------------------------------------------------------------------------------
// core designs/spot-consolidation.md (code: core v1.14.1 pkg/controllers/disruption/
// consolidation.go computeSpotToSpotConsolidation, MinInstanceTypesForSpotToSpotConsolidation = 15)
// ---------------------------------------------------------------------------------------------

/// Appendix 1, "One pod exits, and now an I40 would work": the document sends 20 types
/// (I50…I69) at launch and keeps the I55 because I40…I59 includes it. The code's number is 15:
/// I40…I54 are 15 cheaper types without the I55, so the node is replaced and the launch is
/// truncated to exactly those 15.
#[test]
fn spot_ladder_i55_to_i40_is_replaced_with_the_fifteen_cheapest() {
    let r = spot_ladder_scenario(55, "40", json!([])).run("s22-designs-spot-i40");
    r.expect(&[("n0", "replace/single")]);
    assert_eq!(r.replacement_types("n0"), names("i", "spot", 40..55));
}

/// "Another pod exits, and now an I30 would work. We consolidate spot → spot and send …
/// I30, I31, …" — with the code's 15: I30…I44.
#[test]
fn spot_ladder_i55_to_i30_launches_i30_to_i44() {
    let r = spot_ladder_scenario(55, "30", json!([])).run("s22-designs-spot-i30");
    r.expect(&[("n0", "replace/single")]);
    assert_eq!(r.replacement_types("n0"), names("i", "spot", 30..45));
}

/// The rule's other half ("there were at least 15 options cheaper"): a pod that needs an I45
/// leaves 10 cheaper types than the I55, so the node stays.
#[test]
fn spot_ladder_with_ten_cheaper_types_stays() {
    spot_ladder_scenario(55, "45", json!([]))
        .run("s22-designs-spot-i45")
        .left_because("n0", &["15 cheaper types", "10 found"]);
}

// ---------------------------------------------------------------------------------------------
// core designs/nodepool-requirement-flexibility.md (code: consolidation.go
// computeSpotToSpotConsolidation's minValues branch, nodeclaim.go
// RemoveInstanceTypeOptionsByPriceAndMinValues)
// ---------------------------------------------------------------------------------------------

/// "How does minValues interact with spot-to-spot consolidation?": `instance-type Exists
/// minValues: 30` keeps 30 types at launch instead of truncating to 15.
#[test]
fn min_values_thirty_keeps_thirty_types_in_a_spot_replacement() {
    let reqs =
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 30}]);
    let r = spot_ladder_scenario(69, "30", reqs).run("s22-designs-min30");
    r.expect(&[("n0", "replace/single")]);
    assert_eq!(r.replacement_types("n0"), names("i", "spot", 30..60));
}

/// "… minValues: 3 … validate that the result allowed for 15 cheaper instance types": 10
/// cheaper types are not enough even though 3 would satisfy minValues.
#[test]
fn min_values_three_still_needs_fifteen_for_spot_to_spot() {
    let reqs =
        json!([{"key": "node.kubernetes.io/instance-type", "operator": "Exists", "minValues": 3}]);
    spot_ladder_scenario(55, "45", reqs)
        .run("s22-designs-min3")
        .left_because("n0", &["15 cheaper types", "10 found"]);
}

/// "If Karpenter is forced to maintain a minValues of 10 for instance types and you only have 11
/// instance type options specified, you will only be able to consolidate from the 11th instance
/// type down to one of the bottom 10 … you would no longer be able to continue consolidating."
#[test]
fn min_values_ten_of_eleven_consolidates_only_the_eleventh() {
    let values: Vec<String> = names("o", "on-demand", 0..11);
    let reqs = json!([{"key": "node.kubernetes.io/instance-type", "operator": "In",
                       "values": values, "minValues": 10}]);
    let scenario = |k: u32| {
        let mut sc = Sc::new().catalog(ladder("o", "on-demand", 11));
        sc.pool("default")["spec"]["template"]["spec"]["requirements"] = reqs.clone();
        on_ladder(&mut sc, "o", "on-demand", k, "500m");
        sc
    };
    let r = scenario(10).run("s22-designs-min10-eleventh");
    r.expect(&[("n0", "replace/single")]);
    assert_eq!(r.replacement_types("n0"), names("o", "on-demand", 0..10));
    scenario(9)
        .run("s22-designs-min10-tenth")
        .left_because("n0", &["minValues", "needs 10, 9 left"]);
}

// ---------------------------------------------------------------------------------------------
// core designs/disruption-controls.md and disruption-controls-by-reason.md (code: core v1.14.1
// pkg/apis/v1/nodepool.go GetAllowedDisruptionsByReason, Budget.IsActive; the reasons enum)
// ---------------------------------------------------------------------------------------------

/// Twelve empty nodes of the default pool.
fn twelve_empty(budgets: Value) -> Sc {
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] = budgets;
    sc.nodes(12, MOST);
    sc
}

/// disruption-controls.md's spec: "On Weekdays during business hours, don't do any
/// deprovisioning" (`0 9 * * mon-fri`, 8h, 0) "Every other time, only allow 10 nodes".
/// Monday 12:00 is inside the window; Monday 17:30 and Saturday are not.
#[test]
fn business_hours_budget_blocks_weekdays_nine_to_five() {
    let budgets = json!([{"schedule": "0 9 * * mon-fri", "duration": "8h", "nodes": "0"},
                         {"nodes": "10"}]);
    let monday = twelve_empty(budgets.clone()).run("s22-designs-hours-monday");
    assert_eq!(monday.disrupted(), 0, "{:#}", monday.doc);
    monday.left_because("n0", &["0 9 * * mon-fri"]);
    let evening = twelve_empty(budgets.clone())
        .at("2024-06-24T17:30:00Z")
        .run("s22-designs-hours-evening");
    assert_eq!(evening.disrupted(), 10, "{:#}", evening.doc);
    let saturday = twelve_empty(budgets)
        .at("2024-06-29T12:00:00Z")
        .run("s22-designs-hours-saturday");
    assert_eq!(saturday.disrupted(), 10, "{:#}", saturday.doc);
}

/// by-reason "Fully Blocking Drift and Expiration while allowing emptiness" (WhenEmpty,
/// `nodes: 0, reasons: [Drifted]`, `nodes: 100%`): two drifted nodes with pods stay, the two
/// empty nodes go.
#[test]
fn reason_budget_blocks_drift_and_lets_emptiness_through() {
    let mut sc = Sc::new();
    let d = sc.disruption("default");
    d["consolidationPolicy"] = json!("WhenEmpty");
    d["budgets"] = json!([{"nodes": "0", "reasons": ["Drifted"]}, {"nodes": "100%"}]);
    sc.nodes(4, MOST).pod("p0", "n0", "1").pod("p1", "n1", "1");
    sc.drifted("n0", EARLIER).drifted("n1", EARLIER);
    let r = sc.run("s22-designs-block-drift");
    r.expect(&[("n2", "delete/emptiness"), ("n3", "delete/emptiness")]);
    r.left_because("n0", &["budget Drifted"]);
    r.left_because("n1", &["budget Drifted"]);
}

/// by-reason "Limiting Drift & Expiration while allowing aggressive but not unbounded
/// consolidation" (`nodes: 1, reasons: [Drifted]`, `nodes: 33%`), six nodes, three drifted
/// with a pod, three empty. "Equation 1" (the code): a reason's allowance is the smallest of its
/// budgets (Drifted min(1, ⌈33% × 6⌉ = 2) = 1, Empty 2) less every node already disrupting —
/// emptiness runs first and takes two, so drift waits for the next pass.
#[test]
fn reason_budget_limits_drift_and_counts_all_disrupting_nodes() {
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] =
        json!([{"nodes": "1", "reasons": ["Drifted"]}, {"nodes": "33%"}]);
    sc.nodes(6, MOST);
    for i in 0..3 {
        sc.pod(&format!("p{i}"), &format!("n{i}"), "1")
            .drifted(&format!("n{i}"), EARLIER);
    }
    let r = sc.run("s22-designs-limit-drift");
    r.expect(&[("n3", "delete/emptiness"), ("n4", "delete/emptiness")]);
    r.left_because("n5", &["budget Empty", "33%"]);
    for n in ["n0", "n1", "n2"] {
        r.left_because(n, &["budget Drifted", "2 already disrupting"]);
    }
}

/// by-reason "Q: How should we handle an unspecified reason when others are specified?" —
/// "Lets choose total number of nodes": a reason no budget names is unbounded (not the 10 %
/// default, which only fills an omitted `budgets`).
#[test]
fn reason_without_a_budget_is_unbounded() {
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] = json!([{"nodes": "0", "reasons": ["Drifted"]}]);
    sc.nodes(3, MOST);
    let r = sc.run("s22-designs-unspecified");
    assert_eq!(r.disrupted(), 3, "{:#}", r.doc);
}

/// The design's examples write `reasons: [drifted]` and `[drifted, expired]`; v1's CRD enum is
/// `Underutilized`, `Empty`, `Drifted` (expiration is forceful and never budgeted), so both are
/// bad input, named by field.
#[test]
fn design_reason_spellings_are_bad_input() {
    for (tag, reasons, bad) in [
        ("lowercase", json!(["drifted"]), "\"drifted\""),
        ("expired", json!(["Drifted", "Expired"]), "\"Expired\""),
    ] {
        let mut sc = Sc::new();
        sc.disruption("default")["budgets"] = json!([{"nodes": "0", "reasons": reasons}]);
        sc.nodes(1, MOST);
        let run = karpenter(
            &["consolidate", "-f", "-", "--now", &sc.now, "-o", "json"],
            sc.yaml().as_bytes(),
        );
        assert_eq!(run.code, 2, "{tag}: {}", run.stderr);
        assert!(
            run.stderr.contains("spec.disruption.budgets[0].reasons") && run.stderr.contains(bad),
            "{tag}: {}",
            run.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------------
// aws designs/consolidation.md "Selecting Nodes for Consolidation" (code: core v1.14.1
// consolidation.go sortCandidates by types.go SavingsRatio = price / RescheduleDisruptionCost)
// ---------------------------------------------------------------------------------------------

/// An unmanaged node with room for every pod, beside the pool's nodes.
pub(crate) fn unmanaged() -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "unmanaged", "creationTimestamp": EARLIER,
                     "labels": {"kubernetes.io/hostname": "unmanaged", "kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64"}},
        "spec": {"providerID": "aws:///test-zone-1/i-unmanaged"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "allocatable": {"cpu": "32", "pods": "100"}, "capacity": {"cpu": "32", "pods": "100"}}})
}

/// A budget of one node, the pool's `nodes` and the unmanaged node beside them.
fn one_at_a_time(nodes: &[&str]) -> Sc {
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] = json!([{"nodes": "1"}]);
    for n in nodes {
        sc.node(n, MOST);
    }
    sc.push(unmanaged());
    sc
}

/// "Two identical nodes can be deleted, one has 5 pods and the other has 100. We should delete
/// the node with 5 pods": with a budget of one, the node with one pod goes before the node with
/// three (both could move onto the unmanaged node).
#[test]
fn fewer_pods_are_consolidated_first() {
    let mut sc = one_at_a_time(&["b", "z"]);
    sc.pods("pb", 3, "b", "1").pod("pz", "z", "1");
    let r = sc.run("s22-designs-fewer-pods");
    r.expect(&[("z", "delete/single"), ("b", "none")]);
}

/// "Node Age – the calculated disruption cost … is weighted by the node lifetime remaining": the
/// design would take `a` (3 pods × 1/30 of its lifetime left) before `b` (2 pods, new). v1.14.1
/// orders by savings ratio (price ÷ reschedule cost, no lifetime), so `b` goes.
#[test]
fn node_age_does_not_order_v1_consolidation() {
    let mut sc = one_at_a_time(&["a", "b"]);
    sc.pods("pa", 3, "a", "1").pods("pb", 2, "b", "1");
    for n in ["a", "b"] {
        sc.claim(n)["spec"]["expireAfter"] = json!("720h");
    }
    let old = "2024-05-26T12:00:00Z";
    sc.claim("a")["metadata"]["creationTimestamp"] = json!(old);
    sc.node_obj("a")["metadata"]["creationTimestamp"] = json!(old);
    let r = sc.run("s22-designs-node-age");
    r.expect(&[("b", "delete/single"), ("a", "none")]);
}

// ---------------------------------------------------------------------------------------------
// core designs/forceful-expiration.md and nodeclaim-termination-grace-period.md (code: core
// v1.14.1 pkg/controllers/nodeclaim/expiration/controller.go; disruption/types.go NewCandidate's
// terminationGracePeriod exception for eventual methods)
// ---------------------------------------------------------------------------------------------

/// forceful-expiration.md option 1 (the one built): an expired node goes "regardless of
/// node/pod/availability safeguards" — a budget of 0, a do-not-disrupt pod and a PDB at 0.
#[test]
fn expiration_is_forceful() {
    let mut sc = Sc::new();
    sc.disruption("default")["budgets"] = json!([{"nodes": "0"}]);
    sc.node("n0", MOST).pod("p0", "n0", "1").dnd("p0", "true");
    sc.push(pdb("pdb", "default", true));
    sc.claim("n0")["spec"]["expireAfter"] = json!("720h");
    sc.claim("n0")["metadata"]["creationTimestamp"] = json!("2024-05-24T11:00:00Z");
    sc.run("s22-designs-forceful")
        .expect(&[("n0", "delete/expiration")]);
}

/// nodeclaim-termination-grace-period.md "Eventual Disruption": a drifted node whose pod is
/// do-not-disrupt stays without a terminationGracePeriod and is disrupted with one.
#[test]
fn termination_grace_period_opens_drift_past_do_not_disrupt() {
    let mut sc = Sc::new();
    sc.node("n0", MOST).pod("p0", "n0", "1").dnd("p0", "true");
    sc.drifted("n0", EARLIER);
    sc.run("s22-designs-tgp-none")
        .left_because("n0", &["do-not-disrupt"]);
    sc.claim("n0")["spec"]["terminationGracePeriod"] = json!("24h");
    sc.run("s22-designs-tgp-24h")
        .expect(&[("n0", "delete/drift")]);
}

// ---------------------------------------------------------------------------------------------
// Provisioning: `provision --dry-run -f - -o json`, on the fake cloud provider's catalog
// (tests/fixtures/s19-bsched/fake-catalog.yaml) or the embedded AWS catalog (us-east-1).
// ---------------------------------------------------------------------------------------------

/// The instance types of the NodeClaim that took `pod`.
fn types_of(plan: &Plan, pod: &str) -> Vec<String> {
    plan.claim(pod)["instanceTypes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

/// aws designs/limits.md "Absolute limit" (`limits: cpu …`; code: core v1.14.1
/// pkg/controllers/provisioning/scheduling/scheduler.go, the NodePool's remaining resources): a
/// pool limited to 4 CPUs launches one 4-CPU node for two 3-CPU pods; the other waits, named.
#[test]
fn limits_stop_a_pool_at_its_cpu() {
    let p = sched_pool(
        "default",
        vec![any_capacity()],
        json!({"pool": {"limits": {"cpu": "4"}}}),
    );
    let plan = plan(vec![
        p,
        sized("a", json!({"cpu": "3"}), json!({})),
        sized("b", json!({"cpu": "3"}), json!({})),
    ]);
    assert_eq!(plan.claims().len(), 1, "{:#}", plan.json);
    assert_eq!(plan.pending().len(), 1, "{:#}", plan.json);
    assert_eq!(plan.pending()[0].1, "LimitReached");
}

/// core designs/nodepool-requirement-flexibility.md "What if my NodePool and Pod requirements
/// can't fulfill my request for flexibility?": a pod that leaves one of the pool's two types
/// (`minValues: 2`) falls back to the next weighted pool; a pod both fit stays on the first
/// (code: core v1.14.1 scheduling/nodeclaim.go Add, the minValues check after filtering).
#[test]
fn min_values_falls_back_to_the_next_weighted_pool() {
    let flexible = || {
        sched_pool(
            "flexible",
            vec![
                any_capacity(),
                json!({"key": INSTANCE_TYPE, "operator": "In",
                       "values": ["small-instance-type", "default-instance-type"], "minValues": 2}),
            ],
            json!({"pool": {"weight": 10}}),
        )
    };
    let fallback = || {
        sched_pool(
            "fallback",
            vec![any_capacity()],
            json!({"pool": {"weight": 1}}),
        )
    };
    let big = plan(vec![
        flexible(),
        fallback(),
        sized("a", json!({"cpu": "3"}), json!({})),
    ]);
    assert_eq!(big.claim("a")["nodePool"], "fallback", "{:#}", big.json);
    let small = plan(vec![
        flexible(),
        fallback(),
        sized("a", json!({"cpu": "1"}), json!({})),
    ]);
    assert_eq!(small.claim("a")["nodePool"], "flexible", "{:#}", small.json);
    assert_eq!(
        types_of(&small, "a"),
        ["small-instance-type", "default-instance-type"]
    );
}

/// core designs/gte-lte-operators.md ("At least 2 CPUs … `Gte 2`", "At most 8 CPUs … `Lte 8`";
/// code: core v1.14.1 pkg/apis/v1/nodeclaim.go NodeSelectorOpGte/Lte, scheduling/requirement.go):
/// inclusive bounds on the fake's CPU label — `Gte 3` leaves the 2-CPU type out, `Lte 2` keeps
/// only it.
#[test]
fn gte_and_lte_are_inclusive() {
    let with = |op: &str, v: &str| {
        plan(vec![
            sched_pool(
                "default",
                vec![any_capacity(), req(CPUS, op, &[v])],
                json!({}),
            ),
            sized("a", json!({"cpu": "100m"}), json!({})),
        ])
    };
    let gte = with("Gte", "3");
    assert!(
        !types_of(&gte, "a").contains(&"small-instance-type".to_string()),
        "{:#}",
        gte.json
    );
    assert!(
        types_of(&gte, "a").contains(&"default-instance-type".to_string()),
        "{:#}",
        gte.json
    );
    let lte = with("Lte", "2");
    assert_eq!(
        types_of(&lte, "a"),
        ["small-instance-type"],
        "{:#}",
        lte.json
    );
}

/// A NodeOverlay (karpenter.sh/v1alpha1).
fn overlay(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": name}, "spec": spec})
}

fn on_demand() -> Value {
    req(CAPACITY_TYPE, "In", &["on-demand"])
}

/// Plans `objects` and the default class against the embedded AWS catalog.
fn plan_aws(mut objects: Vec<Value>) -> Plan {
    objects.push(class());
    let (code, json) = provision_json(&["--region", "us-east-1"], objects);
    Plan { code, json }
}

/// An on-demand pool of m5.large and m5.xlarge with the overlays, and a 1-CPU pod.
fn m5_choice(overlays: Vec<Value>) -> String {
    let pool = sched_pool(
        "default",
        vec![
            on_demand(),
            req(INSTANCE_TYPE, "In", &["m5.large", "m5.xlarge"]),
        ],
        json!({}),
    );
    let mut objects = vec![pool, sized("a", json!({"cpu": "1"}), json!({}))];
    objects.extend(overlays);
    let plan = plan_aws(objects);
    plan.claim("a")["instanceType"]
        .as_str()
        .unwrap()
        .to_string()
}

/// core designs/node-overlay.md "Price", "Price Adjustment" and "Merge by Weight" (code: core
/// v1.14.1 pkg/controllers/nodeoverlay, the highest weight's price): `price: "5.00"` on the
/// on-demand m5.large makes the m5.xlarge the cheaper choice; `+15%` does not; a weight-1
/// `price` on m5.xlarge wins over a weight-0 `+5.00` on every on-demand type.
#[test]
fn node_overlay_prices_steer_the_choice() {
    let m5_large = || req(INSTANCE_TYPE, "In", &["m5.large"]);
    assert_eq!(m5_choice(vec![]), "m5.large");
    let price = overlay(
        "price-override",
        json!({"requirements": [on_demand(), m5_large()], "price": "5.00"}),
    );
    assert_eq!(m5_choice(vec![price]), "m5.xlarge");
    let adjust = overlay(
        "price-adjustment",
        json!({"requirements": [on_demand(), m5_large()], "priceAdjustment": "+15%"}),
    );
    assert_eq!(m5_choice(vec![adjust]), "m5.large");
    let base = overlay(
        "base",
        json!({"requirements": [on_demand()], "priceAdjustment": "+5.00"}),
    );
    let specific = overlay(
        "specific",
        json!({"weight": 1, "requirements": [req(INSTANCE_TYPE, "In", &["m5.xlarge"])], "price": "0.01"}),
    );
    assert_eq!(m5_choice(vec![base, specific]), "m5.xlarge");
}

/// node-overlay.md "Capacity" (`smarter-devices/fuse: 1` on five m5 sizes): a pod asking for
/// the device lands on one of them, and stays pending without the overlay. The design's
/// "Merge by Weight" example also gives `capacity: memory: 10Mi`; v1alpha1's CEL rule
/// (`nodeoverlay.go`: not cpu, memory, ephemeral-storage, pods) refuses it: bad input here.
#[test]
fn node_overlay_capacity_adds_extended_resources_only() {
    let m5 = [
        "m5.large",
        "m5.2xlarge",
        "m5.4xlarge",
        "m5.8xlarge",
        "m5.12xlarge",
    ];
    let fuse = overlay(
        "extended-resource",
        json!({"requirements": [req(INSTANCE_TYPE, "In", &m5)], "capacity": {"smarter-devices/fuse": "1"}}),
    );
    // An extended resource is never overcommitted: its limit is its request (the API server
    // refuses a request without one).
    let pod = || {
        let mut p = sized(
            "a",
            json!({"cpu": "1", "smarter-devices/fuse": "1"}),
            json!({}),
        );
        p["spec"]["containers"][0]["resources"]["limits"] = json!({"smarter-devices/fuse": "1"});
        p
    };
    let pool = || sched_pool("default", vec![on_demand()], json!({}));
    let with = plan_aws(vec![pool(), fuse, pod()]);
    let types = types_of(&with, "a");
    assert!(
        !types.is_empty() && types.iter().all(|t| m5.contains(&t.as_str())),
        "{types:?}"
    );
    let without = plan_aws(vec![pool(), pod()]);
    assert_eq!(
        without.pending(),
        [("a".to_string(), "NoInstanceTypeFits".to_string())]
    );
    let memory = overlay(
        "default",
        json!({"requirements": [], "priceAdjustment": "-10%", "capacity": {"memory": "10Mi"}}),
    );
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [pool(), memory, class()]});
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-q",
            "-f",
            "-",
            "-o",
            "json",
            "--region",
            "us-east-1",
        ],
        list.to_string().as_bytes(),
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("spec.capacity.memory"),
        "{}",
        run.stderr
    );
}
