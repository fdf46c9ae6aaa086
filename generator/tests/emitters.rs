//! Snapshots of the Kubernetes emitters — the custom resources (`emit::kube`), the CRD manifests (`emit::crd`) and
//! the conversions between versions (`emit::convert`) — on a fixture of our own in two API versions:
//! `fixtures/arm/emitters/2024-01-01/widgets.json` (Kubernetes `v1`, a spoke) and
//! `fixtures/arm/emitters/2025-01-01/widgets.json` (`v2`, the storage version and hub).
//!
//! The fixture has one tracked resource, `Widget` (its `properties` envelope flattened into the spec and status:
//! a closed enum, a number, a secret, an ARM ID that becomes a resource reference, a nested object with an open
//! enum and a read-only property) and a child resource, `Gadget`. The newer version adds `description`, makes
//! `ratio` a double (a float before) and changes the values of the closed enum `WidgetSize` (`large` becomes
//! `Large`, and `Medium` is new), so the conversions have properties only one side has, a changed type and an
//! enum whose spelling differs.
//!
//! The generator version in the file headers is replaced with `armgen (version)`, as in `passes.rs`.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::sync::OnceLock;

const CONFIG: &str = "\
output: {crateName: widgets-api}
groups:
  fixture:
    provider: Microsoft.Fixture
    specFolder: emitters
    versions:
      v1: {armApiVersion: \"2024-01-01\", specFiles: [2024-01-01/widgets.json]}
      v2: {armApiVersion: \"2025-01-01\", specFiles: [2025-01-01/widgets.json], storage: true}
";

/// The generation of the fixture (both versions), once for all tests.
fn generation() -> &'static armgen::Generation {
    static GENERATION: OnceLock<armgen::Generation> = OnceLock::new();
    GENERATION.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("azure-arm.yaml");
        std::fs::write(&path, CONFIG).expect("write config");
        armgen::Builder::new(&path)
            .specs(common::fixture_root("arm"))
            .generate()
            .expect("the emitters fixture generates")
    })
}

/// The generated file at `path`, with the generator version taken out of its header.
fn file(path: &str) -> String {
    generation()
        .files
        .get(Path::new(path))
        .unwrap_or_else(|| panic!("{path} is generated"))
        .replace(armgen::emit::GENERATOR, "armgen (version)")
}

/// `text` with every run of whitespace as one space (generated Rust is wrapped by prettyplease).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_emitted_rust_file_parses() {
    for (path, text) in &generation().files {
        if path.extension().is_some_and(|e| e == "rs") {
            if let Err(e) = syn::parse_file(text) {
                panic!("{} does not parse: {e}\n{text}", path.display());
            }
        }
    }
}

/// The kube emitter: the root kind file of the hub (`Widget`, `WidgetSpec`, `WidgetStatus` and their ARM
/// conversions) and the nested spec and status types it uses.
#[test]
fn kube_emitter_root_kind_and_nested_spec_and_status_types() {
    let root = file("src/fixture/v2/widget.rs");
    let spec = file("src/fixture/v2/spec/widget.rs");
    let status = file("src/fixture/v2/status/widget.rs");
    insta::assert_snapshot!("kube_widget", root);
    insta::assert_snapshot!("kube_spec_widget", spec);
    insta::assert_snapshot!("kube_status_widget", status);

    let root = flat(&root);
    for construct in [
        "impl kube_core::Resource for Widget",
        "pub struct WidgetSpec {",
        "pub struct WidgetStatus {",
        "pub admin_password: Option<armgen_runtime::kube::SecretReference>",
        "pub subnet_id: Option<armgen_runtime::kube::ResourceReference>",
        "pub owner: Option<armgen_runtime::kube::ResourceGroupOwner>",
        "pub network: Option<spec::NetworkProfile>",
        "pub network: Option<status::NetworkProfile>",
        "impl From<&arm::Widget> for WidgetStatus",
    ] {
        assert!(root.contains(construct), "{construct}");
    }
    // The secret is in the spec only; the read-only state in the status only.
    let status_struct = &root[root.find("pub struct WidgetStatus {").expect("WidgetStatus")..];
    let status_struct = &status_struct[..status_struct.find('}').expect("end of WidgetStatus")];
    assert!(!status_struct.contains("admin_password"), "{status_struct}");
    assert!(status_struct.contains("pub provisioning_state: Option<arm::ProvisioningState>"));
    assert!(
        !flat(&spec).contains("pub address"),
        "a read-only property is not in the spec"
    );
    assert!(flat(&status).contains("pub address: Option<String>"));

    // The child resource's owner is its parent custom resource.
    let gadget = flat(&file("src/fixture/v2/gadget.rs"));
    assert!(
        gadget.contains("pub owner: Option<armgen_runtime::kube::KnownOwner>"),
        "{gadget}"
    );
}

