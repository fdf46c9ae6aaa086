//! `armgen diff`: what changed in the API between two versions, per resource, as a Markdown report for a
//! pull request.
//!
//! Both sides are [`ApiStructure`]s: from two configured Kubernetes versions, two spec files, or the
//! structure files of two generated trees (see [`crate::report::structure`]). Resources are matched by ARM type
//! (then by kind), properties by JSON path. For each resource the report lists, with counts of property
//! paths (a property added together with its nested properties counts each of them):
//!
//! - properties **added** and **removed** (nested ones under the property that contains them);
//! - properties **renamed**: a property removed and one added beside it (same containing object) whose
//!   types and nested properties are the same, when that pairing is unique and either the names differ
//!   only in case or both have the same named type (object, enum or union) — two booleans with different
//!   names are an addition and a removal, never guessed to be a rename;
//! - **type changed** (the JSON shape: `string` → `int32`, object → array, …);
//! - **enum values** added and removed;
//! - **read-only or mutability** changed (`readOnly`, `x-ms-mutability`);
//! - **validation** changed (`pattern`, `minLength`, `maxLength`, `minimum`, `maximum`, `minItems`,
//!   `maxItems`, `uniqueItems`);
//! - **other** attributes changed: required, secret, nullable, `x-ms-client-flatten`, open/closed enum,
//!   format, default, `x-ms-identifiers`, the generated Rust type's name, and on the resource itself its
//!   PUT path, long-running flag and GET type.
//!
//! Everything is sorted: the same inputs give the same report.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::report::structure::{ApiStructure, Entry, PropPath, ResourceShape, Shape, attr};

/// The changes between two API structures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiDiff {
    /// `name (API version)` of each side.
    pub old: String,
    pub new: String,
    pub resources_added: Vec<ResourceSummary>,
    pub resources_removed: Vec<ResourceSummary>,
    /// Every resource present on both sides, sorted by kind (on the new side).
    pub resources: Vec<ResourceDiff>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSummary {
    pub kind: String,
    pub arm_type: String,
    /// Property paths.
    pub properties: usize,
}

