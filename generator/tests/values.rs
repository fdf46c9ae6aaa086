//! Values from other objects, on a fixture of our own (`fixtures/arm/values/values.json`): a string property the
//! config marks `fromConfig` gets a `<name>FromConfig` ConfigMap reference beside it (exactly one of the two when
//! the property is required, enforced by the CRD and by the conversion), and a map keyed by ARM IDs marked
//! `armIdKeys` becomes a list of resource references. Overrides that do not fit their property are config errors
//! naming the key.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm")
}

const BASE: &str = "\
output: {crateName: values-api}
groups:
  fixture:
    provider: Microsoft.Fixture
    specFolder: values
    versions:
      v1: {armApiVersion: \"2024-01-01\", specFiles: [values.json]}
";

const OVERRIDES: &str = "    overrides:
      types:
        GrantProperties:
          properties:
            principalId: {fromConfig: true}
            note: {fromConfig: true}
            identities: {armIdKeys: true}
";

fn generate(config: &str) -> Result<armgen::Generation, String> {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("azure-arm.yaml");
    std::fs::write(&path, config).expect("write config");
    armgen::Builder::new(&path)
        .specs(fixtures())
        .generate()
        .map_err(|e| e.to_string())
}

fn file<'g>(g: &'g armgen::Generation, path: &str) -> &'g str {
    g.files
        .get(Path::new(path))
        .map(String::as_str)
        .unwrap_or_else(|| panic!("{path} is generated"))
}

/// The generated `GrantSpec` struct and its `to_arm`/`from_arm`.
fn spec_source(g: &armgen::Generation) -> String {
    let rust = file(g, "src/fixture/v1/grant.rs");
    let start = rust.find("pub struct GrantSpec").expect("GrantSpec");
    let end = rust[start..]
        .find("\n}\n\n/// The observed state")
        .map_or(rust.len(), |e| start + e);
    rust[start..end].to_string()
}

#[test]
fn without_overrides_values_are_inline_and_maps_keep_their_keys() {
    let g = generate(BASE).expect("generates");
    let spec = spec_source(&g);
    assert!(spec.contains("pub principal_id: Option<String>"), "{spec}");
    assert!(!spec.contains("FromConfig"), "{spec}");
    assert!(
        spec.contains("pub identities: Option<BTreeMap<String, spec::IdentityValue>>"),
        "{spec}"
    );
}

#[test]
fn from_config_and_arm_id_keys_shape_the_spec_the_conversions_and_the_crd() {
    let g = generate(&format!("{BASE}{OVERRIDES}")).expect("generates");
    insta::assert_snapshot!("values_grant_spec", spec_source(&g));

    let crd: serde_json::Value = serde_yaml_ng::from_str(file(&g, "crds/grants.fixture.armgen.dev.yaml")).expect("CRD");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    assert_eq!(
        spec["properties"]["principalIdFromConfig"]["required"],
        serde_json::json!(["name", "key"])
    );
    let required = spec["required"].as_array().cloned().unwrap_or_default();
    assert!(
        !required.contains(&serde_json::json!("principalId")),
        "principalId may come from its ConfigMap: {required:?}"
    );
    assert_eq!(
        spec["x-kubernetes-validations"],
        serde_json::json!([
            {"rule": "has(self.principalId) != has(self.principalIdFromConfig)", "message": "set one of principalId and principalIdFromConfig"},
            {"rule": "!(has(self.note) && has(self.noteFromConfig))", "message": "set note or noteFromConfig, not both"},
        ])
    );
    let identities = &spec["properties"]["identities"];
    assert_eq!(identities["type"], "array");
    assert!(identities["items"]["properties"]["armId"].is_object(), "{identities}");
    // The status keeps the service's shape: the map, keyed by ARM ID.
    let status = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"];
    assert_eq!(status["properties"]["identities"]["type"], "object", "{status}");
}

#[test]
fn overrides_that_do_not_fit_their_property_are_errors_naming_the_key() {
    for (property, option, expected) in [
        (
            "level",
            "fromConfig",
            "is not a writable, non-secret, non-nullable string",
        ),
        (
            "identities",
            "fromConfig",
            "is not a writable, non-secret, non-nullable string",
        ),
        (
            "weights",
            "armIdKeys",
            "is not a map of objects whose properties are all read-only",
        ),
        (
            "note",
            "armIdKeys",
            "is not a map of objects whose properties are all read-only",
        ),
    ] {
        let config = format!(
            "{BASE}    overrides:\n      types:\n        GrantProperties:\n          properties:\n            {property}: {{{option}: true}}\n"
        );
        let e = generate(&config).expect_err(&format!("{property}: {option}"));
        assert!(
            e.contains(&format!(
                "overrides.types.GrantProperties.properties.{property}.{option}"
            )),
            "{e}"
        );
        assert!(e.contains(expected), "{e}");
    }
}
