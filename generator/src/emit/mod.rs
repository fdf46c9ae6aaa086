//! Pass **emit**: the generated crate as a map from relative path to file contents.
//!
//! Layout (for group `containerservice`, version `v2alpha1`):
//!
//! ```text
//! Cargo.toml                                   features: one per Kubernetes version
//! REPORT.md                                    resources, type counts and diagnostics per version
//! CONVERSIONS.md                               what converting each version to its hub does (`convert`)
//! src/lib.rs
//! src/registry.rs                              dispatch over every group, version and kind (`registry`)
//! src/containerservice/mod.rs                  #[cfg(feature = "v2alpha1")] pub mod v2alpha1;
//! src/containerservice/v2alpha1/mod.rs         API_VERSION, pub mod arm
//! src/containerservice/v2alpha1/arm/mod.rs     module list, RESOURCES, round_trip
//! src/containerservice/v2alpha1/arm/<resource>.rs   types used by one resource only
//! src/containerservice/v2alpha1/arm/shared.rs  types used by several resources
//! crds/<plural>.<group>.yaml, crds/kustomization.yaml   CRD manifests (`crd`)
//! rbac/role.yaml, rbac/kustomization.yaml      the ClusterRole on the reconciled kinds (`rbac`)
//! ```
//!
//! With `output.versionCrates` ([`CrateLayout::PerVersion`]) each version's tree moves into a crate of its own, which
//! `src/<group>/mod.rs` re-exports, and its `arm/` into another, which the version's crate re-exports as `arm`;
//! unchanged but for that re-export and the two `use` lines of a spoke's conversions:
//!
//! ```text
//! crates/containerservice-v2alpha1/Cargo.toml       package <crate>-containerservice-v2alpha1; a spoke's depends
//!                                                   on its hub's crate (feature <hub version>: its conversions)
//! crates/containerservice-v2alpha1/src/lib.rs       #[path = "mod.rs"] mod version; pub use version::*;
//! crates/containerservice-v2alpha1/src/mod.rs       what src/containerservice/v2alpha1/mod.rs holds otherwise,
//!                                                   with pub use <crate>_containerservice_v2alpha1_arm as arm;
//! crates/containerservice-v2alpha1-arm/src/lib.rs   #[path = "mod.rs"] mod arm; pub use arm::*;
//! crates/containerservice-v2alpha1-arm/src/mod.rs   what …/v2alpha1/arm/mod.rs holds otherwise
//! src/containerservice/mod.rs                       #[cfg(feature = "v2alpha1")] pub use <crate>_containerservice_v2alpha1 as v2alpha1;
//! ```

pub mod convert;
pub mod crd;
pub mod diff;
pub mod fit;
mod from_json;
pub mod kube;
mod output;
pub mod par;
pub mod rbac;
mod registry;
pub mod rules;
pub mod rust;
pub mod uses;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use output::finish;
pub use output::{CrateLayout, GENERATOR, StorageReason, VersionOutput, header, kind_storage, storage_versions};

use crate::error::Result;
use crate::passes::layout::SHARED_MODULE;

/// Emits the whole crate: `Cargo.toml`, `src/lib.rs`, `src/registry.rs`, each group's files
/// (`src/<group>/…`) and, when a group has versions to convert, `CONVERSIONS.md`.
pub fn crate_files(
    crate_name: &str,
    description: &str,
    versions: &[VersionOutput<'_>],
    layout: CrateLayout<'_>,
) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let all_sources = spec_files(versions.iter());
    let groups: BTreeSet<&str> = versions.iter().map(|v| v.group).collect();
    files.insert(
        PathBuf::from("Cargo.toml"),
        cargo_toml(crate_name, description, versions, &all_sources, layout),
    );
    if let CrateLayout::PerVersion { .. } = layout {
        for v in versions {
            version_crate(&mut files, crate_name, v, versions, layout)?;
        }
    }
    files.insert(PathBuf::from("src/lib.rs"), lib_rs(&groups, &all_sources)?);
    files.insert(
        PathBuf::from("src/registry.rs"),
        registry::file(versions, &all_sources)?,
    );
    let mut conversions = String::new();
    for group in &groups {
        let in_group: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.group == *group).collect();
        conversions.push_str(&group_files(&mut files, group, &in_group, layout)?);
    }
    if !conversions.is_empty() {
        files.insert(PathBuf::from("CONVERSIONS.md"), conversions_md(&conversions));
    }
    Ok(files)
}

