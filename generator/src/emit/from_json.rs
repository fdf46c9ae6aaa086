//! The last step of every emitted Rust file: each generated type's `#[derive(Serialize, Deserialize)]` and
//! `#[serde]` attributes become an `armgen_runtime::json_object!` invocation (a tagged union's,
//! `armgen_runtime::json_union!`), which reads and writes the type as a `serde_json::Value` in one non-generic
//! function each and gives it small serde shims.
//!
//! Why: a derived serde impl is compiled again for every (de)serializer the type is used with, and instantiates
//! serde's generic machinery per field type; the derived `Deserialize` alone was three quarters of the generated
//! crate's LLVM IR and most of its build time (BENCHMARKS.md, "Building the generated crate"). The emitters keep
//! writing serde's derives and attributes, which say what the wire looks like; this step reads them (serde's rules
//! for `rename`, `rename_all = "camelCase"`, `default`, `flatten`, `skip_serializing_if = "Option::is_none"`, the
//! nullable `deserialize_with`, `tag`) and refuses any other `#[serde]` attribute with an error naming the type, so a
//! new attribute cannot be dropped silently. The invocation lists the fields in declaration order with their JSON
//! names, so a reviewer still reads the wire name beside each field.
//!
//! The invocations are laid out here, one line per property, after prettyplease (which prints a macro's tokens on
//! as few lines as it can); rustfmt leaves brace-delimited macro bodies as they are.

use proc_macro2::Span;
use quote::{ToTokens, format_ident};
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::{Ident, Item, LitStr, Token};

use crate::error::{Error, Result};

/// The runtime's macros, by the last segment of their path.
const OBJECT_MACRO: &str = "json_object";
const UNION_MACRO: &str = "json_union";
/// The placeholder prettyplease prints for an invocation, replaced by [`expand`].
const PLACEHOLDER: &str = "__armgen_json_";

/// How a field is read when its key is absent or `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Presence {
    /// The type's default when absent (an `Option`, a field or container `#[serde(default)]`).
    Defaulted,
    /// `missing field` when absent.
    Required,
    /// `Option<Nullable<T>>`: `null` is a value.
    Nullable,
}

/// What a `json_object!`/`json_union!` invocation says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Reader {
    Object {
        name: Ident,
        /// Whether the macro writes it too (`ToJson`, `Serialize`); not for a kind, which has its own `Serialize`.
        write: bool,
        /// Whether the type implements `Default`, which the reader then starts from (`no_default` when not).
        default: bool,
        /// In declaration order: JSON name, field, presence.
        fields: Vec<(String, Ident, Presence)>,
        /// The flattened map, the last field.
        rest: Option<Ident>,
    },
    Union {
        name: Ident,
        tag: String,
        variants: Vec<(String, Ident)>,
    },
}

/// Replaces derived `Deserialize` impls (and earlier invocations, when a file is formatted again) by placeholders,
/// in `items` and the modules inside them; returns the readers, by placeholder number. `what` names the file.
pub(crate) fn prepare(items: &mut Vec<Item>, what: &str) -> Result<Vec<Reader>> {
    let mut readers = Vec::new();
    prepare_in(items, what, &mut readers)?;
    if !readers.is_empty() {
        drop_unused_serde_imports(items);
    }
    Ok(readers)
}

