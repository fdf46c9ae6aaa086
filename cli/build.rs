//! Lists the CRD manifests in `../generated/crds` as `include_str!`s, so that `armctl crds` prints the
//! committed manifests without depending on the generator; and decides whether `tests/round_trip.rs`, which
//! needs the spec root, runs: `cfg(spec_root_missing)` ignores it, with a reason, when the spec root is missing
//! and `CI` is not set (the generator's search, `generator/src/load/spec_root.rs`, included here; see
//! `tests/README.md` at the workspace root).

use std::fmt::Write as _;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "../generator/src/load/spec_root.rs"]
mod spec_root;

fn main() {
    spec_root::emit_for_package();
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let dir = manifest_dir.join("../generated/crds");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            // `kustomization.yaml` lists the manifests for kustomize (config/crd); it is not one.
            .filter(|p| !p.ends_with("kustomization.yaml"))
            .collect(),
        Err(e) => panic!("cannot read the CRD folder {}: {e}", dir.display()),
    };
    files.sort();
    let mut out = String::from("/// The CRD manifests of `generated/crds`: (file stem, i.e. the CRD name; YAML).\n");
    out.push_str("pub const CRDS: &[(&str, &str)] = &[\n");
    for f in &files {
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let abs = f.canonicalize().unwrap_or_else(|_| f.clone());
        let _ = writeln!(out, "    ({stem:?}, include_str!({:?})),", abs.display().to_string());
    }
    out.push_str("];\n");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    if let Err(e) = std::fs::write(out_dir.join("crds.rs"), out) {
        panic!("cannot write crds.rs to OUT_DIR: {e}");
    }
}
