//! Decides whether `tests/coverage.rs`'s example test, which needs the spec root, runs:
//! `cfg(spec_root_missing)` ignores it, with a reason, when the spec root is missing and `CI` is not set (see
//! `generator/src/spec_root.rs`, included here, and `tests/README.md`).

#[allow(dead_code)]
#[path = "../generator/src/spec_root.rs"]
mod spec_root;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../generator/src/spec_root.rs");
    let manifest_dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    spec_root::emit_test_cfg(manifest_dir.parent().unwrap_or(&manifest_dir));
}
