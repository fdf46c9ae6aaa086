//! Emits Rust for the ARM payload types of one API version: `quote` → `syn::File` → `prettyplease`.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote};

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
    let mut file = file;
    let readers = super::from_json::prepare(&mut file.items, what)?;
    mark_enum_macros(&mut file.items);
    let text = reflow(&wrap_enum_macros(&prettyplease::unparse(&file)));
    Ok(space_items(&super::from_json::expand(&text, &readers)))
}

/// The widest line [`reflow`] writes: the workspace's `rustfmt.toml` `max_width`.
const REFLOW_WIDTH: usize = 120;

/// Joins an expression that prettyplease broke over several lines back into one, when it fits in
/// [`REFLOW_WIDTH`] columns: prettyplease breaks at about 90, so that a field initializer such as
/// `name: cx.copy(&self.name, &path.field("name")),` takes up to five lines. One line per property is what a
/// reviewer reads best, and what the generated files are meant to show.
///
/// A run is a line that does not end an item, statement or element (`{`, `}`, `;`, `,`) and the lines after it
/// indented deeper, plus a closing `)`/`]`/`>` line at its own indentation. Runs holding blocks (a line ending in `{`,
/// `}` or `;`), comments, or a parenthesis that opens no call (a tuple, whose trailing comma matters) are left
/// alone; an attribute broken over lines (`#[serde(` …) is joined like a call. Joining puts no space after an opening and before a closing bracket or a method call, and drops the
/// trailing comma prettyplease gives the last argument of a broken call: the tokens are the same, so is the meaning.
fn reflow(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i];
        let ind = indent(first);
        let head = first.trim();
        let opens_run = !head.is_empty()
            && !head.ends_with(['{', '}', ';', ','])
            && (!head.starts_with('#') || head.starts_with("#["))
            && !head.contains("//");
        let mut end = i + 1;
        // An impl header broken before its `for`.
        if head.starts_with("impl")
            && let Some(next) = lines.get(i + 1)
            && indent(next) == ind
            && next.trim_start().starts_with("for ")
            && next.ends_with('{')
        {
            let joined = format!("{} {}", first.trim_end(), next.trim_start());
            if joined.len() <= REFLOW_WIDTH {
                out.push_str(&joined);
                out.push('\n');
                i += 2;
                continue;
            }
        }
        if opens_run {
            while end < lines.len() && !lines[end].trim().is_empty() && indent(lines[end]) > ind {
                end += 1;
            }
            if end > i + 1
                && end < lines.len()
                && indent(lines[end]) == ind
                && lines[end].trim_start().starts_with([')', ']', '>'])
            {
                end += 1;
            }
        }
        if end > i + 1
            && let Some(joined) = join_run(&lines[i..end])
            && joined.len() <= REFLOW_WIDTH
        {
            out.push_str(&joined);
            out.push('\n');
            i = end;
            continue;
        }
        out.push_str(first);
        out.push('\n');
        i += 1;
    }
    out
}

