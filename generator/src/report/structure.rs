//! The API structure of one generated version: a compact, sorted list of every resource, property path and
//! enum value, written beside the generated code as `api/<group>-<version>.txt`, so that a plain `git diff`
//! of a regeneration shows API changes in a few lines, and so that `armgen diff` can compare two generated
//! trees without the specs they came from.
//!
//! The format, one line each, sorted by resource kind and then by path (a parent before its children):
//!
//! ```text
//! @version containerservice/v2alpha1 2025-10-01
//! AgentPool: object<AgentPool> resource=Microsoft.ContainerService/managedClusters/agentPools long-running path="…"
//! AgentPool.properties.count: int32 format=int32
//! AgentPool.properties.mode: enum<AgentPoolMode> open
//! AgentPool.properties.mode = "Gateway"
//! AgentPool.properties.tags: {string}
//! ```
//!
//! - `Kind.path: type attributes` is a property. A path is JSON property names joined by `.`; `[]` is an
//!   array item, `{}` a map value (`additionalProperties`), `(value)` the variant of a discriminated union
//!   with that discriminator value. Names that are not plain words are written as JSON strings.
//! - Types: `string`, `bool`, `int32`, `int64`, `float`, `double`, `json` (any JSON value),
//!   `object<T>`, `enum<T>`, `union<T>` (`T` is the generated Rust type), `[item]`, `{value}`.
//! - Attributes, in this order: `required`, `read-only`, `secret`, `nullable`, `flatten`
//!   (`x-ms-client-flatten`), `open`/`closed` (enum), `recursive` (a type already on the path: its properties
//!   are listed where it first occurs), `mutability=…`, `format=…`, `default=<JSON>`, `identifiers=…`,
//!   `additional=<type>`, the validation keywords (`pattern`, `minLength`, `maxLength`, `minimum`, `maximum`,
//!   `minItems`, `maxItems`, `uniqueItems`); on a resource line (empty path) `resource=<ARM type>`,
//!   `action=<ARM action>` (an action kind: `resource` is then the target's type and the action, `path` the POST),
//!   `long-running`, `path=<PUT path>`, `get=<type>` (the GET response type when it differs).
//! - `Kind.path = "value"` is one value of the enum a property has (through arrays and maps too).
//!
//! The views of a resource (`kubernetes.resources.<Kind>.views`: GET responses the reconciler keeps in its status)
//! are not listed: they are armgen's, no part of the resource's ARM API.
//!
//! The same properties appear under every resource that uses them: each line stands alone, so a diff line
//! says which resource and property changed.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::ir::{Ir, Primitive, Property, TypeId, TypeKind, TypeRef};

/// Where structure files go in the generated tree.
pub const DIR: &str = "api";

/// One step of a property path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Segment {
    /// A property, by JSON name.
    Property(String),
    /// An array item.
    Item,
    /// A map value.
    Value,
    /// The variant of a discriminated union with this discriminator value.
    Variant(String),
}

/// A path from a resource's body to one property. Paths order parents before their children.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PropPath(pub Vec<Segment>);

impl PropPath {
    pub fn child(&self, segment: Segment) -> PropPath {
        let mut v = self.0.clone();
        v.push(segment);
        PropPath(v)
    }

    /// The path without its last property name (and the array/map/variant steps after it): the object
    /// that holds the property. `None` for the resource itself.
    pub fn parent(&self) -> Option<PropPath> {
        let last = self.0.iter().rposition(|s| matches!(s, Segment::Property(_)))?;
        Some(PropPath(self.0[..last].to_vec()))
    }

    /// The last property name.
    pub fn name(&self) -> Option<&str> {
        self.0.iter().rev().find_map(|s| match s {
            Segment::Property(n) => Some(n.as_str()),
            _ => None,
        })
    }

