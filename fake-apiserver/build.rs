//! Decides whether `tests/kubectl.rs` (kubectl against the `fake-apiserver` binary) runs: when no `kubectl` is on
//! `PATH`, the test is compiled as `#[ignore]`d with a reason that `cargo test` prints — unless `CI` is set, where
//! it always runs, and fails when kubectl is missing (CI installs it). Reruns when `PATH` or `CI` change; after
//! installing kubectl into a directory already on `PATH`, `touch fake-apiserver/build.rs`.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(kubectl_missing)");
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-changed=build.rs");
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("kubectl").is_file()));
    let ci = std::env::var_os("CI").is_some_and(|value| !value.is_empty());
    if !on_path && !ci {
        println!("cargo::rustc-cfg=kubectl_missing");
    }
}
