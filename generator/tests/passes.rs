//! Snapshot tests of the generator pipeline, pass by pass, on small hand-written fixture specs.
//!
//! Fixtures (every spec is written for these tests; none is copied from azure-rest-api-specs):
//!
//! - `fixtures/arm/`: Swagger 2.0. `fixture/widgets.json` is the root (resources `widgets` and the child
//!   `widgets/gadgets`); it `$ref`s `common/types.json` (`Resource`, `TrackedResource`, `ProxyResource`,
//!   `SystemData`, a second `Sku`, parameters), as ARM specs reference common-types.
//! - `fixtures/oas3/gizmos.json`: an OpenAPI 3.0 document read directly (`components/schemas`,
//!   `requestBody`, an OpenAPI 3.0 discriminator object, `nullable`).
//!
//! Each snapshot shows what one pass decided, in a compact form (see `common/mod.rs`): properties are one
//! line each, `json-name: type (flags)`, where a type is `string`/`i32`/…, `[T]` for arrays, `{T}` for
//! maps, `json` for any JSON value, or the id (`file#pointer`) of a named type. Diagnostics are the ones
//! the pass added. The emitted Rust is snapshotted file by file and must parse with `syn`.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use armgen::config::{PropertyOverride, TypeOverride, VersionOverrides};
use armgen::emit::{self, VersionOutput};
use armgen::ir::{Ir, TypeKind, TypeRef};
use common::{
    Fixture, KindView, Stage, new_diagnostics, object, property, property_line, type_ref, type_view, types_view,
};
use serde::Serialize;

const WIDGETS: &str = "fixture/widgets.json";
const COMMON: &str = "common/types.json";

fn arm() -> Fixture {
    Fixture::load("arm", &[WIDGETS])
}

fn oas3() -> Fixture {
    Fixture::load("oas3", &["gizmos.json"])
}

fn widgets(pointer: &str) -> String {
    format!("{WIDGETS}#{pointer}")
}

// ---------------------------------------------------------------------------------------------------------
// discover + lower

#[test]
fn discover_arm() {
    let f = arm();
    insta::assert_yaml_snapshot!(f.resources);
}

#[test]
fn discover_oas3() {
    let f = oas3();
    insta::assert_yaml_snapshot!(f.resources);
}

#[derive(Serialize)]
struct Lowered {
    spec_files: Vec<String>,
    resources: Vec<armgen::ir::Resource>,
    types: BTreeMap<String, common::TypeView>,
    diagnostics: Vec<String>,
}

fn lowered_view(ir: &Ir) -> Lowered {
    Lowered {
        spec_files: ir.spec_files.clone(),
        resources: ir.resources.clone(),
        types: types_view(ir),
        diagnostics: new_diagnostics(&Ir::default(), ir),
    }
}

#[test]
fn lower_arm() {
    let ir = arm().lowered();
    // Spot checks of what the snapshot shows, so that a wrong snapshot cannot be accepted silently.
    let props = widgets("/definitions/WidgetProperties");
    assert!(property(&ir, &props, "adminPassword").secret);
    assert!(property(&ir, &props, "notes").nullable);
    assert!(property(&ir, &props, "provisioningState").read_only);
    assert_eq!(
        object(&ir, &props).required,
        vec!["createdBy".to_string(), "doesNotExist".to_string()],
        "required names the schema does not declare are kept for the allof pass"
    );
    let system_data = property(&ir, &format!("{COMMON}#/definitions/Resource"), "systemData");
    assert!(system_data.read_only, "readOnly beside $ref");
    assert_eq!(
        system_data.ty,
        TypeRef::Named(format!("{COMMON}#/definitions/SystemData"))
    );
    insta::assert_yaml_snapshot!(lowered_view(&ir));
}

#[test]
fn lower_oas3() {
    let ir = oas3().lowered();
    let props = "gizmos.json#/components/schemas/GizmoProperties";
    assert!(property(&ir, props, "comment").nullable);
    assert!(
        property(&ir, props, "state").read_only,
        "readOnly beside an allOf-wrapped $ref"
    );
    assert!(
        ir.diagnostics.iter().any(|d| d.message.contains("oneOf")),
        "oneOf is reported"
    );
    insta::assert_yaml_snapshot!(lowered_view(&ir));
}

