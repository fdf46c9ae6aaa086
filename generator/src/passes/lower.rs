//! Pass 3, **lower**: from the resources' payload schemas to IR types.
//!
//! Starting at each resource's PUT body and GET response, every schema reachable through properties, items,
//! `additionalProperties`, `allOf` parents and discriminated-union variants becomes an IR type. Named
//! definitions keep their names; inline objects and enums are named after where they sit
//! (`Owner` + `Property`, `…Item` for array items, `…Value` for map values) and renamed deterministically by
//! the `names` pass if that collides. Primitive aliases (`SpotMaxPrice: {type: number}`) are inlined.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

use heck::ToUpperCamelCase;
use openapiv3::{AdditionalProperties, ReferenceOr, Schema, SchemaKind, Type};
use serde_json::Value;

use crate::discover::DiscoveredResource;
use crate::error::{Error, Result, escape_pointer};
use crate::ir::{
    Diagnostic, EnumType, EnumValue, Ir, ObjectType, Primitive, Property, Resource, TypeDef, TypeId, TypeKind, TypeRef,
    Validation,
};
use crate::load::{SpecSet, Target};

/// A uniform view of a schema, whatever `openapiv3` variant it deserialized into.
#[derive(Debug, Default)]
pub(crate) struct View {
    pub typ: Option<String>,
    pub properties: Vec<(String, ReferenceOr<Box<Schema>>)>,
    pub required: Vec<String>,
    pub additional: Option<AdditionalProperties>,
    pub items: Option<ReferenceOr<Box<Schema>>>,
    pub enumeration: Vec<Value>,
    pub format: Option<String>,
    pub all_of: Vec<ReferenceOr<Schema>>,
    pub one_of: Vec<ReferenceOr<Schema>>,
    pub any_of: Vec<ReferenceOr<Schema>>,
    pub validation: Validation,
}

fn format_string<T: serde::Serialize>(f: &openapiv3::VariantOrUnknownOrEmpty<T>) -> Option<String> {
    match f {
        openapiv3::VariantOrUnknownOrEmpty::Item(i) => serde_json::to_value(i)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string)),
        openapiv3::VariantOrUnknownOrEmpty::Unknown(s) => Some(s.clone()),
        openapiv3::VariantOrUnknownOrEmpty::Empty => None,
    }
}

impl View {
    pub(crate) fn of(schema: &Schema) -> View {
        let mut v = View::default();
        match &schema.schema_kind {
            SchemaKind::Type(Type::String(s)) => {
                v.typ = Some("string".into());
                v.format = format_string(&s.format);
                v.enumeration = s
                    .enumeration
                    .iter()
                    .flatten()
                    .map(|s| Value::String(s.clone()))
                    .collect();
                v.validation.pattern = s.pattern.clone();
                v.validation.min_length = s.min_length;
                v.validation.max_length = s.max_length;
            }
            SchemaKind::Type(Type::Number(n)) => {
                v.typ = Some("number".into());
                v.format = format_string(&n.format);
                v.validation.minimum = n.minimum;
                v.validation.maximum = n.maximum;
            }
            SchemaKind::Type(Type::Integer(n)) => {
                v.typ = Some("integer".into());
                v.format = format_string(&n.format);
                v.validation.minimum = n.minimum.map(|x| x as f64);
                v.validation.maximum = n.maximum.map(|x| x as f64);
                v.enumeration = n.enumeration.iter().flatten().map(|x| Value::from(*x)).collect();
            }
            SchemaKind::Type(Type::Boolean(_)) => v.typ = Some("boolean".into()),
            SchemaKind::Type(Type::Object(o)) => {
                v.typ = Some("object".into());
                v.properties = o.properties.iter().map(|(k, s)| (k.clone(), s.clone())).collect();
                v.required = o.required.clone();
                v.additional = o.additional_properties.clone();
            }
            SchemaKind::Type(Type::Array(a)) => {
                v.typ = Some("array".into());
                v.items = a.items.clone();
                v.validation.min_items = a.min_items;
                v.validation.max_items = a.max_items;
                v.validation.unique_items = a.unique_items;
            }
            SchemaKind::OneOf { one_of } => v.one_of = one_of.clone(),
            SchemaKind::AllOf { all_of } => v.all_of = all_of.clone(),
            SchemaKind::AnyOf { any_of } => v.any_of = any_of.clone(),
            SchemaKind::Not { .. } => {}
            SchemaKind::Any(a) => {
                v.typ = a.typ.clone();
                v.properties = a.properties.iter().map(|(k, s)| (k.clone(), s.clone())).collect();
                v.required = a.required.clone();
                v.additional = a.additional_properties.clone();
                v.items = a.items.clone();
                v.enumeration = a.enumeration.clone();
                v.format = a.format.clone();
                v.all_of = a.all_of.clone();
                v.one_of = a.one_of.clone();
                v.any_of = a.any_of.clone();
                v.validation = Validation {
                    pattern: a.pattern.clone(),
                    min_length: a.min_length,
                    max_length: a.max_length,
                    minimum: a.minimum,
                    maximum: a.maximum,
                    min_items: a.min_items,
                    max_items: a.max_items,
                    unique_items: a.unique_items.unwrap_or(false),
                };
            }
        }
        v
    }

