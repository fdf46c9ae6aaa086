//! Pass 1, **load**: reads Swagger 2.0 and OpenAPI 3.0 documents, upconverts Swagger 2.0 into the
//! `openapiv3` model and follows `$ref`s across files.
//!
//! Swagger 2.0 → OpenAPI 3.0 upconversion (what [`upconvert`] does):
//! - `definitions` → `components/schemas`, `parameters` → `components/parameters` (body parameters →
//!   `components/requestBodies`), `responses` → `components/responses`; every `$ref` is rewritten to match;
//! - `in: body` parameters → `requestBody` (`application/json`); other parameters get a `schema`;
//! - response `schema` → `content/application~1json/schema`, response headers get a `schema`;
//! - `x-nullable` → `nullable`; `discriminator: name` → `discriminator: {propertyName: name}`;
//!   `type: file` → `type: string, format: binary`;
//! - a `$ref` with sibling keys (`description`, `readOnly`, `x-ms-client-flatten`, …), which OpenAPI 3.0
//!   would ignore, becomes `allOf: [{$ref}]` with the siblings kept beside it;
//! - every `x-*` extension is kept in `extensions`.
//!
//! Confinement: every file read resolves inside the spec root ([`SpecRoot`]). A `$ref`'s file part must be a
//! path relative to the referring file: a URL (any scheme, or `//host`) or an absolute path is refused without
//! being read, and so is one that leads outside the root through `..` (checked lexically, as `$ref`s resolve)
//! or through a symlink (checked on disk with every symlink resolved; the file read is the resolved path that
//! was checked). Refusals name the `$ref` site (file + JSON pointer) and, through [`SpecFile::origin`], the
//! config key of the spec file it was reached from. Decision: refuse rather than skip, since a skipped file
//! would turn into confusing "not loaded" errors later, and never fetch (generation must be reproducible from
//! the pinned spec root).
//!
//! Errors name the file and the JSON pointer *of the original document* (so `#/definitions/Foo`, not
//! `#/components/schemas/Foo`, for a Swagger 2.0 file): the upconverter records where it moved things
//! ([`Document::moved`]: a body parameter that became a `requestBody`, a parameter's type keys that moved
//! under `schema`, a `$ref` wrapped in `allOf`), and [`Document::location`] maps pointers back through it.
//! Where the `openapiv3` model rejects a document, the part that does not fit is found by narrowing down
//! from where serde stopped tracking.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use openapiv3::{OpenAPI, ReferenceOr, Schema};
use serde_json::{Map, Value, json};

use crate::error::{Error, Location, Result, escape_pointer, unescape_pointer};

pub mod fetch;
mod narrow;
pub mod spec_root;

use narrow::path_to_pointer;

/// The format a document was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceFormat {
    Swagger2,
    OpenApi3,
}

/// One loaded document.
#[derive(Debug, Clone)]
pub struct Document {
    /// Lexically normalised path on disk.
    pub path: PathBuf,
    /// The path shown to users: relative to the spec root when the file is under it.
    pub display: PathBuf,
    pub format: SourceFormat,
    /// The document in the `openapiv3` model.
    pub openapi: OpenAPI,
    /// The same document as OpenAPI 3.0 JSON (after upconversion), for pointers the typed model cannot
    /// follow directly.
    pub raw: Value,
    /// Where the upconversion moved things (empty for an OpenAPI 3.0 document).
    pub moved: MovedPointers,
}

impl Document {
    /// Maps a pointer into the upconverted document back to the original document's terms.
    pub fn original_pointer(&self, pointer: &str) -> String {
        if self.format == SourceFormat::OpenApi3 {
            return pointer.to_string();
        }
        map_moved(&self.moved, pointer).unwrap_or_else(|| swagger_pointer(pointer))
    }

    /// A [`Location`] for an upconverted pointer, in the original document's terms.
    pub fn location(&self, pointer: &str) -> Location {
        Location::new(self.display.clone(), self.original_pointer(pointer))
    }

    /// The schema at `pointer` (an upconverted-document pointer such as `/components/schemas/Foo`).
    pub fn schema_at(&self, pointer: &str) -> Result<ReferenceOr<Schema>> {
        let segments = split_pointer(pointer);
        if let [a, b, name] = segments.as_slice() {
            if a == "components" && b == "schemas" {
                return self
                    .openapi
                    .components
                    .as_ref()
                    .and_then(|c| c.schemas.get(name))
                    .cloned()
                    .ok_or_else(|| Error::spec(&self.location(pointer), missing(pointer)));
            }
        }
        let value = self
            .raw
            .pointer(pointer)
            .ok_or_else(|| Error::spec(&self.location(pointer), missing(pointer)))?;
        serde_path_to_error::deserialize::<_, ReferenceOr<Schema>>(value).map_err(|e| {
            let (inner, message) = narrow::narrow(value, narrow::Part::Schema)
                .unwrap_or_else(|| (path_to_pointer(e.path()), e.inner().to_string()));
            Error::spec(
                &self.location(&format!("{pointer}{inner}")),
                format!("not a schema: {message}"),
            )
        })
    }
}

/// Every document reachable from the root files through `$ref`s.
#[derive(Debug, Clone, Default)]
pub struct SpecSet {
    pub root: PathBuf,
    pub roots: Vec<PathBuf>,
    pub docs: BTreeMap<PathBuf, Document>,
    /// What stands in as opaque JSON instead of being read (the config's `overrides.opaqueFiles` and
    /// `overrides.types.X.opaque`).
    pub opaque: Opaque,
    /// Each opaque entry's config key → the `$ref` sites it stood in for (for the report and stale-entry checks).
    used: std::sync::Arc<std::sync::Mutex<BTreeMap<String, BTreeSet<String>>>>,
}

/// Files and definitions that stand in as any JSON value (`serde_json::Value` in Rust,
/// `x-kubernetes-preserve-unknown-fields` in a CRD) wherever a `$ref` reaches them: a documented escape hatch for
/// spec files that cannot be obtained or definitions that cannot be modelled, never a silent fallback (each entry
/// has a config key and a reason, and every use is a diagnostic in the report).
#[derive(Debug, Clone, Default)]
pub struct Opaque {
    /// A file (normalized, under the spec root, as [`SpecSet::docs`] keys it) → (config key, reason). The file is
    /// not read: every `$ref` into it is opaque.
    pub files: BTreeMap<PathBuf, (String, String)>,
    /// A definition's name (as written in the spec, any file) → (config key, reason).
    pub definitions: BTreeMap<String, (String, String)>,
}

