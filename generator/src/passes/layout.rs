//! Pass **layout**: which file each type goes into.
//!
//! Types not reachable from any resource (an `allOf` parent such as `TrackedResource`, whose properties were
//! merged into its children) are dropped. Each resource gets a module named after its kind in snake_case;
//! a type reachable from exactly one resource goes into that resource's module, a type shared by several
//! into `shared`. An action kind reaches types too, but a type that a resource reaches stays where the resources
//! put it (`ManagedClusterAADProfile` stays in `managed_cluster`, though `ManagedClusterResetAadProfile` sends
//! one): an action's own types (its request and response bodies) are in its module, or `shared`.

use std::collections::{BTreeMap, BTreeSet};

use crate::passes::names::field_ident;

use crate::ir::{Ir, TypeId};

pub const SHARED_MODULE: &str = "shared";

/// Drops types no resource reaches (the `allOf` parents whose properties were merged into children).
pub fn prune(ir: &mut Ir) {
    let users = users(ir);
    ir.types.retain(|id, _| users.contains_key(id));
}

/// Assigns every type its module.
pub fn run(ir: &mut Ir) {
    for r in &mut ir.resources {
        r.module = module_name(&r.kind);
    }
    let users = users(ir);
    let actions: BTreeSet<String> = ir
        .resources
        .iter()
        .filter(|r| r.action.is_some())
        .map(|r| r.module.clone())
        .collect();
    ir.types.retain(|id, _| users.contains_key(id));
    for (id, def) in ir.types.iter_mut() {
        let mut modules = users.get(id).cloned().unwrap_or_default();
        if modules.iter().any(|m| !actions.contains(m)) {
            modules.retain(|m| !actions.contains(m));
        }
        def.module = match modules.len() {
            1 => modules.into_iter().next().unwrap_or_else(|| SHARED_MODULE.to_string()),
            _ => SHARED_MODULE.to_string(),
        };
    }
}

/// The resource modules that reach each type.
fn users(ir: &Ir) -> BTreeMap<TypeId, BTreeSet<String>> {
    let mut users: BTreeMap<TypeId, BTreeSet<String>> = BTreeMap::new();
    for r in &ir.resources {
        let module = module_name(&r.kind);
        let mut stack: Vec<TypeId> = vec![r.body_type.clone()];
        stack.extend(r.get_type.iter().cloned());
        let mut seen = BTreeSet::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id.clone()) {
                continue;
            }
            users.entry(id.clone()).or_default().insert(module.clone());
            stack.extend(ir.references(&id));
        }
    }
    users
}

/// The module of a resource: its kind in snake_case, never `shared` or `mod` (which the layout uses).
fn module_name(kind: &str) -> String {
    let name = field_ident(kind);
    if name == SHARED_MODULE || name == "mod" {
        format!("{name}_resource")
    } else {
        name
    }
}