fn prepare_in(items: &mut Vec<Item>, what: &str, readers: &mut Vec<Reader>) -> Result<()> {
    let mut out = Vec::with_capacity(items.len());
    for mut item in std::mem::take(items) {
        let reader = match &mut item {
            Item::Mod(m) => {
                if let Some((_, inner)) = &mut m.content {
                    prepare_in(inner, what, readers)?;
                }
                None
            }
            Item::Struct(s) => match take_derives(&mut s.attrs) {
                Some(write) => {
                    let default = derives(&s.attrs, "Default");
                    let reader = object_reader(s, (write, default), what)?;
                    strip_serde(&mut s.attrs);
                    for field in s.fields.iter_mut() {
                        strip_serde(&mut field.attrs);
                    }
                    Some(reader)
                }
                None => None,
            },
            Item::Enum(e) => match take_derives(&mut e.attrs) {
                Some(true) => {
                    let reader = union_reader(e, what)?;
                    strip_serde(&mut e.attrs);
                    for variant in e.variants.iter_mut() {
                        strip_serde(&mut variant.attrs);
                    }
                    Some(reader)
                }
                Some(false) => {
                    return Err(Error::Emit {
                        what: format!("{what}: enum {}", e.ident),
                        message: "a union derives Serialize and Deserialize together".into(),
                    });
                }
                None => None,
            },
            Item::Macro(m) if m.attrs.is_empty() && is_reader_macro(m).is_some() => {
                let reader = parse_invocation(m, what)?;
                readers.push(reader);
                out.push(placeholder(readers.len() - 1));
                continue;
            }
            _ => None,
        };
        out.push(item);
        if let Some(reader) = reader {
            readers.push(reader);
            out.push(placeholder(readers.len() - 1));
        }
    }
    *items = out;
    Ok(())
}

fn placeholder(n: usize) -> Item {
    let id = format_ident!("{PLACEHOLDER}{n}");
    syn::parse_quote!(armgen_runtime::json_object!(#id);)
}

/// Takes serde's `Deserialize` and `Serialize` out of the item's `#[derive]` when it derives `Deserialize`:
/// `None` when it does not, else whether it derived `Serialize` too. An enum macro's item (`open_enum!`) is not an
/// `Item::Enum` and keeps its derives (serde's `from = "String"`, no visitor per field).
fn take_derives(attrs: &mut Vec<syn::Attribute>) -> Option<bool> {
    if !derives(attrs, "Deserialize") {
        return None;
    }
    let write = derives(attrs, "Serialize");
    for attr in attrs.iter_mut() {
        if !attr.path().is_ident("derive") {
            continue;
        }
        let Ok(paths) = attr.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated) else {
            continue;
        };
        let serde = |p: &&syn::Path| {
            p.segments
                .last()
                .is_some_and(|s| s.ident == "Deserialize" || s.ident == "Serialize")
        };
        let kept: Vec<&syn::Path> = paths.iter().filter(|p| !serde(p)).collect();
        if kept.len() != paths.len() {
            *attr = syn::parse_quote!(#[derive(#(#kept),*)]);
        }
    }
    attrs.retain(|a| {
        !(a.path().is_ident("derive") && a.parse_args::<proc_macro2::TokenStream>().is_ok_and(|t| t.is_empty()))
    });
    Some(write)
}

fn derives(attrs: &[syn::Attribute], name: &str) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        a.parse_args_with(Punctuated::<syn::Path, Token![,]>::parse_terminated)
            .is_ok_and(|paths| paths.iter().any(|p| p.segments.last().is_some_and(|s| s.ident == name)))
    })
}

fn strip_serde(attrs: &mut Vec<syn::Attribute>) {
    attrs.retain(|a| !a.path().is_ident("serde"));
}

/// The `key = "value"` and bare-word arguments of an item's or field's `#[serde(…)]` attributes.
fn serde_args(attrs: &[syn::Attribute], place: &str) -> Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        attr.parse_nested_meta(|meta| {
            let key = meta.path.to_token_stream().to_string();
            let value = if meta.input.peek(Token![=]) {
                Some(meta.value()?.parse::<LitStr>()?.value())
            } else {
                None
            };
            out.push((key, value));
            Ok(())
        })
        .map_err(|e| Error::Emit {
            what: place.to_string(),
            message: format!("a #[serde] attribute the JSON reader does not understand: {e}"),
        })?;
    }
    Ok(out)
}

fn unsupported(place: &str, key: &str) -> Error {
    Error::Emit {
        what: place.to_string(),
        message: format!(
            "#[serde({key})] is not one the generated JSON reader implements (emit/from_json.rs); \
             add it there or leave it out"
        ),
    }
}

