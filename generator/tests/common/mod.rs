//! Helpers for the pass snapshot tests: load a fixture, run the pipeline pass by pass, and render the IR
//! compactly so that each snapshot shows what one pass decided.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use armgen::config::VersionOverrides;
use armgen::discover::DiscoveredResource;
use armgen::ir::{Diagnostic, Ir, ObjectType, Primitive, Property, TypeDef, TypeKind, TypeRef};
use armgen::load::SpecSet;
use armgen::passes;
use serde::Serialize;

/// The API version every fixture is lowered for.
pub const API_VERSION: &str = "2024-01-01";

/// `generator/tests/fixtures/<name>`.
pub fn fixture_root(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// A loaded fixture: its documents and the resources discovered in them.
pub struct Fixture {
    pub specs: SpecSet,
    pub resources: Vec<DiscoveredResource>,
}

impl Fixture {
    /// Loads `files` (relative to the fixture root) and discovers their resources.
    pub fn load(name: &str, files: &[&str]) -> Fixture {
        let files: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
        let specs =
            SpecSet::load(&fixture_root(name), &files).unwrap_or_else(|e| panic!("loading fixture {name}: {e}"));
        let resources = armgen::discover::discover(&specs).unwrap_or_else(|e| panic!("discovering {name}: {e}"));
        Fixture { specs, resources }
    }

    /// The IR right after `lower`.
    pub fn lowered(&self) -> Ir {
        passes::lower::lower(&self.specs, &self.resources, API_VERSION).unwrap_or_else(|e| panic!("lowering: {e}"))
    }

    /// The IR after each stage of the pipeline, in order, starting with `lower`.
    pub fn stages(&self, overrides: &VersionOverrides) -> Vec<(Stage, Ir)> {
        let mut ir = self.lowered();
        let mut out = vec![(Stage::Lower, ir.clone())];
        for stage in Stage::AFTER_LOWER {
            stage.apply(&mut ir, overrides);
            out.push((stage, ir.clone()));
        }
        out
    }

    /// The IR just before and just after `stage` (with no config overrides).
    pub fn around(&self, stage: Stage) -> (Ir, Ir) {
        let stages = self.stages(&VersionOverrides::default());
        let i = stages
            .iter()
            .position(|(s, _)| *s == stage)
            .unwrap_or_else(|| panic!("{stage:?} is not a stage"));
        assert!(i > 0, "lower has no stage before it");
        (stages[i - 1].1.clone(), stages[i].1.clone())
    }

    /// The IR after the whole pipeline (with no config overrides).
    pub fn finished(&self) -> Ir {
        self.stages(&VersionOverrides::default())
            .pop()
            .map(|(_, ir)| ir)
            .unwrap_or_default()
    }
}

/// The stages of the pipeline, in the order `armgen::passes::run_all` applies them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Lower,
    Overrides,
    Allof,
    Unions,
    Prune,
    Enums,
    Names,
    Recursion,
    Layout,
}

impl Stage {
    pub const AFTER_LOWER: [Stage; 8] = [
        Stage::Overrides,
        Stage::Allof,
        Stage::Unions,
        Stage::Prune,
        Stage::Enums,
        Stage::Names,
        Stage::Recursion,
        Stage::Layout,
    ];

    pub fn apply(self, ir: &mut Ir, overrides: &VersionOverrides) {
        match self {
            Stage::Lower => panic!("lower is not a pass over an IR"),
            Stage::Overrides => {
                passes::overrides::apply(ir, overrides);
            }
            Stage::Allof => passes::allof::run(ir),
            Stage::Unions => passes::unions::run(ir),
            Stage::Prune => passes::layout::prune(ir),
            Stage::Enums => passes::enums::run(ir),
            Stage::Names => passes::names::run(ir),
            Stage::Recursion => passes::recursion::run(ir),
            Stage::Layout => passes::layout::run(ir),
        }
    }
}

/// The diagnostics `after` added to those of `before`, as `at: message` lines.
pub fn new_diagnostics(before: &Ir, after: &Ir) -> Vec<String> {
    assert!(
        after.diagnostics.starts_with(&before.diagnostics),
        "a pass removed or reordered earlier diagnostics"
    );
    after.diagnostics[before.diagnostics.len()..]
        .iter()
        .map(diagnostic_line)
        .collect()
}

pub fn diagnostic_line(d: &Diagnostic) -> String {
    format!("{}: {}", d.at, d.message)
}

/// A type reference in a few characters: `string`, `[T]` (array), `{T}` (map), `json`, or a type id.
pub fn type_ref(t: &TypeRef) -> String {
    match t {
        TypeRef::Named(id) => id.clone(),
        TypeRef::Primitive(p) => match p {
            Primitive::String => "string",
            Primitive::Bool => "bool",
            Primitive::Int32 => "i32",
            Primitive::Int64 => "i64",
            Primitive::Float => "f32",
            Primitive::Double => "f64",
        }
        .to_string(),
        TypeRef::Array(inner) => format!("[{}]", type_ref(inner)),
        TypeRef::Map(inner) => format!("{{{}}}", type_ref(inner)),
        TypeRef::Json => "json".to_string(),
    }
}

