//! [`Builder`] options for build scripts and other tools, and [`Builder::compile`], the entry point for a
//! `build.rs` (in the style of `prost-build`):
//!
//! ```no_run
//! // build.rs, in `fn main`:
//! armgen::Builder::new("azure-arm.yaml")
//!     .specs("specs")                      // else $AZURE_REST_API_SPECS, then specs/azure-rest-api-specs
//!     .versions(["v2alpha1"])              // default: every version in the config
//!     .resources(["ManagedCluster"])       // kinds or ARM types; default: every resource
//!     .kubernetes(false)                   // ARM payload types only; default: custom resources too
//!     .doc_comments(false)                 // default: true
//!     .derive("Eq")                        // on every generated struct and enum
//!     .single_file("aks.rs")               // one file of nested modules, for include!
//!     .compile()                           // into $OUT_DIR; prints cargo:rerun-if-changed
//!     .expect("armgen");
//! ```
//!
//! and in the crate: `include!(concat!(env!("OUT_DIR"), "/aks.rs"));` (the including crate depends on
//! `armgen-runtime`, `serde` and `serde_json`, and with the custom resources on `kube-core` and `k8s-openapi`).
//!
//! [`compile`](Builder::compile) writes only files whose contents change, so the including crate is not
//! rebuilt for nothing, and prints `cargo:rerun-if-changed` for exactly the files generation read: the
//! config file and every spec file, common-types included (and `cargo:rerun-if-env-changed` for
//! `AZURE_REST_API_SPECS` when the spec root was not given). Cargo then reruns the build script only when
//! one of them changes.
//!
//! Fetching is off by default: with [`fetch_missing_specs(true)`](Builder::fetch_missing_specs), a builder
//! given no spec root fetches the files of the pin file (`specs/pin.json` next to the config, or
//! [`spec_pin`](Builder::spec_pin)) into `specs/azure-rest-api-specs`, from
//! [`spec_base_url`](Builder::spec_base_url) or `$ARMGEN_SPEC_BASE_URL` (see [`crate::load::fetch`]); `compile` then
//! also watches the pin file and `ARMGEN_SPEC_BASE_URL`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::pipeline::builder::{Builder, SPECS_ENV};
use crate::pipeline::generation::Generation;
pub use crate::pipeline::options::{Layout, Options, Progress, ProgressCallback, ProgressFn};

/// What [`Builder::compile`] did.
#[derive(Debug, Clone)]
pub struct BuildOutput {
    /// Where the output went.
    pub out_dir: PathBuf,
    /// Files written (relative to `out_dir`): empty when everything was up to date.
    pub written: Vec<PathBuf>,
    /// Files removed (crate layout only).
    pub removed: Vec<PathBuf>,
    /// Every file generation read.
    pub inputs: BTreeSet<PathBuf>,
    /// The `cargo:` lines for a build script.
    pub cargo_instructions: Vec<String>,
    pub generation: Generation,
    pub elapsed: Duration,
}

impl Builder {
    /// A builder for an in-code configuration rather than a file. The default spec root
    /// (`specs/azure-rest-api-specs`) is then relative to the current directory (the package root in a
    /// build script).
    pub fn from_config(config: Config) -> Self {
        let mut b = Builder::new("");
        b.options.config = Some(config);
        b
    }