    /// A `$ref` with annotations beside it (upconverted to `allOf: [{$ref}]` plus siblings).
    fn wrapped_ref(&self) -> Option<&str> {
        if self.all_of.len() == 1 && self.properties.is_empty() && self.typ.as_deref().is_none_or(|t| t == "object") {
            if let ReferenceOr::Reference { reference } = &self.all_of[0] {
                return Some(reference);
            }
        }
        None
    }

    fn is_structured(&self) -> bool {
        !self.properties.is_empty() || !self.all_of.is_empty()
    }
}

fn string_list(v: Option<&Value>) -> Option<Vec<String>> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
}

/// Lowers the payload types of `resources` (found in `specs`) into an [`Ir`].
pub fn lower(specs: &SpecSet, resources: &[DiscoveredResource], api_version: &str) -> Result<Ir> {
    let mut cx = Lower::new(specs);
    let mut ir = Ir {
        api_version: api_version.to_string(),
        spec_files: specs
            .roots
            .iter()
            .map(|r| {
                specs
                    .doc(r)
                    .map(|d| d.display.display().to_string())
                    .unwrap_or_default()
            })
            .collect(),
        ..Ir::default()
    };
    for r in resources {
        let body = cx.named(&r.put_body)?;
        let get = match &r.get_response {
            Some(t) => Some(cx.named(t)?),
            None => None,
        };
        ir.resources.push(Resource {
            kind: r.name.clone(),
            arm_type: r.arm_type.clone(),
            path: r.path.clone(),
            scope: r.scope.clone(),
            name_parameters: r.name_parameters.clone(),
            parents: r.parents.clone(),
            long_running: r.long_running,
            actions: r.actions.iter().map(|a| a.name.clone()).collect(),
            action: None,
            views: Vec::new(),
            get_type: get.filter(|g| *g != body),
            body_type: body,
            module: String::new(),
        });
    }
    let mut actions = Vec::new();
    for r in resources {
        for a in r.actions.iter().filter(|a| !a.nested && !a.excluded) {
            actions.push(LoweredAction {
                resource: r,
                action: a,
                body: a.body.as_ref().map(|t| cx.named(t)).transpose()?,
                result: a.response.as_ref().map(|t| cx.named(t)).transpose()?,
                error: a.error.as_ref().map(|t| cx.named(t)).transpose()?,
            });
        }
    }
    let mut views = Vec::new();
    for r in resources {
        for v in &r.views {
            match (&v.field, &v.response) {
                (Some(field), Some(response)) => views.push((r, v, field, cx.named(response)?)),
                (Some(field), None) => {
                    return Err(Error::spec(
                        &specs.location(&r.file, &format!("/paths/{}/get", escape_pointer(&v.path))),
                        format!("the view {field} reads a GET without a JSON 200 response"),
                    ));
                }
                (None, _) if !v.excluded => cx.diagnostics.push(Diagnostic {
                    at: specs
                        .location(&r.file, &format!("/paths/{}/get", escape_pointer(&v.path)))
                        .to_string(),
                    message: format!(
                        "{}: GET {} is not read: name it in kubernetes.resources.{}.views.read (status field → \
                         path) or views.exclude (path → why)",
                        r.name, v.name, r.name
                    ),
                }),
                (None, _) => {}
            }
        }
    }
    cx.run()?;
    for a in &actions {
        let (resource, ty) = action_resource(specs, &cx.types, a);
        cx.types.insert(resource.body_type.clone(), ty);
        ir.resources.push(resource);
    }
    for r in &mut ir.resources {
        if let Some(get) = r.get_type.clone()
            && body_plus_read_only(&cx.types, &r.body_type, &get)
        {
            cx.diagnostics.push(Diagnostic {
                at: cx.types.get(&get).map(|t| t.origin.clone()).unwrap_or_default(),
                message: format!(
                    "{}: the GET response type is the resource's type: it is the PUT body plus read-only properties \
                     (the ARM envelope `id`, `name`, `type`), which the body lacks",
                    r.kind
                ),
            });
            // What the body requires, the resource requires (the GET type may say less).
            let required: Vec<String> = match cx.types.get(&r.body_type).map(|t| &t.kind) {
                Some(TypeKind::Object(b)) => b
                    .properties
                    .iter()
                    .filter(|p| p.required)
                    .map(|p| p.name.clone())
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(TypeKind::Object(g)) = cx.types.get_mut(&get).map(|t| &mut t.kind) {
                for p in &mut g.properties {
                    p.required |= required.contains(&p.name);
                }
            }
            r.body_type = get;
            r.get_type = None;
        }
    }
    for (r, v, field, response) in views {
        add_view(specs, &mut cx.types, &mut ir, r, v, field, response)?;
    }
    ir.types = cx.types;
    ir.diagnostics = cx.diagnostics;
    Ok(ir)
}

/// A read-only property armgen adds to a type (an action kind's `result`, a view), described by `description`,
/// its origin the spec location it stands for.
fn read_only_property(name: &str, ty: TypeRef, description: String, origin: &str) -> Property {
    Property {
        name: name.to_string(),
        rust_name: String::new(),
        client_name: None,
        ty,
        required: false,
        read_only: true,
        mutability: None,
        secret: false,
        from_config: false,
        arm_id_keys: false,
        identifiers: None,
        diff_ignored_when: Default::default(),
        immutable_source: None,
        client_flatten: false,
        nullable: false,
        default: None,
        description: Some(description),
        validation: Validation::default(),
        boxed: false,
        inherited: false,
        format: None,
        view: false,
        origin: origin.to_string(),
    }
}

/// Adds the view `v` of `r` to the IR: a read-only [`Property::view`] `field` of the resource's body type (the
/// response type; for a pageable GET, an array of its `value` items) and its [`crate::ir::ViewMeta`].
fn add_view(
    specs: &SpecSet,
    types: &mut BTreeMap<TypeId, TypeDef>,
    ir: &mut Ir,
    r: &DiscoveredResource,
    v: &crate::discover::DiscoveredView,
    field: &str,
    response: TypeId,
) -> Result<()> {
    let op_ptr = format!("/paths/{}/get", escape_pointer(&v.path));
    let at = specs.location(&r.file, &op_ptr);
    let ty = if v.pageable {
        let items = match types.get(&response).map(|t| &t.kind) {
            Some(TypeKind::Object(o)) => o.properties.iter().find(|p| p.name == "value").map(|p| p.ty.clone()),
            _ => None,
        };
        match items {
            Some(items @ TypeRef::Array(_)) => items,
            _ => return Err(Error::spec(&at, "a pageable GET whose response has no `value` array")),
        }
    } else {
        TypeRef::Named(response)
    };
    let Some(resource) = ir.resources.iter_mut().find(|x| x.action.is_none() && x.path == r.path) else {
        return Ok(());
    };
    let Some(TypeKind::Object(body)) = types.get_mut(&resource.body_type).map(|t| &mut t.kind) else {
        return Err(Error::spec(
            &at,
            format!("the view {field}: {} is not an object type", r.name),
        ));
    };
    if body.properties.iter().any(|p| p.name == field) {
        return Err(Error::spec(
            &at,
            format!(
                "the view {field}: {} already has a property {field}; name the view's status field otherwise",
                r.name
            ),
        ));
    }
    let mut property = read_only_property(
        field,
        ty,
        format!(
            "armgen's view `GET …/{}`{}: read by the reconciler every {} s, never sent to or returned by the \
             resource's own operations.",
            v.name,
            if v.pageable { " (the items of every page)" } else { "" },
            v.refresh_seconds
        ),
        &at.to_string(),
    );
    property.view = true;
    body.properties.push(property);
    resource.views.push(crate::ir::ViewMeta {
        field: field.to_string(),
        name: v.name.clone(),
        path: v.path.clone(),
        pageable: v.pageable,
        refresh_seconds: v.refresh_seconds,
    });
    Ok(())
}

/// One action of a discovered resource, its payload types lowered.
struct LoweredAction<'a> {
    resource: &'a DiscoveredResource,
    action: &'a crate::discover::DiscoveredAction,
    body: Option<TypeId>,
    result: Option<TypeId>,
    /// The `default` response's type (ARM's `ErrorResponse`).
    error: Option<TypeId>,
}

