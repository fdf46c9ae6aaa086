//! The reports written beside the generated crate, and read back from it: what a version's API looks like and
//! what changed between two of them.
//!
//! - [`structure`]: the API structure of one generated version (`api/<group>-<version>.txt`), so that a plain
//!   `git diff` of a regeneration shows API changes in a few lines;
//! - [`apidiff`]: `armgen diff`, the API changes between two versions (configured versions, spec files or
//!   generated trees), as a Markdown report.

pub mod apidiff;
pub mod structure;
