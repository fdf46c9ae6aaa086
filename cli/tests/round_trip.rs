//! Acceptance: every example request body of every configured version, through the binary: `armctl import --from-file`
//! then `armctl export` gives the original JSON, secrets and read-only properties aside — the comparison of
//! `tests/tests/custom_resources.rs` (numbers by value, `null` members as absent, an empty `properties`
//! envelope as absent; read-only properties dropped from the original, secrets from both sides, since an import
//! cannot read a secret back: the spec would hold a reference to a Kubernetes Secret, which the export writes
//! as a `$secret:name/key` placeholder). Every group and version of `azure-arm.yaml`; each body is imported with the
//! `--owner` its kind's scope takes (none for a kind outside resource groups). Prints the number of runs and the time
//! they took.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use armgen_runtime::{KindInfo, Scope};

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
    let mut per_version = BTreeMap::<String, usize>::new();
    for (i, p) in all_payloads(&root).iter().filter(|p| p.request).enumerate() {
        *per_version.entry(format!("{}/{}", p.group, p.version)).or_default() += 1;
        let info = aks_api::KINDS
            .iter()
            .find(|k| k.group == p.group && k.version == p.version && k.kind == p.kind)
            .unwrap_or_else(|| panic!("{}: the kind is in the registry", p.describe()));
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
        let mut args = vec![
            "import",
            "--from-file",
            &arm_file,
            "--kind",
            &p.kind,
            "--group",
            &p.group,
            "--version",
            &p.version,
            "--name",
            "example",
            "--namespace",
            "default",
        ];
        if let Some(owner) = owner_for(info) {
            args.extend(["--owner", owner]);
        }
        let imported = armctl(&args, None);
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
    // Every configured version had request bodies among its examples: at least the example request bodies of the
    // PUTs of its generated kinds that its spec files list (counted from the spec root here, independently of
    // `all_payloads`), and there is one for every version.
    let config = armgen::Config::load(&common::workspace().join("azure-arm.yaml")).expect("config");
    let expected = put_request_bodies(&root, &config);
    for (version, bodies) in &expected {
        assert!(
            *bodies > 0,
            "{version}: no example request body of a PUT in the spec root"
        );
        let found = per_version.get(version).copied().unwrap_or_default();
        assert!(
            found >= *bodies,
            "too few request bodies for {version}: {found} < {bodies} (the PUT examples of the spec root); \
             {per_version:?}"
        );
    }
    assert_eq!(
        per_version.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "request bodies only of configured versions"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The `--owner` of an imported body, by where its kind lives: a parent or resource group by name, the ARM ID of the
/// resource an extension resource extends, none for a kind outside resource groups (it has no `spec.owner`). The
/// PUT body does not carry the owner, so any owner of the right shape round-trips.
fn owner_for(info: &KindInfo) -> Option<&'static str> {
    if info.owner_kind.is_some() {
        return Some("parent");
    }
    match info.arm.scope {
        Scope::ResourceGroup => Some("parent"),
        Scope::Extension => Some("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/parent"),
        Scope::Subscription | Scope::Tenant => None,
    }
}

/// Per `group/version` of the config: how many example files its spec files list for the PUT of a kind of that
/// version (`aks_api::KINDS`' PUT paths) that exist in the spec root and hold the PUT's body parameter. Read from
/// the spec files' JSON directly (Swagger 2.0: the body is the parameter `in: body`, inline or `#/parameters/…`).
fn put_request_bodies(root: &Path, config: &armgen::Config) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (group_name, group) in &config.groups {
        for (kube, version) in &group.versions {
            let paths: Vec<String> = aks_api::KINDS
                .iter()
                .filter(|k| k.group == group_name && k.version == kube)
                .map(|k| k.arm.path.to_ascii_lowercase())
                .collect();
            assert!(!paths.is_empty(), "{group_name}/{kube}: kinds in the registry");
            let mut count = 0;
            for spec_file in &version.spec_files {
                let file = root.join(&group.spec_folder).join(spec_file);
                let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                let Some(routes) = doc["paths"].as_object() else {
                    continue;
                };
                for (route, item) in routes {
                    if !paths.contains(&route.to_ascii_lowercase()) {
                        continue;
                    }
                    let Some(put) = item.get("put") else { continue };
                    let parameters = item["parameters"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .chain(put["parameters"].as_array().into_iter().flatten());
                    let body = parameters
                        .map(|p| match p["$ref"].as_str().and_then(|r| r.strip_prefix("#/")) {
                            Some(local) => doc.pointer(&format!("/{local}")).unwrap_or(&Value::Null),
                            None => p,
                        })
                        .find(|p| p["in"] == "body")
                        .and_then(|p| p["name"].as_str())
                        .unwrap_or_else(|| panic!("{} PUT {route}: a body parameter", file.display()));
                    let dir = file.parent().expect("spec dir");
                    for example in put["x-ms-examples"].as_object().into_iter().flatten().map(|(_, e)| e) {
                        let Some(rel) = example["$ref"].as_str() else { continue };
                        let path = dir.join(rel);
                        if !path.exists() {
                            continue; // absent from the spec root (as in all_payloads)
                        }
                        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                        let ex: Value =
                            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                        if ex["parameters"].get(body).is_some() {
                            count += 1;
                        }
                    }
                }
            }
            out.insert(format!("{group_name}/{kube}"), count);
        }
    }
    out
}
