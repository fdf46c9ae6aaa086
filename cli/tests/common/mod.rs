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
        // armctl may fail (an unknown kind or version) and exit before it reads its input: a broken pipe then is
        // not the test's failure; the exit status and stderr say what happened.
        if let Err(e) = pipe.write_all(text.as_bytes()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
    }
    child.wait_with_output().expect("armctl output")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A custom resource of the kind and version whose spec is the sample of its CRD schema (`armgen_runtime::sample`):
/// one that needs no spec root.
pub fn sample_custom_resource(kind: &armgen_runtime::KindInfo) -> serde_json::Value {
    let crd = aks_api::custom_resource_definition(kind.kube_group, kind.kind)
        .expect("a CRD per kind")
        .expect("the CRD parses");
    let spec = armgen_runtime::sample::sample_spec_of(&crd, kind.version, 0)
        .expect("the version is in its CRD")
        .unwrap_or_else(|e| panic!("{}: {e}", kind.kind));
    serde_json::json!({
        "apiVersion": kind.api_version(),
        "kind": kind.kind,
        "metadata": {"name": "s", "namespace": "default"},
        "spec": spec,
    })
}

/// The ARM PUT body of [`sample_custom_resource`]: an ARM body of that kind and version that needs no spec root.
pub fn sample_arm_body(kind: &armgen_runtime::KindInfo) -> serde_json::Value {
    let cr = sample_custom_resource(kind);
    aks_api::export_custom_resource(
        kind.group,
        kind.version,
        kind.kind,
        &cr,
        &armgen_runtime::kube::ArmIdsOnly,
    )
    .expect("the kind is in the registry")
    .unwrap_or_else(|e| panic!("{}: {e}", kind.kind))
}
