//! The one integration-test binary (each file under tests/ would link everything again).
//!
//! Modules: the CLI on manifests (seed walkthroughs offline, outputs, bad input), generated
//! artefacts being fresh (catalog snapshot), and krew packaging.

mod catalog;
mod cli;
mod completion;
mod convert;
mod krew;
mod support;
