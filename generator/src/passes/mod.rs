//! The generator's passes, in the order [`run_all`] applies them. Each is a module of its own with its own
//! snapshot test (see `generator/tests/passes.rs`).

pub mod allof;
pub mod enums;
pub mod layout;
pub mod lower;
pub mod names;
pub mod overrides;
pub mod recursion;
pub mod unions;

use std::collections::BTreeSet;

use crate::config::VersionOverrides;
use crate::ir::Ir;

/// Runs every pass after `lower`, in order: overrides, allof, unions, prune, enums, names, recursion, layout.
/// Returns the override keys that matched.
pub fn run_all(ir: &mut Ir, overrides: &VersionOverrides) -> BTreeSet<String> {
    let matched = overrides::apply(ir, overrides);
    allof::run(ir);
    unions::run(ir);
    layout::prune(ir);
    enums::run(ir);
    names::run(ir);
    recursion::run(ir);
    layout::run(ir);
    matched
}