    pub fn starts_with(&self, prefix: &PropPath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    /// `self` with `prefix` replaced by `with` (`self` must start with `prefix`).
    pub fn rebase(&self, prefix: &PropPath, with: &PropPath) -> PropPath {
        let mut v = with.0.clone();
        v.extend(self.0.iter().skip(prefix.0.len()).cloned());
        PropPath(v)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Display for PropPath {
    /// `properties.agentPoolProfiles[].name` (no leading `.`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Property(n) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(&name_word(n))?;
                }
                Segment::Item => f.write_str("[]")?,
                Segment::Value => f.write_str("{}")?,
                Segment::Variant(v) => write!(f, "({})", name_word(v))?,
            }
        }
        Ok(())
    }
}

/// A type, with the generated Rust names of named types.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Shape {
    Primitive(Primitive),
    Json,
    Object(String),
    Enum(String),
    Union(String),
    Array(Box<Shape>),
    Map(Box<Shape>),
}

impl Shape {
    /// The shape on the wire: the same with the Rust names left out.
    pub fn wire(&self) -> String {
        match self {
            Shape::Object(_) => "object".into(),
            Shape::Enum(_) => "enum".into(),
            Shape::Union(_) => "union".into(),
            Shape::Array(i) => format!("[{}]", i.wire()),
            Shape::Map(i) => format!("{{{}}}", i.wire()),
            other => other.to_string(),
        }
    }

    /// The innermost shape, through arrays and maps.
    pub fn innermost(&self) -> &Shape {
        match self {
            Shape::Array(i) | Shape::Map(i) => i.innermost(),
            other => other,
        }
    }

    fn parse(s: &str) -> Option<(Shape, &str)> {
        if let Some(rest) = s.strip_prefix('[') {
            let (inner, rest) = Shape::parse(rest)?;
            return Some((Shape::Array(Box::new(inner)), rest.strip_prefix(']')?));
        }
        if let Some(rest) = s.strip_prefix('{') {
            let (inner, rest) = Shape::parse(rest)?;
            return Some((Shape::Map(Box::new(inner)), rest.strip_prefix('}')?));
        }
        for (prefix, make) in [
            ("object<", Shape::Object as fn(String) -> Shape),
            ("enum<", Shape::Enum),
            ("union<", Shape::Union),
        ] {
            if let Some(rest) = s.strip_prefix(prefix) {
                let end = rest.find('>')?;
                return Some((make(rest[..end].to_string()), &rest[end + 1..]));
            }
        }
        for (name, p) in [
            ("string", Primitive::String),
            ("bool", Primitive::Bool),
            ("int32", Primitive::Int32),
            ("int64", Primitive::Int64),
            ("float", Primitive::Float),
            ("double", Primitive::Double),
        ] {
            if let Some(rest) = s.strip_prefix(name) {
                return Some((Shape::Primitive(p), rest));
            }
        }
        s.strip_prefix("json").map(|rest| (Shape::Json, rest))
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Primitive(p) => f.write_str(match p {
                Primitive::String => "string",
                Primitive::Bool => "bool",
                Primitive::Int32 => "int32",
                Primitive::Int64 => "int64",
                Primitive::Float => "float",
                Primitive::Double => "double",
            }),
            Shape::Json => f.write_str("json"),
            Shape::Object(n) => write!(f, "object<{n}>"),
            Shape::Enum(n) => write!(f, "enum<{n}>"),
            Shape::Union(n) => write!(f, "union<{n}>"),
            Shape::Array(i) => write!(f, "[{i}]"),
            Shape::Map(i) => write!(f, "{{{i}}}"),
        }
    }
}

/// Attribute names, in the order they are written.
pub mod attr {
    pub const REQUIRED: &str = "required";
    pub const READ_ONLY: &str = "read-only";
    pub const SECRET: &str = "secret";
    pub const NULLABLE: &str = "nullable";
    pub const FLATTEN: &str = "flatten";
    pub const OPEN: &str = "open";
    pub const CLOSED: &str = "closed";
    pub const RECURSIVE: &str = "recursive";
    pub const MUTABILITY: &str = "mutability";
    pub const FORMAT: &str = "format";
    pub const DEFAULT: &str = "default";
    pub const IDENTIFIERS: &str = "identifiers";
    pub const ADDITIONAL: &str = "additional";
    /// Validation keywords, as in the spec.
    pub const VALIDATION: &[&str] = &[
        "pattern",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "minItems",
        "maxItems",
        "uniqueItems",
    ];
    pub const RESOURCE: &str = "resource";
    /// On an action kind's line: the ARM action it runs.
    pub const ACTION: &str = "action";
    pub const LONG_RUNNING: &str = "long-running";
    pub const PATH: &str = "path";
    pub const GET: &str = "get";

