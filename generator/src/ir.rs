//! The intermediate representation the passes work on and the emitters read.
//!
//! Types are keyed by [`TypeId`]: the display path of the document they come from and the pointer of their
//! schema (for a named definition) or a synthesized path (for an inline schema). Keys sort stably, so every
//! walk over [`Ir::types`] is deterministic.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::discover::Scope;
use crate::error::Location;

/// A stable key for a type: `file#pointer`.
pub type TypeId = String;

/// Everything the emitters need for one API version.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ir {
    pub api_version: String,
    /// The root spec files (display paths).
    pub spec_files: Vec<String>,
    pub resources: Vec<Resource>,
    pub types: BTreeMap<TypeId, TypeDef>,
    /// What the passes decided and a reviewer should know (renames, collisions, unsupported constructs).
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub at: String,
    pub message: String,
}

impl Diagnostic {
    pub fn new(at: &Location, message: impl Into<String>) -> Self {
        Diagnostic {
            at: at.to_string(),
            message: message.into(),
        }
    }
}

/// A resource: a PUT path and the types of its payloads.
#[derive(Debug, Clone, Serialize)]
pub struct Resource {
    /// The kind, e.g. `ManagedCluster` (after config renames).
    pub kind: String,
    pub arm_type: String,
    pub path: String,
    pub scope: Scope,
    pub name_parameters: Vec<String>,
    pub parents: Vec<String>,
    pub long_running: bool,
    /// The POST actions on the resource (`<path>/<action>`), sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Set for an action kind: a custom resource that runs one ARM POST action ([`ActionMeta::name`]) on a
    /// resource of kind [`ActionMeta::target`] once. Its `path` is the POST path, `long_running` the POST's, and
    /// its body type the synthetic object `{parameters, result, startTime, endTime, error}` ([`ActionMeta`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<ActionMeta>,
    /// The views of the resource (config `views.read`): read-only GETs under its path whose response is kept in
    /// its status, each a read-only [`Property::view`] of its body type.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub views: Vec<ViewMeta>,
    /// The PUT body type; the GET response type when it differs is recorded in `get_type`.
    pub body_type: TypeId,
    pub get_type: Option<TypeId>,
    /// The Rust module (file stem) the resource's types live in, e.g. `managed_cluster`.
    pub module: String,
}

/// What makes a resource of the IR an action kind.
///
/// The action kind's ARM type is a synthetic object (no such payload exists on the wire): `parameters` (the
/// POST's request body, flattened into the spec like a resource's `properties`; create-only, never in status),
/// and the read-only `result` (the response body), `startTime`, `endTime` and `error` (the `default` response's
/// error detail), which become the status. The reconciler sends `parameters` and writes the rest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionMeta {
    /// The kind of the resource the action runs on (its owner).
    pub target: String,
    /// The ARM action: the POST path after the resource's, e.g. `runCommand`.
    pub name: String,
    /// The response status codes the spec declares, ascending.
    pub statuses: Vec<u16>,
    /// Whether the POST takes a request body.
    pub body: bool,
    /// Whether a response has a body.
    pub result: bool,
}

/// A view of a resource: `GET <resource ID>/<name>` (no PUT there), its typed response kept in the resource's
/// status at `field` (for a pageable GET, the items of every page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ViewMeta {
    /// The status field (JSON name), e.g. `upgradeProfile`.
    pub field: String,
    /// The GET path after the resource's, e.g. `upgradeProfiles/default`.
    pub name: String,
    /// The GET path template, as written in the spec.
    pub path: String,
    pub pageable: bool,
    /// How often the reconciler reads it, in seconds.
    pub refresh_seconds: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TypeDef {
    /// The schema's own name: the definition name, or a name synthesized from where an inline schema sits.
    pub name: String,
    /// The Rust type name (set by the `names` pass).
    pub rust_name: String,
    /// Where the schema is, in the original document's terms.
    pub origin: String,
    pub description: Option<String>,
    pub kind: TypeKind,
    /// The module the type is emitted into (set by the `layout` pass).
    pub module: String,
}