/// A property path and what the structure says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathEntry {
    pub path: PropPath,
    pub entry: Entry,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rename {
    pub from: PropPath,
    pub to: PropPath,
    pub entry: Entry,
    /// Nested property paths that moved with it.
    pub nested: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeChange {
    pub path: PropPath,
    pub old: Shape,
    pub new: Shape,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumChange {
    pub path: PropPath,
    /// The enum's Rust type on the side that has the values.
    pub ty: String,
    pub values: Vec<String>,
}

/// One attribute of one path, before and after; `None` when absent (a flag that is off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttrChange {
    pub path: PropPath,
    pub attr: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceDiff {
    pub kind: String,
    /// The kind on the old side, when it differs.
    pub old_kind: Option<String>,
    pub arm_type: String,
    pub added: Vec<PathEntry>,
    pub removed: Vec<PathEntry>,
    pub renamed: Vec<Rename>,
    pub type_changed: Vec<TypeChange>,
    pub enum_values_added: Vec<EnumChange>,
    pub enum_values_removed: Vec<EnumChange>,
    /// `read-only` and `mutability`.
    pub access_changed: Vec<AttrChange>,
    /// The validation keywords.
    pub validation_changed: Vec<AttrChange>,
    pub other_changed: Vec<AttrChange>,
}

impl ResourceDiff {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.renamed.is_empty()
            && self.type_changed.is_empty()
            && self.enum_values_added.is_empty()
            && self.enum_values_removed.is_empty()
            && self.access_changed.is_empty()
            && self.validation_changed.is_empty()
            && self.other_changed.is_empty()
            && self.old_kind.is_none()
    }

    fn counts(&self) -> [usize; 9] {
        [
            self.added.len(),
            self.removed.len(),
            self.renamed.len(),
            self.type_changed.len(),
            self.enum_values_added.iter().map(|e| e.values.len()).sum(),
            self.enum_values_removed.iter().map(|e| e.values.len()).sum(),
            self.access_changed.len(),
            self.validation_changed.len(),
            self.other_changed.len(),
        ]
    }
}

impl ApiDiff {
    pub fn is_empty(&self) -> bool {
        self.resources_added.is_empty()
            && self.resources_removed.is_empty()
            && self.resources.iter().all(ResourceDiff::is_empty)
    }

    /// The resource diff of `kind` (new side).
    pub fn resource(&self, kind: &str) -> Option<&ResourceDiff> {
        self.resources.iter().find(|r| r.kind == kind)
    }
}

fn label(s: &ApiStructure) -> String {
    if s.api_version.is_empty() {
        s.name.clone()
    } else {
        format!("{} ({})", s.name, s.api_version)
    }
}

/// Compares two API structures.
pub fn diff(old: &ApiStructure, new: &ApiStructure) -> ApiDiff {
    // Match resources by ARM type, then by kind.
    // Resources only: an action kind's payload is the request and response of a POST, whose changes show in the
    // structure files (`action=` lines).
    fn resources(s: &ApiStructure) -> BTreeMap<String, &ResourceShape> {
        let key = |r: &ResourceShape| r.arm_type().unwrap_or(&r.kind).to_string();
        s.resources
            .values()
            .filter(|r| !r.is_action())
            .map(|r| (key(r), r))
            .collect()
    }
    let (old_by, new_by) = (resources(old), resources(new));
    let summary = |r: &ResourceShape| ResourceSummary {
        kind: r.kind.clone(),
        arm_type: r.arm_type().unwrap_or_default().to_string(),
        properties: r.properties().count(),
    };
    let mut out = ApiDiff {
        old: label(old),
        new: label(new),
        ..ApiDiff::default()
    };
    for (k, r) in &new_by {
        match old_by.get(k) {
            Some(o) => out.resources.push(resource_diff(o, r)),
            None => out.resources_added.push(summary(r)),
        }
    }
    for (k, r) in &old_by {
        if !new_by.contains_key(k) {
            out.resources_removed.push(summary(r));
        }
    }
    out.resources.sort_by(|a, b| a.kind.cmp(&b.kind));
    out.resources_added.sort_by(|a, b| a.kind.cmp(&b.kind));
    out.resources_removed.sort_by(|a, b| a.kind.cmp(&b.kind));
    out
}

/// The attributes compared one by one: flags as present/absent, `open`/`closed` as one `enum` attribute,
/// and the Rust type name when the JSON shape is the same. `recursive` says where the listing stops, not
/// anything about the API, and is left out.
fn comparable(e: &Entry) -> BTreeMap<String, Option<String>> {
    let mut m: BTreeMap<String, Option<String>> = e
        .attrs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), attr::RECURSIVE | attr::OPEN | attr::CLOSED))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if e.flag(attr::OPEN) {
        m.insert("enum".into(), Some("open".into()));
    } else if e.flag(attr::CLOSED) {
        m.insert("enum".into(), Some("closed".into()));
    }
    m
}

fn is_access(key: &str) -> bool {
    key == attr::READ_ONLY || key == attr::MUTABILITY
}

fn is_validation(key: &str) -> bool {
    attr::VALIDATION.contains(&key)
}

/// The changes to one resource present on both sides: properties added, removed and renamed, and for each
/// path on both sides what changed about it.
fn resource_diff(old: &ResourceShape, new: &ResourceShape) -> ResourceDiff {
    let mut d = ResourceDiff {
        kind: new.kind.clone(),
        old_kind: (old.kind != new.kind).then(|| old.kind.clone()),
        arm_type: new.arm_type().unwrap_or_default().to_string(),
        ..ResourceDiff::default()
    };
    let mut added: BTreeSet<&PropPath> = new.paths.keys().filter(|p| !old.paths.contains_key(*p)).collect();
    let mut removed: BTreeSet<&PropPath> = old.paths.keys().filter(|p| !new.paths.contains_key(*p)).collect();
    d.renamed = renames(old, new, &mut removed, &mut added);
    d.added = path_entries(&added, new);
    d.removed = path_entries(&removed, old);
    for (path, n) in &new.paths {
        let Some(o) = old.paths.get(path) else { continue };
        d.compare_types(path, o, n);
        d.compare_enum_values(path, o, n);
        d.compare_attrs(path, o, n);
    }
    d
}

/// The paths of `set` that are not under another path of `set`: the roots of its subtrees.
fn subtree_roots(set: &BTreeSet<&PropPath>) -> Vec<PropPath> {
    set.iter()
        .filter(|p| !set.iter().any(|q| q.0.len() < p.0.len() && p.starts_with(q)))
        .map(|p| (*p).clone())
        .collect()
}