    pub(super) const ORDER: &[&str] = &[
        RESOURCE,
        ACTION,
        LONG_RUNNING,
        PATH,
        GET,
        REQUIRED,
        READ_ONLY,
        SECRET,
        NULLABLE,
        FLATTEN,
        OPEN,
        CLOSED,
        RECURSIVE,
        MUTABILITY,
        FORMAT,
        DEFAULT,
        IDENTIFIERS,
        ADDITIONAL,
    ];

    /// Where `key` is written: known attributes in `ORDER`, then validation, then any other by name.
    pub fn rank(key: &str) -> (usize, &str) {
        if let Some(i) = ORDER.iter().position(|k| *k == key) {
            return (i, "");
        }
        if let Some(i) = VALIDATION.iter().position(|k| *k == key) {
            return (ORDER.len() + i, "");
        }
        (ORDER.len() + VALIDATION.len(), key)
    }
}

/// What the structure says about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub ty: Shape,
    /// Attribute → value (`None` for a flag such as `required`). `default` holds compact JSON text.
    pub attrs: BTreeMap<String, Option<String>>,
    /// The values of the enum the property has, if any.
    pub values: Option<BTreeSet<String>>,
}

impl Entry {
    pub fn flag(&self, key: &str) -> bool {
        self.attrs.contains_key(key)
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(|v| v.as_deref())
    }

    fn set_flag(&mut self, key: &str, on: bool) {
        if on {
            self.attrs.insert(key.to_string(), None);
        }
    }

    fn set(&mut self, key: &str, value: Option<String>) {
        if let Some(v) = value {
            self.attrs.insert(key.to_string(), Some(v));
        }
    }

    /// `type attributes`, as on a structure file line (`recursive` left out unless `all`).
    pub fn describe(&self, all: bool) -> String {
        let mut out = self.ty.to_string();
        for (k, v) in self.ordered_attrs() {
            if k == attr::RECURSIVE && !all {
                continue;
            }
            let _ = match v {
                None => write!(out, " {k}"),
                Some(v) if k == attr::DEFAULT => write!(out, " {k}={v}"),
                Some(v) => write!(out, " {k}={}", value_word(v)),
            };
        }
        out
    }

    /// The attributes in their written order.
    pub fn ordered_attrs(&self) -> Vec<(&str, Option<&str>)> {
        let mut v: Vec<(&str, Option<&str>)> = self.attrs.iter().map(|(k, v)| (k.as_str(), v.as_deref())).collect();
        v.sort_by(|a, b| attr::rank(a.0).cmp(&attr::rank(b.0)));
        v
    }
}

/// One resource: its body (the empty path) and every property path under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceShape {
    pub kind: String,
    pub paths: BTreeMap<PropPath, Entry>,
}

impl ResourceShape {
    /// The resource's own line.
    pub fn root(&self) -> Option<&Entry> {
        self.paths.get(&PropPath::default())
    }

    pub fn arm_type(&self) -> Option<&str> {
        self.root().and_then(|r| r.get(attr::RESOURCE))
    }

    /// Whether this is an action kind (`action=<ARM action>` on its line), not a resource.
    pub fn is_action(&self) -> bool {
        self.root().is_some_and(|r| r.get(attr::ACTION).is_some())
    }

    /// Property paths (without the resource's own line).
    pub fn properties(&self) -> impl Iterator<Item = (&PropPath, &Entry)> {
        self.paths.iter().filter(|(p, _)| !p.is_empty())
    }
}