    /// Generates only these Kubernetes versions (`v1beta1`, or `group/v1beta1`). Default: all. A name that
    /// matches no version is an error.
    pub fn versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.versions = Some(versions.into_iter().map(Into::into).collect());
        self
    }

    /// Generates only these resources, by kind (`ManagedCluster`, after config renames) or ARM type
    /// (`Microsoft.ContainerService/managedClusters`), with the types they use. Default: all. A name that
    /// matches no resource is an error.
    pub fn resources<I, S>(mut self, resources: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.options.resources = Some(resources.into_iter().map(Into::into).collect());
        self
    }

    /// Whether to generate the Kubernetes custom resources and CRD manifests (default: yes). Without them the
    /// output has only the ARM payload types (`<group>::<version>::arm`), and the including crate needs neither
    /// `kube-core` nor `k8s-openapi`.
    pub fn kubernetes(mut self, on: bool) -> Self {
        self.options.arm_only = !on;
        self
    }

    /// Whether to write doc comments (default: yes). Without them the output is about a third smaller.
    pub fn doc_comments(mut self, on: bool) -> Self {
        self.options.strip_docs = !on;
        self
    }

    /// Adds a derive (a path such as `Eq` or `Hash`) to every generated struct and enum, where it is not derived
    /// already. The including crate must be able to derive it for every type (for example, `Eq` and `Hash` cannot
    /// be derived for types with `f64` fields). The generated structs carry no `#[serde]` attributes (their JSON
    /// names are in the `armgen_runtime::json_object!` invocation beside each, which implements serde's traits),
    /// so a derive that reads serde's attributes, such as `schemars::JsonSchema`, would see the Rust field names:
    /// the CRD manifests in `crds/` are the schemas.
    pub fn derive(mut self, derive: impl Into<String>) -> Self {
        self.options.derives.push((None, derive.into()));
        self
    }

    /// Adds a derive to one generated struct or enum, by Rust name. A name that matches no type is an error.
    pub fn derive_for(mut self, rust_type: impl Into<String>, derive: impl Into<String>) -> Self {
        self.options.derives.push((Some(rust_type.into()), derive.into()));
        self
    }

    /// Emits one file `name` holding every module (`pub mod <group> { pub mod <version> { pub mod arm
    /// { … } } }`) instead of the crate layout, for `include!(concat!(env!("OUT_DIR"), "/<name>"))`.
    /// The versions are not behind cargo features there: select them with [`versions`](Self::versions).
    pub fn single_file(mut self, name: impl Into<String>) -> Self {
        self.options.layout = Layout::SingleFile(name.into());
        self
    }

    /// Where [`compile`](Self::compile) writes. Default: `$OUT_DIR` for a single file, `$OUT_DIR/armgen`
    /// for the crate layout (a folder `compile` owns: files it does not write are removed).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.options.out_dir = Some(dir.into());
        self
    }

    /// Whether [`compile`](Self::compile) prints the `cargo:` instructions (default: yes). They are in
    /// [`BuildOutput::cargo_instructions`] either way.
    pub fn cargo_instructions(mut self, print: bool) -> Self {
        self.options.quiet = !print;
        self
    }

    /// Whether to fetch the spec files when no spec root is given (default: no; the `armgen` command: yes).
    ///
    /// With it, when neither [`specs`](crate::Builder::specs) nor `$AZURE_REST_API_SPECS` names a spec root, the
    /// files of the pin file ([`spec_pin`](Self::spec_pin), default `specs/pin.json` next to the config) are
    /// fetched at their pinned commits into `specs/azure-rest-api-specs` next to the config, verified by size
    /// and SHA-256 (see [`crate::load::fetch`]). Files already there with the pinned hash are not fetched again; a
    /// folder there that armgen did not create is used as it is. Each download is reported as
    /// [`Progress::Fetch`].
    pub fn fetch_missing_specs(mut self, on: bool) -> Self {
        self.options.fetch = on;
        self
    }

    /// The base URL spec files are fetched from: `<base>/<commit>/<path>` (http or https). Default:
    /// `$ARMGEN_SPEC_BASE_URL`, else `https://raw.githubusercontent.com/Azure/azure-rest-api-specs`.
    pub fn spec_base_url(mut self, url: impl Into<String>) -> Self {
        self.options.spec_base_url = Some(url.into());
        self
    }

    /// The pin file naming the spec files to fetch. Default: `specs/pin.json` next to the config file.
    pub fn spec_pin(mut self, file: impl Into<PathBuf>) -> Self {
        self.options.spec_pin = Some(file.into());
        self
    }

    /// Calls `f` as the generation progresses (for progress output on long runs).
    pub fn progress(mut self, f: impl Fn(&Progress) + Send + Sync + 'static) -> Self {
        self.options.progress = ProgressFn(Some(Arc::new(f)));
        self
    }

    /// For a build script: generates, writes into the output folder only what changed, and prints
    /// `cargo:rerun-if-changed` for every input file read (see the [module docs](crate::pipeline::buildrs)).
    pub fn compile(&self) -> Result<BuildOutput> {
        let start = Instant::now();
        let generation = self.generate()?;
        let single = matches!(self.options.layout, Layout::SingleFile(_));
        let out_dir = match (&self.options.out_dir, std::env::var_os("OUT_DIR")) {
            (Some(d), _) => d.clone(),
            (None, Some(d)) if single => PathBuf::from(d),
            (None, Some(d)) => PathBuf::from(d).join("armgen"),
            (None, None) => {
                return Err(Error::Invalid {
                    what: "armgen::Builder::compile".into(),
                    message: "OUT_DIR is not set (not in a build script?): set the folder with `out_dir`".into(),
                });
            }
        };
        let (written, removed) = if single {
            let mut written = Vec::new();
            for (rel, contents) in &generation.files {
                let path = out_dir.join(rel);
                if std::fs::read(&path).ok().as_deref() == Some(contents.as_bytes()) {
                    continue;
                }
                let dir = path.parent().unwrap_or(&out_dir);
                std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                std::fs::write(&path, contents).map_err(|e| Error::io(&path, e))?;
                written.push(rel.clone());
            }
            (written, Vec::new())
        } else {
            generation.write(&out_dir)?
        };
        let mut cargo_instructions: Vec<String> = generation
            .inputs
            .iter()
            .map(|p| format!("cargo:rerun-if-changed={}", p.display()))
            .collect();
        if self.specs.is_none() {
            cargo_instructions.push(format!("cargo:rerun-if-env-changed={SPECS_ENV}"));
        }
        if self.options.fetch && self.options.spec_base_url.is_none() {
            cargo_instructions.push(format!(
                "cargo:rerun-if-env-changed={}",
                crate::load::fetch::BASE_URL_ENV
            ));
        }
        // A CRD trimmed to fit its size budget is worth a warning in the build output.
        for f in &generation.fitted {
            cargo_instructions.push(format!("cargo:warning={f}"));
        }
        if !self.options.quiet {
            for line in &cargo_instructions {
                println!("{line}");
            }
        }
        Ok(BuildOutput {
            out_dir,
            written,
            removed,
            inputs: generation.inputs.clone(),
            cargo_instructions,
            elapsed: start.elapsed(),
            generation,
        })
    }
}
