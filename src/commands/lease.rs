//! The operator lease of a mutating run (docs/spec.md §10): taken before anything changes,
//! renewed from its own thread, released when dropped.

use super::Context;
use crate::cli::health::Health;
use crate::cli::LeaseArgs;
use crate::error::CommandError;
use crate::k8s::client::KubeClient;
use crate::k8s::config::ClusterTarget;
use crate::k8s::WriteGate;
use crate::usecases::clock::SystemClock;
use crate::usecases::lease::{self, Identity, Keeper, LeaseConfig};

/// The operator lease of a mutating run (docs/spec.md §10), renewed from its own thread until
/// dropped, then released.
pub struct OperatorLease {
    pub(super) keeper: Keeper,
    pub(super) health: Health,
}

impl OperatorLease {
    /// Why the lease was lost, once it was: the run must stop (in a pod the container restarts
    /// and waits as a standby, as a client-go leader does in `OnStoppedLeading`).
    pub fn lost(&self) -> Option<CommandError> {
        lost_through(&self.keeper.gate())
    }

    /// The run's health (its clock beats it).
    pub fn health(&self) -> &Health {
        &self.health
    }
}

/// Why the lease behind `gate` was lost, as the run's error (exit 4), once it was.
pub(super) fn lost_through(gate: &WriteGate) -> Option<CommandError> {
    gate.closed().map(|why| {
        CommandError::refused(format!("{why}: this run stops"))
            .with_hint("in a pod the container restarts and waits for the lease as a standby")
    })
}

/// `--wait-for-lease`'s value: a duration, or `forever` (a standby replica).
fn lease_wait(text: &str) -> Result<std::time::Duration, CommandError> {
    if text == "forever" {
        return Ok(std::time::Duration::MAX);
    }
    crate::disruption::time::parse_duration_flag(text).ok_or_else(|| {
        CommandError::input(format!(
            "--wait-for-lease {text:?}: expected a duration such as 5m, or forever"
        ))
    })
}

/// Takes the operator lease for `command`, or refuses (exit 4) naming the run that holds it;
/// `--wait-for-lease` waits for it instead (live on `health`, not ready, until it is taken).
pub fn take_lease(
    ctx: &mut Context<'_>,
    command: &str,
    args: &LeaseArgs,
    health: &Health,
) -> Result<OperatorLease, CommandError> {
    let wait = args.wait_for_lease.as_deref().map(lease_wait).transpose()?;
    let config = LeaseConfig {
        namespace: args.lease_namespace.clone(),
        identity: Identity {
            holder: holder_identity(),
            command: command.to_string(),
        },
        wait,
    };
    // A client of its own: the renewals must not wait behind the run's long calls.
    let target = ClusterTarget::from_flags(&ctx.global.kube_flags())?;
    let client = KubeClient::connect(&target)?;
    let held = lease::acquire(&client, &health.clock(), &config, &ended_here)?;
    ctx.note(&format!(
        "operator lease {}/{} taken as {}",
        config.namespace,
        lease::LEASE_NAME,
        config.identity.holder
    ));
    // The keeper's own clock: its renewals are not the run's loop beating.
    let keeper = Keeper::start(client, SystemClock::new(), held);
    health.leading(keeper.gate());
    Ok(OperatorLease {
        keeper,
        health: health.clone(),
    })
}

/// Whether `holder` (`user@host pid N [machine]`) was a process of this machine that no longer
/// runs — a run killed and resumed at once need not wait for its own lease to expire. Only where
/// `/proc` tells (Linux); elsewhere the lease expires as usual.
fn ended_here(holder: &str) -> bool {
    let proc = std::path::Path::new("/proc");
    proc.join("self").exists()
        && ended_on(holder, &host_name(), machine().as_deref(), &|pid| {
            proc.join(pid).exists()
        })
}

/// [`ended_here`]'s rule: the holder names this host and this machine key (boot and PID
/// namespace: a pid means nothing elsewhere) and its pid does not run. A host name alone is not
/// enough — two machines may share one (`localhost.localdomain`, a container's), and taking a
/// live run's lease because its pid is not ours would put two operators on the cluster (issue
/// 13); client-go tells holders apart by a UUID per process for the same reason
/// (`tools/leaderelection/resourcelock` identities are `hostname_uuid`).
fn ended_on(holder: &str, host: &str, machine: Option<&str>, runs: &dyn Fn(&str) -> bool) -> bool {
    let Some((who, key)) = holder.strip_suffix(']').and_then(|h| h.rsplit_once(" [")) else {
        return false;
    };
    let Some((user_host, pid)) = who.rsplit_once(" pid ") else {
        return false;
    };
    machine == Some(key)
        && user_host.split_once('@').map(|(_, h)| h) == Some(host)
        && pid.parse::<u32>().is_ok()
        && !runs(pid)
}