/// The API structure of one version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ApiStructure {
    /// `group/kubeVersion` (e.g. `containerservice/v2alpha1`), or a name for a structure read from elsewhere.
    pub name: String,
    pub api_version: String,
    /// By kind.
    pub resources: BTreeMap<String, ResourceShape>,
}

impl ApiStructure {
    /// The structure of one version's IR (after all passes).
    pub fn from_ir(name: &str, ir: &Ir) -> Result<ApiStructure> {
        let mut resources = BTreeMap::new();
        for r in &ir.resources {
            let mut walker = Walker {
                ir,
                paths: BTreeMap::new(),
                stack: Vec::new(),
            };
            let mut root = Entry {
                ty: walker.shape(&TypeRef::Named(r.body_type.clone()))?,
                attrs: BTreeMap::new(),
                values: None,
            };
            root.set(attr::RESOURCE, Some(r.arm_type.clone()));
            root.set(attr::ACTION, r.action.as_ref().map(|a| a.name.clone()));
            root.set_flag(attr::LONG_RUNNING, r.long_running);
            root.set(attr::PATH, Some(r.path.clone()));
            if let Some(get) = &r.get_type {
                root.set(attr::GET, Some(walker.shape(&TypeRef::Named(get.clone()))?.to_string()));
            }
            walker.paths.insert(PropPath::default(), root);
            walker.descend(&TypeRef::Named(r.body_type.clone()), &PropPath::default())?;
            resources.insert(
                r.kind.clone(),
                ResourceShape {
                    kind: r.kind.clone(),
                    paths: walker.paths,
                },
            );
        }
        Ok(ApiStructure {
            name: name.to_string(),
            api_version: ir.api_version.clone(),
            resources,
        })
    }

    /// The structure file's text: `header` (comment lines starting with `#`) and then the lines.
    pub fn render(&self, header: &str) -> String {
        let mut out = String::with_capacity(64 * 1024);
        out.push_str(header);
        out.push_str(FORMAT_NOTE);
        let _ = writeln!(
            out,
            "\n@version {} {}",
            value_word(&self.name),
            value_word(&self.api_version)
        );
        for (kind, r) in &self.resources {
            for (path, e) in &r.paths {
                let at = line_path(kind, path);
                let _ = writeln!(out, "{at}: {}", e.describe(true));
                for v in e.values.iter().flatten() {
                    let _ = writeln!(out, "{at} = {}", json_string(v));
                }
            }
        }
        out
    }

    /// Reads a structure file written by [`render`](Self::render). `what` names it in errors, which give the
    /// line number.
    pub fn parse(text: &str, what: &str) -> Result<ApiStructure> {
        let mut s = ApiStructure::default();
        let mut seen_version = false;
        for (i, line) in text.lines().enumerate() {
            let err = |message: String| Error::Spec {
                at: crate::error::Location::new(what, format!("line {}", i + 1)),
                message,
            };
            let line = line.trim_end();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(rest) = line.strip_prefix("@version ") {
                let mut cur = Cursor::new(rest);
                s.name = cur
                    .value()
                    .ok_or_else(|| err("expected `@version <name> <API version>`".into()))?;
                s.api_version = cur
                    .eat(' ')
                    .then(|| cur.value())
                    .flatten()
                    .ok_or_else(|| err("expected `@version <name> <API version>`".into()))?;
                seen_version = true;
                continue;
            }
            let mut cur = Cursor::new(line);
            let kind = cur.name().ok_or_else(|| err("expected a kind".into()))?;
            let path = cur
                .path()
                .ok_or_else(|| err(format!("cannot read the path before {:?}", cur.rest())))?;
            let resource = s.resources.entry(kind.clone()).or_insert_with(|| ResourceShape {
                kind: kind.clone(),
                paths: BTreeMap::new(),
            });
            if cur.eat_str(" = ") {
                let value = cur
                    .json_string()
                    .filter(|_| cur.rest().is_empty())
                    .ok_or_else(|| err("expected one JSON string after ` = `".into()))?;
                let entry = resource
                    .paths
                    .get_mut(&path)
                    .ok_or_else(|| err("an enum value before the line of its property".into()))?;
                entry.values.get_or_insert_with(BTreeSet::new).insert(value);
                continue;
            }
            cur.eat_str(": ");
            let (ty, rest) =
                Shape::parse(cur.rest()).ok_or_else(|| err(format!("cannot read the type at {:?}", cur.rest())))?;
            let mut entry = Entry {
                ty,
                attrs: BTreeMap::new(),
                values: None,
            };
            let mut cur = Cursor::new(rest);
            while !cur.rest().is_empty() {
                if !cur.eat(' ') {
                    return Err(err(format!("expected a space before {:?}", cur.rest())));
                }
                let key = cur
                    .key()
                    .ok_or_else(|| err(format!("expected an attribute at {:?}", cur.rest())))?;
                let value = if cur.eat('=') {
                    let v = if key == attr::DEFAULT {
                        cur.json_text()
                    } else {
                        cur.value()
                    };
                    Some(v.ok_or_else(|| err(format!("cannot read the value of `{key}`")))?)
                } else {
                    None
                };
                entry.attrs.insert(key, value);
            }
            if resource.paths.insert(path, entry).is_some() {
                return Err(err("a path listed twice".into()));
            }
        }
        if !seen_version {
            return Err(Error::Spec {
                at: crate::error::Location::new(what, ""),
                message: "not an armgen API structure file (no `@version` line)".into(),
            });
        }
        Ok(s)
    }
}

