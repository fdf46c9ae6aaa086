//! The generator configuration, `azure-arm.yaml`. The format is documented in `docs/config.md`.
//!
//! Every struct denies unknown keys, and every override, exclusion and rename must match something in at
//! least one API version: a stale entry is an error, never silently ignored.

pub mod diff_rules;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Config {
    /// The generated crate.
    pub output: OutputConfig,
    /// API groups by Rust module name (e.g. `containerservice`).
    pub groups: BTreeMap<String, GroupConfig>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputConfig {
    /// The generated crate's package name, e.g. `aks-api`.
    pub crate_name: String,
    /// The crate's one-line description.
    #[serde(default)]
    pub description: Option<String>,
    /// The DNS domain every group's Kubernetes API group is named under: `<group name>.<apiDomain>`
    /// (default [`DEFAULT_API_DOMAIN`]). Never `azure.com` or below it: Azure Service Operator's CRDs use
    /// `<service>.azure.com`, and a CRD of the same name would replace theirs.
    #[serde(default = "default_api_domain")]
    pub api_domain: String,
    /// One crate per group version (`<crateName>-<group>-<version>` in `crates/<group>-<version>/`), re-exported by
    /// the main crate under the same paths and features, instead of one crate holding every version: the versions
    /// then build in parallel, each with the compiler memory of one version, and a changed version rebuilds only
    /// its crate and those of its spokes. Default `false`. A `build.rs` (and the single-file form) always gets
    /// one module tree: a build script cannot add crates. See [`crate::emit::CrateLayout`].
    #[serde(default)]
    pub version_crates: bool,
}

/// The default of `output.apiDomain`: the project's own domain.
pub const DEFAULT_API_DOMAIN: &str = "armgen.dev";

fn default_api_domain() -> String {
    DEFAULT_API_DOMAIN.to_string()
}

/// The domain whose groups Azure Service Operator's CRDs use (`containerservice.armgen.dev`, ...).
pub const ASO_DOMAIN: &str = "azure.com";

/// Whether `group` is `domain` or a subdomain of it (case-insensitive, as DNS names are).
pub fn is_within(group: &str, domain: &str) -> bool {
    let (g, d) = (group.to_ascii_lowercase(), domain.to_ascii_lowercase());
    g == d || g.ends_with(&format!(".{d}"))
}

/// A DNS subdomain of at least two labels, as a Kubernetes API group must be (RFC 1123 labels, lowercase).
fn is_api_group(s: &str) -> bool {
    s.len() <= 253
        && s.contains('.')
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupConfig {
    /// The ARM resource provider namespace, e.g. `Microsoft.ContainerService`.
    pub provider: String,
    /// The folder under the spec root that the versions' `specFiles` are relative to.
    pub spec_folder: PathBuf,
    /// The Kubernetes API group of the custom resources (default: `<group name>.<output.apiDomain>`).
    #[serde(default)]
    pub kubernetes_group: Option<String>,
    /// Kubernetes version (e.g. `v1beta1`) → ARM API version and spec files.
    pub versions: BTreeMap<String, VersionConfig>,
    #[serde(default)]
    pub resources: ResourcesConfig,
    #[serde(default)]
    pub overrides: VersionOverrides,
    /// What the custom resources of the group get beyond the ARM shape: exports, template kinds, the
    /// empty-collections rule.
    #[serde(default)]
    pub kubernetes: KubernetesConfig,
}

/// The group's `kubernetes` key.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KubernetesConfig {
    /// Whether a spec collection set to `[]` or `{}` is sent to ARM (`send`, the default) or treated as unset
    /// (`omit`). Properties override it with `overrides.types.X.properties.y.emptyCollection`.
    #[serde(default)]
    pub empty_collections: EmptyCollections,
    /// Per kind (as generated, after `resources.rename`).
    #[serde(default)]
    pub resources: BTreeMap<String, KubeResourceConfig>,
    /// How the reconciler classifies the provider's ARM errors beyond 429, 5xx and dropped connections
    /// (always retryable).
    #[serde(default)]
    pub errors: ErrorsConfig,
}

/// `kubernetes.errors`: ARM errors worth retrying, and errors that fail again until the spec changes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ErrorsConfig {
    #[serde(default)]
    pub retryable: Vec<ErrorMatchConfig>,
    #[serde(default)]
    pub terminal: Vec<ErrorMatchConfig>,
}

/// One entry of `kubernetes.errors.retryable` / `.terminal`: an HTTP status, an ARM error code, or both.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ErrorMatchConfig {
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub code: Option<String>,
    /// The public source of the entry (required).
    pub source: String,
}

/// `kubernetes.resources.<Kind>.childOwned.<armPath>`: an array property whose items child resources own after
/// creation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChildOwnedConfig {
    /// The child kind whose resources the items are.
    pub kind: String,
    /// The item property that is the child resource's name.
    pub key: String,
    /// The public source of the rule (required).
    pub source: String,
}

/// `kubernetes.resources.<Kind>.ownerGate`: when a child waits for its owner.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OwnerGateConfig {
    /// Wait while the owner is not settled (an operation in flight, a non-terminal provisioningState, or a
    /// `Ready` condition of an older generation).
    #[serde(default)]
    pub settled: bool,
    /// The child's ARM path of a version (`properties.orchestratorVersion`) → the owner's it may not exceed.
    #[serde(default)]
    pub versions: BTreeMap<String, VersionGateConfig>,
    /// The public source of the rule (required).
    pub source: String,
}

/// `ownerGate.versions.<armPath>`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionGateConfig {
    /// The owner's ARM path (`properties.currentKubernetesVersion`), a read-only or writable string in its status.
    pub owner: String,
    /// The ARM error code the service refuses a violating PUT with.
    pub error_code: String,
}

/// `overrides.types.<Schema>.properties.<json>.immutable`: the property is fixed after creation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImmutableConfig {
    /// The public source of the rule (required).
    pub source: String,
}

/// What spec → ARM does with an empty collection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum EmptyCollections {
    /// `[]` / `{}` are sent (ARM reads them as "make it empty"); only an unset collection is omitted.
    #[default]
    Send,
    /// `[]` / `{}` are not sent: treated like unset (ARM leaves the value unchanged).
    Omit,
}

