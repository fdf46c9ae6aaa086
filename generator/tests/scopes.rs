//! Generic capabilities the providers around AKS need, on a fixture of our own (`fixtures/arm/scopes/scopes.json`):
//! resource selection (`resources.include`), resource groups and extension resources (scopes from the PUT path),
//! UUID names (`kubernetes.resources.<Kind>.azureName`), and opaque stand-ins for a file that cannot be read and a
//! definition that is broken (`overrides.opaqueFiles`, `overrides.types.X.opaque`) — never a silent fallback.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm")
}

const BASE: &str = "\
output: {crateName: scopes-api}
groups:
  fixture:
    provider: Microsoft.Fixture
    specFolder: scopes
    versions:
      v1: {armApiVersion: \"2024-01-01\", specFiles: [scopes.json]}
";

const SELECT: &str = "    resources:
      include: [Microsoft.Resources/resourceGroups, Microsoft.Fixture/locks, Microsoft.Fixture/things]
";

const OPAQUE: &str = "    overrides:
      opaqueFiles:
        missing.json: {because: the file is not in the spec root}
      types:
        Broken: {opaque: {because: its mode property declares type enum}}
";

const UUID_NAMES: &str = "    kubernetes:
      resources:
        Lock:
          azureName: {format: uuid, source: \"https://example.org/locks-are-named-by-guids\"}
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

#[test]
fn a_missing_file_and_a_broken_definition_fail_naming_file_and_pointer_until_an_override_says_so() {
    let e = generate(&format!("{BASE}{SELECT}")).expect_err("a dangling $ref");
    assert!(e.contains("missing.json"), "{e}");
    assert!(
        e.contains("scopes.json#/definitions/ThingProperties/properties/link"),
        "{e}"
    );

    let only_file = "    overrides:\n      opaqueFiles:\n        missing.json: {because: not here}\n";
    let e = generate(&format!("{BASE}{SELECT}{only_file}")).expect_err("type enum");
    assert!(e.contains("unknown type \"enum\""), "{e}");
    assert!(
        e.contains("scopes.json#/definitions/Broken/properties/mode/type"),
        "{e}"
    );

    let g = generate(&format!("{BASE}{SELECT}{OPAQUE}")).expect("both stand in as opaque JSON");
    let rust = file(&g, "src/fixture/v1/arm/thing.rs");
    for field in [
        "pub link: Option<serde_json::Value>",
        "pub broken: Option<serde_json::Value>",
    ] {
        assert!(rust.contains(field), "{field} in\n{rust}");
    }
    let crd: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(file(&g, "crds/things.fixture.armgen.dev.yaml")).expect("CRD YAML");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    for field in ["link", "broken"] {
        assert_eq!(
            spec[field]["x-kubernetes-preserve-unknown-fields"],
            serde_yaml_ng::Value::Bool(true),
            "spec.{field} keeps any JSON"
        );
    }
    // Every stand-in is said in the report, with its key and reason.
    let report = file(&g, "REPORT.md");
    assert!(
        report.contains("ThingProperties/properties/link`: stands in as opaque JSON (groups.fixture.overrides.opaqueFiles.missing.json): the file is not in the spec root"),
        "{report}"
    );
    assert!(
        report.contains("ThingProperties/properties/broken`: stands in as opaque JSON (groups.fixture.overrides.types.Broken): its mode property declares type enum"),
        "{report}"
    );
}

#[test]
fn an_opaque_entry_that_stands_in_for_nothing_is_an_error() {
    let stale = OPAQUE.replace("missing.json:", "missing.json: {because: x}\n        elsewhere.json:");
    let e = generate(&format!("{BASE}{SELECT}{stale}")).expect_err("stale");
    assert!(e.contains("groups.fixture.overrides.opaqueFiles.elsewhere.json"), "{e}");
    let stale = format!("{OPAQUE}        Unused: {{opaque: {{because: x}}}}\n");
    let e = generate(&format!("{BASE}{SELECT}{stale}")).expect_err("stale");
    assert!(e.contains("groups.fixture.overrides.types.Unused"), "{e}");
    let both = OPAQUE.replace(
        "Broken: {opaque: {because: its mode property declares type enum}}",
        "Broken: {opaque: {because: b}, rename: B}",
    );
    let e = generate(&format!("{BASE}{SELECT}{both}")).expect_err("opaque and rename");
    assert!(e.contains("groups.fixture.overrides.types.Broken.opaque"), "{e}");
}

#[test]
fn include_selects_resources_and_a_stale_entry_is_an_error() {
    let g = generate(&format!("{BASE}{SELECT}{OPAQUE}")).expect("generates");
    let mut kinds: Vec<&str> = g
        .versions
        .iter()
        .flat_map(|v| v.resources.iter().map(String::as_str))
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, ["Group", "Lock", "Thing"], "Other is not included");
    let stale = SELECT.replace(
        "Microsoft.Fixture/things]",
        "Microsoft.Fixture/things, Microsoft.Fixture/nothings]",
    );
    let e = generate(&format!("{BASE}{stale}{OPAQUE}")).expect_err("stale include");
    assert!(
        e.contains("groups.fixture.resources.include.Microsoft.Fixture/nothings"),
        "{e}"
    );
}

#[test]
fn scopes_owners_and_uuid_names_reach_the_registry_and_the_crds() {
    let g = generate(&format!("{BASE}{SELECT}{OPAQUE}{UUID_NAMES}")).expect("generates");
    let registry = file(&g, "src/registry.rs");
    let row = |kind: &str| {
        let start = registry
            .find(&format!("kind: \"{kind}\",\n        plural"))
            .unwrap_or_else(|| panic!("{kind} in the registry"));
        let end = registry[start..]
            .find("    },\n];")
            .map_or(registry.len(), |e| start + e);
        let next = registry[start..]
            .find("armgen_runtime::KindInfo {")
            .map_or(end, |e| start + e);
        registry[start..next.min(end)].to_string()
    };
    let group = row("Group");
    assert!(group.contains("scope: armgen_runtime::Scope::Subscription"), "{group}");
    assert!(
        group.contains("arm_type: \"Microsoft.Resources/resourceGroups\""),
        "{group}"
    );
    assert!(
        group.contains("name_format: armgen_runtime::NameFormat::Any"),
        "{group}"
    );
    let lock = row("Lock");
    assert!(lock.contains("scope: armgen_runtime::Scope::Extension"), "{lock}");
    assert!(lock.contains("name_format: armgen_runtime::NameFormat::Uuid"), "{lock}");
    let thing = row("Thing");
    assert!(thing.contains("scope: armgen_runtime::Scope::ResourceGroup"), "{thing}");

    let owner = |plural: &str| {
        let crd: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(file(&g, &format!("crds/{plural}.fixture.armgen.dev.yaml"))).expect("CRD YAML");
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        spec.get("owner").map(|o| {
            let mut keys: Vec<String> = o["properties"]
                .as_mapping()
                .map(|m| m.keys().filter_map(|k| k.as_str().map(str::to_string)).collect())
                .unwrap_or_default();
            keys.sort();
            keys
        })
    };
    // A resource group lives in the subscription: no owner. An extension names its scope by ID or custom resource.
    assert_eq!(owner("groups"), None);
    assert_eq!(
        owner("locks"),
        Some(vec!["armId".into(), "group".into(), "kind".into(), "name".into()])
    );
    assert_eq!(owner("things"), Some(vec!["armId".into(), "name".into()]));
    let lock_rust = file(&g, "src/fixture/v1/lock.rs");
    assert!(
        lock_rust.contains("armgen_runtime::kube::ResourceReference"),
        "{lock_rust}"
    );
}