/// The lines of a run (see [`reflow`]) as one line, or `None` when the run may not be joined.
fn join_run(run: &[&str]) -> Option<String> {
    let mut joined = run[0].trim_end().to_string();
    for (k, line) in run.iter().enumerate().skip(1) {
        let piece = line.trim();
        // The closing line may end the statement (`);`) or open the body of a signature (`) -> T {`).
        let closes = k == run.len() - 1 && piece.starts_with([')', '>']) && piece.ends_with(['{', ';']);
        let blocky = (piece.ends_with(['{', '}', ';']) && !closes)
            || piece.starts_with('}')
            || piece.starts_with('#')
            || piece.contains("//");
        if blocky {
            return None;
        }
        // (`<` after a name opens generic arguments; after a space it would be an operator.)
        if joined.ends_with(['(', '[']) || (joined.ends_with('<') && !joined.ends_with(" <")) {
            joined.push_str(piece);
        } else if piece.starts_with([')', ']', '>']) {
            if joined.ends_with(',') {
                joined.pop();
            }
            joined.push_str(piece);
        } else if piece.starts_with(['.', '?']) {
            joined.push_str(piece);
        } else {
            joined.push(' ');
            joined.push_str(piece);
        }
    }
    // Every parenthesis a line of the run opens must open a call's (or an attribute's) arguments (`f(`,
    // `f::<T>(`, `m!(`, `serde(`), not a tuple, whose last comma the joining may have dropped. (Brackets open
    // arrays, where it does not matter.)
    let calls_only = run[..run.len() - 1].iter().all(|line| {
        let t = line.trim_end();
        match t.strip_suffix('(') {
            Some(before) => before.ends_with(|c: char| c.is_alphanumeric() || matches!(c, '_' | '>' | '!' | ')')),
            None => true,
        }
    });
    calls_only.then_some(joined)
}

/// The enum macros of `armgen_runtime` whose invocations are laid out as the enum item they hold.
const ENUM_MACROS: [&str; 2] = ["open_enum", "closed_enum"];

/// The attribute standing for an enum macro's invocation while prettyplease lays out its item.
const ENUM_MACRO_MARK: &str = "armgen_enum_macro";