// ---------------------------------------------------------------------------------------------------------
// overrides

#[test]
fn overrides() {
    let f = arm();
    let mut overrides = VersionOverrides::default();
    overrides.types.insert(
        "Gadget".into(),
        TypeOverride {
            opaque: None,
            rename: Some("Doohickey".into()),
            properties: BTreeMap::new(),
        },
    );
    // `labelColor` is declared by `Labelled`: overrides run before `allof`, so the override is keyed by the
    // declaring schema and flows into WidgetProperties with the inherited property.
    overrides.types.insert(
        "Labelled".into(),
        TypeOverride {
            opaque: None,
            rename: None,
            properties: BTreeMap::from([(
                "labelColor".to_string(),
                PropertyOverride {
                    rename: Some("colour".into()),
                    secret: Some(true),
                    read_only: Some(true),
                    empty_collection: None,
                    ..Default::default()
                },
            )]),
        },
    );
    overrides.types.insert(
        "WidgetProperties".into(),
        TypeOverride {
            opaque: None,
            rename: None,
            properties: BTreeMap::from([
                (
                    "zone".to_string(),
                    PropertyOverride {
                        rename: Some("availability_zone".into()),
                        secret: None,
                        read_only: None,
                        empty_collection: None,
                        ..Default::default()
                    },
                ),
                (
                    // Inherited from Labelled: not a property WidgetProperties declares.
                    "labelColor".to_string(),
                    PropertyOverride {
                        rename: Some("never_used".into()),
                        secret: None,
                        read_only: None,
                        empty_collection: None,
                        ..Default::default()
                    },
                ),
                (
                    "noSuchProperty".to_string(),
                    PropertyOverride {
                        rename: Some("never_used".into()),
                        secret: None,
                        read_only: None,
                        empty_collection: None,
                        ..Default::default()
                    },
                ),
            ]),
        },
    );
    let mut ir = f.lowered();
    let matched = armgen::passes::overrides::apply(&mut ir, &overrides);
    for stage in [Stage::Allof, Stage::Unions, Stage::Prune, Stage::Enums, Stage::Names] {
        stage.apply(&mut ir, &overrides);
    }
    let declared = armgen::passes::overrides::declared(&overrides);
    let unmatched: Vec<String> = declared.difference(&matched).cloned().collect();
    assert_eq!(
        unmatched,
        vec![
            "overrides.types.WidgetProperties.properties.labelColor",
            "overrides.types.WidgetProperties.properties.noSuchProperty"
        ]
    );

    #[derive(Serialize)]
    struct View {
        matched: BTreeSet<String>,
        unmatched: Vec<String>,
        gadget_rust_name: String,
        widget_properties: Vec<String>,
    }
    let gadget = &ir.types[&widgets("/definitions/Gadget")];
    assert_eq!(gadget.rust_name, "Doohickey");
    let colour = property(&ir, &widgets("/definitions/WidgetProperties"), "labelColor");
    assert!(colour.secret && colour.read_only && colour.inherited);
    assert_eq!(colour.rust_name, "colour");
    let wp = object(&ir, &widgets("/definitions/WidgetProperties"));
    let lines = wp
        .properties
        .iter()
        .filter(|p| p.name == "zone" || p.name == "labelColor")
        .map(|p| format!("{} -> {}", property_line(p), p.rust_name))
        .collect();
    insta::assert_yaml_snapshot!(View {
        matched,
        unmatched,
        gadget_rust_name: gadget.rust_name.clone(),
        widget_properties: lines,
    });
}

// ---------------------------------------------------------------------------------------------------------
// allof

#[derive(Serialize)]
struct Merged {
    /// Every object with `allOf` parents, after merging.
    children: BTreeMap<String, common::ObjectView>,
    diagnostics: Vec<String>,
}

