//! Emits Rust for the ARM payload types of one API version: `quote` → `syn::File` → `prettyplease`.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use crate::error::{Error, Result};
use crate::ir::{EnumType, Ir, ObjectType, Primitive, Property, TypeDef, TypeId, TypeKind, TypeRef, UnionType};
use crate::passes::enums::variant_ident;
use crate::passes::names::UNKNOWN_FIELDS;

/// Rust keywords that must be written as raw identifiers when used as field names.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if", "impl", "in", "let",
    "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static", "struct", "trait", "true", "type",
    "unsafe", "use", "where", "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

pub fn ident(name: &str) -> Ident {
    if KEYWORDS.contains(&name) {
        Ident::new_raw(name, Span::call_site())
    } else {
        Ident::new(name, Span::call_site())
    }
}

/// Formats tokens as a Rust file. `what` names the file in errors.
pub fn format_file(tokens: TokenStream, what: &str) -> Result<String> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| Error::Emit {
        what: what.to_string(),
        message: e.to_string(),
    })?;
    Ok(space_items(&prettyplease::unparse(&file)))
}

/// Puts a blank line after each top-level item that ends in `}` and after the `use` block, which
/// prettyplease does not, so that a reviewer reading a diff sees where one type ends and the next begins.
fn space_items(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        let next = lines.get(i + 1).copied().unwrap_or("");
        let ends_item = *line == "}" || *line == "};";
        let ends_uses = line.starts_with("use ") && !next.starts_with("use ") && !next.starts_with("#[allow");
        if (ends_item || ends_uses) && !next.is_empty() {
            out.push('\n');
        }
    }
    out
}