/// prettyplease lays out a macro's tokens as one run of text; an `open_enum!`/`closed_enum!` invocation holds an
/// enum item, so it is turned into that item with a marker attribute naming the macro, laid out as an item, and
/// turned back by [`wrap_enum_macros`]. Invocations whose tokens are no enum item are left alone.
fn mark_enum_macros(items: &mut [syn::Item]) {
    for item in items {
        match item {
            syn::Item::Mod(m) => {
                if let Some((_, items)) = &mut m.content {
                    mark_enum_macros(items);
                }
            }
            syn::Item::Macro(m) if m.attrs.is_empty() => {
                let Some(mut e) = enum_macro_item(m) else { continue };
                let path = m.mac.path.to_token_stream().to_string().replace(' ', "");
                let mark = format_ident!("{}", ENUM_MACRO_MARK);
                e.attrs.insert(0, syn::parse_quote!(#[#mark = #path]));
                *item = syn::Item::Enum(e);
            }
            _ => {}
        }
    }
}

/// The enum item an `open_enum!`/`closed_enum!` invocation holds; `None` for other macros.
pub(crate) fn enum_macro_item(m: &syn::ItemMacro) -> Option<syn::ItemEnum> {
    let is_enum_macro = m.ident.is_none()
        && m.mac
            .path
            .segments
            .last()
            .is_some_and(|s| ENUM_MACROS.iter().any(|n| s.ident == n));
    if !is_enum_macro {
        return None;
    }
    syn::parse2::<syn::ItemEnum>(m.mac.tokens.clone()).ok()
}

/// Turns the marked enum items of [`mark_enum_macros`] back into macro invocations, the item indented within.
fn wrap_enum_macros(text: &str) -> String {
    let prefix = format!("#[{ENUM_MACRO_MARK} = \"");
    let mut out = String::with_capacity(text.len() + text.len() / 10);
    let mut open: Option<String> = None;
    for line in text.lines() {
        let indent = &line[..line.len() - line.trim_start().len()];
        if open.is_none() {
            let rest = line.trim_start();
            if let Some(path) = rest.strip_prefix(&prefix).and_then(|r| r.strip_suffix("\"]")) {
                out.push_str(&format!("{indent}{path}! {{\n"));
                open = Some(format!("{indent}}}"));
                continue;
            }
            out.push_str(line);
        } else {
            if !line.is_empty() {
                out.push_str("    ");
            }
            out.push_str(line);
            if open.as_deref() == Some(line) {
                out.push('\n');
                out.push_str(line);
                open = None;
            }
        }
        out.push('\n');
    }
    out
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
        let ends_item = *line == "}"
            || *line == "};"
            || (line.starts_with("armgen_runtime::json_") && line.ends_with(" }"))
            || (line.starts_with("armgen_runtime::") && line.ends_with(");"));
        // A run of `use` lines, then one of `pub use` lines (re-exports), each ended by an empty line; a module's
        // `mod x; pub use x::*;` pairs stay together.
        let uses = |l: &str| (l.starts_with("use ") || l.starts_with("pub use ")).then(|| l.starts_with("pub"));
        let ends_uses = uses(line).is_some()
            && uses(line) != uses(next)
            && !next.starts_with("#[allow")
            && !next.starts_with("mod ");
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
        let body = quote!(#(#items)*);
        let uses = super::uses::Uses::of(&body);
        // (No `armgen_runtime::UnknownFields`: its method is called only inside its impls, where a trait is in
        // scope.)
        let serde = uses.names(quote!(serde), &["Deserialize", "Serialize"]);
        let map = uses.names(quote!(std::collections), &["BTreeMap"]);
        Ok(quote! {
            #[allow(unused_imports)]
            use super::*;
            #serde
            #map
            #body
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
                /// Properties this API version does not define (newer ones), kept as received: a round trip loses none.
                #[serde(flatten)]
                pub #unknown: BTreeMap<String, serde_json::Value>,
            },
        };
        let default = if self.defaultable.contains(id) {
            quote!(Default,)
        } else {
            quote!()
        };
        // `armgen_runtime::UnknownFields` comes with the `json_object!` the derives become (the flattened map makes
        // it the form with `..unknown_fields`).
        Ok(quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, #default Serialize, Deserialize)]
            pub struct #name {
                #(#fields)*
                #extra
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

    /// An enum as an `armgen_runtime::open_enum!` / `closed_enum!` invocation: its values, docs and derives here,
    /// the wire mechanics in the runtime.
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
        let variant_docs: Vec<TokenStream> = e
            .values
            .iter()
            .map(|v| docs(v.description.as_deref().or(Some(&format!("`{}`", v.value))), &[]))
            .collect();
        let (mac, copy) = if e.open {
            (quote!(open_enum), quote!())
        } else {
            (quote!(closed_enum), quote!(Copy,))
        };
        quote! {
            armgen_runtime::#mac! {
                #doc
                #[derive(Debug, Clone, #copy PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
                pub enum #name {
                    #( #variant_docs #variants = #values, )*
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The tokens of a file, with the trailing commas before closing delimiters and generic arguments' `>` left out
    /// (the only tokens [`reflow`] may drop).
    fn tokens(text: &str) -> Vec<String> {
        fn walk(ts: TokenStream, out: &mut Vec<String>) {
            let trees: Vec<proc_macro2::TokenTree> = ts.into_iter().collect();
            for (i, tree) in trees.iter().enumerate() {
                match tree {
                    proc_macro2::TokenTree::Group(g) => {
                        out.push(format!("{:?}", g.delimiter()));
                        walk(g.stream(), out);
                        out.push("end".into());
                    }
                    proc_macro2::TokenTree::Punct(p)
                        if p.as_char() == ','
                            && trees.get(i + 1).is_none_or(
                                |next| matches!(next, proc_macro2::TokenTree::Punct(q) if q.as_char() == '>'),
                            ) => {}
                    other => out.push(other.to_string()),
                }
            }
        }
        let file: syn::File = syn::parse_str(text).expect("parses");
        let mut out = Vec::new();
        walk(file.into_token_stream(), &mut out);
        out
    }

    fn formatted(tokens: TokenStream) -> (String, String) {
        let file: syn::File = syn::parse2(tokens).expect("parses");
        let plain = prettyplease::unparse(&file);
        let text = format_file(file.into_token_stream(), "test").expect("formats");
        (plain, text)
    }

    #[test]
    fn broken_field_initializers_and_signatures_become_one_line() {
        let (plain, text) = formatted(quote! {
            impl armgen_runtime::hub::Convert<hub::status::AgentPoolSecurityProfile> for spoke::status::AgentPoolSecurityProfile {
                fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> hub::status::AgentPoolSecurityProfile {
                    cx.keep(&self.some_rather_long_field_name, &path.field("someRatherLongFieldNameInJson"));
                    hub::status::AgentPoolSecurityProfile {
                        transparent_huge_page_enabled: cx.copy(&self.transparent_huge_page_enabled, &path.field("thp")),
                        enable_vtpm: cx.copy(&self.enable_vtpm, &path.field("enableVTPM")),
                    }
                }
            }
        });
        assert!(plain.lines().count() > text.lines().count() + 4, "{plain}\n---\n{text}");
        assert!(text.contains(
            "        transparent_huge_page_enabled: cx.copy(&self.transparent_huge_page_enabled, &path.field(\"thp\")),\n"
        ));
        assert!(text.contains(
            "        cx.keep(&self.some_rather_long_field_name, &path.field(\"someRatherLongFieldNameInJson\"));\n"
        ));
        assert!(text.lines().all(|l| l.len() <= REFLOW_WIDTH), "{text}");
        assert_eq!(tokens(&plain), tokens(&text));
    }

    #[test]
    fn turbofish_attributes_and_derives_are_joined() {
        let (plain, text) = formatted(quote! {
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
            pub struct S {
                #[serde(rename = "secretExpressions", default, skip_serializing_if = "Option::is_none")]
                pub secret_expressions: Option<Vec<armgen_runtime::kube::ExportExpression>>,
            }
            fn f() {
                let spec = Convert::<hub::MaintenanceConfigurationSpec>::convert(&self.spec, &mut cx, &Path::Root("spec"));
            }
        });
        assert!(text.contains("let spec = Convert::<hub::MaintenanceConfigurationSpec>::convert(&self.spec, &mut cx, &Path::Root(\"spec\"));"), "{text}");
        assert!(
            text.contains(
                "#[serde(rename = \"secretExpressions\", default, skip_serializing_if = \"Option::is_none\")]"
            ),
            "{text}"
        );
        assert!(
            text.contains("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]"),
            "{text}"
        );
        assert_eq!(tokens(&plain), tokens(&text));
    }

    #[test]
    fn tuples_blocks_and_long_lines_stay_broken() {
        let (plain, text) = formatted(quote! {
            fn f() {
                let pair = (some_function_with_a_long_name(first_argument_value), another_function(second_argument_value, third));
                let one = (a_single_element_tuple_with_a_rather_long_expression_inside_of_it_to_force_a_break_here_now,);
                let v = items.iter().map(|x| { let y = x.compute_something_long(); y.and_then_something_else_entirely() }).collect();
                let very_long = cx.copy(&self.an_extremely_long_field_name_that_goes_on_and_on, &path.field("anExtremelyLongFieldNameThatGoesOnAndOnForever"));
            }
        });
        assert_eq!(tokens(&plain), tokens(&text));
        // The one-element tuple keeps its comma.
        assert!(text.contains("_now,"), "{text}");
        assert!(
            text.lines().all(|l| l.len() <= REFLOW_WIDTH || plain.contains(l)),
            "{text}"
        );
    }

    #[test]
    fn enum_macros_are_laid_out_as_their_item() {
        let text = format_file(
            quote! {
                armgen_runtime::open_enum! {
                    #[doc = " The size."]
                    #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
                    pub enum Size { #[doc = " Small."] Small = "Small", Large = "large", }
                }
            },
            "test",
        )
        .expect("formats");
        assert_eq!(
            text,
            "armgen_runtime::open_enum! {\n    /// The size.\n    #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]\n    pub enum Size {\n        /// Small.\n        Small = \"Small\",\n        Large = \"large\",\n    }\n}\n"
        );
    }
}
