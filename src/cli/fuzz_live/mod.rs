//! The cluster's answers fuzzed (docs/upstream-tests.md "The cluster's answers fuzzed
//! (s31-fuzzlive)"): what the API server returns is not trusted to be well-formed. A real
//! cluster holds objects our manifests never have — other controllers' fields, odd but valid
//! values, huge lists, missing optional fields, older generations served side by side, Nodes
//! without status, NodeClaims mid-creation — and a proxy may answer anything.
//!
//! In process: the live worlds of [`stories::world`] in the in-memory cluster, behind a proxy
//! ([`mutate::Mutating`]) that rewrites some GET answers with one class of mutation per run,
//! the read-only live commands run on them ([`stories::run`]: the use cases the commands call
//! after connecting, rendered). The answers' bytes are decoded by `k8s::ops` as they are from
//! kube-rs, so the decoding is the real one. Checked for each run: no panic; the exit code of
//! docs/spec.md §2 (0–4); an error is one non-empty line of at most 1,200 characters as printed;
//! no request but GET (these commands change nothing); a looping `continue` token not followed
//! forever; a field unknown to the code changes nothing (the answer is the baseline's: unlike
//! `-f` input, the server's extra fields are accepted). A watchdog fails the run only on a real
//! hang (no run finished in `FUZZ_WATCHDOG` seconds, default 600): no timed assertion.
//!
//! ```sh
//! cargo test --lib cli::fuzz_live                       # the short fixed-seed run
//! FUZZ_SEED=7 FUZZ_COUNT=3000 cargo test --lib cli::fuzz_live -- --ignored --nocapture
//! FUZZ_ONLY=huge ...                                          # one mutation class
//! ```

mod mutate;
mod stories;

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mutate::{Class, Mutating, Rng, CLASSES};
use stories::{Story, STORIES, VARIANTS};

/// Where the last panic was (set by the sweep's quiet hook).
static PANIC_AT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Pages of one looping `continue` token a command may follow before it counts as a failure.
const LOOPING_PAGES_ALLOWED: usize = 100;

/// One run's parameters.
#[derive(Debug, Clone)]
struct Plan {
    story: Story,
    class: Option<Class>,
    variant: usize,
    json: bool,
    seed: u64,
    count: usize,
}

/// What one run did.
struct Ran {
    /// Exit code and error message, or the panic.
    exit: Result<(u8, String), String>,
    writes: Vec<String>,
    done: Vec<String>,
    looping_pages: usize,
    took: Duration,
}

fn run_one(plan: &Plan) -> Ran {
    let world = stories::world(plan.variant);
    let proxy = Mutating::new(world.cluster.clone(), plan.class, plan.seed, plan.count);
    let start = Instant::now();
    let mut printed = stories::Printed::default();
    let result = catch_unwind(AssertUnwindSafe(|| {
        stories::run(plan.story, &world, &proxy, plan.json, &mut printed)
    }));
    let exit = match result {
        Ok(Ok(exit)) => Ok((exit as u8, String::new())),
        Ok(Err(e)) => Ok((e.exit as u8, e.message)),
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())),
    };
    Ran {
        exit,
        writes: proxy.writes(),
        done: proxy.done(),
        looping_pages: proxy.looping_pages(),
        took: start.elapsed(),
    }
}

/// What a sweep found.
#[derive(Default, Debug)]
struct Findings {
    runs: usize,
    /// Runs by class (`None`: baseline) → (runs, failures).
    by_class: BTreeMap<Option<Class>, (usize, usize)>,
    exits: BTreeMap<u8, usize>,
    /// Distinct failures → the first run that showed it (plan and mutations).
    failures: BTreeMap<String, String>,
    /// Distinct error messages (first 100 characters) → how many.
    errors: BTreeMap<String, usize>,
    /// The slowest run.
    slowest: (Duration, String),
}

/// The failures of one run, given the baseline exit of its story and variant.
fn judge(plan: &Plan, ran: &Ran, baseline: Option<u8>) -> Vec<String> {
    let mut failures = Vec::new();
    match &ran.exit {
        Err(panic) => {
            let at = std::mem::take(&mut *PANIC_AT.lock().unwrap());
            failures.push(format!("panic: {}{at}", panic.lines().next().unwrap_or("")));
        }
        Ok((exit, message)) => {
            if plan.class.is_none() && *exit >= 2 {
                failures.push(format!("the unmutated world fails: exit {exit}: {message}"));
            }
            if *exit > 4 {
                failures.push(format!("exit {exit}: {message}"));
            }
            let shown = crate::cli::output::one_line(message);
            if *exit >= 2 && shown.trim().is_empty() {
                failures.push(format!("exit {exit} without a message"));
            }
            if shown.chars().count() > 1_200 {
                let head: String = shown.chars().take(80).collect();
                failures.push(format!("long message: {head}"));
            }
            if plan.class == Some(Class::Unknown) && baseline != Some(*exit) {
                let head: String = shown.chars().take(160).collect();
                failures.push(format!(
                    "an unknown field changed the answer (exit {exit}, baseline {baseline:?}): {head}"
                ));
            }
        }
    }
    if let Some(w) = ran.writes.first() {
        failures.push(format!("a read-only command wrote: {w}"));
    }
    if ran.looping_pages > LOOPING_PAGES_ALLOWED {
        failures.push(format!(
            "followed a looping continue token for {} pages",
            ran.looping_pages
        ));
    }
    failures
}