/// The action kind of `a` and its synthetic ARM type (see [`crate::ir::ActionMeta`]): `parameters` (the request
/// body, `x-ms-client-flatten`, create-only and never read back), and the read-only `result`, `startTime`,
/// `endTime` and `error` (the error response's `error` property, ARM's `ErrorDetail`).
fn action_resource(specs: &SpecSet, types: &BTreeMap<TypeId, TypeDef>, a: &LoweredAction<'_>) -> (Resource, TypeDef) {
    let r = a.resource;
    let kind = a
        .action
        .kind
        .clone()
        .unwrap_or_else(|| format!("{}{}", r.name, a.action.name.to_upper_camel_case()));
    let display = specs
        .doc(&r.file)
        .map(|d| d.display.display().to_string())
        .unwrap_or_default();
    let op_ptr = format!("/paths/{}/post", escape_pointer(&a.action.path));
    let origin = format!("{display}#{op_ptr}");
    let property = |name: &str, ty: TypeRef, description: String| read_only_property(name, ty, description, &origin);
    let mut properties = Vec::new();
    if let Some(body) = &a.body {
        let mut p = property(
            "parameters",
            TypeRef::Named(body.clone()),
            format!("The request body of `POST …/{}`.", a.action.name),
        );
        p.read_only = false;
        // Not required: an object without parameters sends `{}`, and ARM's answer names what is missing; the
        // result alone (`{"result": …}`) must read as the type too.
        p.client_flatten = true;
        p.mutability = Some(vec!["create".to_string()]);
        properties.push(p);
    }
    if let Some(result) = &a.result {
        properties.push(property(
            "result",
            TypeRef::Named(result.clone()),
            format!("The response body of `POST …/{}`, once it succeeded.", a.action.name),
        ));
    }
    for (name, doc) in [
        ("startTime", "When the reconciler sent the request (RFC 3339)."),
        ("endTime", "When the action ended, in success or failure (RFC 3339)."),
    ] {
        let mut p = property(name, TypeRef::Primitive(Primitive::String), doc.to_string());
        p.format = Some("date-time".to_string());
        properties.push(p);
    }
    // ARM's error response is `{error: ErrorDetail}`: the status keeps the detail.
    let detail = a.error.as_ref().and_then(|id| match types.get(id).map(|t| &t.kind) {
        Some(TypeKind::Object(o)) => o.properties.iter().find(|p| p.name == "error").map(|p| p.ty.clone()),
        _ => None,
    });
    properties.push(property(
        "error",
        detail.unwrap_or(TypeRef::Json),
        "ARM's error, when the action failed.".to_string(),
    ));
    let body_type = format!("{display}#/x-armgen/actions/{}", escape_pointer(&kind));
    let ty = TypeDef {
        name: kind.clone(),
        rust_name: String::new(),
        origin: origin.clone(),
        description: Some(format!(
            "Runs the ARM action `{}` (`POST {}`) on a `{}` once, and records its outcome.",
            a.action.name, a.action.path, r.name
        )),
        kind: TypeKind::Object(ObjectType {
            properties,
            ..ObjectType::default()
        }),
        module: String::new(),
    };
    let mut parents = r.parents.clone();
    parents.push(r.arm_type.clone());
    let resource = Resource {
        kind,
        // No ARM type of its own: the target's and the action's name, so that nothing keyed by ARM type takes the
        // action kind for its target.
        arm_type: format!("{}/{}", r.arm_type, a.action.name),
        path: a.action.path.clone(),
        scope: r.scope.clone(),
        name_parameters: r.name_parameters.clone(),
        parents,
        long_running: a.action.long_running,
        actions: Vec::new(),
        action: Some(crate::ir::ActionMeta {
            target: r.name.clone(),
            name: a.action.name.clone(),
            statuses: a.action.statuses.clone(),
            body: a.body.is_some(),
            result: a.result.is_some(),
        }),
        body_type,
        views: Vec::new(),
        get_type: None,
        module: String::new(),
    };
    (resource, ty)
}