/// `Kind.path` (or `Kind` for the resource itself), as a line starts.
pub fn line_path(kind: &str, path: &PropPath) -> String {
    let mut out = name_word(kind);
    if matches!(path.0.first(), Some(Segment::Property(_))) {
        out.push('.');
    }
    let _ = write!(out, "{path}");
    out
}

const FORMAT_NOTE: &str = "\
#
# API structure, for `git diff` and `armgen diff`: one line per resource, property path and enum value, sorted.
#   Kind.path: type attributes   ([] an array item, {} a map value, (v) a union variant)
#   Kind.path = \"value\"          a value of the property's enum
# The format is described in generator/src/report/structure.rs.
";

/// The structure files of a generation: `api/<group>-<version>.txt` for each version.
pub fn files(versions: &[crate::emit::VersionOutput<'_>]) -> Result<BTreeMap<PathBuf, String>> {
    let mut out = BTreeMap::new();
    for v in versions {
        let s = ApiStructure::from_ir(&format!("{}/{}", v.group, v.kube_version), v.ir)?;
        let header = crate::emit::header("#", &v.ir.spec_files, Some((&v.ir.api_version, v.kube_version)));
        out.insert(
            PathBuf::from(format!("{DIR}/{}-{}.txt", v.group, v.kube_version)),
            s.render(&header),
        );
    }
    Ok(out)
}

struct Walker<'a> {
    ir: &'a Ir,
    paths: BTreeMap<PropPath, Entry>,
    /// Named types being expanded, outermost first.
    stack: Vec<TypeId>,
}

