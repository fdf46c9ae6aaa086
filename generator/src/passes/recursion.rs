//! Pass **recursion**: boxes the fields that close a cycle of direct containment.
//!
//! A field holding a named type directly (not inside a `Vec` or a map) is an edge of the containment graph;
//! union variants are edges too. A field edge `A → B` is boxed when `B` reaches `A` again through direct
//! edges — that is every field edge on a cycle, direct or indirect (A → B → C → A), so the generated types
//! have a finite size.

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Ir, TypeId, TypeKind, TypeRef};

pub fn run(ir: &mut Ir) {
    let mut edges: BTreeMap<TypeId, BTreeSet<TypeId>> = BTreeMap::new();
    for (id, def) in &ir.types {
        let out = edges.entry(id.clone()).or_default();
        match &def.kind {
            TypeKind::Object(o) => {
                for p in &o.properties {
                    if let TypeRef::Named(n) = &p.ty {
                        out.insert(n.clone());
                    }
                }
            }
            TypeKind::Union(u) => out.extend(u.variants.iter().map(|(_, v)| v.clone())),
            TypeKind::Enum(_) => {}
        }
    }
    let reaches = |from: &TypeId, to: &TypeId| -> bool {
        let mut stack = vec![from.clone()];
        let mut seen = BTreeSet::new();
        while let Some(cur) = stack.pop() {
            if cur == *to {
                return true;
            }
            if seen.insert(cur.clone()) {
                if let Some(next) = edges.get(&cur) {
                    stack.extend(next.iter().cloned());
                }
            }
        }
        false
    };
    let mut to_box = Vec::new();
    for (id, def) in &ir.types {
        if let TypeKind::Object(o) = &def.kind {
            for (i, p) in o.properties.iter().enumerate() {
                if let TypeRef::Named(n) = &p.ty {
                    if reaches(n, id) {
                        to_box.push((id.clone(), i));
                    }
                }
            }
        }
    }
    for (id, i) in to_box {
        if let Some(TypeKind::Object(o)) = ir.types.get_mut(&id).map(|t| &mut t.kind) {
            if let Some(p) = o.properties.get_mut(i) {
                p.boxed = true;
            }
        }
    }
}