/// This machine's key: a hash of the boot id and of the PID namespace, so a pid is only ever
/// compared with pids of the same process table (`None` where `/proc` does not tell).
fn machine() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let pid_namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(machine_key(boot.trim(), &pid_namespace.to_string_lossy()))
}

/// FNV-1a of `boot` and `pid_namespace`, as 8 hex digits.
fn machine_key(boot: &str, pid_namespace: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for b in boot.bytes().chain([b'/']).chain(pid_namespace.bytes()) {
        hash = (hash ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!("{hash:08x}")
}

fn host_name() -> String {
    identity_host(&|k| std::env::var(k).ok())
}

/// The host part of the identity: in a pod, `POD_NAME` (set from the downward API by
/// `deploy/in-cluster.yaml`, so two replicas are told apart), else `HOSTNAME`, the kernel's
/// host name, `/etc/hostname`.
fn identity_host(env: &dyn Fn(&str) -> Option<String>) -> String {
    ["POD_NAME", "HOSTNAME"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.trim().is_empty()))
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".into())
}

/// `user@host pid N [machine]`: who to ask when the lease is held (in a pod:
/// `<namespace>@<pod> pid N [machine]`); the machine key keeps two machines of one name apart.
fn holder_identity() -> String {
    let who = identity(&|k| std::env::var(k).ok(), std::process::id());
    match machine() {
        Some(key) => format!("{who} [{key}]"),
        None => who,
    }
}

/// [`holder_identity`] from `env`: the user is `USER`/`LOGNAME`/`USERNAME`, in a pod without
/// one its namespace (`POD_NAMESPACE`).
fn identity(env: &dyn Fn(&str) -> Option<String>, pid: u32) -> String {
    let user = ["USER", "LOGNAME", "USERNAME", "POD_NAMESPACE"]
        .iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "unknown".into());
    format!("{user}@{} pid {pid}", identity_host(env))
}

#[cfg(test)]
mod tests {
    use super::{ended_on, identity, machine_key};

    /// Issue 13 (a lease held by a run whose identity looks like ours): a holder of the same
    /// user and host name is taken over at once only when it ran in this very process table
    /// (same machine key) and its pid is gone; a twin machine's live run, or a holder written
    /// without a key, keeps its lease until it expires.
    #[test]
    fn only_a_dead_process_of_this_very_machine_is_taken_over_at_once() {
        let here = machine_key("0d6f1c2e-boot", "pid:[4026531836]");
        let twin = machine_key("9a8b7c6d-boot", "pid:[4026531836]");
        let container = machine_key("0d6f1c2e-boot", "pid:[4026532201]");
        assert_ne!(here, twin);
        assert_ne!(here, container);
        let dead = |_: &str| false;
        let holder = |key: &str| format!("root@localhost pid 4242 [{key}]");
        assert!(ended_on(&holder(&here), "localhost", Some(&here), &dead));
        assert!(
            !ended_on(&holder(&here), "localhost", Some(&here), &|p| p == "4242"),
            "it runs"
        );
        assert!(
            !ended_on(&holder(&twin), "localhost", Some(&here), &dead),
            "another machine of that name"
        );
        assert!(
            !ended_on(&holder(&container), "localhost", Some(&here), &dead),
            "another PID namespace"
        );
        assert!(
            !ended_on("root@localhost pid 4242", "localhost", Some(&here), &dead),
            "no key"
        );
        assert!(
            !ended_on(&holder(&here), "laptop", Some(&here), &dead),
            "another host name"
        );
        assert!(
            !ended_on(&holder(&here), "localhost", None, &dead),
            "no /proc here"
        );
    }

    /// Two replicas of the in-cluster Deployment (pid 1 each, no user) are told apart by
    /// their pod names; a terminal's identity is unchanged.
    #[test]
    fn replicas_are_told_apart_by_their_pod_names() {
        let pod = |name: &'static str| {
            move |k: &str| match k {
                "POD_NAME" => Some(name.to_string()),
                "POD_NAMESPACE" => Some("karpenter".to_string()),
                "HOSTNAME" => Some("pod".to_string()),
                _ => None,
            }
        };
        let a = identity(&pod("provision-7d9c-abcde"), 1);
        let b = identity(&pod("provision-7d9c-fghij"), 1);
        assert_eq!(a, "karpenter@provision-7d9c-abcde pid 1");
        assert_ne!(a, b);
        let desk = |k: &str| match k {
            "USER" => Some("alice".to_string()),
            "HOSTNAME" => Some("laptop".to_string()),
            _ => None,
        };
        assert_eq!(identity(&desk, 4242), "alice@laptop pid 4242");
    }
}
