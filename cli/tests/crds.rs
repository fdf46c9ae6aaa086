//! `armctl crds` prints the committed CRD manifests of `generated/crds`.

mod common;

use common::{armctl, stderr, stdout};

/// The CRD files of `generated/crds`, sorted by name: (name, text).
fn committed() -> Vec<(String, String)> {
    let dir = common::workspace().join("generated/crds");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("generated/crds")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml") && !p.ends_with("kustomization.yaml"))
        .map(|p| {
            let name = p.file_stem().expect("stem").to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).expect("read"))
        })
        .collect();
    files.sort();
    files
}

fn documents(text: &str) -> Vec<serde_yaml_ng::Value> {
    use serde::Deserialize;
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| serde_yaml_ng::Value::deserialize(d).expect("a parseable YAML document"))
        .collect()
}

#[test]
fn crds_prints_every_committed_manifest() {
    let o = armctl(&["crds"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = documents(&stdout(&o));
    let committed = committed();
    let names: Vec<&str> = docs
        .iter()
        .map(|d| d["metadata"]["name"].as_str().expect("metadata.name"))
        .collect();
    let files: Vec<&str> = committed.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, files, "one printed manifest per committed file");
    // Every kind of the generated registry has its CRD (the template kinds have theirs too).
    for kind in aks_api::KINDS {
        let name = format!("{}.{}", kind.plural, kind.kube_group);
        assert!(files.contains(&name.as_str()), "no CRD {name} for {}", kind.kind);
    }
    for (doc, (name, text)) in docs.iter().zip(&committed) {
        assert_eq!(doc["kind"], "CustomResourceDefinition", "{name}");
        assert_eq!(
            doc,
            &documents(text)[0],
            "{name}: the printed manifest is the committed one"
        );
    }
}

#[test]
fn crds_of_one_kind() {
    let o = armctl(&["crds", "--kind", "AgentPool"], None);
    assert!(o.status.success(), "{}", stderr(&o));
    let docs = documents(&stdout(&o));
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["metadata"]["name"], "agentpools.containerservice.armgen.dev");
    assert_eq!(docs[0]["spec"]["names"]["kind"], "AgentPool");
}

/// The ARM PUT body of the sample of the kind's CRD schema (`armgen_runtime::sample`).
fn sampled_arm_body(kind: &armgen_runtime::KindInfo) -> serde_json::Value {
    let crd = aks_api::custom_resource_definition(kind.kube_group, kind.kind)
        .expect("a CRD per kind")
        .expect("the CRD parses");
    let spec = armgen_runtime::sample::sample_spec_of(&crd, kind.version, 0)
        .expect("the version is in its CRD")
        .unwrap_or_else(|e| panic!("{}: {e}", kind.kind));
    let cr = serde_json::json!({
        "apiVersion": kind.api_version(),
        "kind": kind.kind,
        "metadata": {"name": "s", "namespace": "default"},
        "spec": spec,
    });
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

/// `armctl import` without `--version` writes each kind at the newest version that has it (from the registry), not
/// at the storage version, which may lack the kind; imported from an example request body of that version.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn the_default_import_version_is_the_newest_that_has_the_kind() {
    let root = common::spec_root();
    let payloads = common::examples::all_payloads(&root);
    let dir = tempfile::tempdir().expect("tempdir");
    let kinds: std::collections::BTreeSet<&str> = aks_api::KINDS.iter().map(|k| k.kind).collect();
    for kind in kinds {
        let newest = aks_api::KINDS
            .iter()
            .filter(|k| k.kind == kind)
            .max_by_key(|k| k.arm.api_version)
            .expect("a version has the kind");
        // An example request body of that version, else (the spec root lacks the kind's examples) the ARM body of
        // the smallest spec its CRD schema accepts.
        let body = match payloads
            .iter()
            .find(|p| p.request && p.kind == kind && p.version == newest.version)
        {
            Some(example) => example.json.clone(),
            None => sampled_arm_body(newest),
        };
        let file = dir.path().join(format!("{kind}.json"));
        std::fs::write(&file, body.to_string()).expect("write");
        let o = armctl(
            &[
                "import",
                "--from-file",
                &file.to_string_lossy(),
                "--kind",
                kind,
                "--name",
                "s",
            ],
            None,
        );
        assert!(o.status.success(), "{kind}: {}", stderr(&o));
        let expected = format!("apiVersion: {}\n", newest.api_version());
        assert!(stdout(&o).starts_with(&expected), "{kind}: {}", stdout(&o));
    }
    let o = armctl(
        &["import", "--from-file", "-", "--kind", "Widget", "--name", "s"],
        Some("{}"),
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown kind `Widget` in containerservice.armgen.dev; known kinds: "),
        "{}",
        stderr(&o)
    );
}
