//! Change detection in the generator: the emitted `DiffWith` impls (insta snapshots on the `arm` fixture, with
//! an `x-ms-identifiers` array, an `identifiers` override and a `diffIgnoredWhen` rule), and the config checks of
//! `identifiers` / `diffIgnoredWhen` against the IR (errors name the key).

#[allow(dead_code)]
mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use armgen::config::{PropertyOverride, TypeOverride, VersionOverrides};
use armgen::emit::{self, VersionOutput};
use common::Fixture;
use serde_json::json;

fn fixture() -> Fixture {
    Fixture::load("arm", &["fixture/widgets.json"])
}

fn overrides(entries: &[(&str, &str, PropertyOverride)]) -> VersionOverrides {
    let mut o = VersionOverrides::default();
    for (schema, prop, po) in entries {
        o.types
            .entry(schema.to_string())
            .or_insert_with(TypeOverride::default)
            .properties
            .insert(prop.to_string(), po.clone());
    }
    o
}

fn ignored_when(sibling: &str, value: serde_json::Value) -> PropertyOverride {
    PropertyOverride {
        diff_ignored_when: BTreeMap::from([(sibling.to_string(), value)]),
        ..Default::default()
    }
}

fn identifiers(ids: &[&str]) -> PropertyOverride {
    PropertyOverride {
        identifiers: Some(ids.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    }
}

/// The fixture's IR after every pass with `o` applied.
fn finished(f: &Fixture, o: &VersionOverrides) -> armgen::ir::Ir {
    f.stages(o).pop().map(|(_, ir)| ir).expect("stages")
}

#[test]
fn emitted_diff_impls() {
    let f = fixture();
    let o = overrides(&[
        // `retries` is not compared while `enabled` is true (desired, else actual).
        ("WidgetProperties", "retries", ignored_when("enabled", json!(true))),
        // `triggers` is an array of a discriminated union: by position. `children` of Node: by `name`.
        ("Node", "children", identifiers(&["name"])),
    ]);
    let ir = finished(&f, &o);
    armgen::config::diff_rules::check_config(&ir, &o).expect("valid rules");
    let kube = armgen::shape::shape(&ir, "fixture.armgen.dev", "v1", true);
    let outputs = [VersionOutput {
        group: "fixture",
        provider: "Microsoft.Fixture",
        kube_version: "v1",
        storage: true,
        ir: &ir,
        kube: Some(&kube),
        renames: &Default::default(),
    }];
    let files = emit::crate_files("fixture-api", "Fixture types", &outputs, emit::CrateLayout::One).expect("emission");
    let mut seen = Vec::new();
    for (path, text) in &files {
        if path.parent() == Some(std::path::Path::new("src/fixture/v1/diff")) {
            let text = text.replace(emit::GENERATOR, "armgen (version)");
            syn::parse_file(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            insta::assert_snapshot!(format!("diff_{stem}"), text);
            seen.push(stem);
        }
    }
    assert_eq!(seen, ["gadget", "mod", "widget"]);
    let widget = &files[&PathBuf::from("src/fixture/v1/diff/widget.rs")];
    for needle in [
        // x-ms-identifiers: [name] from the spec.
        "diff_identified(\n            &self.ports,",
        // The rule.
        "let ignore_retries = armgen_runtime::diff::effective(",
        "if !ignore_retries {",
        // A secret is never compared.
    ] {
        assert!(widget.contains(needle), "widget.rs lacks {needle:?}:\n{widget}");
    }
    assert!(
        !widget.contains("admin_password"),
        "the secret adminPassword is compared"
    );
    let version_mod = &files[&PathBuf::from("src/fixture/v1/mod.rs")];
    assert!(version_mod.contains("pub mod diff;"));
    let registry = &files[&PathBuf::from("src/registry.rs")];
    assert!(registry.contains("pub fn diff_custom_resource("));
}

/// The error `check_config` gives for one bad entry: `key: message`.
fn problem(schema: &str, prop: &str, po: PropertyOverride) -> String {
    let o = overrides(&[(schema, prop, po)]);
    let ir = finished(&fixture(), &o);
    let p = armgen::config::diff_rules::check_config(&ir, &o).expect_err("a config problem");
    format!("{}: {}", p.key, p.message)
}

#[test]
fn bad_rules_are_config_errors_naming_the_key() {
    let cases = [
        (
            problem("WidgetProperties", "retries", ignored_when("noSuch", json!(true))),
            "overrides.types.WidgetProperties.properties.retries.diffIgnoredWhen.noSuch: WidgetProperties has no property noSuch",
        ),
        (
            problem("WidgetProperties", "retries", ignored_when("enabled", json!("yes"))),
            "overrides.types.WidgetProperties.properties.retries.diffIgnoredWhen.enabled: \"yes\" does not fit enabled",
        ),
        (
            problem(
                "WidgetProperties",
                "retries",
                ignored_when("provisioningState", json!("Succeeded")),
            ),
            "overrides.types.WidgetProperties.properties.retries.diffIgnoredWhen.provisioningState: provisioningState is read-only",
        ),
        (
            problem(
                "WidgetProperties",
                "provisioningState",
                ignored_when("enabled", json!(true)),
            ),
            "overrides.types.WidgetProperties.properties.provisioningState.diffIgnoredWhen: provisioningState is read-only",
        ),
        (
            problem("WidgetProperties", "retries", identifiers(&["name"])),
            "overrides.types.WidgetProperties.properties.retries.identifiers: retries is not an array of objects",
        ),
        (
            problem("WidgetProperties", "ports", identifiers(&["nope"])),
            "overrides.types.WidgetProperties.properties.ports.identifiers: the items of ports have no property nope",
        ),
    ];
    for (got, want) in cases {
        assert!(got.starts_with(want), "got {got:?}\nwant {want:?}…");
        assert!(got.ends_with("(ARM API version 2024-01-01)"), "{got}");
    }
}

#[test]
fn bad_rule_values_are_rejected_when_the_config_is_parsed() {
    let text = std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../azure-arm.yaml"))
        .expect("azure-arm.yaml");
    // The project config, with a rule whose value is not a scalar.
    let broken = text.replace(
        "count: { diffIgnoredWhen: { enableAutoScaling: true } }",
        "count: { diffIgnoredWhen: { enableAutoScaling: [true] } }",
    );
    assert_ne!(broken, text, "the project config has the autoscaler rule");
    let e = armgen::Config::parse(&broken, std::path::Path::new("azure-arm.yaml")).expect_err("invalid");
    let msg = e.to_string();
    assert!(
        msg.contains("ManagedClusterAgentPoolProfileProperties.properties.count.diffIgnoredWhen.enableAutoScaling"),
        "{msg}"
    );
    let empty = text.replace(
        "agentPoolProfiles: { identifiers: [name] }",
        "agentPoolProfiles: { identifiers: [] }",
    );
    let e = armgen::Config::parse(&empty, std::path::Path::new("azure-arm.yaml")).expect_err("invalid");
    assert!(e.to_string().contains("agentPoolProfiles.identifiers"), "{e}");
}
