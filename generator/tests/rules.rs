//! Stage **rules** on the `arm` fixture: the `rules.json` document from a config's `errors`, `childOwned`,
//! `ownerGate` and `immutable` entries plus the spec's `x-ms-mutability` (insta snapshot), and the config errors
//! that name their key.

#[allow(dead_code)]
mod common;

use std::path::Path;

use armgen::config::Config;
use armgen::emit::VersionOutput;
use common::Fixture;

const CONFIG: &str = r#"
output: { crateName: fixture-api }
groups:
  fixture:
    provider: Microsoft.Fixture
    specFolder: fixture
    versions:
      v1: { armApiVersion: "2024-01-01", specFiles: [widgets.json] }
    overrides:
      types:
        WidgetProperties:
          properties:
            color:
              immutable: { source: "https://example.com/color-is-fixed" }
    kubernetes:
      errors:
        retryable:
          - { status: 409, source: "https://example.com/conflicts" }
        terminal:
          - { status: 400, code: InvalidThing, source: "https://example.com/invalid" }
      resources:
        Widget:
          childOwned:
            properties.ports: { kind: Gadget, key: name, source: "https://example.com/ports" }
        Gadget:
          ownerGate:
            settled: true
            versions:
              properties.osType: { owner: properties.revision, errorCode: TooNew }
            source: "https://example.com/gate"
"#;

/// The rules document of the fixture under `config` (YAML), or the generator's error.
fn document(config: &str) -> Result<String, String> {
    let config = Config::parse(config, Path::new("armgen.yaml")).map_err(|e| e.to_string())?;
    let group = &config.groups["fixture"];
    let f = Fixture::load("arm", &["fixture/widgets.json"]);
    let ir = f.stages(&group.overrides).pop().map(|(_, ir)| ir).expect("stages");
    let options = armgen::shape::KubeOptions::of_group(group);
    let kube = armgen::shape::shape_with(&ir, "fixture.example.com", "v1", true, &options);
    let outputs = [VersionOutput {
        group: "fixture",
        provider: "Microsoft.Fixture",
        kube_version: "v1",
        storage: true,
        ir: &ir,
        kube: Some(&kube),
        renames: &Default::default(),
    }];
    armgen::emit::rules::document(&config, Path::new("armgen.yaml"), &outputs).map_err(|e| e.to_string())
}

#[test]
fn rules_document() {
    let text = document(CONFIG).expect("a valid config");
    let text = text.replace(armgen::emit::GENERATOR, "armgen (version)");
    insta::assert_snapshot!("rules_fixture", text);
}

#[test]
fn the_document_is_what_the_runtime_reads() {
    // The generator writes the schema `armgen_runtime::rules` reads; the generated crate's `rules()` parses it
    // at run time (tests/tests/rules.rs). Here: the fixture's document has every part in the expected place.
    let text = document(CONFIG).expect("a valid config");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let kinds = &doc["groups"][0]["kinds"];
    let widget = kinds
        .as_array()
        .and_then(|k| k.iter().find(|k| k["kind"] == "Widget"))
        .expect("Widget rules");
    assert_eq!(widget["childOwned"][0]["specField"], "ports");
    let immutable: Vec<&str> = widget["immutable"]
        .as_array()
        .expect("immutable")
        .iter()
        .filter_map(|i| i["specPath"].as_str())
        .collect();
    assert!(immutable.contains(&"spec.color"), "{immutable:?}");
    assert!(
        immutable.contains(&"spec.zone"),
        "x-ms-mutability [read, create]: {immutable:?}"
    );
    assert!(
        !immutable.contains(&"spec.adminPassword"),
        "[create, update] is mutable: {immutable:?}"
    );
}

#[test]
fn errors_name_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "properties.ports: { kind: Gadget, key: name,",
            "properties.nothing: { kind: Gadget, key: name,",
            "groups.fixture.kubernetes.resources.Widget.childOwned.properties.nothing",
        ),
        (
            "properties.ports: { kind: Gadget, key: name,",
            "properties.ports: { kind: Gadget, key: port,",
            "groups.fixture.kubernetes.resources.Widget.childOwned.properties.ports.key",
        ),
        (
            "properties.ports: { kind: Gadget, key: name,",
            "properties.label: { kind: Gadget, key: name,",
            "groups.fixture.kubernetes.resources.Widget.childOwned.properties.label",
        ),
        (
            "properties.ports: { kind: Gadget, key: name,",
            "properties.ports: { kind: Widget, key: name,",
            "groups.fixture.kubernetes.resources.Widget.childOwned.properties.ports.kind",
        ),
        (
            "properties.osType: { owner: properties.revision,",
            "properties.osType: { owner: properties.nothing,",
            "groups.fixture.kubernetes.resources.Gadget.ownerGate.versions.properties.osType.owner",
        ),
        (
            r#"source: "https://example.com/ports""#,
            r#"source: "see the docs""#,
            "groups.fixture.kubernetes.resources.Widget.childOwned.properties.ports.source",
        ),
        (
            r#"{ status: 409, source"#,
            r#"{ source"#,
            "groups.fixture.kubernetes.errors.retryable[0]",
        ),
        (
            r#"immutable: { source: "https://example.com/color-is-fixed" }"#,
            r#"immutable: { source: "" }"#,
            "groups.fixture.overrides.types.WidgetProperties.properties.color.immutable.source",
        ),
        (
            "            settled: true\n            versions:\n              properties.osType: { owner: properties.revision, errorCode: TooNew }\n",
            "",
            "groups.fixture.kubernetes.resources.Gadget.ownerGate",
        ),
    ];
    for (from, to, key) in cases {
        assert!(CONFIG.contains(from), "the case's text {from:?} is in the config");
        let config = CONFIG.replace(from, to);
        let e = match document(&config) {
            Ok(_) => panic!("{to:?}: expected an error naming {key}"),
            Err(e) => e,
        };
        assert!(e.contains(key), "{to:?}: the error names {key}: {e}");
    }
}

#[test]
fn an_owner_gate_needs_a_child_kind() {
    let config = CONFIG.replace(
        "        Widget:\n          childOwned:\n            properties.ports: { kind: Gadget, key: name, source: \"https://example.com/ports\" }\n",
        "        Widget:\n          ownerGate: { settled: true, source: \"https://example.com/gate\" }\n",
    );
    assert_ne!(config, CONFIG);
    let e = document(&config).expect_err("Widget has no owner kind");
    assert!(
        e.contains("groups.fixture.kubernetes.resources.Widget.ownerGate"),
        "{e}"
    );
}
