//! Which request gets which fault: a seeded draw per request, limited to the faults the request's
//! peer and kind can have (a 409 only answers a Kubernetes write, insufficient capacity only
//! EC2's CreateFleet).

use std::time::Duration;

/// Which peer a proxy stands in front of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Peer {
    /// The Kubernetes API (the loopback cluster).
    Kubernetes,
    /// AWS's Query/JSON APIs (moto): EC2 and SSM.
    Aws,
}

/// One injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Fault {
    /// Throttled: 429 with `Retry-After: 1` (Kubernetes, as API Priority and Fairness answers),
    /// 503 `RequestLimitExceeded` (EC2), 400 `ThrottlingException` (SSM).
    Throttle,
    /// A server error with this status (500, 502, 503, 504), not forwarded.
    ServerError(u16),
    /// The connection reset before the request reached the peer.
    ResetBefore,
    /// The request reached the peer and took effect; the connection reset instead of the answer.
    LostAnswer,
    /// Answered this many milliseconds late.
    Slow(u64),
    /// CreateFleet answered with `InsufficientInstanceCapacity` for every type asked for.
    InsufficientCapacity,
    /// A Kubernetes write refused with 409 Conflict (as when another writer got there first).
    Conflict,
}

/// What one request looks like to the plan.
pub(crate) struct Seen<'a> {
    pub(crate) peer: Peer,
    pub(crate) method: &'a str,
    /// EC2's `Action=` (from the form body) or SSM's `X-Amz-Target` operation.
    pub(crate) action: Option<&'a str>,
}

impl Seen<'_> {
    fn is_write(&self) -> bool {
        self.method != "GET"
    }
}

/// The seeded plan: each request is faulted with probability `rate`, at most `budget` times.
#[derive(Debug, Clone)]
pub(crate) struct FaultPlan {
    rng: Rng,
    rate: f64,
    budget: u32,
}

/// splitmix64: small, seeded, the same draws everywhere.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_5EED)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// In `[low, high]`.
    pub(crate) fn between(&mut self, low: u64, high: u64) -> u64 {
        low + self.next() % (high - low + 1)
    }
}

impl FaultPlan {
    /// Nothing injected (the clean re-run).
    pub(crate) fn none() -> FaultPlan {
        FaultPlan {
            rng: Rng::new(0),
            rate: 0.0,
            budget: 0,
        }
    }

    /// Faults with probability `rate` per request, `budget` at most, drawn from `seed`.
    pub(crate) fn seeded(seed: u64, rate: f64, budget: u32) -> FaultPlan {
        FaultPlan {
            rng: Rng::new(seed),
            rate,
            budget,
        }
    }

    /// The fault for this request, if any.
    pub(crate) fn draw(&mut self, seen: &Seen) -> Option<Fault> {
        if self.budget == 0 || self.rng.unit() >= self.rate {
            return None;
        }
        let mut kinds = vec![
            Fault::Throttle,
            Fault::ServerError(500),
            Fault::ServerError(503),
            Fault::ResetBefore,
            Fault::LostAnswer,
            Fault::Slow(0),
        ];
        match seen.peer {
            Peer::Kubernetes => {
                kinds.extend([Fault::ServerError(502), Fault::ServerError(504)]);
                if seen.is_write() {
                    kinds.push(Fault::Conflict);
                }
            }
            Peer::Aws => {
                if seen.action == Some("CreateFleet") {
                    // The fault a serious launcher must handle most: twice the weight.
                    kinds.extend([Fault::InsufficientCapacity, Fault::InsufficientCapacity]);
                }
            }
        }
        self.budget -= 1;
        let fault = kinds[(self.rng.next() % kinds.len() as u64) as usize];
        Some(match fault {
            Fault::Slow(_) => Fault::Slow(self.rng.between(200, 2000)),
            other => other,
        })
    }

    /// A delay for a slow answer.
    pub(crate) fn delay(fault: Fault) -> Option<Duration> {
        match fault {
            Fault::Slow(ms) => Some(Duration::from_millis(ms)),
            _ => None,
        }
    }
}

#[test]
fn a_plan_is_reproducible_and_keeps_to_its_peer_and_budget() {
    let k8s_write = Seen {
        peer: Peer::Kubernetes,
        method: "PATCH",
        action: None,
    };
    let fleet = Seen {
        peer: Peer::Aws,
        method: "POST",
        action: Some("CreateFleet"),
    };
    let draws = |seed| {
        let mut plan = FaultPlan::seeded(seed, 1.0, 40);
        (0..50)
            .map(|i| plan.draw(if i % 2 == 0 { &k8s_write } else { &fleet }))
            .collect::<Vec<_>>()
    };
    let a = draws(7);
    assert_eq!(a, draws(7), "the same seed, the same faults");
    assert_eq!(a.iter().flatten().count(), 40, "the budget caps them");
    for (i, f) in a.iter().enumerate() {
        match f {
            Some(Fault::Conflict) => assert_eq!(i % 2, 0, "409s answer Kubernetes writes"),
            Some(Fault::InsufficientCapacity) => assert_eq!(i % 2, 1, "ICE answers CreateFleet"),
            _ => {}
        }
    }
    let mut none = FaultPlan::none();
    assert_eq!(none.draw(&fleet), None);
}