/// The reader of struct `s`; `write`: it derived `Serialize` too, `default`: it derives `Default`.
fn object_reader(s: &syn::ItemStruct, (write, default): (bool, bool), what: &str) -> Result<Reader> {
    let place = format!("{what}: struct {}", s.ident);
    let mut container_default = false;
    let mut camel = false;
    for (key, value) in serde_args(&s.attrs, &place)? {
        match (key.as_str(), value.as_deref()) {
            ("default", None) => container_default = true,
            ("rename_all", Some("camelCase")) => camel = true,
            _ => return Err(unsupported(&place, &key)),
        }
    }
    let syn::Fields::Named(named) = &s.fields else {
        return Err(Error::Emit {
            what: place,
            message: "only structs with named fields are generated".into(),
        });
    };
    let (mut fields, mut rest) = (Vec::new(), None);
    for field in &named.named {
        let Some(ident) = field.ident.clone() else { continue };
        let field_place = format!("{place}, field {ident}");
        if rest.is_some() {
            return Err(Error::Emit {
                what: field_place,
                message: "a field after the #[serde(flatten)] map (it must be the last)".into(),
            });
        }
        let (mut rename, mut defaulted, mut flatten, mut nullable, mut skip) =
            (None, container_default, false, false, false);
        for (key, value) in serde_args(&field.attrs, &field_place)? {
            match (key.as_str(), value) {
                ("rename", Some(v)) => rename = Some(v),
                ("default", None) => defaulted = true,
                ("skip_serializing_if", Some(v)) if v == "Option::is_none" => skip = true,
                ("flatten", None) => flatten = true,
                ("deserialize_with", Some(v)) if v == "armgen_runtime::nullable::deserialize" => nullable = true,
                _ => return Err(unsupported(&field_place, &key)),
            }
        }
        let option = is_option(&field.ty);
        // The macro leaves out exactly the `None`s of `Option` fields.
        if write && !flatten && skip != option {
            return Err(Error::Emit {
                what: field_place,
                message: "the JSON writer leaves out the None of every Option field and nothing else: an Option                           field needs skip_serializing_if = \"Option::is_none\", and only an Option field has it"
                    .into(),
            });
        }
        let json = rename.unwrap_or_else(|| {
            let name = syn::ext::IdentExt::unraw(&ident).to_string();
            if camel { serde_camel_case(&name) } else { name }
        });
        if flatten {
            rest = Some(ident);
        } else if nullable {
            fields.push((json, ident, Presence::Nullable));
        } else if defaulted || option {
            fields.push((json, ident, Presence::Defaulted));
        } else {
            fields.push((json, ident, Presence::Required));
        }
    }
    Ok(Reader::Object {
        name: s.ident.clone(),
        write,
        default,
        fields,
        rest,
    })
}

fn union_reader(e: &syn::ItemEnum, what: &str) -> Result<Reader> {
    let place = format!("{what}: enum {}", e.ident);
    let mut tag = None;
    for (key, value) in serde_args(&e.attrs, &place)? {
        match (key.as_str(), value) {
            ("tag", Some(v)) => tag = Some(v),
            _ => return Err(unsupported(&place, &key)),
        }
    }
    let Some(tag) = tag else {
        return Err(Error::Emit {
            what: place,
            message: "a derived Deserialize on an enum is read only as a #[serde(tag)] union".into(),
        });
    };
    let mut variants = Vec::new();
    for v in &e.variants {
        let variant_place = format!("{place}, variant {}", v.ident);
        let mut value = v.ident.to_string();
        for (key, rename) in serde_args(&v.attrs, &variant_place)? {
            match (key.as_str(), rename) {
                ("rename", Some(r)) => value = r,
                _ => return Err(unsupported(&variant_place, &key)),
            }
        }
        if !matches!(&v.fields, syn::Fields::Unnamed(f) if f.unnamed.len() == 1) {
            return Err(Error::Emit {
                what: variant_place,
                message: "a union variant holds one type".into(),
            });
        }
        variants.push((value, v.ident.clone()));
    }
    Ok(Reader::Union {
        name: e.ident.clone(),
        tag,
        variants,
    })
}

fn is_option(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| s.ident == "Option"))
}

