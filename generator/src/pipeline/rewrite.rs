//! Rewrites of the emitted Rust for [`Builder`](crate::Builder) options: doc comments left out, extra
//! derives, and the whole crate as one file of nested modules for `include!` from a `build.rs`.
//!
//! They work on the emitted files (parsed again with `syn`), so they apply to everything the emitters
//! write, and the default output (no options) does not go through them at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::punctuated::Punctuated;
use syn::visit_mut::{self, VisitMut};
use syn::{Attribute, Item, parse_quote};

use crate::error::{Error, Result};

/// What to change in the emitted Rust.
#[derive(Debug, Clone, Default)]
pub struct RustRewrite {
    /// Leave out `///` and `//!` doc comments.
    pub strip_docs: bool,
    /// Extra derives: `(None, path)` on every struct and enum, `(Some(type), path)` on one type.
    pub derives: Vec<(Option<String>, String)>,
    /// `cfg(feature = "…")` attributes to remove (the features of the generated crate, which a crate that
    /// includes the code does not have).
    pub drop_features: BTreeSet<String>,
}

impl RustRewrite {
    pub fn is_noop(&self) -> bool {
        !self.strip_docs && self.derives.is_empty() && self.drop_features.is_empty()
    }

    fn parsed_derives(&self) -> Result<Vec<(Option<String>, syn::Path)>> {
        self.derives
            .iter()
            .map(|(ty, d)| {
                let what = match ty {
                    Some(t) => format!("armgen::Builder::derive_for({t:?}, {d:?})"),
                    None => format!("armgen::Builder::derive({d:?})"),
                };
                let path = syn::parse_str::<syn::Path>(d).map_err(|e| Error::Invalid {
                    what: what.clone(),
                    message: format!("not a Rust path: {e}"),
                })?;
                if let Some(t) = ty
                    && syn::parse_str::<syn::Ident>(t).is_err()
                {
                    return Err(Error::Invalid {
                        what,
                        message: "not a Rust type name".into(),
                    });
                }
                Ok((ty.clone(), path))
            })
            .collect()
    }
}

/// Applies `rewrite` to every `.rs` file of `files` (relative path → contents, each starting with the
/// generated-file header). Returns an error naming the option when a `derive_for` type matches nothing.
pub fn rewrite_files(files: &mut BTreeMap<PathBuf, String>, rewrite: &RustRewrite) -> Result<()> {
    if rewrite.is_noop() {
        return Ok(());
    }
    let derives = rewrite.parsed_derives()?;
    let mut seen = BTreeSet::new();
    for (path, text) in files.iter_mut() {
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let what = path.display().to_string();
        let (header, body) = split_header(text);
        let mut file = parse(body, &what)?;
        let mut v = Rewriter {
            rewrite,
            derives: &derives,
            seen: &mut seen,
            depth: None,
        };
        v.visit_file_mut(&mut file);
        *text = format!(
            "{header}{}",
            crate::emit::rust::format_file(file.into_token_stream(), &what)?
        );
    }
    check_derive_types(&derives, &seen)
}

/// The crate in `files` as one file: `src/lib.rs` with every `mod x;` replaced by the module's contents,
/// for `include!` inside any module of another crate. `crate::` paths become relative (`super::…`), the
/// crate-level inner attributes (which `include!` does not allow) are left out, and `rewrite` is applied.
/// `header` is put first.
pub fn single_file(files: &BTreeMap<PathBuf, String>, header: &str, rewrite: &RustRewrite) -> Result<String> {
    let derives = rewrite.parsed_derives()?;
    let lib = Path::new("src/lib.rs");
    let text = files.get(lib).ok_or_else(|| Error::Emit {
        what: "src/lib.rs".into(),
        message: "the generated crate has no src/lib.rs".into(),
    })?;
    let mut file = parse(split_header(text).1, "src/lib.rs")?;
    inline_modules(&mut file.items, Path::new("src"), files)?;
    file.attrs.clear();
    let mut seen = BTreeSet::new();
    let mut v = Rewriter {
        rewrite,
        derives: &derives,
        seen: &mut seen,
        depth: Some(0),
    };
    v.visit_file_mut(&mut file);
    check_derive_types(&derives, &seen)?;
    Ok(format!(
        "{header}\n{}",
        crate::emit::rust::format_file(file.into_token_stream(), "the single-file form")?
    ))
}