impl Walker<'_> {
    fn shape(&self, ty: &TypeRef) -> Result<Shape> {
        Ok(match ty {
            TypeRef::Named(id) => {
                let def = self.ir.types.get(id).ok_or_else(|| Error::Emit {
                    what: id.clone(),
                    message: "reference to a type that is not generated".into(),
                })?;
                let name = def.rust_name.clone();
                match def.kind {
                    TypeKind::Object(_) => Shape::Object(name),
                    TypeKind::Enum(_) => Shape::Enum(name),
                    TypeKind::Union(_) => Shape::Union(name),
                }
            }
            TypeRef::Primitive(p) => Shape::Primitive(*p),
            TypeRef::Array(i) => Shape::Array(Box::new(self.shape(i)?)),
            TypeRef::Map(i) => Shape::Map(Box::new(self.shape(i)?)),
            TypeRef::Json => Shape::Json,
        })
    }

    /// Lists what is below a value of type `ty` at `path`.
    fn descend(&mut self, ty: &TypeRef, path: &PropPath) -> Result<()> {
        match ty {
            TypeRef::Array(inner) => self.descend(inner, &path.child(Segment::Item)),
            TypeRef::Map(inner) => self.descend(inner, &path.child(Segment::Value)),
            TypeRef::Primitive(_) | TypeRef::Json => Ok(()),
            TypeRef::Named(id) => {
                if self.stack.contains(id) {
                    return Ok(());
                }
                let Some(def) = self.ir.types.get(id) else {
                    return Ok(());
                };
                self.stack.push(id.clone());
                match &def.kind {
                    TypeKind::Object(o) => {
                        // A view (`views` of the config) is armgen's status field, no part of the resource's ARM API.
                        for p in o.properties.iter().filter(|p| !p.view) {
                            let child = path.child(Segment::Property(p.name.clone()));
                            let entry = self.property(p)?;
                            self.paths.insert(child.clone(), entry);
                            self.descend(&p.ty, &child)?;
                        }
                        if let Some(ap) = &o.additional_properties {
                            self.descend(ap, &path.child(Segment::Value))?;
                        }
                    }
                    TypeKind::Union(u) => {
                        for (value, variant) in &u.variants {
                            let child = path.child(Segment::Variant(value.clone()));
                            let ty = TypeRef::Named(variant.clone());
                            let mut entry = Entry {
                                ty: self.shape(&ty)?,
                                attrs: BTreeMap::new(),
                                values: None,
                            };
                            entry.set_flag(attr::RECURSIVE, self.stack.contains(variant));
                            self.paths.insert(child.clone(), entry);
                            self.descend(&ty, &child)?;
                        }
                    }
                    TypeKind::Enum(_) => {}
                }
                self.stack.pop();
                Ok(())
            }
        }
    }

    fn property(&self, p: &Property) -> Result<Entry> {
        let mut e = Entry {
            ty: self.shape(&p.ty)?,
            attrs: BTreeMap::new(),
            values: None,
        };
        e.set_flag(attr::REQUIRED, p.required);
        e.set_flag(attr::READ_ONLY, p.read_only);
        e.set_flag(attr::SECRET, p.secret);
        e.set_flag(attr::NULLABLE, p.nullable);
        e.set_flag(attr::FLATTEN, p.client_flatten);
        let innermost = innermost(&p.ty);
        if let TypeRef::Named(id) = innermost {
            e.set_flag(attr::RECURSIVE, self.stack.contains(id));
            if let Some(def) = self.ir.types.get(id) {
                match &def.kind {
                    TypeKind::Enum(en) => {
                        e.set_flag(if en.open { attr::OPEN } else { attr::CLOSED }, true);
                        e.values = Some(en.values.iter().map(|v| v.value.clone()).collect());
                    }
                    TypeKind::Object(o) => {
                        if let Some(ap) = &o.additional_properties
                            && !o.properties.is_empty()
                        {
                            e.set(attr::ADDITIONAL, Some(self.shape(ap)?.to_string()));
                        }
                    }
                    TypeKind::Union(_) => {}
                }
            }
        }
        e.set(attr::MUTABILITY, p.mutability.as_ref().map(|m| m.join(",")));
        // A number's format is its type already (`int32`, `double`, …).
        let implied = match p.ty {
            TypeRef::Primitive(Primitive::Int32) => Some("int32"),
            TypeRef::Primitive(Primitive::Int64) => Some("int64"),
            TypeRef::Primitive(Primitive::Float) => Some("float"),
            TypeRef::Primitive(Primitive::Double) => Some("double"),
            _ => None,
        };
        e.set(attr::FORMAT, p.format.clone().filter(|f| Some(f.as_str()) != implied));
        e.set(attr::DEFAULT, p.default.as_ref().map(|d| d.to_string()));
        e.set(attr::IDENTIFIERS, p.identifiers.as_ref().map(|m| m.join(",")));
        let v = &p.validation;
        e.set("pattern", v.pattern.clone());
        e.set("minLength", v.min_length.map(|x| x.to_string()));
        e.set("maxLength", v.max_length.map(|x| x.to_string()));
        e.set("minimum", v.minimum.map(|x| x.to_string()));
        e.set("maximum", v.maximum.map(|x| x.to_string()));
        e.set("minItems", v.min_items.map(|x| x.to_string()));
        e.set("maxItems", v.max_items.map(|x| x.to_string()));
        e.set_flag("uniqueItems", v.unique_items);
        Ok(e)
    }
}