/// Whether the object type `get` is the object type `body` plus read-only properties only: every property of
/// the body is in `get` with the same JSON name and type, the same `allOf` parents, and every other property of
/// `get` is read-only. Then `get` serves as the resource's type (spec: its writable part, which is the body;
/// status: all of it). A PUT body without the ARM envelope (role assignments'
/// `RoleAssignmentCreateParameters`) would otherwise give a status without `id`.
fn body_plus_read_only(types: &BTreeMap<TypeId, TypeDef>, body: &TypeId, get: &TypeId) -> bool {
    let (Some(TypeKind::Object(b)), Some(TypeKind::Object(g))) =
        (types.get(body).map(|t| &t.kind), types.get(get).map(|t| &t.kind))
    else {
        return false;
    };
    let has_id = |o: &ObjectType| o.properties.iter().any(|p| p.name == "id");
    !has_id(b)
        && has_id(g)
        && b.parents == g.parents
        && b.additional_properties == g.additional_properties
        && b.properties
            .iter()
            .all(|bp| g.properties.iter().any(|gp| gp.name == bp.name && gp.ty == bp.ty))
        && g.properties
            .iter()
            .all(|gp| gp.read_only || b.properties.iter().any(|bp| bp.name == gp.name))
}

/// An object type with only the marks `schema` carries itself: its discriminator property, its
/// discriminator value, and whether it is an Azure resource (`x-ms-azure-resource`).
fn object_marks(schema: &Schema) -> ObjectType {
    ObjectType {
        discriminator: schema
            .schema_data
            .discriminator
            .as_ref()
            .map(|d| d.property_name.clone()),
        discriminator_value: schema
            .schema_data
            .extensions
            .get("x-ms-discriminator-value")
            .and_then(Value::as_str)
            .map(str::to_string),
        azure_resource: schema
            .schema_data
            .extensions
            .get("x-ms-azure-resource")
            .and_then(Value::as_bool)
            == Some(true),
        ..ObjectType::default()
    }
}

