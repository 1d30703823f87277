//! The operator lease (docs/spec.md §10): one mutating run per cluster at a time. Two autoscalers
//! on one cluster are an outage even when both are this tool, so every run that launches,
//! cordons, drains or terminates holds the `coordination.k8s.io/v1` Lease `kubectl-karpenter`
//! for its whole length: taken when free or expired, renewed while the run lasts, released at the
//! end. The rules follow client-go's leader election (`tools/leaderelection/leaderelection.go`
//! `tryAcquireOrRenew`: create when absent, take over only when
//! `renewTime + leaseDurationSeconds` has passed, every write naming the `resourceVersion` it
//! read so that of two racing takers exactly one wins; release clears the holder), with one
//! difference: expiry is judged on `renewTime` against this machine's clock, not on when the
//! lease was last seen to change, so a lease left by a killed run is taken at once when it is
//! already old (clock skew between operators counts against the lease duration).
//!
//! [`acquire`], [`renew`] and [`release`] are single steps over the [`Cluster`] seam;
//! [`Keeper`] renews from a thread of its own (a run's calls can block for longer than the
//! lease lasts) and closes a [`WriteGate`] the moment the lease is lost, so no write is sent
//! after another operator could have taken over.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};

use super::clock::Clock;
use crate::error::CommandError;
use crate::k8s::{ops, Cluster, ClusterError, WriteGate};
use crate::model::labels::LEASE_COMMAND;

/// The Lease's name.
pub const LEASE_NAME: &str = "kubectl-karpenter";
/// Where it lives unless `--lease-namespace` says otherwise.
pub const DEFAULT_NAMESPACE: &str = "kube-system";
/// `spec.leaseDurationSeconds`: how long a holder that stopped renewing keeps it.
pub const LEASE_SECONDS: i64 = 30;
/// How often the holder renews (a third of the duration: two renewals may fail in a row).
pub const RENEW_EVERY: Duration = Duration::from_secs(10);
/// How often a waiting run (`--wait-for-lease`) looks again.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// Who is running what: `holderIdentity` and the command, for the refusal message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// `user@host pid N`.
    pub holder: String,
    /// The command (`drift replace`).
    pub command: String,
}

/// What to take and how long to wait for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The Lease's namespace.
    pub namespace: String,
    /// This run.
    pub identity: Identity,
    /// `--wait-for-lease`: wait this long for a held lease instead of refusing at once.
    pub wait: Option<Duration>,
}

/// The Lease as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observed {
    /// `spec.holderIdentity` (absent or empty: released).
    pub holder: Option<String>,
    /// The holder's command (annotation).
    pub command: Option<String>,
    /// `spec.renewTime`, Unix seconds.
    pub renewed: Option<i64>,
    /// `spec.leaseDurationSeconds`.
    pub duration: i64,
    /// `metadata.resourceVersion`.
    pub resource_version: String,
}

/// Another run's hold on the lease, as the refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// `user@host pid N`.
    pub identity: String,
    /// Its command, when it said.
    pub command: Option<String>,
    /// Seconds since it last renewed.
    pub renewed_ago: Option<i64>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.identity)?;
        if let Some(ago) = self.renewed_ago {
            write!(f, ", renewed {ago} s ago")?;
        }
        if let Some(command) = &self.command {
            write!(f, ", {command}")?;
        }
        Ok(())
    }
}

/// What to do about the lease as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// There is none: create it.
    Create,
    /// Free, expired or already ours: write it, naming this resourceVersion.
    Take {
        /// The version read.
        resource_version: String,
    },
    /// Someone else holds it.
    Held(Holder),
}