/// `kubernetes.resources.<Kind>`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct KubeResourceConfig {
    /// Secret exports (`spec.operatorSpec.secrets.<name>`): name → the ARM POST action that returns the value
    /// and where the value is in its response (e.g. `adminCredentials`: `listClusterAdminCredential`,
    /// `kubeconfigs[0].value`, base64).
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretExportConfig>,
    /// ConfigMap exports (`spec.operatorSpec.configMaps.<name>`): name → dotted JSON path of the value in the
    /// ARM GET body (e.g. `properties.oidcIssuerProfile.issuerURL`).
    #[serde(default)]
    pub config_maps: BTreeMap<String, String>,
    /// Also generate `<Kind>Template` (`spec.template.spec` holds a `<Kind>Spec`).
    #[serde(default)]
    pub template: bool,
    /// Array properties (ARM path, e.g. `properties.agentPoolProfiles`) whose items child resources own after
    /// creation.
    #[serde(default)]
    pub child_owned: BTreeMap<String, ChildOwnedConfig>,
    /// When this (child) kind waits for its owner.
    #[serde(default)]
    pub owner_gate: Option<OwnerGateConfig>,
    /// What the resource's Azure name must look like, when the spec says so only in words.
    #[serde(default)]
    pub azure_name: Option<AzureNameConfig>,
    /// Which of the resource's ARM POST actions become action kinds, and their names.
    #[serde(default)]
    pub actions: ActionsConfig,
    /// Which read-only GETs under the resource the reconciler reads into its status.
    #[serde(default)]
    pub views: ViewsConfig,
    /// The Cluster API provider contract the kind implements (docs/cluster-api.md).
    #[serde(default)]
    pub cluster_api: Option<ClusterApiConfig>,
}

/// `kubernetes.resources.<Kind>.clusterApi`: the Cluster API provider contract the kind implements, as data: where
/// each field the contract names comes from in the resource's ARM body (docs/cluster-api.md, README "Using it with
/// Cluster API"). The generator adds the contract's fields to the kind (spec and status) and lists the kind in the
/// registry's `CLUSTER_API`; the reconciler fills them with no code per kind.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClusterApiConfig {
    /// Which contract: a control plane (`Cluster.spec.controlPlaneRef`), an infrastructure machine pool
    /// (`MachinePool.spec.template.spec.infrastructureRef`) or an infrastructure cluster
    /// (`Cluster.spec.infrastructureRef`, no other field).
    pub role: ClusterApiRole,
    /// The contract's page (required, an https URL).
    pub source: String,
    /// Control plane: `spec.controlPlaneEndpoint`, from the first of these ARM paths with a value (`hosts`) and a
    /// fixed `port`.
    #[serde(default)]
    pub endpoint: Option<EndpointConfig>,
    /// Control plane: the Kubernetes version. `spec` is the ARM path the contract's `spec.version` (which the
    /// ClusterClass topology writes, `v1.30.1`) is copied into without its `v`; `status` the ARM path
    /// `status.version` reads (`v` added).
    #[serde(default)]
    pub version: Option<VersionFieldsConfig>,
    /// Control plane: the Secret export whose value is the cluster's kubeconfig, written as Cluster API reads it
    /// (`<cluster>-kubeconfig`, key `value`, type `cluster.x-k8s.io/secret`).
    #[serde(default)]
    pub kubeconfig: Option<String>,
    /// Machine pool: the ARM path of the pool's size (`status.replicas`), which follows the owning MachinePool's
    /// `spec.replicas`.
    #[serde(default)]
    pub replicas: Option<String>,
    /// Machine pool: where `spec.providerIDList` comes from.
    #[serde(default)]
    pub provider_ids: Option<ProviderIdsConfig>,
}

/// The Cluster API contracts armgen kinds implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ClusterApiRole {
    ControlPlane,
    MachinePool,
    /// An infrastructure cluster (`Cluster.spec.infrastructureRef`): what the cluster lives in, provisioned once
    /// ready; a ClusterClass needs one.
    InfrastructureCluster,
}

/// `clusterApi.endpoint`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EndpointConfig {
    /// ARM paths of the host name, the first with a value wins (`properties.fqdn`, `properties.privateFQDN`).
    pub hosts: Vec<String>,
    pub port: u16,
}

/// `clusterApi.version`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionFieldsConfig {
    pub spec: String,
    pub status: String,
}

/// `clusterApi.providerIds`: each item of a view (a pageable list) names one machine.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ProviderIdsConfig {
    /// The view (a status field of `views.read`) listing the pool's machines.
    pub view: String,
    /// The ARM path, in each item, of the machine's resource ID.
    pub id: String,
    /// What comes before the ID (`azure://`).
    pub prefix: String,
    /// The public source of the format.
    pub source: String,
}

/// How often a view is read when `views.refreshSeconds` does not say: hourly. An upgrade profile or the
/// available pool versions change when AKS releases (weekly at most), so an hour is fresh enough, and costs one GET
/// per view per resource per hour.
pub const DEFAULT_VIEW_REFRESH_SECONDS: u64 = 3600;

/// `kubernetes.resources.<Kind>.views`: read-only GETs under the resource's path (no PUT there, not a child
/// resource's list) whose typed response the reconciler keeps in the resource's status. Opt-in (each costs a GET
/// per refresh); every such GET of the spec is either read or excluded with a reason (`tests/tests/views.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ViewsConfig {
    /// Status field (lowerCamelCase, e.g. `upgradeProfile`) → the GET path after the resource's, as the spec
    /// writes it (e.g. `upgradeProfiles/default`).
    #[serde(default)]
    pub read: BTreeMap<String, String>,
    /// GET path after the resource's → why it is not read (required, shown in `REPORT.md`).
    #[serde(default)]
    pub exclude: BTreeMap<String, String>,
    /// How often the reconciler reads this kind's views, in seconds (default
    /// [`DEFAULT_VIEW_REFRESH_SECONDS`]; at least 60).
    #[serde(default)]
    pub refresh_seconds: Option<u64>,
}

/// `kubernetes.resources.<Kind>.actions`: every POST operation under the resource's path is an action kind
/// (`<Kind><Action>`, e.g. `ManagedClusterRunCommand`) unless excluded here.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ActionsConfig {
    /// Action (its path after the resource's, as the spec writes it, e.g. `listClusterAdminCredential` or
    /// `accessProfiles/{roleName}/listCredential`) → why it has no action kind (required, shown in `REPORT.md`).
    #[serde(default)]
    pub exclude: BTreeMap<String, String>,
    /// Action → the action kind's name, instead of `<Kind><Action>`.
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// When every action kind of the resource waits for it (an action kind's own `ownerGate` comes first).
    #[serde(default)]
    pub owner_gate: Option<OwnerGateConfig>,
    /// Actions that do not wait for the gate (`abort`, which stops the operation the gate waits for) → the
    /// public source saying so.
    #[serde(default)]
    pub ungated: BTreeMap<String, String>,
}

/// `kubernetes.resources.<Kind>.azureName`: the format of the resource's Azure name.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AzureNameConfig {
    pub format: AzureNameFormat,
    /// The public source of the rule (required).
    pub source: String,
}