/// Marks required the properties `required` names. A property is required when any of the schema's `required`
/// lists names it; names the schema does not declare are inherited properties, kept in `object.required` for
/// the `allof` pass to mark.
fn mark_required(object: &mut ObjectType, required: Vec<String>) {
    for r in required {
        match object.properties.iter_mut().find(|p| p.name == r) {
            Some(p) => p.required = true,
            None if !object.required.contains(&r) => object.required.push(r),
            None => {}
        }
    }
}

struct Lower<'a> {
    specs: &'a SpecSet,
    queue: VecDeque<Target>,
    queued: BTreeSet<Target>,
    types: BTreeMap<TypeId, TypeDef>,
    diagnostics: Vec<Diagnostic>,
    /// Discriminator base target → the targets whose `allOf` names it.
    children: Option<BTreeMap<Target, Vec<Target>>>,
    /// The aliases being inlined, innermost last: an alias that contains itself has no inline form.
    inlining: Vec<Target>,
}

impl<'a> Lower<'a> {
    fn new(specs: &'a SpecSet) -> Self {
        Lower {
            specs,
            queue: VecDeque::new(),
            queued: BTreeSet::new(),
            types: BTreeMap::new(),
            diagnostics: Vec::new(),
            children: None,
            inlining: Vec::new(),
        }
    }

    fn id(&self, file: &Path, pointer: &str) -> TypeId {
        let loc = self.specs.location(file, pointer);
        format!("{}#{}", loc.file.display(), loc.pointer)
    }

    /// Queues a named schema and returns its id. Follows bare `$ref` chains first.
    fn named(&mut self, target: &Target) -> Result<TypeId> {
        let at = self.specs.location(&target.file, &target.pointer);
        let reference = format!("#{}", target.pointer);
        let (target, _) = self.specs.resolve_schema(&target.file, &reference, &at)?;
        let id = self.id(&target.file, &target.pointer);
        if self.queued.insert(target.clone()) {
            self.queue.push_back(target);
        }
        Ok(id)
    }

    fn run(&mut self) -> Result<()> {
        while let Some(target) = self.queue.pop_front() {
            let (_, schema) = self.specs.resolve_schema(
                &target.file,
                &format!("#{}", target.pointer),
                &self.specs.location(&target.file, &target.pointer),
            )?;
            let name = target
                .pointer
                .rsplit('/')
                .next()
                .map(crate::error::unescape_pointer)
                .unwrap_or_default();
            self.lower_named(&target.file, &target.pointer, &name, &schema)?;
        }
        Ok(())
    }

    /// Lowers a schema that becomes a type of its own (a definition, or an inline object/enum).
    fn lower_named(&mut self, file: &Path, pointer: &str, name: &str, schema: &Schema) -> Result<TypeId> {
        let id = self.id(file, pointer);
        if self.types.contains_key(&id) {
            return Ok(id);
        }
        let origin = self.specs.location(file, pointer).to_string();
        let view = View::of(schema);
        let type_def = |kind| TypeDef {
            name: name.to_string(),
            rust_name: String::new(),
            origin: origin.clone(),
            description: schema.schema_data.description.clone(),
            kind,
            module: String::new(),
        };
        if view.typ.as_deref() == Some("string") && !view.enumeration.is_empty() {
            let kind = TypeKind::Enum(self.enum_type(schema, &view));
            self.types.insert(id.clone(), type_def(kind));
            return Ok(id);
        }
        // Reserve the id before descending, so that recursion terminates.
        self.types
            .insert(id.clone(), type_def(TypeKind::Object(ObjectType::default())));
        let object = self.object_type(file, pointer, name, schema, &view)?;
        if let Some(def) = self.types.get_mut(&id) {
            def.kind = TypeKind::Object(object);
        }
        Ok(id)
    }