/// The rule: absent → create; released, expired (no renewal within its duration), ours, or held
/// by a run known to be `gone` (a process of this machine that no longer exists: a killed run
/// resumed at once) → take; otherwise it is held.
pub fn decide(
    observed: Option<&Observed>,
    me: &Identity,
    now: i64,
    gone: &dyn Fn(&str) -> bool,
) -> Decision {
    let Some(lease) = observed else {
        return Decision::Create;
    };
    let take = Decision::Take {
        resource_version: lease.resource_version.clone(),
    };
    let holder = match lease.holder.as_deref() {
        None | Some("") => return take,
        Some(h) if h == me.holder || gone(h) => return take,
        Some(h) => h,
    };
    match lease.renewed {
        Some(renewed) if renewed + lease.duration.max(1) > now => Decision::Held(Holder {
            identity: holder.to_string(),
            command: lease.command.clone(),
            renewed_ago: Some((now - renewed).max(0)),
        }),
        // Expired, or never renewed (no renewTime: nobody can tell it is alive).
        _ => take,
    }
}

/// The lease this run holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    /// Where.
    pub namespace: String,
    /// Who.
    pub identity: Identity,
    /// The resourceVersion of our last write.
    pub resource_version: String,
}

/// Why a held lease is no longer ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Lost {
    /// Someone else's name is on it (it expired while we could not renew, and they took it).
    #[error("the operator lease was taken over by {0}")]
    TakenBy(String),
    /// It was deleted.
    #[error("the operator lease was deleted")]
    Deleted,
    /// Renewal failed for longer than the lease lasts.
    #[error("the operator lease could not be renewed for {seconds} s ({cause})")]
    NotRenewed {
        /// Since the last successful renewal.
        seconds: i64,
        /// The last error.
        cause: String,
    },
}

fn path(namespace: &str) -> String {
    format!("/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{LEASE_NAME}")
}

/// `metav1.MicroTime` as the API server writes it.
fn micro_time(unix: i64) -> String {
    let seconds = crate::model::time::format_rfc3339(unix);
    format!("{}.000000Z", seconds.trim_end_matches('Z'))
}

/// Reads the lease (`None`: there is none).
pub fn read(cluster: &dyn Cluster, namespace: &str) -> Result<Option<Observed>, ClusterError> {
    let Some(v) = ops::get::<Value>(cluster, &path(namespace))? else {
        return Ok(None);
    };
    let text = |p: &str| v.pointer(p).and_then(Value::as_str).map(str::to_string);
    Ok(Some(Observed {
        holder: text("/spec/holderIdentity"),
        command: v
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(LEASE_COMMAND))
            .and_then(Value::as_str)
            .map(str::to_string),
        renewed: text("/spec/renewTime")
            .as_deref()
            .and_then(crate::model::time::parse_rfc3339),
        duration: v
            .pointer("/spec/leaseDurationSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(LEASE_SECONDS),
        resource_version: text("/metadata/resourceVersion").unwrap_or_default(),
    }))
}

/// The lease's content with `identity` holding it, renewed `now`.
fn holding(identity: &Identity, now: i64, acquired: bool) -> Value {
    let mut spec = json!({
        "holderIdentity": identity.holder,
        "leaseDurationSeconds": LEASE_SECONDS,
        "renewTime": micro_time(now),
    });
    if acquired {
        spec["acquireTime"] = json!(micro_time(now));
    }
    json!({
        "metadata": {"annotations": {LEASE_COMMAND: identity.command}},
        "spec": spec,
    })
}

