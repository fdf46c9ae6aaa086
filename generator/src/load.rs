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
//! Errors name the file and the JSON pointer *of the original document* (so `#/definitions/Foo`, not
//! `#/components/schemas/Foo`, for a Swagger 2.0 file).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

use openapiv3::{OpenAPI, ReferenceOr, Schema};
use serde_json::{Map, Value, json};

use crate::error::{Error, Location, Result, escape_pointer, unescape_pointer};

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
}

impl Document {
    /// Maps a pointer into the upconverted document back to the original document's terms.
    pub fn original_pointer(&self, pointer: &str) -> String {
        if self.format == SourceFormat::OpenApi3 {
            return pointer.to_string();
        }
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
                    .ok_or_else(|| Error::spec(&self.location(pointer), "no such schema"));
            }
        }
        let value = self
            .raw
            .pointer(pointer)
            .ok_or_else(|| Error::spec(&self.location(pointer), "pointer does not resolve"))?;
        serde_path_to_error::deserialize::<_, ReferenceOr<Schema>>(value).map_err(|e| {
            let inner = path_to_pointer(e.path());
            Error::spec(
                &self.location(&format!("{pointer}{inner}")),
                format!("not a schema: {}", e.inner()),
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
}

/// A parsed `$ref`: the document it points into and the pointer inside it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Target {
    pub file: PathBuf,
    pub pointer: String,
}

impl SpecSet {
    /// Loads `files` (relative to `spec_root` unless absolute) and everything they reference.
    pub fn load(spec_root: &Path, files: &[PathBuf]) -> Result<SpecSet> {
        let root = normalize(spec_root);
        let mut raw: BTreeMap<PathBuf, Value> = BTreeMap::new();
        let mut pending: Vec<(PathBuf, Option<Location>)> = Vec::new();
        let mut roots = Vec::new();
        for f in files {
            let p = normalize(&root.join(f));
            roots.push(p.clone());
            pending.push((p, None));
        }
        while let Some((path, referrer)) = pending.pop() {
            if raw.contains_key(&path) {
                continue;
            }
            let display = display_path(&root, &path);
            let text = std::fs::read_to_string(&path).map_err(|source| match &referrer {
                Some(at) => Error::Ref {
                    at: at.clone(),
                    reference: display.display().to_string(),
                    message: format!("cannot read referenced file: {source}"),
                },
                None => Error::io(display.clone(), source),
            })?;
            let value = parse_json(&text, &display)?;
            let mut refs = Vec::new();
            collect_external_refs(&value, "", &mut refs);
            for (pointer, reference) in refs {
                let file_part = reference.split('#').next().unwrap_or_default();
                let target = normalize(&path.parent().unwrap_or(Path::new("")).join(file_part));
                if !raw.contains_key(&target) {
                    pending.push((target, Some(Location::new(display.clone(), pointer))));
                }
            }
            raw.insert(path, value);
        }
        let mut docs = BTreeMap::new();
        for (path, value) in &raw {
            let display = display_path(&root, path);
            let (format, oas3) = if value.get("swagger").is_some() {
                (SourceFormat::Swagger2, upconvert(value, path, &display, &raw)?)
            } else if value.get("openapi").is_some() {
                (SourceFormat::OpenApi3, value.clone())
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
            let openapi: OpenAPI = serde_path_to_error::deserialize(&oas3).map_err(|e| {
                let pointer = path_to_pointer(e.path());
                let doc_for_ptr = Document {
                    path: path.clone(),
                    display: display.clone(),
                    format,
                    openapi: OpenAPI::default(),
                    raw: Value::Null,
                };
                Error::spec(&doc_for_ptr.location(&pointer), e.inner().to_string())
            })?;
            docs.insert(
                path.clone(),
                Document {
                    path: path.clone(),
                    display,
                    format,
                    openapi,
                    raw: oas3,
                },
            );
        }
        Ok(SpecSet { root, roots, docs })
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
        if !self.docs.contains_key(&file) {
            return Err(Error::Ref {
                at: at.clone(),
                reference: reference.to_string(),
                message: "the file is not loaded".into(),
            });
        }
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(Error::Ref {
                at: at.clone(),
                reference: reference.to_string(),
                message: "the fragment is not a JSON pointer".into(),
            });
        }
        Ok(Target {
            file,
            pointer: fragment.to_string(),
        })
    }

    /// Follows `reference` (written in `from`) to a schema, following chains of bare `$ref`s.
    /// Returns the final target and the schema there. A chain that comes back to itself is an error.
    pub fn resolve_schema(&self, from: &Path, reference: &str, at: &Location) -> Result<(Target, Schema)> {
        let mut seen = BTreeSet::new();
        let mut target = self.target(from, reference, at)?;
        let mut reference = reference.to_string();
        let mut at = at.clone();
        loop {
            if !seen.insert(target.clone()) {
                return Err(Error::Ref {
                    at,
                    reference,
                    message: "a cycle of $refs that never reaches a schema".into(),
                });
            }
            let doc = self.docs.get(&target.file).ok_or_else(|| Error::Ref {
                at: at.clone(),
                reference: reference.clone(),
                message: "the file is not loaded".into(),
            })?;
            let schema = doc.schema_at(&target.pointer).map_err(|e| match e {
                Error::Spec { message, .. } => Error::Ref {
                    at: at.clone(),
                    reference: reference.clone(),
                    message,
                },
                other => other,
            })?;
            match schema {
                ReferenceOr::Item(s) => return Ok((target, s)),
                ReferenceOr::Reference { reference: next } => {
                    at = doc.location(&target.pointer);
                    let next_target = self.target(&target.file, &next, &at)?;
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

fn parse_json(text: &str, display: &Path) -> Result<Value> {
    serde_json::from_str(text).map_err(|e| Error::Json {
        at: Location::new(display.to_path_buf(), ""),
        message: format!("{e} (line {}, column {})", e.line(), e.column()),
    })
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
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
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

fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("/{index}")),
            serde_path_to_error::Segment::Map { key } => {
                out.push('/');
                out.push_str(&escape_pointer(key));
            }
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

/// Every `$ref` that names another file, outside `x-ms-examples` (which point at example payloads).
fn collect_external_refs(value: &Value, pointer: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "x-ms-examples" {
                    continue;
                }
                let child = format!("{pointer}/{}", escape_pointer(k));
                if k == "$ref" {
                    if let Value::String(r) = v {
                        if !r.starts_with('#') {
                            out.push((child, r.clone()));
                        }
                    }
                } else {
                    collect_external_refs(v, &child, out);
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

struct Upconverter<'a> {
    path: &'a Path,
    display: &'a Path,
    raw: &'a BTreeMap<PathBuf, Value>,
}

/// Upconverts one Swagger 2.0 document (`doc`, read from `path`) into OpenAPI 3.0 JSON. `raw` holds every
/// loaded document, so that references to parameters in other files can be told apart (body or not).
pub fn upconvert(doc: &Value, path: &Path, display: &Path, raw: &BTreeMap<PathBuf, Value>) -> Result<Value> {
    let cx = Upconverter { path, display, raw };
    cx.document(doc)
}

impl Upconverter<'_> {
    fn at(&self, pointer: &str) -> Location {
        Location::new(self.display.to_path_buf(), pointer.to_string())
    }

    fn object<'v>(&self, v: &'v Value, pointer: &str) -> Result<&'v Map<String, Value>> {
        v.as_object()
            .ok_or_else(|| Error::spec(&self.at(pointer), "expected an object"))
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
                let ptr = format!("/definitions/{}", escape_pointer(name));
                schemas.insert(name.clone(), self.schema(schema, &ptr)?);
            }
            components.insert("schemas".into(), Value::Object(schemas));
        }
        if let Some(params) = doc.get("parameters") {
            let mut parameters = Map::new();
            let mut bodies = Map::new();
            for (name, p) in self.object(params, "/parameters")? {
                let ptr = format!("/parameters/{}", escape_pointer(name));
                let po = self.object(p, &ptr)?;
                if po.get("in").and_then(Value::as_str) == Some("body") {
                    bodies.insert(name.clone(), self.request_body(po, &ptr)?);
                } else {
                    parameters.insert(name.clone(), self.parameter(po, &ptr)?);
                }
            }
            components.insert("parameters".into(), Value::Object(parameters));
            components.insert("requestBodies".into(), Value::Object(bodies));
        }
        if let Some(responses) = doc.get("responses") {
            let mut out_r = Map::new();
            for (name, r) in self.object(responses, "/responses")? {
                let ptr = format!("/responses/{}", escape_pointer(name));
                out_r.insert(name.clone(), self.response(r, &ptr)?);
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
            let arr = params
                .as_array()
                .ok_or_else(|| Error::spec(&self.at(&format!("{pointer}/parameters")), "expected an array"))?;
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
            let arr = p
                .as_array()
                .ok_or_else(|| Error::spec(&self.at(&format!("{pointer}/parameters")), "expected an array"))?;
            for (i, p) in arr.iter().enumerate() {
                params.push((format!("{pointer}/parameters/{i}"), p.clone()));
            }
        }
        let mut out_params = Vec::new();
        let mut form = Map::new();
        for (ptr, p) in &params {
            let po = self.object(p, ptr)?;
            if let Some(r) = po.get("$ref") {
                let r = r
                    .as_str()
                    .ok_or_else(|| Error::spec(&self.at(ptr), "`$ref` must be a string"))?;
                let target = self.referenced(r, ptr)?;
                let is_body = target.get("in").and_then(Value::as_str) == Some("body");
                let rewritten = self.rewrite_ref_as(r, if is_body { "requestBodies" } else { "parameters" });
                if is_body {
                    out.insert("requestBody".into(), json!({ "$ref": rewritten }));
                } else {
                    out_params.push(json!({ "$ref": rewritten }));
                }
                continue;
            }
            match po.get("in").and_then(Value::as_str) {
                Some("body") => {
                    out.insert("requestBody".into(), self.request_body(po, ptr)?);
                }
                Some("formData") => {
                    let name = po.get("name").and_then(Value::as_str).unwrap_or_default();
                    form.insert(name.to_string(), self.simple_schema(po, ptr)?);
                }
                _ => out_params.push(self.parameter(po, ptr)?),
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
                responses.insert(code.clone(), self.response(resp, &ptr)?);
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

    fn request_body(&self, p: &Map<String, Value>, pointer: &str) -> Result<Value> {
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
        let schema = self.schema(schema, &format!("{pointer}/schema"))?;
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

    fn parameter(&self, p: &Map<String, Value>, pointer: &str) -> Result<Value> {
        let mut out = Map::new();
        for k in ["name", "in", "description", "required", "deprecated"] {
            if let Some(v) = p.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
        if !out.contains_key("name") {
            return Err(Error::spec(&self.at(pointer), "a parameter needs a `name`"));
        }
        match p.get("in").and_then(Value::as_str) {
            Some("path") => {
                out.insert("required".into(), json!(true));
            }
            Some("query" | "header" | "cookie") => {}
            other => {
                return Err(Error::spec(
                    &self.at(&format!("{pointer}/in")),
                    format!("unknown parameter location {other:?}"),
                ));
            }
        }
        out.insert("schema".into(), self.simple_schema(p, pointer)?);
        for (k, v) in p {
            if k.starts_with("x-") {
                out.insert(k.clone(), v.clone());
            }
        }
        Ok(Value::Object(out))
    }

    /// The schema of a non-body parameter or a header: its type keys moved under `schema`.
    fn simple_schema(&self, p: &Map<String, Value>, pointer: &str) -> Result<Value> {
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
        self.schema(&Value::Object(schema), pointer)
    }

    fn response(&self, r: &Value, pointer: &str) -> Result<Value> {
        let r = self.object(r, pointer)?;
        if let Some(reference) = r.get("$ref").and_then(Value::as_str) {
            return Ok(json!({ "$ref": self.rewrite_ref_as(reference, "responses") }));
        }
        let mut out = Map::new();
        out.insert("description".into(), r.get("description").cloned().unwrap_or(json!("")));
        if let Some(s) = r.get("schema") {
            let schema = self.schema(s, &format!("{pointer}/schema"))?;
            out.insert("content".into(), json!({ "application/json": { "schema": schema } }));
        }
        if let Some(h) = r.get("headers") {
            let mut headers = Map::new();
            for (name, header) in self.object(h, &format!("{pointer}/headers"))? {
                let hp = format!("{pointer}/headers/{}", escape_pointer(name));
                let ho = self.object(header, &hp)?;
                let mut out_h = Map::new();
                if let Some(d) = ho.get("description") {
                    out_h.insert("description".into(), d.clone());
                }
                out_h.insert("schema".into(), self.simple_schema(ho, &hp)?);
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

    fn schema(&self, s: &Value, pointer: &str) -> Result<Value> {
        let obj = match s {
            Value::Object(o) => o,
            Value::Bool(_) => return Ok(s.clone()),
            _ => return Err(Error::spec(&self.at(pointer), "a schema must be an object")),
        };
        if let Some(r) = obj.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| Error::spec(&self.at(&format!("{pointer}/$ref")), "`$ref` must be a string"))?;
            let rewritten = self.rewrite_ref_as(r, "parameters");
            let siblings: Vec<(&String, &Value)> = obj.iter().filter(|(k, _)| k.as_str() != "$ref").collect();
            if siblings.is_empty() {
                return Ok(json!({ "$ref": rewritten }));
            }
            // OpenAPI 3.0 ignores keys beside `$ref`; keep them by wrapping the reference in `allOf`.
            let mut out = Map::new();
            out.insert("allOf".into(), json!([{ "$ref": rewritten }]));
            for (k, v) in siblings {
                self.schema_key(&mut out, k, v, pointer)?;
            }
            return Ok(Value::Object(out));
        }
        let mut out = Map::new();
        for (k, v) in obj {
            self.schema_key(&mut out, k, v, pointer)?;
        }
        if out.get("type").and_then(Value::as_str) == Some("file") {
            out.insert("type".into(), json!("string"));
            out.insert("format".into(), json!("binary"));
        }
        Ok(Value::Object(out))
    }

    fn schema_key(&self, out: &mut Map<String, Value>, k: &str, v: &Value, pointer: &str) -> Result<()> {
        let ptr = format!("{pointer}/{}", escape_pointer(k));
        match k {
            "properties" => {
                let mut props = Map::new();
                for (name, ps) in self.object(v, &ptr)? {
                    props.insert(
                        name.clone(),
                        self.schema(ps, &format!("{ptr}/{}", escape_pointer(name)))?,
                    );
                }
                out.insert(k.into(), Value::Object(props));
            }
            "items" | "not" => {
                out.insert(k.into(), self.schema(v, &ptr)?);
            }
            "additionalProperties" => {
                let converted = match v {
                    Value::Bool(_) => v.clone(),
                    _ => self.schema(v, &ptr)?,
                };
                out.insert(k.into(), converted);
            }
            "allOf" | "anyOf" | "oneOf" => {
                let arr = v
                    .as_array()
                    .ok_or_else(|| Error::spec(&self.at(&ptr), "expected an array"))?;
                let mut items = Vec::new();
                for (i, item) in arr.iter().enumerate() {
                    items.push(self.schema(item, &format!("{ptr}/{i}"))?);
                }
                // `allOf` beside the `$ref`-wrapping `allOf` of the same schema: append.
                if let Some(Value::Array(existing)) = out.get_mut(k) {
                    existing.extend(items);
                } else {
                    out.insert(k.into(), Value::Array(items));
                }
            }
            "x-nullable" => {
                out.insert("nullable".into(), v.clone());
            }
            "discriminator" => {
                let name = v.as_str().ok_or_else(|| {
                    Error::spec(&self.at(&ptr), "a Swagger 2.0 discriminator must be a property name")
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
