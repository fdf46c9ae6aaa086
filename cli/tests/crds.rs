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

/// `armctl import` without `--version` writes each kind at the newest version of its API group that has it (from the
/// registry), not at the group's storage version, which may lack the kind; imported from an example request body of
/// that version. Every kind of every group: without `--group` when the kind is in one group only (armctl finds the
/// group), with it otherwise.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn the_default_import_version_is_the_newest_that_has_the_kind() {
    let root = common::spec_root();
    let payloads = common::examples::all_payloads(&root);
    let dir = tempfile::tempdir().expect("tempdir");
    let kinds: std::collections::BTreeSet<(&str, &str)> =
        aks_api::KINDS.iter().map(|k| (k.kube_group, k.kind)).collect();
    assert!(!kinds.is_empty());
    for (group, kind) in kinds.iter().copied() {
        let newest = aks_api::KINDS
            .iter()
            .filter(|k| k.kube_group == group && k.kind == kind && k.served)
            .max_by_key(|k| k.arm.api_version)
            .expect("a served version has the kind");
        // An example request body of that version, else (the spec root lacks the kind's examples) the ARM body of
        // the smallest spec its CRD schema accepts.
        let body = match payloads
            .iter()
            .find(|p| p.request && p.group == newest.group && p.kind == kind && p.version == newest.version)
        {
            Some(example) => example.json.clone(),
            None => common::sample_arm_body(newest),
        };
        let file = dir.path().join(format!("{group}-{kind}.json"));
        std::fs::write(&file, body.to_string()).expect("write");
        let file = file.to_string_lossy().into_owned();
        let mut args = vec!["import", "--from-file", &file, "--kind", kind, "--name", "s"];
        if kinds.iter().filter(|(_, k)| *k == kind).count() > 1 {
            args.extend(["--group", group]);
        }
        let o = armctl(&args, None);
        assert!(o.status.success(), "{group} {kind}: {}", stderr(&o));
        let expected = format!("apiVersion: {}\n", newest.api_version());
        assert!(stdout(&o).starts_with(&expected), "{group} {kind}: {}", stdout(&o));
    }
    let o = armctl(
        &["import", "--from-file", "-", "--kind", "Widget", "--name", "s"],
        Some("{}"),
    );
    assert!(!o.status.success());
    // The known kinds of every group are listed, by group.
    assert!(
        stderr(&o).contains("unknown kind `Widget`; known kinds: "),
        "{}",
        stderr(&o)
    );
    for (group, kind) in &kinds {
        assert!(stderr(&o).contains(&format!("{group}: ")), "{group}: {}", stderr(&o));
        assert!(stderr(&o).contains(kind), "{kind}: {}", stderr(&o));
    }
}

/// `armctl crds --group` prints exactly the CRDs of that API group (either name of it), for every group of the
/// registry; with `--kind`, the kind's CRD in that group.
#[test]
fn crds_of_one_group() {
    let committed = committed();
    let mut groups: Vec<(&str, &str)> = aks_api::VERSIONS.iter().map(|v| (v.group, v.kube_group)).collect();
    groups.dedup();
    groups.sort();
    groups.dedup();
    for (short, group) in groups {
        let expected: Vec<&str> = committed
            .iter()
            .filter(|(_, text)| documents(text)[0]["spec"]["group"].as_str() == Some(group))
            .map(|(n, _)| n.as_str())
            .collect();
        assert!(!expected.is_empty(), "{group} has CRDs");
        for g in [short, group] {
            let o = armctl(&["crds", "--group", g], None);
            assert!(o.status.success(), "{}", stderr(&o));
            let docs = documents(&stdout(&o));
            let names: Vec<&str> = docs
                .iter()
                .map(|d| d["metadata"]["name"].as_str().expect("metadata.name"))
                .collect();
            assert_eq!(names, expected, "--group {g}");
        }
        let kind = aks_api::KINDS
            .iter()
            .find(|k| k.kube_group == group)
            .expect("a kind")
            .kind;
        let o = armctl(&["crds", "--group", short, "--kind", kind], None);
        assert!(o.status.success(), "{}", stderr(&o));
        let docs = documents(&stdout(&o));
        assert_eq!(docs.len(), 1);
        assert_eq!(docs[0]["spec"]["group"].as_str(), Some(group));
        assert_eq!(docs[0]["spec"]["names"]["kind"].as_str(), Some(kind));
    }
    let o = armctl(&["crds", "--group", "compute"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown API group `compute`"), "{}", stderr(&o));
}