/// The spec files the versions were generated from, sorted, each once.
fn spec_files<'a>(versions: impl Iterator<Item = &'a VersionOutput<'a>>) -> Vec<String> {
    let set: BTreeSet<String> = versions.flat_map(|v| v.ir.spec_files.iter().cloned()).collect();
    set.into_iter().collect()
}

/// The `[package]` table and the dependencies of a generated crate: the runtime and serde's, and for a crate with
/// custom resources (`kube`) the Kubernetes types and the YAML reader of their CRDs.
fn package(crate_name: &str, description: &str, sources: &[String], kube: bool) -> String {
    let mut cargo = header("#", sources, None);
    cargo.push_str(&format!(
        "[package]\nname = \"{crate_name}\"\ndescription = \"{description}\"\nedition.workspace = true\nversion.workspace = true\nlicense.workspace = true\nrust-version.workspace = true\n\n"
    ));
    cargo.push_str(if kube {
        "[dependencies]\narmgen-runtime.workspace = true\nk8s-openapi.workspace = true\nkube-core.workspace = true\nserde.workspace = true\nserde_json.workspace = true\nserde_yaml_ng.workspace = true\n"
    } else {
        "[dependencies]\narmgen-runtime.workspace = true\nserde.workspace = true\nserde_json.workspace = true\n"
    });
    cargo
}

/// The group's hub: its storage version, when that has custom resources; every other version converts to it.
fn hub_of<'v, 'a>(
    group: &str,
    versions: impl IntoIterator<Item = &'v VersionOutput<'a>>,
) -> Option<&'v VersionOutput<'a>>
where
    'a: 'v,
{
    versions
        .into_iter()
        .find(|v| v.group == group && v.storage && v.kube.is_some())
}

