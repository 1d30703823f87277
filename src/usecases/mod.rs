//! The use cases: what the commands do, as workflows over the narrow seams — the cluster
//! ([`Cluster`](crate::k8s::Cluster)), the cloud ([`Compute`](crate::cloud::Compute)) and time
//! ([`clock::Clock`]) — deciding with the pure core (`model`, `scheduling`, `drift`,
//! `disruption`) and reporting typed outcomes and events. They never see clap, rendering or the
//! concrete adapters, so every branch runs in a unit test against
//! [`FakeCluster`](crate::k8s::fake::FakeCluster), [`FakeCloud`](crate::cloud::fake::FakeCloud)
//! and [`clock::FakeClock`].

pub mod ami;
pub mod clock;
pub mod consolidate;
pub mod drift_check;
pub mod drift_gate;
#[cfg(test)]
mod fuzz_mutating;
pub mod lease;
pub mod live;
pub mod nodes;
#[cfg(test)]
mod offline_live_check;
pub mod provisioning;
pub mod replace;
#[cfg(test)]
pub mod testing;

/// Where a use case reports progress as it happens: the command renders each event, a test
/// collects them. Any `FnMut(E)` is one.
pub trait Sink<E> {
    /// Reports one event.
    fn emit(&mut self, event: E);
}

impl<E, F: FnMut(E)> Sink<E> for F {
    fn emit(&mut self, event: E) {
        self(event)
    }
}