/// The paths of `shape` strictly under `root`, relative to it, each with its JSON shape.
fn subtree(shape: &ResourceShape, root: &PropPath) -> BTreeSet<(PropPath, String)> {
    shape
        .paths
        .iter()
        .filter(|(p, _)| p.0.len() > root.0.len() && p.starts_with(root))
        .map(|(p, e)| (PropPath(p.0[root.0.len()..].to_vec()), e.ty.wire()))
        .collect()
}

/// Whether `from` (old side) may have been renamed to `to` (new side): same containing object, same JSON
/// shape, same nested properties, and either names that differ only in case or the same named type.
fn may_be_renamed(old: &ResourceShape, new: &ResourceShape, from: &PropPath, to: &PropPath) -> bool {
    let (Some(a), Some(b)) = (old.paths.get(from), new.paths.get(to)) else {
        return false;
    };
    if from.parent() != to.parent() || a.ty.wire() != b.ty.wire() || subtree(old, from) != subtree(new, to) {
        return false;
    }
    let same_name_but_case = match (from.name(), to.name()) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        _ => false,
    };
    let same_named_type = a.ty == b.ty && !matches!(a.ty.innermost(), Shape::Primitive(_) | Shape::Json);
    same_name_but_case || same_named_type
}

/// The renames among the roots of the `removed` and `added` subtrees: a pairing that [`may_be_renamed`]
/// accepts and that is unique both ways. The renamed subtrees are taken out of `removed` and `added`.
fn renames(
    old: &ResourceShape,
    new: &ResourceShape,
    removed: &mut BTreeSet<&PropPath>,
    added: &mut BTreeSet<&PropPath>,
) -> Vec<Rename> {
    let (removed_roots, added_roots) = (subtree_roots(removed), subtree_roots(added));
    let mut out = Vec::new();
    for from in &removed_roots {
        let tos: Vec<&PropPath> = added_roots
            .iter()
            .filter(|to| may_be_renamed(old, new, from, to))
            .collect();
        let [to] = tos.as_slice() else { continue };
        let froms = removed_roots.iter().filter(|f| may_be_renamed(old, new, f, to)).count();
        if froms != 1 {
            continue;
        }
        let Some(entry) = new.paths.get(*to) else { continue };
        let nested = subtree(new, to).len();
        removed.retain(|p| !p.starts_with(from));
        added.retain(|p| !p.starts_with(to));
        out.push(Rename {
            from: from.clone(),
            to: (*to).clone(),
            entry: entry.clone(),
            nested,
        });
    }
    out
}

/// Each path of `paths` with its entry in `shape`.
fn path_entries(paths: &BTreeSet<&PropPath>, shape: &ResourceShape) -> Vec<PathEntry> {
    paths
        .iter()
        .filter_map(|p| {
            shape.paths.get(*p).map(|e| PathEntry {
                path: (*p).clone(),
                entry: e.clone(),
            })
        })
        .collect()
}

impl ResourceDiff {
    /// Records a change of `path`'s type: of its JSON shape, else of its Rust type's name only.
    fn compare_types(&mut self, path: &PropPath, o: &Entry, n: &Entry) {
        if o.ty.wire() != n.ty.wire() {
            self.type_changed.push(TypeChange {
                path: path.clone(),
                old: o.ty.clone(),
                new: n.ty.clone(),
            });
        } else if o.ty != n.ty {
            self.other_changed.push(AttrChange {
                path: path.clone(),
                attr: "Rust type".into(),
                old: Some(o.ty.to_string()),
                new: Some(n.ty.to_string()),
            });
        }
    }

    /// Records the enum values `path` gained and lost, when both sides list values.
    fn compare_enum_values(&mut self, path: &PropPath, o: &Entry, n: &Entry) {
        let (Some(ov), Some(nv)) = (&o.values, &n.values) else {
            return;
        };
        let name = |e: &Entry| match e.ty.innermost() {
            Shape::Enum(n) => n.clone(),
            other => other.to_string(),
        };
        let plus: Vec<String> = nv.difference(ov).cloned().collect();
        let minus: Vec<String> = ov.difference(nv).cloned().collect();
        if !plus.is_empty() {
            self.enum_values_added.push(EnumChange {
                path: path.clone(),
                ty: name(n),
                values: plus,
            });
        }
        if !minus.is_empty() {
            self.enum_values_removed.push(EnumChange {
                path: path.clone(),
                ty: name(o),
                values: minus,
            });
        }
    }

