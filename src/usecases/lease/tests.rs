//! The operator lease against the fake cluster and clock: each branch of taking, waiting,
//! renewing, losing and releasing it.

use std::time::Duration;

use serde_json::{json, Value};

use super::*;
use crate::error::Exit;
use crate::k8s::fake::FakeCluster;
use crate::k8s::Method;
use crate::usecases::clock::FakeClock;

const NOW: i64 = 1_780_000_000;

fn me() -> Identity {
    Identity {
        holder: "bob@desk pid 7".into(),
        command: "provision".into(),
    }
}

fn config(wait: Option<Duration>) -> LeaseConfig {
    LeaseConfig {
        namespace: DEFAULT_NAMESPACE.into(),
        identity: me(),
        wait,
    }
}

/// A lease held by alice, renewed `ago` seconds before [`NOW`].
fn alices(ago: i64) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": LEASE_NAME, "namespace": DEFAULT_NAMESPACE,
                     "annotations": {LEASE_COMMAND: "drift replace"}},
        "spec": {"holderIdentity": "alice@laptop pid 4242", "leaseDurationSeconds": LEASE_SECONDS,
                 "renewTime": micro_time(NOW - ago)},
    })
}

fn stored(cluster: &FakeCluster) -> Value {
    cluster
        .get(
            "coordination.k8s.io/v1",
            "Lease",
            Some(DEFAULT_NAMESPACE),
            LEASE_NAME,
        )
        .expect("the lease")
}

/// Nobody is known to have ended.
fn alive(_: &str) -> bool {
    false
}

fn observed(holder: Option<&str>, renewed: Option<i64>) -> Observed {
    Observed {
        holder: holder.map(str::to_string),
        command: Some("drift replace".into()),
        renewed,
        duration: 30,
        resource_version: "5".into(),
    }
}

#[test]
fn the_rule_creates_takes_free_expired_or_own_leases_and_names_a_live_holder() {
    let take = Decision::Take {
        resource_version: "5".into(),
    };
    assert_eq!(decide(None, &me(), NOW, &alive), Decision::Create);
    assert_eq!(
        decide(Some(&observed(None, None)), &me(), NOW, &alive),
        take
    );
    assert_eq!(
        decide(Some(&observed(Some(""), Some(NOW))), &me(), NOW, &alive),
        take
    );
    assert_eq!(
        decide(
            Some(&observed(Some("bob@desk pid 7"), Some(NOW))),
            &me(),
            NOW,
            &alive
        ),
        take
    );
    // Expired: renewTime + leaseDurationSeconds has passed (client-go's rule).
    assert_eq!(
        decide(
            Some(&observed(Some("alice"), Some(NOW - 30))),
            &me(),
            NOW,
            &alive
        ),
        take
    );
    assert_eq!(
        decide(Some(&observed(Some("alice"), None)), &me(), NOW, &alive),
        take
    );
    let held = decide(
        Some(&observed(Some("alice"), Some(NOW - 3))),
        &me(),
        NOW,
        &alive,
    );
    let Decision::Held(holder) = held else {
        panic!("{held:?}")
    };
    assert_eq!(holder.to_string(), "alice, renewed 3 s ago, drift replace");
}

#[test]
fn a_holder_known_to_be_gone_is_taken_over_at_once() {
    let cluster = FakeCluster::new();
    cluster.put(alices(0));
    let clock = FakeClock::at(NOW);
    let gone = |h: &str| h == "alice@laptop pid 4242";
    acquire(&cluster, &clock, &config(None), &gone).unwrap();
    assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
}

#[test]
fn a_free_cluster_gets_the_lease_created_with_holder_command_and_times() {
    let cluster = FakeCluster::new();
    let clock = FakeClock::at(NOW);
    let held = acquire(&cluster, &clock, &config(None), &alive).unwrap();
    let lease = stored(&cluster);
    assert_eq!(lease["spec"]["holderIdentity"], "bob@desk pid 7");
    assert_eq!(lease["spec"]["leaseDurationSeconds"], LEASE_SECONDS);
    assert_eq!(lease["spec"]["renewTime"], micro_time(NOW));
    assert_eq!(lease["metadata"]["annotations"][LEASE_COMMAND], "provision");
    assert_eq!(
        held.resource_version,
        lease["metadata"]["resourceVersion"].as_str().unwrap()
    );
    assert_eq!(
        cluster.writes(),
        ["POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases"]
    );
}

