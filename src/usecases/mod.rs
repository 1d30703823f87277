//! The use cases: what the commands do, as workflows over the narrow seams — the cluster
//! ([`Cluster`](crate::k8s::Cluster)), the cloud ([`Compute`](crate::cloud::Compute)) and time
//! ([`clock::Clock`]) — deciding with the pure core (`model`, `scheduling`, `drift`,
//! `disruption`) and reporting typed outcomes and events. They never see clap, rendering or the
//! concrete adapters, so every branch runs in a unit test against
//! [`FakeCluster`](crate::k8s::fake::FakeCluster), [`FakeCloud`](crate::cloud::fake::FakeCloud)
//! and [`clock::FakeClock`].

pub mod clock;
