//! The library entry point: [`Builder`] runs the whole pipeline, for the CLI and for `build.rs` scripts.
//!
//! ```no_run
//! let generation = armgen::Builder::new("azure-arm.yaml")
//!     .specs("../azure-rest-api-specs")
//!     .generate()
//!     .expect("generation");
//! generation.write("generated").expect("write");
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::Config;
use crate::discover::discover;
use crate::emit::{self, VersionOutput};
use crate::error::{Error, Result};
use crate::ir::Ir;
use crate::load::{Contain, SpecFile, SpecRoot, SpecSet};
use crate::passes;

pub use crate::generation::{Generation, Stale, Timings, VersionSummary};
pub use crate::spec_root::{DEFAULT_SPECS, SPECS_ENV};
pub use crate::stack::PIPELINE_STACK;
use crate::stack::on_big_stack;

/// Finds the spec root: `explicit` when given, else `$AZURE_REST_API_SPECS` when that is a directory, else
/// `<base>/specs/azure-rest-api-specs`. When none is found, the error names all three places and what each
/// held. (The search itself is [`crate::spec_root::search`], which the test crates' build scripts share.)
pub fn resolve_spec_root(explicit: Option<&Path>, base: &Path) -> Result<PathBuf> {
    crate::spec_root::search(explicit, base).map_err(|m| Error::SpecRootMissing {
        default: m.default,
        tried: m.tried.join("; "),
    })
}

/// Configures and runs a generation.
#[derive(Debug, Clone)]
pub struct Builder {
    config: PathBuf,
    pub(crate) specs: Option<PathBuf>,
    /// Selection, output and progress options (set by the methods in [`crate::buildrs`]).
    pub(crate) options: crate::options::Options,
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

    /// Runs the pipeline and returns the generated files without writing anything.
    ///
    /// The pipeline runs on a thread of its own with a large stack ([`PIPELINE_STACK`]): shaping and emitting
    /// recurse once per level of nesting of the spec's definitions, and a deep chain must not overflow the
    /// caller's stack (a test thread has 2 MiB). The stack is reserved, not used: pages are only touched as deep
    /// as the specs nest. When no thread can be started, the pipeline runs on the caller's thread.
    pub fn generate(&self) -> Result<Generation> {
        on_big_stack(|| self.generate_here())
    }

