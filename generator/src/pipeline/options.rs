//! What [`Builder`](crate::Builder) is told beyond the config file and spec root: the [`Options`] (selection,
//! output form, rewrites, fetching, progress), and the [`Progress`] events it reports. The stages of
//! the [`pipeline`](crate::pipeline) read them; the [`Builder`](crate::Builder) methods that set them are in
//! [`buildrs`](crate::pipeline::buildrs). A leaf of the pipeline: it names neither.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::ir::Ir;
use crate::pipeline::rewrite::{self, RustRewrite};

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
    /// begins (only with [`Builder::fetch_missing_specs`](crate::Builder::fetch_missing_specs)). `path` is the
    /// file as the pin names it. Without a progress callback, these are printed on stderr as `fetching 3/8 <path>`.
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
pub struct ProgressFn(pub(crate) Option<Arc<ProgressCallback>>);

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

/// The options [`Builder`](crate::Builder) has beyond the config file and spec root.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub(crate) config: Option<Config>,
    pub(crate) versions: Option<BTreeSet<String>>,
    pub(crate) resources: Option<BTreeSet<String>>,
    pub(crate) strip_docs: bool,
    pub(crate) arm_only: bool,
    pub(crate) derives: Vec<(Option<String>, String)>,
    pub(crate) layout: Layout,
    pub(crate) out_dir: Option<PathBuf>,
    pub(crate) quiet: bool,
    pub(crate) progress: ProgressFn,
    pub(crate) fetch: bool,
    pub(crate) spec_base_url: Option<String>,
    pub(crate) spec_pin: Option<PathBuf>,
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
                    (p.starts_with("crds") && *p != kustomization) || *p == Path::new(crate::emit::rules::FILE)
                }));
                Ok(out)
            }
        }
    }
}