fn allof_view(before: &Ir, after: &Ir) -> Merged {
    let children = after
        .types
        .iter()
        .filter_map(|(id, t)| match &t.kind {
            TypeKind::Object(o) if !o.parents.is_empty() => Some((id.clone(), common::object_view(o))),
            _ => None,
        })
        .collect();
    Merged {
        children,
        diagnostics: new_diagnostics(before, after),
    }
}

#[test]
fn allof_arm() {
    let (before, after) = arm().around(Stage::Allof);
    let props = widgets("/definitions/WidgetProperties");
    let label = property(&after, &props, "label");
    assert!(label.required, "required by the first parent, redeclared by the child");
    assert_eq!(label.validation.max_length, Some(63), "the child's declaration is used");
    assert!(!label.inherited);
    assert!(
        property(&after, &props, "createdBy").required,
        "required by the child's list"
    );
    assert!(
        property(&after, &props, "auditLevel").required,
        "required by the second parent"
    );
    assert!(!property(&after, &props, "labelColor").required);
    let widget = object(&after, &widgets("/definitions/Widget"));
    assert!(widget.azure_resource, "x-ms-azure-resource is inherited across files");
    assert!(property(&after, &widgets("/definitions/Widget"), "location").required);
    assert_eq!(
        property(&after, &props, "revision").ty,
        TypeRef::Primitive(armgen::ir::Primitive::String)
    );
    let view = allof_view(&before, &after);
    assert_eq!(view.diagnostics.len(), 2, "{:#?}", view.diagnostics);
    assert!(view.diagnostics[0].contains("redeclares \"revision\""));
    assert!(view.diagnostics[1].contains("\"doesNotExist\""));
    insta::assert_yaml_snapshot!(view);
}

#[test]
fn allof_oas3() {
    let (before, after) = oas3().around(Stage::Allof);
    insta::assert_yaml_snapshot!(allof_view(&before, &after));
}

// ---------------------------------------------------------------------------------------------------------
// unions

#[derive(Serialize)]
struct Unions {
    unions: BTreeMap<String, common::TypeView>,
    /// The variant structs: their properties no longer include the discriminator.
    variants: BTreeMap<String, common::ObjectView>,
    diagnostics: Vec<String>,
}

fn unions_view(before: &Ir, after: &Ir) -> Unions {
    let mut unions = BTreeMap::new();
    let mut variants = BTreeMap::new();
    for (id, t) in &after.types {
        match &t.kind {
            TypeKind::Union(u) => {
                unions.insert(id.clone(), type_view(t));
                for (_, v) in &u.variants {
                    variants.insert(v.clone(), common::object_view(object(after, v)));
                }
            }
            TypeKind::Object(_) | TypeKind::Enum(_) => {}
        }
    }
    Unions {
        unions,
        variants,
        diagnostics: new_diagnostics(before, after),
    }
}

#[test]
fn unions_arm() {
    let (before, after) = arm().around(Stage::Unions);
    let trigger = &after.types[&widgets("/definitions/Trigger")];
    let TypeKind::Union(u) = &trigger.kind else {
        panic!("Trigger is not a union: {:?}", trigger.kind)
    };
    let values: Vec<&str> = u.variants.iter().map(|(v, _)| v.as_str()).collect();
    assert_eq!(values, ["Composite", "DailySchedule", "Event", "Schedule"]);
    for (_, v) in &u.variants {
        assert!(object(&after, v).properties.iter().all(|p| p.name != "kind"));
    }
    insta::assert_yaml_snapshot!(unions_view(&before, &after));
}

#[test]
fn unions_oas3() {
    let (before, after) = oas3().around(Stage::Unions);
    let view = unions_view(&before, &after);
    let KindView::Union { variants, .. } = &view.unions["gizmos.json#/components/schemas/Shape"].kind else {
        panic!("Shape is not a union")
    };
    assert_eq!(
        variants.keys().collect::<Vec<_>>(),
        ["Triangle", "circle", "square"],
        "a variant without x-ms-discriminator-value is tagged with its schema name"
    );
    assert_eq!(view.diagnostics.len(), 1, "{:#?}", view.diagnostics);
    insta::assert_yaml_snapshot!(view);
}