impl Opaque {
    /// The entry `target` falls under: its file, or its definition's name.
    fn entry(&self, target: &Target) -> Option<&(String, String)> {
        if let Some(e) = self.files.get(&target.file) {
            return Some(e);
        }
        match split_pointer(&target.pointer).as_slice() {
            [components, schemas, name] if components == "components" && schemas == "schemas" => {
                self.definitions.get(name.as_str())
            }
            _ => None,
        }
    }
}

/// A parsed `$ref`: the document it points into and the pointer inside it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    pub file: PathBuf,
    pub pointer: String,
}

/// Where a file to load is referenced: the `$ref` site and the reference as written.
type Referrer = (Location, String);

/// A root spec file to load, and the configuration key that names it (for errors).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFile {
    /// Relative to the spec root.
    pub path: PathBuf,
    /// The config file and key naming this file (e.g. `groups.g.versions.v1.specFiles[0]`), when it comes from
    /// a configuration.
    pub origin: Option<(PathBuf, String)>,
}

impl From<PathBuf> for SpecFile {
    fn from(path: PathBuf) -> Self {
        SpecFile { path, origin: None }
    }
}

impl SpecFile {
    /// "config key `…` in FILE", or nothing.
    fn origin_note(&self) -> String {
        match &self.origin {
            Some((file, key)) => format!(" (spec file of config key `{key}` in {})", file.display()),
            None => String::new(),
        }
    }
}

impl SpecSet {
    /// Loads `files` (relative to `spec_root`) and everything they reference.
    ///
    /// Every file read resolves inside the spec root (see [`SpecRoot::contain`]): a `$ref` that is a URL or an
    /// absolute path, or that leads outside the root (through `..` or a symlink), is an error at its site, and
    /// nothing outside the root is read.
    pub fn load(spec_root: &Path, files: &[PathBuf]) -> Result<SpecSet> {
        let files: Vec<SpecFile> = files.iter().cloned().map(SpecFile::from).collect();
        Self::load_files(spec_root, &files)
    }

    /// As [`SpecSet::load`], with the config key of each root file, which errors name.
    pub fn load_files(spec_root: &Path, files: &[SpecFile]) -> Result<SpecSet> {
        Self::load_with(spec_root, files, Opaque::default())
    }

    /// As [`SpecSet::load_files`]; the files of `opaque` are not read, and `$ref`s into them or to its
    /// definitions resolve to an opaque schema (see [`Opaque`]).
    pub fn load_with(spec_root: &Path, files: &[SpecFile], opaque: Opaque) -> Result<SpecSet> {
        let root = normalize(spec_root);
        let jail = SpecRoot::new(spec_root)?;
        let used: std::sync::Arc<std::sync::Mutex<BTreeMap<String, BTreeSet<String>>>> = Default::default();
        let roots: Vec<PathBuf> = files.iter().map(|f| normalize(&root.join(&f.path))).collect();
        let reader = Reader {
            root: &root,
            jail: &jail,
            files,
            opaque: &opaque,
            used: &used,
            raw: BTreeMap::new(),
            // Reversed so that the files are read in the order given (`pending` is a stack).
            pending: roots
                .iter()
                .cloned()
                .enumerate()
                .map(|(i, p)| (p, i, None))
                .rev()
                .collect(),
        };
        let raw = reader.read_all()?;
        let mut docs = BTreeMap::new();
        for (path, value) in &raw {
            docs.insert(path.clone(), document(&root, path, value, &raw)?);
        }
        Ok(SpecSet {
            root,
            roots,
            docs,
            opaque,
            used,
        })
    }

    /// Each opaque entry's config key → the `$ref` sites (`file#pointer`) it stood in for so far.
    pub fn opaque_uses(&self) -> BTreeMap<String, BTreeSet<String>> {
        self.used.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// The schema an opaque entry stands in with: any JSON value, described by its reason.
    fn opaque_schema(&self, key: &str, because: &str, site: &Location) -> Schema {
        if let Ok(mut used) = self.used.lock() {
            used.entry(key.to_string()).or_default().insert(site.to_string());
        }
        Schema {
            schema_data: openapiv3::SchemaData {
                description: Some(format!("Any JSON value: not modelled ({key}: {because}).")),
                ..Default::default()
            },
            schema_kind: openapiv3::SchemaKind::Any(Default::default()),
        }
    }

    pub fn doc(&self, path: &Path) -> Option<&Document> {
        self.docs.get(path)
    }

    /// Parses `reference` as written in `from` into a target document and pointer.
    pub fn target(&self, from: &Path, reference: &str, at: &Location) -> Result<Target> {
        let (file_part, fragment) = match reference.split_once('#') {
            Some((f, frag)) => (f, frag),
            None => (reference, ""),
        };
        let file = if file_part.is_empty() {
            from.to_path_buf()
        } else {
            normalize(&from.parent().unwrap_or(Path::new("")).join(file_part))
        };
        let err = |message: String| Error::Ref {
            at: at.clone(),
            reference: self.original_reference(from, reference),
            message,
        };
        if self.opaque.files.contains_key(&file) {
            return Ok(Target {
                file,
                pointer: fragment.to_string(),
            });
        }
        let Some(doc) = self.docs.get(&file) else {
            return Err(err(format!(
                "the file {} is not loaded",
                display_path(&self.root, &file).display()
            )));
        };
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(err("the fragment is not a JSON pointer".into()));
        }
        // A target must exist, so that a dangling `$ref` is reported where it is written.
        if doc.raw.pointer(fragment).is_none() {
            return Err(err(missing(fragment)));
        }
        Ok(Target {
            file,
            pointer: fragment.to_string(),
        })
    }

    /// `reference` (written in `from`, upconverted) as the author wrote it: `#/definitions/Foo` rather than
    /// `#/components/schemas/Foo` when both ends are Swagger 2.0 documents.
    pub fn original_reference(&self, from: &Path, reference: &str) -> String {
        let Some((file_part, fragment)) = reference.split_once('#') else {
            return reference.to_string();
        };
        let Some(from_doc) = self.docs.get(from) else {
            return reference.to_string();
        };
        let file = if file_part.is_empty() {
            from.to_path_buf()
        } else {
            normalize(&from.parent().unwrap_or(Path::new("")).join(file_part))
        };
        // The upconverter rewrites references in Swagger 2.0 documents only, and leaves those into OpenAPI 3.0
        // documents as they are.
        if from_doc.format == SourceFormat::OpenApi3 {
            return reference.to_string();
        }
        match self.docs.get(&file) {
            Some(to) if to.format == SourceFormat::OpenApi3 => reference.to_string(),
            Some(to) => format!("{file_part}#{}", to.original_pointer(fragment)),
            None => format!("{file_part}#{}", swagger_pointer(fragment)),
        }
    }