/// `name` as serde's `rename_all = "camelCase"` spells a field: each `_` dropped and the letter after it
/// upper-cased, then the first letter lower-cased (serde_derive's `RenameRule::CamelCase`). Every custom-resource
/// struct renames its fields so and defaults them (`#[serde(default)]`: all its fields are options, so this is
/// what a per-field `default` would do), and only fields spelled otherwise carry a `rename`.
pub(super) fn serde_camel_case(name: &str) -> String {
    let mut pascal = String::new();
    let mut capitalize = true;
    for ch in name.chars() {
        if ch == '_' {
            capitalize = true;
        } else if capitalize {
            pascal.push(ch.to_ascii_uppercase());
            capitalize = false;
        } else {
            pascal.push(ch);
        }
    }
    match pascal.chars().next() {
        Some(first) => first.to_ascii_lowercase().to_string() + &pascal[first.len_utf8()..],
        None => pascal,
    }
}

fn is_reader_macro(m: &syn::ItemMacro) -> Option<&'static str> {
    let last = m.mac.path.segments.last()?;
    if m.ident.is_some() {
        return None;
    }
    [OBJECT_MACRO, UNION_MACRO].into_iter().find(|n| last.ident == n)
}

fn parse_invocation(m: &syn::ItemMacro, what: &str) -> Result<Reader> {
    let union = is_reader_macro(m) == Some(UNION_MACRO);
    let parsed = if union {
        syn::parse2::<UnionArgs>(m.mac.tokens.clone()).map(|u| u.0)
    } else {
        syn::parse2::<ObjectArgs>(m.mac.tokens.clone()).map(|o| o.0)
    };
    parsed.map_err(|e| Error::Emit {
        what: what.to_string(),
        message: format!("a json_object!/json_union! invocation that does not parse: {e}"),
    })
}

/// `"json" => field, …` inside braces (a union's variants).
fn pairs(input: ParseStream) -> syn::Result<Vec<(String, Ident)>> {
    let content;
    syn::braced!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        let key: LitStr = content.parse()?;
        content.parse::<Token![=>]>()?;
        out.push((key.value(), content.call(syn::ext::IdentExt::parse_any)?));
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    Ok(out)
}

struct ObjectArgs(Reader);

impl Parse for ObjectArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (mut write, mut default) = (true, true);
        if input.peek(Ident) && input.peek2(Ident) {
            let word: Ident = input.parse()?;
            match word.to_string().as_str() {
                "read" => (write, default) = (false, false),
                "no_default" => default = false,
                _ => {
                    return Err(syn::Error::new(
                        word.span(),
                        "expected `read`, `no_default` or the type name",
                    ));
                }
            }
        }
        let name: Ident = input.parse()?;
        let content;
        syn::braced!(content in input);
        let mut fields = Vec::new();
        while !content.is_empty() {
            let key: LitStr = content.parse()?;
            content.parse::<Token![=>]>()?;
            let field = content.call(syn::ext::IdentExt::parse_any)?;
            let mut presence = Presence::Defaulted;
            if content.peek(syn::token::Paren) {
                let kind;
                syn::parenthesized!(kind in content);
                let word: Ident = kind.parse()?;
                presence = match word.to_string().as_str() {
                    "required" => Presence::Required,
                    "nullable" => Presence::Nullable,
                    _ => return Err(syn::Error::new(word.span(), "expected required or nullable")),
                };
            }
            fields.push((key.value(), field, presence));
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        let mut rest = None;
        if input.peek(Token![..]) {
            input.parse::<Token![..]>()?;
            rest = Some(input.call(syn::ext::IdentExt::parse_any)?);
        }
        Ok(ObjectArgs(Reader::Object {
            name,
            write,
            default,
            fields,
            rest,
        }))
    }
}

struct UnionArgs(Reader);

impl Parse for UnionArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name: Ident = input.parse()?;
        input.parse::<Token![,]>()?;
        let tag: LitStr = input.parse()?;
        let variants = pairs(input)?;
        Ok(UnionArgs(Reader::Union {
            name,
            tag: tag.value(),
            variants,
        }))
    }
}

/// Whether anything but a `use` still names `name` (an enum macro's derive, a hand-written impl).
fn mentions_outside_uses(items: &[Item], name: &str) -> bool {
    items.iter().any(|item| match item {
        Item::Use(_) => false,
        Item::Mod(m) => m
            .content
            .as_ref()
            .is_some_and(|(_, inner)| mentions_outside_uses(inner, name)),
        other => other.to_token_stream().into_iter().any(|t| mentions(&t, name)),
    })
}