/// The CRD emitter: one manifest for `Widget` with both versions, served, and only the hub stored. The
/// manifest is snapshotted in two parts (each under 400 lines): the header with the `v1` entry, and the `v2` entry.
#[test]
fn crd_emitter_serves_both_versions_and_stores_the_hub() {
    let crd = file("crds/widgets.fixture.armgen.dev.yaml");
    let split = crd.find("\n  - name: v2\n").expect("a v2 entry") + 1;
    let (head_v1, v2) = crd.split_at(split);
    insta::assert_snapshot!("crd_widgets_v1", head_v1);
    insta::assert_snapshot!("crd_widgets_v2", v2);

    let value: serde_json::Value = serde_yaml_ng::from_str(&crd).expect("the CRD is YAML");
    assert_eq!(value["kind"], "CustomResourceDefinition");
    assert_eq!(value["metadata"]["name"], "widgets.fixture.armgen.dev");
    let versions = value["spec"]["versions"].as_array().expect("versions");
    let names: Vec<&str> = versions.iter().map(|v| v["name"].as_str().expect("name")).collect();
    assert_eq!(names, ["v1", "v2"]);
    assert!(versions.iter().all(|v| v["served"] == true));
    let stored: Vec<&str> = versions
        .iter()
        .filter(|v| v["storage"] == true)
        .map(|v| v["name"].as_str().expect("name"))
        .collect();
    assert_eq!(stored, ["v2"], "exactly one version is stored: the hub");

    let spec = |i: usize| &versions[i]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec(0)["size"]["enum"], serde_json::json!(["Small", "large"]));
    assert_eq!(spec(1)["size"]["enum"], serde_json::json!(["Small", "Large", "Medium"]));
    assert_eq!(spec(0)["ratio"]["format"], "float");
    assert_eq!(spec(1)["ratio"]["format"], "double");
    assert!(spec(0).get("description").is_none() && spec(1)["description"].is_object());
    assert_eq!(spec(1)["adminPassword"]["required"], serde_json::json!(["name", "key"]));

    let gadgets: serde_json::Value =
        serde_yaml_ng::from_str(&file("crds/gadgets.fixture.armgen.dev.yaml")).expect("the gadgets CRD is YAML");
    let stored = gadgets["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter(|v| v["storage"] == true)
        .count();
    assert_eq!(stored, 1);
}

