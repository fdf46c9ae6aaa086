//! Pass **names**: Rust names for types and fields.
//!
//! Types: the config's rename, else the schema name in UpperCamelCase. Names that would shadow what the
//! generated code uses (`Option`, `Vec`, `String`, …) get a `Type` suffix. When two types want one name, a
//! named definition wins over a name synthesized for an inline schema (`Owner` + `Property`), then the type
//! from a root spec file wins over one from a referenced file, then the smaller id wins; the others get
//! numeric suffixes (`Name2`, `Name3`, …). Every rename is reported, never silent.
//!
//! Fields: the config's rename, else `x-ms-client-name`, else the JSON name, in snake_case. Keywords are
//! emitted as raw identifiers (`r#type`); `self`, `super`, `crate` and `Self`, which cannot be raw, get a `_`
//! suffix (reported). Two properties that want one field name get numeric suffixes (reported). The JSON
//! name is always kept through `#[serde(rename)]`.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToSnakeCase;

use crate::ir::{Diagnostic, Ir, TypeId, TypeKind};
use crate::passes::enums::variant_ident;

/// Names the generated code relies on, which a type may not take.
const RESERVED_TYPES: &[&str] = &[
    "Option",
    "Some",
    "None",
    "Vec",
    "String",
    "Box",
    "BTreeMap",
    "Value",
    "Result",
    "Ok",
    "Err",
    "Self",
    "Default",
    "Clone",
    "Debug",
    "PartialEq",
    "Serialize",
    "Deserialize",
    "From",
    "TryFrom",
    "UnknownFields",
];

/// Keywords that cannot be raw identifiers (`r#self` is not valid Rust).
const NON_RAW_KEYWORDS: &[&str] = &["self", "super", "crate", "Self"];

/// The field name that holds properties this API version does not know.
pub const UNKNOWN_FIELDS: &str = "unknown_fields";

pub fn run(ir: &mut Ir) {
    name_kinds(ir);
    name_types(ir);
    name_fields(ir);
}

/// The kind an ARM type suggests: its last type segment, singular, in UpperCamelCase
/// (`Microsoft.X/managedClusters/agentPools` → `AgentPool`).
fn kind_from_arm_type(arm_type: &str) -> String {
    let last = arm_type.rsplit('/').next().unwrap_or(arm_type);
    let singular = last.strip_suffix('s').filter(|s| !s.is_empty()).unwrap_or(last);
    variant_ident(singular)
}

/// Two resources with one kind (two PUT paths with the same body schema) would collide in every table keyed
/// by kind. The resource whose ARM type suggests the kind keeps it; the others take the kind their ARM type
/// suggests, with a numeric suffix if that is taken too. Reported.
fn name_kinds(ir: &mut Ir) {
    let mut order: Vec<usize> = (0..ir.resources.len()).collect();
    order.sort_by_key(|&i| {
        let r = &ir.resources[i];
        (kind_from_arm_type(&r.arm_type) != r.kind, r.arm_type.clone())
    });
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for i in order {
        let r = &mut ir.resources[i];
        if taken.insert(r.kind.clone()) {
            continue;
        }
        let candidate = kind_from_arm_type(&r.arm_type);
        let mut kind = candidate.clone();
        let mut n = 1;
        while taken.contains(&kind) {
            n += 1;
            kind = format!("{candidate}{n}");
        }
        ir.diagnostics.push(Diagnostic {
            at: r.path.clone(),
            message: format!(
                "kind {} is already taken by another resource; {} is named {kind}",
                r.kind, r.arm_type
            ),
        });
        taken.insert(kind.clone());
        r.kind = kind;
    }
}

fn name_types(ir: &mut Ir) {
    let roots: Vec<String> = ir.spec_files.clone();
    let mut ids: Vec<TypeId> = ir.types.keys().cloned().collect();
    let from_root = |id: &TypeId| roots.iter().any(|r| id.starts_with(&format!("{r}#")));
    ids.sort_by_key(|id| (is_synthesized(id), !from_root(id), id.clone()));
    let mut taken: BTreeSet<String> = BTreeSet::new();
    let mut first_owner: BTreeMap<String, TypeId> = BTreeMap::new();
    for id in ids {
        let Some(def) = ir.types.get_mut(&id) else { continue };
        let mut candidate = if def.rust_name.is_empty() {
            variant_ident(&def.name)
        } else {
            def.rust_name.clone()
        };
        if RESERVED_TYPES.contains(&candidate.as_str()) {
            let renamed = format!("{candidate}Type");
            ir.diagnostics.push(Diagnostic {
                at: def.origin.clone(),
                message: format!("type name {candidate} is reserved in generated code; named {renamed}"),
            });
            candidate = renamed;
        }
        let mut name = candidate.clone();
        let mut n = 1;
        while taken.contains(&name) {
            n += 1;
            name = format!("{candidate}{n}");
        }
        if name != candidate {
            ir.diagnostics.push(Diagnostic {
                at: def.origin.clone(),
                message: format!(
                    "type name {candidate} is already taken by {}; named {name}",
                    first_owner.get(&candidate).cloned().unwrap_or_default()
                ),
            });
        }
        first_owner.entry(candidate).or_insert_with(|| id.clone());
        taken.insert(name.clone());
        def.rust_name = name;
    }
}

/// Whether `id` names a schema that is not a definition of its own (an inline schema, or a type a pass
/// made up), so that its name was synthesized rather than chosen by the spec's authors.
fn is_synthesized(id: &TypeId) -> bool {
    let pointer = id.rsplit_once('#').map(|(_, p)| p).unwrap_or_default();
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    !matches!(segments.as_slice(), ["definitions", _] | ["components", "schemas", _])
}

/// A snake_case field name for a JSON name.
pub fn field_ident(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let mut name = cleaned.to_snake_case();
    if name.is_empty() {
        name = "field".into();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name = format!("n{name}");
    }
    if name == "_" || NON_RAW_KEYWORDS.contains(&name.as_str()) {
        name.push('_');
    }
    name
}

fn name_fields(ir: &mut Ir) {
    let mut diagnostics = Vec::new();
    for def in ir.types.values_mut() {
        let TypeKind::Object(o) = &mut def.kind else { continue };
        let mut taken: BTreeSet<String> = BTreeSet::new();
        taken.insert(UNKNOWN_FIELDS.to_string());
        for p in &mut o.properties {
            let candidate = if !p.rust_name.is_empty() {
                p.rust_name.clone()
            } else {
                let raw = p.client_name.as_deref().unwrap_or(&p.name);
                let name = field_ident(raw);
                if let Some(keyword) = name.strip_suffix('_').filter(|k| NON_RAW_KEYWORDS.contains(k)) {
                    diagnostics.push(Diagnostic {
                        at: p.origin.clone(),
                        message: format!(
                            "field name {keyword} is a keyword that cannot be a raw identifier; named {name}"
                        ),
                    });
                }
                name
            };
            let mut name = candidate.clone();
            let mut n = 1;
            while taken.contains(&name) {
                n += 1;
                name = format!("{candidate}_{n}");
            }
            if name != candidate {
                diagnostics.push(Diagnostic {
                    at: p.origin.clone(),
                    message: format!(
                        "field name {candidate} is already taken in {}; named {name}",
                        def.rust_name
                    ),
                });
            }
            taken.insert(name.clone());
            p.rust_name = name;
        }
    }
    ir.diagnostics.extend(diagnostics);
}