    /// The spec root: as [`resolve_spec_root`] finds it, or — with
    /// [`fetch_missing_specs`](Self::fetch_missing_specs), when neither `--specs` nor `$AZURE_REST_API_SPECS`
    /// is given — the default spec root, fetched or brought up to date from the pin (see [`crate::fetch`]).
    /// A default spec root armgen did not fetch is used as it is. The pin file becomes an input.
    fn spec_root(&self, base: &Path, inputs: &mut BTreeSet<PathBuf>) -> Result<PathBuf> {
        let found = resolve_spec_root(self.specs.as_deref(), base);
        let env_given = std::env::var_os(SPECS_ENV).is_some_and(|v| !v.is_empty());
        let Some((base_url, pin_file)) = self.options.fetch() else {
            return found;
        };
        if self.specs.is_some() || env_given {
            return found;
        }
        let default = base.join(DEFAULT_SPECS);
        match found {
            Ok(root) if !crate::fetch::is_managed(&root) => return Ok(root),
            Ok(_) | Err(Error::SpecRootMissing { .. }) => {}
            Err(e) => return Err(e),
        }
        let pin_file = pin_file.map_or_else(|| base.join(crate::fetch::PIN_FILE), Path::to_path_buf);
        let pin = match crate::fetch::Pin::load(&pin_file) {
            Err(Error::Io { path, source }) if source.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Invalid {
                    what: path.display().to_string(),
                    message: format!(
                        "no spec root was given and there is no pin file naming the spec files to fetch: pass                          --specs DIR, or set {SPECS_ENV}, or add the pin file"
                    ),
                });
            }
            other => other?,
        };
        let base_url = crate::fetch::BaseUrl::resolve(base_url)?;
        crate::fetch::sync(&pin, &default, &base_url, &mut |index, total, path| {
            self.options.report(crate::options::Progress::Fetch {
                index,
                total,
                path: path.to_string(),
            })
        })?;
        inputs.insert(pin_file);
        Ok(default)
    }

    fn generate_here(&self) -> Result<Generation> {
        let mut timings = Timings::default();
        let t = Instant::now();
        let config: Config = self.options.load_config(&self.config)?;
        let mut inputs: BTreeSet<PathBuf> = self.options.config_file(&self.config).into_iter().collect();
        let base = self.config.parent().map(Path::to_path_buf).unwrap_or_default();
        let spec_root = self.spec_root(&base, &mut inputs)?;
        timings.add("config", t.elapsed());

        let mut irs: BTreeMap<String, Ir> = BTreeMap::new();
        let mut kubes: BTreeMap<String, crate::kube::KubeIr> = BTreeMap::new();
        let mut meta = Vec::new();
        let mut summaries = Vec::new();
        let jail = SpecRoot::new(&spec_root)?;
        for (group_name, group) in &config.groups {
            // A spec folder must stay inside the spec root (every file read is checked again when loaded).
            if let Err(Contain::Outside(message)) = jail.contain(&spec_root.join(&group.spec_folder)) {
                return Err(Error::Config {
                    file: self.config.clone(),
                    key: format!("groups.{group_name}.specFolder"),
                    message: format!("{:?}: {message}", group.spec_folder.display().to_string()),
                });
            }
            let mut matched_overrides = BTreeSet::new();
            let mut matched_resources = BTreeSet::new();
            let kube_options = crate::kube::KubeOptions::of_group(group);
            let mut matched_kinds: BTreeSet<String> = BTreeSet::new();
            for (kube_version, version) in &group.versions {
                if !self.options.selects_version(group_name, kube_version) {
                    continue;
                }
                self.options.report(crate::options::Progress::Version {
                    name: format!("{group_name}/{kube_version}"),
                    api_version: version.arm_api_version.clone(),
                });
                let t = Instant::now();
                let files: Vec<SpecFile> = version
                    .spec_files
                    .iter()
                    .enumerate()
                    .map(|(i, f)| SpecFile {
                        path: group.spec_folder.join(f),
                        origin: Some((
                            self.config.clone(),
                            format!("groups.{group_name}.versions.{kube_version}.specFiles[{i}]"),
                        )),
                    })
                    .collect();
                let specs = SpecSet::load_with(&spec_root, &files, opaque_of(&spec_root, group))?;
                inputs.extend(specs.docs.keys().cloned());
                timings.add("load", t.elapsed());

                let t = Instant::now();
                let mut resources = select_resources(group, discover(&specs)?, &mut matched_resources);
                resources.retain(|r| self.options.selects_resource(&r.name, &r.arm_type));
                timings.add("discover", t.elapsed());

                let t = Instant::now();
                let mut ir = passes::lower::lower(&specs, &resources, &version.arm_api_version)?;
                for (key, sites) in specs.opaque_uses() {
                    let because = group
                        .overrides
                        .opaque_files
                        .iter()
                        .map(|(f, o)| (format!("overrides.opaqueFiles.{f}"), &o.because))
                        .chain(group.overrides.types.iter().filter_map(|(t, o)| {
                            o.opaque.as_ref().map(|o| (format!("overrides.types.{t}"), &o.because))
                        }))
                        .find(|(k, _)| *k == key)
                        .map(|(_, b)| b.clone())
                        .unwrap_or_default();
                    for site in sites {
                        ir.diagnostics.push(crate::ir::Diagnostic {
                            at: site,
                            message: format!("stands in as opaque JSON (groups.{group_name}.{key}): {because}"),
                        });
                    }
                    matched_overrides.insert(key);
                }
                timings.add("lower", t.elapsed());
                matched_overrides.extend(passes::run_all_timed(&mut ir, &group.overrides, &mut |pass, d| {
                    timings.add(pass, d)
                }));
                summaries.push(VersionSummary {
                    group: group_name.clone(),
                    kube_version: kube_version.clone(),
                    api_version: version.arm_api_version.clone(),
                    resources: ir.resources.iter().map(|r| r.kind.clone()).collect(),
                    types: ir.types.len(),
                    diagnostics: ir.diagnostics.len(),
                });
                let key = format!("{group_name}/{kube_version}");
                let is_hub = group.hub() == Some(kube_version.as_str());
                meta.push((
                    key.clone(),
                    group_name.clone(),
                    group.provider.clone(),
                    kube_version.clone(),
                    is_hub,
                    &version.renames,
                ));
                let t = Instant::now();
                matched_kinds.extend(
                    crate::kube::check_config(&ir, &kube_options).map_err(|p| Error::Config {
                        file: self.config.clone(),
                        key: format!("groups.{group_name}.{}", p.key),
                        message: p.message,
                    })?,
                );
                crate::diff::check_config(&ir, &group.overrides).map_err(|p| Error::Config {
                    file: self.config.clone(),
                    key: format!("groups.{group_name}.{}", p.key),
                    message: p.message,
                })?;
                let mut shaped = crate::kube::shape_with(
                    &ir,
                    &group.kube_group(group_name, &config.output.api_domain),
                    kube_version,
                    is_hub,
                    &kube_options,
                );
                shaped.served = version.served;
                timings.add("kube", t.elapsed());
                kubes.insert(key.clone(), shaped);
                irs.insert(key, ir);
            }
            let stale_key = |key: &str| Error::Config {
                file: self.config.clone(),
                key: format!("groups.{group_name}.{key}"),
                message: "matches nothing in any version of the specs; remove or fix it".into(),
            };
            for file in group.overrides.opaque_files.keys() {
                let key = format!("overrides.opaqueFiles.{file}");
                if !matched_overrides.contains(&key) && !self.options.is_filtered() {
                    return Err(stale_key(&key));
                }
            }
            for key in passes::overrides::declared(&group.overrides) {
                if !matched_overrides.contains(&key) && !self.options.is_filtered() {
                    return Err(stale_key(&key));
                }
            }
            for arm_type in group.resources.include.iter().chain(&group.resources.exclude) {
                let list = if group.resources.include.contains(arm_type) {
                    "include"
                } else {
                    "exclude"
                };
                let key = format!("resources.{list}.{arm_type}");
                if !matched_resources.contains(&key) && !self.options.is_filtered() {
                    return Err(stale_key(&key));
                }
            }
            for kind in group.kubernetes.resources.keys() {
                if !matched_kinds.contains(kind) && !self.options.is_filtered() {
                    return Err(Error::Config {
                        file: self.config.clone(),
                        key: format!("groups.{group_name}.kubernetes.resources.{kind}"),
                        message: "no version of the specs has this kind; remove or fix it".into(),
                    });
                }
            }
            for arm_type in group.resources.rename.keys() {
                let key = format!("resources.rename.{arm_type}");
                if !matched_resources.contains(&key) && !self.options.is_filtered() {
                    return Err(stale_key(&key));
                }
            }
        }

        self.options.check_selection(&irs)?;
        self.options.report(crate::options::Progress::Emit);
        let t = Instant::now();
        let outputs: Vec<VersionOutput<'_>> = meta
            .iter()
            .filter_map(|(key, group, provider, kube, storage, renames)| {
                irs.get(key).map(|ir| VersionOutput {
                    group,
                    provider,
                    kube_version: kube,
                    storage: *storage,
                    renames,
                    ir,
                    kube: kubes.get(key).filter(|_| self.options.kubernetes()),
                })
            })
            .collect();
        let description = config
            .output
            .description
            .clone()
            .unwrap_or_else(|| "Generated Rust types for Azure Resource Manager APIs".to_string());
        let mut files = emit::crate_files(&config.output.crate_name, &description, &outputs)?;
        files.insert(PathBuf::from("REPORT.md"), emit::report(&outputs));
        let mut fitted = Vec::new();
        if self.options.kubernetes() {
            files.insert(
                PathBuf::from(crate::rules::FILE),
                crate::rules::document(&config, &self.config, &outputs)?,
            );
            let (crds, fits) = crd_files(&config.output.crate_name, &kubes, &irs)?;
            files.extend(crds);
            fitted = fits;
        }
        timings.add("emit", t.elapsed());
        let t = Instant::now();
        files.extend(crate::structure::files(&outputs)?);
        timings.add("structure", t.elapsed());
        drop(outputs);
        let t = Instant::now();
        let files = self.options.finish(files, &irs)?;
        timings.add("options", t.elapsed());
        Ok(Generation {
            files,
            versions: summaries,
            irs,
            inputs,
            kubes,
            timings,
            spec_root,
            fitted,
        })
    }
}