/// `#[doc]` attributes for a description plus notes, one attribute per line.
fn docs(description: Option<&str>, notes: &[String]) -> TokenStream {
    let mut lines: Vec<String> = Vec::new();
    if let Some(d) = description {
        for line in d.trim().lines() {
            lines.push(sanitize_doc_line(line));
        }
    }
    if !notes.is_empty() {
        if !lines.is_empty() {
            lines.push(String::new());
        }
        lines.push(notes.join(" "));
    }
    let attrs = lines.iter().map(|l| {
        let text = if l.is_empty() { String::new() } else { format!(" {l}") };
        quote!(#[doc = #text])
    });
    quote!(#(#attrs)*)
}

/// Keeps rustdoc from reading spec prose as markup it would warn about (bare URLs, HTML-ish tags, brackets).
pub(crate) fn sanitize_doc_line(line: &str) -> String {
    let line = line.trim_end();
    let link_brackets = markdown_link_brackets(line);
    let mut out = String::with_capacity(line.len());
    let mut word_start = true;
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        if word_start && (rest.starts_with("http://") || rest.starts_with("https://")) {
            let word = rest.split(' ').next().unwrap_or(rest);
            let url = word.trim_end_matches(['.', ',', ';', ':', ')', '\'', '"']);
            if !url.contains(['<', '>', '[', ']', '(', ')', '`']) {
                out.push('<');
                out.push_str(url);
                out.push('>');
                i += url.len();
                word_start = false;
                continue;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '[' | ']' if !link_brackets.contains(&i) => {
                out.push('\\');
                out.push(c);
            }
            '\t' => out.push(' '),
            _ => out.push(c),
        }
        word_start = c == ' ' || c == '(';
        i += c.len_utf8();
    }
    // A line indented by four or more spaces would become a code block that rustdoc tries to compile.
    out.trim_start().to_string()
}

/// Byte offsets of the brackets of Markdown links (`[text](target)`), which rustdoc renders as links; other
/// brackets would read as broken intra-doc links and are escaped.
fn markdown_link_brackets(line: &str) -> BTreeSet<usize> {
    let mut out = BTreeSet::new();
    let bytes = line.as_bytes();
    let mut open: Option<usize> = None;
    for (i, b) in bytes.iter().enumerate() {
        match b {
            b'[' => open = Some(i),
            b']' => {
                if let Some(o) = open.take()
                    && bytes.get(i + 1) == Some(&b'(')
                    && line[i + 1..].contains(')')
                {
                    out.insert(o);
                    out.insert(i);
                }
            }
            _ => {}
        }
    }
    out
}

pub struct Emitter<'a> {
    ir: &'a Ir,
    defaultable: BTreeSet<TypeId>,
}

impl<'a> Emitter<'a> {
    pub fn new(ir: &'a Ir) -> Self {
        let defaultable = defaultable_types(ir);
        Emitter { ir, defaultable }
    }

    fn type_name(&self, id: &TypeId) -> Result<Ident> {
        let def = self.ir.types.get(id).ok_or_else(|| Error::Emit {
            what: id.clone(),
            message: "reference to a type that is not generated".into(),
        })?;
        Ok(format_ident!("{}", def.rust_name))
    }

    fn type_tokens(&self, ty: &TypeRef) -> Result<TokenStream> {
        Ok(match ty {
            TypeRef::Named(id) => {
                let name = self.type_name(id)?;
                quote!(#name)
            }
            TypeRef::Primitive(p) => primitive(*p),
            TypeRef::Array(inner) => {
                let inner = self.type_tokens(inner)?;
                quote!(Vec<#inner>)
            }
            TypeRef::Map(inner) => {
                let inner = self.type_tokens(inner)?;
                quote!(BTreeMap<String, #inner>)
            }
            TypeRef::Json => quote!(serde_json::Value),
        })
    }

    /// The items of one module: every type assigned to it, sorted by Rust name.
    pub fn module(&self, module: &str) -> Result<TokenStream> {
        let mut defs: Vec<(&TypeId, &TypeDef)> = self.ir.types.iter().filter(|(_, d)| d.module == module).collect();
        defs.sort_by(|a, b| a.1.rust_name.cmp(&b.1.rust_name));
        let mut items = Vec::new();
        for (id, def) in defs {
            items.push(match &def.kind {
                TypeKind::Object(o) => self.object(id, def, o)?,
                TypeKind::Enum(e) => self.enumeration(def, e),
                TypeKind::Union(u) => self.union(def, u)?,
            });
        }
        let uses_map = self
            .ir
            .types
            .values()
            .any(|d| d.module == module && matches!(d.kind, TypeKind::Object(_)));
        let map_import = if uses_map {
            quote!(
                #[allow(unused_imports)]
                use std::collections::BTreeMap;
            )
        } else {
            quote!()
        };
        Ok(quote! {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use armgen_runtime::UnknownFields;
            #[allow(unused_imports)]
            use serde::{Deserialize, Serialize};
            #map_import
            #(#items)*
        })
    }

    fn object(&self, id: &TypeId, def: &TypeDef, o: &ObjectType) -> Result<TokenStream> {
        let name = format_ident!("{}", def.rust_name);
        let mut notes = vec![format!("Schema `{}`.", def.name)];
        if let Some(tag) = &o.tag_property {
            notes.push(format!(
                "The `{tag}` discriminator is carried by the enclosing union's tag."
            ));
        }
        let doc = docs(def.description.as_deref(), &notes);
        let mut fields = Vec::new();
        for p in &o.properties {
            fields.push(self.field(p)?);
        }
        let unknown = format_ident!("{}", UNKNOWN_FIELDS);
        let extra = match &o.additional_properties {
            Some(ty) => {
                let ty = self.type_tokens(ty)?;
                quote! {
                    /// `additionalProperties`: entries beside the named properties.
                    #[serde(flatten)]
                    pub #unknown: BTreeMap<String, #ty>,
                }
            }
            None => quote! {
                /// Properties this API version does not define, kept as received so that nothing is lost in a
                /// round trip (the service may return properties newer than the requested API version).
                #[serde(flatten)]
                pub #unknown: BTreeMap<String, serde_json::Value>,
            },
        };
        let default = if self.defaultable.contains(id) {
            quote!(Default,)
        } else {
            quote!()
        };
        let mut visits = Vec::new();
        for p in &o.properties {
            if p.ty.named().is_some() {
                let field = ident(&p.rust_name);
                let pointer = format!("{{path}}/{}", crate::error::escape_pointer(&p.name));
                visits.push(quote!(self.#field.unknown_fields(&format!(#pointer), out);));
            }
        }
        let record_unknown = match &o.additional_properties {
            Some(ty) if ty.named().is_some() => quote!(self.#unknown.unknown_fields(path, out);),
            Some(_) => quote!(),
            None => quote!(armgen_runtime::unknown::record_keys(&self.#unknown, path, out);),
        };
        // Nothing to visit (only primitives beside typed `additionalProperties`): the parameters go unused.
        let (path_param, out_param) = if visits.is_empty() && record_unknown.is_empty() {
            (format_ident!("_path"), format_ident!("_out"))
        } else {
            (format_ident!("path"), format_ident!("out"))
        };
        Ok(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #default Serialize, Deserialize)]
            pub struct #name {
                #(#fields)*
                #extra
            }
            impl armgen_runtime::UnknownFields for #name {
                fn unknown_fields(&self, #path_param: &str, #out_param: &mut Vec<String>) {
                    #(#visits)*
                    #record_unknown
                }
            }
        })
    }

    fn field(&self, p: &Property) -> Result<TokenStream> {
        let field = ident(&p.rust_name);
        let mut ty = self.type_tokens(&p.ty)?;
        if p.boxed {
            ty = quote!(Box<#ty>);
        }
        let mut notes = Vec::new();
        if p.read_only {
            notes.push("Read-only.".to_string());
        }
        if p.secret {
            notes.push("Secret: never returned by the service.".to_string());
        }
        if let Some(m) = &p.mutability {
            if !m.iter().any(|x| x == "update") && m.iter().any(|x| x == "create") {
                notes.push("Immutable after creation.".to_string());
            }
        }
        if let Some(f) = &p.format {
            notes.push(format!("Format: `{f}`."));
        }
        if let Some(d) = &p.default {
            notes.push(format!("Default: `{d}`."));
        }
        if let Some(ids) = &p.identifiers {
            if !ids.is_empty() {
                notes.push(format!(
                    "Items are identified by {}.",
                    ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let doc = docs(p.description.as_deref(), &notes);
        let json = &p.name;
        let rename = if p.rust_name != *json {
            quote!(rename = #json,)
        } else {
            quote!()
        };
        let optional = !p.required || p.read_only;
        Ok(if p.nullable {
            quote! {
                #doc
                #[serde(#rename default, skip_serializing_if = "Option::is_none", deserialize_with = "armgen_runtime::nullable::deserialize")]
                pub #field: Option<armgen_runtime::Nullable<#ty>>,
            }
        } else if optional {
            quote! {
                #doc
                #[serde(#rename default, skip_serializing_if = "Option::is_none")]
                pub #field: Option<#ty>,
            }
        } else if rename.is_empty() {
            quote! {
                #doc
                pub #field: #ty,
            }
        } else {
            quote! {
                #doc
                #[serde(#rename)]
                pub #field: #ty,
            }
        })
    }

    fn enumeration(&self, def: &TypeDef, e: &EnumType) -> TokenStream {
        let name = format_ident!("{}", def.rust_name);
        let kind_note = if e.open {
            "Open enum (`modelAsString`): values this API version does not know are kept in `Other`."
        } else {
            "Closed enum: other values are rejected."
        };
        let doc = docs(
            def.description.as_deref(),
            &[format!(
                "Schema `{}`. {kind_note} Values compare case-insensitively, as ARM does.",
                def.name
            )],
        );
        let variants: Vec<Ident> = e.values.iter().map(|v| format_ident!("{}", v.rust_name)).collect();
        let values: Vec<&str> = e.values.iter().map(|v| v.value.as_str()).collect();
        let lowered: Vec<String> = e.values.iter().map(|v| v.value.to_ascii_lowercase()).collect();
        let variant_docs: Vec<TokenStream> = e
            .values
            .iter()
            .map(|v| docs(v.description.as_deref().or(Some(&format!("`{}`", v.value))), &[]))
            .collect();
        let type_name = def.rust_name.as_str();
        if e.open {
            quote! {
                #doc
                #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
                #[serde(from = "String", into = "String")]
                pub enum #name {
                    #( #variant_docs #variants, )*
                    /// A value this API version does not know, kept as received.
                    Other(String),
                }
                impl #name {
                    /// The value on the wire.
                    pub fn as_str(&self) -> &str {
                        match self {
                            #( Self::#variants => #values, )*
                            Self::Other(value) => value,
                        }
                    }
                }
                impl From<String> for #name {
                    fn from(value: String) -> Self {
                        match value.to_ascii_lowercase().as_str() {
                            #( #lowered => Self::#variants, )*
                            _ => Self::Other(value),
                        }
                    }
                }
                impl From<#name> for String {
                    fn from(value: #name) -> Self {
                        match value {
                            #name::Other(value) => value,
                            known => known.as_str().to_string(),
                        }
                    }
                }
                impl armgen_runtime::UnknownFields for #name {
                    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
                        if let Self::Other(value) = self {
                            out.push(format!("{path}={value}"));
                        }
                    }
                }
            }
        } else {
            quote! {
                #doc
                #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
                #[serde(try_from = "String", into = "String")]
                pub enum #name {
                    #( #variant_docs #variants, )*
                }
                impl #name {
                    /// The value on the wire.
                    pub fn as_str(&self) -> &'static str {
                        match self {
                            #( Self::#variants => #values, )*
                        }
                    }
                }
                impl TryFrom<String> for #name {
                    type Error = armgen_runtime::UnknownEnumValue;
                    fn try_from(value: String) -> Result<Self, Self::Error> {
                        match value.to_ascii_lowercase().as_str() {
                            #( #lowered => Ok(Self::#variants), )*
                            _ => Err(armgen_runtime::UnknownEnumValue { type_name: #type_name, value }),
                        }
                    }
                }
                impl From<#name> for String {
                    fn from(value: #name) -> Self {
                        value.as_str().to_string()
                    }
                }
                impl armgen_runtime::UnknownFields for #name {
                    fn unknown_fields(&self, _path: &str, _out: &mut Vec<String>) {}
                }
            }
        }
    }

    fn union(&self, def: &TypeDef, u: &UnionType) -> Result<TokenStream> {
        let name = format_ident!("{}", def.rust_name);
        let doc = docs(
            def.description.as_deref(),
            &[format!(
                "Schema `{}`: a discriminated union tagged by `{}`.",
                def.name, u.property
            )],
        );
        let tag = &u.property;
        let mut used = BTreeMap::new();
        let mut variants = Vec::new();
        let mut visits = Vec::new();
        for (value, id) in &u.variants {
            let mut base = variant_ident(value);
            if base == "Self" {
                base = "SelfValue".into();
            }
            let n: &mut usize = used.entry(base.clone()).or_insert(0);
            *n += 1;
            let vname = if *n > 1 {
                format_ident!("{}{}", base, *n)
            } else {
                format_ident!("{}", base)
            };
            let ty = self.type_name(id)?;
            let vdoc = docs(Some(&format!("`{tag}: {value}`")), &[]);
            variants.push(quote! {
                #vdoc
                #[serde(rename = #value)]
                #vname(#ty),
            });
            visits.push(quote!(Self::#vname(v) => v.unknown_fields(path, out),));
        }
        Ok(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
            #[serde(tag = #tag)]
            pub enum #name {
                #(#variants)*
            }
            impl armgen_runtime::UnknownFields for #name {
                fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
                    match self {
                        #(#visits)*
                    }
                }
            }
        })
    }
}

