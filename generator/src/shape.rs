//! The Kubernetes shape of a version's resources: custom resources with a `spec` a user writes and a
//! `status` the service fills, derived from the ARM IR after every ARM pass has run.
//!
//! Rules (DESIGN §3.4):
//! - **spec** holds the writable properties: `readOnly` ones are left out. **status** holds every property the
//!   service returns, except secrets.
//! - At the resource root, the ARM `properties` envelope (and any other `x-ms-client-flatten` object) is
//!   flattened: its properties become spec/status fields of their own; each field remembers its path in the
//!   ARM payload (`arm_path`), which the conversions follow. Deeper `x-ms-client-flatten` is kept nested (AKS
//!   has none). A flattened name that collides with a root name is prefixed with the envelope's name and
//!   reported.
//! - `x-ms-secret` properties become [`KubeRef::Secret`] in spec (a `{name, key}` reference to a Kubernetes
//!   Secret) and are absent from status.
//! - `format: arm-id` strings become [`KubeRef::ResourceRef`] in spec (an ARM ID, or another custom resource).
//! - The spec root gains `azureName` (the ARM resource name; defaults to `metadata.name`) and `owner` (the
//!   resource group of a top-level resource, or the parent custom resource of a child resource); the status
//!   root gains `conditions` and `operatorStatus`.
//! - Enums and discriminated unions are shared with the ARM types (same wire values).
//! - `operatorSpec` (spec root, every kind): where the operator writes the declared Secret and ConfigMap exports
//!   of `kubernetes.resources.<Kind>` (`{name, key}` each), and `secretExpressions` / `configMapExpressions`
//!   (CEL over the custom resource). Not sent to Azure.
//! - Collections: a spec collection set to `[]`/`{}` is sent (`kubernetes.emptyCollections: send`, the default)
//!   or treated as unset (`omit`); per property with `overrides.types.X.properties.y.emptyCollection`
//!   ([`KubeField::omit_empty`]).
//! - A property whose immutability the spec declares (`x-ms-mutability` without `update`) is marked
//!   `immutable` (CRD: `self == oldSelf`).

use std::collections::{BTreeMap, BTreeSet};

use heck::ToSnakeCase;
use serde::Serialize;

use crate::config::{EmptyCollections, GroupConfig, KubeResourceConfig, SecretExportConfig};
use crate::discover::Scope;
use crate::ir::{Diagnostic, Ir, ObjectType, Primitive, Property, TypeId, TypeKind, TypeRef, Validation};

/// The source of an immutability the spec itself declares.
pub const MUTABILITY_SOURCE: &str = "x-ms-mutability";

/// `spec:<arm type id>` or `status:<arm type id>`.
pub type KubeTypeId = String;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Family {
    Spec,
    Status,
}

impl Family {
    pub fn module(self) -> &'static str {
        match self {
            Family::Spec => "spec",
            Family::Status => "status",
        }
    }
}

/// The Kubernetes shape of one API version.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KubeIr {
    /// The Kubernetes API group, e.g. `containerservice.armgen.dev`.
    pub group: String,
    /// The Kubernetes version, e.g. `v2alpha1`.
    pub version: String,
    pub storage: bool,
    /// Whether the version is served (`versions.<v>.served`, default `true`); set by the caller of [`shape_with`].
    pub served: bool,
    pub resources: Vec<KubeResource>,
    /// Nested spec and status object types (the roots are in [`KubeResource`]).
    pub types: BTreeMap<KubeTypeId, KubeType>,
    /// The status types whose Rust struct would be the same as the spec type of the same ARM type (every
    /// property writable and returned, none a secret or an ARM ID): the status module names the spec struct
    /// instead of declaring a second one ([`status_as_spec`]).
    #[serde(skip_serializing_if = "BTreeSet::is_empty")]
    pub status_as_spec: BTreeSet<KubeTypeId>,
    pub diagnostics: Vec<Diagnostic>,
}

impl KubeIr {
    /// The type whose Rust struct `id` is: the spec type for a status type in [`KubeIr::status_as_spec`], else
    /// `id` itself.
    pub fn canonical(&self, id: &str) -> KubeTypeId {
        match self.status_as_spec.contains(id) {
            true => spec_twin(id).unwrap_or_else(|| id.to_string()),
            false => id.to_string(),
        }
    }
}

/// `spec:<arm type>` for `status:<arm type>`.
fn spec_twin(status_id: &str) -> Option<KubeTypeId> {
    status_id
        .strip_prefix(Family::Status.module())
        .and_then(|rest| rest.strip_prefix(':'))
        .map(|arm| format!("{}:{arm}", Family::Spec.module()))
}

/// The status types of `types` that are their spec twin's struct exactly: the same fields in the same order
/// (JSON and Rust names, descriptions, boxing) with the same types, a nested status type counting as the same as
/// its spec twin when it is in the set itself. Nested fields are all `Option`s in both families, so `required` and
/// the other spec-only flags (immutability, empty collections) do not change the struct. The largest such set:
/// start from every status type with a twin and drop those that differ until none does, so that recursive types
/// stay in it.
pub fn status_as_spec(types: &BTreeMap<KubeTypeId, KubeType>) -> BTreeSet<KubeTypeId> {
    let mut set: BTreeSet<KubeTypeId> = types
        .iter()
        .filter(|(id, t)| t.family == Family::Status && spec_twin(id).is_some_and(|twin| types.contains_key(&twin)))
        .map(|(id, _)| id.clone())
        .collect();
    loop {
        let differing: Vec<KubeTypeId> = set
            .iter()
            .filter(|id| {
                let twin = spec_twin(id).and_then(|twin| types.get(&twin));
                match (types.get(id.as_str()), twin) {
                    (Some(status), Some(spec)) => !same_struct(spec, status, &set),
                    _ => true,
                }
            })
            .cloned()
            .collect();
        if differing.is_empty() {
            return set;
        }
        for id in differing {
            set.remove(&id);
        }
    }
}

