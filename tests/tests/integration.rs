//! The workspace tests as one test binary: each file of this folder is a module (linking the generated crate
//! once instead of once per file saves CI a link of ~200 MB per file; BENCHMARKS.md, "CI cost"). Run one file's
//! tests with `cargo test -p armgen-tests --test integration <module>::`, e.g. `pin::`.
//!
//! `diff_reconcile.rs` stays a binary of its own: it installs a counting global allocator.

mod common;

mod actions;
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
mod views;

/// Cargo finds no test file by itself here (`autotests = false`): a file of this folder that is not a module above
/// would never be compiled or run. Fails naming it.
#[test]
fn every_test_file_is_a_module_of_this_binary() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = include_str!("integration.rs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read tests/") {
        let path = entry.expect("entry").path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let is_rust = path.extension().is_some_and(|e| e == "rs");
        if is_rust && stem != "integration" && stem != "diff_reconcile" && !this.contains(&format!("\nmod {stem};\n")) {
            missing.push(stem.to_string());
        }
    }
    assert!(missing.is_empty(), "not a module of tests/integration.rs: {missing:?}");
}
