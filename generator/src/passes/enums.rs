//! Pass **enums**: names enum variants and merges duplicate enums.
//!
//! - Variant names come from `x-ms-enum.values[].name` when given, else from the value, in UpperCamelCase;
//!   a name that would start with a digit gets a `V` prefix, an empty one becomes `Empty`.
//! - ARM compares enum values case-insensitively, so two values that differ only in case are one variant:
//!   the first is kept and the drop is reported.
//! - Two values that map to the same variant name get numeric suffixes (reported).
//! - `Other` is reserved for the catch-all variant of open enums; a value named so becomes `OtherValue`
//!   (and `Self`, a keyword, `SelfValue`).
//! - Enums with the same `x-ms-enum.name`, values and openness (AKS repeats `OSType` inline, for example)
//!   are merged into the one with the smallest id.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToUpperCamelCase;

use crate::ir::{Diagnostic, EnumType, Ir, TypeId, TypeKind};

pub fn run(ir: &mut Ir) {
    for def in ir.types.values_mut() {
        let origin = def.origin.clone();
        if let TypeKind::Enum(e) = &mut def.kind {
            name_variants(e, &origin, &mut ir.diagnostics);
        }
    }
    merge_duplicates(ir);
}

/// A Rust identifier in UpperCamelCase for `raw`.
pub fn variant_ident(raw: &str) -> String {
    let cleaned: String = raw
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect();
    let mut name = cleaned.to_upper_camel_case();
    if name.is_empty() {
        name = "Empty".into();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name = format!("V{name}");
    }
    name
}

fn name_variants(e: &mut EnumType, origin: &str, diagnostics: &mut Vec<Diagnostic>) {
    let mut seen_values = BTreeSet::new();
    let mut kept = Vec::new();
    for mut v in std::mem::take(&mut e.values) {
        if !seen_values.insert(v.value.to_ascii_lowercase()) {
            diagnostics.push(Diagnostic {
                at: origin.to_string(),
                message: format!("enum value {:?} differs from another only in case; ARM compares case-insensitively, so it is dropped", v.value),
            });
            continue;
        }
        let base = if v.rust_name.is_empty() { &v.value } else { &v.rust_name };
        let mut name = variant_ident(base);
        if name == "Other" || name == "Self" {
            name = format!("{name}Value");
        }
        v.rust_name = name;
        kept.push(v);
    }
    let mut used: BTreeMap<String, usize> = BTreeMap::new();
    for v in &mut kept {
        let count = used.entry(v.rust_name.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            let renamed = format!("{}{}", v.rust_name, count);
            diagnostics.push(Diagnostic {
                at: origin.to_string(),
                message: format!(
                    "enum values map to the same variant name {}; {:?} becomes {renamed}",
                    v.rust_name, v.value
                ),
            });
            v.rust_name = renamed;
        }
    }
    e.values = kept;
}

fn merge_duplicates(ir: &mut Ir) {
    let mut canonical: BTreeMap<(String, bool, Vec<String>), TypeId> = BTreeMap::new();
    let mut replace: BTreeMap<TypeId, TypeId> = BTreeMap::new();
    for (id, def) in &ir.types {
        if let TypeKind::Enum(e) = &def.kind {
            let Some(name) = &e.enum_name else { continue };
            let key = (name.clone(), e.open, e.values.iter().map(|v| v.value.clone()).collect());
            match canonical.get(&key) {
                Some(first) => {
                    replace.insert(id.clone(), first.clone());
                }
                None => {
                    canonical.insert(key, id.clone());
                }
            }
        }
    }
    if replace.is_empty() {
        return;
    }
    ir.rename_refs(|id| replace.get(id).cloned());
    for id in replace.keys() {
        ir.types.remove(id);
    }
}