/// The sweep: `count` runs from `seed` (`only`: the classes whose name holds it).
fn sweep(seed: u64, count: usize, only: &str, tell: &mpsc::Sender<String>) -> Findings {
    let classes: Vec<Class> = CLASSES
        .into_iter()
        .filter(|c| {
            format!("{c:?}")
                .to_lowercase()
                .contains(&only.to_lowercase())
        })
        .collect();
    assert!(!classes.is_empty(), "no class matches {only:?}");
    let mut rng = Rng::new(seed);
    let mut findings = Findings::default();
    let mut baselines: BTreeMap<(Story, usize, bool), u8> = BTreeMap::new();
    // The baselines first: every story on every world answers without a mutation.
    let mut plans: Vec<Plan> = Vec::new();
    for story in STORIES {
        for variant in 0..VARIANTS {
            plans.push(Plan {
                story,
                class: None,
                variant,
                json: true,
                seed: 0,
                count: 0,
            });
        }
    }
    for _ in 0..count {
        plans.push(Plan {
            story: *rng.pick(&STORIES),
            class: Some(*rng.pick(&classes)),
            variant: rng.below(VARIANTS),
            json: rng.below(2) == 0,
            seed: rng.next(),
            count: 1 + rng.below(3),
        });
    }
    for plan in plans {
        let _ = tell.send(format!("{plan:?}"));
        let ran = run_one(&plan);
        findings.runs += 1;
        let baseline = baselines.get(&(plan.story, plan.variant, true)).copied();
        let failures = judge(&plan, &ran, baseline);
        if let Ok((exit, message)) = &ran.exit {
            *findings.exits.entry(*exit).or_default() += 1;
            if plan.class.is_none() {
                baselines.insert((plan.story, plan.variant, true), *exit);
            }
            if !message.is_empty() {
                let head: String = message.chars().take(200).collect();
                *findings.errors.entry(head).or_default() += 1;
            }
        }
        let entry = findings.by_class.entry(plan.class).or_default();
        entry.0 += 1;
        if !failures.is_empty() {
            entry.1 += 1;
        }
        for f in failures {
            // One entry per kind of failure: the counts and names in it vary.
            let key: String = f
                .chars()
                .take(120)
                .map(|c| if c.is_ascii_digit() { '#' } else { c })
                .collect();
            findings
                .failures
                .entry(key)
                .or_insert_with(|| format!("{plan:?} {:?}", ran.done));
        }
        if ran.took > findings.slowest.0 {
            findings.slowest = (ran.took, format!("{plan:?} {:?}", ran.done));
        }
    }
    findings
}

/// [`sweep`] on a thread with the binary's 8 MiB stack, watched: it fails only when no run
/// finished for `watchdog` (a real hang), naming the run.
fn watched(seed: u64, count: usize, only: String, quiet: bool, watchdog: Duration) -> Findings {
    let (tell, heard) = mpsc::channel::<String>();
    let (done, result) = mpsc::channel::<Findings>();
    let quiet = crate::testing::quiet_panics(quiet, &PANIC_AT);
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(move || {
            let findings = sweep(seed, count, &only, &tell);
            let _ = done.send(findings);
        })
        .unwrap();
    let mut current = String::from("(starting)");
    let findings = loop {
        if let Ok(findings) = result.try_recv() {
            break findings;
        }
        match heard.recv_timeout(watchdog) {
            Ok(next) => current = next,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break result.recv().expect("the sweep panicked outside a run")
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no run finished in {watchdog:?}: a hang in {current}")
            }
        }
    };
    drop(quiet);
    findings
}

fn report(f: &Findings) -> String {
    let mut out = format!(
        "{} runs, exits {:?}, {} distinct failures; slowest {:?}: {}\n",
        f.runs,
        f.exits,
        f.failures.len(),
        f.slowest.0,
        f.slowest.1.chars().take(300).collect::<String>()
    );
    out.push_str("| class | runs | failing runs |\n");
    for (class, (runs, failed)) in &f.by_class {
        let name = class.map_or_else(|| "baseline".to_string(), |c| format!("{c:?}"));
        out.push_str(&format!("| {name} | {runs} | {failed} |\n"));
    }
    for (key, at) in &f.failures {
        let key: String = key.chars().take(300).collect();
        let at: String = at.chars().take(600).collect();
        out.push_str(&format!("- {key}\n  {at}\n"));
    }
    if std::env::var("FUZZ_ERRORS").is_ok() {
        for (message, n) in &f.errors {
            out.push_str(&format!("  {n} × {message}\n"));
        }
    }
    out
}

fn var(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The sweep, as long as asked: `FUZZ_SEED`, `FUZZ_COUNT` (runs), `FUZZ_ONLY` (a class),
/// `FUZZ_WATCHDOG` (seconds without a finished run that count as a hang), `FUZZ_ERRORS` (list
/// the distinct error messages).
#[test]
#[ignore = "a fuzzing run: FUZZ_SEED=1 FUZZ_COUNT=3000 ... -- --ignored --nocapture"]
fn the_cluster_answers_fuzzed_as_long_as_asked() {
    let findings = watched(
        var("FUZZ_SEED", 1),
        var("FUZZ_COUNT", 1000) as usize,
        std::env::var("FUZZ_ONLY").unwrap_or_default(),
        true,
        Duration::from_secs(var("FUZZ_WATCHDOG", 600)),
    );
    println!("{}", report(&findings));
    assert!(findings.failures.is_empty(), "{}", report(&findings));
}

/// A short fixed-seed run: no mutated answer makes a read-only live command panic, hang, write,
/// leave the exit-code contract or refuse a field it does not know.
#[test]
fn a_short_fixed_seed_run_over_mutated_cluster_answers_finds_nothing() {
    let findings = watched(31, 24, String::new(), false, Duration::from_secs(600));
    assert!(
        findings.runs >= 24 + STORIES.len() * VARIANTS,
        "{}",
        report(&findings)
    );
    assert!(findings.failures.is_empty(), "{}", report(&findings));
}