/// The hub `v` converts to, when `v` is a spoke (it has custom resources and is not the hub).
fn spoke_hub<'v, 'a>(v: &VersionOutput<'_>, versions: &'v [VersionOutput<'a>]) -> Option<&'v VersionOutput<'a>> {
    hub_of(v.group, versions).filter(|h| h.kube_version != v.kube_version && v.kube.is_some())
}

/// `Cargo.toml`: the package, its dependencies, and one feature per Kubernetes version (all on by default). With
/// a crate per version, the version's feature is its crate (an optional dependency); a hub's feature also turns on,
/// in the crates of its spokes that are on, their conversions (the feature of the same name there).
fn cargo_toml(
    crate_name: &str,
    description: &str,
    versions: &[VersionOutput<'_>],
    sources: &[String],
    layout: CrateLayout<'_>,
) -> String {
    let mut cargo = package(crate_name, description, sources, true);
    let mut features: BTreeMap<&str, Vec<String>> = versions.iter().map(|v| (v.kube_version, Vec::new())).collect();
    for v in versions {
        let Some(name) = layout.version_crate(v.group, v.kube_version) else {
            continue;
        };
        cargo.push_str(&format!(
            "{name} = {{ path = \"{}\", optional = true }}\n",
            version_crate_dir(v)
        ));
        features.entry(v.kube_version).or_default().push(format!("dep:{name}"));
        if let Some(hub) = spoke_hub(v, versions) {
            features
                .entry(hub.kube_version)
                .or_default()
                .push(format!("{name}?/{}", hub.kube_version));
        }
    }
    let quoted = |list: &mut dyn Iterator<Item = &str>| list.map(|f| format!("\"{f}\"")).collect::<Vec<_>>().join(", ");
    cargo.push_str(&format!(
        "\n[features]\ndefault = [{}]\n",
        quoted(&mut features.keys().copied())
    ));
    for enables in features.values_mut() {
        enables.sort_by_key(|e| !e.starts_with("dep:"));
    }
    for (f, enables) in &features {
        cargo.push_str(&format!(
            "{f} = [{}]\n",
            quoted(&mut enables.iter().map(String::as_str))
        ));
    }
    cargo
}

/// The folder of a version's crate, relative to the main crate (and to the output).
fn version_crate_dir(v: &VersionOutput<'_>) -> String {
    output::crate_dir(v.group, v.kube_version)
}

/// The crate of a version's ARM payload types ([`CrateLayout::arm_dir`]), `name`: its `Cargo.toml` and its
/// `src/lib.rs`, which includes the `arm` module's tree from `src/mod.rs`.
fn arm_crate(files: &mut BTreeMap<PathBuf, String>, crate_name: &str, v: &VersionOutput<'_>, name: &str) -> Result<()> {
    let dir = format!("{}-arm", version_crate_dir(v));
    let description = format!(
        "Generated ARM payload types of `{}` {} (ARM API version {}), re-exported by `{crate_name}` as `{}::{}::arm`",
        v.provider, v.kube_version, v.ir.api_version, v.group, v.kube_version
    );
    files.insert(
        PathBuf::from(format!("{dir}/Cargo.toml")),
        package(name, &description, &v.ir.spec_files, false),
    );
    let reexport = format!(
        "{}::{}::{}::arm",
        output::crate_ident(crate_name),
        v.group,
        v.kube_version
    );
    included_lib(files, &dir, v, ("the ARM payload types of", &reexport), "arm")
}

/// `<dir>/src/lib.rs` of a version's crate, whose module tree is in `src/mod.rs`: the crate's doc (`what` the
/// crate holds, and the path `aks-api` re-exports it as), and the tree included as the private module `module`,
/// outside rustfmt's reach as every generated module is, its items re-exported.
fn included_lib(
    files: &mut BTreeMap<PathBuf, String>,
    dir: &str,
    v: &VersionOutput<'_>,
    (what, reexport): (&str, &str),
    module: &str,
) -> Result<()> {
    let doc = format!(
        " `{}` {}: {what} ARM API version {}, as `{reexport}` re-exports them.",
        v.provider, v.kube_version, v.ir.api_version
    );
    let module = format_ident!("{module}");
    let lib = quote! {
        #![doc = #doc]
        #[rustfmt::skip]
        #[path = "mod.rs"]
        mod #module;
        pub use #module::*;
    };
    let path = format!("{dir}/src/lib.rs");
    let head = header("//", &v.ir.spec_files, Some((&v.ir.api_version, v.kube_version)));
    files.insert(PathBuf::from(&path), finish(&head, lib, &path)?);
    Ok(())
}

/// A version's own crate ([`CrateLayout::PerVersion`]): its `Cargo.toml` (a spoke's depends on its hub's crate,
/// behind a feature named after the hub) and its `src/lib.rs`, which includes the version's module tree from
/// `src/mod.rs`, outside rustfmt's reach as every generated module is.
fn version_crate(
    files: &mut BTreeMap<PathBuf, String>,
    crate_name: &str,
    v: &VersionOutput<'_>,
    versions: &[VersionOutput<'_>],
    layout: CrateLayout<'_>,
) -> Result<()> {
    let Some(name) = layout.version_crate(v.group, v.kube_version) else {
        return Ok(());
    };
    let dir = version_crate_dir(v);
    let description = format!(
        "{} `{}` {} (ARM API version {}), re-exported by `{crate_name}` as `{}::{}`",
        if v.storage {
            "Generated types of the storage version of"
        } else {
            "Generated types of"
        },
        v.provider,
        v.kube_version,
        v.ir.api_version,
        v.group,
        v.kube_version
    );
    let mut cargo = package(&name, &description, &v.ir.spec_files, true);
    if let Some(arm) = layout.arm_crate(v.group, v.kube_version) {
        cargo.push_str(&format!(
            "{arm} = {{ path = \"../{}-{}-arm\" }}\n",
            v.group, v.kube_version
        ));
        arm_crate(files, crate_name, v, &arm)?;
    }
    if let Some(hub) = spoke_hub(v, versions) {
        let hub_crate = layout.version_crate(hub.group, hub.kube_version).unwrap_or_default();
        cargo.push_str(&format!(
            "{hub_crate} = {{ path = \"../{}-{}\", optional = true }}\n\n[features]\n# The conversions to and from the hub.\n{} = [\"dep:{hub_crate}\"]\n",
            hub.group, hub.kube_version, hub.kube_version
        ));
    }
    files.insert(PathBuf::from(format!("{dir}/Cargo.toml")), cargo);
    let reexport = format!("{}::{}::{}", output::crate_ident(crate_name), v.group, v.kube_version);
    included_lib(files, &dir, v, ("the types of", &reexport), "version")
}

/// `src/lib.rs`: one module per group, and the registry's items re-exported.
fn lib_rs(groups: &BTreeSet<&str>, sources: &[String]) -> Result<String> {
    let group_mods = groups.iter().map(|g| format_ident!("{}", g));
    let lib = quote! {
        #![doc = " Generated Rust types for Azure Resource Manager APIs."]
        #![doc = ""]
        #![doc = " One module per API group, one module per Kubernetes version inside it (each behind a cargo"]
        #![doc = " feature of the same name), and in each version the ARM payload types in `arm`."]
        #(
            #[rustfmt::skip]
            pub mod #group_mods;
        )*

        #[rustfmt::skip]
        mod registry;
        pub use registry::*;
    };
    finish(&header("//", sources, None), lib, "src/lib.rs")
}

/// One group's files: each version's ([`version_files`], the versions emitted in parallel and merged in order),
/// the conversions of every other version with custom resources to the hub, and `src/<group>/mod.rs`. Returns the
/// group's sections of `CONVERSIONS.md`.
fn group_files(
    files: &mut BTreeMap<PathBuf, String>,
    group: &str,
    versions: &[&VersionOutput<'_>],
    layout: CrateLayout<'_>,
) -> Result<String> {
    let hub = versions.first().and_then(|v| hub_of(v.group, versions.iter().copied()));
    let hub_feature = hub.map(|h| h.kube_version);
    let cost = |v: &&VersionOutput<'_>| v.ir.types.len();
    for emitted in par::map(versions, cost, |v| {
        let mut own = BTreeMap::new();
        version_files(&mut own, v, hub_feature, layout).map(|()| own)
    }) {
        files.extend(emitted?);
    }
    let mut group_convert = convert::group_normalize(versions);
    let mut report = String::new();
    if let Some(hub) = hub {
        let mut spokes = Vec::new();
        for v in versions
            .iter()
            .filter(|v| v.kube.is_some() && v.kube_version != hub.kube_version)
        {
            let head = header("//", &v.ir.spec_files, Some((&v.ir.api_version, v.kube_version)));
            let base = layout.version_dir(v.group, v.kube_version);
            let done = convert::spoke_files(files, v, hub, &head, &base, layout)?;
            report.push_str(&done.report);
            spokes.push((*v, done.kinds));
        }
        group_convert.extend(convert::group_convert(hub, &spokes));
    }
    let path = format!("src/{group}/mod.rs");
    let sources = spec_files(versions.iter().copied());
    let text = finish(
        &header("//", &sources, None),
        group_mod(versions, group_convert, layout),
        &path,
    )?;
    files.insert(PathBuf::from(&path), text);
    Ok(report)
}

/// `src/<group>/mod.rs`: one module per version, behind its feature, and the group's conversions.
fn group_mod(versions: &[&VersionOutput<'_>], group_convert: TokenStream, layout: CrateLayout<'_>) -> TokenStream {
    let provider = versions.first().map(|v| v.provider).unwrap_or_default();
    let version_mods = versions.iter().map(|v| {
        let m = format_ident!("{}", v.kube_version);
        let f = v.kube_version;
        let doc = format!(
            " ARM API version {} of `{}`{}.",
            v.ir.api_version,
            provider,
            if v.storage { " (storage version)" } else { "" }
        );
        match layout.version_crate(v.group, v.kube_version) {
            None => quote! {
                #[doc = #doc]
                #[cfg(feature = #f)]
                pub mod #m;
            },
            Some(name) => {
                let krate = output::crate_ident(&name);
                quote! {
                    #[doc = #doc]
                    #[cfg(feature = #f)]
                    pub use #krate as #m;
                }
            }
        }
    });
    let gdoc = format!(" `{provider}`: one module per Kubernetes version.");
    quote! {
        #![doc = #gdoc]
        #(#version_mods)*
        #group_convert
    }
}

/// `CONVERSIONS.md`: what converting each version to its hub does, from the groups' `sections`.
fn conversions_md(sections: &str) -> String {
    let mut text = String::from("<!-- ");
    text.push_str(header("", &[], None).trim());
    text.push_str(
        " -->\n# Version conversions\n\nWhat converting each version to its hub (storage) version does, per pair of \
         matching types. Properties one side lacks, and values the other side cannot hold, are kept in the \
         property bag (annotation `armgen.dev/property-bag`, keyed by JSON pointers with the hub's names) \
         and restored on the way back. Two versions that are not the hub convert through it, the bag carried \
         along, so each sees what it has of what the other wrote. A `float` and a `double` convert through their \
         shortest decimal representation (`0.1` stays `0.1`); a double no float has the decimal of is bagged.\n\n",
    );
    text.push_str(sections);
    text
}

/// One version's files: `src/<group>/<version>/mod.rs` (with its custom resources, conversion module and diffs),
/// `arm/mod.rs` (the module list, `RESOURCES`, `round_trip`) and one `arm/` file per module of the layout.
fn version_files(
    files: &mut BTreeMap<PathBuf, String>,
    v: &VersionOutput<'_>,
    hub: Option<&str>,
    layout: CrateLayout<'_>,
) -> Result<()> {
    let ir = v.ir;
    let head = header("//", &ir.spec_files, Some((&ir.api_version, v.kube_version)));
    let base = layout.version_dir(v.group, v.kube_version);
    let arm_dir = layout.arm_dir(v.group, v.kube_version);
    let api_version = &ir.api_version;
    let kube_items = match v.kube {
        Some(kube) => kube::version_files(files, v, kube, &head, &base)?,
        None => quote!(),
    };
    let arm_mod = match layout.arm_crate(v.group, v.kube_version) {
        None => quote!(
            pub mod arm;
        ),
        Some(name) => {
            let krate = output::crate_ident(&name);
            quote!(
                pub use #krate as arm;
            )
        }
    };
    let convert_mod = match hub {
        Some(hub) if v.kube.is_some() && hub != v.kube_version => quote! {
            /// Conversions to and from the hub (storage) version.
            #[cfg(feature = #hub)]
            pub mod convert;
        },
        _ => quote!(),
    };
    let diff_items = match v.kube {
        Some(kube) => diff::version_files(files, v, kube, &head, &base)?,
        None => quote!(),
    };
    let version_mod = quote! {
        #![doc = " Types for this Kubernetes version: the custom resources, and the ARM payload types in `arm`."]
        /// The ARM API version these types speak.
        pub const API_VERSION: &str = #api_version;
        #arm_mod
        #kube_items
        #convert_mod
        #diff_items
    };
    let path = format!("{base}/mod.rs");
    files.insert(PathBuf::from(&path), finish(&head, version_mod, &path)?);

    // A resource whose types all live in `shared` (two PUT paths with one body type) gets no file of its own.
    let modules: BTreeSet<String> = ir.types.values().map(|t| t.module.clone()).collect();
    let emitter = rust::Emitter::new(ir);
    for module in &modules {
        let path = format!("{arm_dir}/{module}.rs");
        let mut tokens = emitter.module(module)?;
        if module != SHARED_MODULE {
            let docs: Vec<String> = ir
                .resources
                .iter()
                .filter(|r| r.module == *module)
                .map(|r| format!(" ARM payload types of `{}` used by no other resource.", r.arm_type))
                .collect();
            tokens = quote!(#(#![doc = #docs])* #tokens);
        } else {
            tokens = quote!(#![doc = " ARM payload types used by more than one resource."] #tokens);
        }
        files.insert(PathBuf::from(&path), finish(&head, tokens, &path)?);
    }

    let mod_idents: Vec<_> = modules.iter().map(|m| format_ident!("{}", m)).collect();
    // Resources only: an action kind's ARM type is no payload of the wire (`crate::ir::ActionMeta`).
    let infos = ir.resources.iter().filter(|r| r.action.is_none()).map(|r| {
        let kind = &r.kind;
        let arm_type = &r.arm_type;
        let path = &r.path;
        let parents = &r.parents;
        let lro = r.long_running;
        let scope = registry::scope_tokens(&r.scope);
        quote! {
            armgen_runtime::ResourceInfo {
                kind: #kind,
                arm_type: #arm_type,
                api_version: #api_version,
                path: #path,
                parents: &[#(#parents),*],
                scope: #scope,
                long_running: #lro,
            },
        }
    });
    let arms = ir.resources.iter().filter(|r| r.action.is_none()).filter_map(|r| {
        let ty = ir.types.get(&r.body_type)?;
        let name = format_ident!("{}", ty.rust_name);
        let kind = &r.kind;
        Some(quote! {
            #kind => armgen_runtime::unknown::round_trip::<#name>(json),
        })
    });
    let arm_mod = quote! {
        #![doc = " ARM payload types: shaped exactly like the JSON on the wire."]
        #(mod #mod_idents; pub use #mod_idents::*;)*

        /// The resources of this API version, sorted by ARM type.
        pub const RESOURCES: &[armgen_runtime::ResourceInfo] = &[#(#infos)*];

        /// Reads `json` as the ARM payload of the resource `kind` and writes it back out, listing what the
        /// types do not model; `None` for a kind this API version does not have.
        pub fn round_trip(kind: &str, json: &str) -> Option<Result<armgen_runtime::RoundTrip, armgen_runtime::json::Error>> {
            Some(match kind {
                #(#arms)*
                _ => return None,
            })
        }
    };
    let path = format!("{arm_dir}/mod.rs");
    files.insert(PathBuf::from(&path), finish(&head, arm_mod, &path)?);
    Ok(())
}

/// `REPORT.md`: what was generated and every diagnostic, for reviewers; last, where each kind is stored.
pub fn report(versions: &[VersionOutput<'_>]) -> String {
    let mut out = String::from("<!-- ");
    out.push_str(&header("", &[], None).trim().replace('\n', " "));
    out.push_str(" -->\n# Generation report\n\n");
    for v in versions {
        let ir = v.ir;
        out.push_str(&format!(
            "## {} {} (ARM {})\n\n",
            v.group, v.kube_version, ir.api_version
        ));
        out.push_str(&format!("Spec files: {}\n\n", ir.spec_files.join(", ")));
        out.push_str("| kind | ARM type | long-running | module |\n| --- | --- | --- | --- |\n");
        for r in &ir.resources {
            out.push_str(&format!(
                "| {} | {} | {} | {} |\n",
                r.kind, r.arm_type, r.long_running, r.module
            ));
        }
        let views: Vec<(&str, &crate::ir::ViewMeta)> = ir
            .resources
            .iter()
            .flat_map(|r| r.views.iter().map(move |v| (r.kind.as_str(), v)))
            .collect();
        if !views.is_empty() {
            out.push_str("\nViews (read-only GETs kept in the status):\n\n");
            out.push_str("| kind | status field | GET | pageable | refresh (s) |\n| --- | --- | --- | --- | --- |\n");
            for (kind, v) in views {
                out.push_str(&format!(
                    "| {kind} | {} | {} | {} | {} |\n",
                    v.field, v.name, v.pageable, v.refresh_seconds
                ));
            }
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for t in ir.types.values() {
            *counts
                .entry(match t.kind {
                    crate::ir::TypeKind::Object(_) => "objects",
                    crate::ir::TypeKind::Enum(_) => "enums",
                    crate::ir::TypeKind::Union(_) => "unions",
                })
                .or_default() += 1;
        }
        let counts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
        out.push_str(&format!("\nTypes: {}.\n\n", counts.join(", ")));
        if ir.diagnostics.is_empty() {
            out.push_str("Diagnostics: none.\n\n");
        } else {
            out.push_str("Diagnostics:\n\n");
            for d in &ir.diagnostics {
                out.push_str(&format!("- `{}`: {}\n", d.at, d.message));
            }
            out.push('\n');
        }
    }
    let with_kube: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.kube.is_some()).collect();
    let stored = storage_versions(&with_kube);
    if !stored.is_empty() {
        out.push_str(
            "## Storage versions\n\nEach kind is stored (`storage: true` in its CRD) in its group's storage version; a \
             kind that version lacks is stored in the newest version that has it and is not a preview (a preview only \
             when no other version has it).\n\n| group | kind | stored in | why |\n| --- | --- | --- | --- |\n",
        );
        for ((group, kind), (version, why)) in &stored {
            out.push_str(&format!("| {group} | {kind} | {version} | {} |\n", why.describe()));
        }
        out.push('\n');
    }
    out
}