pub(crate) fn primitive(p: Primitive) -> TokenStream {
    match p {
        Primitive::String => quote!(String),
        Primitive::Bool => quote!(bool),
        Primitive::Int32 => quote!(i32),
        Primitive::Int64 => quote!(i64),
        Primitive::Float => quote!(f32),
        Primitive::Double => quote!(f64),
    }
}

/// Objects whose every field has a default: optional fields, collections, primitives, and other such
/// objects. Enums and unions have none.
fn defaultable_types(ir: &Ir) -> BTreeSet<TypeId> {
    let mut set: BTreeSet<TypeId> = ir
        .types
        .iter()
        .filter(|(_, d)| matches!(d.kind, TypeKind::Object(_)))
        .map(|(id, _)| id.clone())
        .collect();
    loop {
        let mut changed = false;
        for (id, def) in &ir.types {
            let TypeKind::Object(o) = &def.kind else { continue };
            if !set.contains(id) {
                continue;
            }
            let ok = o.properties.iter().all(|p| {
                let optional = !p.required || p.read_only || p.nullable;
                optional
                    || match &p.ty {
                        TypeRef::Named(n) => set.contains(n),
                        _ => true,
                    }
            });
            if !ok {
                set.remove(id);
                changed = true;
            }
        }
        if !changed {
            return set;
        }
    }
}