#[test]
fn a_live_holder_refuses_the_run_with_exit_4_naming_it() {
    let cluster = FakeCluster::new();
    cluster.put(alices(3));
    let clock = FakeClock::at(NOW);
    let err = acquire(&cluster, &clock, &config(None), &alive).unwrap_err();
    assert_eq!(err.exit, Exit::Refused);
    assert!(
        err.message.contains(
            "the operator lease kube-system/kubectl-karpenter is held by alice@laptop pid 4242, renewed 3 s ago, drift replace"
        ),
        "{}",
        err.message
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.writes());
}

#[test]
fn an_expired_lease_is_taken_over_naming_the_version_read() {
    let cluster = FakeCluster::new();
    cluster.put(alices(31));
    let alices_version = stored(&cluster)["metadata"]["resourceVersion"].clone();
    let clock = FakeClock::at(NOW);
    acquire(&cluster, &clock, &config(None), &alive).unwrap();
    assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
    let patch = cluster
        .requests()
        .into_iter()
        .find(|r| r.line().starts_with("PATCH"))
        .expect("a patch");
    assert_eq!(
        patch.body["metadata"]["resourceVersion"], alices_version,
        "the takeover names the version it read"
    );
}

#[test]
fn a_conflict_between_read_and_write_reads_again_before_deciding() {
    let cluster = FakeCluster::new();
    cluster.put(alices(60));
    // Someone wrote between our read and our write: 409, so the lease is read and judged again.
    cluster.fail_with(
        Method::Patch,
        "/leases/",
        1,
        409,
        "the object has been modified",
    );
    let clock = FakeClock::at(NOW);
    acquire(&cluster, &clock, &config(None), &alive).unwrap();
    let lease_requests: Vec<String> = cluster
        .requests()
        .iter()
        .map(|r| r.line())
        .filter(|l| l.contains("/leases/"))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect();
    assert_eq!(lease_requests, ["GET", "PATCH", "GET", "PATCH"]);
    assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
}

#[test]
fn waiting_for_the_lease_takes_it_once_the_holder_releases() {
    let cluster = FakeCluster::new();
    cluster.put(alices(0));
    let clock = FakeClock::at(NOW);
    let alice = cluster.clone();
    clock.on_tick(move |elapsed| {
        if elapsed >= Duration::from_secs(6) {
            alice.update(
                "coordination.k8s.io/v1",
                "Lease",
                Some(DEFAULT_NAMESPACE),
                LEASE_NAME,
                |l| l["spec"]["holderIdentity"] = Value::Null,
            );
        }
    });
    waiting_a_minute(&cluster, &clock).unwrap();
    assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
    assert!(clock.monotonic() >= Duration::from_secs(6));
}

/// Bob's run with `--wait-for-lease=1m`.
fn waiting_a_minute(cluster: &FakeCluster, clock: &FakeClock) -> Result<Held, CommandError> {
    acquire(
        cluster,
        clock,
        &config(Some(Duration::from_secs(60))),
        &alive,
    )
}

#[test]
fn waiting_outlasts_a_failing_api_server_and_not_waiting_does_not() {
    let path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubectl-karpenter";
    let cluster = FakeCluster::new();
    cluster.fail_with(Method::Get, path, 3, 503, "etcdserver: leader changed");
    let clock = FakeClock::at(NOW);
    waiting_a_minute(&cluster, &clock).unwrap();
    assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
    assert_eq!(
        clock.monotonic(),
        Duration::from_secs(6),
        "three looks 2 s apart"
    );

    let cluster = FakeCluster::new();
    cluster.fail_with(Method::Get, path, 1, 503, "etcdserver: leader changed");
    let err = acquire(&cluster, &FakeClock::at(NOW), &config(None), &alive).unwrap_err();
    assert_eq!(err.exit, Exit::Remote);
    let cluster = FakeCluster::new();
    cluster.fail_with(Method::Get, path, 1, 403, "forbidden");
    let err = waiting_a_minute(&cluster, &FakeClock::at(NOW)).unwrap_err();
    assert_eq!(err.exit, Exit::Remote, "a refusal does not pass by waiting");
}