/// The formats of `azureName.format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AzureNameFormat {
    /// A UUID; an object without `spec.azureName` gets one derived from its group, kind, namespace and name.
    Uuid,
}

/// `kubernetes.resources.<Kind>.secrets.<name>`: how the reconciler fetches a Secret export.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SecretExportConfig {
    /// The ARM POST action on the resource (`POST <resource ID>/<action>`), e.g. `listClusterAdminCredential`.
    pub action: String,
    /// Where the value is in the action's JSON response: property names separated by `.`, each optionally
    /// followed by array indexes, e.g. `kubeconfigs[0].value` ([`parse_value_path`]).
    pub value: String,
    /// Whether the value is base64 text to decode (ARM's `format: byte`).
    #[serde(default)]
    pub base64: bool,
}

/// Checks a value path such as `kubeconfigs[0].value`: property names (no `.`, `[`, `]`) separated by `.`,
/// each optionally followed by `[<index>]`s — the grammar of `armgen_runtime::exports::lookup`.
pub fn parse_value_path(path: &str) -> std::result::Result<(), String> {
    for segment in path.split('.') {
        let (name, mut rest) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if name.is_empty() || name.contains(']') {
            return Err(format!(
                "{path:?}: every segment needs a property name (as in kubeconfigs[0].value)"
            ));
        }
        while !rest.is_empty() {
            let Some(close) = rest.find(']').filter(|_| rest.starts_with('[')) else {
                return Err(format!("{path:?}: {segment:?} is not `name` or `name[<index>]`"));
            };
            if rest[1..close].parse::<usize>().is_err() {
                return Err(format!("{path:?}: {:?} is not an array index", &rest[1..close]));
            }
            rest = &rest[close + 1..];
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionConfig {
    /// The ARM API version, e.g. `2025-10-01`.
    pub arm_api_version: String,
    /// Spec files, relative to the group's `specFolder`.
    pub spec_files: Vec<PathBuf>,
    /// Whether this is the storage (hub) version. At most one version of a group says so; when none does, the
    /// hub is the newest version whose ARM API version is not a preview ([`GroupConfig::hub`]).
    #[serde(default)]
    pub storage: bool,
    /// Whether the version is served (`served: true` in its CRDs, the default). `false` keeps it only so that
    /// objects stored at it can still be read and converted (see docs/config.md, "Served versions"): its CRD
    /// versions are `served: false` with a schema that keeps every field, and no tool serves or writes its kinds.
    /// The storage (hub) version is always served.
    #[serde(default = "served_default")]
    pub served: bool,
    /// Properties renamed between this version and the hub: `<Schema>.<jsonName>` (this version's schema
    /// and property) → the property's JSON name in the hub. Conversions match properties by JSON name
    /// otherwise.
    #[serde(default)]
    pub renames: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResourcesConfig {
    /// When not empty, the only ARM types to generate (e.g. `Microsoft.Network/virtualNetworks`); the types
    /// they reach are generated with them, nothing else of the spec.
    #[serde(default)]
    pub include: Vec<String>,
    /// ARM types (e.g. `Microsoft.ContainerService/snapshots`) not to generate.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// ARM type → kind, for resources whose PUT body schema name is not the kind wanted.
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
}

/// Per-type and per-property overrides, keyed by the schema name in the spec.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct VersionOverrides {
    #[serde(default)]
    pub types: BTreeMap<String, TypeOverride>,
    /// Spec files (relative to the group's `specFolder`) that stand in as opaque JSON wherever a `$ref` reaches
    /// them, and are not read: for files of a spec's `$ref` closure that cannot be obtained.
    #[serde(default)]
    pub opaque_files: BTreeMap<String, OpaqueConfig>,
}

/// `overrides.opaqueFiles.<file>` / `overrides.types.<Schema>.opaque`: why something stands in as opaque JSON.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OpaqueConfig {
    /// Why (required; written to `REPORT.md` with every `$ref` it stands in for).
    pub because: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TypeOverride {
    /// Stand in opaque JSON (`serde_json::Value`, `x-kubernetes-preserve-unknown-fields`) for every `$ref` to this
    /// definition, in any file: for definitions that are broken or not worth modelling.
    #[serde(default)]
    pub opaque: Option<OpaqueConfig>,
    /// The Rust type name to use instead of the schema name.
    #[serde(default)]
    pub rename: Option<String>,
    /// Overrides per property, keyed by JSON name.
    #[serde(default)]
    pub properties: BTreeMap<String, PropertyOverride>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PropertyOverride {
    /// The Rust field name to use.
    #[serde(default)]
    pub rename: Option<String>,
    /// Treat the property as a secret (as `x-ms-secret: true` would).
    #[serde(default)]
    pub secret: Option<bool>,
    /// Treat the property as read-only (as `readOnly: true` would).
    #[serde(default)]
    pub read_only: Option<bool>,
    /// For a collection property: whether an empty spec value is sent (overrides
    /// `kubernetes.emptyCollections`).
    #[serde(default)]
    pub empty_collection: Option<EmptyCollections>,
    /// For an array of objects: the item properties that identify an item, as `x-ms-identifiers` would
    /// (change detection matches items by them).
    #[serde(default)]
    pub identifiers: Option<Vec<String>>,
    /// Change detection ignores the property while each named sibling property has the given value (a
    /// boolean, string or integer): the value once the desired state is applied (desired when set, else actual).
    #[serde(default)]
    pub diff_ignored_when: BTreeMap<String, serde_json::Value>,
    /// Fixed after creation (as `x-ms-mutability` without `update` would say), with the public source.
    #[serde(default)]
    pub immutable: Option<ImmutableConfig>,
    /// For a string property: the custom resource may take the value from a ConfigMap instead
    /// (`<property>FromConfig: {name, key}` beside the property), typically another object's ConfigMap export
    /// (a role assignment's `principalId` from an identity's `principalId` export). The reconciler waits for it.
    #[serde(default)]
    pub from_config: Option<bool>,
    /// For a map keyed by ARM resource IDs whose values have no writable property (`identity.userAssignedIdentities`):
    /// the custom resource lists the keys as resource references (`[{armId}]` or `[{group, kind, name}]`).
    #[serde(default)]
    pub arm_id_keys: Option<bool>,
}

impl Config {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Config::parse(&text, path)
    }

    /// Parses config text; `path` is only used in error messages.
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let de = serde_yaml_ng::Deserializer::from_str(text);
        let config: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            // The path includes an unknown key itself: `groups.aks.versions.v1.specFile`; `.` is the top level.
            let mut key = e.path().to_string();
            let inner = e.into_inner();
            let mut message = inner.to_string();
            // serde_yaml_ng's message may start with the (parent) path and end with the position; the error
            // says both once, in its own form.
            if let Some((prefix, rest)) = message.split_once(": ")
                && !prefix.contains(' ')
                && (key == prefix || key.starts_with(&format!("{prefix}.")))
            {
                message = rest.to_string();
            }
            // A missing key is named like an unknown one: by its own path.
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|rest| rest.split_once('`'))
                .map(|(field, _)| field.to_string());
            key = match (key.as_str(), missing) {
                (".", Some(field)) => field,
                (".", None) => "(top level)".into(),
                (_, Some(field)) => format!("{key}.{field}"),
                (_, None) => key,
            };
            if let Some(l) = inner.location() {
                let suffix = format!(" at line {} column {}", l.line(), l.column());
                if let Some(stripped) = message.strip_suffix(&suffix) {
                    message = stripped.to_string();
                }
                message.push_str(&format!(" (line {}, column {})", l.line(), l.column()));
            }
            Error::Config {
                file: path.to_path_buf(),
                key,
                message,
            }
        })?;
        config.validate(path)?;
        Ok(config)
    }

    /// Checks what the types cannot say (names, one storage version, ...); `path` is only used in errors.
    pub fn validate(&self, path: &Path) -> Result<()> {
        self.check().map_err(|(key, message)| Error::Config {
            file: path.to_path_buf(),
            key,
            message,
        })
    }

    /// The checks of [`Config::validate`], in order: the first that fails is the error.
    fn check(&self) -> std::result::Result<(), Invalid> {
        if self.groups.is_empty() {
            return Err(("groups".into(), "at least one group is needed".into()));
        }
        if !is_api_group(&self.output.api_domain) {
            return Err((
                "output.apiDomain".into(),
                format!(
                    "{:?} is not a DNS domain of at least two lowercase labels (e.g. {DEFAULT_API_DOMAIN})",
                    self.output.api_domain
                ),
            ));
        }
        let mut kube_groups = BTreeMap::new();
        for (name, group) in &self.groups {
            check_group_names(name, group, &self.output.api_domain, &mut kube_groups)?;
            if group.versions.is_empty() {
                return Err((
                    format!("groups.{name}.versions"),
                    "at least one version is needed".into(),
                ));
            }
            check_opaque(name, group)?;
            check_one_storage(name, group)?;
            check_type_overrides(name, group)?;
            for (arm_type, kind) in &group.resources.rename {
                if !is_type_ident(kind) {
                    return Err((
                        format!("groups.{name}.resources.rename.{arm_type}"),
                        format!("{kind:?} is not an UpperCamelCase kind name"),
                    ));
                }
            }
            for (kind, rc) in &group.kubernetes.resources {
                check_kube_resource(&format!("groups.{name}.kubernetes.resources.{kind}"), kind, rc)?;
            }
            check_error_lists(name, group)?;
            check_versions(name, group)?;
        }
        Ok(())
    }
}

