//! The change-detection rules of the config, checked against each version's IR:
//!
//! - `overrides.types.<Schema>.properties.<array>.identifiers: [name, …]` — the item properties that identify an
//!   item of an array of objects (as `x-ms-identifiers` would): each must be a writable, non-secret scalar
//!   property (string, enum, integer, boolean) of the item type;
//! - `overrides.types.<Schema>.properties.<prop>.diffIgnoredWhen: {<sibling>: <value>, …}` — change detection
//!   does not compare `<prop>` while every sibling has its value: the property must be writable and not a
//!   secret (else it is never compared anyway), each sibling a writable, non-secret property of the same schema
//!   whose type fits the value (boolean ↔ boolean, string ↔ string or enum, integer ↔ integer).
//!
//! The generated `DiffWith` impls ([`crate::emit::diff`]) apply them.

use crate::config::VersionOverrides;
use crate::ir::{Ir, Primitive, Property, TypeKind, TypeRef};
use crate::shape::ConfigProblem;

/// Checks the `identifiers` and `diffIgnoredWhen` overrides against one version's IR. A schema or property the
/// version lacks is not an error here (an entry no version matches is reported as stale by the caller).
pub fn check_config(ir: &Ir, overrides: &VersionOverrides) -> Result<(), ConfigProblem> {
    for (schema, o) in &overrides.types {
        for (prop, po) in &o.properties {
            let key = format!("overrides.types.{schema}.properties.{prop}");
            for def in ir.types.values().filter(|d| d.name == *schema) {
                let TypeKind::Object(object) = &def.kind else { continue };
                let Some(p) = object.properties.iter().find(|p| p.name == *prop) else {
                    continue;
                };
                let problem = |key: String, message: String| ConfigProblem {
                    key,
                    message: format!("{message} (ARM API version {})", ir.api_version),
                };
                if let Some(ids) = &po.identifiers {
                    let key = format!("{key}.identifiers");
                    let item = match &p.ty {
                        TypeRef::Array(inner) => match inner.as_ref() {
                            TypeRef::Named(id) => match ir.types.get(id).map(|d| &d.kind) {
                                Some(TypeKind::Object(item)) => Some(item),
                                _ => None,
                            },
                            _ => None,
                        },
                        _ => None,
                    };
                    let Some(item) = item else {
                        return Err(problem(key, format!("{prop} is not an array of objects")));
                    };
                    for id in ids {
                        let Some(q) = item.properties.iter().find(|q| q.name == *id) else {
                            return Err(problem(key, format!("the items of {prop} have no property {id}")));
                        };
                        if let Some(why) = not_comparable(q) {
                            return Err(problem(key, format!("{id} {why}; it cannot identify an item")));
                        }
                        if scalar(ir, &q.ty).is_none() {
                            return Err(problem(
                                key,
                                format!("{id} is not a string, enum, integer or boolean; it cannot identify an item"),
                            ));
                        }
                    }
                }
                if po.diff_ignored_when.is_empty() {
                    continue;
                }
                if let Some(why) = not_comparable(p) {
                    return Err(problem(
                        format!("{key}.diffIgnoredWhen"),
                        format!("{prop} {why}: change detection never compares it"),
                    ));
                }
                for (sibling, value) in &po.diff_ignored_when {
                    let key = format!("{key}.diffIgnoredWhen.{sibling}");
                    let Some(q) = object.properties.iter().find(|q| q.name == *sibling) else {
                        return Err(problem(key, format!("{schema} has no property {sibling}")));
                    };
                    if let Some(why) = not_comparable(q) {
                        return Err(problem(key, format!("{sibling} {why}; a condition cannot test it")));
                    }
                    let fits = match scalar(ir, &q.ty) {
                        Some(Scalar::Bool) => value.is_boolean(),
                        Some(Scalar::Str) => value.is_string(),
                        Some(Scalar::Int) => value.is_i64() || value.is_u64(),
                        None => false,
                    };
                    if !fits {
                        return Err(problem(
                            key,
                            format!(
                                "{value} does not fit {sibling} (a condition tests a boolean, string, enum or integer property with a value of its type)"
                            ),
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}

/// Why change detection never compares `p`, if it does not.
fn not_comparable(p: &Property) -> Option<&'static str> {
    if p.read_only {
        Some("is read-only")
    } else if p.secret {
        Some("is a secret")
    } else {
        None
    }
}

/// The scalar kinds a key or condition can test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// A string or an enum (compared case-insensitively).
    Str,
    Int,
    Bool,
}

/// The scalar kind of a property type, if it is one.
pub fn scalar(ir: &Ir, ty: &TypeRef) -> Option<Scalar> {
    match ty {
        TypeRef::Primitive(Primitive::String) => Some(Scalar::Str),
        TypeRef::Primitive(Primitive::Int32 | Primitive::Int64) => Some(Scalar::Int),
        TypeRef::Primitive(Primitive::Bool) => Some(Scalar::Bool),
        TypeRef::Named(id) => match ir.types.get(id).map(|d| &d.kind) {
            Some(TypeKind::Enum(_)) => Some(Scalar::Str),
            _ => None,
        },
        _ => None,
    }
}