    /// Follows `reference` (written in `from`, at `at`) to a schema, following chains of bare `$ref`s.
    /// Returns the final target and the schema there.
    ///
    /// Errors name the `$ref` that cannot be followed: `at` itself, or the site of a later `$ref` in the
    /// chain (then the message says where the chain started). A chain that comes back to itself is an
    /// error at `at` that lists the chain.
    pub fn resolve_schema(&self, from: &Path, reference: &str, at: &Location) -> Result<(Target, Schema)> {
        let start = at;
        let first_reference = self.original_reference(from, reference);
        let mut seen = BTreeSet::new();
        let mut chain: Vec<String> = Vec::new();
        let mut target = self.target(from, reference, at)?;
        let mut site_file = from.to_path_buf();
        let mut reference = reference.to_string();
        let mut at = at.clone();
        loop {
            if let Some((key, because)) = self.opaque.entry(&target) {
                return Ok((target.clone(), self.opaque_schema(key, because, start)));
            }
            let here = self.location(&target.file, &target.pointer).to_string();
            chain.push(here);
            let followed = |message: String, chain: &[String]| {
                if chain.len() > 1 {
                    format!("{message} (following $refs from {start})")
                } else {
                    message
                }
            };
            if !seen.insert(target.clone()) {
                return Err(Error::Ref {
                    at: start.clone(),
                    reference: first_reference,
                    message: format!("a cycle of $refs that never reaches a schema: {}", chain.join(" -> ")),
                });
            }
            let doc = self.docs.get(&target.file).ok_or_else(|| Error::Ref {
                at: at.clone(),
                reference: self.original_reference(&site_file, &reference),
                message: followed("the file is not loaded".into(), &chain),
            })?;
            let schema = doc.schema_at(&target.pointer).map_err(|e| match e {
                Error::Spec { message, at: inner } => {
                    let message = if inner == doc.location(&target.pointer) {
                        message
                    } else {
                        format!("{message} (at {inner})")
                    };
                    Error::Ref {
                        at: at.clone(),
                        reference: self.original_reference(&site_file, &reference),
                        message: followed(message, &chain),
                    }
                }
                other => other,
            })?;
            match schema {
                ReferenceOr::Item(s) => return Ok((target, s)),
                ReferenceOr::Reference { reference: next } => {
                    at = doc.location(&target.pointer);
                    let next_target = self.target(&target.file, &next, &at).map_err(|e| match e {
                        Error::Ref { at, reference, message } => Error::Ref {
                            at,
                            reference,
                            message: followed(message, &chain),
                        },
                        other => other,
                    })?;
                    site_file = target.file.clone();
                    reference = next;
                    target = next_target;
                }
            }
        }
    }

    /// A location for `pointer` in `file`, in that document's own terms.
    pub fn location(&self, file: &Path, pointer: &str) -> Location {
        match self.docs.get(file) {
            Some(doc) => doc.location(pointer),
            None => Location::new(file.to_path_buf(), pointer.to_string()),
        }
    }
}

/// The reading part of [`SpecSet::load_with`]: the root files and everything they reference, as JSON.
struct Reader<'a> {
    /// The spec root, lexically normalised.
    root: &'a Path,
    jail: &'a SpecRoot,
    /// The root files.
    files: &'a [SpecFile],
    opaque: &'a Opaque,
    /// Each opaque entry's config key → the sites it stood in for.
    used: &'a std::sync::Mutex<BTreeMap<String, BTreeSet<String>>>,
    /// The files read so far.
    raw: BTreeMap<PathBuf, Value>,
    /// A file to read, the root file it was reached from (an index into `files`), and where it is referenced
    /// from (the `$ref` site and the reference as written). A stack.
    pending: Vec<(PathBuf, usize, Option<Referrer>)>,
}

impl Reader<'_> {
    /// Reads every pending file, and the files their `$ref`s reach, but those of opaque entries.
    fn read_all(mut self) -> Result<BTreeMap<PathBuf, Value>> {
        while let Some((path, origin, referrer)) = self.pending.pop() {
            if self.raw.contains_key(&path) {
                continue;
            }
            let root_file = &self.files[origin];
            let display = display_path(self.root, &path);
            let mut value = self.read(&path, &display, root_file, &referrer)?;
            self.blank_opaque_definitions(&mut value, &display);
            self.follow_refs(&value, &path, &display, origin)?;
            self.raw.insert(path, value);
        }
        Ok(self.raw)
    }

    /// The JSON of file `path` (shown as `display`), once the spec root contains it; errors name `referrer`, or
    /// the config key of `root_file` for a root file.
    fn read(&self, path: &Path, display: &Path, root_file: &SpecFile, referrer: &Option<Referrer>) -> Result<Value> {
        let real = match self.jail.contain(path) {
            Ok(real) => real,
            Err(Contain::Outside(message)) => return Err(refusal(root_file, referrer, message)),
            Err(Contain::Unreadable(source)) => {
                return Err(match referrer {
                    Some(_) => refusal(
                        root_file,
                        referrer,
                        format!("cannot read {}: {source}", display.display()),
                    ),
                    None => Error::io(display.to_path_buf(), source),
                });
            }
        };
        let text = std::fs::read_to_string(&real).map_err(|source| match referrer {
            Some(_) => refusal(
                root_file,
                referrer,
                format!("cannot read {}: {source}", display.display()),
            ),
            None => Error::io(display.to_path_buf(), source),
        })?;
        parse_json(&text, display)
    }

    /// Replaces the opaque definitions of `value` (file `display`) by `{}`: an opaque definition is neither read
    /// nor followed, as it may be what is broken.
    fn blank_opaque_definitions(&self, value: &mut Value, display: &Path) {
        for container in ["/definitions", "/components/schemas"] {
            if let Some(Value::Object(defs)) = value.pointer_mut(container) {
                for (name, def) in defs.iter_mut() {
                    if let Some((key, _)) = self.opaque.definitions.get(name) {
                        *def = json!({});
                        // Replaced unread: a use of the entry even where no generated type reaches it.
                        let site =
                            Location::new(display.to_path_buf(), format!("/definitions/{}", escape_pointer(name)));
                        if let Ok(mut used) = self.used.lock() {
                            used.entry(key.clone()).or_default().insert(site.to_string());
                        }
                    }
                }
            }
        }
    }

    /// Queues the files the external `$ref`s of `value` (file `path`, shown as `display`, reached from root file
    /// `origin`) point into, but those of opaque entries; a `$ref` that is not a relative path is an error.
    fn follow_refs(&mut self, value: &Value, path: &Path, display: &Path, origin: usize) -> Result<()> {
        let root_file = &self.files[origin];
        let mut refs = Vec::new();
        collect_external_refs(value, "", &mut refs);
        for (pointer, reference) in refs {
            let file_part = reference.split('#').next().unwrap_or_default();
            let at = Location::new(display.to_path_buf(), pointer);
            if let Some(why) = not_a_relative_path(file_part) {
                return Err(Error::Ref {
                    at,
                    reference,
                    message: format!("{why}{}", root_file.origin_note()),
                });
            }
            let target = normalize(&path.parent().unwrap_or(Path::new("")).join(file_part));
            if let Some((key, _)) = self.opaque.files.get(&target) {
                // Not read: the `$ref` is a use of the entry even where no generated type reaches it.
                if let Ok(mut used) = self.used.lock() {
                    used.entry(key.clone()).or_default().insert(at.to_string());
                }
                continue;
            }
            if !self.raw.contains_key(&target) {
                self.pending.push((target, origin, Some((at, reference))));
            }
        }
        Ok(())
    }
}

