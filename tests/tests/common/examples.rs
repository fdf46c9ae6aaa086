//! The example payloads under the spec root, found through each operation's `x-ms-examples`: every request
//! body whose schema is a generated resource's payload type (its PUT body or GET response), and every response
//! body that is one (or a list of them, `value: [...]`), in every configured group and version.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use armgen::Config;
use armgen::ir::{Ir, Property, TypeKind, TypeRef};
use armgen::load::{SpecSet, Target};
use openapiv3::ReferenceOr;
use serde_json::{Map, Value};

/// One resource payload from an example file.
pub struct Payload {
    pub group: String,
    pub version: String,
    pub example: PathBuf,
    /// e.g. `put /subscriptions/…/managedClusters/{resourceName} request`.
    pub what: String,
    pub kind: String,
    pub json: Value,
    /// A request body (as opposed to a response body).
    pub request: bool,
}

impl Payload {
    pub fn file_name(&self) -> String {
        self.example
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub fn describe(&self) -> String {
        format!(
            "{} {} ({}/{} {})",
            self.file_name(),
            self.what,
            self.group,
            self.version,
            self.kind
        )
    }
}

/// Every resource payload of every configured version (`azure-arm.yaml`), of every group. Each version is loaded
/// as generation loads it (`armgen::pipeline::builder::load_version`: the group's opaque entries, its `resources`
/// selection and renames), so only the payloads of generated kinds count, under their generated kind names. A
/// payload is a resource's when its schema is the resource's PUT body or its GET response (they differ for role
/// assignments: `RoleAssignmentCreateParameters` and `RoleAssignment`). Panics (a test failure) when an example
/// file present in an `examples/` folder is not referenced by its spec, or is not JSON, or when a version has
/// example files but no resource payload among them.
pub fn all_payloads(root: &Path) -> Vec<Payload> {
    let config = Config::load(&super::workspace().join("azure-arm.yaml")).expect("config");
    let mut out = Vec::new();
    for (group_name, group) in &config.groups {
        for (kube, version) in &group.versions {
            let (specs, resources) = armgen::pipeline::builder::load_version(root, group, version)
                .unwrap_or_else(|e| panic!("{group_name}/{kube}: {e}"));
            let kinds: BTreeMap<Target, String> = resources
                .iter()
                .flat_map(|r| {
                    std::iter::once(&r.put_body)
                        .chain(&r.get_response)
                        .map(|t| (t.clone(), r.name.clone()))
                })
                .collect();
            let mut referenced: BTreeSet<PathBuf> = BTreeSet::new();
            let before = out.len();
            for spec_file in &specs.roots {
                let doc = specs.doc(spec_file).expect("root doc");
                let dir = spec_file.parent().expect("spec dir").to_path_buf();
                for (route, item) in doc.openapi.paths.iter() {
                    let ReferenceOr::Item(item) = item else { continue };
                    for (method, op) in item.iter() {
                        let Some(Value::Object(examples)) = op.extensions.get("x-ms-examples") else {
                            continue;
                        };
                        for example in examples.values() {
                            let Some(rel) = example.get("$ref").and_then(Value::as_str) else {
                                continue;
                            };
                            let path = armgen::load::normalize(&dir.join(rel));
                            if !path.exists() {
                                // Listed as absent in the spec root's README.
                                continue;
                            }
                            referenced.insert(path.clone());
                            let text = std::fs::read_to_string(&path).expect("read example");
                            let ex: Value = serde_json::from_str(&text)
                                .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", path.display()));
                            let site = Site {
                                specs: &specs,
                                file: spec_file,
                                kinds: &kinds,
                                group: group_name,
                                version: kube,
                            };
                            site.collect(route, method, op, &path, &ex, &mut out);
                        }
                    }
                }
            }
            // A version's spec folder may have no `examples/` (nothing to check there, and no payloads).
            let mut example_files = 0;
            for spec_file in &specs.roots {
                let examples_dir = spec_file.parent().expect("dir").join("examples");
                let Ok(entries) = std::fs::read_dir(&examples_dir) else {
                    assert!(!examples_dir.exists(), "{}: unreadable", examples_dir.display());
                    continue;
                };
                for entry in entries {
                    let p = armgen::load::normalize(&entry.expect("entry").path());
                    assert!(
                        referenced.contains(&p),
                        "{} is not referenced by {}",
                        p.display(),
                        spec_file.display()
                    );
                    example_files += 1;
                }
            }
            assert!(
                out.len() > before || example_files == 0,
                "{group_name}/{kube}: no resource payloads found in its {example_files} example files"
            );
        }
    }
    out
}

struct Site<'a> {
    specs: &'a SpecSet,
    file: &'a Path,
    kinds: &'a BTreeMap<Target, String>,
    group: &'a str,
    version: &'a str,
}