// ---------------------------------------------------------------------------------------------------------
// prune (layout's first half): types no resource reaches

fn pruned(before: &Ir, after: &Ir) -> Vec<String> {
    before
        .types
        .keys()
        .filter(|id| !after.types.contains_key(*id))
        .cloned()
        .collect()
}

#[test]
fn prune_arm() {
    let (before, after) = arm().around(Stage::Prune);
    let removed = pruned(&before, &after);
    assert!(removed.contains(&format!("{COMMON}#/definitions/TrackedResource")));
    assert!(
        removed.contains(&widgets("/definitions/TriggerKind")),
        "only the tag used it"
    );
    insta::assert_yaml_snapshot!(removed);
}

#[test]
fn prune_oas3() {
    let (before, after) = oas3().around(Stage::Prune);
    insta::assert_yaml_snapshot!(pruned(&before, &after));
}

// ---------------------------------------------------------------------------------------------------------
// enums

#[derive(Serialize)]
struct Enums {
    enums: BTreeMap<String, common::TypeView>,
    /// Enums merged into another one: removed id → the id references now point to.
    merged: BTreeMap<String, String>,
    diagnostics: Vec<String>,
}

fn enums_view(before: &Ir, after: &Ir) -> Enums {
    let enums = after
        .types
        .iter()
        .filter(|(_, t)| matches!(t.kind, TypeKind::Enum(_)))
        .map(|(id, t)| (id.clone(), type_view(t)))
        .collect();
    // Where each property pointed before and after: a removed enum maps to its replacement.
    let mut merged = BTreeMap::new();
    for (id, t) in &before.types {
        let TypeKind::Object(o) = &t.kind else { continue };
        for (i, p) in o.properties.iter().enumerate() {
            let Some(old) = p.ty.named() else { continue };
            if after.types.contains_key(old) {
                continue;
            }
            let new = object(after, id).properties[i].ty.named().cloned().unwrap_or_default();
            merged.insert(old.clone(), new);
        }
    }
    Enums {
        enums,
        merged,
        diagnostics: new_diagnostics(before, after),
    }
}

#[test]
fn enums_arm() {
    let (before, after) = arm().around(Stage::Enums);
    let view = enums_view(&before, &after);
    assert_eq!(
        view.merged,
        BTreeMap::from([(
            widgets("/definitions/WidgetProperties/properties/osType"),
            widgets("/definitions/GadgetProperties/properties/osType")
        )])
    );
    insta::assert_yaml_snapshot!(view);
}

#[test]
fn enums_oas3() {
    let (before, after) = oas3().around(Stage::Enums);
    insta::assert_yaml_snapshot!(enums_view(&before, &after));
}

// ---------------------------------------------------------------------------------------------------------
// names

#[derive(Serialize)]
struct Names {
    /// Type id → Rust name.
    types: BTreeMap<String, String>,
    /// Rust type name → `json-name -> field`, for every object.
    fields: BTreeMap<String, Vec<String>>,
    diagnostics: Vec<String>,
}

fn names_view(before: &Ir, after: &Ir) -> Names {
    let types = after
        .types
        .iter()
        .map(|(id, t)| (id.clone(), t.rust_name.clone()))
        .collect();
    let mut fields = BTreeMap::new();
    for t in after.types.values() {
        if let TypeKind::Object(o) = &t.kind {
            let lines = o
                .properties
                .iter()
                .map(|p| format!("{} -> {}", p.name, p.rust_name))
                .collect();
            fields.insert(t.rust_name.clone(), lines);
        }
    }
    Names {
        types,
        fields,
        diagnostics: new_diagnostics(before, after),
    }
}

