//! The CRD manifests (`generated/crds/`, `armgen::emit::crd`): layout, structural schemas that follow the
//! Kubernetes shape field by field, faithful YAML (k8s-openapi reads and writes back the same JSON), validation
//! of hand-built custom resources with a JSON Schema validator, and size.
//!
//! Tests on the real specs need the spec root: they fail when `CI` is set and it is missing, and are ignored
//! otherwise (`cfg(spec_root_missing)`, see `tests/README.md`). The fixture tests (closed enums, recursion, a discriminated union, trimming) run on the generator's
//! own fixture spec (`generator/tests/fixtures/arm`) through the library API and always run.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use armgen::Generation;
use armgen::config::VersionOverrides;
use armgen::emit::crd::{self, Crd, IMMUTABLE_RULE, MAX_CRD_BYTES};
use armgen::ir::{Ir, Primitive, TypeKind};
use armgen::shape::{ContractField, Exports, KubeField, KubeIr, KubeRef, Owner, Special};
use armgen_runtime::Scope;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::{Value, json};

/// The Kubernetes API group of the AKS kinds (the configured group of provider `Microsoft.ContainerService`), for
/// the tests of AKS kinds and hand-built AKS custom resources.
fn aks() -> String {
    common::aks_group().kube_group
}

/// The generation on the real specs, shared by the tests of this file (each marked to be ignored when the spec
/// root is missing; see `common::spec_root`).
fn generation() -> &'static Generation {
    static GENERATION: OnceLock<Generation> = OnceLock::new();
    GENERATION.get_or_init(|| {
        armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
            .specs(common::spec_root())
            .generate()
            .expect("generate")
    })
}

/// The configured versions of the AKS group that have `kind`, in the generation's order (the hand-built custom
/// resources below are valid in each of them; tests over versions take them from here, never from a list).
fn served_versions<'a>(g: &'a Generation, kind: &str) -> Vec<&'a str> {
    let aks = aks();
    let versions: Vec<&str> = g
        .kubes
        .values()
        .filter(|k| k.group == aks && k.resources.iter().any(|r| r.kind == kind))
        .map(|k| k.version.as_str())
        .collect();
    assert!(!versions.is_empty(), "no version has {kind}");
    versions
}

/// The CRDs of every configured group.
fn generated_crds(generation: &Generation) -> Vec<Crd> {
    crd::crds_of(generation)
}

/// The one CRD of `kind` (kind names are unique among the configured groups; a second one fails the test).
fn find<'a>(crds: &'a [Crd], kind: &str) -> &'a Crd {
    let mut found = crds.iter().filter(|c| c.kind == kind);
    let crd = found.next().unwrap_or_else(|| panic!("no CRD for {kind}"));
    assert!(found.next().is_none(), "more than one CRD of kind {kind}");
    crd
}

fn schema<'a>(crd: &'a Crd, version: &str) -> &'a Value {
    crd.schema(version)
        .unwrap_or_else(|| panic!("{} has no version {version}", crd.kind))
}

/// The fixture spec, lowered once and shaped as two Kubernetes versions (`v1`, and `v2` the storage version).
struct Fixture {
    ir: Ir,
    v1: KubeIr,
    v2: KubeIr,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = common::workspace().join("generator/tests/fixtures/arm");
        let specs = armgen::load::SpecSet::load(&root, &[PathBuf::from("fixture/widgets.json")]).expect("load fixture");
        let resources = armgen::discover::discover(&specs).expect("discover");
        let mut ir = armgen::passes::lower::lower(&specs, &resources, "2024-01-01").expect("lower");
        armgen::passes::run_all(&mut ir, &VersionOverrides::default());
        let v1 = armgen::shape::shape(&ir, "fixture.armgen.dev", "v1", false);
        let v2 = armgen::shape::shape(&ir, "fixture.armgen.dev", "v2", true);
        Fixture { ir, v1, v2 }
    })
}

fn fixture_crds() -> Vec<Crd> {
    let f = fixture();
    crd::crds(&[(&f.v1, &f.ir), (&f.v2, &f.ir)])
}

// ---------------------------------------------------------------------------------------------------------
// 1. Structural, and field by field what the Kubernetes shape says.

/// Walks a version's schema beside its Kubernetes shape and lists every disagreement. Also collects the JSON
/// pointers where the shape allows `x-kubernetes-preserve-unknown-fields` (free-form JSON, the point where a
/// recursive type is cut, a discriminated union), each with the spec site of the ARM property it stands for.
struct ShapeCheck<'a> {
    kube: &'a KubeIr,
    ir: &'a Ir,
    owner: Owner,
    exports: Exports,
    stack: Vec<String>,
    /// The IR type whose fields are being walked (the resource body at the root).
    container: Option<String>,
    /// The spec site (`file#pointer`, as IR diagnostics name sites) of the ARM property being walked: its
    /// declaring type's origin, `/properties/<name>`, then `/items` or `/additionalProperties` into collections.
    site: Option<String>,
    preserve_allowed: BTreeSet<String>,
    /// (pointer, why, spec site) of each allowed preserve-unknown-fields node.
    preserve_why: Vec<(String, &'static str, Option<String>)>,
    /// Whether the version keeps its field descriptions (`Crd::undescribed` lists the versions that do not).
    described: bool,
    errors: Vec<String>,
}