fn same_struct(spec: &KubeType, status: &KubeType, set: &BTreeSet<KubeTypeId>) -> bool {
    spec.rust_name == status.rust_name
        && spec.description == status.description
        && spec.fields.len() == status.fields.len()
        && spec.fields.iter().zip(&status.fields).all(|(f, g)| {
            f.json_name == g.json_name
                && f.rust_name == g.rust_name
                && f.description == g.description
                && f.boxed == g.boxed
                && f.special == Special::None
                && g.special == Special::None
                && same_ref(&f.ty, &g.ty, set)
        })
}

fn same_ref(spec: &KubeRef, status: &KubeRef, set: &BTreeSet<KubeTypeId>) -> bool {
    match (spec, status) {
        (KubeRef::Kube(a), KubeRef::Kube(b)) => set.contains(b) && spec_twin(b).as_deref() == Some(a.as_str()),
        (KubeRef::Array(a), KubeRef::Array(b)) | (KubeRef::Map(a), KubeRef::Map(b)) => same_ref(a, b, set),
        (KubeRef::Kube(_) | KubeRef::Array(_) | KubeRef::Map(_), _) | (_, KubeRef::Kube(_)) => false,
        (a, b) => a == b,
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct KubeResource {
    pub kind: String,
    /// Lowercase plural, e.g. `managedclusters`.
    pub plural: String,
    pub arm_type: String,
    /// The ARM module the resource's types live in (`managed_cluster`).
    pub module: String,
    /// The ARM payload type (the PUT body).
    pub arm_body: TypeId,
    pub owner: Owner,
    pub spec_fields: Vec<KubeField>,
    pub status_fields: Vec<KubeField>,
    pub description: Option<String>,
    /// What the operator may export to Secrets and ConfigMaps (`spec.operatorSpec`).
    pub exports: Exports,
    /// Whether a `<Kind>Template` kind is generated too.
    pub template: bool,
    /// Whether the Azure name must be a UUID (`kubernetes.resources.<Kind>.azureName.format: uuid`).
    pub uuid_name: bool,
    /// Set for an action kind ([`crate::ir::ActionMeta`]): its spec is the owner (the target) and the request
    /// body's properties; its status the result, start and end time, error, conditions and operator status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<crate::ir::ActionMeta>,
    /// The Cluster API contract the kind implements (`kubernetes.resources.<Kind>.clusterApi`): its fields are
    /// [`Special::Contract`] fields of the spec and status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_api: Option<crate::config::ClusterApiConfig>,
}

/// The declared exports of a kind, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Exports {
    /// Secret exports: name (e.g. `adminCredentials`) → the ARM action that returns the value, and where.
    pub secrets: Vec<(String, SecretExportConfig)>,
    /// ConfigMap exports: name → dotted JSON path in the ARM GET body.
    pub config_maps: Vec<(String, String)>,
}

impl Exports {
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty() && self.config_maps.is_empty()
    }
}

/// The group configuration the shaping follows (`kubernetes` and the `emptyCollection` overrides).
#[derive(Debug, Clone, Default)]
pub struct KubeOptions {
    /// The group's default for empty collections.
    pub empty_collections: EmptyCollections,
    /// (schema name, JSON property) → the property's own rule.
    pub empty_collection: BTreeMap<(String, String), EmptyCollections>,
    /// Per kind.
    pub resources: BTreeMap<String, KubeResourceConfig>,
}

