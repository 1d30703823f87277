//! Tests of manifest loading against the real example manifests, the seed walkthroughs, a
//! corpus of broken inputs, and workload expansion.

mod bad_input;
mod examples;
mod overlays;
mod seeds;
mod workloads;

use super::{load_paths, load_str, InputError, Manifests};

/// A path under `tests/fixtures` (our example manifests and the vendored CRDs).
fn data(rel: &str) -> String {
    format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// Loads files without stdin.
fn load(paths: &[&str]) -> Result<Manifests, InputError> {
    let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    load_paths(&paths, &mut std::io::empty())
}

/// The error message of loading `text` as `name`, which must fail.
fn error_of(name: &str, text: &str) -> String {
    match load_str(name, text) {
        Ok(m) => panic!("{name} loaded but should have failed: {m:#?}"),
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "error is not one line: {s:?}");
            s
        }
    }
}
