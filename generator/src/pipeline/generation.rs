//! What a generation produces, in memory: [`Generation`] (the files, and the IR, Kubernetes shape and summary
//! of every version, the inputs read, the stage [`Timings`], the CRDs fitted to their budget), and what comparing it
//! with an output folder finds ([`Stale`]); [`Generation::write`] and [`Generation::check`] apply it to one. A leaf
//! of the pipeline: it names no stage, so every stage and every consumer (`buildrs`, `emit::crd`, `apidiff`) can
//! use it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::ir::Ir;

/// How long each stage took.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    pub stages: Vec<(&'static str, Duration)>,
}

impl Timings {
    /// Adds `d` to `stage`'s time (a stage that runs once per version adds up).
    pub(crate) fn add(&mut self, stage: &'static str, d: Duration) {
        match self.stages.iter_mut().find(|(s, _)| *s == stage) {
            Some((_, total)) => *total += d,
            None => self.stages.push((stage, d)),
        }
    }
}

/// What one version produced, for the summary.
#[derive(Debug, Clone)]
pub struct VersionSummary {
    pub group: String,
    pub kube_version: String,
    pub api_version: String,
    pub resources: Vec<String>,
    pub types: usize,
    pub diagnostics: usize,
}

/// The result of a generation, in memory.
#[derive(Debug, Clone)]
pub struct Generation {
    /// Relative path → contents.
    pub files: BTreeMap<PathBuf, String>,
    /// By `group/version`, the folder in `files` of the version's module tree (its `mod.rs`): `src/<group>/<version>`,
    /// or `crates/<group>-<version>/src` with `output.versionCrates`. Empty in the single-file form.
    pub version_dirs: BTreeMap<String, PathBuf>,
    pub versions: Vec<VersionSummary>,
    /// The IR of each version, by `group/version`.
    pub irs: BTreeMap<String, Ir>,
    /// Every file read: the config file and every spec document (for `cargo:rerun-if-changed`).
    pub inputs: BTreeSet<PathBuf>,
    /// The Kubernetes shape of every version, by `group/version`.
    pub kubes: BTreeMap<String, crate::shape::KubeIr>,
    pub timings: Timings,
    pub spec_root: PathBuf,
    /// The CRD manifests that were over their size budget, and what was trimmed to fit them (each is also a
    /// `# Note:` in the manifest's header); `armgen generate` prints them as warnings.
    pub fitted: Vec<crate::emit::fit::Fitted>,
}

/// A file in the output folder that differs from what generation writes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stale {
    Missing(PathBuf),
    Modified(PathBuf),
    /// In the output folder, but generation does not write it.
    Extra(PathBuf),
}

impl std::fmt::Display for Stale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stale::Missing(p) => write!(f, "missing:  {}", p.display()),
            Stale::Modified(p) => write!(f, "modified: {}", p.display()),
            Stale::Extra(p) => write!(f, "extra:    {}", p.display()),
        }
    }
}

impl Generation {
    /// Writes the files under `out`, touching only files whose contents change, and removes files under
    /// `out` that generation no longer writes. Returns the paths written and removed.
    pub fn write(&self, out: impl AsRef<Path>) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
        let out = out.as_ref();
        let mut written = Vec::new();
        let mut removed = Vec::new();
        for stale in self.check(out)? {
            match stale {
                Stale::Missing(p) | Stale::Modified(p) => {
                    let full = out.join(&p);
                    if let Some(dir) = full.parent() {
                        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
                    }
                    let contents = self.files.get(&p).map(String::as_str).unwrap_or_default();
                    std::fs::write(&full, contents).map_err(|e| Error::io(&full, e))?;
                    written.push(p);
                }
                Stale::Extra(p) => {
                    let full = out.join(&p);
                    std::fs::remove_file(&full).map_err(|e| Error::io(&full, e))?;
                    removed.push(p);
                }
            }
        }
        remove_empty_dirs(out);
        Ok((written, removed))
    }

    /// Compares `out` with what generation writes; an empty list means up to date.
    pub fn check(&self, out: impl AsRef<Path>) -> Result<Vec<Stale>> {
        let out = out.as_ref();
        let mut stale = Vec::new();
        for (path, contents) in &self.files {
            let full = out.join(path);
            match std::fs::read(&full) {
                Ok(on_disk) if on_disk == contents.as_bytes() => {}
                Ok(_) => stale.push(Stale::Modified(path.clone())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => stale.push(Stale::Missing(path.clone())),
                Err(e) => return Err(Error::io(full, e)),
            }
        }
        let on_disk = list_files(out)?;
        for p in on_disk {
            if !self.files.contains_key(&p) {
                stale.push(Stale::Extra(p));
            }
        }
        stale.sort();
        Ok(stale)
    }

    /// Lines of generated Rust code.
    pub fn rust_lines(&self) -> usize {
        self.files
            .iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "rs"))
            .map(|(_, c)| c.lines().count())
            .sum()
    }
}

/// Every file under `dir`, relative to it; a missing `dir` has none.
fn list_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io(&d, e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&d, e))?;
            let path = entry.path();
            let ft = entry.file_type().map_err(|e| Error::io(&path, e))?;
            if ft.is_dir() {
                stack.push(path);
            } else if let Ok(rel) = path.strip_prefix(dir) {
                out.push(rel.to_path_buf());
            }
        }
    }
    out.sort();
    Ok(out)
}

fn remove_empty_dirs(dir: &Path) {
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let p = entry.path();
            if p.is_dir() {
                remove_empty_dirs(&p);
                let _ = std::fs::remove_dir(&p);
            }
        }
    }
}