/// A validation failure: the config key at fault and what is wrong with it.
type Invalid = (String, String);

/// Checks group `name`'s module name and its Kubernetes API group, which `kube_groups` (API group → config
/// group, over the groups checked before) must not hold yet.
fn check_group_names<'a>(
    name: &'a str,
    group: &GroupConfig,
    api_domain: &str,
    kube_groups: &mut BTreeMap<String, &'a str>,
) -> std::result::Result<(), Invalid> {
    if !is_module_name(name) {
        return Err((
            format!("groups.{name}"),
            "a group name must be a lowercase Rust module name".into(),
        ));
    }
    let kube_group = group.kube_group(name, api_domain);
    let key = match group.kubernetes_group {
        Some(_) => format!("groups.{name}.kubernetesGroup"),
        None => "output.apiDomain".to_string(),
    };
    if !is_api_group(&kube_group) {
        return Err((
            key,
            format!("{kube_group:?} is not a Kubernetes API group (a lowercase DNS subdomain)"),
        ));
    }
    if is_within(&kube_group, ASO_DOMAIN) {
        return Err((
            key,
            format!(
                "{kube_group} is under {ASO_DOMAIN}, the domain of Azure Service Operator's CRDs: installed in a \
                 cluster that has them (every Cluster API Provider Azure management cluster does), our CRDs \
                 would replace theirs. Use a domain you control"
            ),
        ));
    }
    if let Some(other) = kube_groups.insert(kube_group.clone(), name) {
        return Err((
            key,
            format!("{kube_group} is also the Kubernetes API group of groups.{other}"),
        ));
    }
    Ok(())
}

