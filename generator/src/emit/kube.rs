//! Emits the Kubernetes custom resources of one version: the resource types (`Kind`, `KindSpec`,
//! `KindStatus`, with `kube_core::Resource`), the nested `spec` and `status` types, and the conversions:
//!
//! - spec → ARM payload (`to_arm`): re-nests the flattened `properties`, turns resource references into ARM IDs
//!   and secret references into values through an `armgen_runtime::kube::Resolver`;
//! - ARM payload → spec (`from_arm`, what an import writes): read-only properties dropped, resource IDs kept
//!   as `armId` references, secrets left unset (they cannot be read back);
//! - ARM payload → status (`From<&arm::X>`): every property the service returns, secrets excluded.
//!
//! Collections: a spec collection that is set — even to `[]` or `{}` — is sent; an unset one is omitted
//! (`None`), which ARM reads as "leave unchanged". So a user who empties `tags` sends `{}`. A collection the
//! config marks `omit` ([`KubeField::omit_empty`]: `kubernetes.emptyCollections`, or the property's
//! `emptyCollection` override) is not sent when empty: `[]`/`{}` are treated like unset.
//!
//! `operatorSpec` (every kind): `<Kind>OperatorSpec` with `<Kind>OperatorSecrets` / `<Kind>OperatorConfigMaps`
//! (kinds with exports: one optional destination per declared export) and `secretExpressions` /
//! `configMapExpressions` (CEL); `Kind::SECRET_EXPORTS` (name, ARM action, value path) and
//! `Kind::CONFIG_MAP_EXPORTS` (name, ARM JSON path) list the exports for the reconciler. Never sent to Azure.
//!
//! Template kinds (`template: true`): `<Kind>Template`, whose `spec.template.spec` is a `<Kind>Spec`.

use super::from_json::serde_camel_case;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::output::{VersionOutput, finish};
use super::rust::{ident, primitive};
use crate::error::{Error, Result};
use crate::ir::{Ir, ObjectType, Primitive, Property, TypeKind, TypeRef};
use crate::shape::{ContractField, Family, KubeField, KubeIr, KubeRef, KubeResource, KubeType, Owner, Special};

/// `#[doc]` lines for a description (first paragraph only, to keep the custom-resource docs short).
fn doc(description: Option<&str>) -> TokenStream {
    let Some(d) = description else { return quote!() };
    let lines: Vec<String> = d
        .trim()
        .lines()
        .map(|l| format!(" {}", super::rust::sanitize_doc_line(l)))
        .collect();
    quote!(#(#[doc = #lines])*)
}

struct Ctx<'a> {
    ir: &'a Ir,
    kube: &'a KubeIr,
    /// Emitting a resource root module, where nested types are `spec::X` / `status::X`.
    root: bool,
}

/// Whether converting a value of this shape needs more than a clone.
fn converts(k: &KubeRef) -> bool {
    match k {
        KubeRef::Kube(_) | KubeRef::Secret | KubeRef::ResourceRef | KubeRef::RefKeys(_) => true,
        KubeRef::Array(inner) | KubeRef::Map(inner) => converts(inner),
        _ => false,
    }
}

fn has_secret(k: &KubeRef) -> bool {
    match k {
        KubeRef::Secret => true,
        KubeRef::Array(inner) | KubeRef::Map(inner) => has_secret(inner),
        _ => false,
    }
}

/// Whether the ARM field of `p` is an `Option` (mirrors `rust::Emitter::field`).
fn arm_optional(p: &Property) -> bool {
    p.nullable || !p.required || p.read_only
}

