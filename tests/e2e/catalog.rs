//! Generated artefacts are what their generators produce.

use std::process::Command;

use crate::support::{python, root};

/// The embedded catalog snapshot must be exactly what `scripts/gen_catalog.py` produces from
/// moto's EC2 data and the committed price list (catalog/on-demand-prices-us-east-1.json).
#[test]
fn committed_catalog_snapshot_is_fresh() {
    let out = Command::new(python())
        .arg(root().join("scripts/gen_catalog.py"))
        .arg("--check")
        .current_dir(root())
        .output()
        .expect("run the catalog generator");
    assert!(
        out.status.success(),
        "catalog/aws-snapshot.json is stale: {}{}\nregenerate with: .venv/bin/python scripts/gen_catalog.py",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
