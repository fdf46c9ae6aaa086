//! Pass **allof**: merges `allOf` parents into their children.
//!
//! A child gets every property of its parents (transitively, parents in `allOf` order, then its own). A
//! property the child redeclares replaces the parent's declaration (reported when the types differ), in the
//! parent's place. `required` follows JSON Schema's `allOf`: a property is required when any schema in the
//! chain requires it — where it is declared, in a parent that redeclares it, or in a child's `required` list
//! naming an inherited property (a name no schema in the chain declares is reported).
//! `x-ms-azure-resource` is inherited. The `parents` list is kept: the `unions` pass reads it.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Diagnostic, Ir, Property, TypeId, TypeKind};

pub fn run(ir: &mut Ir) {
    let ids: Vec<TypeId> = ir.types.keys().cloned().collect();
    let mut merged: BTreeMap<TypeId, (Vec<Property>, bool)> = BTreeMap::new();
    for id in &ids {
        let mut stack = BTreeSet::new();
        merge(ir, id, &mut merged, &mut stack);
    }
    for (id, (props, azure)) in merged {
        if let Some(TypeKind::Object(o)) = ir.types.get_mut(&id).map(|t| &mut t.kind) {
            o.properties = props;
            o.azure_resource = azure;
            o.merged = true;
        }
    }
}

fn merge(
    ir: &mut Ir,
    id: &TypeId,
    done: &mut BTreeMap<TypeId, (Vec<Property>, bool)>,
    stack: &mut BTreeSet<TypeId>,
) -> (Vec<Property>, bool) {
    if let Some(m) = done.get(id) {
        return m.clone();
    }
    let Some(TypeKind::Object(object)) = ir.types.get(id).map(|t| t.kind.clone()) else {
        return (Vec::new(), false);
    };
    if !stack.insert(id.clone()) {
        let origin = ir.types.get(id).map(|t| t.origin.clone()).unwrap_or_default();
        ir.diagnostics.push(Diagnostic {
            at: origin,
            message: "allOf cycle: the type inherits from itself; the cycle is cut here".into(),
        });
        return (object.properties.clone(), object.azure_resource);
    }
    let mut props: Vec<Property> = Vec::new();
    let mut azure = object.azure_resource;
    for parent in &object.parents {
        let (parent_props, parent_azure) = merge(ir, parent, done, stack);
        azure |= parent_azure;
        for mut p in parent_props {
            p.inherited = true;
            upsert(&mut props, p, &mut ir.diagnostics);
        }
    }
    for p in object.properties {
        upsert(&mut props, p, &mut ir.diagnostics);
    }
    for name in &object.required {
        match props.iter_mut().find(|p| p.name == *name) {
            Some(p) => p.required = true,
            None => {
                let origin = ir.types.get(id).map(|t| t.origin.clone()).unwrap_or_default();
                ir.diagnostics.push(Diagnostic {
                    at: origin,
                    message: format!(
                        "`required` names {name:?}, which neither the schema nor its allOf parents declare"
                    ),
                });
            }
        }
    }
    stack.remove(id);
    done.insert(id.clone(), (props.clone(), azure));
    (props, azure)
}

/// Adds `p`, or replaces the declaration of the same name in place, keeping it required if it was.
fn upsert(props: &mut Vec<Property>, mut p: Property, diagnostics: &mut Vec<Diagnostic>) {
    match props.iter_mut().find(|q| q.name == p.name) {
        Some(existing) => {
            if existing.ty != p.ty && existing.origin != p.origin {
                diagnostics.push(Diagnostic {
                    at: p.origin.clone(),
                    message: format!(
                        "redeclares {:?}, declared at {} with another type; this declaration is used",
                        p.name, existing.origin
                    ),
                });
            }
            p.required |= existing.required;
            *existing = p;
        }
        None => props.push(p),
    }
}