impl Ctx<'_> {
    fn arm_name(&self, id: &str) -> Result<proc_macro2::Ident> {
        let def = self.ir.types.get(id).ok_or_else(|| Error::Emit {
            what: id.to_string(),
            message: "custom resource field refers to an ARM type that is not generated".into(),
        })?;
        Ok(format_ident!("{}", def.rust_name))
    }

    fn kube_name(&self, id: &str) -> Result<TokenStream> {
        let def = self.kube.types.get(id).ok_or_else(|| Error::Emit {
            what: id.to_string(),
            message: "custom resource field refers to a type that is not generated".into(),
        })?;
        let name = format_ident!("{}", def.rust_name);
        Ok(if self.root {
            let m = format_ident!("{}", def.family.module());
            quote!(#m::#name)
        } else {
            quote!(#name)
        })
    }

    /// The Rust type of a field value.
    fn ty(&self, k: &KubeRef) -> Result<TokenStream> {
        Ok(match k {
            KubeRef::Kube(id) => self.kube_name(id)?,
            KubeRef::ArmEnum(id) | KubeRef::ArmUnion(id) => {
                let name = self.arm_name(id)?;
                quote!(arm::#name)
            }
            KubeRef::Primitive(p) => primitive(*p),
            KubeRef::Array(inner) => {
                let inner = self.ty(inner)?;
                quote!(Vec<#inner>)
            }
            KubeRef::Map(inner) => {
                let inner = self.ty(inner)?;
                quote!(BTreeMap<String, #inner>)
            }
            KubeRef::Json => quote!(serde_json::Value),
            KubeRef::Secret => quote!(armgen_runtime::kube::SecretReference),
            KubeRef::ResourceRef => quote!(armgen_runtime::kube::ResourceReference),
            KubeRef::ConfigMapRef => quote!(armgen_runtime::kube::ConfigMapReference),
            KubeRef::RefKeys(_) => quote!(Vec<armgen_runtime::kube::ResourceReference>),
        })
    }

    fn field_ty(&self, f: &KubeField, owner: &Owner, kind: &str) -> Result<TokenStream> {
        Ok(match f.special {
            Special::None | Special::FromConfig => {
                let t = self.ty(&f.ty)?;
                if f.boxed { quote!(Box<#t>) } else { t }
            }
            Special::AzureName => quote!(String),
            Special::Owner => match owner {
                Owner::ResourceGroup => quote!(armgen_runtime::kube::ResourceGroupOwner),
                Owner::Scope => quote!(armgen_runtime::kube::ResourceReference),
                _ => quote!(armgen_runtime::kube::KnownOwner),
            },
            Special::Conditions => quote!(Vec<armgen_runtime::kube::Condition>),
            Special::OperatorStatus => quote!(armgen_runtime::kube::OperatorStatus),
            Special::OperatorSpec => {
                let name = format_ident!("{}OperatorSpec", kind);
                quote!(#name)
            }
            Special::Contract(c) => match c {
                ContractField::Endpoint => quote!(armgen_runtime::capi::ApiEndpoint),
                ContractField::Version | ContractField::StatusVersion => quote!(String),
                ContractField::ProviderIds => quote!(Vec<String>),
                ContractField::Initialization => quote!(armgen_runtime::capi::Initialization),
                ContractField::Initialized | ContractField::Ready | ContractField::ExternalManaged => quote!(bool),
                ContractField::Replicas => quote!(i32),
            },
        })
    }

    fn fields(&self, fields: &[KubeField], owner: &Owner, kind: &str) -> Result<Vec<TokenStream>> {
        let mut out = Vec::new();
        for f in fields {
            let name = ident(&f.rust_name);
            let ty = self.field_ty(f, owner, kind)?;
            let json = &f.json_name;
            // The struct renames its fields `camelCase` (and defaults them, see `serde_camel_case`): only the fields
            // whose JSON name is not that spelling of the Rust name are renamed here.
            let rename = if serde_camel_case(&f.rust_name) != *json {
                quote!(rename = #json,)
            } else {
                quote!()
            };
            let d = doc(f.description.as_deref());
            out.push(quote! {
                #d
                #[serde(#rename skip_serializing_if = "Option::is_none")]
                pub #name: Option<#ty>,
            });
        }
        Ok(out)
    }

    /// A callable turning `&A` (ARM) into the spec value (`status`: the status value): a function path where
    /// one exists, else a closure.
    fn mapper(&self, k: &KubeRef, t: &TypeRef, status: bool) -> Result<TokenStream> {
        Ok(match (k, t) {
            (KubeRef::Kube(id), _) => {
                let name = self.kube_name(id)?;
                // A status type that is its spec twin's struct reads the ARM value as the spec does: no property is
                // read-only, secret or an ARM ID.
                if status && !self.kube.status_as_spec.contains(id) {
                    quote!(#name::from)
                } else {
                    quote!(#name::from_arm)
                }
            }
            (KubeRef::RefKeys(_), _) if !status => quote!(armgen_runtime::kube::references_of_keys),
            _ => {
                let inner = self.convert_from_arm(k, t, quote!(x), status)?;
                quote!(|x| #inner)
            }
        })
    }

    /// ARM value `a` (a reference) → spec value (`status`: status value).
    fn convert_from_arm(&self, k: &KubeRef, t: &TypeRef, a: TokenStream, status: bool) -> Result<TokenStream> {
        Ok(match (k, t) {
            (KubeRef::Kube(_), _) => {
                let f = self.mapper(k, t, status)?;
                quote!(#f(#a))
            }
            (KubeRef::ResourceRef, _) if !status => {
                quote!(armgen_runtime::kube::ResourceReference::arm_id(#a.clone()))
            }
            (KubeRef::RefKeys(_), _) => quote!(armgen_runtime::kube::references_of_keys(#a)),
            (KubeRef::Array(ki), TypeRef::Array(ti)) if converts(ki) => {
                let f = self.mapper(ki, ti, status)?;
                quote!(#a.iter().map(#f).collect())
            }
            (KubeRef::Map(ki), TypeRef::Map(ti)) if converts(ki) => {
                let inner = self.convert_from_arm(ki, ti, quote!(x), status)?;
                quote!(#a.iter().map(|(key, x)| (key.clone(), #inner)).collect())
            }
            _ => quote!(#a.clone()),
        })
    }

    /// Whether values of this shape are `Copy` (primitives other than strings, closed enums).
    fn is_copy(&self, k: &KubeRef) -> bool {
        match k {
            KubeRef::Primitive(p) => *p != Primitive::String,
            KubeRef::ArmEnum(id) => {
                matches!(self.ir.types.get(id).map(|t| &t.kind), Some(TypeKind::Enum(e)) if !e.open)
            }
            _ => false,
        }
    }

    /// A copy of `v` (a reference or an `Option` of one) of shape `k`.
    fn copy_or_clone(&self, k: &KubeRef, v: TokenStream, option: bool) -> TokenStream {
        match (self.is_copy(k), option) {
            (true, true) => v,
            (true, false) => quote!(*#v),
            (false, _) => quote!(#v.clone()),
        }
    }

    /// The expression of ARM field `p` built from the spec field `f` (`self.<field>: Option<S>`); `path` is
    /// an identifier bound to the `Path` of the object holding `f`. Converting values go through
    /// `armgen_runtime::kube::ToArm` (references, nested objects, and arrays, maps and boxes of them).
    fn arm_field_from_spec(&self, f: &KubeField, p: &Property, path: &proc_macro2::Ident) -> TokenStream {
        let field = ident(&f.rust_name);
        let json = &f.json_name;
        let at = quote!(&#path.field(#json));
        if f.from_config {
            let sibling = ident(&format!("{}_from_config", f.rust_name));
            let value = quote!(value_or_config(&self.#field, &self.#sibling, resolver, #at)?);
            return if arm_optional(p) {
                value
            } else {
                quote!(#value.ok_or_else(|| missing(#at))?)
            };
        }
        let converts = converts(&f.ty);
        let plain = !converts && !p.boxed && !p.nullable;
        // `omit`: an empty collection is treated like an unset one.
        let omit = f.omit_empty && matches!(f.ty, KubeRef::Array(_) | KubeRef::Map(_));
        if plain && arm_optional(p) {
            if omit {
                return quote!(self.#field.clone().filter(|v| !v.is_empty()));
            }
            return self.copy_or_clone(&f.ty, quote!(self.#field), true);
        }
        // The ARM value of one spec value `v` (a reference); a converted box stays one.
        let one = |v: TokenStream| -> TokenStream {
            let value = match &f.ty {
                KubeRef::RefKeys(_) => quote!(keys_of_references(#v, resolver, #at)?),
                _ if converts => quote!(#v.to_arm(resolver, #at)?),
                _ => self.copy_or_clone(&f.ty, v, false),
            };
            match (p.boxed, converts && f.boxed) {
                (true, false) => quote!(Box::new(#value)),
                (false, true) => quote!(*#value),
                _ => value,
            }
        };
        let nullable = |value: TokenStream| {
            if p.nullable {
                quote!(armgen_runtime::Nullable::Value(#value))
            } else {
                value
            }
        };
        let source = if omit {
            quote!(self.#field.as_ref().filter(|v| !v.is_empty()))
        } else {
            quote!(self.#field.as_ref())
        };
        if !arm_optional(p) {
            return nullable(one(quote!(required(#source, #at)?)));
        }
        if converts && !omit && !matches!(f.ty, KubeRef::RefKeys(_)) && p.boxed == f.boxed && !p.nullable {
            return quote!(self.#field.to_arm(resolver, #at)?);
        }
        let value = nullable(one(quote!(v)));
        if converts {
            quote!(match #source { Some(v) => Some(#value), None => None })
        } else {
            quote!(#source.map(|v| #value))
        }
    }

    /// The spec field value read from ARM field `a` (an expression of the ARM field itself).
    fn spec_field_from_arm(&self, f: &KubeField, p: &Property, a: TokenStream, status: bool) -> Result<TokenStream> {
        if !status && has_secret(&f.ty) {
            return Ok(quote!(None));
        }
        let plain = !converts(&f.ty) && !p.boxed;
        if plain && !p.nullable {
            let v = self.copy_or_clone(&f.ty, a, true);
            return Ok(if arm_optional(p) { v } else { quote!(Some(#v)) });
        }
        if !p.boxed && !p.nullable && arm_optional(p) {
            let f = self.mapper(&f.ty, &p.ty, status)?;
            return Ok(quote!(#a.as_ref().map(#f)));
        }
        // A boxed ARM value is matched as `&Box<T>`: the conversions take `&T`.
        let arm_value = if p.boxed { quote!(v.as_ref()) } else { quote!(v) };
        let mut inner = if plain {
            self.copy_or_clone(&f.ty, quote!(v), false)
        } else {
            self.convert_from_arm(&f.ty, &p.ty, arm_value, status)?
        };
        if p.boxed {
            inner = quote!(Box::new(#inner));
        }
        Ok(if p.nullable {
            quote!(#a.as_ref().and_then(|v| v.as_value()).map(|v| #inner))
        } else if arm_optional(p) {
            quote!(#a.as_ref().map(|v| #inner))
        } else {
            quote!({ let v = &#a; Some(#inner) })
        })
    }

    /// A struct literal of the ARM object `obj` (Rust type `arm_ty`), each field taken from `mapped` (by JSON
    /// name) or left unset.
    fn arm_literal(
        &self,
        arm_ty: TokenStream,
        obj: &ObjectType,
        mapped: &BTreeMap<String, TokenStream>,
    ) -> TokenStream {
        let mut fields = Vec::new();
        for p in &obj.properties {
            let name = ident(&p.rust_name);
            let value = match mapped.get(&p.name) {
                Some(v) => v.clone(),
                None if arm_optional(p) => quote!(None),
                None => quote!(Default::default()),
            };
            fields.push(quote!(#name: #value,));
        }
        let unknown = format_ident!("{}", crate::passes::names::UNKNOWN_FIELDS);
        quote!(#arm_ty { #(#fields)* #unknown: Default::default() })
    }

    fn object_of(&self, id: &str) -> Option<&ObjectType> {
        match &self.ir.types.get(id)?.kind {
            TypeKind::Object(o) => Some(o),
            _ => None,
        }
    }

    /// A nested spec or status type with its conversions.
    fn nested(&self, t: &KubeType) -> Result<TokenStream> {
        let name = format_ident!("{}", t.rust_name);
        let arm_name = self.arm_name(&t.source)?;
        let obj = self.object_of(&t.source).cloned().unwrap_or_default();
        let fields = self.fields(&t.fields, &Owner::Unsupported, "")?;
        let d = doc(t.description.as_deref());
        let by_json: BTreeMap<&str, &Property> = obj.properties.iter().map(|p| (p.name.as_str(), p)).collect();
        let mut from = Vec::new();
        for f in &t.fields {
            let field = ident(&f.rust_name);
            if f.special == Special::FromConfig {
                from.push(quote!(#field: None,));
                continue;
            }
            let Some(p) = f.arm_path.first().and_then(|j| by_json.get(j.as_str())) else {
                continue;
            };
            let arm_field = ident(&p.rust_name);
            let value = self.spec_field_from_arm(f, p, quote!(arm.#arm_field), t.family == Family::Status)?;
            from.push(quote!(#field: #value,));
        }
        let struct_def = quote! {
            #d
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct #name {
                #(#fields)*
            }
        };
        // A type all of whose properties are read-only (kept inside a map, whose keys matter) reads nothing.
        let arm_param = if from.is_empty() {
            format_ident!("_arm")
        } else {
            format_ident!("arm")
        };
        if t.family == Family::Status {
            return Ok(quote! {
                #struct_def
                impl From<&arm::#arm_name> for #name {
                    fn from(#arm_param: &arm::#arm_name) -> Self {
                        Self { #(#from)* }
                    }
                }
            });
        }
        let mut mapped = BTreeMap::new();
        let path = format_ident!("path");
        for f in &t.fields {
            let Some(p) = f.arm_path.first().and_then(|j| by_json.get(j.as_str())) else {
                continue;
            };
            mapped.insert(p.name.clone(), self.arm_field_from_spec(f, p, &path));
        }
        let literal = self.arm_literal(quote!(arm::#arm_name), &obj, &mapped);
        let path_param = if uses_path(&t.fields) {
            quote!(path)
        } else {
            quote!(_path)
        };
        let resolver_param = if uses_resolver(&t.fields) {
            quote!(resolver)
        } else {
            quote!(_resolver)
        };
        Ok(quote! {
            #struct_def
            impl armgen_runtime::kube::ToArm for #name {
                type Arm = arm::#arm_name;
                fn to_arm(&self, #resolver_param: &dyn Resolver, #path_param: &Path<'_>) -> Result<arm::#arm_name, ConversionError> {
                    Ok(#literal)
                }
            }
            impl #name {
                /// The spec part of an ARM payload: read-only properties dropped, resource IDs as `armId`
                /// references, secrets unset.
                pub fn from_arm(#arm_param: &arm::#arm_name) -> Self {
                    Self { #(#from)* }
                }
            }
        })
    }

    /// The resource's module: the custom resource, its spec and status roots and their conversions.
    fn resource(&self, r: &KubeResource) -> Result<TokenStream> {
        let spec = format_ident!("{}Spec", r.kind);
        let status = format_ident!("{}Status", r.kind);
        let arm_name = self.arm_name(&r.arm_body)?;
        let body = self.object_of(&r.arm_body).cloned().unwrap_or_default();
        let spec_fields = self.fields(&r.spec_fields, &r.owner, &r.kind)?;
        let status_fields = self.fields(&r.status_fields, &r.owner, &r.kind)?;
        let custom_resource = self.custom_resource(r, &arm_name);
        let by_json: BTreeMap<&str, &Property> = body.properties.iter().map(|p| (p.name.as_str(), p)).collect();
        let (envelope_lets, literal) = self.spec_to_arm(r, &arm_name, &body, &by_json)?;
        let path_let = if uses_path(&r.spec_fields) {
            quote!(let path = Path::Root("spec");)
        } else {
            quote!()
        };
        let resolver_param = if uses_resolver(&r.spec_fields) {
            quote!(resolver)
        } else {
            quote!(_resolver)
        };
        let spec_from = self.spec_from_arm(r, &by_json)?;
        // An action without parameters reads nothing of its payload into the spec.
        let spec_arm_param = if r
            .spec_fields
            .iter()
            .any(|f| matches!(f.special, Special::None | Special::AzureName))
        {
            quote!(arm)
        } else {
            quote!(_arm)
        };
        let status_from = self.status_from_arm(r, &by_json)?;
        let operator_items = operator_spec(r);
        let template_items = if r.template {
            template(r, &self.kube.group, &self.kube.version)
        } else {
            quote!()
        };
        let (kind_str, arm_type) = (r.kind.as_str(), r.arm_type.as_str());
        let spec_doc = format!(" The desired state of a `{kind_str}`: the writable properties of `{arm_type}`.");
        let status_doc = format!(" The observed state of a `{kind_str}`: what Azure returns, secrets excluded.");
        Ok(quote! {
            #custom_resource

            #[doc = #spec_doc]
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct #spec {
                #(#spec_fields)*
            }

            impl #spec {
                /// The ARM PUT body for this spec. References resolve through `resolver`.
                pub fn to_arm(&self, #resolver_param: &dyn Resolver) -> Result<arm::#arm_name, ConversionError> {
                    #path_let
                    #(#envelope_lets)*
                    Ok(#literal)
                }

                /// The spec part of an ARM payload: read-only properties dropped, resource IDs as `armId`
                /// references, secrets unset.
                pub fn from_arm(#spec_arm_param: &arm::#arm_name) -> Self {
                    Self { #(#spec_from)* }
                }
            }

            #[doc = #status_doc]
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct #status {
                #(#status_fields)*
            }

            impl From<&arm::#arm_name> for #status {
                fn from(arm: &arm::#arm_name) -> Self {
                    Self { #(#status_from)* }
                }
            }

            #operator_items
            #template_items
        })
    }

    /// The custom resource struct of `r` (ARM body type `arm_name`), its constants and constructors, and its
    /// `kube` trait impls.
    fn custom_resource(&self, r: &KubeResource, arm_name: &proc_macro2::Ident) -> TokenStream {
        let kind = format_ident!("{}", r.kind);
        let spec = format_ident!("{}Spec", r.kind);
        let status = format_ident!("{}Status", r.kind);
        let kind_str = r.kind.as_str();
        let plural = r.plural.as_str();
        let crd = crd_fn(plural, &self.kube.group);
        let kube_impls = kube_impls(kind_str, &self.kube.group, &self.kube.version, plural, true);
        let api_version = format!("{}/{}", self.kube.group, self.kube.version);
        let arm_type = r.arm_type.as_str();
        let secret_exports = r.exports.secrets.iter().map(super::output::secret_export);
        let config_map_exports = r.exports.config_maps.iter().map(|(n, p)| quote!((#n, #p)));
        let d = doc(r.description.as_deref());
        quote! {
            #d
            #[derive(Debug, Clone, PartialEq, Deserialize)]
            pub struct #kind {
                pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
                pub spec: #spec,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub status: Option<#status>,
            }

            impl #kind {
                /// The custom resource's `apiVersion`.
                pub const API_VERSION: &'static str = #api_version;
                /// The custom resource's `kind`.
                pub const KIND: &'static str = #kind_str;
                /// The ARM resource type it manages.
                pub const ARM_TYPE: &'static str = #arm_type;
                /// The Secret exports `spec.operatorSpec.secrets` may name, each with the ARM action the reconciler
                /// fetches it with.
                pub const SECRET_EXPORTS: &'static [armgen_runtime::SecretExport] = &[#(#secret_exports),*];
                /// The ConfigMap exports `spec.operatorSpec.configMaps` may name, each with the dotted JSON path of
                /// its value in the ARM GET body.
                pub const CONFIG_MAP_EXPORTS: &'static [(&'static str, &'static str)] = &[#(#config_map_exports),*];

                #crd

                /// A custom resource named `name` with `spec`.
                pub fn new(name: &str, spec: #spec) -> Self {
                    Self {
                        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                            name: Some(name.to_string()),
                            ..Default::default()
                        },
                        spec,
                        status: None,
                    }
                }

                /// The custom resource for an ARM payload (an import): spec from the writable properties,
                /// status from everything the payload has.
                pub fn from_arm(name: &str, namespace: Option<&str>, arm: &arm::#arm_name) -> Self {
                    let mut cr = Self::new(name, #spec::from_arm(arm));
                    cr.metadata.namespace = namespace.map(str::to_string);
                    cr.status = Some(#status::from(arm));
                    cr
                }
            }

            #kube_impls
        }
    }

    /// The body of the spec's `to_arm`: the `let`s of the envelopes (ARM root properties that flattened spec
    /// fields land in) and the literal of the ARM body `body` (Rust type `arm_name`), whose JSON names are
    /// `by_json`.
    fn spec_to_arm(
        &self,
        r: &KubeResource,
        arm_name: &proc_macro2::Ident,
        body: &ObjectType,
        by_json: &BTreeMap<&str, &Property>,
    ) -> Result<(Vec<TokenStream>, TokenStream)> {
        // Group the fields by the ARM root property they land in.
        let mut mapped: BTreeMap<String, TokenStream> = BTreeMap::new();
        let mut envelopes: BTreeMap<String, Vec<&KubeField>> = BTreeMap::new();
        let path = format_ident!("path");
        for f in r.spec_fields.iter().filter(|f| f.special == Special::None) {
            match f.arm_path.as_slice() {
                [one] => {
                    if let Some(p) = by_json.get(one.as_str()) {
                        mapped.insert(p.name.clone(), self.arm_field_from_spec(f, p, &path));
                    }
                }
                [env, _] => envelopes.entry(env.clone()).or_default().push(f),
                _ => {}
            }
        }
        let mut envelope_lets = Vec::new();
        for (env, fields) in &envelopes {
            let Some(p) = by_json.get(env.as_str()) else { continue };
            let Some(env_id) = p.ty.named() else { continue };
            let value = self.envelope(p, env_id, fields, &path)?;
            let var = format_ident!("envelope_{}", crate::passes::names::field_ident(env));
            envelope_lets.push(quote!(let #var = #value;));
            mapped.insert(p.name.clone(), quote!(#var));
        }
        Ok((envelope_lets, self.arm_literal(quote!(arm::#arm_name), body, &mapped)))
    }

    /// The value of the ARM root property `p` (of object type `env_id`) built from the flattened spec `fields`
    /// that land in it; `None` when it is optional and none of them is set.
    fn envelope(
        &self,
        p: &Property,
        env_id: &str,
        fields: &[&KubeField],
        path: &proc_macro2::Ident,
    ) -> Result<TokenStream> {
        let env_obj = self.object_of(env_id).cloned().unwrap_or_default();
        let env_ty = self.arm_name(env_id)?;
        let env_by_json: BTreeMap<&str, &Property> = env_obj.properties.iter().map(|q| (q.name.as_str(), q)).collect();
        let mut inner = BTreeMap::new();
        let mut any = Vec::new();
        for f in fields {
            let Some(q) = f.arm_path.get(1).and_then(|j| env_by_json.get(j.as_str())) else {
                continue;
            };
            inner.insert(q.name.clone(), self.arm_field_from_spec(f, q, path));
            let field = ident(&f.rust_name);
            if f.omit_empty && matches!(f.ty, KubeRef::Array(_) | KubeRef::Map(_)) {
                any.push(quote!(self.#field.as_ref().is_some_and(|v| !v.is_empty())));
            } else if f.from_config {
                let sibling = ident(&format!("{}_from_config", f.rust_name));
                any.push(quote!(self.#field.is_some() || self.#sibling.is_some()));
            } else {
                any.push(quote!(self.#field.is_some()));
            }
        }
        let literal = self.arm_literal(quote!(arm::#env_ty), &env_obj, &inner);
        Ok(if arm_optional(p) {
            quote!(if #(#any)||* { Some(#literal) } else { None })
        } else {
            quote!(#literal)
        })
    }

    /// The fields of the spec's `from_arm` literal, read from the ARM body whose JSON names are `by_json`.
    fn spec_from_arm(&self, r: &KubeResource, by_json: &BTreeMap<&str, &Property>) -> Result<Vec<TokenStream>> {
        let mut spec_from = Vec::new();
        for f in &r.spec_fields {
            let field = ident(&f.rust_name);
            let value = match f.special {
                Special::AzureName => match by_json.get("name") {
                    Some(p) => {
                        let n = ident(&p.rust_name);
                        if arm_optional(p) {
                            quote!(arm.#n.clone())
                        } else {
                            quote!(Some(arm.#n.clone()))
                        }
                    }
                    None => quote!(None),
                },
                Special::None => self.root_value(f, by_json, false)?,
                _ => quote!(None),
            };
            spec_from.push(quote!(#field: #value,));
        }
        Ok(spec_from)
    }

    /// The fields of the status's `From` literal, read from the ARM body whose JSON names are `by_json`.
    fn status_from_arm(&self, r: &KubeResource, by_json: &BTreeMap<&str, &Property>) -> Result<Vec<TokenStream>> {
        let mut status_from = Vec::new();
        for f in &r.status_fields {
            let field = ident(&f.rust_name);
            let value = match f.special {
                Special::None => self.root_value(f, by_json, true)?,
                _ => quote!(None),
            };
            status_from.push(quote!(#field: #value,));
        }
        Ok(status_from)
    }

    /// A root spec/status field read from the ARM body (through the envelope for flattened fields).
    fn root_value(&self, f: &KubeField, by_json: &BTreeMap<&str, &Property>, status: bool) -> Result<TokenStream> {
        Ok(match f.arm_path.as_slice() {
            [one] => match by_json.get(one.as_str()) {
                Some(p) => {
                    let n = ident(&p.rust_name);
                    self.spec_field_from_arm(f, p, quote!(arm.#n), status)?
                }
                None => quote!(None),
            },
            [env, name] => {
                let Some(p) = by_json.get(env.as_str()) else {
                    return Ok(quote!(None));
                };
                let Some(env_obj) = p.ty.named().and_then(|id| self.object_of(id)) else {
                    return Ok(quote!(None));
                };
                let Some(q) = env_obj.properties.iter().find(|q| q.name == *name) else {
                    return Ok(quote!(None));
                };
                let env_field = ident(&p.rust_name);
                let q_field = ident(&q.rust_name);
                let secret = !status && has_secret(&f.ty);
                if arm_optional(p) && !arm_optional(q) && !q.boxed && !secret {
                    // A required property in an optional envelope: present whenever the envelope is.
                    let bare = if converts(&f.ty) {
                        self.convert_from_arm(&f.ty, &q.ty, quote!(&e.#q_field), status)?
                    } else {
                        self.copy_or_clone(&f.ty, quote!(e.#q_field), true)
                    };
                    return Ok(quote!(arm.#env_field.as_ref().map(|e| #bare)));
                }
                let inner = self.spec_field_from_arm(f, q, quote!(e.#q_field), status)?;
                if inner.to_string() == "None" {
                    // Nothing to read from the envelope (a secret, which ARM never returns).
                    return Ok(inner);
                }
                if arm_optional(p) {
                    quote!(arm.#env_field.as_ref().and_then(|e| #inner))
                } else {
                    quote!({ let e = &arm.#env_field; #inner })
                }
            }
            _ => quote!(None),
        })
    }
}

/// `<Kind>OperatorSpec` and its parts: the declared exports' destinations, and the CEL expressions.
fn operator_spec(r: &KubeResource) -> TokenStream {
    let kind = &r.kind;
    let name = format_ident!("{}OperatorSpec", kind);
    let secrets_ty = format_ident!("{}OperatorSecrets", kind);
    let config_maps_ty = format_ident!("{}OperatorConfigMaps", kind);
    let destinations = |names: &mut dyn Iterator<Item = &String>, ty: TokenStream, what: &str| {
        names
            .map(|n| {
                let field = ident(&crate::passes::names::field_ident(n));
                let d = format!(" Where to write the `{n}` export ({what}); not exported when unset.");
                quote! {
                    #[doc = #d]
                    #[serde(rename = #n, default, skip_serializing_if = "Option::is_none")]
                    pub #field: Option<#ty>,
                }
            })
            .collect::<Vec<_>>()
    };
    let mut parts = Vec::new();
    let mut items = Vec::new();
    if !r.exports.secrets.is_empty() {
        let fields = destinations(
            &mut r.exports.secrets.iter().map(|(n, _)| n),
            quote!(armgen_runtime::kube::SecretDestination),
            "a Secret",
        );
        let d = format!(" The Secret exports of a `{kind}`.");
        items.push(quote! {
            #[doc = #d]
            #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
            pub struct #secrets_ty { #(#fields)* }
        });
        parts.push(quote! {
            /// Secret exports.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub secrets: Option<#secrets_ty>,
        });
    }
    if !r.exports.config_maps.is_empty() {
        let fields = destinations(
            &mut r.exports.config_maps.iter().map(|(n, _)| n),
            quote!(armgen_runtime::kube::ConfigMapDestination),
            "a ConfigMap",
        );
        let d = format!(" The ConfigMap exports of a `{kind}`.");
        items.push(quote! {
            #[doc = #d]
            #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
            pub struct #config_maps_ty { #(#fields)* }
        });
        parts.push(quote! {
            /// ConfigMap exports.
            #[serde(rename = "configMaps", default, skip_serializing_if = "Option::is_none")]
            pub config_maps: Option<#config_maps_ty>,
        });
    }
    parts.push(quote! {
        /// Secret values computed by CEL expressions (`self`: the custom resource; `secret`: the Secret exports'
        /// values by name).
        #[serde(rename = "secretExpressions", default, skip_serializing_if = "Option::is_none")]
        pub secret_expressions: Option<Vec<armgen_runtime::kube::ExportExpression>>,
        /// ConfigMap values computed by CEL expressions (`self`: the custom resource).
        #[serde(rename = "configMapExpressions", default, skip_serializing_if = "Option::is_none")]
        pub config_map_expressions: Option<Vec<armgen_runtime::kube::ExportExpression>>,
    });
    let d = format!(" What the operator exports from a `{kind}` to Secrets and ConfigMaps. Not sent to Azure.");
    quote! {
        #[doc = #d]
        #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub struct #name { #(#parts)* }
        #(#items)*
    }
}

/// `ToJson` and `Serialize` (with `apiVersion` and `kind`: the runtime's `resource_json!`) and `kube_core::Resource`
/// for a custom resource struct with `metadata` and `spec`, and `status` when `has_status`.
fn kube_impls(kind_str: &str, group: &str, version: &str, plural: &str, has_status: bool) -> TokenStream {
    let kind = format_ident!("{}", kind_str);
    let status = has_status.then(|| quote!(, status));
    quote! {
        armgen_runtime::resource_json!(#kind #status);

        impl kube_core::Resource for #kind {
            type DynamicType = ();
            type Scope = kube_core::NamespaceResourceScope;
            fn kind(_: &()) -> std::borrow::Cow<'_, str> {
                #kind_str.into()
            }
            fn group(_: &()) -> std::borrow::Cow<'_, str> {
                #group.into()
            }
            fn version(_: &()) -> std::borrow::Cow<'_, str> {
                #version.into()
            }
            fn plural(_: &()) -> std::borrow::Cow<'_, str> {
                #plural.into()
            }
            fn meta(&self) -> &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    }
}

/// `pub fn crd()`: the kind's CRD manifest from `generated/crds/` (embedded at compile time), like kube's
/// `CustomResourceExt::crd`. The path is relative to the resource's module file
/// (`src/<group>/<version>/<module>.rs`).
fn crd_fn(plural: &str, group: &str) -> TokenStream {
    let path = format!("../../../{}/{plural}.{group}.yaml", super::crd::CRD_DIR);
    quote! {
        /// The CustomResourceDefinition of this kind (all its versions), as committed in `crds/`.
        pub fn crd() -> Result<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition, serde_yaml_ng::Error> {
            armgen_runtime::kube::crd(include_str!(#path))
        }
    }
}

/// `<Kind>Template` (`template: true`): a custom resource whose `spec.template.spec` is a `<Kind>Spec`.
fn template(r: &KubeResource, group: &str, version: &str) -> TokenStream {
    let kind_str = format!("{}Template", r.kind);
    let kind = format_ident!("{}", kind_str);
    let spec = format_ident!("{}TemplateSpec", r.kind);
    let resource = format_ident!("{}TemplateResource", r.kind);
    let target_spec = format_ident!("{}Spec", r.kind);
    let plural = crate::shape::plural_of(&kind_str);
    let api_version = format!("{group}/{version}");
    let d = format!(
        " A template of `{}` specs (ClusterClass style): `spec.template.spec` is what a `{}` made from it gets. \
         Nothing is created in Azure for a template.",
        r.kind, r.kind
    );
    let spec_doc = format!(" The desired state of a `{kind_str}`.");
    let resource_doc = format!(" What a `{}` made from the template gets.", r.kind);
    let crd = crd_fn(&plural, group);
    let kube_impls = kube_impls(&kind_str, group, version, &plural, false);
    quote! {
        #[doc = #d]
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        pub struct #kind {
            pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
            pub spec: #spec,
        }

        impl #kind {
            /// The custom resource's `apiVersion`.
            pub const API_VERSION: &'static str = #api_version;
            /// The custom resource's `kind`.
            pub const KIND: &'static str = #kind_str;

            #crd

            /// A template named `name` whose resources get `spec`.
            pub fn new(name: &str, spec: #target_spec) -> Self {
                Self {
                    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                        name: Some(name.to_string()),
                        ..Default::default()
                    },
                    spec: #spec { template: #resource { metadata: None, spec } },
                }
            }
        }

        #kube_impls

        #[doc = #spec_doc]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct #spec {
            /// The template.
            pub template: #resource,
        }

        #[doc = #resource_doc]
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct #resource {
            /// The labels and annotations of resources made from the template.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub metadata: Option<armgen_runtime::capi::TemplateMetadata>,
            /// The spec of resources made from the template.
            pub spec: #target_spec,
        }
    }
}

/// Whether any field's conversion uses `path` (a nested object, a reference, a ConfigMap value, or a required
/// field's error).
fn uses_path(fields: &[KubeField]) -> bool {
    fields
        .iter()
        .filter(|f| f.special == Special::None)
        .any(|f| converts(&f.ty) || f.from_config || f.arm_props.last().is_some_and(|p| !arm_optional(p)))
}

/// Whether any field's conversion uses the resolver (a nested object, a reference or a ConfigMap value).
fn uses_resolver(fields: &[KubeField]) -> bool {
    fields
        .iter()
        .filter(|f| f.special == Special::None)
        .any(|f| converts(&f.ty) || f.from_config)
}

/// The version's custom-resource files, and the items its `mod.rs` needs.
pub fn version_files(
    files: &mut BTreeMap<PathBuf, String>,
    v: &VersionOutput<'_>,
    kube: &KubeIr,
    head: &str,
    base: &str,
) -> Result<TokenStream> {
    let cx = Ctx {
        ir: v.ir,
        kube,
        root: false,
    };
    let root_cx = Ctx {
        ir: v.ir,
        kube,
        root: true,
    };
    for family in [Family::Spec, Family::Status] {
        family_files(files, &cx, family, head, base)?;
    }
    let roots = resource_files(files, &root_cx, head, base)?;
    Ok(version_items(&cx, &roots))
}

/// The nested types of `family`: one file per module that uses them (`spec/<module>.rs`), and the family's
/// `mod.rs` re-exporting them all.
fn family_files(
    files: &mut BTreeMap<PathBuf, String>,
    cx: &Ctx<'_>,
    family: Family,
    head: &str,
    base: &str,
) -> Result<()> {
    let modules: BTreeSet<&str> = cx
        .kube
        .types
        .values()
        .filter(|t| t.family == family)
        .map(|t| t.module.as_str())
        .collect();
    for module in &modules {
        let mut types: Vec<(&String, &KubeType)> = cx
            .kube
            .types
            .iter()
            .filter(|(_, t)| t.family == family && t.module == *module)
            .collect();
        types.sort_by(|a, b| a.1.rust_name.cmp(&b.1.rust_name));
        // A status type that is its spec twin's struct ([`crate::shape::status_as_spec`]) is that struct,
        // re-exported; the status reads it from ARM with the spec's `from_arm`.
        let mut items = Vec::new();
        let mut spec_structs = Vec::new();
        for (id, t) in types {
            if cx.kube.status_as_spec.contains(id) {
                spec_structs.push(format_ident!("{}", t.rust_name));
            } else {
                items.push(cx.nested(t)?);
            }
        }
        let shared_doc = (!spec_structs.is_empty()).then(|| {
            quote! {
                #![doc = ""]
                #![doc = " The spec types whose every property is both writable and returned are status types too."]
            }
        });
        let fam_doc = format!(
            " The {} types of the custom resources, used by `{module}`.",
            family.module()
        );
        let body = quote!(#(#items)*);
        let imports = runtime_imports(&body, quote!(super::super), false);
        let tokens = quote! {
            #![doc = #fam_doc]
            #shared_doc
            #[allow(unused_imports)]
            use super::*;
            #imports
            #(pub use super::super::spec::#spec_structs;)*
            #body
        };
        let path = format!("{base}/{}/{module}.rs", family.module());
        files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    }
    let mods: Vec<_> = modules.iter().map(|m| format_ident!("{}", m)).collect();
    let fam_doc = format!(" Nested {} types of the custom resources.", family.module());
    let tokens = quote! {
        #![doc = #fam_doc]
        #(mod #mods; pub use #mods::*;)*
    };
    let path = format!("{base}/{}/mod.rs", family.module());
    files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    Ok(())
}

/// One file per kind (`<module>.rs`: the resource types and their conversions, emitted by `root_cx`); returns
/// the modules, in the order of the kinds.
fn resource_files(
    files: &mut BTreeMap<PathBuf, String>,
    root_cx: &Ctx<'_>,
    head: &str,
    base: &str,
) -> Result<Vec<proc_macro2::Ident>> {
    let mut roots = Vec::new();
    for r in &root_cx.kube.resources {
        let module = format_ident!("{}", r.module);
        let tokens = root_cx.resource(r)?;
        let rdoc = format!(" The `{}` custom resource (`{}`).", r.kind, r.arm_type);
        let imports = runtime_imports(&tokens, quote!(super), true);
        let tokens = quote! {
            #![doc = #rdoc]
            #imports
            #tokens
        };
        let path = format!("{base}/{}.rs", r.module);
        files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
        roots.push(module);
    }
    Ok(roots)
}

/// The items of the version's `mod.rs`: the `spec`, `status` and per-kind (`roots`) modules, `GROUP`, `KINDS`,
/// and the `import` and `export` functions dispatching on the kind.
fn version_items(cx: &Ctx<'_>, roots: &[proc_macro2::Ident]) -> TokenStream {
    let kube = cx.kube;
    let import_arms = kube.resources.iter().map(|r| {
        let kind = &r.kind;
        let k = format_ident!("{}", r.kind);
        let arm_name = cx.arm_name(&r.arm_body).map(|n| quote!(#n)).unwrap_or_else(|_| quote!(()));
        quote!(#kind => armgen_runtime::json::from_text::<arm::#arm_name>(arm_json).map(|a| armgen_runtime::json::ToJson::to_json(&#k::from_arm(name, namespace, &a))),)
    });
    let export_arms = kube.resources.iter().map(|r| {
        let kind = &r.kind;
        let k = format_ident!("{}", r.kind);
        quote! {
            #kind => {
                let cr: #k = armgen_runtime::kube::from_custom_resource(cr)?;
                let arm = cr.spec.to_arm(resolver)?;
                Ok(armgen_runtime::json::ToJson::to_json(&arm))
            }
        }
    });
    let group = kube.group.as_str();
    let kinds = kube.resources.iter().map(|r| r.kind.as_str());
    quote! {
        use armgen_runtime::kube::{ConversionError, Resolver};
        pub mod spec;
        pub mod status;
        #(mod #roots; pub use #roots::*;)*

        /// The Kubernetes API group of these custom resources.
        pub const GROUP: &str = #group;

        /// The kinds of this version.
        pub const KINDS: &[&str] = &[#(#kinds),*];

        /// Imports an ARM payload of `kind` as a custom resource (JSON), as `armctl import` does; `None` for a
        /// kind this version does not have.
        pub fn import(kind: &str, arm_json: &str, name: &str, namespace: Option<&str>) -> Option<Result<serde_json::Value, armgen_runtime::json::Error>> {
            Some(match kind {
                #(#import_arms)*
                _ => return None,
            })
        }

        /// The ARM PUT body for a custom resource of `kind` (JSON), references resolved by `resolver`; `None` for
        /// a kind this version does not have.
        pub fn export(kind: &str, cr: &serde_json::Value, resolver: &dyn Resolver) -> Option<Result<serde_json::Value, ConversionError>> {
            let run = || -> Result<serde_json::Value, ConversionError> {
                match kind {
                    #(#export_arms)*
                    _ => Err(ConversionError { path: String::new(), message: format!("unknown kind {kind}") }),
                }
            };
            if !KINDS.contains(&kind) {
                return None;
            }
            Some(run())
        }
    }
}

/// The `use` items of a custom-resource file (`root`: a kind's file, beside `arm`, `spec` and `status`; else a
/// nested types file in `spec/` or `status/`, beside `arm` under `up`): only what `body` uses.
fn runtime_imports(body: &TokenStream, up: TokenStream, root: bool) -> TokenStream {
    let uses = super::uses::Uses::of(body);
    let modules = if root {
        uses.modules(up, &["arm", "spec", "status"])
    } else {
        uses.modules(up, &["arm"])
    };
    let kube = uses.names_and_traits(
        quote!(armgen_runtime::kube),
        &[
            "ConversionError",
            "Path",
            "Resolver",
            "keys_of_references",
            "missing",
            "required",
            "value_or_config",
        ],
        &[("ToArm", &["to_arm"])],
    );
    let serde = uses.names(quote!(serde), &["Deserialize", "Serialize"]);
    let map = uses.names(quote!(std::collections), &["BTreeMap"]);
    quote!(#modules #kube #serde #map)
}

#[cfg(test)]
mod tests {
    use super::serde_camel_case;

    /// The spellings serde gives fields under `rename_all = "camelCase"`: a field needs its own `rename` exactly
    /// when its JSON name differs from these.
    #[test]
    fn camel_case_spells_fields_as_serde_does() {
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Probe {
            kubernetes_version: u8,
            enable_rbac: u8,
            ipv4_address: u8,
            r#type: u8,
            dns_prefix_2x: u8,
        }
        let probe = Probe {
            kubernetes_version: 0,
            enable_rbac: 0,
            ipv4_address: 0,
            r#type: 0,
            dns_prefix_2x: 0,
        };
        let json = serde_json::to_value(&probe).unwrap_or_default();
        let keys: Vec<&String> = json.as_object().map(|m| m.keys().collect()).unwrap_or_default();
        let ours: Vec<String> = [
            "kubernetes_version",
            "enable_rbac",
            "ipv4_address",
            "type",
            "dns_prefix_2x",
        ]
        .iter()
        .map(|n| serde_camel_case(n))
        .collect();
        assert_eq!(keys, ours.iter().collect::<Vec<_>>());
        assert_eq!(serde_camel_case("enable_rbac"), "enableRbac");
    }
}
