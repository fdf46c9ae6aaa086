//! Pass **emit**: the generated crate as a map from relative path to file contents.
//!
//! Layout (for group `containerservice`, version `v2alpha1`):
//!
//! ```text
//! Cargo.toml                                   features: one per Kubernetes version
//! REPORT.md                                    resources, type counts and diagnostics per version
//! src/lib.rs
//! src/containerservice/mod.rs                  #[cfg(feature = "v2alpha1")] pub mod v2alpha1;
//! src/containerservice/v2alpha1/mod.rs         API_VERSION, pub mod arm
//! src/containerservice/v2alpha1/arm/mod.rs     module list, RESOURCES, round_trip
//! src/containerservice/v2alpha1/arm/<resource>.rs   types used by one resource only
//! src/containerservice/v2alpha1/arm/shared.rs  types used by several resources
//! crds/<plural>.<group>.yaml, crds/kustomization.yaml   CRD manifests (`crd`)
//! rbac/role.yaml, rbac/kustomization.yaml      the ClusterRole on the reconciled kinds (`rbac`)
//! ```

pub mod convert;
pub mod crd;
pub mod diff;
pub mod fit;
pub mod kube;
mod output;
pub mod par;
pub mod rbac;
pub mod rust;
pub mod uses;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub use output::{GENERATOR, StorageReason, VersionOutput, header, kind_storage, storage_versions};
use output::{finish, secret_export};

use crate::error::Result;
use crate::passes::layout::SHARED_MODULE;

