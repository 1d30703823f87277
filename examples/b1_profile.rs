//! The `provision` command in-process, for profiling the end-to-end B1e path with a build that
//! keeps symbols (the release binary is stripped). Takes the same arguments as the binary:
//!
//! ```sh
//! cargo build --example b1_profile --config 'profile.dev.package.kubectl-karpenter.opt-level=3'
//! perf record --call-graph dwarf target/debug/examples/b1_profile provision --dry-run \
//!     -f /tmp/b1/manifests.yaml --catalog /tmp/b1/catalog.yaml --region us-east-1 -o json > /dev/null
//! ```
use std::io::Write;

use clap::Parser;
use kubectl_karpenter::cli::{Cli, Command};
use kubectl_karpenter::commands::{self, Context};

fn main() {
    let cli = Cli::parse();
    kubectl_karpenter::api::schema::set_validation(cli.global.validate.into());
    let Command::Provision(args) = &cli.command else {
        eprintln!("only `provision` is profiled here");
        std::process::exit(2);
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut err = std::io::stderr();
    let mut ctx = Context {
        global: &cli.global,
        out: &mut out,
        err: &mut err,
    };
    let result = commands::provision::run(&mut ctx, args);
    out.flush().expect("flush stdout");
    // The binary's exit codes (docs/spec.md), so that runs compare with the binary's.
    match result {
        Ok(exit) => std::process::exit(exit as i32),
        Err(e) => {
            eprintln!("error: {}", e.message);
            std::process::exit(e.exit as i32);
        }
    }
}
