//! Runtime support shared by armgen-generated code (`aks-api`) and the tools built on it.
//!
//! What is here is what every generated file needs: resource metadata, reading and writing JSON ([`json`]: the
//! [`json_object!`] and [`json_union!`] invocations the generator writes instead of serde's derives), the
//! generated enums' mechanics ([`open_enum!`] and [`closed_enum!`], in [`enums`]) and the error for an unknown value of a closed enum, and
//! [`Nullable`] for properties where `null` differs from absent; change detection in [`diff`]; one JSON-pointer
//! ([`pointer`](mod@pointer)) and one dotted-path ([`dotted`]) implementation for every crate.
//!
//! It may not depend on any other workspace crate: the generated crate, the generator's `build.rs` users and the
//! tools all depend on it, so it is the bottom of the graph (README, "Architecture").

pub mod capi;
pub mod conversion;
pub mod diff;
pub mod dotted;
pub mod enums;
pub mod exports;
pub mod hub;
pub mod json;
pub mod kube;
pub mod nullable;
pub mod pointer;
pub mod rules;
#[cfg(feature = "sample")]
pub mod sample;
pub mod unknown;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use nullable::Nullable;
pub use unknown::{RoundTrip, UnknownFields};

/// Escapes one JSON-pointer segment (`~` → `~0`, `/` → `~1`): [`pointer::escape`], under the name the crate
/// has always exported it by.
pub use pointer::escape as escape_pointer;

/// Where an ARM resource lives, from its PUT path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// In a resource group (`/subscriptions/{s}/resourceGroups/{rg}/providers/…`), or a child of such a resource.
    ResourceGroup,
    /// In a subscription (`/subscriptions/{s}/providers/…`, and resource groups themselves).
    Subscription,
    /// An extension resource on any other resource (`/{scope}/providers/…`, e.g. role assignments): its scope is
    /// an ARM ID.
    Extension,
    /// Outside any subscription (`/providers/…`).
    Tenant,
}

/// What an Azure resource name must look like, beyond ARM's rules for a path segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameFormat {
    /// Any valid segment.
    Any,
    /// A UUID (role assignments): when `spec.azureName` is unset the name is derived from the object (see
    /// [`derived_uuid_name`]), so re-applying the object never creates a second resource.
    Uuid,
}

/// The Azure name of a resource whose names must be UUIDs, for an object without `spec.azureName`: a version 5
/// (SHA-1, name-based) UUID of `<kube group>/<kind>/<namespace>/<name>` in the URL namespace of RFC 4122, so the
/// same object (also deleted and applied again) always names the same resource, and two objects never share one.
pub fn derived_uuid_name(kube_group: &str, kind: &str, namespace: &str, name: &str) -> String {
    let key = format!("{kube_group}/{kind}/{namespace}/{name}");
    uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_URL, key.as_bytes()).to_string()
}

/// Static facts about one generated resource (one ARM PUT path in one API version).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceInfo {
    /// The kind, e.g. `ManagedCluster`.
    pub kind: &'static str,
    /// The ARM resource type, e.g. `Microsoft.ContainerService/managedClusters`.
    pub arm_type: &'static str,
    /// The ARM API version, e.g. `2025-10-01`.
    pub api_version: &'static str,
    /// The PUT path template from the spec.
    pub path: &'static str,
    /// The ARM types of the parent resources, outermost first.
    pub parents: &'static [&'static str],
    /// Where the resource lives (from [`ResourceInfo::path`]).
    pub scope: Scope,
    /// Whether the PUT is a long-running operation.
    pub long_running: bool,
}

/// One generated Kubernetes version of an API group, for tools that dispatch over every version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionInfo {
    /// The API group's module name, as the dispatch functions take it (e.g. `containerservice`).
    pub group: &'static str,
    /// The Kubernetes API group of the custom resources (e.g. `containerservice.armgen.dev`).
    pub kube_group: &'static str,
    /// The Kubernetes version (e.g. `v2alpha1`).
    pub version: &'static str,
    /// The ARM API version (e.g. `2025-10-01`).
    pub api_version: &'static str,
    /// Whether this is the storage (hub) version of its group.
    pub storage: bool,
    /// Whether the version is served (`false`: kept only so that objects stored at it can be read and converted;
    /// tools neither serve nor write its kinds).
    pub served: bool,
    /// The kinds of the custom resources.
    pub kinds: &'static [&'static str],
}