/// A property on one line: `json-name: type (flag, flag, key=value, …)`. Only what is set is shown.
pub fn property_line(p: &Property) -> String {
    let mut flags: Vec<String> = Vec::new();
    let mut flag = |on: bool, name: &str| {
        if on {
            flags.push(name.to_string());
        }
    };
    flag(p.required, "required");
    flag(p.read_only, "read-only");
    flag(p.secret, "secret");
    flag(p.nullable, "nullable");
    flag(p.client_flatten, "client-flatten");
    flag(p.inherited, "inherited");
    flag(p.boxed, "boxed");
    if let Some(m) = &p.mutability {
        flags.push(format!("mutability=[{}]", m.join(",")));
    }
    if let Some(ids) = &p.identifiers {
        flags.push(format!("identifiers=[{}]", ids.join(",")));
    }
    if let Some(c) = &p.client_name {
        flags.push(format!("client-name={c}"));
    }
    if let Some(f) = &p.format {
        flags.push(format!("format={f}"));
    }
    if let Some(d) = &p.default {
        flags.push(format!("default={d}"));
    }
    let v = &p.validation;
    if let Some(x) = &v.pattern {
        flags.push(format!("pattern={x}"));
    }
    if let Some(x) = v.min_length {
        flags.push(format!("minLength={x}"));
    }
    if let Some(x) = v.max_length {
        flags.push(format!("maxLength={x}"));
    }
    if let Some(x) = v.minimum {
        flags.push(format!("minimum={x}"));
    }
    if let Some(x) = v.maximum {
        flags.push(format!("maximum={x}"));
    }
    if let Some(d) = &p.description {
        flags.push(format!("doc={d:?}"));
    }
    let mut line = format!("{}: {}", p.name, type_ref(&p.ty));
    if !flags.is_empty() {
        line.push_str(&format!(" ({})", flags.join(", ")));
    }
    line
}

/// A readable view of one type definition.
#[derive(Debug, Serialize)]
pub struct TypeView {
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub rust_name: String,
    pub origin: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub kind: KindView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KindView {
    Object(ObjectView),
    Enum {
        #[serde(skip_serializing_if = "Option::is_none")]
        enum_name: Option<String>,
        open: bool,
        /// `value` or `value -> RustName`, plus the description when there is one.
        values: Vec<String>,
    },
    Union {
        property: String,
        variants: BTreeMap<String, String>,
    },
}

#[derive(Debug, Serialize)]
pub struct ObjectView {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub merged: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub azure_resource: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discriminator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub discriminator_value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag_property: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_properties: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required_elsewhere: Vec<String>,
    pub properties: Vec<String>,
}

pub fn object_view(o: &ObjectType) -> ObjectView {
    ObjectView {
        parents: o.parents.clone(),
        merged: o.merged,
        azure_resource: o.azure_resource,
        discriminator: o.discriminator.clone(),
        discriminator_value: o.discriminator_value.clone(),
        tag_property: o.tag_property.clone(),
        additional_properties: o.additional_properties.as_ref().map(type_ref),
        required_elsewhere: o.required.clone(),
        properties: o.properties.iter().map(property_line).collect(),
    }
}

pub fn enum_value_line(v: &armgen::ir::EnumValue) -> String {
    let mut line = if v.rust_name.is_empty() {
        format!("{:?}", v.value)
    } else {
        format!("{:?} -> {}", v.value, v.rust_name)
    };
    if let Some(d) = &v.description {
        line.push_str(&format!(" (doc={d:?})"));
    }
    line
}

pub fn type_view(t: &TypeDef) -> TypeView {
    TypeView {
        name: t.name.clone(),
        rust_name: t.rust_name.clone(),
        origin: t.origin.clone(),
        description: t.description.clone(),
        kind: match &t.kind {
            TypeKind::Object(o) => KindView::Object(object_view(o)),
            TypeKind::Enum(e) => KindView::Enum {
                enum_name: e.enum_name.clone(),
                open: e.open,
                values: e.values.iter().map(enum_value_line).collect(),
            },
            TypeKind::Union(u) => KindView::Union {
                property: u.property.clone(),
                variants: u.variants.iter().cloned().collect(),
            },
        },
    }
}

/// Every type of `ir`, by id.
pub fn types_view(ir: &Ir) -> BTreeMap<String, TypeView> {
    ir.types.iter().map(|(id, t)| (id.clone(), type_view(t))).collect()
}

/// The object properties of the type `id`, panicking when it is not an object.
pub fn object<'a>(ir: &'a Ir, id: &str) -> &'a ObjectType {
    match ir.types.get(id).map(|t| &t.kind) {
        Some(TypeKind::Object(o)) => o,
        other => panic!("{id} is not an object: {other:?}"),
    }
}

/// The property `name` of the object `id`.
pub fn property<'a>(ir: &'a Ir, id: &str, name: &str) -> &'a Property {
    object(ir, id)
        .properties
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{id} has no property {name}"))
}