impl ShapeCheck<'_> {
    fn err(&mut self, at: &str, message: impl std::fmt::Display) {
        self.errors.push(format!("{at}: {message}"));
    }

    fn allow_preserve(&mut self, at: &str, why: &'static str) {
        self.preserve_allowed.insert(at.to_string());
        self.preserve_why.push((at.to_string(), why, self.site.clone()));
    }

    fn fields(&mut self, node: &Value, fields: &[KubeField], at: &str, spec: bool, correlatable: bool) {
        if node.get("type") != Some(&json!("object")) {
            self.err(at, "an object of fields is not type: object");
        }
        let props = node.get("properties").and_then(Value::as_object);
        let names: Vec<&str> = props
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let expected: Vec<&str> = fields.iter().map(|f| f.json_name.as_str()).collect();
        if names != expected {
            self.err(at, format!("properties {names:?}, the shape has {expected:?}"));
        }
        // A required `fromConfig` value is required through a rule: the value or its ConfigMap, exactly one.
        let required: Vec<&str> = fields
            .iter()
            .filter(|f| f.required && !f.from_config)
            .map(|f| f.json_name.as_str())
            .collect();
        let rules: Vec<&str> = node
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(|r| r.get("rule").and_then(Value::as_str)).collect())
            .unwrap_or_default();
        for f in fields.iter().filter(|f| f.from_config) {
            let (a, b) = (&f.json_name, format!("{}FromConfig", f.json_name));
            let rule = if f.required {
                format!("has(self.{a}) != has(self.{b})")
            } else {
                format!("!(has(self.{a}) && has(self.{b}))")
            };
            if !rules.contains(&rule.as_str()) {
                self.err(at, format!("no rule {rule} for the fromConfig field {a}"));
            }
        }
        let listed: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if listed != required {
            self.err(at, format!("required {listed:?}, the shape has {required:?}"));
        }
        for f in fields {
            match props.and_then(|p| p.get(&f.json_name)) {
                Some(child) => self.field(
                    child,
                    f,
                    &format!("{at}/properties/{}", f.json_name),
                    spec,
                    correlatable,
                ),
                None => self.err(at, format!("field {} missing", f.json_name)),
            }
        }
    }

    fn field(&mut self, node: &Value, f: &KubeField, at: &str, spec: bool, correlatable: bool) {
        if let Some(d) = f.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
            let has = node.get("description").and_then(Value::as_str);
            match has {
                Some(has) if self.described && !has.starts_with(d) => {
                    self.err(at, format!("description {has:?} does not start with the IR's {d:?}"))
                }
                None if self.described => self.err(at, format!("no description; the IR's is {d:?}")),
                Some(has) if !self.described => self.err(at, format!("description {has:?} in an undescribed version")),
                _ => {}
            }
        }
        // The object's own `fromConfig` rules (checked with its fields) aside.
        let own: Vec<Value> = node
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter(|r| !r["rule"].as_str().unwrap_or_default().contains("FromConfig)"))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let own = Value::Array(own);
        let rules = Some(&own).filter(|r| r.as_array().is_some_and(|a| !a.is_empty()));
        let expected_rule = json!([{"rule": IMMUTABLE_RULE, "message": format!("{} is immutable", f.json_name)}]);
        match (f.immutable && correlatable, rules) {
            (true, Some(r)) if *r == expected_rule => {}
            (true, other) => self.err(at, format!("immutable, but the rules are {other:?}")),
            (false, Some(r)) => self.err(at, format!("not immutable (or not correlatable), but has rules {r}")),
            (false, None) => {}
        }
        match f.special {
            Special::None => {
                // The ARM property this field stands for is the last of its path; it is declared by the type of
                // the one before it (a flattened envelope), or by the type being walked.
                let declaring = match f.arm_props.as_slice() {
                    [.., envelope, _] => match &envelope.ty {
                        armgen::ir::TypeRef::Named(id) => Some(id.clone()),
                        _ => None,
                    },
                    _ => self.container.clone(),
                };
                self.site = match (declaring.and_then(|id| self.ir.types.get(&id)), f.arm_props.last()) {
                    (Some(t), Some(p)) => Some(format!("{}/properties/{}", t.origin, p.name)),
                    _ => None,
                };
                self.of_ref(node, &f.ty, at, spec, correlatable);
                self.validation(node, f, at, spec);
            }
            Special::AzureName => self.expect_type(node, at, "string"),
            // The Cluster API contracts' fields (docs/cluster-api.md), as the contract pages type them.
            Special::Contract(c) => match c {
                ContractField::Endpoint => self.expect_object(node, at, &["host", "port"], &[]),
                ContractField::Initialization => {
                    self.expect_object(node, at, &["controlPlaneInitialized", "provisioned"], &[])
                }
                ContractField::Version | ContractField::StatusVersion => self.expect_type(node, at, "string"),
                ContractField::ProviderIds => {
                    self.expect_type(node, at, "array");
                    self.expect_type(&node["items"], &format!("{at}/items"), "string");
                }
                ContractField::Initialized | ContractField::Ready | ContractField::ExternalManaged => {
                    self.expect_type(node, at, "boolean")
                }
                ContractField::Replicas => self.expect_type(node, at, "integer"),
            },
            Special::FromConfig => self.expect_object(node, at, &["name", "key"], &["name", "key"]),
            Special::Owner => {
                let (props, required): (&[&str], &[&str]) = match self.owner {
                    Owner::Parent(_) => (&["name"], &["name"]),
                    Owner::ResourceGroup => (&["name", "armId"], &[]),
                    // `armgen_runtime::kube::ResourceReference` without `namespace`: the scope is in this namespace.
                    Owner::Scope => (&["armId", "group", "kind", "name"], &[]),
                    Owner::Unsupported => return self.err(at, "an owner field, but the kind has no owner"),
                };
                self.expect_object(node, at, props, required);
            }
            Special::Conditions => {
                self.expect_type(node, at, "array");
                if node.get("x-kubernetes-list-map-keys") != Some(&json!(["type"])) {
                    self.err(at, "conditions are not a list map keyed by type");
                }
                let items = node.get("items").cloned().unwrap_or_default();
                self.expect_object(
                    &items,
                    &format!("{at}/items"),
                    &[
                        "type",
                        "status",
                        "reason",
                        "message",
                        "lastTransitionTime",
                        "observedGeneration",
                    ],
                    &["type", "status"],
                );
            }
            Special::OperatorStatus => {
                self.expect_object(node, at, &["knownDifferences", "pendingOperation", "annotations"], &[])
            }
            Special::OperatorSpec => {
                let exports = self.exports.clone();
                let mut parts = Vec::new();
                if !exports.secrets.is_empty() {
                    parts.push((
                        "secrets",
                        exports.secrets.iter().map(|(n, _)| n.clone()).collect::<Vec<String>>(),
                    ));
                }
                if !exports.config_maps.is_empty() {
                    parts.push((
                        "configMaps",
                        exports.config_maps.iter().map(|(n, _)| n.clone()).collect(),
                    ));
                }
                let mut names: Vec<&str> = parts.iter().map(|(n, _)| *n).collect();
                names.extend(["secretExpressions", "configMapExpressions"]);
                self.expect_object(node, at, &names, &[]);
                for list in ["secretExpressions", "configMapExpressions"] {
                    let list_at = format!("{at}/properties/{list}");
                    let list_node = node
                        .pointer(&format!("/properties/{list}"))
                        .cloned()
                        .unwrap_or_default();
                    self.expect_type(&list_node, &list_at, "array");
                    let items = list_node.get("items").cloned().unwrap_or_default();
                    self.expect_object(
                        &items,
                        &format!("{list_at}/items"),
                        &["name", "key", "value"],
                        &["name", "key", "value"],
                    );
                }
                for (part, exports) in &parts {
                    let part_at = format!("{at}/properties/{part}");
                    let part_node = node
                        .pointer(&format!("/properties/{part}"))
                        .cloned()
                        .unwrap_or_default();
                    let exports: Vec<&str> = exports.iter().map(String::as_str).collect();
                    self.expect_object(&part_node, &part_at, &exports, &[]);
                    for e in exports {
                        let dest = part_node
                            .pointer(&format!("/properties/{e}"))
                            .cloned()
                            .unwrap_or_default();
                        self.expect_object(
                            &dest,
                            &format!("{part_at}/properties/{e}"),
                            &["name", "key"],
                            &["name", "key"],
                        );
                    }
                }
            }
        }
    }

    /// Validation keywords: in spec, those of the IR where the type allows them; in status, none.
    fn validation(&mut self, node: &Value, f: &KubeField, at: &str, spec: bool) {
        let v = &f.validation;
        let target = match (&f.ty, node.pointer("/properties/armId")) {
            (KubeRef::ResourceRef, Some(arm_id)) => arm_id,
            _ => node,
        };
        let keywords = [
            ("pattern", v.pattern.as_ref().map(|p| json!(p))),
            ("minLength", v.min_length.map(|x| json!(x))),
            ("maxLength", v.max_length.map(|x| json!(x))),
            ("minimum", v.minimum.map(|x| json!(x))),
            ("maximum", v.maximum.map(|x| json!(x))),
            ("minItems", v.min_items.map(|x| json!(x))),
            ("maxItems", v.max_items.map(|x| json!(x))),
        ];
        for (key, expected) in keywords {
            let has = target.get(key);
            match (spec, expected, has) {
                (false, _, Some(h)) => self.err(at, format!("status carries {key}: {h}")),
                (true, Some(e), Some(h)) if *h != e => self.err(at, format!("{key} is {h}, the IR says {e}")),
                (true, None, Some(h)) => self.err(at, format!("{key} {h} the IR does not have")),
                (true, Some(e), None) if applies(key, &f.ty) => self.err(at, format!("{key} {e} missing")),
                _ => {}
            }
        }
        if node.get("uniqueItems").is_some() {
            self.err(at, "uniqueItems is forbidden in CRDs");
        }
    }

    fn of_ref(&mut self, node: &Value, ty: &KubeRef, at: &str, spec: bool, correlatable: bool) {
        match ty {
            KubeRef::Kube(id) => {
                if self.stack.contains(id) {
                    self.expect_type(node, at, "object");
                    self.allow_preserve(at, "recursion");
                    return;
                }
                let Some(t) = self.kube.types.get(id) else {
                    return self.err(at, format!("the shape has no type {id}"));
                };
                self.stack.push(id.clone());
                let outer = self.container.replace(t.source.clone());
                self.fields(node, &t.fields, at, spec, correlatable);
                self.container = outer;
                self.stack.pop();
            }
            KubeRef::ArmEnum(id) => {
                self.expect_type(node, at, "string");
                match self.ir.types.get(id).map(|t| &t.kind) {
                    Some(TypeKind::Enum(e)) if e.open => {
                        if node.get("enum").is_some() {
                            self.err(at, "an open enum has an enum list: new values would be rejected");
                        }
                    }
                    Some(TypeKind::Enum(e)) => {
                        let values: Vec<Value> = e.values.iter().map(|v| json!(v.value)).collect();
                        if node.get("enum") != Some(&Value::Array(values)) {
                            self.err(at, "a closed enum without its values");
                        }
                    }
                    _ => self.err(at, format!("no enum {id} in the IR")),
                }
            }
            KubeRef::ArmUnion(_) => {
                self.expect_type(node, at, "object");
                self.allow_preserve(at, "union");
            }
            KubeRef::Primitive(p) => {
                let (t, format) = match p {
                    Primitive::String => ("string", None),
                    Primitive::Bool => ("boolean", None),
                    Primitive::Int32 => ("integer", Some("int32")),
                    Primitive::Int64 => ("integer", Some("int64")),
                    Primitive::Float => ("number", Some("float")),
                    Primitive::Double => ("number", Some("double")),
                };
                self.expect_type(node, at, t);
                if node.get("format").and_then(Value::as_str) != format {
                    self.err(at, format!("format {:?}, expected {format:?}", node.get("format")));
                }
            }
            KubeRef::Array(inner) => {
                self.expect_type(node, at, "array");
                let items = node.get("items").cloned().unwrap_or_default();
                self.site = self.site.take().map(|s| format!("{s}/items"));
                self.of_ref(&items, inner, &format!("{at}/items"), spec, false);
            }
            KubeRef::Map(inner) => {
                self.expect_type(node, at, "object");
                let values = node.get("additionalProperties").cloned().unwrap_or_default();
                self.site = self.site.take().map(|s| format!("{s}/additionalProperties"));
                self.of_ref(
                    &values,
                    inner,
                    &format!("{at}/additionalProperties"),
                    spec,
                    correlatable,
                );
            }
            KubeRef::Json => {
                if node.get("x-kubernetes-preserve-unknown-fields") != Some(&json!(true)) {
                    self.err(at, "free-form JSON without x-kubernetes-preserve-unknown-fields");
                }
                self.allow_preserve(at, "json");
            }
            KubeRef::Secret => self.expect_object(node, at, &["name", "key"], &["name", "key"]),
            KubeRef::ResourceRef => self.expect_object(node, at, &["armId", "group", "kind", "name", "namespace"], &[]),
            KubeRef::ConfigMapRef => self.expect_object(node, at, &["name", "key"], &["name", "key"]),
            KubeRef::RefKeys(_) => {
                self.expect_type(node, at, "array");
                let items = node.get("items").cloned().unwrap_or_default();
                self.expect_object(
                    &items,
                    &format!("{at}/items"),
                    &["armId", "group", "kind", "name", "namespace"],
                    &[],
                );
            }
        }
    }

    fn expect_type(&mut self, node: &Value, at: &str, t: &str) {
        if node.get("type").and_then(Value::as_str) != Some(t) {
            self.err(at, format!("type {:?}, expected {t}", node.get("type")));
        }
    }

    fn expect_object(&mut self, node: &Value, at: &str, props: &[&str], required: &[&str]) {
        self.expect_type(node, at, "object");
        let names: Vec<&str> = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        if names != props {
            self.err(at, format!("properties {names:?}, expected {props:?}"));
        }
        let listed: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if listed != required {
            self.err(at, format!("required {listed:?}, expected {required:?}"));
        }
    }
}

