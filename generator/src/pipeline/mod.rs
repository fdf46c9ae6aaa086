//! The pipeline of a generation: its stages, in the order they run, each a function of this module named as the
//! stage, and `run`, the sequence that runs them. Each stage is timed under its name in [`Timings`] (what
//! `armgen generate --verbose` prints; a stage that runs once per version adds up over the versions):
//!
//! 1. `config`: the config, and the spec root (fetched when asked) — once;
//! 2. for each group, in config order, its spec folder is checked to be inside the spec root, then for each of its
//!    selected versions, in order (`version`):
//!    - `load`: the version's spec files and every file they `$ref`;
//!    - `discover`: its resources, as the config and the options select them;
//!    - `lower`: schemas → IR;
//!    - the passes (`passes`), each timed under its own name: `overrides`, `allof`, `unions`, `prune`,
//!      `enums`, `names`, `recursion`, `layout`;
//!    - `kube`: the Kubernetes shape;
//!
//!    and, the group's versions done, its config entries that matched nothing are errors (`stale_config`);
//! 3. the options' selection is checked to name only what exists;
//! 4. `emit`: the crate, `REPORT.md`, `rules.json`, the CRDs and the RBAC — once, over every version;
//! 5. `structure`: the API structure of every version (`api/<group>-<version>.txt`);
//! 6. `options`: the output options (rewrites, the single-file layout).
//!
//! A stage reads the `Request` and what the stages before it produced; the modules that do the work (`load`,
//! `discover`, `passes`, `shape`, `emit`, `report::structure`) know nothing of the pipeline.
//! [`Builder`](crate::Builder) runs it on a thread with a big stack.
//!
//! Beside the stages, what drives them: [`builder`] ([`Builder`](crate::Builder), the entry point), [`buildrs`]
//! (its methods for `build.rs` scripts), `options` (what it is told), `generation` (what it returns, a
//! [`Generation`]), `stack` (the pipeline's thread) and [`rewrite`] (the output rewrites).

pub mod builder;
pub mod buildrs;
pub(crate) mod generation;
pub(crate) mod options;
pub mod rewrite;
pub(crate) mod stack;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::config::{Config, GroupConfig, VersionConfig};
use crate::discover::DiscoveredResource;
use crate::emit::VersionOutput;
use crate::error::{Error, Result};
use crate::ir::Ir;
use crate::load::spec_root::{DEFAULT_SPECS, SPECS_ENV};
use crate::load::{Contain, SpecFile, SpecRoot, SpecSet};
use crate::pipeline::generation::{Generation, Timings, VersionSummary};
use crate::pipeline::options::{Layout, Options, Progress};
use crate::shape::{KubeIr, KubeOptions};

/// What a generation is asked for: the config file (its folder is the base of the default spec root), the spec
/// root when one is named, and the [`Options`].
pub(crate) struct Request<'a> {
    pub(crate) config: &'a Path,
    pub(crate) specs: Option<&'a Path>,
    pub(crate) options: &'a Options,
}

/// Runs the stages in order (see the [module documentation](self)), timing each.
pub(crate) fn run(request: &Request<'_>) -> Result<Generation> {
    let mut timings = Timings::default();
    let Setup {
        config,
        inputs,
        spec_root,
    } = timed(&mut timings, "config", || self::config(request))?;
    let jail = SpecRoot::new(&spec_root)?;
    let mut produced = Produced {
        inputs,
        ..Produced::default()
    };
    for (name, group) in &config.groups {
        let group = Group::new(request, &config, &spec_root, name, group);
        spec_folder_inside(&group, &jail)?;
        let mut matched = Matched::default();
        for (kube_version, version) in &group.config.versions {
            if request.options.selects_version(name, kube_version) {
                self::version(&group, kube_version, version, &mut matched, &mut timings, &mut produced)?;
            }
        }
        stale_config(&group, &matched)?;
    }
    request.options.check_selection(&produced.irs)?;
    request.options.report(Progress::Emit);
    let outputs = produced.outputs(request.options.kubernetes());
    let (mut files, fitted) = timed(&mut timings, "emit", || emit(request, &config, &outputs, &produced))?;
    timed(&mut timings, "structure", || structure(&mut files, &outputs))?;
    drop(outputs);
    let files = timed(&mut timings, "options", || options(request, files, &produced.irs))?;
    let version_dirs = match request.options.layout {
        Layout::Crate => {
            let layout = crate_layout(request, &config);
            produced
                .irs
                .keys()
                .filter_map(|key| key.split_once('/'))
                .map(|(g, v)| (format!("{g}/{v}"), PathBuf::from(layout.version_dir(g, v))))
                .collect()
        }
        Layout::SingleFile(_) => BTreeMap::new(),
    };
    Ok(Generation {
        files,
        version_dirs,
        versions: produced.summaries,
        irs: produced.irs,
        inputs: produced.inputs,
        kubes: produced.kubes,
        timings,
        spec_root,
        fitted,
    })
}

