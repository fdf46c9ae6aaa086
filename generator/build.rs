//! Decides whether the tests that need the spec root (`tests/cli.rs`, `tests/apidiff.rs`, `tests/fuzz.rs`, `tests/fetch.rs`,
//! `tests/fit.rs`) run: `cfg(spec_root_missing)` ignores them, with a reason, when the spec root is missing
//! and `CI` is not set (see `src/load/spec_root.rs` and `tests/README.md`). The library does not use the `cfg`.

#[allow(dead_code)]
#[path = "src/load/spec_root.rs"]
mod spec_root;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=src/load/spec_root.rs");
    let manifest_dir = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    spec_root::emit_test_cfg(manifest_dir.parent().unwrap_or(&manifest_dir));
}
