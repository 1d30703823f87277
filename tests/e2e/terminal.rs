//! Terminal UX under a real PTY (issue #6's "Must show"), with tmux: the local test cluster +
//! moto as in `provision_live`, and `kubectl karpenter` run through kubectl in a tmux pane.
//!
//! - A destructive command's confirmation (`provision` without `--yes`) shows the plan and the
//!   question; answering `n` changes nothing (exit 0, "Nothing launched.", no instance).
//! - Colour: on the PTY by default; none with `NO_COLOR=1` (neither on the screen nor in the
//!   raw bytes the program wrote); `--color always` wins over `NO_COLOR`.
//! - `--wait` on the PTY draws a progress line redrawn in place; piped, the same wait prints
//!   plain `waiting: …` lines with no colour, no `\r` and no escape sequence at all.
//!
//! tmux is required (`.ci/run` installs it): the test fails, not skips, without it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::provision_live::Walk;
use crate::support::root;

/// The seed's NodePool and EC2NodeClass with `inflate` at 0 replicas (as `provision_live`).
fn manifest() -> String {
    std::fs::read_to_string(root().join("examples/manifests/quickstart.yaml"))
        .unwrap()
        .replace(
            "karpenterNodeRole-my-cluster",
            "KarpenterNodeRole-my-cluster",
        )
        .replace("replicas: 5", "replicas: 0")
}

/// Single-quoted for sh.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// One command in a tmux pane of its own tmux server: the screen (`capture-pane -e`, with
/// colour escapes), the raw bytes the program wrote (`pipe-pane`) and its exit code.
struct Pane {
    socket: String,
    dir: PathBuf,
}