/// The conversion emitter: the spoke `v1`'s `convert/` files (the hub has none) and `CONVERSIONS.md`.
#[test]
fn conversion_emitter_converts_the_spoke_both_ways_through_the_hub() {
    let widget = file("src/fixture/v1/convert/widget.rs");
    insta::assert_snapshot!("convert_widget", widget);
    let module = file("src/fixture/v1/convert/mod.rs");
    insta::assert_snapshot!("convert_mod", module);
    let conversions = file("CONVERSIONS.md");
    insta::assert_snapshot!("conversions_md", conversions);

    let widget = flat(&widget);
    for (source, target) in [("spoke", "hub"), ("hub", "spoke")] {
        for ty in [
            "WidgetSpec",
            "WidgetStatus",
            "spec::NetworkProfile",
            "status::NetworkProfile",
        ] {
            let item = format!("impl Convert<{target}::{ty}> for {source}::{ty}");
            assert!(widget.contains(&item), "{item}");
        }
        let item = format!("impl ConvertObject<{target}::Widget> for {source}::Widget");
        assert!(widget.contains(&item), "{item}");
        let gadget = flat(&file("src/fixture/v1/convert/gadget.rs"));
        let item = format!("impl ConvertObject<{target}::Gadget> for {source}::Gadget");
        assert!(gadget.contains(&item), "{item}");
    }
    // Only the hub has `description`: restored from the bag on the way in, kept in it on the way out.
    assert!(widget.contains(r#"description: cx.restore(&path.field("description")),"#));
    assert!(widget.contains(r#"cx.keep(&self.description, &path.field("description"));"#));
    // float → double widens, double → float narrows; enums convert by wire value.
    assert!(widget.contains("armgen_runtime::hub::widen(*value)"));
    assert!(widget.contains("armgen_runtime::hub::narrow(*value)"));
    assert!(widget.contains(r#"size: cx.spelled(&self.size, &path.field("size")),"#));

    assert!(
        !generation()
            .files
            .keys()
            .any(|p| p.starts_with("src/fixture/v2/convert")),
        "the hub converts nothing itself"
    );
    assert!(conversions.contains("## fixture v1 ⇄ hub v2"), "{conversions}");
    assert!(
        conversions.contains("| `WidgetSpec` |  | `description` |  | `ratio: float → double` |  |"),
        "{conversions}"
    );
}

/// `output.versionCrates`: the same fixture as a crate per version. Each version's module tree is the one-crate
/// layout's, moved from `src/fixture/<v>/` to `crates/fixture-<v>/src/` and its `arm/` to
/// `crates/fixture-<v>-arm/src/`, byte for byte but for the line that names `arm` (a re-export of the ARM types'
/// crate) and the two `use` lines of the spoke's conversions (the spoke is the crate itself, the hub another crate);
/// the main crate's `Cargo.toml`, the versions' `Cargo.toml` and `lib.rs` and the group module that re-exports them
/// are snapshots.
#[test]
fn version_crates_move_each_version_into_a_crate_of_its_own() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("azure-arm.yaml");
    let config = CONFIG.replace(
        "output: {crateName: widgets-api}",
        "output: {crateName: widgets-api, versionCrates: true}",
    );
    std::fs::write(&path, config).expect("write config");
    let split = armgen::Builder::new(&path)
        .specs(common::fixture_root("arm"))
        .generate()
        .expect("the emitters fixture generates as a crate per version");
    let one = generation();
    let text = |p: &str| {
        split
            .files
            .get(Path::new(p))
            .unwrap_or_else(|| panic!("{p} is generated"))
            .replace(armgen::emit::GENERATOR, "armgen (version)")
    };
    let mut compared = 0;
    for (key, one_dir) in &one.version_dirs {
        let split_dir = &split.version_dirs[key];
        let (group, version) = key.split_once('/').expect("group/version");
        assert_eq!(split_dir, Path::new(&format!("crates/{group}-{version}/src")));
        let split_arm = Path::new(&format!("crates/{group}-{version}-arm/src")).to_path_buf();
        for (p, contents) in one.files.iter().filter(|(p, _)| p.starts_with(one_dir)) {
            let rel = p.strip_prefix(one_dir).expect("prefix");
            let moved = match rel.strip_prefix("arm") {
                Ok(in_arm) => split_arm.join(in_arm),
                Err(_) => split_dir.join(rel),
            };
            let got = split
                .files
                .get(&moved)
                .unwrap_or_else(|| panic!("{} is not moved to {}", p.display(), moved.display()));
            let expected = contents
                .replace(
                    &format!("use crate::{group}::{version} as spoke;"),
                    "use crate as spoke;",
                )
                .replace(
                    &format!("use crate::{group}::v2 as hub;"),
                    "use ::widgets_api_fixture_v2 as hub;",
                )
                .replace(
                    "\npub mod arm;\n",
                    // (and the empty line the emitters put after a run of re-exports)
                    &format!("\npub use widgets_api_{group}_{version}_arm as arm;\n\n"),
                );
            assert_eq!(got, &expected, "{}", moved.display());
            compared += 1;
        }
    }
    assert!(compared > 10, "only {compared} files compared");
    assert!(
        !split
            .files
            .keys()
            .any(|p| p.starts_with("src/fixture/v1") || p.starts_with("src/fixture/v2")),
        "no version module is left in the main crate"
    );
    insta::assert_snapshot!("version_crates_cargo_toml", text("Cargo.toml"));
    insta::assert_snapshot!("version_crates_spoke_cargo_toml", text("crates/fixture-v1/Cargo.toml"));
    insta::assert_snapshot!("version_crates_hub_cargo_toml", text("crates/fixture-v2/Cargo.toml"));
    insta::assert_snapshot!("version_crates_spoke_lib_rs", text("crates/fixture-v1/src/lib.rs"));
    insta::assert_snapshot!(
        "version_crates_spoke_arm_cargo_toml",
        text("crates/fixture-v1-arm/Cargo.toml")
    );
    insta::assert_snapshot!(
        "version_crates_spoke_arm_lib_rs",
        text("crates/fixture-v1-arm/src/lib.rs")
    );
    let group = text("src/fixture/mod.rs");
    let head: String = group
        .lines()
        .take_while(|l| !l.starts_with("pub fn"))
        .collect::<Vec<_>>()
        .join("\n");
    insta::assert_snapshot!("version_crates_group_mod_head", head);
}