/// The stages of one version of a group, in order: `load`, `discover`, `lower`, the passes, `kube`; what they
/// produce is added to `produced`, the config keys that matched to `matched`.
fn version<'c>(
    group: &Group<'c>,
    kube_version: &'c str,
    version: &'c VersionConfig,
    matched: &mut Matched,
    timings: &mut Timings,
    produced: &mut Produced<'c>,
) -> Result<()> {
    group.request.options.report(Progress::Version {
        name: format!("{}/{kube_version}", group.name),
        api_version: version.arm_api_version.clone(),
    });
    let specs = timed(timings, "load", || {
        load(group, kube_version, version, &mut produced.inputs)
    })?;
    let resources = timed(timings, "discover", || discover(group, &specs, matched))?;
    let mut ir = timed(timings, "lower", || {
        lower(group, &specs, &resources, version, &mut matched.overrides)
    })?;
    passes(group, &mut ir, &mut matched.overrides, timings);
    let place = Place {
        key: format!("{}/{kube_version}", group.name),
        group: group.name,
        provider: &group.config.provider,
        kube_version,
        storage: group.config.hub() == Some(kube_version),
        renames: &version.renames,
    };
    let kube = timed(timings, "kube", || {
        self::kube(group, &ir, &place, version, &mut matched.kinds)
    })?;
    produced.add(place, version, ir, kube);
    Ok(())
}

/// Runs `stage`, adding the time it took to `name`'s in `timings`.
fn timed<T>(timings: &mut Timings, name: &'static str, stage: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = stage();
    timings.add(name, start.elapsed());
    out
}

/// What the `config` stage gives the others.
struct Setup {
    config: Config,
    /// The files read so far: the config file and the pin file (when read from files).
    inputs: BTreeSet<PathBuf>,
    spec_root: PathBuf,
}

/// One configured group, as its stages read it.
struct Group<'c> {
    request: &'c Request<'c>,
    spec_root: &'c Path,
    name: &'c str,
    config: &'c GroupConfig,
    /// The group's Kubernetes API group (`kubernetesGroup`, else `<name>.<apiDomain>`).
    kube_group: String,
    kube_options: KubeOptions,
}

impl<'c> Group<'c> {
    fn new(
        request: &'c Request<'c>,
        config: &'c Config,
        spec_root: &'c Path,
        name: &'c str,
        group: &'c GroupConfig,
    ) -> Self {
        Group {
            request,
            spec_root,
            name,
            config: group,
            kube_group: group.kube_group(name, &config.output.api_domain),
            kube_options: KubeOptions::of_group(group),
        }
    }

    /// A config error at `groups.<name>.<key>` of the config file.
    fn error(&self, key: &str, message: String) -> Error {
        Error::Config {
            file: self.request.config.to_path_buf(),
            key: format!("groups.{}.{key}", self.name),
            message,
        }
    }
}

/// The config keys of one group that matched something in one of its versions, for [`stale_config`].
#[derive(Default)]
struct Matched {
    /// `overrides.…`: the opaque entries that stood in, and the overrides the passes applied.
    overrides: BTreeSet<String>,
    /// `resources.include.…`, `resources.exclude.…`, `resources.rename.…`.
    resources: BTreeSet<String>,
    /// The kinds of `kubernetes.resources`.
    kinds: BTreeSet<String>,
    /// Nested actions no config entry excludes: config key → message, an error once the config's kinds are known
    /// to exist (a misspelt kind is the error to report first).
    nested: BTreeMap<String, String>,
}

/// Where a version sits in the generated crate.
struct Place<'c> {
    /// `group/version`.
    key: String,
    group: &'c str,
    provider: &'c str,
    kube_version: &'c str,
    /// Whether it is the group's storage (hub) version.
    storage: bool,
    renames: &'c BTreeMap<String, String>,
}