fn check_derive_types(derives: &[(Option<String>, syn::Path)], seen: &BTreeSet<String>) -> Result<()> {
    for (ty, d) in derives {
        if let Some(t) = ty
            && !seen.contains(t)
        {
            return Err(Error::Invalid {
                what: format!(
                    "armgen::Builder::derive_for({t:?}, {:?})",
                    d.to_token_stream().to_string()
                ),
                message: "no generated struct or enum has this name".into(),
            });
        }
    }
    Ok(())
}

/// The leading `//` comment lines (and the blank line after them), and the rest.
fn split_header(text: &str) -> (&str, &str) {
    let mut end = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if (t.starts_with("//") && !t.starts_with("///") && !t.starts_with("//!")) || t.trim().is_empty() {
            end += line.len();
        } else {
            break;
        }
    }
    text.split_at(end)
}

fn parse(text: &str, what: &str) -> Result<syn::File> {
    syn::parse_file(text).map_err(|e| Error::Emit {
        what: what.to_string(),
        message: e.to_string(),
    })
}

/// Replaces each `mod x;` in `items` (a module whose files are in `dir`) by `mod x { … }`.
fn inline_modules(items: &mut [Item], dir: &Path, files: &BTreeMap<PathBuf, String>) -> Result<()> {
    for item in items {
        let Item::Mod(m) = item else { continue };
        if m.content.is_some() {
            continue;
        }
        let name = m.ident.unraw().to_string();
        let flat = dir.join(format!("{name}.rs"));
        let nested = dir.join(&name).join("mod.rs");
        let (path, text) = match (files.get(&flat), files.get(&nested)) {
            (Some(t), _) => (flat, t),
            (None, Some(t)) => (nested, t),
            (None, None) => {
                return Err(Error::Emit {
                    what: format!("module `{name}` in {}", dir.display()),
                    message: format!("neither {} nor {} is generated", flat.display(), nested.display()),
                });
            }
        };
        let what = path.display().to_string();
        let mut file = parse(split_header(text).1, &what)?;
        inline_modules(&mut file.items, &dir.join(&name), files)?;
        // The file's inner attributes (`//!` docs) go on the `mod` item as outer ones, after its own: one style
        // per item (clippy's `mixed_attributes_style`).
        m.attrs.extend(file.attrs.into_iter().map(|mut a| {
            a.style = syn::AttrStyle::Outer;
            a
        }));
        m.content = Some((Default::default(), file.items));
        m.semi = None;
    }
    Ok(())
}

struct Rewriter<'a> {
    rewrite: &'a RustRewrite,
    derives: &'a [(Option<String>, syn::Path)],
    /// Names of the structs and enums seen.
    seen: &'a mut BTreeSet<String>,
    /// Module depth below the file root, when `crate::` paths are to be made relative.
    depth: Option<usize>,
}

impl Rewriter<'_> {
    fn attrs(&self, attrs: &mut Vec<Attribute>) {
        attrs.retain(|a| {
            if self.rewrite.strip_docs && a.path().is_ident("doc") {
                return false;
            }
            !(a.path().is_ident("cfg") && self.is_dropped_feature(a))
        });
    }

    /// `cfg(feature = "v")` for a feature in `drop_features`.
    fn is_dropped_feature(&self, a: &Attribute) -> bool {
        let Ok(syn::Meta::NameValue(nv)) = a.parse_args::<syn::Meta>() else {
            return false;
        };
        let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s), ..
        }) = &nv.value
        else {
            return false;
        };
        nv.path.is_ident("feature") && self.rewrite.drop_features.contains(&s.value())
    }

    fn add_derives(&mut self, name: &syn::Ident, attrs: &mut Vec<Attribute>) {
        let name = name.to_string();
        let extra: Vec<&syn::Path> = self
            .derives
            .iter()
            .filter(|(ty, _)| ty.as_ref().is_none_or(|t| *t == name))
            .map(|(_, p)| p)
            .collect();
        self.seen.insert(name);
        if extra.is_empty() {
            return;
        }
        let last = |p: &syn::Path| p.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let index = attrs.iter().position(|a| a.path().is_ident("derive"));
        let mut list: Punctuated<syn::Path, syn::Token![,]> = match index {
            Some(i) => attrs[i]
                .parse_args_with(Punctuated::parse_terminated)
                .unwrap_or_default(),
            None => Punctuated::new(),
        };
        for p in extra {
            if !list.iter().any(|q| last(q) == last(p)) {
                list.push(p.clone());
            }
        }
        let attr: Attribute = parse_quote!(#[derive(#list)]);
        match index {
            Some(i) => attrs[i] = attr,
            None => attrs.insert(0, attr),
        }
    }
}