fn resource_version_of(written: &Value) -> String {
    written
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Takes the lease, or refuses (exit 4) naming its holder; with `config.wait`, looks again every
/// two seconds until then (Ctrl-C stops waiting). `gone` tells holders known to have ended.
pub fn acquire(
    cluster: &dyn Cluster,
    clock: &dyn Clock,
    config: &LeaseConfig,
    gone: &dyn Fn(&str) -> bool,
) -> Result<Held, CommandError> {
    let started = clock.monotonic();
    let lease_path = path(&config.namespace);
    let mut unanswered = 0;
    loop {
        let observed = match read(cluster, &config.namespace) {
            Ok(observed) => observed,
            // A waiting run (a standby replica) outlasts an API server that fails for a while,
            // as client-go's elector retries; a run that would not wait fails at once.
            Err(e) if passing(&e) && look_again(clock, started, config.wait) => continue,
            Err(e) => return Err(e.into()),
        };
        let now = clock.now();
        let written = match decide(observed.as_ref(), &config.identity, now, gone) {
            Decision::Create => {
                let mut lease = holding(&config.identity, now, true);
                lease["apiVersion"] = json!("coordination.k8s.io/v1");
                lease["kind"] = json!("Lease");
                lease["metadata"]["name"] = json!(LEASE_NAME);
                lease["metadata"]["namespace"] = json!(config.namespace);
                ops::create(
                    cluster,
                    &format!(
                        "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                        config.namespace
                    ),
                    &lease,
                )
            }
            Decision::Take { resource_version } => {
                let mut patch = holding(&config.identity, now, true);
                patch["metadata"]["resourceVersion"] = json!(resource_version);
                ops::merge_patch(cluster, &lease_path, &patch)
            }
            Decision::Held(holder) => {
                if look_again(clock, started, config.wait) {
                    continue;
                }
                return Err(refusal(&holder, &config.namespace, config.wait.is_some()));
            }
        };
        match written {
            Ok(lease) => {
                return Ok(Held {
                    namespace: config.namespace.clone(),
                    identity: config.identity.clone(),
                    resource_version: resource_version_of(&lease),
                })
            }
            // Someone wrote between our read and our write (created it, or took it): read again.
            Err(ClusterError::Api {
                status: 409 | 404, ..
            }) => continue,
            // Throttled, a server error or no answer: the write may or may not have been applied.
            // Never sent blind again: read again and decide — a lease already ours is taken at
            // its new version, one taken meanwhile refuses (the write was conditional on the
            // version read, so it cannot have overwritten anyone).
            Err(e) if passing(&e) && unanswered < TRANSIENT_WRITES => {
                unanswered += 1;
                if !clock.sleep(RETRY_EVERY / 4 * unanswered) {
                    return Err(e.into());
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// How many times taking the lease reads again after a write that got no clear answer.
const TRANSIENT_WRITES: u32 = 4;

/// With `--wait-for-lease`, sleeps until the next look and says whether to look (false: the
/// wait ran out, or Ctrl-C).
fn look_again(clock: &dyn Clock, started: Duration, wait: Option<Duration>) -> bool {
    let waited = clock.monotonic().saturating_sub(started);
    match wait {
        Some(wait) if waited < wait => clock.sleep(RETRY_EVERY.min(wait - waited)),
        _ => false,
    }
}

/// A failure that may pass: the server unreachable, failing (5xx) or throttling (429).
fn passing(e: &ClusterError) -> bool {
    match e {
        ClusterError::Transport { .. } => true,
        ClusterError::Api { status, .. } => *status >= 500 || *status == 429,
        _ => false,
    }
}

fn refusal(holder: &Holder, namespace: &str, waited: bool) -> CommandError {
    let error = CommandError::refused(format!(
        "another kubectl-karpenter run is changing this cluster: the operator lease {namespace}/{LEASE_NAME} is held by {holder}"
    ));
    if waited {
        error.with_hint("it was still held when --wait-for-lease ran out")
    } else {
        error.with_hint(format!(
            "wait for it to finish, or pass --wait-for-lease[=DURATION]; a run that was killed loses the lease {LEASE_SECONDS} s after its last renewal"
        ))
    }
}

/// Renews the held lease; `Err(Lost)` when it is no longer ours, `Ok(Err(_))` when the renewal
/// failed for a reason that may pass (the caller tries again).
pub fn renew(
    cluster: &dyn Cluster,
    clock: &dyn Clock,
    held: &mut Held,
) -> Result<Result<(), ClusterError>, Lost> {
    let observed = match read(cluster, &held.namespace) {
        Ok(Some(o)) => o,
        Ok(None) => return Err(Lost::Deleted),
        Err(e) => return Ok(Err(e)),
    };
    match observed.holder.as_deref() {
        Some(h) if h == held.identity.holder => {}
        Some(h) if !h.is_empty() => return Err(Lost::TakenBy(h.to_string())),
        _ => return Err(Lost::TakenBy("nobody (it was released)".to_string())),
    }
    let mut patch = holding(&held.identity, clock.now(), false);
    patch["metadata"]["resourceVersion"] = json!(observed.resource_version);
    match ops::merge_patch(cluster, &path(&held.namespace), &patch) {
        Ok(written) => {
            held.resource_version = resource_version_of(&written);
            Ok(Ok(()))
        }
        Err(e) => Ok(Err(e)),
    }
}

/// Gives the lease up (holder cleared, as client-go's `ReleaseOnCancel`) if it is still ours.
pub fn release(cluster: &dyn Cluster, held: &Held) -> Result<(), ClusterError> {
    let Some(observed) = read(cluster, &held.namespace)? else {
        return Ok(());
    };
    if observed.holder.as_deref() != Some(held.identity.holder.as_str()) {
        return Ok(());
    }
    let patch = json!({
        "metadata": {
            "resourceVersion": observed.resource_version,
            "annotations": {LEASE_COMMAND: null},
        },
        "spec": {"holderIdentity": null, "leaseDurationSeconds": 1},
    });
    ops::merge_patch(cluster, &path(&held.namespace), &patch).map(|_| ())
}

/// Keeps a held lease: renews it every [`RENEW_EVERY`] from its own thread with its own client,
/// closes the [`WriteGate`] when it is lost, and releases it when dropped.
pub struct Keeper {
    stop: Arc<AtomicBool>,
    gate: WriteGate,
    thread: Option<JoinHandle<()>>,
}

impl Keeper {
    /// Starts renewing `held` through `cluster` (a client of its own: the run's calls on the
    /// other one may block).
    pub fn start<C, K>(cluster: C, clock: K, held: Held) -> Keeper
    where
        C: Cluster + Send + 'static,
        K: Clock + Send + 'static,
    {
        let stop = Arc::new(AtomicBool::new(false));
        let gate = WriteGate::default();
        let thread = {
            let (stop, gate) = (stop.clone(), gate.clone());
            std::thread::spawn(move || keep(&cluster, &clock, held, &stop, &gate))
        };
        Keeper {
            stop,
            gate,
            thread: Some(thread),
        }
    }

    /// Closed (with the reason) once the lease is lost: the run's client sends no write after.
    pub fn gate(&self) -> WriteGate {
        self.gate.clone()
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The keeper's loop: renew on time, give up when lost, release when told to stop.
fn keep(
    cluster: &dyn Cluster,
    clock: &dyn Clock,
    mut held: Held,
    stop: &AtomicBool,
    gate: &WriteGate,
) {
    const STEP: Duration = Duration::from_millis(100);
    let mut last_renewal = clock.now();
    let mut since = Duration::ZERO;
    loop {
        if stop.load(Ordering::SeqCst) {
            let _ = release(cluster, &held);
            return;
        }
        clock.pause(STEP);
        since += STEP;
        if since < RENEW_EVERY {
            continue;
        }
        since = Duration::ZERO;
        let lost = match renew(cluster, clock, &mut held) {
            Ok(Ok(())) => {
                last_renewal = clock.now();
                None
            }
            Ok(Err(e)) => {
                let seconds = clock.now() - last_renewal;
                // Stop writing while a taker could still be waiting for expiry, not after.
                (seconds + RENEW_EVERY.as_secs() as i64 >= LEASE_SECONDS).then(|| {
                    Lost::NotRenewed {
                        seconds,
                        cause: e.to_string(),
                    }
                })
            }
            Err(lost) => Some(lost),
        };
        if let Some(lost) = lost {
            gate.close(lost.to_string());
            return;
        }
    }
}

#[cfg(test)]
mod tests;
