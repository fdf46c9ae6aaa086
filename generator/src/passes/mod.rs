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
use std::time::{Duration, Instant};

use crate::config::VersionOverrides;
use crate::ir::Ir;

/// A pass after `lower`: its name (for timings) and its entry point.
type Pass = (&'static str, fn(&mut Ir));

/// Runs every pass after `lower`, in order: overrides, allof, unions, prune, enums, names, recursion, layout.
/// Returns the override keys that matched.
pub fn run_all(ir: &mut Ir, overrides: &VersionOverrides) -> BTreeSet<String> {
    run_all_timed(ir, overrides, &mut |_, _| {})
}

/// [`run_all`], reporting how long each pass took to `timing`.
pub fn run_all_timed(
    ir: &mut Ir,
    overrides: &VersionOverrides,
    timing: &mut dyn FnMut(&'static str, Duration),
) -> BTreeSet<String> {
    let start = Instant::now();
    let matched = overrides::apply(ir, overrides);
    timing("overrides", start.elapsed());
    let passes: [Pass; 7] = [
        ("allof", allof::run),
        ("unions", unions::run),
        ("prune", layout::prune),
        ("enums", enums::run),
        ("names", names::run),
        ("recursion", recursion::run),
        ("layout", layout::run),
    ];
    for (name, pass) in passes {
        let start = Instant::now();
        pass(ir);
        timing(name, start.elapsed());
    }
    matched
}
