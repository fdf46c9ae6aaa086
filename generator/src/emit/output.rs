//! The output types and helpers every emitter shares: [`VersionOutput`] (one generated version, what each emitter
//! reads), the generated-file [`header`], [`finish`] (header + formatted Rust), which version stores each kind
//! ([`storage_versions`]), and small token helpers. A leaf of `emit`: it names no emitter, so the emitters
//! (`convert`, `diff`, `kube`, `crd`, …) and the crate layout in `emit` can all use it.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::rust;
use crate::error::Result;
use crate::ir::Ir;

/// One generated API version: its place in the crate and its IR.
pub struct VersionOutput<'a> {
    pub group: &'a str,
    pub provider: &'a str,
    pub kube_version: &'a str,
    pub storage: bool,
    pub ir: &'a Ir,
    /// The Kubernetes shape; without it only the ARM types are emitted.
    pub kube: Option<&'a crate::shape::KubeIr>,
    /// `versions.<v>.renames`: `<Schema>.<jsonName>` → the property's JSON name in the hub.
    pub renames: &'a BTreeMap<String, String>,
}

/// Where each version's module tree goes (`output.versionCrates` in the config).
///
/// - [`One`](CrateLayout::One): inside the one crate, at `src/<group>/<version>/` (its `mod.rs` the version's
///   module); what a `build.rs` gets, and the single-file form always.
/// - [`PerVersion`](CrateLayout::PerVersion): a crate of its own per group version, `<crate>-<group>-<version>` at
///   `crates/<group>-<version>/`, whose `src/lib.rs` includes the same module tree from `src/mod.rs`, and one for
///   its ARM payload types, `<crate>-<group>-<version>-arm` at `crates/<group>-<version>-arm/`, which the version's
///   crate depends on and re-exports as its module `arm` (see [`arm_dir`](CrateLayout::arm_dir)); the main
///   crate re-exports each as `<group>::<version>` behind the version's feature, and keeps the registry and the
///   group-level dispatch. A spoke's crate depends on its hub's (for the conversions, behind a feature named after
///   the hub, as in the one crate), so the versions build in parallel and one changed version does not rebuild the
///   others.
///
/// Either way a version's files sit three folders below the package root of the main crate (`src/<group>/<version>/`
/// or `crates/<group>-<version>/src/`), so the kinds' `include_str!("../../../crds/…")` is the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrateLayout<'a> {
    One,
    PerVersion { crate_name: &'a str },
}

impl<'a> CrateLayout<'a> {
    /// The layout `output` asks for (`output.versionCrates`).
    pub fn of(output: &'a crate::config::OutputConfig) -> Self {
        if output.version_crates {
            CrateLayout::PerVersion {
                crate_name: &output.crate_name,
            }
        } else {
            CrateLayout::One
        }
    }

    /// The folder of the version's module tree (its `mod.rs` and submodules), relative to the output.
    pub fn version_dir(&self, group: &str, version: &str) -> String {
        match self {
            CrateLayout::One => format!("src/{group}/{version}"),
            CrateLayout::PerVersion { .. } => format!("{}/src", crate_dir(group, version)),
        }
    }

    /// The folder of the version's ARM payload types (the module `arm`): `<version dir>/arm`, or with a crate per
    /// version the `src/` of a crate of their own, `crates/<group>-<version>-arm/src`. They name nothing else of the
    /// version, so they build first and, as cargo pipelines crates, while the rest of the version is checked.
    pub fn arm_dir(&self, group: &str, version: &str) -> String {
        match self {
            CrateLayout::One => format!("src/{group}/{version}/arm"),
            CrateLayout::PerVersion { .. } => format!("{}-arm/src", crate_dir(group, version)),
        }
    }

    /// The package name of the version's ARM types' crate, when they have one.
    pub fn arm_crate(&self, group: &str, version: &str) -> Option<String> {
        self.version_crate(group, version).map(|name| format!("{name}-arm"))
    }

    /// The package name of the version's crate, when it has one.
    pub fn version_crate(&self, group: &str, version: &str) -> Option<String> {
        match self {
            CrateLayout::One => None,
            CrateLayout::PerVersion { crate_name } => Some(format!("{crate_name}-{group}-{version}")),
        }
    }