#[test]
fn waiting_gives_up_when_the_wait_runs_out() {
    let cluster = FakeCluster::new();
    cluster.put(alices(0));
    let clock = FakeClock::at(NOW);
    let alice = cluster.clone();
    // Alice keeps renewing.
    clock.on_tick(move |elapsed| {
        alice.update(
            "coordination.k8s.io/v1",
            "Lease",
            Some(DEFAULT_NAMESPACE),
            LEASE_NAME,
            |l| l["spec"]["renewTime"] = json!(micro_time(NOW + elapsed.as_secs() as i64)),
        );
    });
    let err = acquire(
        &cluster,
        &clock,
        &config(Some(Duration::from_secs(10))),
        &alive,
    )
    .unwrap_err();
    assert_eq!(err.exit, Exit::Refused);
    assert!(err.hint.unwrap().contains("--wait-for-lease ran out"));
    assert!(clock.monotonic() >= Duration::from_secs(10));
}

#[test]
fn renewing_moves_renew_time_and_notices_a_takeover_or_a_deletion() {
    let cluster = FakeCluster::new();
    let clock = FakeClock::at(NOW);
    let mut held = acquire(&cluster, &clock, &config(None), &alive).unwrap();
    clock.advance(Duration::from_secs(10));
    renew(&cluster, &clock, &mut held).unwrap().unwrap();
    assert_eq!(stored(&cluster)["spec"]["renewTime"], micro_time(NOW + 10));

    cluster.update(
        "coordination.k8s.io/v1",
        "Lease",
        Some(DEFAULT_NAMESPACE),
        LEASE_NAME,
        |l| l["spec"]["holderIdentity"] = json!("alice@laptop pid 4242"),
    );
    assert_eq!(
        renew(&cluster, &clock, &mut held),
        Err(Lost::TakenBy("alice@laptop pid 4242".into()))
    );
    cluster.remove(
        "coordination.k8s.io/v1",
        "Lease",
        Some(DEFAULT_NAMESPACE),
        LEASE_NAME,
    );
    assert_eq!(renew(&cluster, &clock, &mut held), Err(Lost::Deleted));
}

#[test]
fn a_failed_renewal_is_reported_for_the_caller_to_retry() {
    let cluster = FakeCluster::new();
    let clock = FakeClock::at(NOW);
    let mut held = acquire(&cluster, &clock, &config(None), &alive).unwrap();
    cluster.fail_with(Method::Patch, "/leases/", 1, 500, "etcd timeout");
    let outcome = renew(&cluster, &clock, &mut held).unwrap();
    assert!(outcome.is_err());
    // The next try goes through.
    renew(&cluster, &clock, &mut held).unwrap().unwrap();
}

#[test]
fn releasing_clears_the_holder_so_the_next_run_takes_it_at_once() {
    let cluster = FakeCluster::new();
    let clock = FakeClock::at(NOW);
    let held = acquire(&cluster, &clock, &config(None), &alive).unwrap();
    release(&cluster, &held).unwrap();
    let lease = stored(&cluster);
    assert_eq!(lease["spec"].get("holderIdentity"), None);
    let alice = LeaseConfig {
        identity: Identity {
            holder: "alice@laptop pid 9".into(),
            command: "drift replace".into(),
        },
        ..config(None)
    };
    acquire(&cluster, &clock, &alice, &alive).unwrap();
    assert_eq!(
        stored(&cluster)["spec"]["holderIdentity"],
        "alice@laptop pid 9"
    );
    // Releasing a lease someone else holds now changes nothing.
    cluster.clear_requests();
    release(&cluster, &held).unwrap();
    assert!(cluster.writes().is_empty());
}