#[test]
fn names_arm() {
    let (before, after) = arm().around(Stage::Names);
    let rust = |id: &str| after.types[id].rust_name.clone();
    assert_eq!(rust(&widgets("/definitions/FooBar")), "FooBar");
    assert_eq!(rust(&widgets("/definitions/foo_bar")), "FooBar2");
    assert_eq!(
        rust(&widgets("/definitions/Sku")),
        "Sku",
        "the root file's definition wins"
    );
    assert_eq!(rust(&format!("{COMMON}#/definitions/Sku")), "Sku2");
    assert_eq!(
        rust(&widgets("/definitions/WidgetPropertiesNetwork")),
        "WidgetPropertiesNetwork",
        "a definition wins over a synthesized name"
    );
    assert_eq!(
        rust(&widgets("/definitions/WidgetProperties/properties/network")),
        "WidgetPropertiesNetwork2"
    );
    let props = widgets("/definitions/WidgetProperties");
    let field = |json: &str| property(&after, &props, json).rust_name.clone();
    assert_eq!(rust(&widgets("/definitions/Result")), "ResultType");
    assert_eq!(rust(&widgets("/definitions/UnknownFields")), "UnknownFieldsType");
    assert_eq!(field("fooBar"), "foo_bar");
    assert_eq!(field("foo_bar"), "foo_bar_2");
    assert_eq!(field("type"), "type", "emitted as r#type");
    assert_eq!(field("self"), "self_");
    assert_eq!(field("unknownFields"), "unknown_fields_2");
    assert_eq!(field("displayName"), "title", "x-ms-client-name");
    let view = names_view(&before, &after);
    for needle in [
        "FooBar2",
        "Sku2",
        "WidgetPropertiesNetwork2",
        "OsType2",
        "foo_bar_2",
        "self_",
        "unknown_fields_2",
    ] {
        assert!(
            view.diagnostics.iter().any(|d| d.contains(needle)),
            "the rename to {needle} is reported: {:#?}",
            view.diagnostics
        );
    }
    insta::assert_yaml_snapshot!(view);
}

#[test]
fn names_oas3() {
    let (before, after) = oas3().around(Stage::Names);
    insta::assert_yaml_snapshot!(names_view(&before, &after));
}

// ---------------------------------------------------------------------------------------------------------
// recursion