/// One custom resource kind in one Kubernetes version, with the ARM resource it stands for: what a generic
/// controller or simulator needs to serve every generated kind without knowing any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindInfo {
    /// The API group's module name (e.g. `containerservice`).
    pub group: &'static str,
    /// The Kubernetes API group (e.g. `containerservice.armgen.dev`).
    pub kube_group: &'static str,
    /// The Kubernetes version (e.g. `v2alpha1`).
    pub version: &'static str,
    /// The kind (e.g. `AgentPool`).
    pub kind: &'static str,
    /// The lowercase plural of the kind (e.g. `agentpools`).
    pub plural: &'static str,
    /// Whether this version is the kind's storage version (`storage: true` in its CRD): the storage (hub) version
    /// of its group when that has the kind, else the newest non-preview version that has it (see `REPORT.md`).
    pub storage: bool,
    /// Whether this version of the kind is served (see [`VersionInfo::served`]).
    pub served: bool,
    /// The kind of the owning custom resource for child resources (`spec.owner.name` names one);
    /// `None` for top-level resources: by [`ResourceInfo::scope`], in a resource group (`spec.owner.name` or
    /// `spec.owner.armId`), in the subscription (no owner), or an extension of any resource (`spec.owner.armId`, or
    /// `spec.owner.{group, kind, name}` naming a custom resource whose `status.id` is the scope).
    pub owner_kind: Option<&'static str>,
    /// What the resource's Azure name must look like.
    pub name_format: NameFormat,
    /// Secret exports of `spec.operatorSpec.secrets`, with how to fetch each.
    pub secret_exports: &'static [SecretExport],
    /// ConfigMap exports of `spec.operatorSpec.configMaps`: name → dotted JSON path in the ARM GET body.
    pub config_map_exports: &'static [(&'static str, &'static str)],
    /// The ARM resource.
    pub arm: ResourceInfo,
}

impl KindInfo {
    /// `group/version`, as in a custom resource's `apiVersion`.
    pub fn api_version(&self) -> String {
        format!("{}/{}", self.kube_group, self.version)
    }
}

/// One generated action kind in one Kubernetes version: a custom resource that runs one ARM POST action
/// (`POST <target ID>/<action>`) on the custom resource its `spec.owner.name` names, once, and records the outcome
/// in its status (`Succeeded`, `startTime`, `endTime`, `error`, `result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionInfo {
    /// The action kind as a kind: its `owner_kind` is the target's kind, its `arm` the target's ARM resource.
    pub kind: KindInfo,
    /// The ARM action, the POST path after the target's (e.g. `runCommand`).
    pub action: &'static str,
    /// The POST path template from the spec.
    pub path: &'static str,
    /// Whether the POST is a long-running operation (`x-ms-long-running-operation`).
    pub long_running: bool,
    /// Whether the POST takes a request body: the `parameters` of the action kind's ARM payload (what
    /// `export_custom_resource` writes for its spec).
    pub body: bool,
    /// Whether a response has a body: `status.result`.
    pub result: bool,
    /// The response status codes the spec declares, ascending (`default` aside).
    pub statuses: &'static [u16],
}

/// One read-only view of a generated resource kind in one Kubernetes version: an ARM `GET <resource ID>/<path>`
/// (no PUT, not a child resource) whose typed response the reconciler keeps in the resource's status at `field`,
/// refreshed every `refresh_seconds` (`kubernetes.resources.<Kind>.views` of the config; README, "Views").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ViewInfo {
    /// The API group's module name (e.g. `containerservice`), as [`KindInfo::group`].
    pub group: &'static str,
    /// The Kubernetes version (e.g. `v2beta1`), as [`KindInfo::version`].
    pub version: &'static str,
    /// The resource kind whose status holds the view (e.g. `ManagedCluster`).
    pub kind: &'static str,
    /// The status field (its JSON name), e.g. `upgradeProfile`: `status.upgradeProfile`.
    pub field: &'static str,
    /// The GET path after the resource's, as the spec writes it (e.g. `upgradeProfiles/default`).
    pub path: &'static str,
    /// The whole GET path template from the spec.
    pub route: &'static str,
    /// Whether the GET is a pageable list (`x-ms-pageable`): the reconciler follows `nextLink` (on the ARM host
    /// only) and keeps every page's `value` in one list.
    pub pageable: bool,
    /// How often the reconciler reads it, in seconds (`views.refresh`).
    pub refresh_seconds: u64,
}

/// The entry of the newest version (by ARM API version, then Kubernetes version name) among the `kinds` that
/// `matches` selects: the version tools default to for a kind when none is given (`armctl import`), which may not
/// be the storage version (a kind the storage version lacks, a newer version than the storage version).
pub fn newest(kinds: &[KindInfo], matches: impl Fn(&KindInfo) -> bool) -> Option<&KindInfo> {
    kinds
        .iter()
        .filter(|k| matches(k))
        .max_by(|a, b| a.arm.api_version.cmp(b.arm.api_version).then(a.version.cmp(b.version)))
}

/// A Secret export (`spec.operatorSpec.secrets.<name>`): the value is in the response of an ARM POST action on
/// the resource (`POST <resource ID>/<action>`), at `value_path` ([`exports::lookup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretExport {
    /// The export's name, e.g. `adminCredentials`.
    pub name: &'static str,
    /// The ARM action, e.g. `listClusterAdminCredential`.
    pub action: &'static str,
    /// Where the value is in the action's JSON response, e.g. `kubeconfigs[0].value`.
    pub value_path: &'static str,
    /// Whether the value is base64 text to decode.
    pub base64: bool,
}

/// A value a closed enum does not have. Open enums (`modelAsString: true`) never produce it: they keep
/// unknown values in their `Other` variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownEnumValue {
    /// The Rust name of the enum.
    pub type_name: &'static str,
    /// The value received.
    pub value: String,
}

impl std::fmt::Display for UnknownEnumValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} value {:?}", self.type_name, self.value)
    }
}

impl std::error::Error for UnknownEnumValue {}