fn innermost(ty: &TypeRef) -> &TypeRef {
    match ty {
        TypeRef::Array(i) | TypeRef::Map(i) => innermost(i),
        other => other,
    }
}

/// Characters a kind, property name or union variant value may have to be written without quotes.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '@' | '$')
}

/// A kind, property name or variant value as written in a path: as it is when it is a plain name, else as a
/// JSON string.
fn name_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(is_name_char) {
        s.to_string()
    } else {
        json_string(s)
    }
}

/// An attribute value or version name: as it is when it has no space and does not start like JSON text,
/// else as a JSON string.
fn value_word(s: &str) -> String {
    if !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c.is_control()) && !s.starts_with(['"', '{', '[']) {
        s.to_string()
    } else {
        json_string(s)
    }
}

fn json_string(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// A reader over one line of a structure file.
struct Cursor<'a> {
    s: &'a str,
}

impl<'a> Cursor<'a> {
    fn new(s: &'a str) -> Self {
        Cursor { s }
    }

    fn rest(&self) -> &'a str {
        self.s
    }

    fn eat(&mut self, c: char) -> bool {
        match self.s.strip_prefix(c) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    fn eat_str(&mut self, prefix: &str) -> bool {
        match self.s.strip_prefix(prefix) {
            Some(rest) => {
                self.s = rest;
                true
            }
            None => false,
        }
    }

    /// A JSON string, unquoted.
    fn json_string(&mut self) -> Option<String> {
        if !self.s.starts_with('"') {
            return None;
        }
        let mut stream = serde_json::Deserializer::from_str(self.s).into_iter::<String>();
        let value = stream.next()?.ok()?;
        self.s = self.s.get(stream.byte_offset()..)?;
        Some(value)
    }

    /// A JSON value, as compact JSON text.
    fn json_text(&mut self) -> Option<String> {
        let mut stream = serde_json::Deserializer::from_str(self.s).into_iter::<serde_json::Value>();
        let value = stream.next()?.ok()?;
        self.s = self.s.get(stream.byte_offset()..)?;
        Some(value.to_string())
    }

    fn take_while(&mut self, f: impl Fn(char) -> bool) -> Option<String> {
        let end = self.s.find(|c: char| !f(c)).unwrap_or(self.s.len());
        if end == 0 {
            return None;
        }
        let (w, rest) = self.s.split_at(end);
        self.s = rest;
        Some(w.to_string())
    }

    /// A kind, property name or variant value (see [`name_word`]).
    fn name(&mut self) -> Option<String> {
        if self.s.starts_with('"') {
            return self.json_string();
        }
        self.take_while(is_name_char)
    }

    /// An attribute value or version name (see [`value_word`]).
    fn value(&mut self) -> Option<String> {
        if self.s.starts_with('"') {
            return self.json_string();
        }
        self.take_while(|c| c != ' ')
    }

    /// An attribute name (up to `=` or a space).
    fn key(&mut self) -> Option<String> {
        self.take_while(|c| c != ' ' && c != '=')
    }

    /// The path after a kind, up to `: ` or ` = `.
    fn path(&mut self) -> Option<PropPath> {
        let mut segs = Vec::new();
        loop {
            if self.s.starts_with(": ") || self.s.starts_with(" = ") {
                return Some(PropPath(segs));
            }
            if self.eat('.') {
                segs.push(Segment::Property(self.name()?));
            } else if self.eat_str("[]") {
                segs.push(Segment::Item);
            } else if self.eat_str("{}") {
                segs.push(Segment::Value);
            } else if self.eat('(') {
                let v = self.name()?;
                if !self.eat(')') {
                    return None;
                }
                segs.push(Segment::Variant(v));
            } else {
                return None;
            }
        }
    }
}
