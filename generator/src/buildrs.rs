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
//! [`spec_base_url`](Builder::spec_base_url) or `$ARMGEN_SPEC_BASE_URL` (see [`crate::fetch`]); `compile` then
//! also watches the pin file and `ARMGEN_SPEC_BASE_URL`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::error::{Error, Result};
use crate::generate::{Builder, Generation, SPECS_ENV};
use crate::ir::Ir;
use crate::rewrite::{self, RustRewrite};

/// What a generation is at, for progress output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The config is read; these versions (`group/version`) will be generated, in this order.
    Start { versions: Vec<String> },
    /// Loading and lowering one version begins.
    Version { name: String, api_version: String },
    /// Emitting Rust begins.
    Emit,
    /// Downloading the `index`-th (from 1) of `total` spec files that were missing or differed from the pin
    /// begins (only with [`Builder::fetch_missing_specs`]). `path` is the file as the pin names it. Without a
    /// progress callback, these are printed on stderr as `fetching 3/8 <path>`.
    Fetch { index: usize, total: usize, path: String },
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Progress::Start { versions } => write!(f, "generating {}", versions.join(", ")),
            Progress::Version { name, api_version } => write!(f, "{name} (ARM {api_version}): load, lower, passes"),
            Progress::Emit => f.write_str("emit Rust"),
            Progress::Fetch { index, total, path } => write!(f, "fetching {index}/{total} {path}"),
        }
    }
}

/// A function called with progress events.
pub type ProgressCallback = dyn Fn(&Progress) + Send + Sync;

/// A progress callback, if any.
#[derive(Clone, Default)]
pub struct ProgressFn(Option<Arc<ProgressCallback>>);

impl std::fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "ProgressFn(Some)"
        } else {
            "ProgressFn(None)"
        })
    }
}

/// The output form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Layout {
    /// The crate: `Cargo.toml`, `src/…`, `REPORT.md`, `api/…` (what the workspace commits).
    #[default]
    Crate,
    /// One Rust file of nested modules with this name, for `include!`.
    SingleFile(String),
}

/// The options [`Builder`] has beyond the config file and spec root.
#[derive(Debug, Clone, Default)]
pub struct Options {
    config: Option<Config>,
    versions: Option<BTreeSet<String>>,
    resources: Option<BTreeSet<String>>,
    strip_docs: bool,
    arm_only: bool,
    derives: Vec<(Option<String>, String)>,
    layout: Layout,
    out_dir: Option<PathBuf>,
    quiet: bool,
    progress: ProgressFn,
    fetch: bool,
    spec_base_url: Option<String>,
    spec_pin: Option<PathBuf>,
}

impl Options {
    /// The config: the in-code one (validated), else the file at `path`.
    pub(crate) fn load_config(&self, path: &Path) -> Result<Config> {
        let config = match &self.config {
            Some(c) => {
                c.validate(path)?;
                c.clone()
            }
            None => Config::load(path)?,
        };
        let versions = config
            .groups
            .iter()
            .flat_map(|(g, group)| group.versions.keys().map(move |v| (g, v)))
            .filter(|(g, v)| self.selects_version(g, v))
            .map(|(g, v)| format!("{g}/{v}"))
            .collect();
        self.report(Progress::Start { versions });
        Ok(config)
    }

    /// The config file, when the config is read from one.
    pub(crate) fn config_file(&self, path: &Path) -> Option<PathBuf> {
        self.config.is_none().then(|| path.to_path_buf())
    }

    /// Whether version `kube` of `group` is generated.
    pub(crate) fn selects_version(&self, group: &str, kube: &str) -> bool {
        self.versions
            .as_ref()
            .is_none_or(|s| s.contains(kube) || s.contains(&format!("{group}/{kube}")))
    }

    /// Whether the Kubernetes custom resources and CRDs are generated (else only the ARM payload types).
    pub(crate) fn kubernetes(&self) -> bool {
        !self.arm_only
    }

    /// Whether a resource (by kind, after config renames, or ARM type) is generated.
    pub(crate) fn selects_resource(&self, kind: &str, arm_type: &str) -> bool {
        self.resources
            .as_ref()
            .is_none_or(|s| s.contains(kind) || s.contains(arm_type))
    }

    /// Whether versions or resources are selected: then config entries that match only what is left out
    /// are not stale.
    pub(crate) fn is_filtered(&self) -> bool {
        self.versions.is_some() || self.resources.is_some()
    }