/// The CRD manifests (`crds/<plural>.<group>.yaml`, `crds/kustomization.yaml`) and, from the same CRDs, the RBAC
/// of the reconciled kinds (`rbac/`, the role named after `crate_name`); with how each manifest that was over its
/// size budget was made to fit.
fn crd_files(
    crate_name: &str,
    kubes: &BTreeMap<String, crate::kube::KubeIr>,
    irs: &BTreeMap<String, Ir>,
) -> Result<(BTreeMap<PathBuf, String>, Vec<emit::fit::Fitted>)> {
    let crds = emit::crd::manifests(kubes, irs);
    let mut files = emit::crd::manifest_files(&crds)?;
    files.extend(emit::rbac::files(crate_name, &crds));
    Ok((files, crds.iter().filter_map(|c| c.fitted.clone()).collect()))
}

/// The opaque entries of `group` (its `overrides.opaqueFiles` and `overrides.types.X.opaque`), keyed as the
/// loader looks them up; each value is the entry's config key (relative to the group) and reason.
fn opaque_of(spec_root: &Path, group: &crate::config::GroupConfig) -> crate::load::Opaque {
    let root = crate::load::normalize(spec_root);
    crate::load::Opaque {
        files: group
            .overrides
            .opaque_files
            .iter()
            .map(|(file, o)| {
                (
                    crate::load::normalize(&root.join(&group.spec_folder).join(file)),
                    (format!("overrides.opaqueFiles.{file}"), o.because.clone()),
                )
            })
            .collect(),
        definitions: group
            .overrides
            .types
            .iter()
            .filter_map(|(name, o)| {
                o.opaque
                    .as_ref()
                    .map(|op| (name.clone(), (format!("overrides.types.{name}"), op.because.clone())))
            })
            .collect(),
    }
}

