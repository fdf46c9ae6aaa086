//! Acceptance: every example request body of every configured version, through the binary: `armctl import --from-file`
//! then `armctl export` gives the original JSON, secrets and read-only properties aside — the comparison of
//! `tests/tests/custom_resources.rs` (numbers by value, `null` members as absent, an empty `properties`
//! envelope as absent; read-only properties dropped from the original, secrets from both sides, since an import
//! cannot read a secret back: the spec would hold a reference to a Kubernetes Secret, which the export writes
//! as a `$secret:name/key` placeholder). Prints the number of runs and the time they took.

mod common;

use std::time::Instant;

use armgen::ir::TypeRef;
use common::examples::{all_payloads, first_difference, normalize, strip, without_empty_envelope};
use common::{armctl, stderr, stdout};
use serde_json::Value;

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn every_example_request_body_round_trips_through_armctl_import_and_export() {
    let root = common::spec_root();
    let generation = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(&root)
        .generate()
        .expect("generate");
    let dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let mut failures = Vec::new();
    let mut runs = 0;
    let mut per_version = std::collections::BTreeMap::<String, usize>::new();
    for (i, p) in all_payloads(&root).iter().filter(|p| p.request).enumerate() {
        *per_version.entry(p.version.clone()).or_default() += 1;
        let ir = generation.irs.get(&format!("{}/{}", p.group, p.version)).expect("ir");
        let body = TypeRef::Named(
            ir.resources
                .iter()
                .find(|r| r.kind == p.kind)
                .expect("resource")
                .body_type
                .clone(),
        );
        let arm_file = dir.path().join(format!("{i}.json"));
        std::fs::write(&arm_file, serde_json::to_string_pretty(&p.json).expect("json")).expect("write");
        let arm_file = arm_file.to_string_lossy().into_owned();
        let imported = armctl(
            &[
                "import",
                "--from-file",
                &arm_file,
                "--kind",
                &p.kind,
                "--version",
                &p.version,
                "--name",
                "example",
                "--namespace",
                "default",
                "--owner",
                "parent",
            ],
            None,
        );
        runs += 1;
        if !imported.status.success() {
            failures.push(format!("{}: import: {}", p.describe(), stderr(&imported)));
            continue;
        }
        let cr_file = dir.path().join(format!("{i}.yaml"));
        std::fs::write(&cr_file, &imported.stdout).expect("write");
        let exported = armctl(&["export", "-f", &cr_file.to_string_lossy()], None);
        runs += 1;
        if !exported.status.success() {
            failures.push(format!("{}: export: {}", p.describe(), stderr(&exported)));
            continue;
        }
        let out = stdout(&exported);
        let exported: Value = match serde_json::from_str(&out) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: export printed no JSON ({e}): {out}", p.describe()));
                continue;
            }
        };
        let expected = strip(ir, &body, &p.json, &|q| q.read_only || q.secret);
        let expected = without_empty_envelope(normalize(&expected));
        let exported = without_empty_envelope(normalize(&strip(ir, &body, &exported, &|q| q.secret)));
        if let Some(d) = first_difference(&expected, &exported, "") {
            failures.push(format!("{}: armctl import → export: {d}", p.describe()));
        }
    }
    let elapsed = started.elapsed();
    eprintln!(
        "{per_version:?} request bodies, {runs} armctl runs in {:.2?}, {} failures",
        elapsed,
        failures.len()
    );
    // Every configured version had request bodies among its examples.
    let config = armgen::Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    let versions: usize = config.groups.values().map(|g| g.versions.len()).sum();
    let total: usize = per_version.values().sum();
    assert!(
        per_version.len() == versions && total > 50,
        "too few request bodies: {per_version:?}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