    pub(crate) fn report(&self, p: Progress) {
        match &self.progress.0 {
            Some(f) => f(&p),
            // A download is worth a line even when nobody asked for progress.
            None if matches!(p, Progress::Fetch { .. }) => eprintln!("{p}"),
            None => {}
        }
    }

    /// Whether a missing default spec root is fetched, and the base URL and pin file options.
    pub(crate) fn fetch(&self) -> Option<(Option<&str>, Option<&Path>)> {
        self.fetch
            .then_some((self.spec_base_url.as_deref(), self.spec_pin.as_deref()))
    }

    /// Checks that every selected version and resource exists.
    pub(crate) fn check_selection(&self, irs: &BTreeMap<String, Ir>) -> Result<()> {
        for v in self.versions.iter().flatten() {
            if !irs
                .keys()
                .any(|k| k == v || k.rsplit_once('/').is_some_and(|(_, kv)| kv == v))
            {
                return Err(Error::Invalid {
                    what: format!("armgen::Builder::versions: {v:?}"),
                    message: "no such version in the config".into(),
                });
            }
        }
        for r in self.resources.iter().flatten() {
            let found = irs
                .values()
                .flat_map(|ir| &ir.resources)
                .any(|res| res.kind == *r || res.arm_type == *r);
            if !found {
                return Err(Error::Invalid {
                    what: format!("armgen::Builder::resources: {r:?}"),
                    message: "no selected version has a resource of this kind or ARM type".into(),
                });
            }
        }
        Ok(())
    }

    /// Applies the output options to the emitted files: rewrites, then the single-file layout. `features`
    /// are the generated crate's cargo features (the Kubernetes versions).
    pub(crate) fn finish(
        &self,
        mut files: BTreeMap<PathBuf, String>,
        irs: &BTreeMap<String, Ir>,
    ) -> Result<BTreeMap<PathBuf, String>> {
        let mut rw = RustRewrite {
            strip_docs: self.strip_docs,
            derives: self.derives.clone(),
            drop_features: BTreeSet::new(),
        };
        match &self.layout {
            Layout::Crate => {
                rewrite::rewrite_files(&mut files, &rw)?;
                Ok(files)
            }
            Layout::SingleFile(name) => {
                rw.drop_features = irs
                    .keys()
                    .filter_map(|k| k.rsplit_once('/').map(|(_, v)| v.to_string()))
                    .collect();
                let sources: BTreeSet<String> = irs.values().flat_map(|ir| ir.spec_files.iter().cloned()).collect();
                let sources: Vec<String> = sources.into_iter().collect();
                // Not `armgen generate` here: the file is regenerated by the build script that asked for it.
                let header = crate::emit::header("//", &sources, None).replace(
                    "run `cargo run -p armgen -- generate`",
                    "regenerated by the build script",
                );
                let text = rewrite::single_file(&files, &header, &rw)?;
                // `Kind::crd()` includes its manifest from `crds/` beside the crate's `src/`; in one file, the
                // manifests are written beside that file and included from there.
                let text = text.replace("include_str!(\"../../../crds/", "include_str!(\"crds/");
                let text = text.replace("include_str!(\"../rules.json\")", "include_str!(\"rules.json\")");
                let mut out = BTreeMap::from([(PathBuf::from(name), text)]);
                // The manifests only: a single file has no kustomize layout to compose.
                let kustomization = crate::emit::crd::kustomization_path();
                out.extend(files.into_iter().filter(|(p, _)| {
                    (p.starts_with("crds") && *p != kustomization) || *p == Path::new(crate::rules::FILE)
                }));
                Ok(out)
            }
        }
    }
}

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

    /// Adds a derive (a path such as `Eq` or `schemars::JsonSchema`) to every generated struct and enum,
    /// where it is not derived already. The including crate must be able to derive it for every type (for
    /// example, `Eq` and `Hash` cannot be derived for types with `f64` fields).
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
    /// and SHA-256 (see [`crate::fetch`]). Files already there with the pinned hash are not fetched again; a
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
    /// `cargo:rerun-if-changed` for every input file read (see the [module docs](crate::buildrs)).
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
            cargo_instructions.push(format!("cargo:rerun-if-env-changed={}", crate::fetch::BASE_URL_ENV));
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