fn mentions(tree: &proc_macro2::TokenTree, name: &str) -> bool {
    match tree {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| mentions(&t, name)),
        _ => false,
    }
}

/// Drops serde's `Deserialize` and `Serialize` from the file's top-level `use serde::…` items when nothing else
/// names them any more.
fn drop_unused_serde_imports(items: &mut Vec<Item>) {
    let keep: Vec<&str> = ["Deserialize", "Serialize"]
        .into_iter()
        .filter(|n| mentions_outside_uses(items, n))
        .collect();
    items.retain_mut(|item| {
        let Item::Use(u) = item else { return true };
        let tokens = u.tree.to_token_stream().to_string().replace(' ', "");
        let names: &[&str] = match tokens.as_str() {
            "serde::{Deserialize,Serialize}" | "serde::{Serialize,Deserialize}" => &["Deserialize", "Serialize"],
            "serde::Deserialize" => &["Deserialize"],
            "serde::Serialize" => &["Serialize"],
            _ => return true,
        };
        let kept: Vec<Ident> = names
            .iter()
            .filter(|n| keep.contains(n))
            .map(|n| Ident::new(n, Span::call_site()))
            .collect();
        match kept.as_slice() {
            [] => false,
            [one] => {
                *item = syn::parse_quote!(use serde::#one;);
                true
            }
            _ => true,
        }
    });
}

/// The text prettyplease printed, with each placeholder line replaced by its invocation, laid out.
pub(crate) fn expand(text: &str, readers: &[Reader]) -> String {
    if readers.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + readers.len() * 200);
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let n = trimmed
            .strip_prefix("armgen_runtime::json_object!(")
            .and_then(|r| r.strip_suffix(");"))
            .and_then(|r| r.strip_prefix(PLACEHOLDER))
            .and_then(|r| r.parse::<usize>().ok());
        match n.and_then(|n| readers.get(n)) {
            Some(reader) => {
                for l in render(reader, indent.len()).lines() {
                    if !l.is_empty() {
                        out.push_str(indent);
                    }
                    out.push_str(l);
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// The widest line written: the workspace's `rustfmt.toml` `max_width`.
const WIDTH: usize = 120;

fn pair_list(pairs: &[(String, Ident)]) -> Vec<String> {
    pairs
        .iter()
        .map(|(json, field)| format!("{} => {field}", LitStr::new(json, Span::call_site()).to_token_stream()))
        .collect()
}

/// `head { a, b }` on one line when it fits at `indent`, else one entry per line.
fn group(head: &str, entries: &[String], indent: usize) -> String {
    let one = if entries.is_empty() {
        format!("{head} {{}}")
    } else {
        format!("{head} {{ {} }}", entries.join(", "))
    };
    if indent + one.len() <= WIDTH {
        return one;
    }
    let mut out = format!("{head} {{\n");
    for e in entries {
        out.push_str(&format!("    {e},\n"));
    }
    out.push('}');
    out
}

fn render(reader: &Reader, indent: usize) -> String {
    let (path, head, entries, tail) = match reader {
        Reader::Object {
            name,
            write,
            default,
            fields,
            rest,
        } => {
            let entries = fields
                .iter()
                .map(|(json, field, presence)| {
                    let key = LitStr::new(json, Span::call_site()).to_token_stream();
                    match presence {
                        Presence::Defaulted => format!("{key} => {field}"),
                        Presence::Required => format!("{key} => {field} (required)"),
                        Presence::Nullable => format!("{key} => {field} (nullable)"),
                    }
                })
                .collect();
            let head = match (*write, *default) {
                (false, _) => format!("read {name}"),
                (true, false) => format!("no_default {name}"),
                (true, true) => name.to_string(),
            };
            let tail = rest.as_ref().map(|r| format!(" ..{r}")).unwrap_or_default();
            ("armgen_runtime::json_object!", head, entries, tail)
        }
        Reader::Union { name, tag, variants } => {
            let head = format!("{name}, {}", LitStr::new(tag, Span::call_site()).to_token_stream());
            ("armgen_runtime::json_union!", head, pair_list(variants), String::new())
        }
    };
    let one = format!("{path} {{ {}{tail} }}", group(&head, &entries, 0));
    if indent + one.len() <= WIDTH && !one.contains('\n') {
        return one;
    }
    let mut out = format!("{path} {{\n");
    let body = format!("{}{tail}", group(&head, &entries, indent + 4));
    for line in body.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str) -> String {
        let mut file: syn::File = syn::parse_str(source).expect("parses");
        let readers = prepare(&mut file.items, "test.rs").expect("prepares");
        expand(&prettyplease::unparse(&file), &readers)
    }

    #[test]
    fn camel_case_is_serdes() {
        for (field, json) in [
            ("count", "count"),
            ("agent_pool_profiles", "agentPoolProfiles"),
            ("enable_vtpm", "enableVtpm"),
            ("r_type", "rType"),
            ("a_b", "aB"),
        ] {
            assert_eq!(serde_camel_case(field), json);
        }
    }

    #[test]
    fn derives_become_invocations_that_format_again_the_same() {
        let source = r#"
            use serde::{Deserialize, Serialize};
            /// A pool.
            #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct Pool {
                #[serde(skip_serializing_if = "Option::is_none")]
                pub vm_size: Option<String>,
                #[serde(rename = "type")]
                pub r#type: String,
            }
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
            pub struct Arm {
                pub name: String,
                #[serde(rename = "sizeInGB", default, skip_serializing_if = "Option::is_none")]
                pub size_in_gb: Option<i32>,
                #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "armgen_runtime::nullable::deserialize")]
                pub gone: Option<armgen_runtime::Nullable<i64>>,
                #[serde(flatten)]
                pub unknown_fields: BTreeMap<String, serde_json::Value>,
            }
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
            #[serde(tag = "kind")]
            pub enum Shape {
                #[serde(rename = "pool")]
                Pool(Pool),
            }
        "#;
        let text = run(source);
        insta::assert_snapshot!(text);
        // A file formatted again (the Builder's rewrites do) keeps its invocations.
        assert_eq!(run(&text), text);
        assert!(!text.contains("Deserialize"), "the import goes with the last derive");
    }

    #[test]
    fn an_attribute_it_does_not_implement_is_an_error_naming_the_field() {
        let mut file: syn::File = syn::parse_str(
            r#"
            #[derive(Serialize, Deserialize)]
            pub struct Pool {
                #[serde(alias = "n")]
                pub name: String,
            }
        "#,
        )
        .expect("parses");
        let e = prepare(&mut file.items, "x.rs").unwrap_err().to_string();
        assert!(
            e.contains("x.rs: struct Pool, field name") && e.contains("alias"),
            "{e}"
        );
    }

    #[test]
    fn long_invocations_take_a_line_per_property() {
        let mut fields: Vec<(String, Ident, Presence)> = (0..12)
            .map(|i| {
                (
                    format!("propertyNumber{i}"),
                    format_ident!("property_number_{i}"),
                    Presence::Defaulted,
                )
            })
            .collect();
        fields.push(("name".into(), format_ident!("name"), Presence::Required));
        let reader = Reader::Object {
            name: format_ident!("Big"),
            write: true,
            default: true,
            fields,
            rest: Some(format_ident!("unknown_fields")),
        };
        let text = render(&reader, 0);
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
        assert!(
            text.contains("\n        \"propertyNumber3\" => property_number_3,\n"),
            "{text}"
        );
        assert!(
            text.contains("\n        \"name\" => name (required),\n    } ..unknown_fields\n}"),
            "{text}"
        );
    }

    #[test]
    fn an_option_the_writer_would_write_as_null_is_an_error() {
        let mut file: syn::File = syn::parse_str(
            r#"
            #[derive(Serialize, Deserialize)]
            pub struct Pool {
                pub count: Option<i32>,
            }
        "#,
        )
        .expect("parses");
        let e = prepare(&mut file.items, "x.rs").unwrap_err().to_string();
        assert!(
            e.contains("x.rs: struct Pool, field count") && e.contains("skip_serializing_if"),
            "{e}"
        );
    }
}