    /// The object type of a named schema (`view` is its view): parents, properties (its own and those of its
    /// inline `allOf` members), required names, additional properties; a discriminated base queues its variants.
    fn object_type(
        &mut self,
        file: &Path,
        pointer: &str,
        name: &str,
        schema: &Schema,
        view: &View,
    ) -> Result<ObjectType> {
        let mut object = object_marks(schema);
        // Every `required` list of the schema: its own and those of its inline `allOf` members.
        let mut required: Vec<String> = view.required.clone();
        required.extend(self.all_of_members(file, pointer, name, view, &mut object)?);
        if !view.one_of.is_empty() || !view.any_of.is_empty() {
            self.diagnostics.push(Diagnostic::new(
                &self.specs.location(file, pointer),
                "oneOf/anyOf are not modelled; the members' properties are not generated",
            ));
        }
        self.properties(file, pointer, name, view, &mut object)?;
        mark_required(&mut object, required);
        if let Some(ap) = &view.additional {
            if !view.properties.is_empty() || !view.all_of.is_empty() {
                object.additional_properties = Some(self.additional_properties(file, pointer, name, ap)?);
            }
        }
        if object.discriminator.is_some() {
            self.queue_variants(file, pointer)?;
        }
        Ok(object)
    }

    /// Takes in the `allOf` members of the schema at `pointer`: a `$ref` becomes a parent (queued), an inline
    /// member contributes its properties directly. Returns the inline members' `required` names.
    fn all_of_members(
        &mut self,
        file: &Path,
        pointer: &str,
        name: &str,
        view: &View,
        object: &mut ObjectType,
    ) -> Result<Vec<String>> {
        let mut required = Vec::new();
        for (i, parent) in view.all_of.iter().enumerate() {
            let ptr = format!("{pointer}/allOf/{i}");
            match parent {
                ReferenceOr::Reference { reference } => {
                    let at = self.specs.location(file, &ptr);
                    let target = self.specs.target(file, reference, &at)?;
                    let parent_id = self.named(&target)?;
                    object.parents.push(parent_id);
                }
                ReferenceOr::Item(inline) => {
                    let inner = View::of(inline);
                    self.properties(file, &ptr, name, &inner, object)?;
                    required.extend(inner.required.iter().cloned());
                }
            }
        }
        Ok(required)
    }

    /// The type of the additional properties `ap` of the object `name` at `pointer` (any JSON value unless
    /// they have a schema).
    fn additional_properties(
        &mut self,
        file: &Path,
        pointer: &str,
        name: &str,
        ap: &AdditionalProperties,
    ) -> Result<TypeRef> {
        let ptr = format!("{pointer}/additionalProperties");
        Ok(match ap {
            AdditionalProperties::Any(true) => TypeRef::Json,
            AdditionalProperties::Any(false) => TypeRef::Json,
            AdditionalProperties::Schema(s) => {
                let s: ReferenceOr<Box<Schema>> = match s.as_ref() {
                    ReferenceOr::Reference { reference } => ReferenceOr::Reference {
                        reference: reference.clone(),
                    },
                    ReferenceOr::Item(i) => ReferenceOr::Item(Box::new(i.clone())),
                };
                self.type_ref(file, &ptr, &format!("{name}Value"), &s)?
            }
        })
    }

    /// Queues the possible variants of the discriminated base at `pointer`: every schema that inherits from it,
    /// directly or through other children.
    fn queue_variants(&mut self, file: &Path, pointer: &str) -> Result<()> {
        let mut pending = vec![Target {
            file: file.to_path_buf(),
            pointer: pointer.to_string(),
        }];
        let mut seen = BTreeSet::new();
        while let Some(parent) = pending.pop() {
            for child in self.children_of(&parent)? {
                if seen.insert(child.clone()) {
                    self.named(&child)?;
                    pending.push(child);
                }
            }
        }
        Ok(())
    }

