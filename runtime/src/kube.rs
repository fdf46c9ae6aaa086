//! What the generated Kubernetes custom resources share: references to secrets, to other resources and to the
//! owner, the status conditions, and the resolver through which spec → ARM conversions turn references into
//! values.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::hub::Path;

/// A value held in a Kubernetes Secret: `{name, key}` in the custom resource's namespace. Secret values never
/// appear inline in a spec and never in a status.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct SecretReference {
    /// The Secret's name.
    pub name: String,
    /// The key within the Secret.
    pub key: String,
}

/// A value held in a ConfigMap key, `{name, key}` in the custom resource's namespace: what a `<property>FromConfig`
/// field names (the config's `fromConfig`), typically another object's ConfigMap export — a role assignment's
/// principal ID from an identity's `principalId` export, a federated credential's issuer from a cluster's
/// `oidcIssuerUrl`. The reconciler waits until the key exists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct ConfigMapReference {
    /// The ConfigMap's name.
    pub name: String,
    /// The key within the ConfigMap.
    pub key: String,
}

/// Where the operator writes a Secret export (`spec.operatorSpec.secrets.<export>`): the Secret `name` in the
/// custom resource's namespace and the `key` within it. The operator creates or updates the Secret.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct SecretDestination {
    /// The Secret's name.
    pub name: String,
    /// The key within the Secret.
    pub key: String,
}

/// Where the operator writes a ConfigMap export (`spec.operatorSpec.configMaps.<export>`): the ConfigMap
/// `name` in the custom resource's namespace and the `key` within it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct ConfigMapDestination {
    /// The ConfigMap's name.
    pub name: String,
    /// The key within the ConfigMap.
    pub key: String,
}

/// A value the operator computes with a CEL expression and writes to a Secret or ConfigMap
/// (`spec.operatorSpec.secretExpressions[]` / `configMapExpressions[]`): `value` is evaluated with `self` = the
/// custom resource (spec and status) and, for Secrets, `secret` = the resource's Secret export values by name;
/// it must give a string.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct ExportExpression {
    /// The Secret's or ConfigMap's name (in the custom resource's namespace).
    pub name: String,
    /// The key within it.
    pub key: String,
    /// The CEL expression, e.g. `self.status.fqdn + ":443"`.
    pub value: String,
}

/// A reference to an Azure resource: either its ARM ID, or another custom resource (in the same namespace
/// unless `namespace` is given) whose ARM ID the operator resolves.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceReference {
    /// The ARM resource ID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm_id: Option<String>,
    /// The API group of the referenced custom resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The kind of the referenced custom resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The name of the referenced custom resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The namespace of the referenced custom resource (default: the referring resource's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

impl ResourceReference {
    /// A reference by ARM ID.
    pub fn arm_id(id: impl Into<String>) -> Self {
        ResourceReference {
            arm_id: Some(id.into()),
            ..Default::default()
        }
    }
}

/// The owner of a top-level resource: its resource group, by name (in the operator's subscription) or by ARM ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceGroupOwner {
    /// The resource group's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The resource group's ARM ID (`/subscriptions/…/resourceGroups/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm_id: Option<String>,
}

/// The owner of a child resource: the parent custom resource, by name, in the same namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct KnownOwner {
    /// The parent custom resource's name.
    pub name: String,
}

/// A status condition, as Kubernetes conventions have it. The reconciler maintains one of type `Ready`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// RFC 3339 time of the last status change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// One difference between desired and actual state that remained right after a successful PUT.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KnownDifference {
    /// The field path, e.g. `spec.agentPoolProfiles[name=pool1].count`.
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// What the operator records about its own work on a resource.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorStatus {
    /// Differences the service does not apply; they do not trigger another PUT.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_differences: Vec<KnownDifference>,
    /// The long-running operation in flight, so that polling resumes after a restart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_operation: Option<String>,
    /// Free-form facts the operator keeps (for example the ARM ID it manages).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Why a spec could not be turned into an ARM payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversionError {
    /// The field, e.g. `spec.servicePrincipalProfile.secret`.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for ConversionError {}

/// A CustomResourceDefinition from its YAML manifest: what each generated kind's `crd()` returns for the manifest
/// it embeds (one function here rather than a YAML reader compiled into the generated crate).
pub fn crd(
    yaml: &str,
) -> Result<
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    serde_yaml_ng::Error,
> {
    serde_yaml_ng::from_str(yaml)
}

