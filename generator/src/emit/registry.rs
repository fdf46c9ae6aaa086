//! `src/registry.rs` of the generated crate: the dispatch over every generated group, version and kind — the ARM
//! round trip, and with the custom resources the registry a generic controller or simulator serves (`VERSIONS`,
//! `KINDS`, the rules, import and export, the CRDs, the diffs, the conversions).

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::output::{StorageReason, VersionOutput, finish, header, secret_export, storage_versions};
use crate::error::Result;

/// `src/registry.rs`: `arm_round_trip` for every version; with the custom resources, also the Kubernetes registry
/// ([`kube_registry`]) and, formatted apart, the conversion entry points ([`conversions`]).
pub(super) fn file(versions: &[VersionOutput<'_>], sources: &[String]) -> Result<String> {
    let path = "src/registry.rs";
    let kube_versions: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.kube.is_some()).collect();
    let dispatch = round_trip_dispatch(versions);
    let kube_registry = kube_registry(&kube_versions);
    let registry = quote! {
        #![doc = " Dispatch over every generated group, version and kind."]

        /// Reads `json` as the ARM payload of `kind` in API group `group`, Kubernetes version `version`, and
        /// writes it back out, listing what the types do not model; `None` when that group, version (or its feature) or kind does not exist.
        pub fn arm_round_trip(group: &str, version: &str, kind: &str, json: &str) -> Option<Result<armgen_runtime::RoundTrip, armgen_runtime::json::Error>> {
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
    let mut text = finish(&header("//", sources, None), registry, path)?;
    if !kube_versions.is_empty() {
        let extra = super::rust::format_file(conversions(versions), path)?;
        text.push('\n');
        text.push_str(&extra);
    }
    Ok(text)
}

/// The match arms of `arm_round_trip`: one per version, behind its feature.
fn round_trip_dispatch(versions: &[VersionOutput<'_>]) -> Vec<TokenStream> {
    versions
        .iter()
        .map(|v| {
            let g = v.group;
            let k = v.kube_version;
            let gm = format_ident!("{}", v.group);
            let km = format_ident!("{}", v.kube_version);
            quote! {
                #[cfg(feature = #k)]
                (#g, #k) => crate::#gm::#km::arm::round_trip(kind, json),
            }
        })
        .collect()
}

/// The Kubernetes registry of the versions with custom resources (nothing when there are none): `VERSIONS`,
/// `KINDS`, `RULES_JSON` and `rules`, `import_custom_resource`, `export_custom_resource`,
/// `custom_resource_definition` and the diff registry.
fn kube_registry(kube_versions: &[&VersionOutput<'_>]) -> TokenStream {
    if kube_versions.is_empty() {
        return quote!();
    }
    let version_infos = version_infos(kube_versions);
    let stored = storage_versions(kube_versions);
    let kind_infos: Vec<TokenStream> = kube_versions.iter().filter_map(|v| kind_infos(v, &stored)).collect();
    let action_infos: Vec<TokenStream> = kube_versions.iter().filter_map(|v| action_infos(v, &stored)).collect();
    let view_infos: Vec<TokenStream> = kube_versions.iter().filter_map(|v| view_infos(v)).collect();
    let contract_infos: Vec<TokenStream> = kube_versions.iter().filter_map(|v| contract_infos(v)).collect();
    let (import_dispatch, export_dispatch) = import_export_dispatch(kube_versions);
    let crd_lookups = crd_lookups(kube_versions);
    let diff_registry = super::diff::registry(kube_versions);
    quote! {
        /// Every generated Kubernetes version with custom resources (those whose feature is on).
        pub const VERSIONS: &[armgen_runtime::VersionInfo] = &[#(#version_infos)*];

        /// Every generated custom resource kind of every version (those whose feature is on), with its ARM
        /// resource: the registry a generic controller or simulator serves.
        pub const KINDS: &[armgen_runtime::KindInfo] = &[#(#kind_infos)*];

        /// Every generated action kind of every version (those whose feature is on): a custom resource that runs
        /// one ARM POST action on its owner once. Not in [`KINDS`], which are the resources.
        pub const ACTIONS: &[armgen_runtime::ActionInfo] = &[#(#action_infos)*];

        /// Every view of every resource kind of every version (those whose feature is on): a read-only ARM GET
        /// under the resource whose typed response the reconciler keeps in the resource's status.
        pub const VIEWS: &[armgen_runtime::ViewInfo] = &[#(#view_infos)*];

        /// Every resource kind of every version (those whose feature is on) that implements a Cluster API provider
        /// contract, with where its contract fields come from (`kubernetes.resources.<Kind>.clusterApi`).
        pub const CLUSTER_API: &[armgen_runtime::capi::ContractInfo] = &[#(#contract_infos)*];

        /// Every custom resource kind that is reconciled: the resources ([`KINDS`]), then the action kinds
        /// ([`ACTIONS`]).
        pub fn every_kind() -> impl Iterator<Item = &'static armgen_runtime::KindInfo> {
            KINDS.iter().chain(ACTIONS.iter().map(|a| &a.kind))
        }

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
        pub fn import_custom_resource(group: &str, version: &str, kind: &str, arm_json: &str, name: &str, namespace: Option<&str>) -> Option<Result<serde_json::Value, armgen_runtime::json::Error>> {
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
}

/// The match arms of `import_custom_resource` and of `export_custom_resource`: one per version, behind its
/// feature.
fn import_export_dispatch(kube_versions: &[&VersionOutput<'_>]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let import = kube_versions.iter().map(|v| {
        let (g, k) = (v.group, v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::import(kind, arm_json, name, namespace),
        }
    });
    let export = kube_versions.iter().map(|v| {
        let (g, k) = (v.group, v.kube_version);
        let (gm, km) = (format_ident!("{}", v.group), format_ident!("{}", v.kube_version));
        quote! {
            #[cfg(feature = #k)]
            (#g, #k) => crate::#gm::#km::export(kind, custom_resource, resolver),
        }
    });
    (import.collect(), export.collect())
}

/// The `VERSIONS` entries: one `VersionInfo` per version, behind its feature.
fn version_infos(kube_versions: &[&VersionOutput<'_>]) -> Vec<TokenStream> {
    kube_versions
        .iter()
        .filter_map(|v| {
            let kube = v.kube?;
            let (g, k, a, st, sv) = (v.group, v.kube_version, v.ir.api_version.as_str(), v.storage, kube.served);
            let kg = kube.group.as_str();
            let kinds = kube.resources.iter().filter(|r| r.action.is_none()).map(|r| r.kind.as_str());
            Some(quote! {
                #[cfg(feature = #k)]
                armgen_runtime::VersionInfo { group: #g, kube_group: #kg, version: #k, api_version: #a, storage: #st, served: #sv, kinds: &[#(#kinds),*] },
            })
        })
        .collect()
}

/// Where each kind is stored: `(group, kind)` → (version, why), as [`storage_versions`] finds it.
type Stored<'a> = std::collections::BTreeMap<(&'a str, String), (&'a str, StorageReason)>;

/// The `KINDS` entries of one version: a `KindInfo` per custom resource with its ARM resource, each behind the
/// version's feature; `None` for a version without custom resources.
fn kind_infos(v: &VersionOutput<'_>, stored: &Stored<'_>) -> Option<TokenStream> {
    let kube = v.kube?;
    let (g, k) = (v.group, v.kube_version);
    let kg = kube.group.as_str();
    let rows: Vec<TokenStream> = kube
        .resources
        .iter()
        .filter(|r| r.action.is_none())
        .filter_map(|r| {
            let arm = v.ir.resources.iter().find(|a| a.arm_type == r.arm_type)?;
            let (kind, plural) = (r.kind.as_str(), r.plural.as_str());
            let st = stored.get(&(g, r.kind.clone())).is_some_and(|(s, _)| *s == k);
            let served = kube.served;
            let owner = match &r.owner {
                crate::shape::Owner::Parent(p) => quote!(Some(#p)),
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
}

/// The `ACTIONS` entries of one version: an `ActionInfo` per action kind, its `kind.arm` the target resource's,
/// each behind the version's feature; `None` for a version without custom resources.
fn action_infos(v: &VersionOutput<'_>, stored: &Stored<'_>) -> Option<TokenStream> {
    let kube = v.kube?;
    let (g, k) = (v.group, v.kube_version);
    let kg = kube.group.as_str();
    let rows: Vec<TokenStream> = kube
        .resources
        .iter()
        .filter_map(|r| {
            let action = r.action.as_ref()?;
            let own = v.ir.resources.iter().find(|a| a.arm_type == r.arm_type)?;
            let target = v.ir.resources.iter().find(|a| a.kind == action.target && a.action.is_none())?;
            let (kind, plural, target_kind) = (r.kind.as_str(), r.plural.as_str(), target.kind.as_str());
            let st = stored.get(&(g, r.kind.clone())).is_some_and(|(s, _)| *s == k);
            let served = kube.served;
            let (arm_type, api_version, path, lro) =
                (&target.arm_type, v.ir.api_version.as_str(), &target.path, target.long_running);
            let parents = &target.parents;
            let scope = scope_tokens(&target.scope);
            let (name, post, post_lro, body, result) =
                (&action.name, &own.path, own.long_running, action.body, action.result);
            let statuses = &action.statuses;
            Some(quote! {
                armgen_runtime::ActionInfo {
                    kind: armgen_runtime::KindInfo {
                        group: #g, kube_group: #kg, version: #k, kind: #kind, plural: #plural, storage: #st, served: #served,
                        owner_kind: Some(#target_kind),
                        name_format: armgen_runtime::NameFormat::Any,
                        secret_exports: &[],
                        config_map_exports: &[],
                        arm: armgen_runtime::ResourceInfo {
                            kind: #target_kind, arm_type: #arm_type, api_version: #api_version, path: #path,
                            parents: &[#(#parents),*], scope: #scope, long_running: #lro,
                        },
                    },
                    action: #name, path: #post, long_running: #post_lro, body: #body, result: #result,
                    statuses: &[#(#statuses),*],
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
}

/// The `VIEWS` entries of one version, each behind the version's feature; `None` for a version without custom
/// resources.
fn view_infos(v: &VersionOutput<'_>) -> Option<TokenStream> {
    v.kube?;
    let (g, k) = (v.group, v.kube_version);
    let rows: Vec<TokenStream> =
        v.ir.resources
            .iter()
            .flat_map(|r| r.views.iter().map(move |view| (r, view)))
            .map(|(r, view)| {
                let kind = r.kind.as_str();
                let (field, name, route, pageable) = (&view.field, &view.name, &view.path, view.pageable);
                let refresh = proc_macro2::Literal::u64_unsuffixed(view.refresh_seconds);
                quote! {
                    armgen_runtime::ViewInfo {
                        group: #g, version: #k, kind: #kind, field: #field, path: #name, route: #route,
                        pageable: #pageable, refresh_seconds: #refresh,
                    },
                }
            })
            .collect();
    Some(quote! {
        #(
            #[cfg(feature = #k)]
            #rows
        )*
    })
}

/// The `CLUSTER_API` entries of one version, each behind the version's feature; `None` for a version without
/// custom resources. The spec fields the contract sets (the version, the replicas) are the kind's spec fields that
/// mirror the configured ARM paths.
fn contract_infos(v: &VersionOutput<'_>) -> Option<TokenStream> {
    let kube = v.kube?;
    let (g, k) = (v.group, v.kube_version);
    let rows: Vec<TokenStream> = kube
        .resources
        .iter()
        .filter_map(|r| r.cluster_api.as_ref().map(|c| (r, c)))
        .map(|(r, c)| {
            let kind = r.kind.as_str();
            let spec_field = |arm_path: Option<&String>| -> TokenStream {
                let found = arm_path.and_then(|p| {
                    r.spec_fields
                        .iter()
                        .find(|f| f.special == crate::shape::Special::None && f.arm_path.join(".") == *p)
                        .map(|f| f.json_name.clone())
                });
                option_str(found.as_deref())
            };
            let role = match c.role {
                crate::config::ClusterApiRole::ControlPlane => quote!(armgen_runtime::capi::Role::ControlPlane),
                crate::config::ClusterApiRole::MachinePool => quote!(armgen_runtime::capi::Role::MachinePool),
                crate::config::ClusterApiRole::InfrastructureCluster => {
                    quote!(armgen_runtime::capi::Role::InfrastructureCluster)
                }
            };
            let source = &c.source;
            let hosts: Vec<&String> = c.endpoint.iter().flat_map(|e| &e.hosts).collect();
            let port = proc_macro2::Literal::u16_unsuffixed(c.endpoint.as_ref().map(|e| e.port).unwrap_or(0));
            let version_status = option_str(c.version.as_ref().map(|v| v.status.as_str()));
            let version_spec_field = spec_field(c.version.as_ref().map(|v| &v.spec));
            let kubeconfig = option_str(c.kubeconfig.as_deref());
            let replicas = option_str(c.replicas.as_deref());
            let replicas_spec_field = spec_field(c.replicas.as_ref());
            let ids = c.provider_ids.as_ref();
            let ids_view = option_str(ids.map(|i| i.view.as_str()));
            let ids_id = option_str(ids.map(|i| i.id.as_str()));
            let ids_prefix = ids.map(|i| i.prefix.as_str()).unwrap_or_default();
            quote! {
                armgen_runtime::capi::ContractInfo {
                    group: #g, version: #k, kind: #kind, role: #role, source: #source,
                    endpoint_hosts: &[#(#hosts),*], endpoint_port: #port,
                    version_status: #version_status, version_spec_field: #version_spec_field,
                    kubeconfig: #kubeconfig,
                    replicas: #replicas, replicas_spec_field: #replicas_spec_field,
                    provider_ids_view: #ids_view, provider_ids_id: #ids_id, provider_ids_prefix: #ids_prefix,
                },
            }
        })
        .collect();
    Some(quote! {
        #(
            #[cfg(feature = #k)]
            #rows
        )*
    })
}

/// `Some("…")` or `None`, as tokens.
fn option_str(s: Option<&str>) -> TokenStream {
    match s {
        Some(s) => quote!(Some(#s)),
        None => quote!(None),
    }
}

/// The lookups of `custom_resource_definition`: one per kind (and kind template) of each version, behind its
/// feature.
fn crd_lookups(kube_versions: &[&VersionOutput<'_>]) -> Vec<TokenStream> {
    kube_versions
        .iter()
        .filter_map(|v| {
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
        })
        .collect()
}

/// The conversion entry points (`convert_custom_resource`, `normalize_custom_resource`) and the webhook's
/// converter: each group with custom resources normalizes through its module, each group with a hub (a
/// storage version with custom resources) converts through it, behind the hub's feature.
fn conversions(versions: &[VersionOutput<'_>]) -> TokenStream {
    let groups: std::collections::BTreeSet<&str> = versions.iter().map(|v| v.group).collect();
    let mut convert_dispatch = Vec::new();
    let mut normalize_dispatch = Vec::new();
    for group in groups {
        let in_group: Vec<&VersionOutput<'_>> = versions.iter().filter(|v| v.group == group).collect();
        let g = format_ident!("{}", group);
        if let Some(kube) = in_group.iter().find_map(|v| v.kube) {
            let kube_group = kube.group.as_str();
            normalize_dispatch.push(quote! {
                #kube_group => crate::#g::normalize(object),
            });
        }
        if let Some(hub) = in_group.iter().find(|v| v.storage && v.kube.is_some()) {
            let kube_group = hub.kube.map(|k| k.group.clone()).unwrap_or_default();
            let hub_version = hub.kube_version;
            convert_dispatch.push(quote! {
                #[cfg(feature = #hub_version)]
                #kube_group => crate::#g::convert(object, desired_api_version),
            });
        }
    }
    quote! {
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
    }
}

/// `armgen_runtime::Scope::…` for a discovered scope.
pub(super) fn scope_tokens(scope: &crate::discover::Scope) -> TokenStream {
    match scope {
        crate::discover::Scope::ResourceGroup => quote!(armgen_runtime::Scope::ResourceGroup),
        crate::discover::Scope::Subscription => quote!(armgen_runtime::Scope::Subscription),
        crate::discover::Scope::Extension => quote!(armgen_runtime::Scope::Extension),
        crate::discover::Scope::Tenant => quote!(armgen_runtime::Scope::Tenant),
    }
}