/// What the stages have produced so far: the files read, and each version's IR, Kubernetes shape, place and
/// summary (by `group/version`; places and summaries in the order the versions ran).
#[derive(Default)]
struct Produced<'c> {
    inputs: BTreeSet<PathBuf>,
    irs: BTreeMap<String, Ir>,
    kubes: BTreeMap<String, KubeIr>,
    places: Vec<Place<'c>>,
    summaries: Vec<VersionSummary>,
}

impl<'c> Produced<'c> {
    /// Adds what one version's stages produced.
    fn add(&mut self, place: Place<'c>, version: &VersionConfig, ir: Ir, kube: KubeIr) {
        self.summaries.push(VersionSummary {
            group: place.group.to_string(),
            kube_version: place.kube_version.to_string(),
            api_version: version.arm_api_version.clone(),
            resources: ir.resources.iter().map(|r| r.kind.clone()).collect(),
            types: ir.types.len(),
            diagnostics: ir.diagnostics.len(),
        });
        self.kubes.insert(place.key.clone(), kube);
        self.irs.insert(place.key.clone(), ir);
        self.places.push(place);
    }

    /// What the emitters read of each version, in the order the versions ran; the Kubernetes shapes only when
    /// the custom resources are generated (`kubernetes`).
    fn outputs(&self, kubernetes: bool) -> Vec<VersionOutput<'_>> {
        self.places
            .iter()
            .filter_map(|p| {
                self.irs.get(&p.key).map(|ir| VersionOutput {
                    group: p.group,
                    provider: p.provider,
                    kube_version: p.kube_version,
                    storage: p.storage,
                    renames: p.renames,
                    ir,
                    kube: self.kubes.get(&p.key).filter(|_| kubernetes),
                })
            })
            .collect()
    }
}

/// Stage **config**: the config (the file, or the one given in code, validated) and the spec root
/// ([`spec_root`]); the config file, when there is one, is the first input.
fn config(request: &Request<'_>) -> Result<Setup> {
    let config = request.options.load_config(request.config)?;
    let mut inputs: BTreeSet<PathBuf> = request.options.config_file(request.config).into_iter().collect();
    let base = request.config.parent().map(Path::to_path_buf).unwrap_or_default();
    let spec_root = spec_root(request, &base, &mut inputs)?;
    Ok(Setup {
        config,
        inputs,
        spec_root,
    })
}

/// Finds the spec root: `explicit` when given, else `$AZURE_REST_API_SPECS` when that is a directory, else
/// `<base>/specs/azure-rest-api-specs`. When none is found, the error names all three places and what each
/// held. (The search itself is [`crate::load::spec_root::search`], which the test crates' build scripts share.)
pub fn resolve_spec_root(explicit: Option<&Path>, base: &Path) -> Result<PathBuf> {
    crate::load::spec_root::search(explicit, base).map_err(|m| Error::SpecRootMissing {
        default: m.default,
        tried: m.tried.join("; "),
    })
}

