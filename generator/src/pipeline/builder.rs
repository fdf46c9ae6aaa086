//! The library entry point: [`Builder`] runs the whole pipeline, for the CLI and for `build.rs` scripts. The
//! pipeline's stages, in order, and the function that runs them are in [`pipeline`]
//! (`pipeline/mod.rs`).
//!
//! ```no_run
//! let generation = armgen::Builder::new("azure-arm.yaml")
//!     .specs("../azure-rest-api-specs")
//!     .generate()
//!     .expect("generation");
//! generation.write("generated").expect("write");
//! ```

use std::path::PathBuf;

use crate::error::Result;
use crate::pipeline::{self, Request};

pub use crate::load::spec_root::{DEFAULT_SPECS, SPECS_ENV};
pub use crate::pipeline::generation::{Generation, Stale, Timings, VersionSummary};
pub use crate::pipeline::stack::PIPELINE_STACK;
use crate::pipeline::stack::on_big_stack;
pub use crate::pipeline::{load_version, resolve_spec_root, select_resources};

/// Configures and runs a generation.
#[derive(Debug, Clone)]
pub struct Builder {
    config: PathBuf,
    pub(crate) specs: Option<PathBuf>,
    /// Selection, output and progress options (set by the methods in [`crate::pipeline::buildrs`]).
    pub(crate) options: crate::pipeline::options::Options,
}

impl Builder {
    /// A builder for the config file at `config`.
    pub fn new(config: impl Into<PathBuf>) -> Self {
        Builder {
            config: config.into(),
            specs: None,
            options: Default::default(),
        }
    }

    /// Uses `dir` as the spec root (otherwise `$AZURE_REST_API_SPECS`, then `specs/azure-rest-api-specs`).
    pub fn specs(mut self, dir: impl Into<PathBuf>) -> Self {
        self.specs = Some(dir.into());
        self
    }

    /// Runs the pipeline — its stages `config`, `load`, `discover`, `lower`, the passes, `kube`, `emit`,
    /// `structure` and `options`, each timed in [`Generation::timings`] — and returns the generated files
    /// without writing anything.
    ///
    /// The pipeline runs on a thread of its own with a large stack ([`PIPELINE_STACK`]): shaping and emitting
    /// recurse once per level of nesting of the spec's definitions, and a deep chain must not overflow the
    /// caller's stack (a test thread has 2 MiB). The stack is reserved, not used: pages are only touched as deep
    /// as the specs nest. When no thread can be started, the pipeline runs on the caller's thread.
    pub fn generate(&self) -> Result<Generation> {
        on_big_stack(|| {
            pipeline::run(&Request {
                config: &self.config,
                specs: self.specs.as_deref(),
                options: &self.options,
            })
        })
    }
}
