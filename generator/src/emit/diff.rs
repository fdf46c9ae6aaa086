//! Emits change detection for one version: `impl armgen_runtime::diff::DiffWith` for every spec type (the
//! resource roots `KindSpec` and the nested `spec::X`), and for the ARM enums and unions spec fields use, in
//! `src/<group>/<version>/diff/`: one file per spec module (`diff/managed_cluster.rs`, `diff/shared.rs`) and
//! `diff/mod.rs` with the enum impls and `diff_custom_resource` (a custom resource and an ARM GET body, as JSON,
//! compared; what `armctl diff` runs).
//!
//! Per field (semantics in `armgen_runtime::diff`):
//!
//! - synthetic fields (`azureName`, `owner`, `operatorSpec`) are not compared: they are not ARM properties, or
//!   not comparable with the GET body (the name is in the URL);
//! - secret fields (or collections of them) are skipped: a secret cannot be read back;
//! - an array of objects with identifiers (`x-ms-identifiers`, or the config's `identifiers`) is compared with
//!   `diff_identified`, keyed by those item fields (`[name=pool1]`); identifiers the spec item lacks (a read-only
//!   `id`) leave the array compared by position. Only direct item properties can be identifiers;
//! - a collection the config marks `emptyCollection: omit` (or `kubernetes.emptyCollections: omit`) is not
//!   compared when empty, as spec → ARM does not send it;
//! - a property with `diffIgnoredWhen` is compared only when its sibling conditions do not all hold, tested on
//!   `armgen_runtime::diff::effective` (the desired sibling when set, else the actual one);
//! - everything else: `self.x.diff_with(&actual.x, &path.field("x"), out)`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use super::output::{VersionOutput, finish};
use super::rust::ident;
use crate::error::{Error, Result};
use crate::ir::{Primitive, TypeKind};
use crate::shape::{Family, KubeField, KubeIr, KubeRef, Special};

struct Ctx<'a> {
    kube: &'a KubeIr,
}

fn has_secret(k: &KubeRef) -> bool {
    match k {
        KubeRef::Secret => true,
        KubeRef::Array(inner) | KubeRef::Map(inner) => has_secret(inner),
        _ => false,
    }
}

/// The ARM enums and unions a shape refers to.
fn arm_values(k: &KubeRef, out: &mut BTreeSet<String>) {
    match k {
        KubeRef::ArmEnum(id) | KubeRef::ArmUnion(id) => {
            out.insert(id.clone());
        }
        KubeRef::Array(inner) | KubeRef::Map(inner) => arm_values(inner, out),
        _ => {}
    }
}

