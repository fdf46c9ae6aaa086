//! Decides whether `tests/coverage.rs`'s example test, which needs the spec root, runs:
//! `cfg(spec_root_missing)` ignores it, with a reason, when the spec root is missing and `CI` is not set (see
//! `generator/src/load/spec_root.rs`, included here, and `tests/README.md`).

#[allow(dead_code)]
#[path = "../generator/src/load/spec_root.rs"]
mod spec_root;

fn main() {
    spec_root::emit_for_package();
}