/// The resources of a version that the group's `resources` selection keeps (`include`, `exclude`), renamed
/// (`rename`); the config keys that matched are added to `matched`.
pub fn select_resources(
    group: &crate::config::GroupConfig,
    mut resources: Vec<crate::discover::DiscoveredResource>,
    matched: &mut BTreeSet<String>,
) -> Vec<crate::discover::DiscoveredResource> {
    let selection = &group.resources;
    resources.retain(|r| {
        let included = selection.include.is_empty() || selection.include.contains(&r.arm_type);
        if included && !selection.include.is_empty() {
            matched.insert(format!("resources.include.{}", r.arm_type));
        }
        let excluded = selection.exclude.contains(&r.arm_type);
        if excluded {
            matched.insert(format!("resources.exclude.{}", r.arm_type));
        }
        included && !excluded
    });
    for r in &mut resources {
        if let Some(kind) = selection.rename.get(&r.arm_type) {
            matched.insert(format!("resources.rename.{}", r.arm_type));
            r.name = kind.clone();
        }
    }
    resources
}

/// The specs and resources of one configured version as generation sees them — its spec files loaded with the
/// group's opaque entries, its resources discovered and selected — for tools and tests that walk the specs (the
/// example round trips) without generating.
pub fn load_version(
    spec_root: &Path,
    group: &crate::config::GroupConfig,
    version: &crate::config::VersionConfig,
) -> Result<(SpecSet, Vec<crate::discover::DiscoveredResource>)> {
    let files: Vec<SpecFile> = version
        .spec_files
        .iter()
        .map(|f| SpecFile {
            path: group.spec_folder.join(f),
            origin: None,
        })
        .collect();
    let specs = SpecSet::load_with(spec_root, &files, opaque_of(spec_root, group))?;
    let resources = select_resources(group, discover(&specs)?, &mut BTreeSet::new());
    Ok((specs, resources))
}
