//! Helpers shared by armctl's tests. The example collection is the workspace tests' own
//! (`tests/tests/common/examples.rs`), included from there so that both walk the same payloads.

#![allow(dead_code)]

#[path = "../../../tests/tests/common/examples.rs"]
pub mod examples;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The spec root, resolved as the generator does. Tests that call this are marked
/// `#[cfg_attr(spec_root_missing, ignore = ...)]` (`cli/build.rs` sets the `cfg` when the spec root is missing and `CI`
/// is not set), so a missing spec root here fails the test.
pub fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    })
}

/// Runs `armctl` with `args`, feeding `stdin` (if any).
pub fn armctl(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_armctl"));
    cmd.args(args)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn armctl");
    if let Some(text) = stdin {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin pipe");
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("armctl output")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `apiVersion` of the storage version of the AKS group, from the generated registry (azure-arm.yaml's
/// `storage: true`): what `armctl import` writes by default.
pub fn storage_api_version() -> String {
    let mut storage = aks_api::VERSIONS
        .iter()
        .filter(|v| v.group == "containerservice" && v.storage);
    let hub = storage.next().expect("a storage version in aks_api::VERSIONS");
    assert!(storage.next().is_none(), "one storage version");
    format!("{}/{}", hub.kube_group, hub.version)
}