    /// The path of version `version`'s module as code in version `from` (of the same group) names it.
    pub fn version_path(&self, group: &str, version: &str, from: &str) -> TokenStream {
        match self.version_crate(group, version) {
            None => {
                let (g, v) = (format_ident!("{group}"), format_ident!("{version}"));
                quote!(crate::#g::#v)
            }
            Some(_) if version == from => quote!(crate),
            Some(name) => {
                let krate = crate_ident(&name);
                quote!(::#krate)
            }
        }
    }
}

/// The folder of a version's crate with [`CrateLayout::PerVersion`], relative to the output (its ARM types' crate is
/// the folder with `-arm` added, beside it).
pub(crate) fn crate_dir(group: &str, version: &str) -> String {
    format!("crates/{group}-{version}")
}

/// The name Rust code gives the crate of package `name`.
pub(crate) fn crate_ident(name: &str) -> proc_macro2::Ident {
    format_ident!("{}", name.replace('-', "_"))
}

pub const GENERATOR: &str = concat!("armgen ", env!("CARGO_PKG_VERSION"));

/// Why a kind is stored (`storage: true` in its CRD) in the version it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageReason {
    /// The group's storage (hub) version has the kind.
    GroupStorage,
    /// The storage version lacks the kind: the newest version that has it and is not a preview.
    NewestStable,
    /// The storage version lacks the kind and every version that has it is a preview: the newest of them.
    NewestPreview,
}

impl StorageReason {
    /// The reason in words, for `REPORT.md` and the CRD's notes.
    pub fn describe(self) -> &'static str {
        match self {
            StorageReason::GroupStorage => "the group's storage version",
            StorageReason::NewestStable => {
                "the storage version lacks the kind: the newest non-preview version that has it"
            }
            StorageReason::NewestPreview => {
                "the storage version lacks the kind and only previews have it: the newest of them"
            }
        }
    }
}

/// The storage version of a kind among the versions that have it, each given as (Kubernetes version, ARM API
/// version, whether it is the group's storage version): the group's storage version, else the newest
/// non-preview version (by ARM API version, then name), else the newest. Its index in `candidates` and why.
pub fn kind_storage(candidates: &[StorageCandidate<'_>]) -> Option<(usize, StorageReason)> {
    if let Some(i) = candidates.iter().position(|(_, _, storage)| *storage) {
        return Some((i, StorageReason::GroupStorage));
    }
    let newest = |preview_ok: bool| {
        candidates
            .iter()
            .enumerate()
            .filter(|(_, (_, api, _))| preview_ok || !api.contains("preview"))
            .max_by(|(_, (ka, a, _)), (_, (kb, b, _))| a.cmp(b).then(ka.cmp(kb)))
            .map(|(i, _)| i)
    };
    newest(false)
        .map(|i| (i, StorageReason::NewestStable))
        .or_else(|| newest(true).map(|i| (i, StorageReason::NewestPreview)))
}

/// A version that has a kind: (Kubernetes version, ARM API version, whether it is the group's storage version).
type StorageCandidate<'a> = (&'a str, &'a str, bool);

/// Per group and kind, the storage version ([`kind_storage`]) and why, over every version with custom resources.
pub fn storage_versions<'a>(versions: &[&VersionOutput<'a>]) -> BTreeMap<(&'a str, String), (&'a str, StorageReason)> {
    let mut candidates: BTreeMap<(&'a str, String), Vec<StorageCandidate<'a>>> = BTreeMap::new();
    for v in versions {
        // Only a served version can be a kind's storage version.
        for r in v.kube.iter().filter(|k| k.served).flat_map(|k| &k.resources) {
            candidates.entry((v.group, r.kind.clone())).or_default().push((
                v.kube_version,
                v.ir.api_version.as_str(),
                v.storage,
            ));
        }
    }
    candidates
        .into_iter()
        .filter_map(|(key, c)| kind_storage(&c).map(|(i, why)| (key, (c[i].0, why))))
        .collect()
}

/// The header every generated file starts with.
pub fn header(comment: &str, sources: &[String], api: Option<(&str, &str)>) -> String {
    let mut out =
        format!("{comment} Code generated by {GENERATOR}. DO NOT EDIT: run `cargo run -p armgen -- generate`.\n");
    for s in sources {
        out.push_str(&format!("{comment} Source: {s}\n"));
    }
    if let Some((api_version, kube)) = api {
        out.push_str(&format!(
            "{comment} ARM API version: {api_version} (Kubernetes version {kube})\n"
        ));
    }
    out
}

/// A generated Rust file: `header`, then `tokens` formatted (`what` names the file in errors).
pub(crate) fn finish(header: &str, tokens: proc_macro2::TokenStream, what: &str) -> Result<String> {
    Ok(format!("{header}\n{}", rust::format_file(tokens, what)?))
}

/// An `armgen_runtime::SecretExport` literal.
pub(crate) fn secret_export((name, e): &(String, crate::config::SecretExportConfig)) -> TokenStream {
    let (action, value, base64) = (&e.action, &e.value, e.base64);
    quote!(armgen_runtime::SecretExport { name: #name, action: #action, value_path: #value, base64: #base64 })
}