#[derive(Debug, Clone, Serialize)]
pub enum TypeKind {
    Object(ObjectType),
    Enum(EnumType),
    Union(UnionType),
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ObjectType {
    pub properties: Vec<Property>,
    /// `allOf` parents, in order (merged into `properties` by the `allof` pass, which keeps this list).
    pub parents: Vec<TypeId>,
    /// Whether `allOf` parents have been merged in.
    pub merged: bool,
    /// The value type of `additionalProperties` beside named properties, if any.
    pub additional_properties: Option<TypeRef>,
    /// Names in the schema's `required` lists that it does not declare itself: inherited properties it makes
    /// required (applied by the `allof` pass).
    pub required: Vec<String>,
    /// The discriminator property, when this type is the base of a discriminated union.
    pub discriminator: Option<String>,
    /// `x-ms-discriminator-value`, when this type is a variant of one.
    pub discriminator_value: Option<String>,
    /// `x-ms-azure-resource`.
    pub azure_resource: bool,
    /// Set by the `unions` pass on variant structs: the discriminator property is carried by the enum tag.
    pub tag_property: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Property {
    /// The JSON name, exactly as on the wire.
    pub name: String,
    /// The Rust field name (set by the `names` pass).
    pub rust_name: String,
    /// `x-ms-client-name`, when present: the name the Rust field is derived from.
    pub client_name: Option<String>,
    pub ty: TypeRef,
    pub required: bool,
    pub read_only: bool,
    /// `x-ms-mutability`, when present (`create`, `read`, `update`).
    pub mutability: Option<Vec<String>>,
    /// The config's `immutable` override: fixed after creation, with the public source saying so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable_source: Option<String>,
    pub secret: bool,
    /// The config's `fromConfig` override: the custom resource may take the value from a ConfigMap.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_config: bool,
    /// The config's `armIdKeys` override: a map keyed by ARM IDs, listed as resource references in the spec.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub arm_id_keys: bool,
    /// `x-ms-identifiers` on an array of objects (or the config's `identifiers` override).
    pub identifiers: Option<Vec<String>>,
    /// Change detection does not compare this property while each sibling property named here has the given
    /// value (config `diffIgnoredWhen`; see `crate::emit::diff`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub diff_ignored_when: BTreeMap<String, Value>,
    pub client_flatten: bool,
    /// `x-nullable` / `nullable`: `null` is a value distinct from absent.
    pub nullable: bool,
    pub default: Option<Value>,
    pub description: Option<String>,
    pub validation: Validation,
    /// Set by the `recursion` pass: the field closes a cycle of direct containment and is boxed.
    pub boxed: bool,
    /// Inherited from an `allOf` parent (set by the `allof` pass).
    pub inherited: bool,
    /// The format of a string (`date-time`, `uuid`, `arm-id`, …), kept for documentation and later shaping.
    pub format: Option<String>,
    /// A view ([`ViewMeta`]) added by armgen to the resource's type: read-only, never on the wire of the
    /// resource's own operations; the reconciler fills it from the view's GET. Only the resource's root status
    /// has it (not other uses of the type).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub view: bool,
    pub origin: String,
}

/// Validation keywords a CRD schema can carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Validation {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_length: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_items: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_items: Option<usize>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unique_items: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum TypeRef {
    Named(TypeId),
    Primitive(Primitive),
    Array(Box<TypeRef>),
    /// A JSON object with arbitrary keys and values of one type.
    Map(Box<TypeRef>),
    /// Any JSON value (`additionalProperties: true`, `{}` schemas, untyped objects).
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Primitive {
    String,
    Bool,
    Int32,
    Int64,
    Float,
    Double,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnumType {
    pub values: Vec<EnumValue>,
    /// `x-ms-enum.modelAsString` (or no `x-ms-enum` at all on a string with `enum`: ARM treats values
    /// as extensible unless told otherwise only under `modelAsString`, so that case is closed).
    pub open: bool,
    /// `x-ms-enum.name`.
    pub enum_name: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnumValue {
    pub value: String,
    /// The Rust variant name (set by the `enums` pass).
    pub rust_name: String,
    pub description: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct UnionType {
    /// The discriminator property name.
    pub property: String,
    /// `x-ms-discriminator-value` → variant type, in a stable order.
    pub variants: Vec<(String, TypeId)>,
}

impl TypeRef {
    /// Named types this reference mentions, at any depth.
    pub fn named(&self) -> Option<&TypeId> {
        match self {
            TypeRef::Named(id) => Some(id),
            TypeRef::Array(inner) | TypeRef::Map(inner) => inner.named(),
            _ => None,
        }
    }

    /// Rewrites every named reference through `f`.
    pub fn rename(&mut self, f: &impl Fn(&TypeId) -> Option<TypeId>) {
        match self {
            TypeRef::Named(id) => {
                if let Some(new) = f(id) {
                    *id = new;
                }
            }
            TypeRef::Array(inner) | TypeRef::Map(inner) => inner.rename(f),
            _ => {}
        }
    }
}

impl Ir {
    /// Rewrites every reference to a type through `f` (used when passes merge or replace types).
    pub fn rename_refs(&mut self, f: impl Fn(&TypeId) -> Option<TypeId>) {
        for ty in self.types.values_mut() {
            match &mut ty.kind {
                TypeKind::Object(o) => {
                    for p in &mut o.properties {
                        p.ty.rename(&f);
                    }
                    if let Some(ap) = &mut o.additional_properties {
                        ap.rename(&f);
                    }
                    for parent in &mut o.parents {
                        if let Some(new) = f(parent) {
                            *parent = new;
                        }
                    }
                }
                TypeKind::Union(u) => {
                    for (_, v) in &mut u.variants {
                        if let Some(new) = f(v) {
                            *v = new;
                        }
                    }
                }
                TypeKind::Enum(_) => {}
            }
        }
        for r in &mut self.resources {
            if let Some(new) = f(&r.body_type) {
                r.body_type = new;
            }
            if let Some(g) = &mut r.get_type {
                if let Some(new) = f(g) {
                    *g = new;
                }
            }
        }
    }

    /// Types directly referenced by `id` (properties, map values, union variants; not `allOf` parents).
    pub fn references(&self, id: &TypeId) -> Vec<TypeId> {
        let mut out = Vec::new();
        if let Some(ty) = self.types.get(id) {
            match &ty.kind {
                TypeKind::Object(o) => {
                    for p in &o.properties {
                        if let Some(n) = p.ty.named() {
                            out.push(n.clone());
                        }
                    }
                    if let Some(n) = o.additional_properties.as_ref().and_then(TypeRef::named) {
                        out.push(n.clone());
                    }
                }
                TypeKind::Union(u) => out.extend(u.variants.iter().map(|(_, v)| v.clone())),
                TypeKind::Enum(_) => {}
            }
        }
        out
    }
}