/// The error refusing to read a file reached from `root_file`: at the `$ref` site of `referrer`, else (a root
/// file) at its config key, else naming the file.
fn refusal(root_file: &SpecFile, referrer: &Option<Referrer>, message: String) -> Error {
    match referrer {
        Some((at, reference)) => Error::Ref {
            at: at.clone(),
            reference: reference.clone(),
            message: format!("{message}{}", root_file.origin_note()),
        },
        None => match &root_file.origin {
            Some((file, key)) => Error::Config {
                file: file.clone(),
                key: key.clone(),
                message: format!(
                    "spec file {:?} (relative to the spec root): {message}",
                    normalize(&root_file.path).display().to_string()
                ),
            },
            None => Error::Invalid {
                what: format!("spec file {}", normalize(&root_file.path).display()),
                message,
            },
        },
    }
}

/// The document of file `path` (under spec root `root`) from its JSON `value`, upconverted from Swagger 2.0
/// when it is one; `raw` holds every file read, for the upconversion's `$ref`s.
fn document(root: &Path, path: &Path, value: &Value, raw: &BTreeMap<PathBuf, Value>) -> Result<Document> {
    let display = display_path(root, path);
    let (format, oas3, moved) = if value.get("swagger").is_some() {
        let (oas3, moved) = upconvert_tracked(value, path, &display, raw)?;
        (SourceFormat::Swagger2, oas3, moved)
    } else if value.get("openapi").is_some() {
        (SourceFormat::OpenApi3, value.clone(), MovedPointers::new())
    } else {
        return Err(Error::spec(
            &Location::new(display, ""),
            "neither a Swagger 2.0 (`swagger`) nor an OpenAPI 3.0 (`openapi`) document",
        ));
    };
    if format == SourceFormat::OpenApi3 {
        let version = value.get("openapi").and_then(Value::as_str).unwrap_or_default();
        if !version.starts_with("3.0") {
            return Err(Error::spec(
                &Location::new(display, "/openapi"),
                format!("unsupported OpenAPI version {version:?} (3.0.x is supported)"),
            ));
        }
    }
    let mut doc = Document {
        path: path.to_path_buf(),
        display,
        format,
        openapi: OpenAPI::default(),
        raw: Value::Null,
        moved,
    };
    doc.openapi = serde_path_to_error::deserialize(&oas3).map_err(|e| {
        // The path serde reports stops where the model flattens (a path item, a schema); find the
        // part of the document that does not fit.
        let (pointer, message) = narrow::narrow(&oas3, narrow::Part::Document)
            .unwrap_or_else(|| (path_to_pointer(e.path()), e.inner().to_string()));
        Error::spec(&doc.location(&pointer), message)
    })?;
    doc.raw = oas3;
    Ok(doc)
}

fn parse_json(text: &str, display: &Path) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| {
        // serde_json's message ends in " at line L column C"; say it once, in one form.
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        Error::Json {
            at: Location::new(display.to_path_buf(), ""),
            message: format!("{message} (line {}, column {})", e.line(), e.column()),
        }
    })
}

/// Why an upconverted pointer leads nowhere.
fn missing(pointer: &str) -> String {
    match split_pointer(pointer).as_slice() {
        [components, schemas, _] if components == "components" && schemas == "schemas" => "no such schema".into(),
        _ => "the pointer does not resolve".into(),
    }
}

/// The Swagger 2.0 form of an upconverted pointer to a component (what a `$ref` was rewritten from).
fn swagger_pointer(pointer: &str) -> String {
    for (oas3, swagger) in [
        ("/components/schemas/", "/definitions/"),
        ("/components/parameters/", "/parameters/"),
        ("/components/requestBodies/", "/parameters/"),
        ("/components/responses/", "/responses/"),
    ] {
        if let Some(rest) = pointer.strip_prefix(oas3) {
            return format!("{swagger}{rest}");
        }
    }
    pointer.to_string()
}