impl Site<'_> {
    /// The kind of a schema written in `file` (`$ref` into a resource's payload type), if any.
    fn kind_of(&self, file: &Path, schema: &ReferenceOr<openapiv3::Schema>) -> Option<String> {
        let ReferenceOr::Reference { reference } = schema else {
            return None;
        };
        let at = armgen::Location::new(file, "");
        let (target, _) = self.specs.resolve_schema(file, reference, &at).ok()?;
        self.kinds.get(&target).cloned()
    }

    /// The operation's request body and the file it is written in (its schema's `$ref`s are relative to that
    /// file): inline, or a `$ref` (a Swagger `$ref: #/parameters/X` body parameter is upconverted to a `$ref`
    /// into `components/requestBodies`), resolved as discovery resolves a PUT body. A `$ref` that does not
    /// resolve to a request body is a test failure.
    fn request_body(&self, op: &openapiv3::Operation) -> Option<(openapiv3::RequestBody, PathBuf)> {
        match op.request_body.as_ref()? {
            ReferenceOr::Item(body) => Some((body.clone(), self.file.to_path_buf())),
            ReferenceOr::Reference { reference } => {
                let at = armgen::Location::new(self.file, "");
                let target = self
                    .specs
                    .target(self.file, reference, &at)
                    .unwrap_or_else(|e| panic!("request body {reference}: {e}"));
                let value = self
                    .specs
                    .doc(&target.file)
                    .and_then(|d| d.raw.pointer(&target.pointer))
                    .unwrap_or_else(|| panic!("request body {reference}: not loaded"));
                let body = serde_json::from_value(value.clone())
                    .unwrap_or_else(|e| panic!("request body {reference}: not a request body: {e}"));
                Some((body, target.file))
            }
        }
    }

    /// The kind of the items of a list schema (`{value: [Kind]}`), if any.
    fn list_kind_of(&self, schema: &ReferenceOr<openapiv3::Schema>) -> Option<String> {
        let ReferenceOr::Reference { reference } = schema else {
            return None;
        };
        let at = armgen::Location::new(self.file, "");
        let (target, resolved) = self.specs.resolve_schema(self.file, reference, &at).ok()?;
        let raw = serde_json::to_value(&resolved).ok()?;
        let items = raw.pointer("/properties/value/items/$ref")?.as_str()?;
        let (item_target, _) = self.specs.resolve_schema(&target.file, items, &at).ok()?;
        self.kinds.get(&item_target).cloned()
    }

    fn payload(&self, example: &Path, what: String, kind: String, json: &Value, request: bool) -> Payload {
        Payload {
            group: self.group.to_string(),
            version: self.version.to_string(),
            example: example.to_path_buf(),
            what,
            kind,
            json: json.clone(),
            request,
        }
    }

    fn collect(
        &self,
        route: &str,
        method: &str,
        op: &openapiv3::Operation,
        example: &Path,
        ex: &Value,
        out: &mut Vec<Payload>,
    ) {
        if let Some((body, body_file)) = self.request_body(op) {
            let name = body
                .extensions
                .get("x-ms-requestBody-name")
                .and_then(Value::as_str)
                .unwrap_or("parameters");
            if let Some(schema) = body.content.get("application/json").and_then(|m| m.schema.as_ref())
                && let (Some(kind), Some(json)) = (
                    self.kind_of(&body_file, schema),
                    ex.pointer(&format!("/parameters/{name}")),
                )
            {
                out.push(self.payload(example, format!("{method} {route} request"), kind, json, true));
            }
        }
        let Some(Value::Object(responses)) = ex.get("responses") else {
            return;
        };
        for (code, resp) in responses {
            let Some(body) = resp.get("body") else { continue };
            let Ok(code_num) = code.parse::<u16>() else { continue };
            let Some(ReferenceOr::Item(r)) = op.responses.responses.get(&openapiv3::StatusCode::Code(code_num)) else {
                continue;
            };
            let Some(schema) = r.content.get("application/json").and_then(|m| m.schema.as_ref()) else {
                continue;
            };
            if let Some(kind) = self.kind_of(self.file, schema) {
                out.push(self.payload(example, format!("{method} {route} response {code}"), kind, body, false));
            } else if let Some(kind) = self.list_kind_of(schema) {
                for (i, item) in body
                    .get("value")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let what = format!("{method} {route} response {code} value[{i}]");
                    out.push(self.payload(example, what, kind.clone(), item, false));
                }
            }
        }
    }
}