impl VisitMut for Rewriter<'_> {
    fn visit_file_mut(&mut self, f: &mut syn::File) {
        self.attrs(&mut f.attrs);
        visit_mut::visit_file_mut(self, f);
    }

    fn visit_item_mut(&mut self, item: &mut Item) {
        match item {
            Item::Struct(s) => {
                self.attrs(&mut s.attrs);
                self.add_derives(&s.ident.clone(), &mut s.attrs);
            }
            Item::Enum(e) => {
                self.attrs(&mut e.attrs);
                self.add_derives(&e.ident.clone(), &mut e.attrs);
            }
            Item::Mod(m) => self.attrs(&mut m.attrs),
            Item::Const(c) => self.attrs(&mut c.attrs),
            Item::Static(s) => self.attrs(&mut s.attrs),
            Item::Fn(f) => self.attrs(&mut f.attrs),
            Item::Impl(i) => self.attrs(&mut i.attrs),
            Item::Use(u) => self.attrs(&mut u.attrs),
            Item::Type(t) => self.attrs(&mut t.attrs),
            Item::Trait(t) => self.attrs(&mut t.attrs),
            Item::Macro(m) => {
                self.attrs(&mut m.attrs);
                // A generated enum is an `open_enum!`/`closed_enum!` invocation holding the enum item: the item
                // is rewritten as any enum, and put back.
                if let Some(mut e) = crate::emit::rust::enum_macro_item(m) {
                    self.attrs(&mut e.attrs);
                    self.add_derives(&e.ident.clone(), &mut e.attrs);
                    visit_mut::visit_item_enum_mut(self, &mut e);
                    m.mac.tokens = e.into_token_stream();
                    return;
                }
            }
            _ => {}
        }
        if let (Item::Mod(_), Some(d)) = (&item, self.depth) {
            self.depth = Some(d + 1);
            visit_mut::visit_item_mut(self, item);
            self.depth = Some(d);
        } else {
            visit_mut::visit_item_mut(self, item);
        }
    }

    fn visit_impl_item_mut(&mut self, i: &mut syn::ImplItem) {
        match i {
            syn::ImplItem::Fn(f) => self.attrs(&mut f.attrs),
            syn::ImplItem::Const(c) => self.attrs(&mut c.attrs),
            syn::ImplItem::Type(t) => self.attrs(&mut t.attrs),
            _ => {}
        }
        visit_mut::visit_impl_item_mut(self, i);
    }

    fn visit_field_mut(&mut self, f: &mut syn::Field) {
        self.attrs(&mut f.attrs);
        visit_mut::visit_field_mut(self, f);
    }

    fn visit_variant_mut(&mut self, v: &mut syn::Variant) {
        self.attrs(&mut v.attrs);
        visit_mut::visit_variant_mut(self, v);
    }

    fn visit_arm_mut(&mut self, a: &mut syn::Arm) {
        self.attrs(&mut a.attrs);
        visit_mut::visit_arm_mut(self, a);
    }

    /// `if` statements carry `cfg(feature)` in the generated `custom_resource_definition`.
    fn visit_expr_if_mut(&mut self, e: &mut syn::ExprIf) {
        self.attrs(&mut e.attrs);
        visit_mut::visit_expr_if_mut(self, e);
    }

    /// Struct expressions carry `cfg(feature)` as elements of the generated `VERSIONS` table.
    fn visit_expr_struct_mut(&mut self, e: &mut syn::ExprStruct) {
        self.attrs(&mut e.attrs);
        visit_mut::visit_expr_struct_mut(self, e);
    }

    fn visit_path_mut(&mut self, p: &mut syn::Path) {
        if let Some(depth) = self.depth
            && p.leading_colon.is_none()
            && p.segments.first().is_some_and(|s| s.ident == "crate")
        {
            let rest: Vec<syn::PathSegment> = p.segments.iter().skip(1).cloned().collect();
            let mut segments: Punctuated<syn::PathSegment, syn::Token![::]> = Punctuated::new();
            if depth == 0 {
                segments.push(parse_quote!(self));
            }
            for _ in 0..depth {
                segments.push(parse_quote!(super));
            }
            segments.extend(rest);
            p.segments = segments;
        }
        visit_mut::visit_path_mut(self, p);
    }
}