/// Reads a custom resource (JSON) as its generated type; an error names the field that does not fit
/// (`spec.agentPoolProfiles[0].count: invalid type: …`), `(root)` when the object itself is not one.
pub fn from_custom_resource<T: crate::json::FromJson>(value: &serde_json::Value) -> Result<T, ConversionError> {
    crate::json::read(value).map_err(|e| ConversionError {
        path: if e.path.is_empty() { "(root)".into() } else { e.path },
        message: e.message,
    })
}

/// Turns references into values during spec → ARM conversion. The reconciler implements it against the API
/// server; [`ArmIdsOnly`] resolves what needs no cluster.
pub trait Resolver {
    /// The value of a secret (the reconciler reads the Secret).
    fn secret(&self, path: &str, reference: &SecretReference) -> Result<String, ConversionError>;
    /// The ARM ID of a referenced resource.
    fn resource(&self, path: &str, reference: &ResourceReference) -> Result<String, ConversionError> {
        match &reference.arm_id {
            Some(id) => Ok(id.clone()),
            None => Err(ConversionError {
                path: path.to_string(),
                message: format!(
                    "a reference to the custom resource {}/{} needs a cluster to resolve",
                    reference.kind.as_deref().unwrap_or("?"),
                    reference.name.as_deref().unwrap_or("?")
                ),
            }),
        }
    }
    /// The value of a ConfigMap key (the reconciler reads the ConfigMap); `path` names the value's field.
    fn config_map(&self, path: &str, reference: &ConfigMapReference) -> Result<String, ConversionError> {
        Err(ConversionError {
            path: path.to_string(),
            message: format!(
                "the value from ConfigMap {:?} key {:?} needs a cluster to resolve",
                reference.name, reference.key
            ),
        })
    }
}

/// A part of a spec that becomes part of an ARM payload: generated for every nested spec type, and here for
/// references (a Secret's value, a resource's ARM ID, through the [`Resolver`]) and for arrays, maps, boxes and
/// options of such parts, so that a generated field reads `x: self.x.to_arm(resolver, &path.field("x"))?`.
/// `path` names the part in errors ([`Path::dotted`]) and is rendered only when one needs it.
pub trait ToArm {
    /// The ARM value.
    type Arm;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<Self::Arm, ConversionError>;
}

impl ToArm for SecretReference {
    type Arm = String;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<String, ConversionError> {
        resolver.secret(&path.dotted(), self)
    }
}

impl ToArm for ResourceReference {
    type Arm = String;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<String, ConversionError> {
        resolver.resource(&path.dotted(), self)
    }
}

impl<S: ToArm> ToArm for Option<S> {
    type Arm = Option<S::Arm>;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<Self::Arm, ConversionError> {
        self.as_ref().map(|value| value.to_arm(resolver, path)).transpose()
    }
}

impl<S: ToArm> ToArm for Vec<S> {
    type Arm = Vec<S::Arm>;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<Self::Arm, ConversionError> {
        self.iter()
            .enumerate()
            .map(|(i, item)| item.to_arm(resolver, &path.index(i)))
            .collect()
    }
}

impl<S: ToArm> ToArm for BTreeMap<String, S> {
    type Arm = BTreeMap<String, S::Arm>;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<Self::Arm, ConversionError> {
        self.iter()
            .map(|(key, item)| Ok((key.clone(), item.to_arm(resolver, &path.key(key))?)))
            .collect()
    }
}

impl<S: ToArm> ToArm for Box<S> {
    type Arm = Box<S::Arm>;
    fn to_arm(&self, resolver: &dyn Resolver, path: &Path<'_>) -> Result<Self::Arm, ConversionError> {
        Ok(Box::new(S::to_arm(self, resolver, path)?))
    }
}

/// A required property's value: the error names `path` when it is unset.
pub fn required<'a, T: ?Sized>(value: Option<&'a T>, path: &Path<'_>) -> Result<&'a T, ConversionError> {
    value.ok_or_else(|| missing(path))
}

/// The error for a required property left unset at `path`.
pub fn missing(path: &Path<'_>) -> ConversionError {
    ConversionError {
        path: path.dotted(),
        message: "required".to_string(),
    }
}

