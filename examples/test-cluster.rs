//! The local test cluster, standalone: a loopback Kubernetes API that `kubectl` and
//! `kubectl karpenter` can be pointed at. See `tests/cluster/mod.rs` for what it implements.
//!
//! ```text
//! cargo run --example test-cluster -- --listen 127.0.0.1:8080 --kubernetes-version 1.25 \
//!     --write-kubeconfig /tmp/test-cluster.kubeconfig
//! ```

#[path = "../tests/cluster/mod.rs"]
mod cluster;

fn main() {
    std::process::exit(cluster::main_with_args(std::env::args().skip(1).collect()));
}
