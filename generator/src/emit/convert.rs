//! Emits the conversions between a Kubernetes version (a **spoke**) and its group's **hub** (the storage
//! version): for every kind present in both, `ConvertObject` both ways, and for every pair of matching spec
//! and status types, `Convert` both ways (`armgen_runtime::hub`).
//!
//! Matching: the root spec and status of a kind pair up; below them, a field of one version pairs with the
//! field of the other version with the same JSON name (or the name `versions.<spoke>.renames` maps it to), and
//! two object-typed fields pair their types — so a type renamed between the versions still matches, by
//! where it sits. Each pair of values converts as follows:
//!
//! | source → target | conversion |
//! | --- | --- |
//! | same primitive, secret, resource reference, free-form JSON | copied |
//! | `int32` → `int64`, `int32` → `double` | widened |
//! | `float` → `double` | widened through the shortest decimal (`0.1` stays `0.1`: `armgen_runtime::hub::widen`) |
//! | `int64` → `int32` | when the value fits, else bagged |
//! | `double` → `float` | when a float has the same shortest decimal (`armgen_runtime::hub::narrow`), else bagged |
//! | enum → enum, string ↔ enum | by wire value (open target: always; closed target: when it has the value, else bagged); a string that only matches an enum value case-insensitively stays exactly as written (`Other`) or is bagged |
//! | object → object | the pair's own conversion |
//! | array, map | item by item (a value that does not fit bags the whole collection) |
//! | discriminated union, JSON ↔ typed, owner, `operatorSpec` | through JSON as far as it fits; the parts that do not are bagged |
//! | anything else (a shape change) | bagged |
//!
//! "Bagged" means kept in the property bag (the `armgen.dev/property-bag` annotation; see
//! `armgen_runtime::hub` for where and why) and restored when the object comes back; a property only one
//! version has is bagged the same way. Nothing is dropped, so `spoke → hub → spoke` and `hub → spoke → hub`
//! are identities; two spokes convert through the hub with the bag carried along (keyed by the hub's names), so
//! `A → B → A` is one too.
//!
//! Layout: `src/<group>/<spoke>/convert/<module>.rs` (the spoke type's module; kinds in their resource's
//! module), behind the hub's cargo feature; the group module gets `convert`, which dispatches a JSON custom
//! resource of any served version to any other through the hub. `CONVERSIONS.md` lists, per pair of types,
//! what is bagged, renamed or converted with a type change, for reviewers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::output::{CrateLayout, VersionOutput, finish};
use super::rust::{ident, primitive};
use crate::error::{Error, Result};
use crate::ir::{Ir, Primitive, TypeId, TypeKind, TypeRef};
use crate::shape::{Family, KubeField, KubeIr, KubeRef, KubeResource, Owner, Special};

/// One side of a conversion.
#[derive(Clone, Copy)]
struct Side<'a> {
    /// `spoke` or `hub`: the alias the generated file imports the version module as.
    alias: &'a str,
    ir: &'a Ir,
    kube: &'a KubeIr,
}