    fn properties(
        &mut self,
        file: &Path,
        pointer: &str,
        owner: &str,
        view: &View,
        object: &mut ObjectType,
    ) -> Result<()> {
        for (prop_name, prop_schema) in &view.properties {
            let ptr = format!("{pointer}/properties/{}", escape_pointer(prop_name));
            let suggested = format!("{}{}", owner, prop_name.to_upper_camel_case());
            let ty = self.type_ref(file, &ptr, &suggested, prop_schema)?;
            let (data, inner_view) = match prop_schema {
                ReferenceOr::Item(s) => (Some(&s.schema_data), Some(View::of(s))),
                ReferenceOr::Reference { .. } => (None, None),
            };
            let ext = |key: &str| data.and_then(|d| d.extensions.get(key));
            let mut validation = inner_view.as_ref().map(|v| v.validation.clone()).unwrap_or_default();
            let mut format = inner_view.as_ref().and_then(|v| v.format.clone());
            // Validation, format, default and identifiers of a referenced alias (a primitive, array or map
            // definition, or an enum for the default) apply to the property too, whether the `$ref` stands
            // alone or with annotations beside it (`allOf: [{$ref}]` after upconversion); the property's own
            // annotations win.
            let alias_ref = match prop_schema {
                ReferenceOr::Reference { reference } => Some(reference.as_str()),
                ReferenceOr::Item(_) => inner_view.as_ref().and_then(View::wrapped_ref),
            };
            let mut alias_default = None;
            let mut alias_identifiers = None;
            if let Some(reference) = alias_ref {
                let at = self.specs.location(file, &ptr);
                let (_, target_schema) = self.specs.resolve_schema(file, reference, &at)?;
                let tv = View::of(&target_schema);
                if !tv.is_structured() {
                    alias_default = target_schema.schema_data.default.clone();
                    alias_identifiers = string_list(target_schema.schema_data.extensions.get("x-ms-identifiers"));
                    if tv.enumeration.is_empty() {
                        if validation == Validation::default() {
                            validation = tv.validation;
                        }
                        format = format.or(tv.format);
                    }
                }
            }
            let prop = Property {
                name: prop_name.clone(),
                rust_name: String::new(),
                client_name: ext("x-ms-client-name").and_then(Value::as_str).map(str::to_string),
                ty,
                required: view.required.iter().any(|r| r == prop_name),
                read_only: data.is_some_and(|d| d.read_only),
                mutability: string_list(ext("x-ms-mutability")),
                secret: ext("x-ms-secret").and_then(Value::as_bool) == Some(true),
                from_config: false,
                arm_id_keys: false,
                identifiers: string_list(ext("x-ms-identifiers")).or(alias_identifiers),
                diff_ignored_when: Default::default(),
                immutable_source: None,
                client_flatten: ext("x-ms-client-flatten").and_then(Value::as_bool) == Some(true),
                nullable: data.is_some_and(|d| d.nullable),
                default: data.and_then(|d| d.default.clone()).or(alias_default),
                description: data.and_then(|d| d.description.clone()),
                validation,
                boxed: false,
                inherited: false,
                format,
                view: false,
                origin: self.specs.location(file, &ptr).to_string(),
            };
            if let Some(existing) = object.properties.iter_mut().find(|p| p.name == *prop_name) {
                *existing = prop;
            } else {
                object.properties.push(prop);
            }
        }
        Ok(())
    }

    /// The type of a property, array item or map value. Inline objects and enums become named types.
    fn type_ref(
        &mut self,
        file: &Path,
        pointer: &str,
        suggested: &str,
        schema: &ReferenceOr<Box<Schema>>,
    ) -> Result<TypeRef> {
        match schema {
            ReferenceOr::Reference { reference } => {
                let at = self.specs.location(file, pointer);
                let (target, resolved) = self.specs.resolve_schema(file, reference, &at)?;
                self.ref_type(&target, &resolved, suggested)
            }
            ReferenceOr::Item(s) => self.inline_type(file, pointer, suggested, s),
        }
    }

    /// The type of a referenced schema: named for objects and enums, inlined for primitive aliases.
    fn ref_type(&mut self, target: &Target, resolved: &Schema, suggested: &str) -> Result<TypeRef> {
        let view = View::of(resolved);
        let is_enum = view.typ.as_deref() == Some("string") && !view.enumeration.is_empty();
        if view.is_structured() || is_enum || resolved.schema_data.discriminator.is_some() {
            return Ok(TypeRef::Named(self.named(target)?));
        }
        // A primitive, array or map alias: inline it.
        if self.inlining.contains(target) {
            return Err(Error::spec(
                &self.specs.location(&target.file, &target.pointer),
                "an array or map alias that contains itself (with no object in between) has no Rust type",
            ));
        }
        self.inlining.push(target.clone());
        let inlined = self.inline_type(&target.file.clone(), &target.pointer.clone(), suggested, resolved);
        self.inlining.pop();
        inlined
    }

