//! Two of issue #11's "Must show" as checks instead of a one-off count (docs/issues-status.md):
//! a file under `src/commands/` is glue of at most 250 lines, and nothing the build, the tests or
//! the scripts read lies outside the repository (the workplace's shared directory beside it in
//! particular), so a clone on a fresh machine runs the README's test command. Both read files
//! only (no binary, no peer).

use std::path::{Path, PathBuf};

use crate::support::root;

/// The most lines a file under `src/commands/` may have (issue #11: "no file under
/// `src/commands/` over ~250 lines"; docs/architecture.md, "a command file stays glue").
const COMMAND_FILE_MAX_LINES: usize = 250;

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// The files of `src/commands/` (every level) over `max` lines, as `path: lines`.
fn long_command_files(root: &Path, max: usize) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    files_under(&root.join("src/commands"), &mut files);
    files.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    let mut long: Vec<String> = files
        .iter()
        .filter_map(|p| {
            let lines = std::fs::read_to_string(p).ok()?.lines().count();
            let rel = p.strip_prefix(root).unwrap().display();
            (lines > max).then(|| format!("{rel}: {lines} lines"))
        })
        .collect();
    long.sort();
    (long, files.len())
}

#[test]
fn command_files_are_glue_of_at_most_250_lines() {
    let (long, files) = long_command_files(&root(), COMMAND_FILE_MAX_LINES);
    assert!(
        long.is_empty(),
        "command files over {COMMAND_FILE_MAX_LINES} lines (move the work into src/usecases):\n{}",
        long.join("\n")
    );
    assert!(files >= 10, "command files read: {files}");

    // Planted: a 251-line file is reported, a 250-line one is not.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("repo-rules-commands");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src/commands/live")).unwrap();
    std::fs::write(dir.join("src/commands/ok.rs"), "//\n".repeat(250)).unwrap();
    std::fs::write(dir.join("src/commands/live/long.rs"), "//\n".repeat(251)).unwrap();
    let (long, files) = long_command_files(&dir, COMMAND_FILE_MAX_LINES);
    assert_eq!(long, ["src/commands/live/long.rs: 251 lines"]);
    assert_eq!(files, 2);
}

/// Where the build, the tests and the scripts live: what a fresh clone must hold by itself.
const READ_BY_THE_BUILD: &[&str] = &[
    "src",
    "tests",
    "scripts",
    "examples",
    "benches",
    ".ci",
    "Cargo.toml",
];

/// Paths into the workplace around the repository, which a clone elsewhere does not have. Built
/// from pieces so this file does not name them itself.
fn outside_paths() -> [String; 2] {
    [format!("../{}", "shared"), format!("/work/{}", "shared")]
}

/// Each `file:line` under `roots` naming a path outside the repository.
fn outside_references(root: &Path, roots: &[&str]) -> (Vec<String>, usize) {
    let mut files = Vec::new();
    for r in roots {
        let p = root.join(r);
        if p.is_dir() {
            files_under(&p, &mut files);
        } else if p.is_file() {
            files.push(p);
        }
    }
    let needles = outside_paths();
    let mut found = Vec::new();
    for path in &files {
        // Binary fixtures (certificates in DER, archives) cannot name a path as text.
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                let rel = path.strip_prefix(root).unwrap().display();
                found.push(format!("{rel}:{}", i + 1));
            }
        }
    }
    (found, files.len())
}

#[test]
fn nothing_the_build_tests_or_scripts_read_is_outside_the_repository() {
    let (found, files) = outside_references(&root(), READ_BY_THE_BUILD);
    assert!(
        found.is_empty(),
        "paths outside the repository (use tests/fixtures/ or catalog/ instead):\n{}",
        found.join("\n")
    );
    assert!(files >= 300, "files read: {files}");

    // Planted: a test reading the workplace's data is reported with file and line.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("repo-rules-outside");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    let planted = format!(
        "fn f() {{\n    std::fs::read(\"{}/data/x.json\");\n}}\n",
        outside_paths()[0]
    );
    std::fs::write(dir.join("tests/t.rs"), planted).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]\n").unwrap();
    let (found, files) = outside_references(&dir, READ_BY_THE_BUILD);
    assert_eq!(found, ["tests/t.rs:2"]);
    assert_eq!(files, 2);
}
