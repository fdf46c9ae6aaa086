//! The `use` items a generated file needs, from the tokens of its items: a file imports only what it uses, so no
//! `#[allow(unused_imports)]` is needed (the glob `use super::*`, whose use cannot be told from names, aside).
//!
//! Names are read from the token trees, not from text, so a word in a doc comment or a string literal does not
//! count: a name counts when it appears unqualified (not after `::`), a module when a path starts with it
//! (`arm::Foo`), and a trait when one of its methods is called (`.to_arm(`).

use std::collections::BTreeSet;

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote};

/// What the items of a file use.
#[derive(Debug, Default)]
pub struct Uses {
    /// Identifiers not preceded by `::`.
    names: BTreeSet<String>,
    /// Identifiers followed by `::` and not preceded by it (the first segment of a path).
    heads: BTreeSet<String>,
    /// Identifiers called as methods (`.name(`), with the trait of the impl the call is in (`impl T for …`),
    /// where `T`'s own methods need no import.
    methods: BTreeSet<(String, Option<String>)>,
}

impl Uses {
    pub fn of(tokens: &TokenStream) -> Self {
        let mut uses = Uses::default();
        uses.walk(tokens.clone(), None);
        uses
    }

    /// The trait of an `impl Trait for Type {` header starting at `trees[at]` (`impl`), and the index of its
    /// body: the last name before `for` outside generic arguments.
    fn impl_header(trees: &[TokenTree], at: usize) -> Option<(Option<String>, usize)> {
        let mut depth = 0usize;
        let mut last = None;
        let mut trait_name = None;
        for (i, tree) in trees.iter().enumerate().skip(at + 1) {
            match tree {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => return Some((trait_name, i)),
                TokenTree::Punct(p) if p.as_char() == '<' => depth += 1,
                TokenTree::Punct(p) if p.as_char() == '>' => depth = depth.saturating_sub(1),
                TokenTree::Ident(id) if depth == 0 && id == "for" => trait_name = last.take(),
                TokenTree::Ident(id) if depth == 0 => last = Some(id.to_string()),
                _ => {}
            }
        }
        None
    }

    fn walk(&mut self, tokens: TokenStream, in_impl_of: Option<&str>) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut impl_body: Option<(Option<String>, usize)> = None;
        let colons = |i: usize| -> bool {
            matches!((trees.get(i), trees.get(i + 1)), (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                if a.as_char() == ':' && b.as_char() == ':')
        };
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(g) => match &impl_body {
                    Some((trait_name, body)) if *body == i => {
                        let trait_name = trait_name.clone();
                        impl_body = None;
                        self.walk(g.stream(), trait_name.as_deref());
                    }
                    _ => self.walk(g.stream(), in_impl_of),
                },
                TokenTree::Ident(id) => {
                    let name = id.to_string();
                    if name == "impl" && impl_body.is_none() {
                        impl_body = Self::impl_header(&trees, i);
                    }
                    let qualified = i >= 2 && colons(i - 2);
                    if qualified {
                        continue;
                    }
                    let after_dot = i >= 1 && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '.');
                    let called = matches!(trees.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
                    if after_dot && called {
                        self.methods.insert((name.clone(), in_impl_of.map(str::to_string)));
                    }
                    if colons(i + 1) {
                        self.heads.insert(name.clone());
                    }
                    self.names.insert(name);
                }
                _ => {}
            }
        }
    }

    /// `use <prefix>::{names…};` for the `names` used unqualified (nothing when none is).
    pub fn names(&self, prefix: TokenStream, names: &[&str]) -> TokenStream {
        self.names_and_traits(prefix, names, &[])
    }

    /// [`Uses::names`], and the `traits` (name, methods) whose name or methods are used (see
    /// [`Uses::needs_trait`]), in one `use`.
    pub fn names_and_traits(&self, prefix: TokenStream, names: &[&str], traits: &[(&str, &[&str])]) -> TokenStream {
        let mut used: Vec<&str> = names.iter().copied().filter(|n| self.names.contains(*n)).collect();
        used.extend(traits.iter().filter(|(t, m)| self.needs_trait(t, m)).map(|(t, _)| *t));
        used.sort_unstable();
        used.dedup();
        group(prefix, used.into_iter().map(|n| format_ident!("{}", n)).collect())
    }

    /// `use <prefix>::{modules…};` for the `modules` a path starts with.
    pub fn modules(&self, prefix: TokenStream, modules: &[&str]) -> TokenStream {
        let used: Vec<_> = modules
            .iter()
            .filter(|m| self.heads.contains(**m))
            .map(|m| format_ident!("{}", m))
            .collect();
        group(prefix, used)
    }

    /// Whether a trait must be in scope: its name is used unqualified, or one of its `methods` is called outside
    /// the trait's own impls (inside them the trait is in scope).
    pub fn needs_trait(&self, name: &str, methods: &[&str]) -> bool {
        self.names.contains(name)
            || self
                .methods
                .iter()
                .any(|(m, inside)| methods.contains(&m.as_str()) && inside.as_deref() != Some(name))
    }
}

fn group(prefix: TokenStream, used: Vec<proc_macro2::Ident>) -> TokenStream {
    match used.as_slice() {
        [] => quote!(),
        [one] => quote!(use #prefix::#one;),
        _ => quote!(use #prefix::{#(#used),*};),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_docs_strings_and_qualified_paths_do_not_count() {
        let uses = Uses::of(&quote! {
            #[doc = " required BTreeMap"]
            #[derive(Serialize)]
            struct S { a: Option<BTreeMap<String, arm::X>>, b: armgen_runtime::kube::Path<'static> }
            fn f(x: &S) { let _ = "missing"; x.a.to_arm(); required(None, &p); }
        });
        assert_eq!(
            uses.names(quote!(armgen_runtime::kube), &["required", "missing", "Path"])
                .to_string(),
            quote!(
                use armgen_runtime::kube::required;
            )
            .to_string()
        );
        assert_eq!(
            uses.names(quote!(serde), &["Deserialize", "Serialize"]).to_string(),
            quote!(
                use serde::Serialize;
            )
            .to_string()
        );
        assert_eq!(
            uses.modules(quote!(super), &["arm", "spec", "status"]).to_string(),
            quote!(
                use super::arm;
            )
            .to_string()
        );
        assert!(uses.needs_trait("ToArm", &["to_arm"]));
        // Inside the trait's own impl its methods need no import.
        let inside = Uses::of(&quote! {
            impl armgen_runtime::kube::ToArm for Vec<S> { fn to_arm(&self) { self.inner.to_arm(); } }
            impl<T: Clone> From<Vec<T>> for S { fn from(v: Vec<T>) -> Self { v.first().to_arm() } }
        });
        assert!(inside.needs_trait("ToArm", &["to_arm"]));
        let only_inside = Uses::of(&quote! {
            impl armgen_runtime::kube::ToArm for Vec<S> { fn to_arm(&self) { self.inner.to_arm(); } }
        });
        assert!(!only_inside.needs_trait("ToArm", &["to_arm"]));
        assert!(!uses.needs_trait("UnknownFields", &["unknown_fields"]));
        assert!(uses.names(quote!(std::collections), &["HashMap"]).is_empty());
    }
}