    /// Records each [`comparable`] attribute of `path` that differs, in [`attr::rank`] order, as an access,
    /// validation or other change.
    fn compare_attrs(&mut self, path: &PropPath, o: &Entry, n: &Entry) {
        let (oa, na) = (comparable(o), comparable(n));
        let keys: BTreeSet<&String> = oa.keys().chain(na.keys()).collect();
        let mut keys: Vec<&String> = keys.into_iter().collect();
        keys.sort_by(|a, b| attr::rank(a).cmp(&attr::rank(b)));
        for k in keys {
            let (ov, nv) = (oa.get(k), na.get(k));
            if ov == nv {
                continue;
            }
            let change = AttrChange {
                path: path.clone(),
                attr: k.clone(),
                old: ov.map(|v| v.clone().unwrap_or_default()),
                new: nv.map(|v| v.clone().unwrap_or_default()),
            };
            if is_access(k) {
                self.access_changed.push(change);
            } else if is_validation(k) {
                self.validation_changed.push(change);
            } else {
                self.other_changed.push(change);
            }
        }
    }
}

/// A Markdown code span for `s`, whatever backticks it holds.
fn code(s: &str) -> String {
    let mut fence = String::from("`");
    while s.contains(fence.as_str()) {
        fence.push('`');
    }
    let pad = if s.starts_with('`') || s.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn path_label(p: &PropPath) -> String {
    if p.is_empty() {
        "(the resource)".to_string()
    } else {
        code(&p.to_string())
    }
}

/// An attribute value in a change list: flags as `yes`/`no`, values in code spans.
fn attr_value(v: Option<&String>, flag: bool) -> String {
    match (v, flag) {
        (Some(_), true) => "yes".into(),
        (None, true) => "no".into(),
        (Some(v), false) => code(v),
        (None, false) => "none".into(),
    }
}

/// Whether `attr` is a flag (present or absent) rather than a value.
fn is_flag(change: &AttrChange) -> bool {
    let valued = |v: &Option<String>| v.as_ref().is_some_and(|s| !s.is_empty());
    !valued(&change.old) && !valued(&change.new)
}

fn list_paths(out: &mut String, title: &str, entries: &[PathEntry]) {
    if entries.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title} ({})\n", entries.len());
    let all: BTreeSet<&PropPath> = entries.iter().map(|e| &e.path).collect();
    for e in entries {
        let nested = all.iter().any(|q| q.0.len() < e.path.0.len() && e.path.starts_with(q));
        let indent = if nested { "  " } else { "" };
        let _ = writeln!(
            out,
            "{indent}- {}: {}",
            path_label(&e.path),
            code(&e.entry.describe(false))
        );
    }
    out.push('\n');
}

fn list_attrs(out: &mut String, title: &str, changes: &[AttrChange]) {
    if changes.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title} ({})\n", changes.len());
    for c in changes {
        let flag = is_flag(c);
        let _ = writeln!(
            out,
            "- {}: {} {} → {}",
            path_label(&c.path),
            c.attr,
            attr_value(c.old.as_ref(), flag),
            attr_value(c.new.as_ref(), flag)
        );
    }
    out.push('\n');
}

fn list_enums(out: &mut String, title: &str, changes: &[EnumChange]) {
    if changes.is_empty() {
        return;
    }
    let n: usize = changes.iter().map(|c| c.values.len()).sum();
    let _ = writeln!(out, "### {title} ({n})\n");
    for c in changes {
        let values: Vec<String> = c.values.iter().map(|v| code(v)).collect();
        let _ = writeln!(
            out,
            "- {} ({}): {}",
            path_label(&c.path),
            code(&c.ty),
            values.join(", ")
        );
    }
    out.push('\n');
}

const COLUMNS: [&str; 9] = [
    "added",
    "removed",
    "renamed",
    "type changed",
    "enum values added",
    "enum values removed",
    "read-only / mutability",
    "validation",
    "other",
];

