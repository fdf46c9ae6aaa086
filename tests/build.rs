//! Decides which workspace tests run:
//!
//! - `cfg(spec_root_missing)` ignores, with a reason, the tests that need the spec root when it is missing and
//!   `CI` is not set (the search is the generator's, `generator/src/load/spec_root.rs`, included here);
//! - `cfg(kubectl_missing)` ignores `tests/deploy.rs` (`kubectl kustomize`) when no `kubectl` is on `PATH` and
//!   `CI` is not set; after installing kubectl into a folder already on `PATH`, `touch tests/build.rs`.
//!
//! Under `CI` both always run and fail when what they need is missing. See `README.md` in this folder.

#[allow(dead_code)]
#[path = "../generator/src/load/spec_root.rs"]
mod spec_root;

fn main() {
    spec_root::emit_for_package();

    println!("cargo::rustc-check-cfg=cfg(kubectl_missing)");
    println!("cargo::rerun-if-env-changed=PATH");
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("kubectl").is_file()));
    let ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    if !on_path && !ci {
        println!("cargo::rustc-cfg=kubectl_missing");
    }
}
