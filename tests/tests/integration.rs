//! The workspace tests as one test binary: each file of this folder is a module (linking the generated crate
//! once instead of once per file saves CI a link of ~200 MB per file; BENCHMARKS.md, "CI cost"). Run one file's
//! tests with `cargo test -p armgen-tests --test integration <module>::`, e.g. `pin::`.
//!
//! `diff_reconcile.rs` stays a binary of its own: it installs a counting global allocator.

mod common;

mod arm_types;
mod coexistence;
mod conversion_props;
mod conversions;
mod crds;
mod custom_resources;
mod deploy;
mod diff;
mod discovery;
mod examples;
mod kube_shape;
mod kube_types;
mod pin;
mod rules;