impl ApiDiff {
    /// The Markdown report.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# API changes: {} → {}\n", self.old, self.new);
        if self.is_empty() {
            out.push_str("No API changes.\n");
            return out;
        }
        out.push_str(
            "Counts are property paths (`[]` is an array item, `{}` a map value): a property added with nested \
             properties counts each of them.\n\n",
        );
        let _ = writeln!(out, "| resource | {} |", COLUMNS.join(" | "));
        let _ = writeln!(out, "| --- |{}", " ---: |".repeat(COLUMNS.len()));
        let mut totals = [0usize; 9];
        for r in &self.resources {
            let c = r.counts();
            for (t, n) in totals.iter_mut().zip(c) {
                *t += n;
            }
            let cells: Vec<String> = c.iter().map(usize::to_string).collect();
            let _ = writeln!(out, "| {} | {} |", code(&r.kind), cells.join(" | "));
        }
        for r in &self.resources_added {
            let _ = writeln!(
                out,
                "| {} | new resource ({} properties) |{}",
                code(&r.kind),
                r.properties,
                " |".repeat(COLUMNS.len() - 1)
            );
        }
        for r in &self.resources_removed {
            let _ = writeln!(
                out,
                "| {} | removed resource ({} properties) |{}",
                code(&r.kind),
                r.properties,
                " |".repeat(COLUMNS.len() - 1)
            );
        }
        let cells: Vec<String> = totals.iter().map(|n| format!("**{n}**")).collect();
        let _ = writeln!(out, "| **total** | {} |\n", cells.join(" | "));

        for (title, list) in [
            ("New resources", &self.resources_added),
            ("Removed resources", &self.resources_removed),
        ] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "## {title}\n");
            for r in list {
                let _ = writeln!(
                    out,
                    "- {} ({}): {} properties",
                    code(&r.kind),
                    code(&r.arm_type),
                    r.properties
                );
            }
            out.push('\n');
        }
        for r in &self.resources {
            if r.is_empty() {
                continue;
            }
            let _ = writeln!(out, "## {} ({})\n", code(&r.kind), code(&r.arm_type));
            if let Some(old) = &r.old_kind {
                let _ = writeln!(out, "Kind renamed from {}.\n", code(old));
            }
            list_paths(&mut out, "Added", &r.added);
            list_paths(&mut out, "Removed", &r.removed);
            if !r.renamed.is_empty() {
                let _ = writeln!(out, "### Renamed ({})\n", r.renamed.len());
                for x in &r.renamed {
                    let nested = match x.nested {
                        0 => String::new(),
                        n => format!(", with {n} nested"),
                    };
                    let _ = writeln!(
                        out,
                        "- {} → {}: {}{nested}",
                        path_label(&x.from),
                        path_label(&x.to),
                        code(&x.entry.describe(false))
                    );
                }
                out.push('\n');
            }
            if !r.type_changed.is_empty() {
                let _ = writeln!(out, "### Type changed ({})\n", r.type_changed.len());
                for t in &r.type_changed {
                    let _ = writeln!(
                        out,
                        "- {}: {} → {}",
                        path_label(&t.path),
                        code(&t.old.to_string()),
                        code(&t.new.to_string())
                    );
                }
                out.push('\n');
            }
            list_enums(&mut out, "Enum values added", &r.enum_values_added);
            list_enums(&mut out, "Enum values removed", &r.enum_values_removed);
            list_attrs(&mut out, "Read-only or mutability changed", &r.access_changed);
            list_attrs(&mut out, "Validation changed", &r.validation_changed);
            list_attrs(&mut out, "Other changes", &r.other_changed);
        }
        out
    }
}

/// One side of `armgen diff`, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    /// A file or folder that exists: a spec file (JSON), a structure file, or a generated tree (its `api/`
    /// folder, or a folder of structure files).
    Path(std::path::PathBuf),
    /// Anything else: a Kubernetes version of the configuration (`v1beta1`, or `containerservice/v1beta1`
    /// when several groups have it).
    Version(String),
}

impl Operand {
    pub fn parse(arg: &str) -> Operand {
        let path = std::path::Path::new(arg);
        if path.exists() {
            Operand::Path(path.to_path_buf())
        } else {
            Operand::Version(arg.to_string())
        }
    }
}

fn invalid(what: impl Into<String>, message: impl Into<String>) -> crate::Error {
    crate::Error::Invalid {
        what: what.into(),
        message: message.into(),
    }
}