/// `Type.field` for every boxed field.
fn boxed(ir: &Ir) -> Vec<String> {
    let mut out = Vec::new();
    for t in ir.types.values() {
        if let TypeKind::Object(o) = &t.kind {
            for p in o.properties.iter().filter(|p| p.boxed) {
                out.push(format!("{}.{}: {}", t.rust_name, p.rust_name, type_ref(&p.ty)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn recursion_arm() {
    let (before, after) = arm().around(Stage::Recursion);
    assert!(boxed(&before).is_empty());
    let boxed = boxed(&after);
    for expected in [
        "Node.child:",
        "Folder.entry:",
        "Entry.parent:",
        "CompositeTrigger.inner:",
    ] {
        assert!(
            boxed.iter().any(|b| b.starts_with(expected)),
            "{expected} is boxed: {boxed:#?}"
        );
    }
    assert!(
        !property(&after, &widgets("/definitions/Node"), "children").boxed,
        "a Vec needs no box"
    );
    insta::assert_yaml_snapshot!(boxed);
}

#[test]
fn recursion_oas3() {
    let (_, after) = oas3().around(Stage::Recursion);
    assert_eq!(boxed(&after), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------------------------
// layout

#[derive(Serialize)]
struct Layout {
    /// Resource kind → module.
    resources: BTreeMap<String, String>,
    /// Module → the Rust names of its types.
    modules: BTreeMap<String, Vec<String>>,
    /// Types dropped because no resource reaches them.
    dropped: Vec<String>,
}

fn layout_view(before: &Ir, after: &Ir) -> Layout {
    let resources = after
        .resources
        .iter()
        .map(|r| (r.kind.clone(), r.module.clone()))
        .collect();
    let mut modules: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in after.types.values() {
        modules.entry(t.module.clone()).or_default().push(t.rust_name.clone());
    }
    for names in modules.values_mut() {
        names.sort();
    }
    Layout {
        resources,
        modules,
        dropped: pruned(before, after),
    }
}

#[test]
fn layout_arm() {
    let (before, after) = arm().around(Stage::Layout);
    let module = |id: &str| after.types[id].module.clone();
    assert_eq!(
        module(&widgets("/definitions/WidgetSize")),
        "shared",
        "used by widgets and gadgets"
    );
    assert_eq!(module(&widgets("/definitions/Node")), "widget");
    assert_eq!(module(&widgets("/definitions/GadgetProperties")), "gadget");
    insta::assert_yaml_snapshot!(layout_view(&before, &after));
}

#[test]
fn layout_oas3() {
    let (before, after) = oas3().around(Stage::Layout);
    insta::assert_yaml_snapshot!(layout_view(&before, &after));
}

// ---------------------------------------------------------------------------------------------------------
// the whole pipeline

/// The stages the tests apply one by one are exactly what `run_all` does.
#[test]
fn stages_match_run_all() {
    for f in [arm(), oas3()] {
        let stepwise = f.finished();
        let mut ir = f.lowered();
        armgen::passes::run_all(&mut ir, &VersionOverrides::default());
        assert_eq!(
            serde_json::to_value(&stepwise).expect("IR to JSON"),
            serde_json::to_value(&ir).expect("IR to JSON")
        );
    }
}

/// The crate files emitted for a fixture, with the generator version taken out of the headers.
fn emitted(f: &Fixture) -> BTreeMap<PathBuf, String> {
    let ir = f.finished();
    let outputs = [VersionOutput {
        group: "fixture",
        provider: "Microsoft.Fixture",
        kube_version: "v1",
        storage: true,
        ir: &ir,
        kube: None,
        renames: &Default::default(),
    }];
    let files = emit::crate_files("fixture-api", "Fixture types", &outputs, emit::CrateLayout::One).expect("emission");
    files
        .into_iter()
        .map(|(path, text)| (path, text.replace(emit::GENERATOR, "armgen (version)")))
        .collect()
}

/// Snapshots every file of the fixture's `arm` module, one snapshot per file, and checks that every emitted
/// Rust file parses.
fn snapshot_emitted(prefix: &str, f: &Fixture) -> BTreeSet<String> {
    let files = emitted(f);
    let mut modules = BTreeSet::new();
    for (path, text) in &files {
        if path.extension().is_some_and(|e| e == "rs") {
            if let Err(e) = syn::parse_file(text) {
                panic!("{} does not parse: {e}\n{text}", path.display());
            }
        }
        if path.parent() == Some(std::path::Path::new("src/fixture/v1/arm")) {
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            insta::assert_snapshot!(format!("{prefix}_{stem}"), text);
            modules.insert(stem);
        }
    }
    modules
}

#[test]
fn emit_arm() {
    let modules = snapshot_emitted("emit_arm", &arm());
    assert_eq!(
        modules,
        // `widget_restart`: the action kind of the widget's POST `restart` (its synthetic payload type).
        BTreeSet::from(["gadget", "mod", "shared", "widget", "widget_restart"].map(String::from))
    );
}

#[test]
fn emit_oas3() {
    let modules = snapshot_emitted("emit_oas3", &oas3());
    assert_eq!(modules, BTreeSet::from(["gizmo", "mod", "part"].map(String::from)));
}

/// Spot checks of the emitted Rust for constructs whose text matters (the snapshots show the rest).
#[test]
fn emitted_constructs() {
    let files = emitted(&arm());
    let widget = &files[&PathBuf::from("src/fixture/v1/arm/widget.rs")];
    let shared = &files[&PathBuf::from("src/fixture/v1/arm/shared.rs")];
    for needle in [
        "pub r#type: Option<String>",
        "pub self_: Option<String>",
        "\"self\" => self_,",
        "\"notes\" => notes (nullable),",
        "pub child: Option<Box<Node>>",
        "pub children: Option<Vec<Node>>",
        "pub notes: Option<armgen_runtime::Nullable<String>>",
        "pub inner: Option<Box<Trigger>>",
        "armgen_runtime::json_union! {\n    Trigger, \"kind\" {",
        "Schedule(ScheduleTrigger)",
        "pub settings: Option<BTreeMap<String, serde_json::Value>>",
        "pub blob: Option<serde_json::Value>",
        "pub unknown_fields: BTreeMap<String, String>",
    ] {
        assert!(widget.contains(needle), "widget.rs lacks {needle:?}");
    }
    // The OSType enum of WidgetProperties.osType and GadgetProperties.osType is one type, in `shared`; the
    // OSType of GadgetProperties.hostOsType has other values, so it is another type, with a reported rename
    // (the smaller id, `…/hostOsType`, keeps `OsType`).
    for needle in [
        "pub enum WidgetSize",
        "armgen_runtime::open_enum! {",
        "pub enum OsType2 {",
    ] {
        assert!(shared.contains(needle), "shared.rs lacks {needle:?}");
    }
    let gadget = &files[&PathBuf::from("src/fixture/v1/arm/gadget.rs")];
    for needle in [
        "pub enum OsType {",
        "pub os_type: Option<OsType2>",
        "pub host_os_type: Option<OsType>",
    ] {
        assert!(gadget.contains(needle), "gadget.rs lacks {needle:?}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// identifiers: whatever a spec names things, the names and enums passes produce identifiers that parse

/// Arbitrary printable ASCII, and names that are Rust keywords or close to one.
fn spec_names() -> impl proptest::strategy::Strategy<Value = String> {
    proptest::prop_oneof![
        "[ -~]{0,16}",
        "(type|self|Self|super|crate|async|await|dyn|gen|try|union|_|__|r#type|1st|Other|other|self_)",
    ]
}

proptest::proptest! {
    #[test]
    fn field_names_are_identifiers(raw in spec_names()) {
        let name = armgen::passes::names::field_ident(&raw);
        let field = armgen::emit::rust::ident(&name);
        let item = quote::quote!(struct S { pub #field: u8 });
        proptest::prop_assert!(syn::parse2::<syn::ItemStruct>(item).is_ok(), "{raw:?} -> {name:?}");
    }

    /// `variant_ident` may return `Self` (its callers rename that); everything else is an identifier.
    #[test]
    fn variant_names_are_identifiers(raw in spec_names()) {
        let name = armgen::passes::enums::variant_ident(&raw);
        proptest::prop_assert!(name == "Self" || syn::parse_str::<syn::Ident>(&name).is_ok(), "{raw:?} -> {name:?}");
        proptest::prop_assert!(name.starts_with(|c: char| c.is_ascii_uppercase()), "{raw:?} -> {name:?}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// views

/// A read-only GET under a resource (the widget's `health`) is a candidate view; a child resource's list
/// (`gadgets`) is not. Read into `status.health` (as `views.read` of the config does), it is a read-only property
/// of the widget's type that only the widget's root status has; not read, it is a diagnostic.
#[test]
fn views_arm() {
    let mut f = arm();
    let widget = f.resources.iter_mut().find(|r| r.name == "Widget").expect("Widget");
    let names: Vec<&str> = widget.views.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["health"], "candidates: the gadgets list is the child kind's");

    // Not read: reported.
    let unread = f.lowered();
    assert!(
        new_diagnostics(&Ir::default(), &unread)
            .iter()
            .any(|d| d.contains("GET health is not read") && d.contains("kubernetes.resources.Widget.views")),
        "{:?}",
        unread.diagnostics
    );

    let widget = f.resources.iter_mut().find(|r| r.name == "Widget").expect("Widget");
    widget.views[0].field = Some("health".into());
    widget.views[0].refresh_seconds = 600;
    let ir = f.finished();
    let resource = ir.resources.iter().find(|r| r.kind == "Widget").expect("Widget");
    let health = property(&ir, &resource.body_type, "health");
    assert!(health.view && health.read_only, "{health:?}");
    let kube = armgen::shape::shape(&ir, "fixture.armgen.dev", "v1", true);
    let widget = kube.resources.iter().find(|r| r.kind == "Widget").expect("Widget");
    assert!(widget.status_fields.iter().any(|f| f.json_name == "health"));
    assert!(!widget.spec_fields.iter().any(|f| f.json_name == "health"));
    assert!(!ir.diagnostics.iter().any(|d| d.message.contains("is not read")));
    insta::assert_yaml_snapshot!(serde_json::json!({
        "views": resource.views,
        "property": property_line(health),
    }));
}