/// Emits the whole crate.
pub fn crate_files(
    crate_name: &str,
    description: &str,
    versions: &[VersionOutput<'_>],
) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = BTreeMap::new();
    let all_sources: Vec<String> = {
        let set: BTreeSet<String> = versions.iter().flat_map(|v| v.ir.spec_files.iter().cloned()).collect();
        set.into_iter().collect()
    };
    let groups: BTreeSet<&str> = versions.iter().map(|v| v.group).collect();

    // Cargo.toml
    let mut cargo = header("#", &all_sources, None);
    cargo.push_str(&format!(
        "[package]\nname = \"{crate_name}\"\ndescription = \"{description}\"\nedition.workspace = true\nversion.workspace = true\nlicense.workspace = true\nrust-version.workspace = true\n\n"
    ));
    cargo.push_str("[dependencies]\narmgen-runtime.workspace = true\nk8s-openapi.workspace = true\nkube-core.workspace = true\nserde.workspace = true\nserde_json.workspace = true\nserde_yaml_ng.workspace = true\n\n[features]\n");
    let features: BTreeSet<&str> = versions.iter().map(|v| v.kube_version).collect();
    let default: Vec<String> = features.iter().map(|f| format!("\"{f}\"")).collect();
    cargo.push_str(&format!("default = [{}]\n", default.join(", ")));
    for f in &features {
        cargo.push_str(&format!("{f} = []\n"));
    }
    files.insert(PathBuf::from("Cargo.toml"), cargo);

    // src/lib.rs
    let group_mods = groups.iter().map(|g| format_ident!("{}", g));
    let dispatch = versions.iter().map(|v| {
        let g = v.group;
        let k = v.kube_version;
        let gm = format_ident!("{}", v.group);
        let km = format_ident!("{}", v.kube_version);
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::arm::round_trip(kind, json),
        }
    });
    let kube_versions: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.kube.is_some()).collect();
    let import_dispatch = kube_versions.iter().map(|v| {
        let (g, k) = (v.group, v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::import(kind, arm_json, name, namespace),
        }
    });
    let export_dispatch = kube_versions.iter().map(|v| {
        let (g, k) = (v.group, v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::export(kind, custom_resource, resolver),
        }
    });
    let version_infos = kube_versions.iter().filter_map(|v| {
        let kube = v.kube?;
        let (g, k, a, st, sv) = (v.group, v.kube_version, v.ir.api_version.as_str(), v.storage, kube.served);
        let kg = kube.group.as_str();
        let kinds = kube.resources.iter().map(|r| r.kind.as_str());
        Some(quote! {
            #[cfg(feature = #k)]
            armgen_runtime::VersionInfo { group: #g, kube_group: #kg, version: #k, api_version: #a, storage: #st, served: #sv, kinds: &[#(#kinds),*] },
        })
    });
    let stored = storage_versions(&kube_versions);
    let kind_infos = kube_versions.iter().filter_map(|v| {
        let kube = v.kube?;
        let (g, k) = (v.group, v.kube_version);
        let kg = kube.group.as_str();
        let rows: Vec<TokenStream> = kube
            .resources
            .iter()
            .filter_map(|r| {
                let arm = v.ir.resources.iter().find(|a| a.arm_type == r.arm_type)?;
                let (kind, plural) = (r.kind.as_str(), r.plural.as_str());
                let st = stored.get(&(g, r.kind.clone())).is_some_and(|(s, _)| *s == k);
                let served = kube.served;
                let owner = match &r.owner {
                    crate::kube::Owner::Parent(p) => quote!(Some(#p)),
                    _ => quote!(None),
                };
                let secrets = r.exports.secrets.iter().map(secret_export);
                let maps = r.exports.config_maps.iter().map(|(n, p)| quote!((#n, #p)));
                let (arm_type, api_version, path, lro) =
                    (&arm.arm_type, v.ir.api_version.as_str(), &arm.path, arm.long_running);
                let parents = &arm.parents;
                let scope = scope_tokens(&arm.scope);
                let name_format = if r.uuid_name {
                    quote!(armgen_runtime::NameFormat::Uuid)
                } else {
                    quote!(armgen_runtime::NameFormat::Any)
                };
                Some(quote! {
                    armgen_runtime::KindInfo {
                        group: #g, kube_group: #kg, version: #k, kind: #kind, plural: #plural, storage: #st, served: #served,
                        owner_kind: #owner,
                        name_format: #name_format,
                        secret_exports: &[#(#secrets),*],
                        config_map_exports: &[#(#maps),*],
                        arm: armgen_runtime::ResourceInfo {
                            kind: #kind, arm_type: #arm_type, api_version: #api_version, path: #path,
                            parents: &[#(#parents),*], scope: #scope, long_running: #lro,
                        },
                    },
                })
            })
            .collect();
        Some(quote! {
            #(
                #[cfg(feature = #k)]
                #rows
            )*
        })
    });
    let diff_registry = diff::registry(&kube_versions);
    let crd_lookups = kube_versions.iter().filter_map(|v| {
        let kube = v.kube?;
        let (kg, k) = (kube.group.as_str(), v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        let names: Vec<String> = kube
            .resources
            .iter()
            .flat_map(|r| {
                let mut names = vec![r.kind.clone()];
                if r.template {
                    names.push(format!("{}Template", r.kind));
                }
                names
            })
            .collect();
        let types = names.iter().map(|n| format_ident!("{}", n));
        Some(quote! {
            #(
                #[cfg(feature = #k)]
                if (kube_group, kind) == (#kg, #names) {
                    return Some(crate::#gm::#km::#types::crd());
                }
            )*
        })
    });
    let kube_registry = if kube_versions.is_empty() {
        quote!()
    } else {
        quote! {
            /// Every generated Kubernetes version with custom resources (those whose feature is on).
            pub const VERSIONS: &[armgen_runtime::VersionInfo] = &[#(#version_infos)*];

            /// Every generated custom resource kind of every version (those whose feature is on), with its ARM
            /// resource: the registry a generic controller or simulator serves.
            pub const KINDS: &[armgen_runtime::KindInfo] = &[#(#kind_infos)*];

            /// What the services do that their specs do not say (`rules.json`, generated from the config's
            /// `kubernetes.errors`, `childOwned`, `ownerGate` and `immutable` entries and the specs'
            /// `x-ms-mutability`): the document the reconciler and the simulator act on.
            pub const RULES_JSON: &str = include_str!("../rules.json");

            /// [`RULES_JSON`], parsed.
            pub fn rules() -> Result<armgen_runtime::rules::Rules, String> {
                armgen_runtime::rules::Rules::from_json(RULES_JSON)
            }

            /// Imports an ARM payload of `kind` as a custom resource (JSON) of API group `group`, Kubernetes
            /// version `version`; `None` when that group, version (or its feature) or kind does not exist.
            pub fn import_custom_resource(group: &str, version: &str, kind: &str, arm_json: &str, name: &str, namespace: Option<&str>) -> Option<Result<serde_json::Value, serde_json::Error>> {
                match (group, version) {
                    #(#import_dispatch)*
                    _ => {
                        let _ = (kind, arm_json, name, namespace);
                        None
                    }
                }
            }

            /// The ARM PUT body of a custom resource (JSON) of `kind`, references resolved by `resolver`; `None`
            /// when that group, version (or its feature) or kind does not exist.
            pub fn export_custom_resource(group: &str, version: &str, kind: &str, custom_resource: &serde_json::Value, resolver: &dyn armgen_runtime::kube::Resolver) -> Option<Result<serde_json::Value, armgen_runtime::kube::ConversionError>> {
                match (group, version) {
                    #(#export_dispatch)*
                    _ => {
                        let _ = (kind, custom_resource, resolver);
                        None
                    }
                }
            }

            /// The CustomResourceDefinition of `kind` (all its versions) in the Kubernetes API group `kube_group`;
            /// `None` when no version (whose feature is on) has that kind.
            pub fn custom_resource_definition(kube_group: &str, kind: &str) -> Option<Result<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition, serde_yaml_ng::Error>> {
                #(#crd_lookups)*
                let _ = (kube_group, kind);
                None
            }

            #diff_registry
        }
    };
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
    files.insert(
        PathBuf::from("src/lib.rs"),
        finish(&header("//", &all_sources, None), lib, "src/lib.rs")?,
    );
    let registry = quote! {
        #![doc = " Dispatch over every generated group, version and kind."]

        /// Reads `json` as the ARM payload of `kind` in API group `group`, Kubernetes version `version`, and
        /// writes it back out, listing what the types do not model; `None` when that group, version (or its feature) or kind does not exist.
        pub fn arm_round_trip(group: &str, version: &str, kind: &str, json: &str) -> Option<Result<armgen_runtime::RoundTrip, serde_json::Error>> {
            match (group, version) {
                #(#dispatch)*
                _ => {
                    let _ = (kind, json);
                    None
                }
            }
        }

        #kube_registry
    };
    files.insert(
        PathBuf::from("src/registry.rs"),
        finish(&header("//", &all_sources, None), registry, "src/registry.rs")?,
    );

    let mut conversions_report = String::new();
    let mut convert_dispatch = Vec::new();
    let mut normalize_dispatch = Vec::new();
    for group in &groups {
        let in_group: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.group == *group).collect();
        let provider = in_group.first().map(|v| v.provider).unwrap_or_default();
        let sources: Vec<String> = {
            let set: BTreeSet<String> = in_group.iter().flat_map(|v| v.ir.spec_files.iter().cloned()).collect();
            set.into_iter().collect()
        };
        let version_mods = in_group.iter().map(|v| {
            let m = format_ident!("{}", v.kube_version);
            let f = v.kube_version;
            let doc = format!(
                " ARM API version {} of `{}`{}.",
                v.ir.api_version,
                provider,
                if v.storage { " (storage version)" } else { "" }
            );
            quote! {
                #[doc = #doc]
                #[cfg(feature = #f)]
                pub mod #m;
            }
        });
        // The hub: the storage version, when it has custom resources; every other version converts to it.
        let hub = in_group.iter().find(|v| v.storage && v.kube.is_some()).copied();
        let hub_feature = hub.map(|h| h.kube_version);
        // Versions are independent: emitted in parallel, merged in order.
        let cost = |v: &&VersionOutput<'_>| v.ir.types.len();
        for emitted in par::map(&in_group, cost, |v| {
            let mut own = BTreeMap::new();
            version_files(&mut own, v, hub_feature).map(|()| own)
        }) {
            files.extend(emitted?);
        }
        let mut group_convert = convert::group_normalize(&in_group);
        if let Some(kube) = in_group.iter().find_map(|v| v.kube) {
            let kube_group = kube.group.as_str();
            let g = format_ident!("{}", group);
            normalize_dispatch.push(quote! {
                #kube_group => crate::#g::normalize(object),
            });
        }
        if let Some(hub) = hub {
            let mut spokes = Vec::new();
            for v in in_group
                .iter()
                .filter(|v| v.kube.is_some() && v.kube_version != hub.kube_version)
            {
                let head = header("//", &v.ir.spec_files, Some((&v.ir.api_version, v.kube_version)));
                let base = format!("src/{}/{}", v.group, v.kube_version);
                let done = convert::spoke_files(&mut files, v, hub, &head, &base)?;
                conversions_report.push_str(&done.report);
                spokes.push((*v, done.kinds));
            }
            group_convert.extend(convert::group_convert(hub, &spokes));
            let kube_group = hub.kube.map(|k| k.group.clone()).unwrap_or_default();
            let g = format_ident!("{}", group);
            let hub_version = hub.kube_version;
            convert_dispatch.push(quote! {
                #[cfg(feature = #hub_version)]
                #kube_group => crate::#g::convert(object, desired_api_version),
            });
        }
        let gdoc = format!(" `{provider}`: one module per Kubernetes version.");
        let group_mod = quote! {
            #![doc = #gdoc]
            #(#version_mods)*
            #group_convert
        };
        let path = format!("src/{group}/mod.rs");
        files.insert(
            PathBuf::from(&path),
            finish(&header("//", &sources, None), group_mod, &path)?,
        );
    }
    if !conversions_report.is_empty() {
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
        text.push_str(&conversions_report);
        files.insert(PathBuf::from("CONVERSIONS.md"), text);
    }
    // The registry's conversion entry point, and the webhook's converter.
    let registry_convert = quote! {
        /// Converts a custom resource (JSON) to `desired_api_version` (`group/version`) through its group's hub,
        /// as the conversion webhook does; an object already at that version comes back unchanged.
        pub fn convert_custom_resource(object: serde_json::Value, desired_api_version: &str) -> Result<serde_json::Value, armgen_runtime::kube::ConversionError> {
            let group = desired_api_version.split_once('/').map(|(g, _)| g).unwrap_or_default();
            match group {
                #(#convert_dispatch)*
                _ => {
                    // (Unused here when no group's hub feature is enabled.)
                    drop(object);
                    Err(armgen_runtime::kube::ConversionError {
                        path: "desiredAPIVersion".into(),
                        message: format!("{desired_api_version:?} is not a version this crate converts (its group, or the group's hub feature, is missing)"),
                    })
                }
            }
        }

        /// Reads a custom resource (JSON) into the types of its version and writes it back, as a conversion writes
        /// objects of that version (known enum values in the spec's spelling, numbers as their types write them).
        pub fn normalize_custom_resource(object: serde_json::Value) -> Result<serde_json::Value, armgen_runtime::kube::ConversionError> {
            let api_version = object.get("apiVersion").and_then(serde_json::Value::as_str).unwrap_or_default();
            let group = api_version.split_once('/').map(|(g, _)| g).unwrap_or_default();
            match group {
                #(#normalize_dispatch)*
                _ => Err(armgen_runtime::kube::ConversionError {
                    path: "apiVersion".into(),
                    message: format!("{api_version:?} is not a version of a group of this crate"),
                }),
            }
        }

        /// The converter the conversion webhook calls ([`convert_custom_resource`]).
        #[derive(Debug, Clone, Copy, Default)]
        pub struct Converter;

        impl armgen_runtime::conversion::Converter for Converter {
            fn convert(&self, object: serde_json::Value, desired_api_version: &str) -> Result<serde_json::Value, armgen_runtime::kube::ConversionError> {
                convert_custom_resource(object, desired_api_version)
            }
        }
    };
    let registry_path = PathBuf::from("src/registry.rs");
    if let Some(text) = files
        .get_mut(&registry_path)
        .filter(|_| versions.iter().any(|v| v.kube.is_some()))
    {
        let tokens: TokenStream = registry_convert;
        let extra = rust::format_file(tokens, "src/registry.rs")?;
        text.push('\n');
        text.push_str(&extra);
    }
    Ok(files)
}

fn version_files(files: &mut BTreeMap<PathBuf, String>, v: &VersionOutput<'_>, hub: Option<&str>) -> Result<()> {
    let ir = v.ir;
    let head = header("//", &ir.spec_files, Some((&ir.api_version, v.kube_version)));
    let base = format!("src/{}/{}", v.group, v.kube_version);
    let api_version = &ir.api_version;
    let kube_items = match v.kube {
        Some(kube) => kube::version_files(files, v, kube, &head, &base)?,
        None => quote!(),
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
        pub mod arm;
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
        let path = format!("{base}/arm/{module}.rs");
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
    let infos = ir.resources.iter().map(|r| {
        let kind = &r.kind;
        let arm_type = &r.arm_type;
        let path = &r.path;
        let parents = &r.parents;
        let lro = r.long_running;
        let scope = scope_tokens(&r.scope);
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
    let arms = ir.resources.iter().filter_map(|r| {
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
        pub fn round_trip(kind: &str, json: &str) -> Option<Result<armgen_runtime::RoundTrip, serde_json::Error>> {
            Some(match kind {
                #(#arms)*
                _ => return None,
            })
        }
    };
    let path = format!("{base}/arm/mod.rs");
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

/// `armgen_runtime::Scope::…` for a discovered scope.
fn scope_tokens(scope: &crate::discover::Scope) -> TokenStream {
    match scope {
        crate::discover::Scope::ResourceGroup => quote!(armgen_runtime::Scope::ResourceGroup),
        crate::discover::Scope::Subscription => quote!(armgen_runtime::Scope::Subscription),
        crate::discover::Scope::Extension => quote!(armgen_runtime::Scope::Extension),
        crate::discover::Scope::Tenant => quote!(armgen_runtime::Scope::Tenant),
    }
}