/// The structure of version `version` (`v1beta1` or `group/v1beta1`) of a generation.
pub fn from_generation(generation: &crate::Generation, version: &str) -> crate::Result<ApiStructure> {
    let matches: Vec<(&String, &crate::ir::Ir)> = generation
        .irs
        .iter()
        .filter(|(k, _)| *k == version || k.rsplit_once('/').is_some_and(|(_, v)| v == version))
        .collect();
    let known: Vec<&str> = generation.irs.keys().map(String::as_str).collect();
    match matches.as_slice() {
        [(key, ir)] => ApiStructure::from_ir(key, ir),
        [] => Err(invalid(
            format!("`{version}`"),
            format!(
                "neither an existing file or folder nor a version in the configuration (versions: {})",
                known.join(", ")
            ),
        )),
        several => Err(invalid(
            format!("`{version}`"),
            format!(
                "ambiguous: name the group ({})",
                several.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )),
    }
}

/// The structures at `path`: a spec file is run through the pipeline (without config overrides: Rust
/// names are the generator's defaults); a structure file is read; a folder's structure files (in `api/`
/// when it has one) are read. `spec_root` is used for display paths and `$ref`s when the spec file is under
/// it.
pub fn from_path(path: &std::path::Path, spec_root: Option<&std::path::Path>) -> crate::Result<Vec<ApiStructure>> {
    use crate::Error;
    if path.is_dir() {
        let dir = if path.join(crate::report::structure::DIR).is_dir() {
            path.join(crate::report::structure::DIR)
        } else {
            path.to_path_buf()
        };
        let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| Error::io(&dir, e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "txt"))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(invalid(
                dir.display().to_string(),
                "no API structure files (*.txt) here; is this a generated tree?",
            ));
        }
        return files.iter().map(|f| structure_file(f)).collect();
    }
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    if text.trim_start().starts_with('{') {
        Ok(vec![spec_file(path, spec_root)?])
    } else {
        Ok(vec![ApiStructure::parse(&text, &path.display().to_string())?])
    }
}

fn structure_file(path: &std::path::Path) -> crate::Result<ApiStructure> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
    ApiStructure::parse(&text, &path.display().to_string())
}

/// Runs one spec file through load, discover, lower and the passes.
fn spec_file(path: &std::path::Path, spec_root: Option<&std::path::Path>) -> crate::Result<ApiStructure> {
    let absolute = std::path::absolute(path).map_err(|e| crate::Error::io(path, e))?;
    let absolute = crate::load::normalize(&absolute);
    let root = spec_root
        .and_then(|r| std::path::absolute(r).ok())
        .map(|r| crate::load::normalize(&r))
        .filter(|r| absolute.starts_with(r))
        .or_else(|| absolute.parent().map(std::path::Path::to_path_buf))
        .unwrap_or_default();
    let rel = absolute.strip_prefix(&root).unwrap_or(&absolute).to_path_buf();
    let specs = crate::load::SpecSet::load(&root, std::slice::from_ref(&rel))?;
    let api_version = specs
        .docs
        .values()
        .find(|d| d.path == absolute)
        .map(|d| d.openapi.info.version.clone())
        .unwrap_or_default();
    let resources = crate::discover::discover(&specs)?;
    let mut ir = crate::passes::lower::lower(&specs, &resources, &api_version)?;
    crate::passes::run_all(&mut ir, &crate::config::VersionOverrides::default());
    ApiStructure::from_ir(&rel.display().to_string(), &ir)
}

/// Pairs the structures of two sides: one each are compared directly; otherwise by name, and a name on
/// one side only is reported as a version added or removed.
pub fn compare(old: &[ApiStructure], new: &[ApiStructure]) -> Vec<ApiDiff> {
    if let ([o], [n]) = (old, new) {
        return vec![diff(o, n)];
    }
    let empty = ApiStructure::default();
    let names: BTreeSet<&str> = old.iter().chain(new).map(|s| s.name.as_str()).collect();
    names
        .into_iter()
        .map(|name| {
            let o = old.iter().find(|s| s.name == name);
            let n = new.iter().find(|s| s.name == name);
            let mut d = diff(o.unwrap_or(&empty), n.unwrap_or(&empty));
            if o.is_none() {
                d.old = format!("(no {name})");
            }
            if n.is_none() {
                d.new = format!("(no {name})");
            }
            d
        })
        .collect()
}

/// The Markdown report of several diffs, one after the other.
pub fn markdown(diffs: &[ApiDiff]) -> String {
    let parts: Vec<String> = diffs.iter().map(ApiDiff::markdown).collect();
    parts.join("\n")
}