impl Pane {
    /// Starts `kubectl ARGS` in a 200x60 pane with the walk's environment (less `NO_COLOR`)
    /// plus `env`. The command waits for `pipe-pane` to be attached before it runs.
    fn start(walk: &Walk, name: &str, env: &[(&str, &str)], args: &[&str]) -> Pane {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("terminal")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let template = walk.command(args);
        let mut script = String::from(
            "#!/bin/sh\nunset NO_COLOR KUBECTL_KARPENTER_LOG CLICOLOR_FORCE FORCE_COLOR TMUX\n",
        );
        for (key, value) in template.get_envs() {
            let key = key.to_string_lossy();
            if key == "NO_COLOR" {
                continue;
            }
            if let Some(value) = value {
                script.push_str(&format!(
                    "export {key}={}\n",
                    quote(&value.to_string_lossy())
                ));
            }
        }
        for (key, value) in env {
            script.push_str(&format!("export {key}={}\n", quote(value)));
        }
        let go = dir.join("go");
        let exit = dir.join("exit");
        let mut line = quote(&template.get_program().to_string_lossy());
        for a in template.get_args() {
            line.push(' ');
            line.push_str(&quote(&a.to_string_lossy()));
        }
        script.push_str(&format!(
            "while [ ! -e {go} ]; do sleep 0.05; done\n{line}\necho $? > {tmp}\nmv {tmp} {exit}\nexec sleep 600\n",
            go = quote(&go.to_string_lossy()),
            tmp = quote(&dir.join("exit.tmp").to_string_lossy()),
            exit = quote(&exit.to_string_lossy()),
        ));
        let script_path = dir.join("run.sh");
        std::fs::write(&script_path, script).unwrap();
        let pane = Pane {
            socket: format!("kk-{}-{name}", std::process::id()),
            dir,
        };
        pane.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "60",
            &format!("sh {}", quote(&script_path.to_string_lossy())),
        ]);
        let raw = pane.dir.join("raw.log");
        pane.tmux(&[
            "pipe-pane",
            "-o",
            "-t",
            "main",
            &format!("cat >> {}", quote(&raw.to_string_lossy())),
        ]);
        std::fs::write(&go, "").unwrap();
        pane
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux is needed for the terminal tests (.ci/run installs it)");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen and its scrollback, wrapped lines joined, colour escapes kept.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-e", "-J", "-t", "main", "-S", "-500"])
    }

    /// Everything the program wrote to the terminal, byte for byte.
    fn raw(&self) -> String {
        String::from_utf8_lossy(&std::fs::read(self.dir.join("raw.log")).unwrap_or_default())
            .into_owned()
    }

    /// Polls the screen until `f` accepts it.
    fn wait_screen(&self, secs: u64, what: &str, f: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let screen = self.screen();
            if f(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < end,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The command's exit code, once it has finished.
    fn exit_code(&self, secs: u64) -> i32 {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Ok(text) = std::fs::read_to_string(self.dir.join("exit")) {
                return text.trim().parse().unwrap();
            }
            assert!(
                Instant::now() < end,
                "the command did not finish; the screen:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs to the end: (exit code, screen, raw bytes).
    fn finish(&self, secs: u64) -> (i32, String, String) {
        let code = self.exit_code(secs);
        // pipe-pane's `cat` may lag the exit by a moment.
        std::thread::sleep(Duration::from_millis(300));
        (code, self.screen(), self.raw())
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .env_remove("TMUX")
            .output();
    }
}

/// An SGR (colour) sequence: `ESC [ digits/semicolons m`.
fn has_sgr(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.windows(2).enumerate().any(|(i, w)| {
        w == b"\x1b["
            && bytes[i + 2..]
                .iter()
                .find(|b| !(b.is_ascii_digit() || **b == b';'))
                .is_some_and(|b| *b == b'm')
    })
}

#[test]
fn sgr_detection() {
    assert!(has_sgr("a \x1b[32mgreen\x1b[0m"));
    assert!(has_sgr("\x1b[m"));
    assert!(!has_sgr("plain\r\n\x1b[2K\x1b[?25l"));
}

/// `Launch N EC2 instance(s)` → N.
fn launches_asked(screen: &str) -> usize {
    let at = screen.find("Launch ").expect("the question") + "Launch ".len();
    screen[at..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count")
}

#[test]
fn confirmation_colour_and_progress_on_a_terminal() {
    let walk = Walk::with("terminal-pty", true, "crds/v1beta1", |_| Vec::new());
    walk.apply("basic.yaml", &manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);
    let prompt = "EC2 instance(s) for 2 pod(s) in cluster test-cluster? [y/N]";

    // 1. The confirmation of a destructive command: the plan, then the question; "n" changes
    // nothing.
    let pane = Pane::start(&walk, "confirm-no", &[], &["karpenter", "provision"]);
    let screen = pane.wait_screen(60, "the confirmation prompt", |s| s.contains("[y/N]"));
    assert!(screen.contains(prompt), "{screen}");
    let question = screen.find("Launch ").unwrap();
    let plan = screen
        .find("NODECLAIM")
        .expect("the plan is on the screen with the question");
    assert!(
        plan < question,
        "the plan comes before the question:\n{screen}"
    );
    assert!(
        screen.contains("new NodeClaim(s), $") && screen.contains("2 pod(s) placed"),
        "the plan's summary: {screen}"
    );
    assert!(
        has_sgr(&screen),
        "colour on a terminal by default:\n{screen:?}"
    );
    pane.tmux(&["send-keys", "-t", "main", "n"]);
    pane.tmux(&["send-keys", "-t", "main", "Enter"]);
    let (code, screen, _) = pane.finish(30);
    assert_eq!(code, 0, "answering no is not an error:\n{screen}");
    assert!(screen.contains("Nothing launched."), "{screen}");
    assert!(walk.launched().is_empty(), "nothing launched after \"n\"");
    assert!(walk
        .items(&["get", "nodes", "-l", "karpenter.sh/nodepool"])
        .is_empty());
    drop(pane);

    // 2. NO_COLOR=1 on the PTY: no colour on the screen nor in the bytes written …
    let pane = Pane::start(
        &walk,
        "no-color",
        &[("NO_COLOR", "1")],
        &["karpenter", "provision", "--dry-run"],
    );
    let (code, screen, raw) = pane.finish(60);
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("0 unschedulable"), "{screen}");
    assert!(!screen.contains('\x1b'), "NO_COLOR: {screen:?}");
    assert!(!has_sgr(&raw), "NO_COLOR, raw output: {raw:?}");
    drop(pane);

    // … while --color always colours even so.
    let pane = Pane::start(
        &walk,
        "color-always",
        &[("NO_COLOR", "1")],
        &["karpenter", "provision", "--dry-run", "--color", "always"],
    );
    let (code, screen, raw) = pane.finish(60);
    assert_eq!(code, 0, "{screen}");
    assert!(
        has_sgr(&screen) && has_sgr(&raw),
        "--color always: {screen:?}"
    );
    drop(pane);

    // 3. Answering "y", with --wait: the wait is one status line redrawn in place, its last
    // state left behind.
    let pane = Pane::start(
        &walk,
        "confirm-yes-wait",
        &[],
        &["karpenter", "provision", "--wait", "--timeout", "120s"],
    );
    let screen = pane.wait_screen(60, "the confirmation prompt", |s| s.contains("[y/N]"));
    let asked = launches_asked(&screen);
    pane.tmux(&["send-keys", "-t", "main", "y"]);
    pane.tmux(&["send-keys", "-t", "main", "Enter"]);
    let (code, screen, raw) = pane.finish(180);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains(&format!(
            "waiting: {asked}/{asked} node(s) Ready, 2/2 pod(s) bound"
        )),
        "{screen}"
    );
    assert_eq!(
        screen.matches("waiting: ").count(),
        1,
        "one status line, redrawn in place:\n{screen}"
    );
    assert!(
        raw.contains("\x1b[2K"),
        "the status line is redrawn in place: {raw:?}"
    );
    assert_eq!(walk.launched().len(), asked);
}

#[test]
fn piped_output_has_no_colour_and_no_progress_bar() {
    let walk = Walk::with("terminal-piped", true, "crds/v1beta1", |_| Vec::new());
    walk.apply("basic.yaml", &manifest());
    walk.ok(&["scale", "deployment", "inflate", "--replicas", "2"]);
    walk.wait_unschedulable(2);
    // Colour left to auto (no NO_COLOR), a terminal type that could draw anything: piped, the
    // wait prints plain lines only.
    let out = walk
        .command(&[
            "karpenter",
            "provision",
            "--yes",
            "--wait",
            "--timeout",
            "120s",
        ])
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let n = walk.launched().len();
    assert!(n >= 1);
    assert!(
        stderr.contains(&format!(
            "waiting: {n}/{n} node(s) Ready, 2/2 pod(s) bound\n"
        )),
        "plain status lines: {stderr}"
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(
            !text.contains('\x1b'),
            "{name}: no escape sequence: {text:?}"
        );
        assert!(!text.contains('\r'), "{name}: no carriage return: {text:?}");
    }
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("waiting: "))
        .collect();
    let mut unique = lines.clone();
    unique.dedup();
    assert_eq!(lines, unique, "each status printed once");
}
