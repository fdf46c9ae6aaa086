//! Pass **unions**: discriminated unions (`discriminator` + `x-ms-discriminator-value`) become tagged enums.
//!
//! The base type (the one declaring `discriminator`) turns into a union whose variants are the types that
//! inherit from it (directly or through other variants), sorted by discriminator value: the type's
//! `x-ms-discriminator-value`, or else its schema name, as Swagger 2.0 and OpenAPI 3.0 define it (reported). Each variant struct drops the discriminator property: the enum tag carries it on the wire. A
//! base that is itself concrete (has its own discriminator value) is kept as a variant under a new
//! `…Base`-suffixed id. A base with no variants stays an object, and that is reported.

use std::collections::BTreeMap;

use crate::ir::{Diagnostic, Ir, ObjectType, TypeDef, TypeId, TypeKind, UnionType};

pub fn run(ir: &mut Ir) {
    let bases: Vec<(TypeId, String)> = ir
        .types
        .iter()
        .filter_map(|(id, t)| match &t.kind {
            TypeKind::Object(ObjectType {
                discriminator: Some(d), ..
            }) => Some((id.clone(), d.clone())),
            _ => None,
        })
        .collect();
    for (base, property) in bases {
        let mut variants: BTreeMap<String, TypeId> = BTreeMap::new();
        let mut reported = Vec::new();
        for (id, t) in &ir.types {
            if *id == base {
                continue;
            }
            let TypeKind::Object(o) = &t.kind else { continue };
            if !inherits(ir, id, &base) {
                continue;
            }
            let value = match &o.discriminator_value {
                Some(value) => value.clone(),
                None => {
                    reported.push(Diagnostic {
                        at: t.origin.clone(),
                        message: format!(
                            "no x-ms-discriminator-value: the schema name {:?} is its discriminator value",
                            t.name
                        ),
                    });
                    t.name.clone()
                }
            };
            if let Some(prev) = variants.insert(value.clone(), id.clone()) {
                reported.push(Diagnostic {
                    at: t.origin.clone(),
                    message: format!("discriminator value {value:?} also used by {prev}; the later type wins"),
                });
            }
        }
        ir.diagnostics.append(&mut reported);
        let Some(base_def) = ir.types.get(&base).cloned() else {
            continue;
        };
        if variants.is_empty() {
            ir.diagnostics.push(Diagnostic {
                at: base_def.origin.clone(),
                message: "discriminator without variants: generated as a plain object".into(),
            });
            if let Some(TypeKind::Object(o)) = ir.types.get_mut(&base).map(|t| &mut t.kind) {
                o.discriminator = None;
            }
            continue;
        }
        if let TypeKind::Object(o) = &base_def.kind {
            if let Some(own) = &o.discriminator_value {
                let concrete_id = format!("{base}/~base");
                let mut concrete = base_def.clone();
                concrete.name = format!("{}Base", base_def.name);
                ir.types.insert(concrete_id.clone(), concrete);
                variants.insert(own.clone(), concrete_id);
            }
        }
        for id in variants.values() {
            if let Some(TypeKind::Object(o)) = ir.types.get_mut(id).map(|t| &mut t.kind) {
                o.properties.retain(|p| p.name != property);
                o.tag_property = Some(property.clone());
                o.discriminator = None;
            }
        }
        if let Some(def) = ir.types.get_mut(&base) {
            *def = TypeDef {
                kind: TypeKind::Union(UnionType {
                    property: property.clone(),
                    variants: variants.into_iter().collect(),
                }),
                ..base_def
            };
        }
    }
}

/// Whether `id` inherits from `base` through `allOf` parents.
fn inherits(ir: &Ir, id: &TypeId, base: &TypeId) -> bool {
    let mut stack = vec![id.clone()];
    let mut seen = std::collections::BTreeSet::new();
    while let Some(cur) = stack.pop() {
        if !seen.insert(cur.clone()) {
            continue;
        }
        if let Some(TypeKind::Object(o)) = ir.types.get(&cur).map(|t| &t.kind) {
            for p in &o.parents {
                if p == base {
                    return true;
                }
                stack.push(p.clone());
            }
        }
    }
    false
}