/// The normalizations the round-trip tests apply before comparing (see each test's doc comment for why):
/// numbers compare by value, and a `null` member is the same as an absent one.
pub fn normalize(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), normalize(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(normalize).collect()),
        Value::Number(n) => match n.as_f64() {
            Some(f) => serde_json::Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or_else(|| v.clone()),
            None => v.clone(),
        },
        other => other.clone(),
    }
}

/// The first difference between two JSON values, as a JSON pointer and the two sides.
pub fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let p = format!("{path}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => {
                        if let Some(d) = first_difference(u, v, &p) {
                            return Some(d);
                        }
                    }
                    (u, v) => return Some(format!("{p}: {u:?} != {v:?}")),
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (u, v))| first_difference(u, v, &format!("{path}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

/// `value` (of ARM type `ty`) without the properties `drop` says to leave out, at any depth.
pub fn strip(ir: &Ir, ty: &TypeRef, value: &Value, drop: &dyn Fn(&Property) -> bool) -> Value {
    match (ty, value) {
        (TypeRef::Named(id), Value::Object(m)) => {
            let Some(TypeKind::Object(o)) = ir.types.get(id).map(|t| &t.kind) else {
                return value.clone();
            };
            let mut out = Map::new();
            for (k, v) in m {
                match o.properties.iter().find(|p| p.name == *k) {
                    Some(p) if drop(p) => {}
                    Some(p) => {
                        out.insert(k.clone(), strip(ir, &p.ty, v, drop));
                    }
                    None => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        (TypeRef::Array(inner), Value::Array(items)) => {
            Value::Array(items.iter().map(|v| strip(ir, inner, v, drop)).collect())
        }
        (TypeRef::Map(inner), Value::Object(m)) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), strip(ir, inner, v, drop))).collect())
        }
        _ => value.clone(),
    }
}

/// `value` without the members its ARM type does not define.
pub fn drop_unknown(ir: &Ir, ty: &TypeRef, value: &Value) -> Value {
    match (ty, value) {
        (TypeRef::Named(id), Value::Object(m)) => {
            let Some(TypeKind::Object(o)) = ir.types.get(id).map(|t| &t.kind) else {
                return value.clone();
            };
            Value::Object(
                m.iter()
                    .filter_map(|(k, v)| {
                        let p = o.properties.iter().find(|p| p.name == *k)?;
                        Some((k.clone(), drop_unknown(ir, &p.ty, v)))
                    })
                    .collect(),
            )
        }
        (TypeRef::Array(inner), Value::Array(items)) => {
            Value::Array(items.iter().map(|v| drop_unknown(ir, inner, v)).collect())
        }
        (TypeRef::Map(inner), Value::Object(m)) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), drop_unknown(ir, inner, v))).collect())
        }
        _ => value.clone(),
    }
}

/// An empty `properties` envelope is the same as none: a spec with no flattened field set sends none.
pub fn without_empty_envelope(mut v: Value) -> Value {
    if let Some(m) = v.as_object_mut()
        && m.get("properties")
            .is_some_and(|p| p.as_object().is_some_and(Map::is_empty))
    {
        m.remove("properties");
    }
    v
}