/// Whether the validation keyword `key` can sit on (or, for references, inside) a node of type `ty`.
fn applies(key: &str, ty: &KubeRef) -> bool {
    match key {
        "pattern" | "minLength" | "maxLength" => matches!(
            ty,
            KubeRef::Primitive(Primitive::String) | KubeRef::ArmEnum(_) | KubeRef::ResourceRef
        ),
        "minimum" | "maximum" => {
            matches!(ty, KubeRef::Primitive(p) if !matches!(p, Primitive::String | Primitive::Bool))
        }
        _ => matches!(ty, KubeRef::Array(_)),
    }
}

/// The apiextensions v1 structural-schema rules, on every node: a `type` (unless the node preserves unknown
/// fields or is int-or-string), no `$ref`, never `properties` beside `additionalProperties`, no `uniqueItems`,
/// and `x-kubernetes-preserve-unknown-fields` only at `allowed` pointers.
fn structural(node: &Value, at: &str, allowed: &BTreeSet<String>, errors: &mut Vec<String>) {
    let Some(m) = node.as_object() else {
        errors.push(format!("{at}: a schema that is not an object"));
        return;
    };
    let preserve = m.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
    let int_or_string = m.get("x-kubernetes-int-or-string") == Some(&json!(true));
    match m.get("type").and_then(Value::as_str) {
        Some("object" | "array" | "string" | "integer" | "number" | "boolean") => {}
        Some(other) => errors.push(format!("{at}: type {other}")),
        None if preserve || int_or_string => {}
        None => errors.push(format!("{at}: no type")),
    }
    for forbidden in [
        "$ref",
        "uniqueItems",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "definitions",
        "$schema",
        "id",
    ] {
        if m.contains_key(forbidden) {
            errors.push(format!("{at}: {forbidden}"));
        }
    }
    if m.contains_key("properties") && m.contains_key("additionalProperties") {
        errors.push(format!("{at}: properties beside additionalProperties"));
    }
    if preserve && !allowed.contains(at) {
        errors.push(format!(
            "{at}: x-kubernetes-preserve-unknown-fields where the shape has no free-form JSON"
        ));
    }
    if m.get("type") == Some(&json!("array")) && !m.contains_key("items") {
        errors.push(format!("{at}: an array without items"));
    }
    if m.get("type") == Some(&json!("object"))
        && !preserve
        && !m.contains_key("properties")
        && !m.contains_key("additionalProperties")
        && at != "/properties/metadata"
    {
        errors.push(format!(
            "{at}: an object that declares nothing (every field would be pruned)"
        ));
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        for (name, p) in props {
            structural(p, &format!("{at}/properties/{name}"), allowed, errors);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = m.get(key) {
            structural(child, &format!("{at}/{key}"), allowed, errors);
        }
    }
}

/// No key `$ref` anywhere in the manifest.
fn no_refs(v: &Value, at: &str, errors: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k == "$ref" {
                    errors.push(format!("{at}: $ref"));
                }
                no_refs(child, &format!("{at}/{k}"), errors);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                no_refs(child, &format!("{at}/{i}"), errors);
            }
        }
        _ => {}
    }
}

