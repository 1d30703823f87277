//! The operator lease fuzzed: two operators taking, renewing and releasing it in a random
//! order against the in-memory cluster, with API faults, time passing and the other operator
//! writing between one's read and its write. Rule (client-go `leaderelection.go`
//! `tryAcquireOrRenew`, docs/spec.md §10): never two holders at once — an operator that renewed
//! less than `LEASE_SECONDS − RENEW_EVERY` ago still writes (its keeper has not closed the gate),
//! so nobody else may take the lease then; and a release leaves it free.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use super::faults;
use crate::k8s::fake::FakeCluster;
use crate::k8s::Method;
use crate::testing::Rng;
use crate::usecases::clock::{Clock, FakeClock};
use crate::usecases::lease::{
    acquire, read, release, renew, Held, Identity, LeaseConfig, LEASE_SECONDS, RENEW_EVERY,
};
use crate::usecases::testing::START;

/// One operator: what it holds and when it last wrote the lease successfully.
#[derive(Default)]
struct Operator {
    held: Option<Held>,
    last_ok: i64,
}

fn config(who: usize) -> LeaseConfig {
    LeaseConfig {
        namespace: "kube-system".into(),
        identity: Identity {
            holder: format!("op{who}@host pid {who}"),
            command: "drift replace".into(),
        },
        wait: None,
    }
}

/// How long after its last renewal an operator still writes (its keeper gives up then).
const STILL_WRITING: i64 = LEASE_SECONDS - RENEW_EVERY.as_secs() as i64;

/// `who` takes the lease; a violation when the other still writes under it.
fn take(
    cluster: &FakeCluster,
    clock: &FakeClock,
    ops: &Rc<RefCell<[Operator; 2]>>,
    who: usize,
    found: &mut Vec<String>,
) {
    let Ok(held) = acquire(cluster, clock, &config(who), &|_| false) else {
        return;
    };
    let now = clock.now();
    let mut ops = ops.borrow_mut();
    let other = &ops[1 - who];
    if other.held.is_some() && now < other.last_ok + STILL_WRITING {
        found.push(format!(
            "lease: op{who} took it at {now} while op{} renewed at {}",
            1 - who,
            other.last_ok
        ));
    }
    ops[who] = Operator {
        held: Some(held),
        last_ok: now,
    };
}

/// One case of the lease: up to 30 random steps, then each holder releases, faults gone.
pub fn case(rng: &mut Rng) -> Vec<String> {
    let cluster = FakeCluster::new();
    let clock = FakeClock::at(START);
    let ops: Rc<RefCell<[Operator; 2]>> = Rc::default();
    let mut found = Vec::new();
    let raced: Rc<RefCell<Vec<String>>> = Rc::default();
    let racing = Rc::new(Cell::new(true));
    for _ in 0..5 + rng.below(26) {
        let who = rng.below(2);
        match rng.below(7) {
            0 | 1 => take(&cluster, &clock, &ops, who, &mut found),
            2 | 3 => {
                let mut held = ops.borrow_mut()[who].held.take();
                if let Some(h) = held.as_mut() {
                    match renew(&cluster, &clock, h) {
                        Ok(Ok(())) => ops.borrow_mut()[who].last_ok = clock.now(),
                        Ok(Err(_)) => {}
                        Err(_) => held = None,
                    }
                }
                // Past its keeper's patience it stops writing: the gate is closed.
                if clock.now() >= ops.borrow()[who].last_ok + STILL_WRITING {
                    held = None;
                }
                ops.borrow_mut()[who].held = held;
            }
            4 => {
                let held = ops.borrow_mut()[who].held.take();
                if let Some(h) = held {
                    let _ = release(&cluster, &h);
                }
            }
            5 => clock.advance(Duration::from_secs(1 + rng.below(40) as u64)),
            _ => {
                if rng.below(2) == 0 {
                    faults::api_faults(rng, &cluster, 2);
                } else {
                    // The other one takes it right after this one read it.
                    let (c, k, o, r) = (cluster.clone(), clock.clone(), ops.clone(), raced.clone());
                    let on = racing.clone();
                    cluster.after(Method::Get, "/leases/", move |_| {
                        if !on.get() {
                            return;
                        }
                        let mut f = Vec::new();
                        take(&c, &k, &o, 1 - who, &mut f);
                        r.borrow_mut().extend(f);
                    });
                }
            }
        }
    }
    found.extend(raced.borrow().iter().cloned());
    cluster.clear_faults();
    racing.set(false);
    let mut released = Vec::new();
    let holds: Vec<Held> = ops
        .borrow_mut()
        .iter_mut()
        .filter_map(|o| o.held.take())
        .collect();
    for h in holds {
        {
            match release(&cluster, &h) {
                Ok(()) => released.push(h.identity.holder.clone()),
                Err(e) => found.push(format!("lease: release failed without faults: {e}")),
            }
        }
    }
    // A run that released it leaves it free (one that lost it leaves it to expire).
    if let Ok(Some(lease)) = read(&cluster, "kube-system") {
        if let Some(h) = lease.holder.filter(|h| released.contains(h)) {
            found.push(format!("lease: still held by {h} after it released it"));
        }
    }
    found
}