/// The spec root: as [`resolve_spec_root`] finds it, or — with
/// [`fetch_missing_specs`](crate::Builder::fetch_missing_specs), when neither `--specs` nor `$AZURE_REST_API_SPECS`
/// is given — the default spec root, fetched or brought up to date from the pin (see [`crate::load::fetch`]).
/// A default spec root armgen did not fetch is used as it is. The pin file becomes an input.
fn spec_root(request: &Request<'_>, base: &Path, inputs: &mut BTreeSet<PathBuf>) -> Result<PathBuf> {
    let found = resolve_spec_root(request.specs, base);
    let env_given = std::env::var_os(SPECS_ENV).is_some_and(|v| !v.is_empty());
    let Some((base_url, pin_file)) = request.options.fetch() else {
        return found;
    };
    if request.specs.is_some() || env_given {
        return found;
    }
    let default = base.join(DEFAULT_SPECS);
    match found {
        Ok(root) if !crate::load::fetch::is_managed(&root) => return Ok(root),
        Ok(_) | Err(Error::SpecRootMissing { .. }) => {}
        Err(e) => return Err(e),
    }
    let pin_file = pin_file.map_or_else(|| base.join(crate::load::fetch::PIN_FILE), Path::to_path_buf);
    let pin = match crate::load::fetch::Pin::load(&pin_file) {
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
    let base_url = crate::load::fetch::BaseUrl::resolve(base_url)?;
    crate::load::fetch::sync(&pin, &default, &base_url, &mut |index, total, path| {
        request.options.report(Progress::Fetch {
            index,
            total,
            path: path.to_string(),
        })
    })?;
    inputs.insert(pin_file);
    Ok(default)
}

/// A group's spec folder must stay inside the spec root (every file read is checked again when loaded).
fn spec_folder_inside(group: &Group<'_>, jail: &SpecRoot) -> Result<()> {
    let folder = &group.config.spec_folder;
    if let Err(Contain::Outside(message)) = jail.contain(&group.spec_root.join(folder)) {
        return Err(group.error("specFolder", format!("{:?}: {message}", folder.display().to_string())));
    }
    Ok(())
}

/// Stage **load**: the version's spec files (each with the config key that names it, for errors) and every
/// file they `$ref`, with the group's opaque entries standing in as opaque JSON ([`opaque_of`]); every document
/// read becomes an input.
fn load(
    group: &Group<'_>,
    kube_version: &str,
    version: &VersionConfig,
    inputs: &mut BTreeSet<PathBuf>,
) -> Result<SpecSet> {
    let files: Vec<SpecFile> = version
        .spec_files
        .iter()
        .enumerate()
        .map(|(i, f)| SpecFile {
            path: group.config.spec_folder.join(f),
            origin: Some((
                group.request.config.to_path_buf(),
                format!("groups.{}.versions.{kube_version}.specFiles[{i}]", group.name),
            )),
        })
        .collect();
    let specs = SpecSet::load_with(group.spec_root, &files, opaque_of(group.spec_root, group.config))?;
    inputs.extend(specs.docs.keys().cloned());
    Ok(specs)
}

/// Stage **discover**: every ARM PUT path of the specs is a resource; the group's `resources` selection keeps
/// and renames them ([`select_resources`], the keys that matched added to `matched`), then the options'.
fn discover(group: &Group<'_>, specs: &SpecSet, matched: &mut Matched) -> Result<Vec<DiscoveredResource>> {
    let mut resources = select_resources(group.config, crate::discover::discover(specs)?, &mut matched.resources);
    resources.retain(|r| group.request.options.selects_resource(&r.name, &r.arm_type));
    for r in &mut resources {
        select_actions(group, r, matched);
        select_views(group, r, matched);
    }
    Ok(resources)
}

/// The views of `r`: the GETs `kubernetes.resources.<Kind>.views.read` names get their status field, those
/// `views.exclude` names are marked; the rest are reported by the lower stage (a diagnostic in `REPORT.md`).
fn select_views(group: &Group<'_>, r: &mut DiscoveredResource, matched: &mut Matched) {
    let Some(config) = group.config.kubernetes.resources.get(&r.name) else {
        return;
    };
    for v in &mut r.views {
        if config.views.exclude.contains_key(&v.name) {
            matched
                .resources
                .insert(format!("kubernetes.resources.{}.views.exclude.{}", r.name, v.name));
            v.excluded = true;
        }
        if let Some((field, _)) = config.views.read.iter().find(|(_, path)| **path == v.name) {
            matched
                .resources
                .insert(format!("kubernetes.resources.{}.views.read.{field}", r.name));
            v.field = Some(field.clone());
            v.refresh_seconds = config
                .views
                .refresh_seconds
                .unwrap_or(crate::config::DEFAULT_VIEW_REFRESH_SECONDS);
        }
    }
}

/// The actions of `r` that become action kinds: all but those `kubernetes.resources.<Kind>.actions.exclude`
/// names, renamed as `actions.rename` says. An action nested deeper under the resource (a path parameter of its
/// own) cannot be an action kind: it must be excluded, else it is an error naming the config key to add
/// ([`stale_config`] reports it).
fn select_actions(group: &Group<'_>, r: &mut DiscoveredResource, matched: &mut Matched) {
    let config = group.config.kubernetes.resources.get(&r.name);
    let key = |list: &str, action: &str| format!("kubernetes.resources.{}.actions.{list}.{action}", r.name);
    for a in &mut r.actions {
        if config.is_some_and(|c| c.actions.exclude.contains_key(&a.name)) {
            matched.resources.insert(key("exclude", &a.name));
            a.excluded = true;
            continue;
        }
        if a.nested {
            matched.nested.insert(
                key("exclude", &a.name),
                format!(
                    "POST {} is nested under {} (a path of its own below the resource): it cannot be an action kind; \
                     exclude it, saying why",
                    a.path, r.arm_type
                ),
            );
        }
        if config.is_some_and(|c| c.actions.ungated.contains_key(&a.name)) {
            matched.resources.insert(key("ungated", &a.name));
        }
        if let Some(name) = config.and_then(|c| c.actions.rename.get(&a.name)) {
            matched.resources.insert(key("rename", &a.name));
            a.kind = Some(name.clone());
        }
    }
}

/// Stage **lower**: the schemas of the resources → IR ([`crate::passes::lower`]). Each site an opaque entry
/// stood in for gets a diagnostic with the entry's reason, and the entry's key is added to `matched`.
fn lower(
    group: &Group<'_>,
    specs: &SpecSet,
    resources: &[DiscoveredResource],
    version: &VersionConfig,
    matched: &mut BTreeSet<String>,
) -> Result<Ir> {
    let mut ir = crate::passes::lower::lower(specs, resources, &version.arm_api_version)?;
    let overrides = &group.config.overrides;
    for (key, sites) in specs.opaque_uses() {
        let because = overrides
            .opaque_files
            .iter()
            .map(|(f, o)| (format!("overrides.opaqueFiles.{f}"), &o.because))
            .chain(
                overrides
                    .types
                    .iter()
                    .filter_map(|(t, o)| o.opaque.as_ref().map(|o| (format!("overrides.types.{t}"), &o.because))),
            )
            .find(|(k, _)| *k == key)
            .map(|(_, b)| b.clone())
            .unwrap_or_default();
        for site in sites {
            ir.diagnostics.push(crate::ir::Diagnostic {
                at: site,
                message: format!("stands in as opaque JSON (groups.{}.{key}): {because}", group.name),
            });
        }
        matched.insert(key);
    }
    Ok(ir)
}

/// The passes after `lower`, in order ([`crate::passes::run_all_timed`]), each timed under its own name; the
/// override keys that matched are added to `matched`.
fn passes(group: &Group<'_>, ir: &mut Ir, matched: &mut BTreeSet<String>, timings: &mut Timings) {
    matched.extend(crate::passes::run_all_timed(
        ir,
        &group.config.overrides,
        &mut |pass, d| timings.add(pass, d),
    ));
}

/// Stage **kube**: the group's `kubernetes.resources` entries and diff overrides are checked against the IR (the
/// kinds that matched added to `matched`), then the version is shaped as Kubernetes custom resources
/// ([`crate::shape::shape_with`]).
fn kube(
    group: &Group<'_>,
    ir: &Ir,
    place: &Place<'_>,
    version: &VersionConfig,
    matched: &mut BTreeSet<String>,
) -> Result<KubeIr> {
    let problem = |p: crate::shape::ConfigProblem| group.error(&p.key, p.message);
    matched.extend(crate::shape::check_config(ir, &group.kube_options).map_err(problem)?);
    crate::config::diff_rules::check_config(ir, &group.config.overrides).map_err(problem)?;
    let mut shaped = crate::shape::shape_with(
        ir,
        &group.kube_group,
        place.kube_version,
        place.storage,
        &group.kube_options,
    );
    shaped.served = version.served;
    Ok(shaped)
}

/// A group's config entries that matched nothing in any of its versions are errors naming the entry (unless the
/// options select versions or resources: then an entry may match only what is left out). In order: the opaque
/// files, the overrides, the `resources` selection, the `kubernetes.resources` kinds, the `resources` renames.
fn stale_config(group: &Group<'_>, matched: &Matched) -> Result<()> {
    let nested = || match matched.nested.iter().next() {
        Some((key, message)) => Err(group.error(key, message.clone())),
        None => Ok(()),
    };
    if group.request.options.is_filtered() {
        return nested();
    }
    let stale = |key: &str| -> Result<()> {
        Err(group.error(
            key,
            "matches nothing in any version of the specs; remove or fix it".into(),
        ))
    };
    let config = group.config;
    for file in config.overrides.opaque_files.keys() {
        let key = format!("overrides.opaqueFiles.{file}");
        if !matched.overrides.contains(&key) {
            return stale(&key);
        }
    }
    for key in crate::passes::overrides::declared(&config.overrides) {
        if !matched.overrides.contains(&key) {
            return stale(&key);
        }
    }
    let selection = &config.resources;
    for arm_type in selection.include.iter().chain(&selection.exclude) {
        let list = if selection.include.contains(arm_type) {
            "include"
        } else {
            "exclude"
        };
        let key = format!("resources.{list}.{arm_type}");
        if !matched.resources.contains(&key) {
            return stale(&key);
        }
    }
    for kind in config.kubernetes.resources.keys() {
        if !matched.kinds.contains(kind) {
            return Err(group.error(
                &format!("kubernetes.resources.{kind}"),
                "no version of the specs has this kind; remove or fix it".into(),
            ));
        }
    }
    for arm_type in selection.rename.keys() {
        let key = format!("resources.rename.{arm_type}");
        if !matched.resources.contains(&key) {
            return stale(&key);
        }
    }
    nested()?;
    for (kind, rc) in &config.kubernetes.resources {
        let lists = [
            ("exclude", rc.actions.exclude.keys()),
            ("rename", rc.actions.rename.keys()),
        ];
        for (list, actions) in lists {
            for action in actions {
                let key = format!("kubernetes.resources.{kind}.actions.{list}.{action}");
                if !matched.resources.contains(&key) {
                    return stale(&key);
                }
            }
        }
        let views = [("read", rc.views.read.keys()), ("exclude", rc.views.exclude.keys())];
        for (list, entries) in views {
            for entry in entries {
                let key = format!("kubernetes.resources.{kind}.views.{list}.{entry}");
                if !matched.resources.contains(&key) {
                    return stale(&key);
                }
            }
        }
    }
    Ok(())
}

/// Stage **emit**: the crate (`Cargo.toml`, `src/`, [`crate::emit::crate_files`]) and `REPORT.md`; with the
/// custom resources, also `rules.json`, the CRD manifests and the RBAC ([`crd_files`]), and the CRDs that were
/// made to fit their size budget.
fn emit(
    request: &Request<'_>,
    config: &Config,
    outputs: &[VersionOutput<'_>],
    produced: &Produced<'_>,
) -> Result<(BTreeMap<PathBuf, String>, Vec<crate::emit::fit::Fitted>)> {
    let description = config
        .output
        .description
        .clone()
        .unwrap_or_else(|| "Generated Rust types for Azure Resource Manager APIs".to_string());
    let mut files = crate::emit::crate_files(
        &config.output.crate_name,
        &description,
        outputs,
        crate_layout(request, config),
    )?;
    files.insert(PathBuf::from("REPORT.md"), crate::emit::report(outputs));
    let mut fitted = Vec::new();
    if request.options.kubernetes() {
        files.insert(
            PathBuf::from(crate::emit::rules::FILE),
            crate::emit::rules::document(config, request.config, outputs)?,
        );
        let (crds, fits) = crd_files(&config.output.crate_name, &produced.kubes, &produced.irs)?;
        files.extend(crds);
        fitted = fits;
    }
    Ok((files, fitted))
}

/// Where the versions' module trees go: as `output.versionCrates` says for the crate form; one tree in the
/// single-file form, which a build script includes.
fn crate_layout<'c>(request: &Request<'_>, config: &'c Config) -> crate::emit::CrateLayout<'c> {
    match request.options.layout {
        Layout::Crate => crate::emit::CrateLayout::of(&config.output),
        Layout::SingleFile(_) => crate::emit::CrateLayout::One,
    }
}

/// Stage **structure**: the API structure of every version, `api/<group>-<version>.txt`
/// ([`crate::report::structure::files`]).
fn structure(files: &mut BTreeMap<PathBuf, String>, outputs: &[VersionOutput<'_>]) -> Result<()> {
    files.extend(crate::report::structure::files(outputs)?);
    Ok(())
}

/// Stage **options**: the output options applied to the files — rewrites, then the single-file layout
/// (`Options::finish`).
fn options(
    request: &Request<'_>,
    files: BTreeMap<PathBuf, String>,
    irs: &BTreeMap<String, Ir>,
) -> Result<BTreeMap<PathBuf, String>> {
    request.options.finish(files, irs)
}

/// The CRD manifests (`crds/<plural>.<group>.yaml`, `crds/kustomization.yaml`) and, from the same CRDs, the RBAC
/// of the reconciled kinds (`rbac/`, the role named after `crate_name`); with how each manifest that was over its
/// size budget was made to fit.
fn crd_files(
    crate_name: &str,
    kubes: &BTreeMap<String, crate::shape::KubeIr>,
    irs: &BTreeMap<String, Ir>,
) -> Result<(BTreeMap<PathBuf, String>, Vec<crate::emit::fit::Fitted>)> {
    let crds = crate::emit::crd::manifests(kubes, irs);
    let mut files = crate::emit::crd::manifest_files(&crds)?;
    files.extend(crate::emit::rbac::files(crate_name, &crds));
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
    let resources = select_resources(group, crate::discover::discover(&specs)?, &mut BTreeSet::new());
    Ok((specs, resources))
}