/// An allowed preserve-unknown-fields node: `kind version`, JSON pointer, why, and the spec site of the ARM
/// property it stands for (see [`ShapeCheck::site`]).
type Preserved = (String, String, &'static str, Option<String>);

/// Checks every version of every manifest against the shapes; returns the allowed preserve-unknown-fields
/// nodes.
fn check_all(crds: &[Crd], versions: &[(&KubeIr, &Ir)]) -> Vec<Preserved> {
    let mut errors = Vec::new();
    let mut preserved = Vec::new();
    for c in crds {
        no_refs(&c.manifest, &c.kind, &mut errors);
        for (kube, ir) in versions.iter().filter(|(k, _)| k.group == c.group) {
            // A template kind (`<Kind>Template`) follows its kind's spec, under spec.template.spec.
            let template_of = kube
                .resources
                .iter()
                .find(|r| r.template && format!("{}Template", r.kind) == c.kind);
            let Some(r) = kube.resources.iter().find(|r| r.kind == c.kind).or(template_of) else {
                assert!(
                    c.schema(&kube.version).is_none(),
                    "{} has version {} that lacks the kind",
                    c.kind,
                    kube.version
                );
                continue;
            };
            let root = c
                .schema(&kube.version)
                .unwrap_or_else(|| panic!("{} lacks version {}", c.kind, kube.version));
            let mut check = ShapeCheck {
                kube,
                ir,
                owner: r.owner.clone(),
                exports: r.exports.clone(),
                stack: Vec::new(),
                container: Some(r.arm_body.clone()),
                site: None,
                preserve_allowed: BTreeSet::new(),
                preserve_why: Vec::new(),
                described: !c.undescribed.contains(&kube.version),
                errors: Vec::new(),
            };
            let root_props: Vec<&str> = root
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            if template_of.is_some() {
                assert_eq!(root_props, ["apiVersion", "kind", "metadata", "spec"], "{}", c.kind);
                assert_eq!(root["required"], json!(["spec"]), "{}", c.kind);
                let template_spec = root.pointer("/properties/spec").cloned().unwrap_or_default();
                check.expect_object(&template_spec, "/properties/spec", &["template"], &["template"]);
                let template = template_spec
                    .pointer("/properties/template")
                    .cloned()
                    .unwrap_or_default();
                check.expect_object(
                    &template,
                    "/properties/spec/properties/template",
                    &["metadata", "spec"],
                    &["spec"],
                );
                let spec = template.pointer("/properties/spec").cloned().unwrap_or_default();
                let at = "/properties/spec/properties/template/properties/spec";
                check.fields(&spec, &r.spec_fields, at, true, true);
            } else {
                assert_eq!(
                    root_props,
                    ["apiVersion", "kind", "metadata", "spec", "status"],
                    "{}",
                    c.kind
                );
                let spec = root.pointer("/properties/spec").cloned().unwrap_or_default();
                let status = root.pointer("/properties/status").cloned().unwrap_or_default();
                check.fields(&spec, &r.spec_fields, "/properties/spec", true, true);
                check.fields(&status, &r.status_fields, "/properties/status", false, true);
            }
            let mut structural_errors = Vec::new();
            structural(root, "", &check.preserve_allowed, &mut structural_errors);
            for e in check.errors.iter().chain(&structural_errors) {
                errors.push(format!("{} {}: {e}", c.kind, kube.version));
            }
            preserved.extend(
                check
                    .preserve_why
                    .into_iter()
                    .map(|(at, why, site)| (format!("{} {}", c.kind, kube.version), at, why, site)),
            );
        }
    }
    assert!(errors.is_empty(), "{} problems:\n{}", errors.len(), errors.join("\n"));
    preserved
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_manifests_are_structural_and_follow_the_shape() {
    let g = generation();
    let crds = generated_crds(g);
    let versions: Vec<(&KubeIr, &Ir)> = g.kubes.iter().map(|(k, kube)| (kube, &g.irs[k])).collect();
    let preserved = check_all(&crds, &versions);
    // `spec.owner` (which `check_all` compares with the shape) is what the registry says of where each kind lives
    // (`KindInfo::owner_kind`, `KindInfo::arm.scope`; docs/config.md, "Scopes and names"): a child kind's parent
    // by name, a resource-group kind's resource group by name or ARM ID, an extension kind's scope by ARM ID or
    // custom resource; a subscription-scoped kind (resource groups) has no owner.
    for kube in g.kubes.values() {
        for r in &kube.resources {
            let info = aks_api::every_kind()
                .find(|k| k.kube_group == kube.group && k.version == kube.version && k.kind == r.kind)
                .unwrap_or_else(|| panic!("{} {}: not in aks_api::every_kind()", r.kind, kube.version));
            let expected = match (info.owner_kind, info.arm.scope) {
                (Some(parent), _) => Some(Owner::Parent(parent.to_string())),
                (None, Scope::ResourceGroup) => Some(Owner::ResourceGroup),
                (None, Scope::Extension) => Some(Owner::Scope),
                (None, Scope::Subscription | Scope::Tenant) => None,
            };
            let owner_field = r.spec_fields.iter().any(|f| f.special == Special::Owner);
            match expected {
                Some(owner) => {
                    assert_eq!(r.owner, owner, "{} {}", r.kind, kube.version);
                    assert!(owner_field, "{} {}: no spec.owner", r.kind, kube.version);
                }
                None => assert!(
                    !owner_field,
                    "{} {}: spec.owner, but the kind lives in the {:?} scope",
                    r.kind, kube.version, info.arm.scope
                ),
            }
        }
    }
    // The configured specs have no unions, and free-form JSON in spec only where the config makes a type or file
    // opaque (`overrides.types.X.opaque`, `overrides.opaqueFiles`; the network group's NetworkSecurityGroup,
    // RouteTable and ServiceEndpointPolicy, which a subnet points at by id): each such node stands for a `$ref`
    // site that generation reports as an opaque stand-in. In status, what preserves unknown fields is the
    // error-detail recursion (ErrorDetail.details, the pod identity error body), each cut reported, and opaque
    // stand-ins.
    let opaque_sites: BTreeSet<&str> = g
        .irs
        .values()
        .flat_map(|ir| &ir.diagnostics)
        .filter(|d| d.message.starts_with("stands in as opaque JSON"))
        .map(|d| d.at.as_str())
        .collect();
    for (at, pointer, why, site) in &preserved {
        assert_ne!(*why, "union", "{at} {pointer}");
        if pointer.starts_with("/properties/spec") {
            assert!(
                *why == "json" && site.as_deref().is_some_and(|s| opaque_sites.contains(s)),
                "{at} {pointer}: {why} in spec, and not an opaque stand-in of the config (site {site:?})"
            );
        }
    }
    let cuts = preserved.iter().filter(|(_, _, why, _)| *why == "recursion").count();
    let reported: usize = crds
        .iter()
        .map(|c| {
            c.diagnostics
                .iter()
                .filter(|d| d.message.contains("recursive type"))
                .count()
        })
        .sum();
    assert_eq!(cuts, reported, "every recursion cut is reported");
    assert!(
        cuts > 0,
        "the AKS status types ErrorDetail and the pod identity error body recurse"
    );
}

/// One CRD per kind and per template kind of every configured group, each under its group's Kubernetes API
/// group (`<group name>.<output.apiDomain>`), with the registry's versions and storage flags.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_manifest_layout() {
    let g = generation();
    let crds = generated_crds(g);
    let config = common::config();
    // Kubernetes API group → the configured group's name (the registry's `group`, the generation's keys).
    let groups: BTreeMap<String, String> = config
        .groups
        .iter()
        .map(|(name, group)| (group.kube_group(name, &config.output.api_domain), name.clone()))
        .collect();
    let kinds: BTreeSet<(String, String)> = crds.iter().map(|c| (c.group.clone(), c.kind.clone())).collect();
    let mut expected: BTreeSet<(String, String)> = g
        .kubes
        .values()
        .flat_map(|k| k.resources.iter().map(|r| (k.group.clone(), r.kind.clone())))
        .collect();
    let templates: BTreeSet<(String, String)> = g
        .kubes
        .values()
        .flat_map(|k| {
            k.resources
                .iter()
                .filter(|r| r.template)
                .map(|r| (k.group.clone(), format!("{}Template", r.kind)))
        })
        .collect();
    let configured: BTreeSet<(String, String)> = config
        .groups
        .iter()
        .flat_map(|(name, group)| {
            let kube_group = group.kube_group(name, &config.output.api_domain);
            group
                .kubernetes
                .resources
                .iter()
                .filter(|(_, r)| r.template)
                .map(move |(kind, _)| (kube_group.clone(), format!("{kind}Template")))
        })
        .collect();
    assert_eq!(
        templates, configured,
        "a template kind for each kind azure-arm.yaml switches templates on for (ManagedCluster and AgentPool)"
    );
    assert!(!templates.is_empty());
    expected.extend(templates.iter().cloned());
    assert_eq!(kinds, expected, "one CRD per kind and per template kind");
    assert_eq!(crds.len(), expected.len(), "one CRD per kind");
    assert_eq!(
        crds.iter().map(|c| c.group.clone()).collect::<BTreeSet<_>>(),
        groups.keys().cloned().collect::<BTreeSet<_>>(),
        "CRDs in the API group of every configured group, and in no other"
    );

    // The files generation writes: exactly the manifests, named <plural>.<group>.yaml, starting with the header,
    // and the kustomization that lists them all (for config/crd).
    let files: BTreeSet<PathBuf> = g.files.keys().filter(|p| p.starts_with("crds")).cloned().collect();
    let mut paths: BTreeSet<PathBuf> = crds.iter().map(Crd::path).collect();
    paths.insert(PathBuf::from("crds/kustomization.yaml"));
    assert_eq!(files, paths);
    let kustomization = &g.files[&PathBuf::from("crds/kustomization.yaml")];
    assert!(kustomization.starts_with("# Code generated by armgen"));
    let parsed: serde_json::Value = serde_yaml_ng::from_str(kustomization).expect("kustomization.yaml parses");
    assert_eq!(parsed["kind"], "Kustomization");
    let listed: Vec<&str> = parsed["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let mut expected: Vec<String> = crds.iter().map(|c| format!("{}.{}.yaml", c.plural, c.group)).collect();
    expected.sort();
    assert_eq!(listed, expected, "every manifest, sorted");
    let aks = aks();
    for c in &crds {
        let group = &c.group;
        let group_name = &groups[group];
        // The versions of the registry that have the kind (a template kind: its base kind), and its storage version.
        let template = templates.contains(&(group.clone(), c.kind.clone()));
        let base = c.kind.strip_suffix("Template").filter(|_| template).unwrap_or(&c.kind);
        let registry: Vec<&armgen_runtime::KindInfo> = aks_api::every_kind()
            .filter(|k| k.kube_group == group && k.kind == base)
            .collect();
        assert!(
            registry.iter().all(|k| k.group == group_name),
            "{}: the registry's group",
            c.kind
        );
        // The registry's plural (`userassignedidentities`); a template kind's is `<kind>templates`.
        let plurals: BTreeSet<&str> = registry.iter().map(|k| k.plural).collect();
        assert_eq!(plurals.len(), 1, "{}: one plural in every version: {plurals:?}", c.kind);
        let plural = match (template, plurals.first()) {
            (true, _) => format!("{}templates", base.to_ascii_lowercase()),
            (false, Some(p)) => p.to_string(),
            (false, None) => unreachable!("checked above"),
        };
        assert_eq!(c.plural, plural, "{}", c.kind);
        assert_eq!(c.path(), PathBuf::from(format!("crds/{plural}.{group}.yaml")));
        let text = &g.files[&c.path()];
        assert!(text.starts_with("# Code generated by armgen"), "{}", c.kind);

        let m = &c.manifest;
        assert_eq!(m["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(m["kind"], "CustomResourceDefinition");
        assert_eq!(m["metadata"]["name"], format!("{plural}.{group}"));
        assert_eq!(m["spec"]["group"], group.as_str());
        assert_eq!(m["spec"]["scope"], "Namespaced");
        assert_eq!(m["spec"]["names"]["kind"], c.kind.as_str());
        assert_eq!(m["spec"]["names"]["listKind"], format!("{}List", c.kind));
        assert_eq!(m["spec"]["names"]["plural"], plural);

        let versions = m["spec"]["versions"].as_array().expect("versions");
        let names: Vec<&str> = versions.iter().filter_map(|v| v["name"].as_str()).collect();
        let mut want: Vec<&str> = registry.iter().map(|k| k.version).collect();
        want.sort();
        assert_eq!(names, want, "{}: every served version of the kind", c.kind);
        // The header names each version's ARM API version.
        for version in &want {
            let api = &g.irs[&format!("{group_name}/{version}")].api_version;
            let line = format!("# ARM API version: {api} (Kubernetes version {version})\n");
            assert!(text.contains(&line), "{}: no {line:?}", c.kind);
        }
        for v in versions {
            let storage = registry.iter().any(|k| k.storage && v["name"] == k.version);
            assert_eq!(
                v["storage"], storage,
                "{}: storage follows the config (KindInfo::storage)",
                c.kind
            );
            assert_eq!(v["served"], true);
            if template {
                assert!(v.get("subresources").is_none(), "{}: a template has no status", c.kind);
                assert_eq!(
                    v["additionalPrinterColumns"],
                    json!([{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}])
                );
                continue;
            }
            assert_eq!(v["subresources"]["status"], json!({}));
            // `scale` where spec and status both have an integer `count` at their root (AKS: AgentPool).
            let version = v["name"].as_str().unwrap_or_default();
            let resource = g.kubes[&format!("{group_name}/{version}")]
                .resources
                .iter()
                .find(|r| r.kind == c.kind)
                .unwrap_or_else(|| panic!("{} {version}: no shape", c.kind));
            let integer_count = |fields: &[KubeField]| {
                fields.iter().any(|f| {
                    f.json_name == "count" && matches!(f.ty, KubeRef::Primitive(Primitive::Int32 | Primitive::Int64))
                })
            };
            let scaled = integer_count(&resource.spec_fields) && integer_count(&resource.status_fields);
            if *group == aks && c.kind == "AgentPool" {
                assert!(scaled, "AgentPool {version}: an integer count in spec and status");
            }
            let scale = json!({"specReplicasPath": ".spec.count", "statusReplicasPath": ".status.count"});
            if scaled {
                assert_eq!(v["subresources"]["scale"], scale);
            } else {
                assert!(v["subresources"].get("scale").is_none(), "{}: no scale", c.kind);
            }
            let action = aks_api::ACTIONS
                .iter()
                .any(|a| a.kind.kube_group == group && a.kind.kind == c.kind);
            if action {
                assert_eq!(
                    v["additionalPrinterColumns"][0]["jsonPath"], ".spec.owner.name",
                    "{}",
                    c.kind
                );
                assert_eq!(
                    v["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][0]["rule"],
                    "self == oldSelf",
                    "{}: an action's spec is fixed",
                    c.kind
                );
                continue;
            }
            assert_eq!(
                v["additionalPrinterColumns"],
                json!([
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Reason", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ])
            );
        }
        assert_eq!(
            versions.iter().filter(|v| v["storage"] == true).count(),
            1,
            "{}: one storage version",
            c.kind
        );
    }

    // What tools get: the same schema the file has, in every version.
    let mc = find(&crds, "ManagedCluster");
    for version in served_versions(g, "ManagedCluster") {
        assert_eq!(
            crd::schema_for(g, "ManagedCluster", version).as_ref(),
            Some(schema(mc, version))
        );
        assert!(crd::schema_for(g, "NoSuchKind", version).is_none());
    }
    // A fixture: 2024-09-01 (v1beta1) has no ManagedNamespace.
    assert!(crd::schema_for(g, "ManagedNamespace", "v1beta1").is_none());
}

// ---------------------------------------------------------------------------------------------------------
// 2. The YAML is what the emitter built, and k8s-openapi reads and writes it back unchanged.

fn round_trip(crds: &[Crd], texts: &dyn Fn(&Crd) -> String) {
    for c in crds {
        let text = texts(c);
        let parsed: Value = serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: YAML: {e}", c.kind));
        assert_eq!(parsed, c.manifest, "{}: the YAML reads back as the manifest", c.kind);
        let typed: CustomResourceDefinition =
            serde_json::from_value(parsed.clone()).unwrap_or_else(|e| panic!("{}: k8s-openapi: {e}", c.kind));
        let back = serde_json::to_value(&typed).expect("serialize");
        if back != parsed {
            let (a, b) = (
                serde_json::to_string_pretty(&parsed).unwrap_or_default(),
                serde_json::to_string_pretty(&back).unwrap_or_default(),
            );
            let first = a.lines().zip(b.lines()).position(|(x, y)| x != y).unwrap_or(0);
            panic!(
                "{}: k8s-openapi drops or changes something near line {first}:\n{}\n---\n{}",
                c.kind,
                a.lines()
                    .skip(first.saturating_sub(3))
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n"),
                b.lines()
                    .skip(first.saturating_sub(3))
                    .take(8)
                    .collect::<Vec<_>>()
                    .join("\n"),
            );
        }
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_manifests_round_trip_through_k8s_openapi() {
    let g = generation();
    let crds = generated_crds(g);
    round_trip(&crds, &|c| g.files[&c.path()].clone());
    // Deterministic: built again, byte for byte the same.
    let again = generated_crds(g);
    for (a, b) in crds.iter().zip(&again) {
        assert_eq!(a.to_yaml().ok(), b.to_yaml().ok(), "{}", a.kind);
    }
}

#[test]
fn fixture_manifests_round_trip_through_k8s_openapi() {
    let crds = fixture_crds();
    round_trip(&crds, &|c| c.to_yaml().expect("yaml"));
}

// ---------------------------------------------------------------------------------------------------------
// 3, 4. Hand-built custom resources against the schemas.

const SUBNET: &str = "/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/a";

fn managed_cluster(version: &str) -> Value {
    // 2024-09-01 (v1beta1) marks no property x-ms-secret; azure-arm.yaml's overrides make the service
    // principal secret a secret reference there too.
    let secret = json!({"name": "aks-sp", "key": "secret"});
    json!({
        "apiVersion": format!("{}/{version}", aks()),
        "kind": "ManagedCluster",
        "metadata": {"name": "aks1", "namespace": "default"},
        "spec": {
            "azureName": "aks-prod-1",
            "owner": {"name": "rg-prod"},
            "location": "westeurope",
            "tags": {"team": "platform"},
            "kubernetesVersion": "1.33",
            "dnsPrefix": "aks1",
            "agentPoolProfiles": [
                {"name": "system", "count": 3, "vmSize": "Standard_D4s_v5", "mode": "System", "osType": "Linux",
                 "enableAutoScaling": true, "minCount": 1, "maxCount": 5, "availabilityZones": ["1", "2", "3"],
                 "nodeLabels": {"role": "system"}, "vnetSubnetID": {"armId": SUBNET}}
            ],
            "linuxProfile": {"adminUsername": "azureuser", "ssh": {"publicKeys": [{"keyData": "ssh-rsa AAAA"}]}},
            "servicePrincipalProfile": {"clientId": "msi", "secret": secret},
            "identity": {"type": "SystemAssigned"},
            "networkProfile": {
                "networkPlugin": "azure", "podCidr": "10.244.0.0/16", "serviceCidr": "10.0.0.0/16",
                "dnsServiceIP": "10.0.0.10", "outboundType": "loadBalancer",
            },
            "diskEncryptionSetID": {"kind": "DiskEncryptionSet", "group": "compute.armgen.dev", "name": "des1"},
            "sku": {"name": "Base", "tier": "Standard"},
            "enableRBAC": true,
            "addonProfiles": {"azurepolicy": {"enabled": true, "config": {"version": "v2"}}},
        },
        "status": {
            "id": "/subscriptions/0/resourceGroups/rg-prod/providers/Microsoft.ContainerService/managedClusters/aks1",
            "provisioningState": "Succeeded",
            "fqdn": "aks1-abc.hcp.westeurope.azmk8s.io",
            "maxAgentPools": 100,
            "powerState": {"code": "Running"},
            "agentPoolProfiles": [{"name": "system", "count": 3, "provisioningState": "Succeeded"}],
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                            "lastTransitionTime": "2025-11-30T07:00:00Z", "observedGeneration": 2}],
            "operatorStatus": {
                "pendingOperation": "https://management.azure.com/operations/1",
                "knownDifferences": [{"path": "spec.kubernetesVersion", "desired": "1.33", "actual": "1.33.2"}],
            },
        },
    })
}

fn agent_pool(version: &str) -> Value {
    json!({
        "apiVersion": format!("{}/{version}", aks()),
        "kind": "AgentPool",
        "metadata": {"name": "pool1", "namespace": "default"},
        "spec": {
            "owner": {"name": "aks1"},
            "azureName": "pool1",
            "count": 3,
            "vmSize": "Standard_D8s_v5",
            "osDiskSizeGB": 128,
            "osType": "Linux",
            "osSKU": "AzureLinux",
            "mode": "User",
            "vnetSubnetID": {"kind": "VirtualNetworksSubnet", "group": "network.armgen.dev", "name": "nodes"},
            "nodeLabels": {"workload": "batch"},
            "nodeTaints": ["batch=true:NoSchedule"],
            "upgradeSettings": {"maxSurge": "33%", "drainTimeoutInMinutes": 30},
            "tags": {"team": "batch"},
        },
        "status": {
            "count": 3,
            "provisioningState": "Succeeded",
            "conditions": [{"type": "Ready", "status": "False", "reason": "Reconciling", "message": "PUT in progress"}],
        },
    })
}

/// Applies `edit` to a copy of `base` at the JSON pointer `pointer` (the parent must exist).
fn with(base: &Value, pointer: &str, value: Option<Value>) -> Value {
    let mut out = base.clone();
    let (parent, key) = pointer.rsplit_once('/').expect("pointer");
    let target = out.pointer_mut(parent).unwrap_or_else(|| panic!("no {parent}"));
    match (target, value) {
        (Value::Object(m), Some(v)) => {
            m.insert(key.to_string(), v);
        }
        (Value::Object(m), None) => {
            m.remove(key);
        }
        (Value::Array(a), Some(v)) => a[key.parse::<usize>().expect("index")] = v,
        (other, _) => panic!("{parent} is {other}"),
    }
    out
}

/// `instance` must fail, with an error naming `field` (a JSON pointer) and containing `what`.
fn rejected(schema: &Value, instance: &Value, field: &str, what: &str) {
    match common::validate(schema, instance) {
        Ok(()) => panic!("accepted, but {field} is invalid ({what})"),
        Err(errors) => assert!(
            errors
                .iter()
                .any(|e| e.starts_with(&format!("{field}: ")) && e.contains(what)),
            "no error at {field} containing {what:?}: {errors:#?}"
        ),
    }
}

fn accepted(schema: &Value, instance: &Value) {
    if let Err(errors) = common::validate(schema, instance) {
        panic!("rejected: {errors:#?}");
    }
}

/// `mc` with every export of azure-arm.yaml's ManagedCluster given a destination.
fn with_operator_spec(mc: &Value) -> Value {
    with(
        mc,
        "/spec/operatorSpec",
        Some(json!({
            "secrets": {
                "adminCredentials": {"name": "aks1-admin", "key": "kubeconfig"},
                "userCredentials": {"name": "aks1-user", "key": "kubeconfig"},
            },
            "configMaps": {
                "oidcIssuerUrl": {"name": "aks1-info", "key": "issuer"},
                "principalId": {"name": "aks1-info", "key": "principalId"},
            },
        })),
    )
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_valid_custom_resources_pass() {
    let g = generation();
    let crds = generated_crds(g);
    for version in served_versions(g, "ManagedCluster") {
        accepted(
            schema(find(&crds, "ManagedCluster"), version),
            &managed_cluster(version),
        );
        accepted(
            schema(find(&crds, "ManagedCluster"), version),
            &with_operator_spec(&managed_cluster(version)),
        );
        accepted(schema(find(&crds, "AgentPool"), version), &agent_pool(version));
        // Template kinds: the kind's spec under spec.template.spec.
        accepted(
            schema(find(&crds, "ManagedClusterTemplate"), version),
            &template_of(&with_operator_spec(&managed_cluster(version))),
        );
        accepted(
            schema(find(&crds, "AgentPoolTemplate"), version),
            &template_of(&agent_pool(version)),
        );
    }
}

/// A `<Kind>Template` instance whose `spec.template.spec` is `cr`'s spec.
fn template_of(cr: &Value) -> Value {
    json!({
        "apiVersion": cr["apiVersion"],
        "kind": format!("{}Template", cr["kind"].as_str().unwrap_or_default()),
        "metadata": {"name": "standard", "namespace": "default"},
        "spec": {"template": {"spec": cr["spec"]}},
    })
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_template_instances_are_validated_like_the_kind() {
    let g = generation();
    let crds = generated_crds(g);
    for version in served_versions(g, "ManagedCluster") {
        let s = schema(find(&crds, "ManagedClusterTemplate"), version);
        let t = template_of(&managed_cluster(version));
        accepted(s, &t);
        // The kind's validation applies under spec.template.spec.
        let bad = with(
            &t,
            "/spec/template/spec/agentPoolProfiles/0/name",
            Some(json!("System_Pool")),
        );
        rejected(
            s,
            &bad,
            "/spec/template/spec/agentPoolProfiles/0/name",
            "does not match",
        );
        rejected(
            s,
            &with(&t, "/spec/template/spec/location", None),
            "/spec/template/spec",
            "location",
        );
        // A template has no status, and its spec is the template.
        let bad = with(&t, "/status", Some(json!({})));
        rejected(s, &bad, "", "status");
        rejected(s, &with(&t, "/spec/template", None), "/spec", "template");
        let s = schema(find(&crds, "AgentPoolTemplate"), version);
        let t = template_of(&agent_pool(version));
        let bad = with(&t, "/spec/template/spec/osDiskSizeGB", Some(json!(4096)));
        rejected(s, &bad, "/spec/template/spec/osDiskSizeGB", "maximum");
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_invalid_custom_resources_are_rejected_naming_the_field() {
    let g = generation();
    let crds = generated_crds(g);
    for version in served_versions(g, "ManagedCluster") {
        let mc = managed_cluster(version);
        let s = schema(find(&crds, "ManagedCluster"), version);
        // pattern ^[a-z][a-z0-9]{0,11}$ on the agent pool name
        let bad = with(&mc, "/spec/agentPoolProfiles/0/name", Some(json!("System_Pool")));
        rejected(s, &bad, "/spec/agentPoolProfiles/0/name", "does not match");
        // pattern on a CIDR
        let bad = with(&mc, "/spec/networkProfile/podCidr", Some(json!("10.244.0.0/16/x")));
        rejected(s, &bad, "/spec/networkProfile/podCidr", "does not match");
        // required location
        rejected(s, &with(&mc, "/spec/location", None), "/spec", "location");
        // a secret reference needs its key (a secret in every version: x-ms-secret, or azure-arm.yaml's override)
        let bad = with(&mc, "/spec/servicePrincipalProfile/secret/key", None);
        rejected(s, &bad, "/spec/servicePrincipalProfile/secret", "key");
        // a secret value inline is not a reference
        let bad = with(&mc, "/spec/servicePrincipalProfile/secret", Some(json!("hunter2")));
        rejected(s, &bad, "/spec/servicePrincipalProfile/secret", "object");
        // wrong type
        let bad = with(&mc, "/spec/agentPoolProfiles/0/count", Some(json!("three")));
        rejected(s, &bad, "/spec/agentPoolProfiles/0/count", "integer");
        // a misspelled field (kubectl's strict field validation)
        let bad = with(&mc, "/spec/agentPoolProfile", Some(json!([])));
        rejected(s, &bad, "/spec", "agentPoolProfile");
        // a status condition status outside True/False/Unknown
        let bad = with(&mc, "/status/conditions/0/status", Some(json!("Maybe")));
        rejected(s, &bad, "/status/conditions/0/status", "Maybe");

        let ap = agent_pool(version);
        let s = schema(find(&crds, "AgentPool"), version);
        // maximum 2048
        let bad = with(&ap, "/spec/osDiskSizeGB", Some(json!(4096)));
        rejected(s, &bad, "/spec/osDiskSizeGB", "maximum");
        // minimum 1
        let bad = with(&ap, "/spec/upgradeSettings/drainTimeoutInMinutes", Some(json!(0)));
        rejected(s, &bad, "/spec/upgradeSettings/drainTimeoutInMinutes", "minimum");
        // the owner of a child resource is the parent, by name
        rejected(s, &with(&ap, "/spec/owner/name", None), "/spec/owner", "name");
        let bad = with(
            &ap,
            "/spec/owner/armId",
            Some(json!("/subscriptions/0/resourceGroups/rg")),
        );
        rejected(s, &bad, "/spec/owner", "armId");
    }

    // operatorSpec: only the declared exports, each a complete {name, key}.
    for version in served_versions(g, "ManagedCluster") {
        let s = schema(find(&crds, "ManagedCluster"), version);
        let mc = with_operator_spec(&managed_cluster(version));
        let bad = with(
            &mc,
            "/spec/operatorSpec/secrets/kubeconfig",
            Some(json!({"name": "k", "key": "k"})),
        );
        rejected(s, &bad, "/spec/operatorSpec/secrets", "kubeconfig");
        let bad = with(
            &mc,
            "/spec/operatorSpec/configMaps/fqdn",
            Some(json!({"name": "k", "key": "k"})),
        );
        rejected(s, &bad, "/spec/operatorSpec/configMaps", "fqdn");
        let bad = with(&mc, "/spec/operatorSpec/configMaps/principalId/key", None);
        rejected(s, &bad, "/spec/operatorSpec/configMaps/principalId", "key");
        // Expressions: complete {name, key, value} items.
        let good = with(
            &mc,
            "/spec/operatorSpec/configMapExpressions",
            Some(json!([{"name": "aks1-info", "key": "endpoint", "value": "self.status.fqdn + \":443\""}])),
        );
        accepted(s, &good);
        let bad = with(
            &mc,
            "/spec/operatorSpec/secretExpressions",
            Some(json!([{"name": "aks1-admin", "key": "k"}])),
        );
        rejected(s, &bad, "/spec/operatorSpec/secretExpressions/0", "value");
        // AgentPool declares no exports: an operatorSpec with expressions only.
        let ap = agent_pool(version);
        let ap_schema = schema(find(&crds, "AgentPool"), version);
        let good = with(
            &ap,
            "/spec/operatorSpec",
            Some(
                json!({"configMapExpressions": [{"name": "pool", "key": "count", "value": "string(self.spec.count)"}]}),
            ),
        );
        accepted(ap_schema, &good);
        let bad = with(&ap, "/spec/operatorSpec", Some(json!({"secrets": {}})));
        rejected(ap_schema, &bad, "/spec/operatorSpec", "secrets");
    }

    // A fixture of two versions: the one closed enum of AKS, ResourceIdentityType in 2024-09-01 (v1beta1);
    // 2025-10-01 (v2alpha1) opened it.
    let s = schema(find(&crds, "ManagedCluster"), "v1beta1");
    let bad = with(&managed_cluster("v1beta1"), "/spec/identity/type", Some(json!("Bogus")));
    rejected(s, &bad, "/spec/identity/type", "Bogus");
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_open_enums_accept_unknown_values() {
    let g = generation();
    let crds = generated_crds(g);
    for version in served_versions(g, "ManagedCluster") {
        let s = schema(find(&crds, "ManagedCluster"), version);
        let mc = with(
            &managed_cluster(version),
            "/spec/networkProfile/networkPlugin",
            Some(json!("futurePlugin")),
        );
        let mc = with(&mc, "/spec/sku/tier", Some(json!("Ultimate")));
        let mc = with(&mc, "/spec/agentPoolProfiles/0/osType", Some(json!("Plan9")));
        accepted(s, &mc);
        // The values are listed where the version keeps its descriptions (see `aks_manifests_are_under_one_mebibyte`).
        if !find(&crds, "ManagedCluster").undescribed.iter().any(|v| v == version) {
            let description = s
                .pointer("/properties/spec/properties/networkProfile/properties/networkPlugin/description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            assert!(
                description.contains("`azure`") && description.contains("`kubenet`"),
                "{description}"
            );
        }

        let s = schema(find(&crds, "AgentPool"), version);
        let ap = with(&agent_pool(version), "/spec/osSKU", Some(json!("FutureLinux")));
        accepted(s, &with(&ap, "/spec/mode", Some(json!("Gateway2"))));
    }
    // The same field, open in 2025-10-01 (a fixture, see above).
    let s = schema(find(&crds, "ManagedCluster"), "v2alpha1");
    accepted(
        s,
        &with(
            &managed_cluster("v2alpha1"),
            "/spec/identity/type",
            Some(json!("Bogus")),
        ),
    );
}

// ---------------------------------------------------------------------------------------------------------
// The fixture: closed enums, recursion, a union, a create-only property, a child resource.

fn widget() -> Value {
    json!({
        "apiVersion": "fixture.armgen.dev/v2",
        "kind": "Widget",
        "metadata": {"name": "w1"},
        "spec": {
            "owner": {"armId": "/subscriptions/0/resourceGroups/rg"},
            "location": "westeurope",
            "label": "blue-widget",
            "createdBy": "me",
            "size": "Medium",
            "osType": "Linux",
            "clash": "foo-bar",
            "color": "red",
            "zone": "1",
            "ports": [{"name": "http", "number": 80}],
            "network": {"subnetId": {"armId": "/subscriptions/0/x"}, "mode": "Overlay"},
            "adminPassword": {"name": "widget-secrets", "key": "password"},
            "tree": {"name": "root", "child": {"name": "leaf", "anything": {"goes": [1, 2]}}},
            "trigger": {"kind": "Schedule", "cron": "* * * * *"},
            "settings": {"a": 1, "b": [true]},
            "blob": "any JSON value",
        },
    })
}

#[test]
fn fixture_manifests_are_structural_and_follow_the_shape() {
    let f = fixture();
    let crds = fixture_crds();
    assert_eq!(
        crds.iter().map(|c| c.kind.as_str()).collect::<Vec<_>>(),
        // WidgetRestart: the action kind of the widget's POST `restart`.
        ["Gadget", "WidgetRestart", "Widget"]
    );
    let preserved = check_all(&crds, &[(&f.v1, &f.ir), (&f.v2, &f.ir)]);
    let widget_spec = |why: &str| {
        preserved
            .iter()
            .filter(|(at, p, w, _)| at == "Widget v2" && p.starts_with("/properties/spec") && *w == why)
            .map(|(_, p, _, _)| p.as_str())
            .collect::<Vec<_>>()
    };
    // Free-form JSON: settings (additionalProperties: true), blob ({}), extensions' values.
    let json = widget_spec("json");
    assert!(json.contains(&"/properties/spec/properties/blob"), "{json:?}");
    assert!(
        json.contains(&"/properties/spec/properties/settings/additionalProperties"),
        "{json:?}"
    );
    // Node.child and Node.children[], Folder.entry.parent: cut where the type recurs.
    let cuts = widget_spec("recursion");
    assert!(
        cuts.contains(&"/properties/spec/properties/tree/properties/child"),
        "{cuts:?}"
    );
    assert!(
        cuts.contains(&"/properties/spec/properties/tree/properties/children/items"),
        "{cuts:?}"
    );
    assert!(
        cuts.contains(&"/properties/spec/properties/folder/properties/entry/properties/parent"),
        "{cuts:?}"
    );
    assert!(!widget_spec("union").is_empty(), "the Trigger union");

    let w = find(&crds, "Widget");
    let notes: Vec<String> = w
        .diagnostics
        .iter()
        .map(|d| format!("{}: {}", d.at, d.message))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("spec.tree.child") && n.contains("recursive type")),
        "{notes:#?}"
    );
    assert!(notes.iter().any(|n| n.contains("discriminated union")), "{notes:#?}");
    let yaml = w.to_yaml().expect("yaml");
    assert!(
        yaml.contains("# Note: crd Widget v2 spec.tree.child: recursive type"),
        "notes are in the file"
    );

    // Storage: v2, as the shape says; both served.
    let versions = w.manifest["spec"]["versions"].as_array().expect("versions");
    let flags: Vec<(&str, bool, bool)> = versions
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap_or_default(),
                v["served"] == true,
                v["storage"] == true,
            )
        })
        .collect();
    assert_eq!(flags, [("v1", true, false), ("v2", true, true)]);

    // The create-only zone is immutable; the child resource's owner is its parent, by name.
    let s = schema(w, "v2");
    assert_eq!(
        s.pointer("/properties/spec/properties/zone/x-kubernetes-validations"),
        Some(&json!([{"rule": "self == oldSelf", "message": "zone is immutable"}]))
    );
    let gadget = schema(find(&crds, "Gadget"), "v2");
    assert_eq!(
        gadget.pointer("/properties/spec/properties/owner/required"),
        Some(&json!(["name"]))
    );
}

#[test]
fn fixture_closed_enums_reject_unknown_values_and_open_ones_accept_them() {
    let crds = fixture_crds();
    let s = schema(find(&crds, "Widget"), "v2");
    let w = widget();
    accepted(s, &w);
    // Closed: `color` (no x-ms-enum), `clash` (modelAsString: false), the inline `network.mode`.
    rejected(s, &with(&w, "/spec/color", Some(json!("blue"))), "/spec/color", "blue");
    rejected(
        s,
        &with(&w, "/spec/clash", Some(json!("foo-baz"))),
        "/spec/clash",
        "foo-baz",
    );
    rejected(
        s,
        &with(&w, "/spec/network/mode", Some(json!("Tunnel"))),
        "/spec/network/mode",
        "Tunnel",
    );
    accepted(s, &with(&w, "/spec/clash", Some(json!("1.0"))));
    // Open: new values pass.
    accepted(s, &with(&w, "/spec/osType", Some(json!("Plan9"))));
    accepted(s, &with(&w, "/spec/size", Some(json!("XXL"))));
    // Validations: maxLength 63 on label, 1..65535 on port numbers, required port fields.
    rejected(
        s,
        &with(&w, "/spec/label", Some(json!("x".repeat(64)))),
        "/spec/label",
        "longer than 63",
    );
    rejected(
        s,
        &with(&w, "/spec/ports/0/number", Some(json!(0))),
        "/spec/ports/0/number",
        "minimum",
    );
    rejected(
        s,
        &with(&w, "/spec/ports/0", Some(json!({"name": "http"}))),
        "/spec/ports/0",
        "number",
    );
    // Required: location (TrackedResource). WidgetProperties' own required list does not reach the spec
    // root: the `properties` envelope itself is optional.
    rejected(s, &with(&w, "/spec/location", None), "/spec", "location");
    accepted(s, &with(&w, "/spec/createdBy", None));
}

#[test]
fn trimming_fits_a_manifest_into_its_budget_deterministically() {
    let crds = fixture_crds();
    let w = find(&crds, "Widget");
    let full = w.to_yaml().expect("yaml").len();
    let budget = full - 300;
    let mut a = w.clone();
    a.fit(budget);
    let mut b = w.clone();
    b.fit(budget);
    let (ya, yb) = (a.to_yaml().expect("yaml"), b.to_yaml().expect("yaml"));
    assert_eq!(ya, yb, "deterministic");
    assert!(ya.len() <= budget, "{} > {budget}", ya.len());
    // The fixture has several versions: its older ones go without descriptions first (`Crd::fit`, step 0), then
    // descriptions are trimmed; either is reported.
    assert!(
        a.diagnostics.iter().any(|d| {
            d.message.contains("cut to their first sentence") || d.message.contains("keeps its schema without its")
        }),
        "the fit is reported: {:?}",
        a.diagnostics
    );
    // Only descriptions changed; the schema is otherwise the same.
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("description");
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let (mut x, mut y) = (a.manifest.clone(), w.manifest.clone());
    strip(&mut x);
    strip(&mut y);
    assert_eq!(x, y);
    // A manifest under budget is left alone.
    let mut c = w.clone();
    c.fit(full + 1);
    assert_eq!(c.manifest, w.manifest);
    assert_eq!(c.diagnostics.len(), w.diagnostics.len());
}

// ---------------------------------------------------------------------------------------------------------
// 5. Size.

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_manifests_are_under_one_mebibyte() {
    let g = generation();
    let mut report = Vec::new();
    for c in generated_crds(g) {
        let size = g.files[&c.path()].len();
        report.push(format!("{:>9} bytes  {}", size, c.path().display()));
        assert!(size < MAX_CRD_BYTES, "{}: {size} bytes", c.path().display());
        // Never trimmed or cut: every version keeps its whole structure, and the versions users read (the storage
        // version, the newest served one) their whole descriptions. Older versions may go without descriptions
        // (`Crd::fit`, step 0), each said in a note.
        assert!(
            c.fitted.is_none() && !c.diagnostics.iter().any(|d| d.message.contains("over the budget")),
            "{}: trimmed",
            c.kind
        );
        let stored = c.manifest["spec"]["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str());
        let newest = c
            .versions
            .iter()
            .filter(|(v, _)| {
                c.manifest["spec"]["versions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|m| m["name"] == v.as_str() && m["served"] == true)
            })
            .max_by(|a, b| a.1.cmp(&b.1))
            .map(|(v, _)| v.as_str());
        for v in &c.undescribed {
            assert!(
                Some(v.as_str()) != stored && Some(v.as_str()) != newest,
                "{}: {v} undescribed",
                c.kind
            );
            let note = format!("version {v} keeps its schema without its");
            assert!(
                c.diagnostics.iter().any(|d| d.message.contains(&note)),
                "{}: {v}: no note",
                c.kind
            );
            report.push(format!("          {v} without field descriptions"));
        }
    }
    eprintln!("{}", report.join("\n"));
}