/// What kind of JSON value `v` is, for error messages ("expected an object, found an array").
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a `$ref`'s file part is not a path relative to the referring file, if it is not: a URL (any scheme,
/// or `//host`) or an absolute path. The generator never fetches and never reads outside the spec root.
fn not_a_relative_path(file_part: &str) -> Option<String> {
    let scheme = file_part.split_once(':').map(|(s, _)| s).filter(|s| {
        let mut chars = s.chars();
        chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    if let Some(scheme) = scheme {
        return Some(format!(
            "a URL (`{scheme}:`): the generator follows only paths relative to the referring file, inside the spec \
             root, and never fetches"
        ));
    }
    if file_part.starts_with("//") || file_part.starts_with("\\\\") {
        return Some(
            "a network-path URL (`//host/…`): the generator follows only paths relative to the referring file, \
             inside the spec root"
                .into(),
        );
    }
    if file_part.starts_with('/') || file_part.starts_with('\\') || Path::new(file_part).is_absolute() {
        return Some(
            "an absolute path: a $ref names a file relative to the referring file, inside the spec root".into(),
        );
    }
    None
}

/// The spec root, resolved once, which every file read must stay inside.
///
/// Containment is checked twice: lexically (the path with `.` and `..` resolved, as a `$ref` is resolved against
/// its referring file, must be under the root) and on disk (the path with every symlink resolved must be under
/// the root with its symlinks resolved). The file read is the resolved path that was checked.
#[derive(Debug, Clone)]
pub struct SpecRoot {
    /// The root as an absolute, lexically normalised path.
    absolute: PathBuf,
    /// The root with symlinks resolved.
    canonical: PathBuf,
}

/// Why [`SpecRoot::contain`] refuses a path.
#[derive(Debug)]
pub enum Contain {
    /// It leads outside the root; the message says where to.
    Outside(String),
    /// It cannot be resolved on disk (does not exist, no permission).
    Unreadable(std::io::Error),
}

impl SpecRoot {
    pub fn new(root: &Path) -> Result<SpecRoot> {
        let absolute = normalize(&std::path::absolute(root).map_err(|e| Error::io(root, e))?);
        let canonical = std::fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        Ok(SpecRoot { absolute, canonical })
    }

    /// The root, absolute and lexically normalised.
    pub fn path(&self) -> &Path {
        &self.absolute
    }

    /// Whether the folder or file `path` (absolute, or relative to the current directory) is inside the root,
    /// lexically and on disk; returns its resolved path.
    pub fn contain(&self, path: &Path) -> Result<PathBuf, Contain> {
        let absolute = match std::path::absolute(path) {
            Ok(p) => normalize(&p),
            Err(e) => return Err(Contain::Unreadable(e)),
        };
        if !absolute.starts_with(&self.absolute) {
            return Err(Contain::Outside(format!(
                "it resolves to {}, outside the spec root {}",
                absolute.display(),
                self.absolute.display()
            )));
        }
        let real = std::fs::canonicalize(&absolute).map_err(Contain::Unreadable)?;
        if !real.starts_with(&self.canonical) {
            return Err(Contain::Outside(format!(
                "{} is a symlink (or under one) to {}, outside the spec root {}",
                absolute.strip_prefix(&self.absolute).unwrap_or(&absolute).display(),
                real.display(),
                self.canonical.display()
            )));
        }
        Ok(real)
    }
}

/// The path relative to the spec root when under it, else the path itself.
fn display_path(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Lexical normalisation: removes `.` and resolves `..` without touching the file system.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            // `a/..` is nothing, `/..` is `/`; a leading `..` (or one after another `..`) stays.
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Splits an RFC 6901 pointer into unescaped segments.
pub fn split_pointer(pointer: &str) -> Vec<String> {
    if pointer.is_empty() {
        return Vec::new();
    }
    pointer
        .trim_start_matches('/')
        .split('/')
        .map(unescape_pointer)
        .collect()
}

/// Every `$ref` that names another file, outside `x-ms-examples` (which point at example payloads): the
/// pointer of the object holding it, and the reference as written.
fn collect_external_refs(value: &Value, pointer: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "x-ms-examples" {
                    continue;
                }
                if k == "$ref" {
                    // The site of a `$ref` is the object holding it, as in every other error.
                    // An empty reference is this document (and an error where a schema is expected).
                    if let Value::String(r) = v {
                        if !r.is_empty() && !r.starts_with('#') {
                            out.push((pointer.to_string(), r.clone()));
                        }
                    }
                } else {
                    collect_external_refs(v, &format!("{pointer}/{}", escape_pointer(k)), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                collect_external_refs(v, &format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The values of a Swagger 2.0 schema's `type`.
const SCHEMA_TYPES: &[&str] = &["array", "boolean", "file", "integer", "number", "object", "string"];

/// Where the upconversion moved things: upconverted pointer → original pointer, for the roots of moved
/// subtrees (a pointer below a key maps to the same relative place below its value).
pub type MovedPointers = BTreeMap<String, String>;

struct Upconverter<'a> {
    path: &'a Path,
    display: &'a Path,
    raw: &'a BTreeMap<PathBuf, Value>,
    moved: RefCell<MovedPointers>,
}

/// Upconverts one Swagger 2.0 document (`doc`, read from `path`) into OpenAPI 3.0 JSON. `raw` holds every
/// loaded document, so that references to parameters in other files can be told apart (body or not).
pub fn upconvert(doc: &Value, path: &Path, display: &Path, raw: &BTreeMap<PathBuf, Value>) -> Result<Value> {
    upconvert_tracked(doc, path, display, raw).map(|(value, _)| value)
}

/// [`upconvert`], and where the upconversion moved things, so that pointers into the result can be told in
/// the original document's terms.
pub fn upconvert_tracked(
    doc: &Value,
    path: &Path,
    display: &Path,
    raw: &BTreeMap<PathBuf, Value>,
) -> Result<(Value, MovedPointers)> {
    let cx = Upconverter {
        path,
        display,
        raw,
        moved: RefCell::new(BTreeMap::new()),
    };
    let value = cx.document(doc)?;
    Ok((value, cx.moved.into_inner()))
}

/// Maps `pointer` (into an upconverted document) through `moved`: the longest moved prefix, on segment
/// boundaries, is replaced by its original. `None` when nothing above `pointer` moved.
fn map_moved(moved: &MovedPointers, pointer: &str) -> Option<String> {
    let (prefix, original) = moved_prefix(moved, pointer)?;
    Some(format!("{original}{}", &pointer[prefix.len()..]))
}

/// The longest prefix of `pointer`, on segment boundaries, that `moved` maps, and its original.
fn moved_prefix<'m>(moved: &'m MovedPointers, pointer: &str) -> Option<(&'m str, &'m str)> {
    let mut prefix = pointer;
    loop {
        if let Some((key, original)) = moved.get_key_value(prefix) {
            return Some((key, original));
        }
        prefix = &prefix[..prefix.rfind('/')?];
    }
}

impl Upconverter<'_> {
    fn at(&self, pointer: &str) -> Location {
        Location::new(self.display.to_path_buf(), pointer.to_string())
    }

    /// Records that `up` (in the upconverted document) is `original` in the source document.
    fn moved(&self, up: &str, original: &str) {
        let mut moved = self.moved.borrow_mut();
        // Only where it differs from what the moved pointers above it imply.
        let implied = match moved_prefix(&moved, up) {
            Some((prefix, was)) => original.strip_prefix(was) == Some(&up[prefix.len()..]),
            None => up == original,
        };
        if !implied {
            moved.insert(up.to_string(), original.to_string());
        }
    }

    fn object<'v>(&self, v: &'v Value, pointer: &str) -> Result<&'v Map<String, Value>> {
        v.as_object()
            .ok_or_else(|| Error::spec(&self.at(pointer), format!("expected an object, found {}", json_kind(v))))
    }

    fn array<'v>(&self, v: &'v Value, pointer: &str) -> Result<&'v Vec<Value>> {
        v.as_array()
            .ok_or_else(|| Error::spec(&self.at(pointer), format!("expected an array, found {}", json_kind(v))))
    }

    fn document(&self, doc: &Value) -> Result<Value> {
        let doc = self.object(doc, "")?;
        match doc.get("swagger") {
            Some(Value::String(s)) if s == "2.0" => {}
            other => {
                return Err(Error::spec(
                    &self.at("/swagger"),
                    format!("unsupported Swagger version {other:?}"),
                ));
            }
        }
        let mut out = Map::new();
        out.insert("openapi".into(), json!("3.0.3"));
        let mut info = match doc.get("info") {
            Some(v) => self.object(v, "/info")?.clone(),
            None => Map::new(),
        };
        info.entry("title").or_insert(json!(""));
        info.entry("version").or_insert(json!(""));
        out.insert("info".into(), Value::Object(info));
        if let Some(Value::String(host)) = doc.get("host") {
            let scheme = doc
                .get("schemes")
                .and_then(Value::as_array)
                .and_then(|s| s.first())
                .and_then(Value::as_str)
                .unwrap_or("https");
            let base = doc.get("basePath").and_then(Value::as_str).unwrap_or("");
            out.insert("servers".into(), json!([{ "url": format!("{scheme}://{host}{base}") }]));
        }
        let mut paths = Map::new();
        if let Some(p) = doc.get("paths") {
            for (route, item) in self.object(p, "/paths")? {
                let ptr = format!("/paths/{}", escape_pointer(route));
                paths.insert(route.clone(), self.path_item(item, &ptr)?);
            }
        }
        out.insert("paths".into(), Value::Object(paths));
        let mut components = Map::new();
        if let Some(defs) = doc.get("definitions") {
            let mut schemas = Map::new();
            for (name, schema) in self.object(defs, "/definitions")? {
                let name_ptr = escape_pointer(name);
                let ptr = format!("/definitions/{name_ptr}");
                let up = format!("/components/schemas/{name_ptr}");
                schemas.insert(name.clone(), self.moved_schema(schema, &ptr, &up)?);
            }
            components.insert("schemas".into(), Value::Object(schemas));
        }
        if let Some(params) = doc.get("parameters") {
            let mut parameters = Map::new();
            let mut bodies = Map::new();
            for (name, p) in self.object(params, "/parameters")? {
                let name_ptr = escape_pointer(name);
                let ptr = format!("/parameters/{name_ptr}");
                let po = self.object(p, &ptr)?;
                if po.get("in").and_then(Value::as_str) == Some("body") {
                    let up = format!("/components/requestBodies/{name_ptr}");
                    bodies.insert(name.clone(), self.request_body(po, &ptr, &up)?);
                } else {
                    let up = format!("/components/parameters/{name_ptr}");
                    parameters.insert(name.clone(), self.parameter(po, &ptr, &up)?);
                }
            }
            components.insert("parameters".into(), Value::Object(parameters));
            components.insert("requestBodies".into(), Value::Object(bodies));
        }
        if let Some(responses) = doc.get("responses") {
            let mut out_r = Map::new();
            for (name, r) in self.object(responses, "/responses")? {
                let name_ptr = escape_pointer(name);
                let ptr = format!("/responses/{name_ptr}");
                let up = format!("/components/responses/{name_ptr}");
                out_r.insert(name.clone(), self.response(r, &ptr, &up)?);
            }
            components.insert("responses".into(), Value::Object(out_r));
        }
        out.insert("components".into(), Value::Object(components));
        if let Some(tags) = doc.get("tags") {
            out.insert("tags".into(), tags.clone());
        }
        for (k, v) in doc {
            if k.starts_with("x-") {
                out.insert(k.clone(), v.clone());
            }
        }
        Ok(Value::Object(out))
    }

    fn path_item(&self, item: &Value, pointer: &str) -> Result<Value> {
        let item = self.object(item, pointer)?;
        let mut out = Map::new();
        let mut shared_params = Vec::new();
        if let Some(params) = item.get("parameters") {
            let arr = self.array(params, &format!("{pointer}/parameters"))?;
            for (i, p) in arr.iter().enumerate() {
                shared_params.push((format!("{pointer}/parameters/{i}"), p.clone()));
            }
        }
        for (k, v) in item {
            let ptr = format!("{pointer}/{}", escape_pointer(k));
            match k.as_str() {
                "get" | "put" | "post" | "delete" | "options" | "head" | "patch" => {
                    out.insert(k.clone(), self.operation(v, &ptr, &shared_params)?);
                }
                "parameters" => {}
                other if other.starts_with("x-") => {
                    out.insert(k.clone(), v.clone());
                }
                "summary" | "description" => {
                    out.insert(k.clone(), v.clone());
                }
                _ => {}
            }
        }
        Ok(Value::Object(out))
    }

    /// An operation; its pointer is the same in both documents, what is inside it moves.
    fn operation(&self, op: &Value, pointer: &str, shared: &[(String, Value)]) -> Result<Value> {
        let op = self.object(op, pointer)?;
        let mut out = Map::new();
        for (k, v) in op {
            match k.as_str() {
                "operationId" | "summary" | "description" | "tags" | "deprecated" | "externalDocs" => {
                    out.insert(k.clone(), v.clone());
                }
                other if other.starts_with("x-") => {
                    out.insert(k.clone(), v.clone());
                }
                _ => {}
            }
        }
        let mut params: Vec<(String, Value)> = shared.to_vec();
        if let Some(p) = op.get("parameters") {
            let arr = self.array(p, &format!("{pointer}/parameters"))?;
            for (i, p) in arr.iter().enumerate() {
                params.push((format!("{pointer}/parameters/{i}"), p.clone()));
            }
        }
        let body_ptr = format!("{pointer}/requestBody");
        let mut out_params = Vec::new();
        let mut form = Map::new();
        for (ptr, p) in &params {
            let po = self.object(p, ptr)?;
            let param_ptr = format!("{pointer}/parameters/{}", out_params.len());
            if let Some(r) = po.get("$ref") {
                let r = r.as_str().ok_or_else(|| {
                    Error::spec(
                        &self.at(&format!("{ptr}/$ref")),
                        format!("`$ref` must be a string, found {}", json_kind(r)),
                    )
                })?;
                let target = self.referenced(r, ptr)?;
                let is_body = target.get("in").and_then(Value::as_str) == Some("body");
                let rewritten = self.rewrite_ref_as(r, if is_body { "requestBodies" } else { "parameters" });
                if is_body {
                    self.moved(&body_ptr, ptr);
                    out.insert("requestBody".into(), json!({ "$ref": rewritten }));
                } else {
                    self.moved(&param_ptr, ptr);
                    out_params.push(json!({ "$ref": rewritten }));
                }
                continue;
            }
            match po.get("in").and_then(Value::as_str) {
                Some("body") => {
                    out.insert("requestBody".into(), self.request_body(po, ptr, &body_ptr)?);
                }
                Some("formData") => {
                    let name = po.get("name").and_then(Value::as_str).unwrap_or_default();
                    let up = format!(
                        "{body_ptr}/content/application~1x-www-form-urlencoded/schema/properties/{}",
                        escape_pointer(name)
                    );
                    form.insert(name.to_string(), self.simple_schema(po, ptr, &up)?);
                }
                _ => out_params.push(self.parameter(po, ptr, &param_ptr)?),
            }
        }
        if !form.is_empty() {
            out.insert(
                "requestBody".into(),
                json!({ "content": { "application/x-www-form-urlencoded": {
                    "schema": { "type": "object", "properties": form } } } }),
            );
        }
        if !out_params.is_empty() {
            out.insert("parameters".into(), Value::Array(out_params));
        }
        let mut responses = Map::new();
        if let Some(r) = op.get("responses") {
            for (code, resp) in self.object(r, &format!("{pointer}/responses"))? {
                let ptr = format!("{pointer}/responses/{}", escape_pointer(code));
                responses.insert(code.clone(), self.response(resp, &ptr, &ptr)?);
            }
        }
        out.insert("responses".into(), Value::Object(responses));
        Ok(Value::Object(out))
    }

    /// The raw Swagger object a `$ref` (written in this document) points at.
    fn referenced(&self, reference: &str, pointer: &str) -> Result<&Value> {
        let (file_part, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let file = if file_part.is_empty() {
            self.path.to_path_buf()
        } else {
            normalize(&self.path.parent().unwrap_or(Path::new("")).join(file_part))
        };
        let err = |message: &str| Error::Ref {
            at: self.at(pointer),
            reference: reference.to_string(),
            message: message.to_string(),
        };
        let doc = self.raw.get(&file).ok_or_else(|| err("the file is not loaded"))?;
        doc.pointer(fragment).ok_or_else(|| err("the pointer does not resolve"))
    }

    /// A body parameter (at `pointer`) as the request body at `up`.
    fn request_body(&self, p: &Map<String, Value>, pointer: &str, up: &str) -> Result<Value> {
        self.moved(up, pointer);
        let mut out = Map::new();
        if let Some(d) = p.get("description") {
            out.insert("description".into(), d.clone());
        }
        if let Some(r) = p.get("required") {
            out.insert("required".into(), r.clone());
        }
        let schema = p
            .get("schema")
            .ok_or_else(|| Error::spec(&self.at(pointer), "a body parameter needs a `schema`"))?;
        let schema = self.moved_schema(
            schema,
            &format!("{pointer}/schema"),
            &format!("{up}/content/application~1json/schema"),
        )?;
        out.insert("content".into(), json!({ "application/json": { "schema": schema } }));
        if let Some(name) = p.get("name") {
            out.insert("x-ms-requestBody-name".into(), name.clone());
        }
        for (k, v) in p {
            if k.starts_with("x-") {
                out.insert(k.clone(), v.clone());
            }
        }
        Ok(Value::Object(out))
    }

    /// A non-body parameter (at `pointer`) as the parameter at `up`.
    fn parameter(&self, p: &Map<String, Value>, pointer: &str, up: &str) -> Result<Value> {
        self.moved(up, pointer);
        let mut out = Map::new();
        for k in ["name", "in", "description", "required", "deprecated"] {
            if let Some(v) = p.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
        if !out.contains_key("name") {
            return Err(Error::spec(&self.at(pointer), "a parameter needs a `name`"));
        }
        match p.get("in") {
            Some(Value::String(s)) if s == "path" => {
                out.insert("required".into(), json!(true));
            }
            Some(Value::String(s)) if matches!(s.as_str(), "query" | "header" | "cookie") => {}
            other => {
                let found = match other {
                    Some(Value::String(s)) => format!("{s:?}"),
                    Some(v) => json_kind(v).to_string(),
                    None => "nothing".to_string(),
                };
                return Err(Error::spec(
                    &self.at(&format!("{pointer}/in")),
                    format!("a parameter's `in` must be one of body, formData, header, path, query; found {found}"),
                ));
            }
        }
        out.insert(
            "schema".into(),
            self.simple_schema(p, pointer, &format!("{up}/schema"))?,
        );
        for (k, v) in p {
            if k.starts_with("x-") {
                out.insert(k.clone(), v.clone());
            }
        }
        Ok(Value::Object(out))
    }

    /// The schema of a non-body parameter or a header (at `pointer`): its type keys moved under `schema`
    /// (at `up`).
    fn simple_schema(&self, p: &Map<String, Value>, pointer: &str, up: &str) -> Result<Value> {
        let mut schema = Map::new();
        for k in [
            "type",
            "format",
            "items",
            "default",
            "maximum",
            "exclusiveMaximum",
            "minimum",
            "exclusiveMinimum",
            "maxLength",
            "minLength",
            "pattern",
            "maxItems",
            "minItems",
            "uniqueItems",
            "enum",
            "multipleOf",
            "x-ms-enum",
        ] {
            if let Some(v) = p.get(k) {
                schema.insert(k.into(), v.clone());
            }
        }
        if schema.get("type").and_then(Value::as_str) == Some("file") {
            schema.insert("type".into(), json!("string"));
            schema.insert("format".into(), json!("binary"));
        }
        self.moved_schema(&Value::Object(schema), pointer, up)
    }

    /// A response (at `pointer`) as the response at `up`.
    fn response(&self, r: &Value, pointer: &str, up: &str) -> Result<Value> {
        self.moved(up, pointer);
        let r = self.object(r, pointer)?;
        if let Some(reference) = r.get("$ref") {
            let reference = reference.as_str().ok_or_else(|| {
                Error::spec(
                    &self.at(&format!("{pointer}/$ref")),
                    format!("`$ref` must be a string, found {}", json_kind(reference)),
                )
            })?;
            return Ok(json!({ "$ref": self.rewrite_ref_as(reference, "responses") }));
        }
        let mut out = Map::new();
        out.insert("description".into(), r.get("description").cloned().unwrap_or(json!("")));
        if let Some(s) = r.get("schema") {
            let schema = self.moved_schema(
                s,
                &format!("{pointer}/schema"),
                &format!("{up}/content/application~1json/schema"),
            )?;
            out.insert("content".into(), json!({ "application/json": { "schema": schema } }));
        }
        if let Some(h) = r.get("headers") {
            let mut headers = Map::new();
            for (name, header) in self.object(h, &format!("{pointer}/headers"))? {
                let hp = format!("{pointer}/headers/{}", escape_pointer(name));
                let hup = format!("{up}/headers/{}", escape_pointer(name));
                self.moved(&hup, &hp);
                let ho = self.object(header, &hp)?;
                let mut out_h = Map::new();
                if let Some(d) = ho.get("description") {
                    out_h.insert("description".into(), d.clone());
                }
                out_h.insert("schema".into(), self.simple_schema(ho, &hp, &format!("{hup}/schema"))?);
                headers.insert(name.clone(), Value::Object(out_h));
            }
            out.insert("headers".into(), Value::Object(headers));
        }
        for (k, v) in r {
            if k.starts_with("x-") {
                out.insert(k.clone(), v.clone());
            }
        }
        Ok(Value::Object(out))
    }

    /// Rewrites a Swagger `$ref` into its OpenAPI 3.0 form. `parameter_kind` says where a `#/parameters/…`
    /// target lands (`parameters` or `requestBodies`).
    fn rewrite_ref_as(&self, reference: &str, parameter_kind: &str) -> String {
        let (file_part, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        // A reference into an OpenAPI 3.0 document is already in its final form.
        if !file_part.is_empty() {
            let file = normalize(&self.path.parent().unwrap_or(Path::new("")).join(file_part));
            if self.raw.get(&file).is_some_and(|d| d.get("openapi").is_some()) {
                return reference.to_string();
            }
        }
        let new_fragment = if let Some(rest) = fragment.strip_prefix("/definitions/") {
            format!("/components/schemas/{rest}")
        } else if let Some(rest) = fragment.strip_prefix("/parameters/") {
            format!("/components/{parameter_kind}/{rest}")
        } else if let Some(rest) = fragment.strip_prefix("/responses/") {
            format!("/components/responses/{rest}")
        } else {
            fragment.to_string()
        };
        if new_fragment.is_empty() && !reference.contains('#') {
            file_part.to_string()
        } else {
            format!("{file_part}#{new_fragment}")
        }
    }

    /// A schema at `pointer` in the source document that lands at `up` in the upconverted one, where the
    /// upconversion moves it (so not where its parent schema's place implies).
    fn moved_schema(&self, s: &Value, pointer: &str, up: &str) -> Result<Value> {
        self.moved(up, pointer);
        self.schema(s, pointer, up)
    }

    /// A schema at `pointer` in the source document, which lands at `up` in the upconverted one.
    fn schema(&self, s: &Value, pointer: &str, up: &str) -> Result<Value> {
        let obj = match s {
            Value::Object(o) => o,
            Value::Bool(_) => return Ok(s.clone()),
            _ => {
                return Err(Error::spec(
                    &self.at(pointer),
                    format!("a schema must be an object, found {}", json_kind(s)),
                ));
            }
        };
        if let Some(r) = obj.get("$ref") {
            let ref_ptr = format!("{pointer}/$ref");
            let r = r.as_str().ok_or_else(|| {
                Error::spec(
                    &self.at(&ref_ptr),
                    format!("`$ref` must be a string, found {}", json_kind(r)),
                )
            })?;
            if r.is_empty() {
                return Err(Error::spec(&self.at(&ref_ptr), "an empty `$ref`"));
            }
            let rewritten = self.rewrite_ref_as(r, "parameters");
            let siblings: Vec<(&String, &Value)> = obj.iter().filter(|(k, _)| k.as_str() != "$ref").collect();
            if siblings.is_empty() {
                return Ok(json!({ "$ref": rewritten }));
            }
            // OpenAPI 3.0 ignores keys beside `$ref`; keep them by wrapping the reference in `allOf`. The
            // wrapped reference's site is the schema itself.
            self.moved(&format!("{up}/allOf/0"), pointer);
            let mut out = Map::new();
            out.insert("allOf".into(), json!([{ "$ref": rewritten }]));
            for (k, v) in siblings {
                self.schema_key(&mut out, k, v, pointer, up)?;
            }
            return Ok(Value::Object(out));
        }
        let mut out = Map::new();
        for (k, v) in obj {
            self.schema_key(&mut out, k, v, pointer, up)?;
        }
        if out.get("type").and_then(Value::as_str) == Some("file") {
            out.insert("type".into(), json!("string"));
            out.insert("format".into(), json!("binary"));
        }
        Ok(Value::Object(out))
    }

    fn schema_key(&self, out: &mut Map<String, Value>, k: &str, v: &Value, pointer: &str, up: &str) -> Result<()> {
        // Pointers are made only for the keys that need them: this runs for every key of every schema.
        let ptr = || format!("{pointer}/{}", escape_pointer(k));
        let up_ptr = || format!("{up}/{}", escape_pointer(k));
        match k {
            "properties" => {
                let (ptr, up_ptr) = (ptr(), up_ptr());
                let mut props = Map::new();
                for (name, ps) in self.object(v, &ptr)? {
                    let name_ptr = escape_pointer(name);
                    props.insert(
                        name.clone(),
                        self.schema(ps, &format!("{ptr}/{name_ptr}"), &format!("{up_ptr}/{name_ptr}"))?,
                    );
                }
                out.insert(k.into(), Value::Object(props));
            }
            "items" | "not" => {
                out.insert(k.into(), self.schema(v, &ptr(), &up_ptr())?);
            }
            "additionalProperties" => {
                let converted = match v {
                    Value::Bool(_) => v.clone(),
                    _ => self.schema(v, &ptr(), &up_ptr())?,
                };
                out.insert(k.into(), converted);
            }
            "allOf" | "anyOf" | "oneOf" => {
                let (ptr, up_ptr) = (ptr(), up_ptr());
                let arr = self.array(v, &ptr)?;
                // `allOf` beside a `$ref` is appended to the `allOf` that wraps the reference.
                let offset = match out.get(k) {
                    Some(Value::Array(existing)) => existing.len(),
                    _ => 0,
                };
                let mut items = Vec::new();
                for (i, item) in arr.iter().enumerate() {
                    let (item_ptr, item_up) = (format!("{ptr}/{i}"), format!("{up_ptr}/{}", i + offset));
                    items.push(if offset == 0 {
                        self.schema(item, &item_ptr, &item_up)?
                    } else {
                        self.moved_schema(item, &item_ptr, &item_up)?
                    });
                }
                if let Some(Value::Array(existing)) = out.get_mut(k) {
                    existing.extend(items);
                } else {
                    out.insert(k.into(), Value::Array(items));
                }
            }
            "x-nullable" => {
                out.insert("nullable".into(), v.clone());
            }
            "type" => {
                let name = v.as_str().ok_or_else(|| {
                    Error::spec(
                        &self.at(&ptr()),
                        format!("`type` must be a string, found {}", json_kind(v)),
                    )
                })?;
                if !SCHEMA_TYPES.contains(&name) {
                    return Err(Error::spec(
                        &self.at(&ptr()),
                        format!("unknown type {name:?} (expected one of {})", SCHEMA_TYPES.join(", ")),
                    ));
                }
                out.insert(k.into(), v.clone());
            }
            "discriminator" => {
                let name = v.as_str().ok_or_else(|| {
                    Error::spec(
                        &self.at(&ptr()),
                        format!(
                            "a Swagger 2.0 discriminator must be a property name (a string), found {}",
                            json_kind(v)
                        ),
                    )
                })?;
                out.insert(k.into(), json!({ "propertyName": name }));
            }
            "$ref" => {}
            _ => {
                out.insert(k.into(), v.clone());
            }
        }
        Ok(())
    }
}
