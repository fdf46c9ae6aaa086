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
    assert_eq!(docs[0]["metadata"]["name"], "agentpools.containerservice.azure.com");
    assert_eq!(docs[0]["spec"]["names"]["kind"], "AgentPool");
}

/// `armctl import` defaults to the storage version (the registry's, from azure-arm.yaml): the version every CRD
/// stores.
#[test]
fn the_default_import_version_is_the_storage_version() {
    for (name, text) in committed() {
        let doc = &documents(&text)[0];
        let stored: Vec<&str> = doc["spec"]["versions"]
            .as_sequence()
            .expect("versions")
            .iter()
            .filter(|v| v["storage"].as_bool() == Some(true))
            .map(|v| v["name"].as_str().expect("name"))
            .collect();
        assert_eq!(
            stored
                .iter()
                .map(|v| format!("containerservice.azure.com/{v}"))
                .collect::<Vec<_>>(),
            [common::storage_api_version()],
            "{name}"
        );
    }
    let o = armctl(
        &["import", "--from-file", "-", "--kind", "Snapshot", "--name", "s"],
        Some(r#"{"location": "westeurope"}"#),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(&format!("apiVersion: {}\n", common::storage_api_version())),
        "{}",
        stdout(&o)
    );
}
