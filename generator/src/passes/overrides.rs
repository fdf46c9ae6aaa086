//! Pass **overrides**: applies the config's per-type and per-property overrides.
//!
//! Types are matched by their schema name, properties by JSON name. The pass returns the config keys it
//! matched, so that the caller can report entries that matched nothing in any version.

use std::collections::BTreeSet;

use crate::config::VersionOverrides;
use crate::error::Result;
use crate::ir::{Ir, TypeKind};

/// Applies `overrides`; returns the keys (`overrides.types.X`, `overrides.types.X.properties.y`) matched.
pub fn apply(ir: &mut Ir, overrides: &VersionOverrides) -> BTreeSet<String> {
    let mut matched = BTreeSet::new();
    for def in ir.types.values_mut() {
        let Some(o) = overrides.types.get(&def.name) else {
            continue;
        };
        matched.insert(format!("overrides.types.{}", def.name));
        if let Some(rename) = &o.rename {
            def.rust_name = rename.clone();
        }
        if let TypeKind::Object(obj) = &mut def.kind {
            for p in &mut obj.properties {
                let Some(po) = o.properties.get(&p.name) else { continue };
                matched.insert(format!("overrides.types.{}.properties.{}", def.name, p.name));
                if let Some(rename) = &po.rename {
                    p.rust_name = rename.clone();
                }
                if let Some(secret) = po.secret {
                    p.secret = secret;
                }
                if let Some(read_only) = po.read_only {
                    p.read_only = read_only;
                }
                if let Some(identifiers) = &po.identifiers {
                    p.identifiers = Some(identifiers.clone());
                }
                if let Some(i) = &po.immutable {
                    p.immutable_source = Some(i.source.clone());
                }
                if let Some(from_config) = po.from_config {
                    p.from_config = from_config;
                }
                if let Some(arm_id_keys) = po.arm_id_keys {
                    p.arm_id_keys = arm_id_keys;
                }
                if !po.diff_ignored_when.is_empty() {
                    p.diff_ignored_when = po.diff_ignored_when.clone();
                }
            }
        }
    }
    matched
}

/// Every key `overrides` declares, in the form [`apply`] reports.
pub fn declared(overrides: &VersionOverrides) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for (name, o) in &overrides.types {
        keys.insert(format!("overrides.types.{name}"));
        for prop in o.properties.keys() {
            keys.insert(format!("overrides.types.{name}.properties.{prop}"));
        }
    }
    keys
}

pub fn run(ir: &mut Ir, overrides: &VersionOverrides) -> Result<()> {
    apply(ir, overrides);
    Ok(())
}