    fn inline_type(&mut self, file: &Path, pointer: &str, suggested: &str, s: &Schema) -> Result<TypeRef> {
        let view = View::of(s);
        if let Some(reference) = view.wrapped_ref() {
            let at = self.specs.location(file, &format!("{pointer}/allOf/0"));
            let (target, resolved) = self.specs.resolve_schema(file, reference, &at)?;
            return self.ref_type(&target, &resolved, suggested);
        }
        let is_enum = !view.enumeration.is_empty();
        match view.typ.as_deref() {
            Some("string") if is_enum => {
                let name = s
                    .schema_data
                    .extensions
                    .get("x-ms-enum")
                    .and_then(|e| e.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| suggested.to_string());
                return Ok(TypeRef::Named(self.lower_named(file, pointer, &name, s)?));
            }
            _ if view.is_structured() || s.schema_data.discriminator.is_some() => {
                return Ok(TypeRef::Named(self.lower_named(file, pointer, suggested, s)?));
            }
            _ => {}
        }
        if !view.one_of.is_empty() || !view.any_of.is_empty() {
            self.diagnostics.push(Diagnostic::new(
                &self.specs.location(file, pointer),
                "oneOf/anyOf are not modelled; generated as any JSON value",
            ));
            return Ok(TypeRef::Json);
        }
        if is_enum && view.typ.as_deref() != Some("string") {
            self.diagnostics.push(Diagnostic::new(
                &self.specs.location(file, pointer),
                "a non-string enum is generated as its underlying type",
            ));
        }
        Ok(match view.typ.as_deref() {
            Some("string") => TypeRef::Primitive(Primitive::String),
            Some("boolean") => TypeRef::Primitive(Primitive::Bool),
            Some("integer") => match view.format.as_deref() {
                Some("int32") => TypeRef::Primitive(Primitive::Int32),
                _ => TypeRef::Primitive(Primitive::Int64),
            },
            Some("number") => match view.format.as_deref() {
                Some("float") => TypeRef::Primitive(Primitive::Float),
                _ => TypeRef::Primitive(Primitive::Double),
            },
            Some("array") => match &view.items {
                Some(items) => TypeRef::Array(Box::new(self.type_ref(
                    file,
                    &format!("{pointer}/items"),
                    &format!("{suggested}Item"),
                    items,
                )?)),
                None => TypeRef::Array(Box::new(TypeRef::Json)),
            },
            Some("object") | None => match &view.additional {
                Some(AdditionalProperties::Schema(value)) => {
                    let value: ReferenceOr<Box<Schema>> = match value.as_ref() {
                        ReferenceOr::Reference { reference } => ReferenceOr::Reference {
                            reference: reference.clone(),
                        },
                        ReferenceOr::Item(i) => ReferenceOr::Item(Box::new(i.clone())),
                    };
                    TypeRef::Map(Box::new(self.type_ref(
                        file,
                        &format!("{pointer}/additionalProperties"),
                        &format!("{suggested}Value"),
                        &value,
                    )?))
                }
                Some(AdditionalProperties::Any(true)) => TypeRef::Map(Box::new(TypeRef::Json)),
                _ => TypeRef::Json,
            },
            Some(other) => {
                return Err(Error::spec(
                    &self.specs.location(file, pointer),
                    format!("unknown schema type {other:?}"),
                ));
            }
        })
    }

    fn enum_type(&self, schema: &Schema, view: &View) -> EnumType {
        let x = schema.schema_data.extensions.get("x-ms-enum");
        let open = x
            .and_then(|x| x.get("modelAsString"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let enum_name = x
            .and_then(|x| x.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let described: BTreeMap<String, (Option<String>, Option<String>)> = x
            .and_then(|x| x.get("values"))
            .and_then(Value::as_array)
            .map(|vals| {
                vals.iter()
                    .filter_map(|v| {
                        let value = v.get("value").and_then(Value::as_str)?;
                        Some((
                            value.to_string(),
                            (
                                v.get("description").and_then(Value::as_str).map(str::to_string),
                                v.get("name").and_then(Value::as_str).map(str::to_string),
                            ),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let values = view
            .enumeration
            .iter()
            .filter_map(Value::as_str)
            .map(|value| {
                let (description, name) = described.get(value).cloned().unwrap_or_default();
                EnumValue {
                    value: value.to_string(),
                    rust_name: name.unwrap_or_default(),
                    description,
                }
            })
            .collect();
        EnumType {
            values,
            open,
            enum_name,
        }
    }

    /// Every schema, in any loaded document, whose `allOf` names `base`.
    fn children_of(&mut self, base: &Target) -> Result<Vec<Target>> {
        if self.children.is_none() {
            let mut map: BTreeMap<Target, Vec<Target>> = BTreeMap::new();
            for (path, doc) in &self.specs.docs {
                let Some(components) = &doc.openapi.components else {
                    continue;
                };
                for (name, schema) in &components.schemas {
                    let ReferenceOr::Item(schema) = schema else { continue };
                    let pointer = format!("/components/schemas/{}", escape_pointer(name));
                    for (i, parent) in View::of(schema).all_of.iter().enumerate() {
                        if let ReferenceOr::Reference { reference } = parent {
                            let at = self.specs.location(path, &format!("{pointer}/allOf/{i}"));
                            let (t, _) = self.specs.resolve_schema(path, reference, &at)?;
                            map.entry(t).or_default().push(Target {
                                file: PathBuf::from(path),
                                pointer: pointer.clone(),
                            });
                        }
                    }
                }
            }
            self.children = Some(map);
        }
        Ok(self
            .children
            .as_ref()
            .and_then(|m| m.get(base))
            .cloned()
            .unwrap_or_default())
    }
}