/// A map keyed by ARM IDs (the config's `armIdKeys`) from its references, each value the default (the values'
/// properties are all read-only).
pub fn keys_of_references<V: Default>(
    references: &[ResourceReference],
    resolver: &dyn Resolver,
    path: &Path<'_>,
) -> Result<BTreeMap<String, V>, ConversionError> {
    references
        .iter()
        .enumerate()
        .map(|(i, r)| Ok((r.to_arm(resolver, &path.index(i))?, V::default())))
        .collect()
}

/// The value of a `fromConfig` property: the spec's `value`, else the ConfigMap key `from` names (read through the
/// resolver), never both; `None` when neither is set.
pub fn value_or_config(
    value: &Option<String>,
    from: &Option<ConfigMapReference>,
    resolver: &dyn Resolver,
    path: &Path<'_>,
) -> Result<Option<String>, ConversionError> {
    match (value, from) {
        (Some(_), Some(_)) => {
            let name = match path {
                Path::Field { source, .. } => source,
                _ => "the value",
            };
            Err(ConversionError {
                path: path.dotted(),
                message: format!("set {name} or {name}FromConfig, not both"),
            })
        }
        (Some(v), None) => Ok(Some(v.clone())),
        (None, Some(r)) => resolver.config_map(&path.dotted(), r).map(Some),
        (None, None) => Ok(None),
    }
}

/// The references a map keyed by ARM IDs stands for (the config's `armIdKeys`: `identity.userAssignedIdentities`),
/// as `armId` references ordered by the IDs compared case-insensitively, as ARM compares them.
pub fn references_of_keys<V>(map: &BTreeMap<String, V>) -> Vec<ResourceReference> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_cached_key(|k| k.to_ascii_lowercase());
    keys.into_iter().map(|k| ResourceReference::arm_id(k.clone())).collect()
}

/// A resolver for use without a cluster: ARM-ID references resolve to themselves; secrets stay unresolved and
/// are written as the placeholder [`SECRET_PLACEHOLDER`] followed by `name/key` (ConfigMap values as
/// [`CONFIG_MAP_PLACEHOLDER`] and `name/key`), so that a printed payload shows where a secret goes without
/// containing one.
#[derive(Debug, Clone, Copy, Default)]
pub struct ArmIdsOnly;

/// The prefix of an unresolved secret in a payload built with [`ArmIdsOnly`].
pub const SECRET_PLACEHOLDER: &str = "$secret:";

/// The prefix of an unresolved ConfigMap value in a payload built with [`ArmIdsOnly`].
pub const CONFIG_MAP_PLACEHOLDER: &str = "$configMap:";

impl Resolver for ArmIdsOnly {
    fn secret(&self, _path: &str, reference: &SecretReference) -> Result<String, ConversionError> {
        Ok(format!("{SECRET_PLACEHOLDER}{}/{}", reference.name, reference.key))
    }
    fn config_map(&self, _path: &str, reference: &ConfigMapReference) -> Result<String, ConversionError> {
        Ok(format!("{CONFIG_MAP_PLACEHOLDER}{}/{}", reference.name, reference.key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    #[allow(dead_code)]
    struct Object {
        spec: Spec,
    }
    crate::json_object! { read Object { "spec" => spec (required) } }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Spec {
        pools: Vec<Pool>,
    }
    crate::json_object! { read Spec { "pools" => pools (required) } }
    #[derive(Debug)]
    #[allow(dead_code)]
    struct Pool {
        count: i32,
    }
    crate::json_object! { read Pool { "count" => count (required) } }

    #[test]
    fn custom_resource_errors_name_the_field() {
        let e = from_custom_resource::<Object>(&serde_json::json!({"spec": {"pools": "notalist"}})).unwrap_err();
        assert_eq!(e.path, "spec.pools");
        assert!(e.message.contains("expected a sequence"), "{}", e.message);
        let e = from_custom_resource::<Object>(&serde_json::json!({"spec": {"pools": [{"count": 1}, {"count": "x"}]}}))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "spec.pools[1].count: invalid type: string \"x\", expected i32"
        );
        let e = from_custom_resource::<Object>(&serde_json::json!("x")).unwrap_err();
        assert_eq!(e.path, "(root)");
    }
}
