//! # armgen
//!
//! Generates Rust types for Azure Resource Manager APIs from the ARM OpenAPI specs (Swagger 2.0 or
//! OpenAPI 3.0), for Kubernetes operators: today the ARM payload types of every resource that has a PUT.
//!
//! The pipeline is a sequence of small passes over an intermediate representation ([`ir`]):
//!
//! 1. [`load`]: read documents, upconvert Swagger 2.0 into the `openapiv3` model, follow `$ref`s across files;
//! 2. [`discover`]: every ARM PUT path is a resource;
//! 3. [`passes::lower`]: schemas → IR types;
//! 4. [`passes::overrides`], [`passes::allof`], [`passes::unions`], [`passes::enums`], [`passes::names`],
//!    [`passes::recursion`], [`passes::layout`];
//! 5. [`shape`]: the IR → the Kubernetes shape ([`shape::KubeIr`]);
//! 6. [`emit`]: `quote` → `syn` → `prettyplease`, one file per resource per version;
//! 7. [`report`]: the API structure beside the generated crate, and `armgen diff` over it.
//!
//! The stages, in the order they run (from reading the config to the output options), are the functions of
//! [`pipeline`] (`pipeline/mod.rs`), each timed under its name (`armgen generate --verbose`). Use [`Builder`]
//! from a `build.rs` or another tool; the `armgen` binary wraps it.
//!
//! The modules, in the order the data flows through them:
//!
//! - [`pipeline`]: the ordered stages and what drives them — [`pipeline::builder`] ([`Builder`]),
//!   [`pipeline::buildrs`] (its options, for build scripts), `generation` ([`Generation`], what it returns),
//!   `options`, `stack` (the pipeline's thread), [`pipeline::rewrite`] (the output rewrites);
//! - [`config`]: `azure-arm.yaml`, and [`config::diff_rules`], its change-detection rules checked against the IR;
//! - [`load`]: the spec files and their `$ref`s ([`load::spec_root`]: where the spec root is; [`load::fetch`]:
//!   fetching it from the pin);
//! - [`discover`], [`ir`], [`passes`], [`shape`]: resources, the IR and its passes, the Kubernetes shape;
//! - [`emit`]: the generated crate, CRDs and RBAC, and [`emit::rules`] (`rules.json`);
//! - [`report`]: [`report::structure`] (`api/<group>-<version>.txt`) and [`report::apidiff`] (`armgen diff`);
//! - [`error`], [`ui`]: errors with their location, and terminal output.

pub mod config;
pub mod discover;
pub mod emit;
pub mod error;
pub mod ir;
pub mod load;
pub mod passes;
pub mod pipeline;
pub mod report;
pub mod shape;
pub mod ui;

pub use config::Config;
pub use error::{Error, Location, Result};
pub use pipeline::builder::{Builder, resolve_spec_root};
pub use pipeline::generation::{Generation, Stale};