impl KubeOptions {
    /// The options of a configured group.
    pub fn of_group(group: &GroupConfig) -> KubeOptions {
        let mut empty_collection = BTreeMap::new();
        for (ty, o) in &group.overrides.types {
            for (prop, po) in &o.properties {
                if let Some(rule) = po.empty_collection {
                    empty_collection.insert((ty.clone(), prop.clone()), rule);
                }
            }
        }
        KubeOptions {
            empty_collections: group.kubernetes.empty_collections,
            empty_collection,
            resources: group.kubernetes.resources.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Owner {
    /// A top-level resource in a resource group.
    ResourceGroup,
    /// A child resource: the parent's kind.
    Parent(String),
    /// An extension resource: its scope, any ARM resource, by `armId` or a custom resource of ours (`group`,
    /// `kind`, `name`) whose `status.id` it is.
    Scope,
    /// No owner: a resource in the subscription (resource groups), or a scope armgen does not model (tenant).
    Unsupported,
}

#[derive(Debug, Clone, Serialize)]
pub struct KubeType {
    pub family: Family,
    pub rust_name: String,
    /// The ARM type this one mirrors.
    pub source: TypeId,
    pub description: Option<String>,
    pub fields: Vec<KubeField>,
    /// The module (file stem) under `spec/` or `status/`: the ARM type's module.
    pub module: String,
}

/// What a synthetic root field is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Special {
    /// A field mirroring an ARM property.
    None,
    AzureName,
    Owner,
    Conditions,
    OperatorStatus,
    /// `operatorSpec`: the destinations of the kind's exports ([`KubeResource::exports`]).
    OperatorSpec,
    /// `<property>FromConfig`: the ConfigMap a `fromConfig` property ([`KubeField::from_config`], the field before
    /// this one) may take its value from. Not an ARM property of its own.
    FromConfig,
    /// A field of the Cluster API contract the kind implements ([`KubeResource::cluster_api`]): not an ARM
    /// property; the reconciler fills it from the ARM body as the config says.
    Contract(ContractField),
}

/// A contract field with its JSON name and description.
pub type ContractFieldDoc = (ContractField, &'static str, &'static str);

/// The fields of the Cluster API contracts (docs/cluster-api.md), by JSON name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ContractField {
    /// `spec.controlPlaneEndpoint` (`{host, port}`), written by the reconciler.
    Endpoint,
    /// `spec.version` (`v1.30.1`), written by Cluster API's topology controller.
    Version,
    /// `spec.providerIDList`, written by the reconciler.
    ProviderIds,
    /// `status.version`.
    StatusVersion,
    /// `status.initialization` (`controlPlaneInitialized` / `provisioned`), the v1beta2 contract.
    Initialization,
    /// `status.initialized`, the v1beta1 contract.
    Initialized,
    /// `status.ready`, the v1beta1 contract (still read for machine pools).
    Ready,
    /// `status.externalManagedControlPlane`.
    ExternalManaged,
    /// `status.replicas`.
    Replicas,
}

impl ContractField {
    /// The spec fields, then the status fields, of a contract role, with their JSON names and descriptions.
    pub fn of(role: crate::config::ClusterApiRole) -> (Vec<ContractFieldDoc>, Vec<ContractFieldDoc>) {
        use ContractField::*;
        match role {
            crate::config::ClusterApiRole::ControlPlane => (
                vec![
                    (
                        Endpoint,
                        "controlPlaneEndpoint",
                        "Cluster API: the endpoint of the cluster's API server, written by the operator from the resource (not sent to Azure).",
                    ),
                    (
                        Version,
                        "version",
                        "Cluster API: the Kubernetes version (`v1.30.1`) a ClusterClass topology asks for; the operator copies it, without the `v`, into the field it maps to.",
                    ),
                ],
                vec![
                    (
                        StatusVersion,
                        "version",
                        "Cluster API: the Kubernetes version the control plane runs (`v` and the version Azure reports).",
                    ),
                    (
                        Initialization,
                        "initialization",
                        "Cluster API (v1beta2 contract): `controlPlaneInitialized` once the control plane was first ready.",
                    ),
                    (
                        Initialized,
                        "initialized",
                        "Cluster API (v1beta1 contract): true once the control plane was first ready.",
                    ),
                    (
                        Ready,
                        "ready",
                        "Cluster API (v1beta1 contract): true once the control plane was first ready.",
                    ),
                    (
                        ExternalManaged,
                        "externalManagedControlPlane",
                        "Cluster API: true, the control plane has no machines.",
                    ),
                ],
            ),
            crate::config::ClusterApiRole::MachinePool => (
                vec![(
                    ProviderIds,
                    "providerIDList",
                    "Cluster API: the provider IDs of the pool's machines, written by the operator from a complete read of them (not sent to Azure).",
                )],
                vec![
                    (
                        Replicas,
                        "replicas",
                        "Cluster API: how many machines the pool has, as Azure reports it.",
                    ),
                    (
                        Initialization,
                        "initialization",
                        "Cluster API (v1beta2 contract): `provisioned` once the pool was first ready.",
                    ),
                    (Ready, "ready", "Cluster API: true once the pool was first ready."),
                ],
            ),
            crate::config::ClusterApiRole::InfrastructureCluster => (
                Vec::new(),
                vec![
                    (
                        Initialization,
                        "initialization",
                        "Cluster API (v1beta2 contract): `provisioned` once the resource was first ready.",
                    ),
                    (
                        Ready,
                        "ready",
                        "Cluster API (v1beta1 contract): true once the resource was first ready.",
                    ),
                ],
            ),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct KubeField {
    /// The JSON name in the custom resource.
    pub json_name: String,
    pub rust_name: String,
    pub ty: KubeRef,
    /// JSON names from the mirrored ARM object down to the property (`[properties, kubernetesVersion]`); empty
    /// for synthetic fields.
    pub arm_path: Vec<String>,
    /// The ARM properties along `arm_path` (for Option-ness and types in conversions).
    #[serde(skip)]
    pub arm_props: Vec<Property>,
    /// Required in the ARM payload (and writable): the CRD requires it.
    pub required: bool,
    pub immutable: bool,
    /// Why it is immutable: [`MUTABILITY_SOURCE`] (the spec's `x-ms-mutability`) or the config override's source.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub immutable_source: Option<String>,
    pub description: Option<String>,
    pub validation: Validation,
    pub identifiers: Option<Vec<String>>,
    pub boxed: bool,
    pub special: Special,
    /// A collection whose empty value spec → ARM does not send (treated like unset).
    pub omit_empty: bool,
    /// The value may come from a ConfigMap instead: the field after this one is its `<name>FromConfig`
    /// ([`Special::FromConfig`]). Set from the config's `fromConfig` override (spec only).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub from_config: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum KubeRef {
    Kube(KubeTypeId),
    /// An ARM enum, shared (same values on the wire and in the custom resource).
    ArmEnum(TypeId),
    /// An ARM discriminated union, shared.
    ArmUnion(TypeId),
    Primitive(Primitive),
    Array(Box<KubeRef>),
    Map(Box<KubeRef>),
    Json,
    /// `armgen_runtime::kube::SecretReference`.
    Secret,
    /// `armgen_runtime::kube::ResourceReference`.
    ResourceRef,
    /// `armgen_runtime::kube::ConfigMapReference` (`<property>FromConfig`).
    ConfigMapRef,
    /// A map keyed by ARM IDs (the config's `armIdKeys`), listed in the spec as `Vec<ResourceReference>`; the
    /// boxed shape is the map's value, which has no writable property (its spec type is empty).
    RefKeys(Box<KubeRef>),
}

impl KubeRef {
    pub fn kube_type(&self) -> Option<&KubeTypeId> {
        match self {
            KubeRef::Kube(id) => Some(id),
            KubeRef::Array(inner) | KubeRef::Map(inner) => inner.kube_type(),
            _ => None,
        }
    }
}

/// Shapes the resources of `ir` for Kubernetes, with default options (no exports, no templates, empty
/// collections sent).
pub fn shape(ir: &Ir, group: &str, version: &str, storage: bool) -> KubeIr {
    shape_with(ir, group, version, storage, &KubeOptions::default())
}

/// Shapes the resources of `ir` for Kubernetes, following `options`.
pub fn shape_with(ir: &Ir, group: &str, version: &str, storage: bool, options: &KubeOptions) -> KubeIr {
    let mut cx = Shaper {
        ir,
        options,
        types: BTreeMap::new(),
        diagnostics: Vec::new(),
        in_progress: BTreeSet::new(),
    };
    let mut resources = Vec::new();
    for r in &ir.resources {
        let Some(def) = ir.types.get(&r.body_type) else {
            continue;
        };
        let TypeKind::Object(body) = &def.kind else {
            cx.diagnostics.push(Diagnostic {
                at: def.origin.clone(),
                message: "a resource body that is not an object has no custom resource".into(),
            });
            continue;
        };
        let owner = match (r.parents.last(), &r.scope) {
            (Some(parent), _) => match ir.resources.iter().find(|p| &p.arm_type == parent) {
                Some(p) => Owner::Parent(p.kind.clone()),
                None => Owner::Unsupported,
            },
            (None, Scope::ResourceGroup) => Owner::ResourceGroup,
            (None, Scope::Extension) => Owner::Scope,
            (None, _) => Owner::Unsupported,
        };
        let action = r.action.is_some();
        let mut spec_fields = synthetic_spec_fields(action, &owner);
        let config = options.resources.get(&r.kind).cloned().unwrap_or_default();
        let exports = Exports {
            secrets: config.secrets.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            config_maps: config.config_maps.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        };
        // The contract's fields come before the ARM properties: a property of the same name is the one renamed.
        let cluster_api = config.cluster_api.clone().filter(|_| !action);
        let (contract_spec, contract_status) = match &cluster_api {
            Some(c) => ContractField::of(c.role),
            None => (Vec::new(), Vec::new()),
        };
        let contract = |(field, name, doc): (ContractField, &str, &str)| {
            synthetic(name, KubeRef::Json, Special::Contract(field), doc)
        };
        spec_fields.extend(contract_spec.into_iter().map(contract));
        spec_fields.extend(cx.root_fields(body, &r.body_type, Family::Spec));
        let mut status_fields: Vec<KubeField> = contract_status.into_iter().map(contract).collect();
        status_fields.extend(cx.root_fields(body, &r.body_type, Family::Status));
        status_fields.push(synthetic(
            "conditions",
            KubeRef::Json,
            Special::Conditions,
            if action {
                "The conditions of the action: `Succeeded` (`Unknown` while it runs), and `Ready` (`True` once it ended)."
            } else {
                "The conditions of the resource; `Ready` says whether it is in sync with Azure."
            },
        ));
        status_fields.push(synthetic(
            "operatorStatus",
            KubeRef::Json,
            Special::OperatorStatus,
            "What the operator records about its work: known differences, the operation in flight.",
        ));
        dedupe_names(&mut spec_fields, &def.origin, &mut cx.diagnostics);
        dedupe_names(&mut status_fields, &def.origin, &mut cx.diagnostics);
        resources.push(KubeResource {
            // An action named after a plural (`RotateClusterCertificates`, `DeleteMachines`) is its own plural.
            plural: if action && r.kind.ends_with('s') {
                r.kind.to_ascii_lowercase()
            } else {
                plural_of(&r.kind)
            },
            kind: r.kind.clone(),
            arm_type: r.arm_type.clone(),
            module: r.module.clone(),
            arm_body: r.body_type.clone(),
            owner,
            spec_fields,
            status_fields,
            description: def.description.clone(),
            exports,
            template: config.template,
            uuid_name: config
                .azure_name
                .as_ref()
                .is_some_and(|n| n.format == crate::config::AzureNameFormat::Uuid),
            action: r.action.clone(),
            cluster_api,
        });
    }
    let mut types = cx.types;
    prune_empty(&mut types, &mut resources);
    let status_as_spec = status_as_spec(&types);
    KubeIr {
        group: group.to_string(),
        version: version.to_string(),
        storage,
        served: true,
        resources,
        types,
        status_as_spec,
        diagnostics: cx.diagnostics,
    }
}

/// The synthetic spec fields a kind starts with: `azureName`, `owner` (when it has one) and `operatorSpec` for a
/// resource; `owner` (the target) alone for an action kind.
fn synthetic_spec_fields(action: bool, owner: &Owner) -> Vec<KubeField> {
    let mut spec_fields = Vec::new();
    if !action {
        spec_fields.push(synthetic(
            "azureName",
            KubeRef::Primitive(Primitive::String),
            Special::AzureName,
            "The name of the resource in Azure. Defaults to `metadata.name`.",
        ));
    }
    if action {
        spec_fields.push(synthetic(
            "owner",
            KubeRef::Json,
            Special::Owner,
            "The custom resource the action runs on, by `name`, in the same namespace.",
        ));
    } else if *owner != Owner::Unsupported {
        spec_fields.push(synthetic(
            "owner",
            KubeRef::Json,
            Special::Owner,
            match owner {
                Owner::ResourceGroup => {
                    "The resource group the resource lives in: `name` (in the operator's subscription) or `armId`."
                }
                Owner::Scope => {
                    "The resource this one extends (its scope): `armId`, or a custom resource of this namespace by \
                     `group`, `kind` and `name`, whose `status.id` is used once it is created."
                }
                _ => "The parent custom resource, by `name`, in the same namespace.",
            },
        ));
    }
    if !action {
        spec_fields.push(synthetic(
            "operatorSpec",
            KubeRef::Json,
            Special::OperatorSpec,
            "What the operator exports to Kubernetes Secrets and ConfigMaps once the resource is ready: declared \
             exports to the `{name, key}` given, and CEL expressions over the resource. Not sent to Azure.",
        ));
    }
    spec_fields
}

/// Drops object fields whose type has no field at all (a writable property all of whose own properties are
/// read-only, such as `properties.status` in spec), repeatedly, and the types nothing references any more.
/// Empty types inside maps and arrays stay: their keys and count carry information
/// (`identity.userAssignedIdentities` maps identity IDs to objects whose properties are all read-only).
fn prune_empty(types: &mut BTreeMap<KubeTypeId, KubeType>, resources: &mut [KubeResource]) {
    loop {
        let mut held: BTreeSet<KubeTypeId> = BTreeSet::new();
        let all_fields = types.values().flat_map(|t| t.fields.iter()).chain(
            resources
                .iter()
                .flat_map(|r| r.spec_fields.iter().chain(r.status_fields.iter())),
        );
        for f in all_fields {
            if !matches!(f.ty, KubeRef::Kube(_))
                && let Some(id) = f.ty.kube_type()
            {
                held.insert(id.clone());
            }
        }
        let empty: BTreeSet<KubeTypeId> = types
            .iter()
            .filter(|(id, t)| t.fields.is_empty() && !held.contains(*id))
            .map(|(id, _)| id.clone())
            .collect();
        if empty.is_empty() {
            break;
        }
        let keep = |f: &KubeField| !matches!(&f.ty, KubeRef::Kube(id) if empty.contains(id));
        for t in types.values_mut() {
            t.fields.retain(keep);
        }
        for r in resources.iter_mut() {
            r.spec_fields.retain(keep);
            r.status_fields.retain(keep);
        }
        types.retain(|id, _| !empty.contains(id));
    }
}

fn synthetic(name: &str, ty: KubeRef, special: Special, doc: &str) -> KubeField {
    KubeField {
        json_name: name.to_string(),
        rust_name: name.to_snake_case(),
        ty,
        arm_path: Vec::new(),
        arm_props: Vec::new(),
        required: false,
        immutable: special == Special::AzureName || special == Special::Owner,
        immutable_source: None,
        description: Some(doc.to_string()),
        validation: Validation::default(),
        identifiers: None,
        boxed: false,
        special,
        omit_empty: false,
        from_config: false,
    }
}

/// Two fields with one JSON or Rust name (a flattened property named like a root one): the later one is
/// prefixed with its envelope's name. Reported.
fn dedupe_names(fields: &mut [KubeField], origin: &str, diagnostics: &mut Vec<Diagnostic>) {
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for f in fields.iter_mut() {
        if taken.insert(f.json_name.clone()) {
            continue;
        }
        let prefix = f.arm_path.first().cloned().unwrap_or_else(|| "field".into());
        let mut json = format!("{prefix}{}", upper_first(&f.json_name));
        let mut n = 1;
        while taken.contains(&json) {
            n += 1;
            json = format!("{prefix}{}{n}", upper_first(&f.json_name));
        }
        diagnostics.push(Diagnostic {
            at: origin.to_string(),
            message: format!(
                "custom resource field {} is taken; {} is named {json}",
                f.json_name,
                f.arm_path.join(".")
            ),
        });
        f.rust_name = crate::passes::names::field_ident(&json.to_snake_case());
        f.json_name = json.clone();
        taken.insert(json);
    }
    // A renamed `fromConfig` field's sibling follows its name.
    for i in 1..fields.len() {
        if fields[i].special == Special::FromConfig && fields[i - 1].from_config {
            let (json, rust) = (fields[i - 1].json_name.clone(), fields[i - 1].rust_name.clone());
            fields[i].json_name = format!("{json}FromConfig");
            fields[i].rust_name = format!("{rust}_from_config");
        }
    }
}

fn upper_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

struct Shaper<'a> {
    ir: &'a Ir,
    options: &'a KubeOptions,
    types: BTreeMap<KubeTypeId, KubeType>,
    diagnostics: Vec<Diagnostic>,
    in_progress: BTreeSet<KubeTypeId>,
}

fn included(p: &Property, family: Family) -> bool {
    match family {
        Family::Spec => !p.read_only,
        // `x-ms-mutability` without `read`: the service never returns it (an action's `parameters`).
        Family::Status => !p.secret && p.mutability.as_ref().is_none_or(|m| m.iter().any(|x| x == "read")),
    }
}

impl Shaper<'_> {
    fn object_of(&self, ty: &TypeRef) -> Option<&ObjectType> {
        match ty {
            TypeRef::Named(id) => match &self.ir.types.get(id)?.kind {
                TypeKind::Object(o) => Some(o),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether spec → ARM omits an empty value of property `p` of the object type `holder`: the property's
    /// own `emptyCollection` (on `holder`'s schema, or on the `allOf` parent it is inherited from), else the
    /// group's default.
    fn omit_empty(&self, holder: &TypeId, p: &Property) -> bool {
        if !matches!(p.ty, TypeRef::Array(_) | TypeRef::Map(_)) {
            return false;
        }
        let rule = self
            .property_rule(holder, &p.name, 0)
            .unwrap_or(self.options.empty_collections);
        rule == EmptyCollections::Omit
    }

    fn property_rule(&self, holder: &TypeId, prop: &str, depth: usize) -> Option<EmptyCollections> {
        let def = self.ir.types.get(holder)?;
        if let Some(rule) = self.options.empty_collection.get(&(def.name.clone(), prop.to_string())) {
            return Some(*rule);
        }
        let TypeKind::Object(o) = &def.kind else { return None };
        if depth > 32 {
            return None;
        }
        o.parents.iter().find_map(|parent| {
            let declares = matches!(
                self.ir.types.get(parent).map(|d| &d.kind),
                Some(TypeKind::Object(po)) if po.properties.iter().any(|q| q.name == prop)
            );
            if declares {
                self.property_rule(parent, prop, depth + 1)
            } else {
                None
            }
        })
    }

    fn root_fields(&mut self, body: &ObjectType, body_id: &TypeId, family: Family) -> Vec<KubeField> {
        let mut out = Vec::new();
        for p in &body.properties {
            if !included(p, family) {
                continue;
            }
            // The ARM envelope's `id`, `name` and `type` are the URL's, never the spec's, even where a spec leaves
            // them writable (the network spec's SubResource `id`, a subnet's `name` and `type`): `azureName` and
            // the owner say where the resource is; a writable `name` would be sent beside the URL's name.
            if family == Family::Spec && matches!(p.name.as_str(), "id" | "name" | "type") {
                continue;
            }
            let envelope = (p.client_flatten || p.name == "properties") && self.object_of(&p.ty).is_some();
            if envelope {
                let inner = self.object_of(&p.ty).cloned().unwrap_or_default();
                let inner_id = p.ty.named().cloned().unwrap_or_default();
                for q in &inner.properties {
                    if !included(q, family) {
                        continue;
                    }
                    if let Some(f) = self.field(&[p.clone(), q.clone()], &inner_id, family) {
                        Self::push_field(&mut out, f);
                    }
                }
            } else if let Some(f) = self.field(std::slice::from_ref(p), body_id, family) {
                Self::push_field(&mut out, f);
            }
        }
        out
    }

    /// The field for the last property of `path` (the ARM properties from the mirrored object down); `holder`
    /// is the object type holding that property.
    fn field(&mut self, path: &[Property], holder: &TypeId, family: Family) -> Option<KubeField> {
        let p = path.last()?;
        let ty = self.kube_ref(&p.ty, p, family)?;
        // Create-only itself, or flattened out of a create-only envelope (an action's `parameters`).
        let create_only = path.iter().any(|q| {
            q.mutability
                .as_ref()
                .is_some_and(|m| m.iter().any(|x| x == "create") && !m.iter().any(|x| x == "update"))
        });
        let immutable_source = match (&p.immutable_source, create_only) {
            (Some(source), _) => Some(source.clone()),
            (None, true) => Some(MUTABILITY_SOURCE.to_string()),
            (None, false) => None,
        };
        let immutable = immutable_source.is_some();
        Some(KubeField {
            json_name: p.name.clone(),
            rust_name: p.rust_name.clone(),
            ty,
            arm_path: path.iter().map(|q| q.name.clone()).collect(),
            arm_props: path.to_vec(),
            required: family == Family::Spec && path.iter().all(|q| q.required && !q.read_only),
            immutable: family == Family::Spec && immutable,
            immutable_source: immutable_source.filter(|_| family == Family::Spec),
            description: p.description.clone(),
            validation: p.validation.clone(),
            identifiers: p.identifiers.clone(),
            boxed: p.boxed,
            special: Special::None,
            omit_empty: family == Family::Spec && self.omit_empty(holder, p),
            from_config: family == Family::Spec && p.from_config,
        })
    }

    /// Pushes `f` and, for a `fromConfig` field, its `<name>FromConfig` sibling.
    fn push_field(out: &mut Vec<KubeField>, f: KubeField) {
        let sibling = f.from_config.then(|| KubeField {
            json_name: format!("{}FromConfig", f.json_name),
            rust_name: format!("{}_from_config", f.rust_name),
            ty: KubeRef::ConfigMapRef,
            arm_path: Vec::new(),
            arm_props: Vec::new(),
            required: false,
            immutable: false,
            immutable_source: None,
            description: Some(format!(
                "Where to read `{}` from instead: a key of a ConfigMap in this namespace, such as another object's \
                 ConfigMap export. The operator waits until the key exists.",
                f.json_name
            )),
            validation: Validation::default(),
            identifiers: None,
            boxed: false,
            special: Special::FromConfig,
            omit_empty: false,
            from_config: false,
        });
        out.push(f);
        out.extend(sibling);
    }

    fn kube_ref(&mut self, ty: &TypeRef, p: &Property, family: Family) -> Option<KubeRef> {
        Some(match ty {
            TypeRef::Named(id) => match &self.ir.types.get(id)?.kind {
                TypeKind::Object(_) => KubeRef::Kube(self.object(id, family)),
                TypeKind::Enum(_) => KubeRef::ArmEnum(id.clone()),
                TypeKind::Union(_) => KubeRef::ArmUnion(id.clone()),
            },
            TypeRef::Primitive(Primitive::String) if family == Family::Spec && p.secret => KubeRef::Secret,
            TypeRef::Primitive(Primitive::String)
                if family == Family::Spec && p.format.as_deref() == Some("arm-id") =>
            {
                KubeRef::ResourceRef
            }
            TypeRef::Primitive(prim) => KubeRef::Primitive(*prim),
            TypeRef::Array(inner) => KubeRef::Array(Box::new(self.kube_ref(inner, p, family)?)),
            TypeRef::Map(inner) if family == Family::Spec && p.arm_id_keys && ty == &p.ty => {
                KubeRef::RefKeys(Box::new(self.kube_ref(inner, p, family)?))
            }
            TypeRef::Map(inner) => KubeRef::Map(Box::new(self.kube_ref(inner, p, family)?)),
            TypeRef::Json => KubeRef::Json,
        })
    }

    /// The spec or status projection of the ARM object `id`.
    fn object(&mut self, id: &TypeId, family: Family) -> KubeTypeId {
        let kid = format!("{}:{id}", family.module());
        if self.types.contains_key(&kid) || !self.in_progress.insert(kid.clone()) {
            return kid;
        }
        let Some(def) = self.ir.types.get(id) else { return kid };
        let TypeKind::Object(o) = &def.kind else { return kid };
        let mut fields = Vec::new();
        // A view belongs to the resource's root status (`root_fields`), not to other uses of its type (the pool an
        // upgradeNodeImageVersion action returns).
        for p in o.properties.iter().filter(|p| !p.view) {
            if included(p, family) {
                if let Some(f) = self.field(std::slice::from_ref(p), id, family) {
                    Self::push_field(&mut fields, f);
                }
            }
        }
        self.types.insert(
            kid.clone(),
            KubeType {
                family,
                rust_name: def.rust_name.clone(),
                source: id.clone(),
                description: def.description.clone(),
                fields,
                module: def.module.clone(),
            },
        );
        self.in_progress.remove(&kid);
        kid
    }
}

/// Checks that `path` (dotted) names a single value (string, number, boolean or enum, never a secret) in the ARM
/// body `body` of `kind`, for config key `key`; `holder` says what would hold the value.
fn single_value(
    ir: &Ir,
    body: &TypeId,
    kind: &str,
    path: &str,
    key: &str,
    holder: &str,
) -> std::result::Result<(), ConfigProblem> {
    let problem = |message: String| ConfigProblem {
        key: key.to_string(),
        message: format!("{message} (ARM API version {})", ir.api_version),
    };
    let mut ty = TypeRef::Named(body.clone());
    let mut walked = Vec::new();
    for segment in path.split('.') {
        let object = match &ty {
            TypeRef::Named(id) => match ir.types.get(id).map(|d| &d.kind) {
                Some(TypeKind::Object(o)) => o,
                _ => return Err(problem(format!("{path}: {} is not an object", walked.join(".")))),
            },
            _ => return Err(problem(format!("{path}: {} is not an object", walked.join(".")))),
        };
        let Some(p) = object.properties.iter().find(|p| p.name == segment) else {
            return Err(problem(format!(
                "{path}: the ARM type of {kind} has no property {segment}{}",
                if walked.is_empty() {
                    String::new()
                } else {
                    format!(" under {}", walked.join("."))
                }
            )));
        };
        if p.secret {
            return Err(problem(format!(
                "{path}: {segment} is a secret; {holder} must not hold it"
            )));
        }
        walked.push(segment.to_string());
        ty = p.ty.clone();
    }
    let value = match &ty {
        TypeRef::Primitive(_) => true,
        TypeRef::Named(id) => matches!(ir.types.get(id).map(|d| &d.kind), Some(TypeKind::Enum(_))),
        _ => false,
    };
    if value {
        Ok(())
    } else {
        Err(problem(format!(
            "{path} is not a single value (string, number, boolean or enum)"
        )))
    }
}

/// A config problem found against a version's IR: the key (below `groups.<name>.`) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub key: String,
    pub message: String,
}

/// Checks the `kubernetes` config and the `emptyCollection` overrides against one version's IR; returns the
/// configured kinds this version has (a kind no version has is stale, which the caller reports).
pub fn check_config(ir: &Ir, options: &KubeOptions) -> std::result::Result<BTreeSet<String>, ConfigProblem> {
    let mut matched = BTreeSet::new();
    for (kind, config) in &options.resources {
        let Some(r) = ir.resources.iter().find(|r| r.kind == *kind) else {
            continue;
        };
        matched.insert(kind.clone());
        for (export, secret) in &config.secrets {
            if !r.actions.contains(&secret.action) {
                return Err(ConfigProblem {
                    key: format!("kubernetes.resources.{kind}.secrets.{export}.action"),
                    message: format!(
                        "{kind} has no POST action {} (ARM API version {}; its actions: {})",
                        secret.action,
                        ir.api_version,
                        if r.actions.is_empty() {
                            "none".to_string()
                        } else {
                            r.actions.join(", ")
                        }
                    ),
                });
            }
        }
        for (export, path) in &config.config_maps {
            let key = format!("kubernetes.resources.{kind}.configMaps.{export}");
            single_value(ir, &r.body_type, kind, path, &key, "a ConfigMap")?;
        }
        if let Some(capi) = &config.cluster_api {
            let key = format!("kubernetes.resources.{kind}.clusterApi");
            for (i, host) in capi.endpoint.iter().flat_map(|e| e.hosts.iter()).enumerate() {
                single_value(
                    ir,
                    &r.body_type,
                    kind,
                    host,
                    &format!("{key}.endpoint.hosts[{i}]"),
                    "Cluster API",
                )?;
            }
            if let Some(v) = &capi.version {
                single_value(
                    ir,
                    &r.body_type,
                    kind,
                    &v.spec,
                    &format!("{key}.version.spec"),
                    "Cluster API",
                )?;
                single_value(
                    ir,
                    &r.body_type,
                    kind,
                    &v.status,
                    &format!("{key}.version.status"),
                    "Cluster API",
                )?;
            }
            if let Some(replicas) = &capi.replicas {
                single_value(
                    ir,
                    &r.body_type,
                    kind,
                    replicas,
                    &format!("{key}.replicas"),
                    "Cluster API",
                )?;
            }
        }
    }
    check_reference_overrides(ir)?;
    for (schema, prop) in options.empty_collection.keys() {
        for def in ir.types.values().filter(|d| d.name == *schema) {
            let TypeKind::Object(o) = &def.kind else { continue };
            if let Some(p) = o.properties.iter().find(|p| p.name == *prop)
                && !matches!(p.ty, TypeRef::Array(_) | TypeRef::Map(_))
            {
                return Err(ConfigProblem {
                    key: format!("overrides.types.{schema}.properties.{prop}.emptyCollection"),
                    message: format!("{prop} is not an array or a map (ARM API version {})", ir.api_version),
                });
            }
        }
    }
    Ok(matched)
}

/// The `fromConfig` and `armIdKeys` overrides fit their properties: `fromConfig` a plain writable string (not a
/// secret, not nullable) with no property named `<name>FromConfig` beside it; `armIdKeys` a map of objects
/// with no writable property (the spec lists only the keys).
fn check_reference_overrides(ir: &Ir) -> std::result::Result<(), ConfigProblem> {
    for def in ir.types.values() {
        let TypeKind::Object(o) = &def.kind else { continue };
        for p in &o.properties {
            let problem = |option: &str, message: String| ConfigProblem {
                key: format!("overrides.types.{}.properties.{}.{option}", def.name, p.name),
                message: format!("{message} (ARM API version {})", ir.api_version),
            };
            if p.from_config {
                let plain = p.ty == TypeRef::Primitive(Primitive::String) && !p.secret && !p.nullable && !p.read_only;
                if !plain {
                    return Err(problem(
                        "fromConfig",
                        format!("{} is not a writable, non-secret, non-nullable string", p.name),
                    ));
                }
                let sibling = format!("{}FromConfig", p.name);
                if o.properties.iter().any(|q| q.name == sibling) {
                    return Err(problem(
                        "fromConfig",
                        format!("{} already has a property {sibling}", def.name),
                    ));
                }
            }
            if p.arm_id_keys {
                let empty_values = match &p.ty {
                    TypeRef::Map(inner) => match inner.as_ref() {
                        TypeRef::Named(id) => matches!(
                            ir.types.get(id).map(|d| &d.kind),
                            Some(TypeKind::Object(v)) if v.properties.iter().all(|q| q.read_only)
                        ),
                        _ => false,
                    },
                    _ => false,
                };
                if !empty_values {
                    return Err(problem(
                        "armIdKeys",
                        format!("{} is not a map of objects whose properties are all read-only", p.name),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The lowercase plural of a kind, as Kubernetes names resources: English rules for the endings kinds have
/// (`ManagedCluster` → `managedclusters`, `UserAssignedIdentity` → `userassignedidentities`, `Address` →
/// `addresses`, `Gateway` → `gateways`).
pub fn plural_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let consonant_y =
        lower.len() > 1 && lower.ends_with('y') && !lower[..lower.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if lower.ends_with(['s', 'x', 'z']) || lower.ends_with("ch") || lower.ends_with("sh") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

#[cfg(test)]
mod status_as_spec_tests {
    use super::*;

    fn field(name: &str, ty: KubeRef) -> KubeField {
        let mut f = synthetic(name, ty, Special::None, "a property");
        f.immutable = false;
        f
    }

    fn ty(family: Family, name: &str, fields: Vec<KubeField>) -> (KubeTypeId, KubeType) {
        let id = format!("{}:{name}", family.module());
        let t = KubeType {
            family,
            rust_name: name.to_string(),
            source: name.to_string(),
            description: None,
            fields,
            module: "shared".into(),
        };
        (id, t)
    }

    fn kube(id: &str) -> KubeRef {
        KubeRef::Kube(id.to_string())
    }

    #[test]
    fn a_status_type_is_its_spec_twin_when_every_field_and_nested_type_is_the_same() {
        let string = || KubeRef::Primitive(Primitive::String);
        let types: BTreeMap<KubeTypeId, KubeType> = [
            // Same fields: shared.
            ty(Family::Spec, "Plain", vec![field("a", string())]),
            ty(Family::Status, "Plain", vec![field("a", string())]),
            // Recursive, through a map of itself: shared (the largest set keeps cycles).
            ty(
                Family::Spec,
                "Tree",
                vec![field("children", KubeRef::Map(Box::new(kube("spec:Tree"))))],
            ),
            ty(
                Family::Status,
                "Tree",
                vec![field("children", KubeRef::Map(Box::new(kube("status:Tree"))))],
            ),
            // The spec has a resource reference where the status has the ARM ID: not shared.
            ty(Family::Spec, "Link", vec![field("target", KubeRef::ResourceRef)]),
            ty(Family::Status, "Link", vec![field("target", string())]),
            // Holds a `Link`, which differs: not shared either.
            ty(Family::Spec, "Holder", vec![field("link", kube("spec:Link"))]),
            ty(Family::Status, "Holder", vec![field("link", kube("status:Link"))]),
            // The status has a read-only property more: not shared.
            ty(Family::Spec, "Grown", vec![field("a", string())]),
            ty(
                Family::Status,
                "Grown",
                vec![field("a", string()), field("state", string())],
            ),
            // No spec twin (all read-only).
            ty(Family::Status, "Report", vec![field("a", string())]),
        ]
        .into_iter()
        .collect();
        let shared = status_as_spec(&types);
        assert_eq!(
            shared.iter().map(String::as_str).collect::<Vec<_>>(),
            ["status:Plain", "status:Tree"]
        );
        let ir = KubeIr {
            types,
            status_as_spec: shared,
            ..Default::default()
        };
        assert_eq!(ir.canonical("status:Tree"), "spec:Tree");
        assert_eq!(ir.canonical("status:Holder"), "status:Holder");
        assert_eq!(ir.canonical("spec:Plain"), "spec:Plain");
    }

    #[test]
    fn a_different_description_keeps_the_status_type_its_own() {
        let string = || KubeRef::Primitive(Primitive::String);
        let mut described = field("a", string());
        described.description = Some("another text".into());
        let types: BTreeMap<KubeTypeId, KubeType> = [
            ty(Family::Spec, "Plain", vec![field("a", string())]),
            ty(Family::Status, "Plain", vec![described]),
        ]
        .into_iter()
        .collect();
        assert!(status_as_spec(&types).is_empty());
    }
}

#[cfg(test)]
mod plural_tests {
    #[test]
    fn plurals_follow_english_endings() {
        for (kind, plural) in [
            ("ManagedCluster", "managedclusters"),
            ("UserAssignedIdentity", "userassignedidentities"),
            ("Gateway", "gateways"),
            ("Address", "addresses"),
            ("Box", "boxes"),
            ("Patch", "patches"),
            ("Policy", "policies"),
            ("ManagedClusterTemplate", "managedclustertemplates"),
        ] {
            assert_eq!(super::plural_of(kind), plural, "{kind}");
        }
    }
}