/// Checks group `name`'s opaque overrides: whole spec files, then single definitions.
fn check_opaque(name: &str, group: &GroupConfig) -> std::result::Result<(), Invalid> {
    for (file, o) in &group.overrides.opaque_files {
        let key = format!("groups.{name}.overrides.opaqueFiles.{file}");
        let relative = Path::new(file);
        if file.is_empty()
            || relative.is_absolute()
            || relative
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err((
                key,
                "a spec file path relative to the group's specFolder, without `..`".into(),
            ));
        }
        if o.because.trim().is_empty() {
            return Err((
                format!("{key}.because"),
                "say why the file stands in as opaque JSON".into(),
            ));
        }
    }
    for (schema, o) in &group.overrides.types {
        let Some(opaque) = &o.opaque else { continue };
        let key = format!("groups.{name}.overrides.types.{schema}.opaque");
        if opaque.because.trim().is_empty() {
            return Err((
                format!("{key}.because"),
                "say why the definition stands in as opaque JSON".into(),
            ));
        }
        if o.rename.is_some() || !o.properties.is_empty() {
            return Err((
                key,
                "an opaque definition has no Rust type or properties to override: remove `rename` and `properties`"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Checks that at most one of group `name`'s versions says `storage: true`.
fn check_one_storage(name: &str, group: &GroupConfig) -> std::result::Result<(), Invalid> {
    let storage: Vec<&String> = group
        .versions
        .iter()
        .filter(|(_, v)| v.storage)
        .map(|(k, _)| k)
        .collect();
    if storage.len() > 1 {
        return Err((
            format!("groups.{name}.versions"),
            format!(
                "at most one version may have `storage: true` (found {}: {})",
                storage.len(),
                storage.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(())
}

/// Checks group `name`'s type overrides: Rust type renames, then each property's override.
fn check_type_overrides(name: &str, group: &GroupConfig) -> std::result::Result<(), Invalid> {
    for (type_name, o) in &group.overrides.types {
        let key = format!("groups.{name}.overrides.types.{type_name}");
        if let Some(rename) = &o.rename
            && !is_type_ident(rename)
        {
            return Err((
                format!("{key}.rename"),
                format!("{rename:?} is not an UpperCamelCase Rust type name"),
            ));
        }
        for (prop, po) in &o.properties {
            check_property_override(&format!("{key}.properties.{prop}"), po)?;
        }
    }
    Ok(())
}

/// Checks one property override, at config key `key`.
fn check_property_override(key: &str, po: &PropertyOverride) -> std::result::Result<(), Invalid> {
    if let Some(rename) = &po.rename
        && !is_module_name(rename)
    {
        return Err((
            format!("{key}.rename"),
            format!("{rename:?} is not a snake_case Rust field name"),
        ));
    }
    if po
        .identifiers
        .as_ref()
        .is_some_and(|ids| ids.is_empty() || ids.iter().any(String::is_empty))
    {
        return Err((
            format!("{key}.identifiers"),
            "list the item properties that identify an item (at least one name)".into(),
        ));
    }
    if let Some(i) = &po.immutable {
        check_source(&format!("{key}.immutable.source"), &i.source)?;
    }
    for (sibling, value) in &po.diff_ignored_when {
        let scalar = value.is_boolean() || value.is_string() || value.is_i64() || value.is_u64();
        if !scalar {
            return Err((
                format!("{key}.diffIgnoredWhen.{sibling}"),
                format!("{value} is not a boolean, string or integer"),
            ));
        }
    }
    Ok(())
}

/// Checks `kubernetes.resources.<Kind>.views`, at config key `key`: field names, paths, reasons and the interval.
fn check_views(key: &str, views: &ViewsConfig) -> std::result::Result<(), Invalid> {
    // (`exclude` may name a path that ends with `/`: the spec's own spelling of a list, `…/deployments/`.)
    let path_ok = |p: &str| !p.is_empty() && !p.starts_with('/') && !p.contains("//");
    for (field, path) in &views.read {
        if !is_export_name(field) {
            return Err((
                format!("{key}.read.{field}"),
                format!("{field:?} is not a lowerCamelCase status field name"),
            ));
        }
        if !path_ok(path) || path.ends_with('/') || path.contains(['{', '}']) {
            return Err((
                format!("{key}.read.{field}"),
                format!(
                    "{path:?} is not a GET path after the resource's without parameters, such as upgradeProfiles/default"
                ),
            ));
        }
    }
    let mut paths = BTreeSet::new();
    for (field, path) in &views.read {
        if !paths.insert(path.to_ascii_lowercase()) {
            return Err((
                format!("{key}.read.{field}"),
                format!("{path:?} is read into two fields"),
            ));
        }
    }
    for (path, because) in &views.exclude {
        if !path_ok(path) {
            return Err((
                format!("{key}.exclude.{path}"),
                "name the GET by its path after the resource's, such as commandResults/{commandId}".into(),
            ));
        }
        if because.trim().is_empty() {
            return Err((format!("{key}.exclude.{path}"), "say why the GET is not read".into()));
        }
        if paths.contains(&path.to_ascii_lowercase()) {
            return Err((format!("{key}.exclude.{path}"), "both read and excluded".into()));
        }
    }
    if let Some(seconds) = views.refresh_seconds
        && seconds < 60
    {
        return Err((
            format!("{key}.refreshSeconds"),
            format!("{seconds} is below 60: a view is read at most once a minute"),
        ));
    }
    Ok(())
}

/// Checks the Kubernetes settings of kind `kind`, at config key `key`: its name, secrets, child-owned lists,
/// owner gate, Azure name and config maps, in that order.
fn check_kube_resource(key: &str, kind: &str, rc: &KubeResourceConfig) -> std::result::Result<(), Invalid> {
    if !is_type_ident(kind) {
        return Err((key.to_string(), format!("{kind:?} is not an UpperCamelCase kind name")));
    }
    for (secret, export) in &rc.secrets {
        let key = format!("{key}.secrets.{secret}");
        if !is_export_name(secret) {
            return Err((key, format!("{secret:?} is not a lowerCamelCase export name")));
        }
        if !is_action_name(&export.action) {
            return Err((
                format!("{key}.action"),
                format!(
                    "{:?} is not an ARM action name (letters and digits, such as listClusterAdminCredential)",
                    export.action
                ),
            ));
        }
        parse_value_path(&export.value).map_err(|message| (format!("{key}.value"), message))?;
    }
    for (arm_path, owned) in &rc.child_owned {
        check_child_owned(&format!("{key}.childOwned.{arm_path}"), arm_path, owned)?;
    }
    if let Some(gate) = &rc.owner_gate {
        check_owner_gate(&format!("{key}.ownerGate"), gate)?;
    }
    if let Some(name) = &rc.azure_name {
        check_source(&format!("{key}.azureName.source"), &name.source)?;
    }
    for (action, because) in &rc.actions.exclude {
        if action.is_empty() || action.starts_with('/') {
            return Err((
                format!("{key}.actions.exclude.{action}"),
                "name the action by its path after the resource's, such as listClusterAdminCredential".into(),
            ));
        }
        if because.trim().is_empty() {
            return Err((
                format!("{key}.actions.exclude.{action}"),
                "say why the action has no action kind".into(),
            ));
        }
    }
    if let Some(gate) = &rc.actions.owner_gate {
        check_owner_gate(&format!("{key}.actions.ownerGate"), gate)?;
    }
    check_views(&format!("{key}.views"), &rc.views)?;
    if let Some(capi) = &rc.cluster_api {
        check_cluster_api(&format!("{key}.clusterApi"), capi, rc)?;
    }
    for (action, source) in &rc.actions.ungated {
        check_source(&format!("{key}.actions.ungated.{action}"), source)?;
    }
    for (action, name) in &rc.actions.rename {
        if !is_type_ident(name) {
            return Err((
                format!("{key}.actions.rename.{action}"),
                format!("{name:?} is not an UpperCamelCase kind name"),
            ));
        }
    }
    for (export, path) in &rc.config_maps {
        if !is_export_name(export) {
            return Err((
                format!("{key}.configMaps.{export}"),
                format!("{export:?} is not a lowerCamelCase export name"),
            ));
        }
        if path.split('.').any(str::is_empty) {
            return Err((
                format!("{key}.configMaps.{export}"),
                format!("{path:?} is not a dotted JSON path such as properties.fqdn"),
            ));
        }
    }
    Ok(())
}

/// Checks `kubernetes.resources.<Kind>.clusterApi` (of kind config `rc`), at config key `key`: the fields its role
/// needs and no other, dotted paths, the kubeconfig a Secret export of the kind, the provider IDs a view it reads.
fn check_cluster_api(key: &str, capi: &ClusterApiConfig, rc: &KubeResourceConfig) -> std::result::Result<(), Invalid> {
    check_source(&format!("{key}.source"), &capi.source)?;
    let path = |k: String, p: &str| -> std::result::Result<(), Invalid> {
        if is_plain_path(p) {
            Ok(())
        } else {
            Err((k, format!("{p:?} is not a dotted JSON path such as properties.fqdn")))
        }
    };
    let (control_plane, pool) = (
        capi.endpoint.is_some() || capi.version.is_some() || capi.kubeconfig.is_some(),
        capi.replicas.is_some() || capi.provider_ids.is_some(),
    );
    match capi.role {
        ClusterApiRole::ControlPlane => {
            if pool {
                return Err((
                    key.to_string(),
                    "replicas and providerIds are machine pool fields".into(),
                ));
            }
            let Some(endpoint) = &capi.endpoint else {
                return Err((format!("{key}.endpoint"), "a control plane needs its endpoint".into()));
            };
            if endpoint.hosts.is_empty() {
                return Err((format!("{key}.endpoint.hosts"), "name at least one ARM path".into()));
            }
            for (i, h) in endpoint.hosts.iter().enumerate() {
                path(format!("{key}.endpoint.hosts[{i}]"), h)?;
            }
            if endpoint.port == 0 {
                return Err((format!("{key}.endpoint.port"), "0 is not a port".into()));
            }
            let Some(version) = &capi.version else {
                return Err((format!("{key}.version"), "a control plane needs its version".into()));
            };
            path(format!("{key}.version.spec"), &version.spec)?;
            path(format!("{key}.version.status"), &version.status)?;
            if let Some(k) = &capi.kubeconfig
                && !rc.secrets.contains_key(k)
            {
                return Err((
                    format!("{key}.kubeconfig"),
                    format!("{k:?} is not a Secret export of the kind (secrets)"),
                ));
            }
        }
        ClusterApiRole::InfrastructureCluster => {
            if control_plane || pool {
                return Err((
                    key.to_string(),
                    "an infrastructure cluster has no other field than its source".into(),
                ));
            }
        }
        ClusterApiRole::MachinePool => {
            if control_plane {
                return Err((
                    key.to_string(),
                    "endpoint, version and kubeconfig are control plane fields".into(),
                ));
            }
            let Some(replicas) = &capi.replicas else {
                return Err((format!("{key}.replicas"), "a machine pool needs its replicas".into()));
            };
            path(format!("{key}.replicas"), replicas)?;
            let Some(ids) = &capi.provider_ids else {
                return Err((
                    format!("{key}.providerIds"),
                    "a machine pool needs its provider IDs".into(),
                ));
            };
            if !rc.views.read.contains_key(&ids.view) {
                return Err((
                    format!("{key}.providerIds.view"),
                    format!("{:?} is not a view the kind reads (views.read)", ids.view),
                ));
            }
            path(format!("{key}.providerIds.id"), &ids.id)?;
            if ids.prefix.contains(char::is_whitespace) {
                return Err((format!("{key}.providerIds.prefix"), "a prefix has no whitespace".into()));
            }
            check_source(&format!("{key}.providerIds.source"), &ids.source)?;
        }
    }
    Ok(())
}

/// Checks one child-owned list (at JSON path `arm_path` of the owner), at config key `key`.
fn check_child_owned(key: &str, arm_path: &str, owned: &ChildOwnedConfig) -> std::result::Result<(), Invalid> {
    if !is_plain_path(arm_path) {
        return Err((
            key.to_string(),
            format!("{arm_path:?} is not a dotted JSON path such as properties.agentPoolProfiles"),
        ));
    }
    if !is_type_ident(&owned.kind) {
        return Err((
            format!("{key}.kind"),
            format!("{:?} is not an UpperCamelCase kind name", owned.kind),
        ));
    }
    if owned.key.is_empty() || owned.key.contains('.') {
        return Err((format!("{key}.key"), format!("{:?} is not a property name", owned.key)));
    }
    check_source(&format!("{key}.source"), &owned.source)
}

/// Checks an owner gate, at config key `key`.
fn check_owner_gate(key: &str, gate: &OwnerGateConfig) -> std::result::Result<(), Invalid> {
    if !gate.settled && gate.versions.is_empty() {
        return Err((
            key.to_string(),
            "a gate needs `settled: true` or at least one entry under `versions`".into(),
        ));
    }
    for (child, v) in &gate.versions {
        let key = format!("{key}.versions.{child}");
        if !is_plain_path(child) || !is_plain_path(&v.owner) {
            return Err((
                key,
                "keys and `owner` are dotted JSON paths such as properties.orchestratorVersion".into(),
            ));
        }
        if !is_action_name(&v.error_code) {
            return Err((
                format!("{key}.errorCode"),
                format!("{:?} is not an ARM error code", v.error_code),
            ));
        }
    }
    check_source(&format!("{key}.source"), &gate.source)
}

/// Checks group `name`'s retryable, then terminal, error matches.
fn check_error_lists(name: &str, group: &GroupConfig) -> std::result::Result<(), Invalid> {
    for (list, entries) in [
        ("retryable", &group.kubernetes.errors.retryable),
        ("terminal", &group.kubernetes.errors.terminal),
    ] {
        for (i, e) in entries.iter().enumerate() {
            let key = format!("groups.{name}.kubernetes.errors.{list}[{i}]");
            if e.status.is_none() && e.code.is_none() {
                return Err((key, "an entry needs `status`, `code` or both".into()));
            }
            if let Some(status) = e.status
                && !(400..=599).contains(&status)
            {
                return Err((format!("{key}.status"), format!("{status} is not an HTTP error status")));
            }
            if let Some(code) = &e.code
                && !is_action_name(code)
            {
                return Err((format!("{key}.code"), format!("{code:?} is not an ARM error code")));
            }
            check_source(&format!("{key}.source"), &e.source)?;
        }
    }
    Ok(())
}

/// Checks each of group `name`'s versions: its module name, renames, `served` and spec files.
fn check_versions(name: &str, group: &GroupConfig) -> std::result::Result<(), Invalid> {
    for (version, v) in &group.versions {
        if !is_module_name(version) {
            return Err((
                format!("groups.{name}.versions.{version}"),
                "a Kubernetes version must be a lowercase Rust module name such as v1beta1".into(),
            ));
        }
        for (from, to) in &v.renames {
            let key = format!("groups.{name}.versions.{version}.renames.{from}");
            let well_formed = from
                .split_once('.')
                .is_some_and(|(schema, prop)| !schema.is_empty() && !prop.is_empty() && !prop.contains('.'));
            if !well_formed {
                return Err((key, "a rename is keyed by `<Schema>.<jsonName>`".into()));
            }
            if to.is_empty() || to.contains('.') {
                return Err((key, format!("{to:?} is not a JSON property name")));
            }
            if v.storage || group.hub() == Some(version.as_str()) {
                return Err((
                    key,
                    "renames are declared on the versions converted to the hub, not on the hub".into(),
                ));
            }
        }
        if !v.served && group.hub() == Some(version.as_str()) {
            return Err((
                format!("groups.{name}.versions.{version}.served"),
                "the storage (hub) version is always served: move `storage: true` to a served version first".into(),
            ));
        }
        if v.spec_files.is_empty() {
            return Err((
                format!("groups.{name}.versions.{version}.specFiles"),
                "no spec files".into(),
            ));
        }
    }
    Ok(())
}

fn served_default() -> bool {
    true
}

impl GroupConfig {
    /// The hub (storage) version: the one marked `storage: true`, else the newest whose ARM API version is
    /// not a preview (else the newest). `None` only for a group without versions.
    pub fn hub(&self) -> Option<&str> {
        if let Some((k, _)) = self.versions.iter().find(|(_, v)| v.storage) {
            return Some(k);
        }
        let newest = |preview_ok: bool| {
            self.versions
                .iter()
                .filter(|(_, v)| preview_ok || !v.arm_api_version.contains("preview"))
                .max_by(|(ka, a), (kb, b)| a.arm_api_version.cmp(&b.arm_api_version).then(kb.cmp(ka)))
                .map(|(k, _)| k.as_str())
        };
        newest(false).or_else(|| newest(true))
    }

    /// The Kubernetes API group: `kubernetesGroup`, else `<name>.<domain>` (`domain` is `output.apiDomain`).
    pub fn kube_group(&self, name: &str, domain: &str) -> String {
        self.kubernetes_group
            .clone()
            .unwrap_or_else(|| format!("{name}.{domain}"))
    }
}

fn is_type_ident(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_uppercase()) && s.chars().all(|c| c.is_ascii_alphanumeric()) && s != "Self"
}

/// An export name: lowerCamelCase ASCII (`adminCredentials`), a JSON key and, snake-cased, a Rust field.
fn is_export_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

/// An ARM action: the last segment of a POST path (`listClusterAdminCredential`).
fn is_action_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric())
}

fn is_module_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A dotted JSON path of property names (`properties.agentPoolProfiles`).
fn is_plain_path(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('.')
            .all(|s| !s.is_empty() && !s.contains(['[', ']', '{', '}']))
}

/// A rule's `source`: where the behaviour it encodes is documented (a URL), required so that every encoded
/// behaviour of a service can be checked.
fn check_source(key: &str, source: &str) -> std::result::Result<(), (String, String)> {
    let source = source.trim();
    if source.starts_with("https://") && source.len() > "https://".len() && !source.contains(char::is_whitespace) {
        Ok(())
    } else {
        Err((
            key.to_string(),
            format!("{source:?} is not a public source: give the https URL that documents the behaviour"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(versions: &[(&str, &str, bool)]) -> String {
        let mut out = String::from(
            "output: {crateName: x}\ngroups:\n  g:\n    provider: Microsoft.G\n    specFolder: g\n    versions:\n",
        );
        for (k, api, storage) in versions {
            out.push_str(&format!(
                "      {k}: {{armApiVersion: \"{api}\", specFiles: [a.json], storage: {storage}}}\n"
            ));
        }
        out
    }

    /// The error of a config whose kind `Widget` is the YAML flow mapping `{body}`, if any.
    fn kind_error(body: &str) -> Option<String> {
        let text = format!(
            "{}    kubernetes:\n      resources:\n        Widget: {{{body}}}\n",
            group(&[("v1", "2024-01-01", true)])
        );
        Config::parse(&text, Path::new("azure-arm.yaml"))
            .err()
            .map(|e| e.to_string())
    }

    /// The error of a config whose `kubernetes.resources.Widget.views` is `views` (YAML flow), if any.
    fn views_error(views: &str) -> Option<String> {
        kind_error(&format!("views: {views}"))
    }

    #[test]
    fn views_are_checked_naming_the_key() {
        assert_eq!(
            views_error("{read: {health: health}, exclude: {\"items/{id}\": one item}, refreshSeconds: 600}"),
            None
        );
        for (views, key, says) in [
            ("{read: {Health: health}}", "views.read.Health", "lowerCamelCase"),
            (
                "{read: {health: \"items/{id}\"}}",
                "views.read.health",
                "without parameters",
            ),
            ("{read: {health: /health}}", "views.read.health", "after the resource's"),
            ("{read: {a: health, b: Health}}", "views.read.b", "two fields"),
            ("{exclude: {health: \" \"}}", "views.exclude.health", "say why"),
            (
                "{read: {health: health}, exclude: {health: why}}",
                "views.exclude.health",
                "both",
            ),
            ("{refreshSeconds: 5}", "views.refreshSeconds", "below 60"),
            ("{reads: {}}", "views", "unknown field"),
        ] {
            let e = views_error(views).unwrap_or_else(|| panic!("{views}: accepted"));
            assert!(e.contains(key) && e.contains(says), "{views}: {e}");
        }
    }

    /// The error of a config whose kind `Widget` has `rest` (YAML flow entries) and `clusterApi: capi`, if any.
    fn cluster_api_error(rest: &str, capi: &str) -> Option<String> {
        kind_error(&format!("{rest}clusterApi: {capi}"))
    }

    #[test]
    fn cluster_api_is_checked_naming_the_key() {
        let src = "source: \"https://cluster-api.sigs.k8s.io/x\"";
        let secrets = "secrets: {kubeconfig: {action: listCredential, value: \"kubeconfigs[0].value\"}}, ";
        let views = "views: {read: {machines: machines}}, ";
        let plane = format!(
            "{{role: controlPlane, {src}, endpoint: {{hosts: [properties.fqdn], port: 443}}, \
             version: {{spec: properties.v, status: properties.currentV}}, kubeconfig: kubeconfig}}"
        );
        let pool = format!(
            "{{role: machinePool, {src}, replicas: properties.count, \
             providerIds: {{view: machines, id: properties.resourceId, prefix: \"azure://\", {src}}}}}"
        );
        assert_eq!(cluster_api_error(secrets, &plane), None);
        assert_eq!(cluster_api_error(views, &pool), None);
        assert_eq!(
            cluster_api_error("", &format!("{{role: infrastructureCluster, {src}}}")),
            None
        );
        for (rest, capi, key, says) in [
            ("", plane.clone(), "clusterApi.kubeconfig", "not a Secret export"),
            ("", pool.clone(), "clusterApi.providerIds.view", "not a view"),
            (
                secrets,
                plane.replace("port: 443", "port: 0"),
                "clusterApi.endpoint.port",
                "not a port",
            ),
            (
                secrets,
                plane.replace("[properties.fqdn]", "[]"),
                "clusterApi.endpoint.hosts",
                "at least one",
            ),
            (
                secrets,
                plane.replace("properties.fqdn", "a..b"),
                "clusterApi.endpoint.hosts[0]",
                "dotted",
            ),
            (
                secrets,
                plane.replace("https://cluster-api", "cluster-api"),
                "clusterApi.source",
                "public source",
            ),
            (
                views,
                pool.replace("replicas: properties.count, ", ""),
                "clusterApi.replicas",
                "needs its replicas",
            ),
            (
                views,
                pool.replace("machinePool", "controlPlane"),
                "clusterApi",
                "machine pool fields",
            ),
            (
                secrets,
                plane.replace("controlPlane", "machinePool"),
                "clusterApi",
                "control plane fields",
            ),
            (views, pool.replace("role:", "roles:"), "clusterApi", "unknown field"),
            (
                views,
                pool.replace("machinePool", "infrastructureCluster"),
                "clusterApi",
                "no other field",
            ),
        ] {
            let e = cluster_api_error(rest, &capi).unwrap_or_else(|| panic!("{capi}: accepted"));
            assert!(e.contains(key) && e.contains(says), "{capi}: {e}");
        }
    }

    fn hub(versions: &[(&str, &str, bool)]) -> Option<String> {
        let c = Config::parse(&group(versions), Path::new("azure-arm.yaml")).expect("valid");
        c.groups["g"].hub().map(str::to_string)
    }

    #[test]
    fn the_hub_is_the_storage_version_else_the_newest_non_preview() {
        assert_eq!(
            hub(&[("v1", "2024-01-01", true), ("v2", "2025-01-01", false)]).as_deref(),
            Some("v1")
        );
        assert_eq!(
            hub(&[("v1", "2024-01-01", false), ("v2", "2025-01-01", false)]).as_deref(),
            Some("v2")
        );
        assert_eq!(
            hub(&[
                ("v1", "2024-01-01", false),
                ("v2", "2025-01-01", false),
                ("v3", "2025-06-01-preview", false)
            ])
            .as_deref(),
            Some("v2")
        );
        assert_eq!(hub(&[("v1", "2025-06-01-preview", false)]).as_deref(), Some("v1"));
    }

    fn secret_export(body: &str) -> Result<Config> {
        let text = format!(
            "{}    kubernetes:\n      resources:\n        Widget:\n          secrets:\n            adminCredentials:\n{body}",
            group(&[("v1", "2024-01-01", true)])
        );
        Config::parse(&text, Path::new("azure-arm.yaml"))
    }

    #[test]
    fn secret_exports_say_how_to_fetch_the_value() {
        let c = secret_export(
            "              action: listClusterAdminCredential\n              value: kubeconfigs[0].value\n              base64: true\n",
        )
        .expect("valid");
        assert_eq!(
            c.groups["g"].kubernetes.resources["Widget"].secrets["adminCredentials"],
            SecretExportConfig {
                action: "listClusterAdminCredential".into(),
                value: "kubeconfigs[0].value".into(),
                base64: true,
            }
        );
        let key = "groups.g.kubernetes.resources.Widget.secrets.adminCredentials";
        let cases = [
            (
                "              action: listX\n              value: a\n              encoding: base64\n",
                format!("config key `{key}.encoding`: unknown field `encoding`"),
            ),
            (
                "              value: a\n",
                format!("config key `{key}.action`: missing field `action`"),
            ),
            (
                "              action: list/X\n              value: a\n",
                format!("config key `{key}.action`: \"list/X\" is not an ARM action name"),
            ),
            (
                "              action: listX\n              value: kubeconfigs[zero].value\n",
                format!("config key `{key}.value`: \"kubeconfigs[zero].value\": \"zero\" is not an array index"),
            ),
            (
                "              action: listX\n              value: kubeconfigs..value\n",
                format!("config key `{key}.value`: \"kubeconfigs..value\": every segment needs a property name"),
            ),
            (
                "              action: listX\n              value: \"a[0\"\n",
                format!("config key `{key}.value`: \"a[0\": \"a[0\" is not `name` or `name[<index>]`"),
            ),
        ];
        for (body, expected) in cases {
            let e = secret_export(body).expect_err(body).to_string();
            assert!(e.contains(&expected), "{body}: expected {expected:?} in {e}");
        }
    }

    #[test]
    fn two_storage_versions_are_an_error() {
        let e = Config::parse(
            &group(&[("v1", "2024-01-01", true), ("v2", "2025-01-01", true)]),
            Path::new("azure-arm.yaml"),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("at most one version may have `storage: true`"),
            "{e}"
        );
    }

    #[test]
    fn api_groups_are_under_the_api_domain_and_never_under_azure_com() {
        let base = group(&[("v1", "2024-01-01", false)]);
        let c = Config::parse(&base, Path::new("azure-arm.yaml")).expect("valid");
        assert_eq!(c.groups["g"].kube_group("g", &c.output.api_domain), "g.armgen.dev");
        let with = |output: &str, group_key: &str| {
            base.replacen("output: {crateName: x}", output, 1).replacen(
                "    provider: Microsoft.G\n",
                &format!("    provider: Microsoft.G\n{group_key}"),
                1,
            )
        };
        let c = Config::parse(
            &with("output: {crateName: x, apiDomain: example.org}", ""),
            Path::new("a.yaml"),
        )
        .expect("valid");
        assert_eq!(c.groups["g"].kube_group("g", &c.output.api_domain), "g.example.org");
        let cases = [
            (
                with("output: {crateName: x, apiDomain: azure.com}", ""),
                "output.apiDomain",
                "under azure.com",
            ),
            (
                with("output: {crateName: x, apiDomain: Azure.COM}", ""),
                "output.apiDomain",
                "not a DNS domain",
            ),
            (
                with("output: {crateName: x, apiDomain: armgen}", ""),
                "output.apiDomain",
                "not a DNS domain",
            ),
            (
                with(
                    "output: {crateName: x}",
                    "    kubernetesGroup: containerservice.azure.com\n",
                ),
                "groups.g.kubernetesGroup",
                "Azure Service Operator",
            ),
            (
                with("output: {crateName: x}", "    kubernetesGroup: bad_group.example\n"),
                "groups.g.kubernetesGroup",
                "not a Kubernetes API group",
            ),
        ];
        for (text, key, message) in cases {
            match Config::parse(&text, Path::new("a.yaml")) {
                Err(Error::Config { key: k, message: m, .. }) => {
                    assert_eq!(k, key, "{text}");
                    assert!(m.contains(message), "{text}: {m}");
                }
                other => panic!("{text}: expected an error at {key}, got {other:?}"),
            }
        }
    }
}