impl Ctx<'_> {
    fn emit_err(&self, what: String, message: &str) -> Error {
        Error::Emit {
            what,
            message: message.to_string(),
        }
    }

    /// The comparison of one field of a struct whose fields are `siblings`; `None` when it is not compared.
    fn field(&self, f: &KubeField, siblings: &[KubeField], owner: &str) -> Result<Option<TokenStream>> {
        if f.special != Special::None || has_secret(&f.ty) {
            return Ok(None);
        }
        let name = ident(&f.rust_name);
        let json = f.json_name.as_str();
        let item_keys = match (&f.ty, &f.identifiers) {
            (KubeRef::Array(inner), Some(ids)) if !ids.is_empty() => match inner.as_ref() {
                KubeRef::Kube(item) => self.keys(item, ids, &format!("{owner}.{json}"))?,
                _ => None,
            },
            _ => None,
        };
        let mut stmt = match item_keys {
            Some(keys) => {
                let names = f.identifiers.iter().flatten().map(String::as_str);
                quote! {
                    armgen_runtime::diff::diff_identified(&self.#name, &actual.#name, &[#(#names),*], |x| [#(#keys),*], &path.field(#json), out);
                }
            }
            None => quote!(self.#name.diff_with(&actual.#name, &path.field(#json), out);),
        };
        if f.omit_empty && matches!(f.ty, KubeRef::Array(_) | KubeRef::Map(_)) {
            stmt = quote! {
                if self.#name.as_ref().is_some_and(|v| !v.is_empty()) {
                    #stmt
                }
            };
        }
        let rules = f.arm_props.last().map(|p| &p.diff_ignored_when);
        if let Some(rules) = rules.filter(|r| !r.is_empty()) {
            let mut conditions = Vec::new();
            for (sibling, value) in rules {
                conditions.push(self.condition(f, siblings, sibling, value, owner)?);
            }
            let ignored = format_ident!("ignore_{}", f.rust_name.trim_start_matches("r#"));
            stmt = quote! {
                let #ignored = #(#conditions)&&*;
                if !#ignored {
                    #stmt
                }
            };
        }
        Ok(Some(stmt))
    }

    /// The key expressions (one per identifier) of an item `x` of the spec type `item`; `None` when an
    /// identifier is not a field of the spec item (read-only, e.g. `id`): the array is then compared by position.
    fn keys(&self, item: &str, ids: &[String], at: &str) -> Result<Option<Vec<TokenStream>>> {
        let Some(t) = self.kube.types.get(item) else {
            return Err(self.emit_err(at.to_string(), "array item type is not generated"));
        };
        let mut keys = Vec::new();
        for id in ids {
            let Some(g) = t
                .fields
                .iter()
                .find(|g| g.json_name == *id && g.special == Special::None)
            else {
                return Ok(None);
            };
            let field = ident(&g.rust_name);
            keys.push(match &g.ty {
                KubeRef::Primitive(Primitive::String) => quote!(armgen_runtime::diff::Key::of_str(x.#field.as_deref())),
                KubeRef::ArmEnum(_) => {
                    quote!(armgen_runtime::diff::Key::of_str(x.#field.as_ref().map(|v| v.as_str())))
                }
                KubeRef::ResourceRef => {
                    quote!(armgen_runtime::diff::Key::of_str(x.#field.as_ref().and_then(|r| r.arm_id.as_deref())))
                }
                KubeRef::Primitive(Primitive::Int32 | Primitive::Int64) => {
                    quote!(armgen_runtime::diff::Key::of_int(x.#field.map(i64::from)))
                }
                KubeRef::Primitive(Primitive::Bool) => quote!(armgen_runtime::diff::Key::of_bool(x.#field)),
                _ => {
                    return Err(self.emit_err(
                        format!("{at}[].{id}"),
                        "an identifier must be a string, enum, integer or boolean",
                    ));
                }
            });
        }
        Ok(Some(keys))
    }

    /// The test of one `diffIgnoredWhen` condition: `sibling` (JSON name, a field beside `f` in the same ARM
    /// object) has `value`.
    fn condition(
        &self,
        f: &KubeField,
        siblings: &[KubeField],
        sibling: &str,
        value: &Value,
        owner: &str,
    ) -> Result<TokenStream> {
        let n = f.arm_path.len();
        let at = || format!("{owner}.{}: diffIgnoredWhen.{sibling}", f.json_name);
        let Some(g) = siblings.iter().find(|g| {
            g.special == Special::None
                && g.arm_path.len() == n
                && g.arm_path[..n - 1] == f.arm_path[..n - 1]
                && g.arm_path.last().map(String::as_str) == Some(sibling)
        }) else {
            return Err(self.emit_err(at(), "the sibling is not a field of the spec type"));
        };
        let field = ident(&g.rust_name);
        let effective = quote!(armgen_runtime::diff::effective(&self.#field, &actual.#field));
        Ok(match (&g.ty, value) {
            (KubeRef::Primitive(Primitive::Bool), Value::Bool(b)) => quote!(#effective == Some(&#b)),
            (KubeRef::Primitive(Primitive::String), Value::String(s)) => {
                quote!(#effective.is_some_and(|v| v.eq_ignore_ascii_case(#s)))
            }
            (KubeRef::ArmEnum(_), Value::String(s)) => {
                quote!(#effective.is_some_and(|v| v.as_str().eq_ignore_ascii_case(#s)))
            }
            (KubeRef::Primitive(Primitive::Int32 | Primitive::Int64), Value::Number(num)) if num.is_i64() => {
                let lit = proc_macro2::Literal::i64_unsuffixed(num.as_i64().unwrap_or_default());
                quote!(#effective.is_some_and(|v| *v == #lit))
            }
            _ => return Err(self.emit_err(at(), "the value does not fit the sibling's type")),
        })
    }

    /// `impl DiffWith for <ty>` comparing `fields`.
    fn impl_for(&self, ty: TokenStream, fields: &[KubeField], owner: &str) -> Result<TokenStream> {
        let mut stmts = Vec::new();
        for f in fields {
            if let Some(s) = self.field(f, fields, owner)? {
                stmts.push(s);
            }
        }
        let (a, p, o) = if stmts.is_empty() {
            (format_ident!("_actual"), format_ident!("_path"), format_ident!("_out"))
        } else {
            (format_ident!("actual"), format_ident!("path"), format_ident!("out"))
        };
        Ok(quote! {
            impl DiffWith for #ty {
                fn diff_with(&self, #a: &Self, #p: &Path<'_>, #o: &mut Differences) {
                    #(#stmts)*
                }
            }
        })
    }
}

/// The version's `diff/` files; returns the items its `mod.rs` needs.
pub fn version_files(
    files: &mut BTreeMap<PathBuf, String>,
    v: &VersionOutput<'_>,
    kube: &KubeIr,
    head: &str,
    base: &str,
) -> Result<TokenStream> {
    let cx = Ctx { kube };
    let mut modules: BTreeMap<&str, Vec<TokenStream>> = BTreeMap::new();
    let mut values = BTreeSet::new();
    // An action kind runs once: nothing compares its spec with Azure.
    for r in kube.resources.iter().filter(|r| r.action.is_none()) {
        let spec = format_ident!("{}Spec", r.kind);
        let item = cx.impl_for(quote!(super::super::#spec), &r.spec_fields, &format!("{}Spec", r.kind))?;
        modules.entry(r.module.as_str()).or_default().push(item);
        for f in r.spec_fields.iter().filter(|f| f.special == Special::None) {
            arm_values(&f.ty, &mut values);
        }
    }
    let mut nested: Vec<_> = kube.types.values().filter(|t| t.family == Family::Spec).collect();
    nested.sort_by(|a, b| (a.module.as_str(), a.rust_name.as_str()).cmp(&(b.module.as_str(), b.rust_name.as_str())));
    for t in nested {
        let name = format_ident!("{}", t.rust_name);
        let item = cx.impl_for(quote!(spec::#name), &t.fields, &t.rust_name)?;
        modules.entry(t.module.as_str()).or_default().push(item);
        for f in &t.fields {
            arm_values(&f.ty, &mut values);
        }
    }
    for (module, items) in &modules {
        let doc = format!(" `DiffWith` for the spec types of `{module}`.");
        let tokens = quote! {
            #![doc = #doc]
            #[allow(unused_imports)]
            use super::super::{arm, spec};
            use armgen_runtime::diff::{DiffWith, Differences, Path};
            #(#items)*
        };
        let path = format!("{base}/diff/{module}.rs");
        files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    }

    let mut value_impls = Vec::new();
    for id in &values {
        let Some(def) = v.ir.types.get(id) else {
            return Err(cx.emit_err(id.clone(), "spec field refers to an ARM type that is not generated"));
        };
        let name = format_ident!("{}", def.rust_name);
        // An enum's `DiffWith` (case-insensitive) comes with it from the runtime's enum macros.
        if let TypeKind::Enum(_) = def.kind {
            continue;
        }
        let body = quote!(armgen_runtime::diff::diff_eq(self, actual, path, out););
        value_impls.push(quote! {
            impl DiffWith for arm::#name {
                fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
                    #body
                }
            }
        });
    }
    let mods: Vec<_> = modules.keys().map(|m| format_ident!("{}", m)).collect();
    let arms = kube.resources.iter().filter(|r| r.action.is_none()).map(|r| {
        let kind = r.kind.as_str();
        let k = format_ident!("{}", r.kind);
        let spec = format_ident!("{}Spec", r.kind);
        let arm_name = v
            .ir
            .types
            .get(&r.arm_body)
            .map(|d| format_ident!("{}", d.rust_name))
            .ok_or_else(|| cx.emit_err(r.arm_body.clone(), "resource body is not generated"));
        arm_name.map(|arm_name| {
            quote! {
                #kind => armgen_runtime::diff::diff_documents(custom_resource, arm_json, |cr: &super::#k| &cr.spec, |body: &arm::#arm_name| super::#spec::from_arm(body)),
            }
        })
    });
    let arms = arms.collect::<Result<Vec<_>>>()?;
    // Only what the file uses: without enums or unions there is no `impl DiffWith` here.
    let imports = if value_impls.is_empty() {
        quote!(
            use armgen_runtime::diff::{DiffInputError, Differences};
        )
    } else {
        quote!(
            use armgen_runtime::diff::{DiffInputError, DiffWith, Differences, Path};
        )
    };
    let tokens = quote! {
        #![doc = " Change detection: `armgen_runtime::diff::DiffWith` for every spec type of this version, and for the ARM"]
        #![doc = " enums and unions they use (enums compare case-insensitively)."]
        #(mod #mods;)*
        #[allow(unused_imports)]
        use super::arm;
        #imports

        #(#value_impls)*

        /// Compares a custom resource of `kind` (JSON; its `spec`) with an ARM GET body of that kind (converted to
        /// spec shape with `from_arm`), as `armctl diff` does; `None` for a kind this version does not have.
        pub fn diff_custom_resource(kind: &str, custom_resource: &serde_json::Value, arm_json: &str) -> Option<Result<Differences, DiffInputError>> {
            Some(match kind {
                #(#arms)*
                _ => return None,
            })
        }
    };
    let path = format!("{base}/diff/mod.rs");
    files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    Ok(quote!(
        pub mod diff;
    ))
}

/// `diff_custom_resource` over every version with custom resources, for the crate's registry.
pub fn registry(versions: &[&VersionOutput<'_>]) -> TokenStream {
    let arms = versions.iter().map(|v| {
        let (g, k) = (v.group, v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::diff::diff_custom_resource(kind, custom_resource, arm_json),
        }
    });
    quote! {
        /// The differences between a custom resource (JSON) of `kind` in API group `group`, Kubernetes version
        /// `version`, and an ARM GET body of that kind (`armgen_runtime::diff`); `None` when that group, version
        /// (or its feature) or kind does not exist.
        pub fn diff_custom_resource(group: &str, version: &str, kind: &str, custom_resource: &serde_json::Value, arm_json: &str) -> Option<Result<armgen_runtime::diff::Differences, armgen_runtime::diff::DiffInputError>> {
            match (group, version) {
                #(#arms)*
                _ => {
                    let _ = (kind, custom_resource, arm_json);
                    None
                }
            }
        }
    }
}