#[test]
fn the_write_gate_refuses_writes_once_closed() {
    let gate = WriteGate::default();
    assert_eq!(gate.closed(), None);
    gate.close(Lost::TakenBy("alice".into()).to_string());
    assert_eq!(
        gate.closed().as_deref(),
        Some("the operator lease was taken over by alice")
    );
    let err: CommandError = ClusterError::WritesStopped(gate.closed().unwrap()).into();
    assert_eq!(err.exit, Exit::Refused);
}

/// The fake cluster, but the first `method` request to the lease gets no clear answer: it is
/// served or not (`applied`), then another operator's lease may appear (`meanwhile`), and the
/// client hears `heard`.
struct Unclear {
    fake: FakeCluster,
    method: Method,
    applied: bool,
    meanwhile: Option<Value>,
    heard: ClusterError,
    done: std::cell::Cell<bool>,
}

impl Cluster for Unclear {
    fn send(&self, r: crate::k8s::Request) -> Result<crate::k8s::Response, ClusterError> {
        if r.method != self.method || !r.path.contains("/leases") || self.done.replace(true) {
            return self.fake.send(r);
        }
        if self.applied {
            self.fake.send(r)?;
        }
        if let Some(lease) = &self.meanwhile {
            self.fake.put(lease.clone());
        }
        Err(self.heard.clone())
    }

    fn request_count(&self) -> u64 {
        self.fake.request_count()
    }
}

fn lease_requests(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .requests()
        .iter()
        .map(|r| r.line())
        .filter(|l| l.contains("/leases"))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

fn reset() -> ClusterError {
    ClusterError::Transport {
        server: "fake".into(),
        message: "connection reset by peer".into(),
    }
}

#[test]
fn a_write_without_a_clear_answer_is_never_resent_blind_the_lease_is_read_again() {
    // Throttled or failed (not applied): read again, take it.
    for status in [429, 500, 503] {
        let cluster = FakeCluster::new();
        cluster.put(alices(60));
        cluster.fail_with(Method::Patch, "/leases/", 1, status, "injected");
        let clock = FakeClock::at(NOW);
        acquire(&cluster, &clock, &config(None), &alive).unwrap();
        assert_eq!(lease_requests(&cluster), ["GET", "PATCH", "GET", "PATCH"]);
        assert_eq!(stored(&cluster)["spec"]["holderIdentity"], "bob@desk pid 7");
    }
    // Created, but the answer lost: read again, it is ours, taken at its version.
    let unclear = Unclear {
        fake: FakeCluster::new(),
        method: Method::Post,
        applied: true,
        meanwhile: None,
        heard: reset(),
        done: Default::default(),
    };
    let clock = FakeClock::at(NOW);
    let held = acquire(&unclear, &clock, &config(None), &alive).unwrap();
    assert_eq!(
        lease_requests(&unclear.fake),
        ["GET", "POST", "GET", "PATCH"]
    );
    assert_eq!(
        held.resource_version,
        stored(&unclear.fake)["metadata"]["resourceVersion"]
    );
    // Not applied, and alice took it meanwhile: read again, refused naming her.
    let unclear = Unclear {
        fake: FakeCluster::new(),
        method: Method::Post,
        applied: false,
        meanwhile: Some(alices(0)),
        heard: reset(),
        done: Default::default(),
    };
    let err = acquire(&unclear, &clock, &config(None), &alive).unwrap_err();
    assert_eq!(err.exit, Exit::Refused, "{}", err.message);
    assert!(
        err.message.contains("alice@laptop pid 4242"),
        "{}",
        err.message
    );
}

#[test]
fn a_write_failing_on_and_on_ends_the_run_after_a_few_readings() {
    let cluster = FakeCluster::new();
    cluster.put(alices(60));
    cluster.fail_with(Method::Patch, "/leases/", 100, 503, "injected");
    let clock = FakeClock::at(NOW);
    let err = acquire(&cluster, &clock, &config(None), &alive).unwrap_err();
    assert_eq!(err.exit, Exit::Remote, "{}", err.message);
    let patches = lease_requests(&cluster)
        .iter()
        .filter(|m| *m == "PATCH")
        .count();
    assert_eq!(patches, 1 + TRANSIENT_WRITES as usize);
}