impl Side<'_> {
    fn module(&self) -> proc_macro2::Ident {
        format_ident!("{}", self.alias)
    }

    fn ty(&self, k: &KubeRef) -> Result<TokenStream> {
        let m = self.module();
        Ok(match k {
            KubeRef::Kube(id) => {
                let t = self.kube.types.get(id).ok_or_else(|| missing(id))?;
                let fam = format_ident!("{}", t.family.module());
                let name = format_ident!("{}", t.rust_name);
                quote!(#m::#fam::#name)
            }
            KubeRef::ArmEnum(id) | KubeRef::ArmUnion(id) => {
                let name = format_ident!("{}", self.ir.types.get(id).ok_or_else(|| missing(id))?.rust_name);
                quote!(#m::arm::#name)
            }
            KubeRef::Primitive(p) => primitive(*p),
            KubeRef::Array(inner) => {
                let inner = self.ty(inner)?;
                quote!(Vec<#inner>)
            }
            KubeRef::Map(inner) => {
                let inner = self.ty(inner)?;
                quote!(std::collections::BTreeMap<String, #inner>)
            }
            KubeRef::Json => quote!(serde_json::Value),
            KubeRef::Secret => quote!(armgen_runtime::kube::SecretReference),
            KubeRef::ResourceRef => quote!(armgen_runtime::kube::ResourceReference),
            KubeRef::ConfigMapRef => quote!(armgen_runtime::kube::ConfigMapReference),
            KubeRef::RefKeys(_) => quote!(Vec<armgen_runtime::kube::ResourceReference>),
        })
    }

    /// Whether an ARM enum is open (`modelAsString`).
    fn open_enum(&self, id: &TypeId) -> bool {
        matches!(self.ir.types.get(id).map(|t| &t.kind), Some(TypeKind::Enum(e)) if e.open)
    }

    /// The schema (in this version's spec) that declares field `f` of an object mirroring ARM type `base`.
    fn schema_of(&self, base: &TypeId, f: &KubeField) -> Option<String> {
        let mut current = base.clone();
        for p in f.arm_props.iter().take(f.arm_props.len().saturating_sub(1)) {
            match &p.ty {
                TypeRef::Named(id) => current = id.clone(),
                _ => return None,
            }
        }
        self.ir.types.get(&current).map(|t| t.name.clone())
    }
}

fn missing(id: &str) -> Error {
    Error::Emit {
        what: id.to_string(),
        message: "conversion refers to a type that is not generated".into(),
    }
}

/// How a source value becomes a target value.
enum Conv {
    /// Always: the expression has the target type.
    Total(TokenStream),
    /// When it fits: the expression is an `Option` of the target type.
    Partial(TokenStream),
}

/// How a pair of plain fields (neither with a special role) converts.
enum Plain {
    /// By this complete field initializer.
    Init(TokenStream),
    /// By this value conversion (`None`: the shapes do not match, the value is stashed); `true` when the
    /// value holds objects, whose conversion takes the context and a path.
    Conv(Option<Conv>, bool),
}

/// What a pair of matched fields does, for `CONVERSIONS.md`.
#[derive(Default)]
struct PairNotes {
    only_source: Vec<String>,
    only_target: Vec<String>,
    renamed: Vec<String>,
    changed: Vec<String>,
    bagged: Vec<String>,
}

struct Emitter<'a> {
    spoke: Side<'a>,
    hub: Side<'a>,
    /// (spoke schema, JSON name) → hub JSON name.
    renames: &'a BTreeMap<String, String>,
    /// Renames that matched a field.
    used_renames: BTreeSet<String>,
    /// Type pairs (spoke id, hub id) still to emit, and those done.
    queue: Vec<(String, String)>,
    seen: BTreeSet<(String, String)>,
    /// Emitted items per spoke module.
    items: BTreeMap<String, Vec<TokenStream>>,
    /// Notes per pair title.
    notes: BTreeMap<String, PairNotes>,
}

/// A field list with the ARM type it mirrors (for schema names in renames).
struct Fields<'a> {
    fields: &'a [KubeField],
    base: &'a TypeId,
}

impl<'a> Emitter<'a> {
    /// Pairs the fields of a spoke object and a hub object: (spoke field, hub field), either side missing.
    fn match_fields<'f>(
        &mut self,
        spoke: &Fields<'f>,
        hub: &Fields<'f>,
    ) -> Vec<(Option<&'f KubeField>, Option<&'f KubeField>)> {
        let mut out = Vec::new();
        let mut taken = BTreeSet::new();
        for f in spoke.fields {
            let mut name = f.json_name.clone();
            if f.special == Special::None
                && let Some(schema) = self.spoke.schema_of(spoke.base, f)
            {
                let key = format!("{schema}.{}", f.json_name);
                if let Some(to) = self.renames.get(&key) {
                    self.used_renames.insert(key);
                    name = to.clone();
                }
            }
            let g = hub
                .fields
                .iter()
                .find(|g| g.json_name == name && !taken.contains(&g.json_name));
            if let Some(g) = g {
                taken.insert(g.json_name.clone());
            }
            out.push((Some(f), g));
        }
        for g in hub.fields {
            if !taken.contains(&g.json_name) {
                out.push((None, Some(g)));
            }
        }
        out
    }

    /// The conversion of a value `v` (a reference to the source type) from `a` to `b`; `path` is an
    /// expression of type `&Path`. `None` when the shapes are incompatible.
    fn value(
        &mut self,
        from: Side<'_>,
        to: Side<'_>,
        a: &KubeRef,
        b: &KubeRef,
        v: TokenStream,
        path: TokenStream,
    ) -> Result<Option<Conv>> {
        use KubeRef as K;
        use Primitive as P;
        let spoke_to_hub = from.alias == "spoke";
        if identical(a, b) {
            return Ok(Some(Conv::Total(match a {
                K::Primitive(p) if *p != P::String => quote!(*#v),
                _ => quote!(#v.clone()),
            })));
        }
        Ok(Some(match (a, b) {
            (K::Primitive(p), K::Primitive(q)) => match (p, q) {
                (P::String, P::String) => Conv::Total(quote!(#v.clone())),
                (x, y) if x == y => Conv::Total(quote!(*#v)),
                (P::Int32, P::Int64) => Conv::Total(quote!(i64::from(*#v))),
                // Through the shortest decimal representation, so that the JSON stays the same (`0.1`).
                (P::Float, P::Double) => Conv::Total(quote!(armgen_runtime::hub::widen(*#v))),
                (P::Int32, P::Double) => Conv::Total(quote!(f64::from(*#v))),
                (P::Int64, P::Int32) => Conv::Partial(quote!(i32::try_from(*#v).ok())),
                (P::Double, P::Float) => Conv::Partial(quote!(armgen_runtime::hub::narrow(*#v))),
                _ => return Ok(None),
            },
            (K::Json, K::Json)
            | (K::Secret, K::Secret)
            | (K::ResourceRef, K::ResourceRef)
            | (K::ConfigMapRef, K::ConfigMapRef)
            | (K::RefKeys(_), K::RefKeys(_)) => Conv::Total(quote!(#v.clone())),
            // Items of arrays and maps (fields go through `Conversion::spelled`): by wire value, when the target
            // has the value with the same spelling; else the collection is bagged.
            (K::ArmEnum(_), K::ArmEnum(y)) | (K::Primitive(P::String), K::ArmEnum(y)) => {
                let t = to.ty(b)?;
                let make = if to.open_enum(y) {
                    quote!(Some(#t::from(#v.as_str().to_string())))
                } else {
                    quote!(#t::try_from(#v.as_str().to_string()).ok())
                };
                Conv::Partial(quote!(#make.filter(|converted| converted.as_str() == #v.as_str())))
            }
            (K::ArmEnum(_), K::Primitive(P::String)) => Conv::Total(quote!(#v.as_str().to_string())),
            (K::ArmUnion(_), K::ArmUnion(_)) | (K::Json, _) | (_, K::Json) => {
                Conv::Partial(quote!(armgen_runtime::hub::via_json(#v)))
            }
            (K::Kube(x), K::Kube(y)) => {
                let t = to.ty(b)?;
                // By the structs the ids are (a status type that is its spec twin's struct is that struct): one
                // pair of impls per pair of structs.
                let (spoke, hub) = (self.spoke.kube, self.hub.kube);
                let pair = if spoke_to_hub {
                    (spoke.canonical(x), hub.canonical(y))
                } else {
                    (spoke.canonical(y), hub.canonical(x))
                };
                if self.seen.insert(pair.clone()) {
                    self.queue.push(pair);
                }
                Conv::Total(quote!(Convert::<#t>::convert(#v, cx, #path)))
            }
            (K::Array(x), K::Array(y)) => match self.value(from, to, x, y, quote!(item), quote!(&path))? {
                Some(Conv::Total(e)) if has_object(x) => Conv::Total(quote!({
                    let parent = #path;
                    #v.iter().enumerate().map(|(i, item)| { let path = parent.index(i); #e }).collect::<Vec<_>>()
                })),
                Some(Conv::Total(e)) => Conv::Total(quote!(#v.iter().map(|item| #e).collect::<Vec<_>>())),
                Some(Conv::Partial(e)) => Conv::Partial(quote!(#v.iter().map(|item| #e).collect::<Option<Vec<_>>>())),
                None => return Ok(None),
            },
            (K::Map(x), K::Map(y)) => match self.value(from, to, x, y, quote!(item), quote!(&path))? {
                Some(Conv::Total(e)) if has_object(x) => Conv::Total(quote!({
                    let parent = #path;
                    #v.iter().map(|(key, item)| { let path = parent.key(key); (key.clone(), #e) }).collect::<std::collections::BTreeMap<_, _>>()
                })),
                Some(Conv::Total(e)) => Conv::Total(quote!(
                    #v.iter().map(|(key, item)| (key.clone(), #e)).collect::<std::collections::BTreeMap<_, _>>()
                )),
                Some(Conv::Partial(e)) => Conv::Partial(quote!(
                    #v.iter().map(|(key, item)| (#e).map(|value| (key.clone(), value))).collect::<Option<std::collections::BTreeMap<_, _>>>()
                )),
                None => return Ok(None),
            },
            _ => return Ok(None),
        }))
    }

    /// The conversion of a string-valued field (enum or string on each side, not both strings) through
    /// `Conversion::spelled`, which keeps the source's spelling (both types implement `armgen_runtime::hub::Wire`);
    /// `None` for other fields.
    fn spelled(f: &KubeField, g: &KubeField, field_path: &TokenStream) -> Option<TokenStream> {
        use KubeRef as K;
        let wire = |k: &KubeRef| matches!(k, K::ArmEnum(_) | K::Primitive(Primitive::String));
        let both_strings = matches!((&f.ty, &g.ty), (K::Primitive(_), K::Primitive(_)));
        if !wire(&f.ty) || !wire(&g.ty) || both_strings || f.boxed || g.boxed {
            return None;
        }
        let fname = ident(&f.rust_name);
        Some(quote!(cx.spelled(&self.#fname, &#field_path)))
    }

    /// The struct-literal field initializers (and the statements stashing source-only fields) converting
    /// `self` (the `from` object) into the `to` object.
    fn body(
        &mut self,
        from: Side<'_>,
        to: Side<'_>,
        pairs: &[(Option<&KubeField>, Option<&KubeField>)],
        owner_from: &Owner,
        owner_to: &Owner,
        notes_title: &str,
    ) -> Result<(Vec<TokenStream>, Vec<TokenStream>)> {
        let mut stashes = Vec::new();
        let mut inits = Vec::new();
        let spoke_to_hub = from.alias == "spoke";
        let mut notes = PairNotes::default();
        for (s, h) in pairs {
            // In this direction: source field, target field.
            let (src, dst) = if spoke_to_hub { (*s, *h) } else { (*h, *s) };
            match (src, dst) {
                (Some(f), None) => {
                    let name = ident(&f.rust_name);
                    let json = &f.json_name;
                    stashes.push(quote!(cx.keep(&self.#name, &path.field(#json));));
                    if spoke_to_hub {
                        notes.only_source.push(json.clone());
                    }
                }
                (None, Some(g)) => {
                    let name = ident(&g.rust_name);
                    let json = &g.json_name;
                    inits.push(quote!(#name: cx.restore(&path.field(#json)),));
                    if spoke_to_hub {
                        notes.only_target.push(json.clone());
                    }
                }
                (Some(f), Some(g)) => {
                    let (init, stash) = self.matched_field(from, to, (f, g), (owner_from, owner_to), &mut notes)?;
                    stashes.extend(stash);
                    inits.push(init);
                }
                (None, None) => {}
            }
        }
        if spoke_to_hub {
            let entry = self.notes.entry(notes_title.to_string()).or_default();
            entry.only_source.extend(notes.only_source);
            entry.only_target.extend(notes.only_target);
            entry.renamed.extend(notes.renamed);
            entry.changed.extend(notes.changed);
            entry.bagged.extend(notes.bagged);
        }
        Ok((stashes, inits))
    }

    /// The initializer of target field `g` from source field `f` (a matched pair), with the statement stashing
    /// the source value when it does not convert; spoke to hub, `notes` gets the rename and the type change.
    fn matched_field(
        &mut self,
        from: Side<'_>,
        to: Side<'_>,
        (f, g): (&KubeField, &KubeField),
        (owner_from, owner_to): (&Owner, &Owner),
        notes: &mut PairNotes,
    ) -> Result<(TokenStream, Option<TokenStream>)> {
        let spoke_to_hub = from.alias == "spoke";
        let fname = ident(&f.rust_name);
        let gname = ident(&g.rust_name);
        let (fj, gj) = (f.json_name.as_str(), g.json_name.as_str());
        let field_path = if fj == gj {
            quote!(path.field(#fj))
        } else {
            if spoke_to_hub {
                notes.renamed.push(format!("{fj} → {gj}"));
            }
            quote!(path.renamed(#fj, #gj))
        };
        // The field itself, when both sides box it alike (the runtime's impls for `Box` see through).
        let same_box = f.boxed == g.boxed;
        let field = quote!(&self.#fname);
        let (conv, objects) = match (f.special, g.special) {
            (Special::None, Special::None) => match self.plain_field(from, to, (f, g), &field_path, notes)? {
                Plain::Init(init) => return Ok((init, None)),
                Plain::Conv(conv, objects) => (conv, objects),
            },
            (Special::Owner, Special::Owner)
                if (*owner_from == Owner::ResourceGroup) != (*owner_to == Owner::ResourceGroup) =>
            {
                (Some(Conv::Partial(quote!(armgen_runtime::hub::via_json(value)))), false)
            }
            (Special::OperatorSpec, Special::OperatorSpec) => {
                (Some(Conv::Partial(quote!(armgen_runtime::hub::via_json(value)))), false)
            }
            (a, b) if a == b && same_box => {
                return Ok((quote!(#gname: cx.copy(#field, &#field_path),), None));
            }
            _ => (None, false),
        };
        Self::converted_field(to, (f, g), conv, objects, &field_path)
    }

    /// How plain field `f` (no special role) becomes plain field `g`: a complete initializer when the types are
    /// identical, convert by their `Convert` impls or by wire value, else the value conversion; spoke to hub,
    /// `notes` gets the type change (or the bagged field).
    fn plain_field(
        &mut self,
        from: Side<'_>,
        to: Side<'_>,
        (f, g): (&KubeField, &KubeField),
        field_path: &TokenStream,
        notes: &mut PairNotes,
    ) -> Result<Plain> {
        let spoke_to_hub = from.alias == "spoke";
        let fname = ident(&f.rust_name);
        let gname = ident(&g.rust_name);
        let fj = f.json_name.as_str();
        let same_box = f.boxed == g.boxed;
        let field = quote!(&self.#fname);
        if identical(&f.ty, &g.ty) {
            return Ok(Plain::Init(if same_box {
                quote!(#gname: cx.copy(#field, &#field_path),)
            } else {
                let value = if f.boxed {
                    quote!(self.#fname.as_deref())
                } else {
                    quote!(self.#fname.as_ref())
                };
                let boxed = if g.boxed { quote!(.map(Box::new)) } else { quote!() };
                quote!(#gname: cx.convert(#value, &#field_path, |value, _, _| value.clone())#boxed,)
            }));
        }
        // The type change, spoke to hub, when there is one.
        let change = || {
            let (a, b) = (describe(from, &f.ty), describe(to, &g.ty));
            (spoke_to_hub && a != b).then(|| format!("{fj}: {a} → {b}"))
        };
        if same_box && by_impls(&f.ty, &g.ty) {
            self.value(from, to, &f.ty, &g.ty, quote!(value), quote!(path))?;
            notes.changed.extend(change());
            return Ok(Plain::Init(quote!(#gname: cx.object(#field, &#field_path),)));
        }
        if let Some(init) = Self::spelled(f, g, field_path) {
            notes.changed.extend(change());
            return Ok(Plain::Init(quote!(#gname: #init,)));
        }
        let c = self.value(from, to, &f.ty, &g.ty, quote!(value), quote!(path))?;
        if let Some(what) = change() {
            if c.is_some() {
                notes.changed.push(what);
            } else {
                notes.bagged.push(what);
            }
        }
        Ok(Plain::Conv(c, has_object(&f.ty)))
    }

    /// The initializer of target field `g` from source field `f` by the value conversion `conv` (`None`: the
    /// value is stashed, and the statement doing it comes along); `objects` when the value holds objects.
    fn converted_field(
        to: Side<'_>,
        (f, g): (&KubeField, &KubeField),
        conv: Option<Conv>,
        objects: bool,
        field_path: &TokenStream,
    ) -> Result<(TokenStream, Option<TokenStream>)> {
        let fname = ident(&f.rust_name);
        let gname = ident(&g.rust_name);
        let value = if f.boxed {
            quote!(self.#fname.as_deref())
        } else {
            quote!(self.#fname.as_ref())
        };
        let boxed = if g.boxed { quote!(.map(Box::new)) } else { quote!() };
        let field = quote!(&self.#fname);
        Ok(match conv {
            Some(Conv::Total(_)) if matches!((&f.ty, &g.ty), (KubeRef::Kube(_), KubeRef::Kube(_))) => {
                let t = to.ty(&g.ty)?;
                (
                    quote!(#gname: cx.convert(#value, &#field_path, Convert::<#t>::convert)#boxed,),
                    None,
                )
            }
            Some(Conv::Total(e)) if objects => (
                quote!(#gname: cx.convert(#value, &#field_path, |value, cx, path| #e)#boxed,),
                None,
            ),
            Some(Conv::Total(e)) => (
                quote!(#gname: cx.convert(#value, &#field_path, |value, _, _| #e)#boxed,),
                None,
            ),
            Some(Conv::Partial(e)) => {
                let via_json = quote!(armgen_runtime::hub::via_json(value));
                if e.to_string() == via_json.to_string() {
                    (quote!(#gname: cx.via_json(#field, &#field_path),), None)
                } else {
                    (
                        quote!(#gname: cx.try_convert(#value, &#field_path, |value| #e)#boxed,),
                        None,
                    )
                }
            }
            None => (
                quote!(#gname: cx.restore(&#field_path),),
                Some(quote!(cx.keep(#field, &#field_path);)),
            ),
        })
    }

    /// `impl Convert<to> for from` for a pair of objects.
    fn object_impl(
        &mut self,
        from: Side<'_>,
        to: Side<'_>,
        (from_ty, to_ty): (TokenStream, TokenStream),
        pairs: &[(Option<&KubeField>, Option<&KubeField>)],
        owners: (&Owner, &Owner),
        title: &str,
    ) -> Result<TokenStream> {
        let (stashes, inits) = self.body(from, to, pairs, owners.0, owners.1, title)?;
        let uses = if stashes.is_empty() && inits.is_empty() {
            quote!(let _ = (cx, path);)
        } else {
            quote!()
        };
        Ok(quote! {
            impl Convert<#to_ty> for #from_ty {
                fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> #to_ty {
                    #uses
                    #(#stashes)*
                    #to_ty {
                        #(#inits)*
                    }
                }
            }
        })
    }

    /// Both impls for a nested type pair.
    fn pair(&mut self, spoke_id: &str, hub_id: &str) -> Result<()> {
        let (spoke, hub) = (self.spoke, self.hub);
        let st = spoke.kube.types.get(spoke_id).ok_or_else(|| missing(spoke_id))?;
        let ht = hub.kube.types.get(hub_id).ok_or_else(|| missing(hub_id))?;
        let pairs = self.match_fields(
            &Fields {
                fields: &st.fields,
                base: &st.source,
            },
            &Fields {
                fields: &ht.fields,
                base: &ht.source,
            },
        );
        let sty = spoke.ty(&KubeRef::Kube(spoke_id.to_string()))?;
        let hty = hub.ty(&KubeRef::Kube(hub_id.to_string()))?;
        let title = if st.rust_name == ht.rust_name {
            format!("{}::{}", st.family.module(), st.rust_name)
        } else {
            format!("{}::{} ⇄ {}", st.family.module(), st.rust_name, ht.rust_name)
        };
        let up = self.object_impl(
            spoke,
            hub,
            (sty.clone(), hty.clone()),
            &pairs,
            (&Owner::Unsupported, &Owner::Unsupported),
            &title,
        )?;
        let down = self.object_impl(
            hub,
            spoke,
            (hty, sty),
            &pairs,
            (&Owner::Unsupported, &Owner::Unsupported),
            &title,
        )?;
        let items = self.items.entry(st.module.clone()).or_default();
        items.push(up);
        items.push(down);
        Ok(())
    }

    /// The impls of one kind present in both versions: root spec and status pairs, `ConvertObject` both ways
    /// (and the same for its template kind).
    fn kind(&mut self, s: &KubeResource, h: &KubeResource) -> Result<()> {
        let (spoke, hub) = (self.spoke, self.hub);
        let mut items = Vec::new();
        for (family, sf, hf) in [
            (Family::Spec, &s.spec_fields, &h.spec_fields),
            (Family::Status, &s.status_fields, &h.status_fields),
        ] {
            let pairs = self.match_fields(
                &Fields {
                    fields: sf,
                    base: &s.arm_body,
                },
                &Fields {
                    fields: hf,
                    base: &h.arm_body,
                },
            );
            let suffix = if family == Family::Spec { "Spec" } else { "Status" };
            let sname = format_ident!("{}{}", s.kind, suffix);
            let hname = format_ident!("{}{}", h.kind, suffix);
            let title = format!("{}{suffix}", s.kind);
            items.push(self.object_impl(
                spoke,
                hub,
                (quote!(spoke::#sname), quote!(hub::#hname)),
                &pairs,
                (&s.owner, &h.owner),
                &title,
            )?);
            items.push(self.object_impl(
                hub,
                spoke,
                (quote!(hub::#hname), quote!(spoke::#sname)),
                &pairs,
                (&h.owner, &s.owner),
                &title,
            )?);
        }
        let kind = format_ident!("{}", s.kind);
        let spec = format_ident!("{}Spec", s.kind);
        let status = format_ident!("{}Status", s.kind);
        for (from, to, direction) in directions() {
            items.push(quote! {
                impl ConvertObject<#to::#kind> for #from::#kind {
                    fn convert_object(&self) -> Result<#to::#kind, armgen_runtime::kube::ConversionError> {
                        let (mut cx, metadata) = Conversion::begin(&self.metadata, #direction)?;
                        let spec = Convert::<#to::#spec>::convert(&self.spec, &mut cx, &Path::Root("spec"));
                        let status = self.status.as_ref().map(|status| {
                            Convert::<#to::#status>::convert(status, &mut cx, &Path::Root("status"))
                        });
                        Ok(#to::#kind { metadata: cx.finish(metadata)?, spec, status })
                    }
                }
            });
        }
        if s.template && h.template {
            let t = format_ident!("{}Template", s.kind);
            let tspec = format_ident!("{}TemplateSpec", s.kind);
            let tres = format_ident!("{}TemplateResource", s.kind);
            for (from, to, direction) in directions() {
                items.push(quote! {
                    impl ConvertObject<#to::#t> for #from::#t {
                        fn convert_object(&self) -> Result<#to::#t, armgen_runtime::kube::ConversionError> {
                            let (mut cx, metadata) = Conversion::begin(&self.metadata, #direction)?;
                            let spec = Convert::<#to::#spec>::convert(
                                &self.spec.template.spec,
                                &mut cx,
                                &Path::Root("spec/template/spec"),
                            );
                            Ok(#to::#t { metadata: cx.finish(metadata)?, spec: #to::#tspec { template: #to::#tres { metadata: self.spec.template.metadata.clone(), spec } } })
                        }
                    }
                });
            }
        }
        self.items.entry(s.module.clone()).or_default().extend(items);
        Ok(())
    }

    fn drain(&mut self) -> Result<()> {
        while let Some((s, h)) = self.queue.pop() {
            self.pair(&s, &h)?;
        }
        Ok(())
    }
}

/// The two directions of a kind's `ConvertObject`: source alias, target alias, `armgen_runtime::hub::Direction`.
fn directions() -> [(TokenStream, TokenStream, TokenStream); 2] {
    [
        (
            quote!(spoke),
            quote!(hub),
            quote!(armgen_runtime::hub::Direction::ToHub),
        ),
        (
            quote!(hub),
            quote!(spoke),
            quote!(armgen_runtime::hub::Direction::FromHub),
        ),
    ]
}

/// Whether values of `a` and `b` have the same Rust type in both versions (no enum, union or object, which
/// are types of their version).
fn identical(a: &KubeRef, b: &KubeRef) -> bool {
    match (a, b) {
        (KubeRef::Primitive(p), KubeRef::Primitive(q)) => p == q,
        (KubeRef::Json, KubeRef::Json)
        | (KubeRef::Secret, KubeRef::Secret)
        | (KubeRef::ResourceRef, KubeRef::ResourceRef)
        | (KubeRef::ConfigMapRef, KubeRef::ConfigMapRef)
        | (KubeRef::RefKeys(_), KubeRef::RefKeys(_)) => true,
        (KubeRef::Array(x), KubeRef::Array(y)) | (KubeRef::Map(x), KubeRef::Map(y)) => identical(x, y),
        _ => false,
    }
}

/// Whether converting a value of `k` converts objects (whose conversions take a path).
/// Whether values of `a` convert to `b` through `Convert` impls alone: objects on both sides, and arrays and
/// maps of them (the runtime implements `Convert` for `Vec`, `BTreeMap` and `Box` of convertible values).
fn by_impls(a: &KubeRef, b: &KubeRef) -> bool {
    match (a, b) {
        (KubeRef::Kube(_), KubeRef::Kube(_)) => true,
        (KubeRef::Array(x), KubeRef::Array(y)) | (KubeRef::Map(x), KubeRef::Map(y)) => by_impls(x, y),
        _ => false,
    }
}

fn has_object(k: &KubeRef) -> bool {
    match k {
        KubeRef::Kube(_) => true,
        KubeRef::Array(inner) | KubeRef::Map(inner) => has_object(inner),
        _ => false,
    }
}

fn describe(side: Side<'_>, k: &KubeRef) -> String {
    match k {
        KubeRef::Kube(_) => "object".into(),
        KubeRef::ArmEnum(id) => {
            let open = side.open_enum(id);
            format!("{} enum", if open { "open" } else { "closed" })
        }
        KubeRef::ArmUnion(_) => "union".into(),
        KubeRef::Primitive(p) => format!("{p:?}").to_lowercase(),
        KubeRef::Array(inner) => format!("array of {}", describe(side, inner)),
        KubeRef::Map(inner) => format!("map of {}", describe(side, inner)),
        KubeRef::Json => "JSON".into(),
        KubeRef::Secret => "secret reference".into(),
        KubeRef::ResourceRef => "resource reference".into(),
        KubeRef::ConfigMapRef => "ConfigMap reference".into(),
        KubeRef::RefKeys(_) => "list of resource references".into(),
    }
}

/// What [`spoke_files`] produced besides files.
pub struct SpokeConversions {
    /// The kinds converted (present in both versions), in the spoke.
    pub kinds: Vec<String>,
    /// The `CONVERSIONS.md` section of this spoke.
    pub report: String,
}

/// The spoke's `convert/` files. `renames` is the spoke's `versions.<spoke>.renames`; a rename that matches no
/// field is an error naming the config key.
pub fn spoke_files(
    files: &mut BTreeMap<PathBuf, String>,
    spoke_v: &VersionOutput<'_>,
    hub_v: &VersionOutput<'_>,
    head: &str,
    base: &str,
    layout: CrateLayout<'_>,
) -> Result<SpokeConversions> {
    let (Some(spoke_kube), Some(hub_kube)) = (spoke_v.kube, hub_v.kube) else {
        return Ok(SpokeConversions {
            kinds: Vec::new(),
            report: String::new(),
        });
    };
    let mut e = Emitter {
        spoke: Side {
            alias: "spoke",
            ir: spoke_v.ir,
            kube: spoke_kube,
        },
        hub: Side {
            alias: "hub",
            ir: hub_v.ir,
            kube: hub_kube,
        },
        renames: spoke_v.renames,
        used_renames: BTreeSet::new(),
        queue: Vec::new(),
        seen: BTreeSet::new(),
        items: BTreeMap::new(),
        notes: BTreeMap::new(),
    };
    let mut kinds = Vec::new();
    for s in &spoke_kube.resources {
        if let Some(h) = hub_kube.resources.iter().find(|h| h.kind == s.kind) {
            e.kind(s, h)?;
            kinds.push(s.kind.clone());
        }
    }
    e.drain()?;
    if let Some(unused) = spoke_v.renames.keys().find(|k| !e.used_renames.contains(*k)) {
        return Err(Error::Invalid {
            what: format!("versions.{}.renames.{unused}", spoke_v.kube_version),
            message: "matches no property of this version that the hub could take; remove or fix it".into(),
        });
    }
    convert_files(files, &e.items, (spoke_v, hub_v), head, base, layout)?;
    let report = conversions_report(spoke_v, hub_v, &kinds, &e.notes);
    Ok(SpokeConversions { kinds, report })
}

/// Writes the spoke's `convert/<module>.rs` (one per module of `items`, the emitted items by spoke module) and
/// `convert/mod.rs` into `files`.
fn convert_files(
    files: &mut BTreeMap<PathBuf, String>,
    items: &BTreeMap<String, Vec<TokenStream>>,
    (spoke_v, hub_v): (&VersionOutput<'_>, &VersionOutput<'_>),
    head: &str,
    base: &str,
    layout: CrateLayout<'_>,
) -> Result<()> {
    let spoke_path = layout.version_path(spoke_v.group, spoke_v.kube_version, spoke_v.kube_version);
    let hub_path = layout.version_path(hub_v.group, hub_v.kube_version, spoke_v.kube_version);
    let mods: Vec<proc_macro2::Ident> = items.keys().map(|m| format_ident!("{}", m)).collect();
    for (module, module_items) in items {
        let doc = format!(
            " Conversions between `{}` and the hub `{}` for the types of `{module}`.",
            spoke_v.kube_version, hub_v.kube_version
        );
        let body = quote!(#(#module_items)*);
        // Only the runtime names the file uses (no `unused_imports` to allow).
        let runtime = super::uses::Uses::of(&body).names(
            quote!(armgen_runtime::hub),
            &["Conversion", "Convert", "ConvertObject", "Path"],
        );
        let tokens = quote! {
            #![doc = #doc]
            #[allow(unused_imports)]
            use #spoke_path as spoke;
            #[allow(unused_imports)]
            use #hub_path as hub;
            #runtime
            #body
        };
        let path = format!("{base}/convert/{module}.rs");
        files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    }
    let doc = format!(
        " Conversions between `{}` and the hub (storage) version `{}`: `armgen_runtime::hub::Convert` for every pair \
         of matching spec and status types, `armgen_runtime::hub::ConvertObject` for every kind both versions have. \
         What one side cannot hold travels in the property bag (`armgen_runtime::hub`).",
        spoke_v.kube_version, hub_v.kube_version
    );
    let tokens = quote! {
        #![doc = #doc]
        #(mod #mods;)*
    };
    let path = format!("{base}/convert/mod.rs");
    files.insert(PathBuf::from(&path), finish(head, tokens, &path)?);
    Ok(())
}

/// The spoke's `CONVERSIONS.md` section: the `kinds` converted, totals, and per pair of types (`notes`, by
/// title) what is bagged, renamed or converted with a type change.
fn conversions_report(
    spoke_v: &VersionOutput<'_>,
    hub_v: &VersionOutput<'_>,
    kinds: &[String],
    notes: &BTreeMap<String, PairNotes>,
) -> String {
    let mut report = format!(
        "## {} {} ⇄ hub {}\n\nKinds converted: {}.\n\n",
        spoke_v.group,
        spoke_v.kube_version,
        hub_v.kube_version,
        kinds.join(", ")
    );
    let mut totals = [0usize; 5];
    for n in notes.values() {
        for (i, l) in [&n.only_source, &n.only_target, &n.renamed, &n.changed, &n.bagged]
            .iter()
            .enumerate()
        {
            totals[i] += l.len();
        }
    }
    report.push_str(&format!(
        "Per pair of types: {} properties only in {} and {} only in {} (kept in the property bag), {} renamed, {} converted with a type change, {} bagged for a shape change.\n\n",
        totals[0], spoke_v.kube_version, totals[1], hub_v.kube_version, totals[2], totals[3], totals[4]
    ));
    report.push_str(&format!(
        "| type | only in {} | only in {} | renamed | type changed | bagged (shape changed) |\n| --- | --- | --- | --- | --- | --- |\n",
        spoke_v.kube_version, hub_v.kube_version
    ));
    for (title, n) in notes {
        if n.only_source.is_empty()
            && n.only_target.is_empty()
            && n.renamed.is_empty()
            && n.changed.is_empty()
            && n.bagged.is_empty()
        {
            continue;
        }
        let cell = |l: &[String]| l.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ");
        report.push_str(&format!(
            "| `{title}` | {} | {} | {} | {} | {} |\n",
            cell(&n.only_source),
            cell(&n.only_target),
            cell(&n.renamed),
            cell(&n.changed),
            cell(&n.bagged)
        ));
    }
    report.push('\n');
    report
}

/// The group module's `convert` function: a JSON custom resource of any served version to any other, through
/// the hub. `spokes` are the versions with conversions and their kinds.
pub fn group_convert(hub: &VersionOutput<'_>, spokes: &[(&VersionOutput<'_>, Vec<String>)]) -> TokenStream {
    let Some(hub_kube) = hub.kube else { return quote!() };
    let hub_version = hub.kube_version;
    let hub_mod = format_ident!("{}", hub_version);
    let group = hub_kube.group.as_str();
    let mut arms = Vec::new();
    let mut template_kinds = Vec::new();
    for r in &hub_kube.resources {
        template_kinds.push((r.kind.clone(), false));
        if r.template {
            template_kinds.push((format!("{}Template", r.kind), true));
        }
    }
    for (kind, template) in &template_kinds {
        let k = format_ident!("{}", kind);
        let base_kind = kind.strip_suffix("Template").filter(|_| *template).unwrap_or(kind);
        let with: Vec<&&VersionOutput<'_>> = spokes
            .iter()
            .filter(|(v, kinds)| {
                kinds.iter().any(|x| x == base_kind)
                    && (!*template
                        || v.kube
                            .is_some_and(|kube| kube.resources.iter().any(|r| r.kind == base_kind && r.template)))
            })
            .map(|(v, _)| v)
            .collect();
        let ups = with.iter().map(|v| {
            let m = format_ident!("{}", v.kube_version);
            let f = v.kube_version;
            quote! {
                #[cfg(feature = #f)]
                #f => armgen_runtime::hub::ConvertObject::<#hub_mod::#k>::convert_object(&armgen_runtime::hub::decode::<#m::#k>(object)?)?,
            }
        });
        let downs = with.iter().map(|v| {
            let m = format_ident!("{}", v.kube_version);
            let f = v.kube_version;
            quote! {
                #[cfg(feature = #f)]
                #f => armgen_runtime::hub::encode(&armgen_runtime::hub::ConvertObject::<#m::#k>::convert_object(&hub)?),
            }
        });
        arms.push(quote! {
            #kind => {
                let hub: #hub_mod::#k = match from {
                    #hub_version => armgen_runtime::hub::decode(object)?,
                    #(#ups)*
                    _ => return Err(armgen_runtime::hub::not_served(#kind, from)),
                };
                match to {
                    #hub_version => armgen_runtime::hub::encode(&hub),
                    #(#downs)*
                    _ => Err(armgen_runtime::hub::not_served(#kind, to)),
                }
            }
        });
    }
    // Kinds the hub lacks have no conversions (they go through the hub): say so, and where they are served.
    let mut elsewhere: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for (v, _) in spokes {
        for r in v.kube.iter().flat_map(|k| &k.resources) {
            let mut names = vec![r.kind.clone()];
            if r.template {
                names.push(format!("{}Template", r.kind));
            }
            for name in names {
                if !template_kinds.iter().any(|(k, _)| *k == name) {
                    elsewhere.entry(name).or_default().insert(v.kube_version);
                }
            }
        }
    }
    for (kind, versions) in &elsewhere {
        let versions: Vec<&str> = versions.iter().copied().collect();
        arms.push(quote! {
            #kind => Err(armgen_runtime::hub::not_in_hub(#kind, #hub_version, &[#(#versions),*])),
        });
    }
    let doc = format!(
        " Converts a custom resource of `{group}` (JSON, any served version) to `desired_api_version`, through \
         the hub `{hub_version}`, as the conversion webhook does. An object already at that version comes back \
         unchanged."
    );
    quote! {
        #[doc = #doc]
        #[cfg(feature = #hub_version)]
        pub fn convert(object: serde_json::Value, desired_api_version: &str) -> Result<serde_json::Value, armgen_runtime::kube::ConversionError> {
            let target = armgen_runtime::hub::TypeMeta::of_api_version(desired_api_version, #group)?;
            let source = armgen_runtime::hub::TypeMeta::of(&object, #group)?;
            if source.version == target.version {
                return Ok(object);
            }
            let (from, to) = (source.version.as_str(), target.version.as_str());
            match source.kind.as_str() {
                #(#arms)*
                kind => Err(armgen_runtime::kube::ConversionError {
                    path: "kind".into(),
                    message: format!("{kind} is not a kind of {}", #group),
                }),
            }
        }
    }
}

/// The group module's `normalize` function: a JSON custom resource of any served version read into its
/// version's types and written back, as a conversion writes objects of that version (known enum values in the
/// spelling of the spec, numbers as their types write them).
pub fn group_normalize(versions: &[&VersionOutput<'_>]) -> TokenStream {
    let Some(group) = versions.iter().find_map(|v| v.kube).map(|k| k.group.clone()) else {
        return quote!();
    };
    let mut arms = Vec::new();
    for v in versions {
        let Some(kube) = v.kube else { continue };
        let (m, f) = (format_ident!("{}", v.kube_version), v.kube_version);
        for r in &kube.resources {
            let mut names = vec![r.kind.clone()];
            if r.template {
                names.push(format!("{}Template", r.kind));
            }
            for name in names {
                let k = format_ident!("{}", name);
                arms.push(quote! {
                    #[cfg(feature = #f)]
                    (#name, #f) => armgen_runtime::hub::encode(&armgen_runtime::hub::decode::<#m::#k>(object)?),
                });
            }
        }
    }
    let doc = format!(
        " Reads a custom resource of `{group}` (JSON) into the types of its version and writes it back, as a \
         conversion writes objects of that version: known enum values in the spec's spelling, numbers as their \
         types write them, properties the version lacks dropped."
    );
    quote! {
        #[doc = #doc]
        pub fn normalize(object: serde_json::Value) -> Result<serde_json::Value, armgen_runtime::kube::ConversionError> {
            let source = armgen_runtime::hub::TypeMeta::of(&object, #group)?;
            match (source.kind.as_str(), source.version.as_str()) {
                #(#arms)*
                (kind, version) => Err(armgen_runtime::hub::not_served(kind, version)),
            }
        }
    }
}
