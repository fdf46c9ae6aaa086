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
//! 5. [`emit`]: `quote` → `syn` → `prettyplease`, one file per resource per version.
//!
//! The stages, in the order they run (from reading the config to the output options), are the functions of
//! `pipeline.rs`, each timed under its name (`armgen generate --verbose`). Use [`Builder`] from a `build.rs` or
//! another tool; the `armgen` binary wraps it.

pub mod apidiff;
pub mod buildrs;
pub mod config;
pub mod diff;
pub mod discover;
pub mod emit;
pub mod error;
pub mod fetch;
pub mod generate;
mod generation;
pub mod ir;
pub mod kube;
pub mod load;
mod options;
pub mod passes;
mod pipeline;
pub mod rewrite;
pub mod rules;
pub mod spec_root;
mod stack;
pub mod structure;
pub mod ui;

pub use config::Config;
pub use error::{Error, Location, Result};
pub use generate::{Builder, resolve_spec_root};
pub use generation::{Generation, Stale};
