//! Exports (`spec.operatorSpec`): Secrets and ConfigMaps the reconciler writes, in the custom resource's
//! namespace, each time the resource is `Ready`.
//!
//! - `configMaps.<export>: {name, key}`: the value at the export's path in the ARM GET body
//!   ([`KindInfo::config_map_exports`]); `configMapExpressions: [{name, key, value}]`: a CEL expression over
//!   `self` (the custom resource, its status from the same GET). Rewritten when different, every reconcile.
//! - `secrets.<export>: {name, key}`: the value from the export's ARM POST action ([`KindInfo::secret_exports`],
//!   e.g. `listClusterAdminCredential` → `kubeconfigs[0].value`, base64-decoded); `secretExpressions`: CEL over
//!   `self` and `secret` (every Secret export of the kind by name). Each POST is an ARM call, so a Secret is
//!   refreshed only when it is missing, when its keys change, when the resource has just become `Ready` for its
//!   current generation (after a create or an update, or after a failure), or when its refresh time
//!   ([`EXPORTED_AT`]) is older than [`crate::context::Settings::export_refresh`]; its data is rewritten only
//!   when it changed (otherwise only the refresh time).
//!
//! Several exports may share a Secret or ConfigMap (different keys). Every Secret and ConfigMap written has an
//! ownerReference to the custom resource (`controller: true`, `blockOwnerDeletion: true`), so that it is
//! garbage-collected with it, and holds exactly the keys exported to it. One that exists and is not controlled
//! by the custom resource is never overwritten: `ExportConflict`. An expression that does not compile, fails or
//! gives no string is `ExportExpressionInvalid`, naming it.
//!
//! Secret values are never logged, put in events or in the status: messages name exports, Secrets and keys, and
//! CEL errors of `secretExpressions` have the export values redacted.

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;

use armgen_runtime::kube::{ExportExpression, SecretDestination};
use armgen_runtime::{KindInfo, SecretExport};
use base64::Engine;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::context::{Error, Failure, Retry, Shared};

/// The annotation on an exported Secret with the time (RFC 3339) its values were last fetched from Azure.
pub const EXPORTED_AT: &str = "armgen.dev/exported-at";

/// The label on every Secret and ConfigMap an export writes (value `true`). The reconciler watches the labelled
/// ConfigMaps, metadata only, to wake the objects whose `<field>FromConfig` reads one (controller.rs).
pub const EXPORT_LABEL: &str = "armgen.dev/export";

/// `spec.operatorSpec`, read generically (every kind's has this shape, with the kind's export names).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OperatorSpec {
    #[serde(default)]
    secrets: BTreeMap<String, Option<SecretDestination>>,
    #[serde(default)]
    config_maps: BTreeMap<String, Option<SecretDestination>>,
    #[serde(default)]
    secret_expressions: Option<Vec<ExportExpression>>,
    #[serde(default)]
    config_map_expressions: Option<Vec<ExportExpression>>,
}

/// Why exporting stopped.
#[derive(Debug)]
pub enum ExportError {
    /// The `Ready=False` reason and message.
    Failure(Failure),
    /// The API server failed; retried with backoff.
    Kube(Error),
}

impl From<Failure> for ExportError {
    fn from(f: Failure) -> Self {
        ExportError::Failure(f)
    }
}

/// Where one exported value comes from.
#[derive(Debug, Clone)]
enum Source<'a> {
    Export(&'a SecretExport),
    ConfigMapPath { export: &'a str, path: &'a str },
    Expression { field: String, expression: &'a str },
}

impl Source<'_> {
    fn describe(&self) -> String {
        match self {
            Source::Export(e) => format!("spec.operatorSpec.secrets.{}", e.name),
            Source::ConfigMapPath { export, .. } => format!("spec.operatorSpec.configMaps.{export}"),
            Source::Expression { field, .. } => field.clone(),
        }
    }
}

/// Destination object name → key → source.
type Plan<'a> = BTreeMap<String, BTreeMap<String, Source<'a>>>;

/// The custom resource being exported from.
pub struct Exporter<'a> {
    pub shared: &'a Shared,
    pub info: &'static KindInfo,
    pub object: &'a DynamicObject,
    /// The ARM GET body the resource is `Ready` with.
    pub arm: &'a Value,
    pub bearer: Option<&'a str>,
}

impl Exporter<'_> {
    /// Writes the exports of `spec.operatorSpec`; nothing (and no API call) when it declares none.
    pub async fn write(&self) -> Result<(), ExportError> {
        let kubeconfig = crate::capi::kubeconfig_secret(self.info, self.object);
        let spec = match self.object.data.pointer("/spec/operatorSpec") {
            None | Some(Value::Null) if kubeconfig.is_none() => return Ok(()),
            None | Some(Value::Null) => OperatorSpec::default(),
            Some(v) => parse_operator_spec(v)?,
        };
        let secret_expressions = spec.secret_expressions.clone().unwrap_or_default();
        let config_map_expressions = spec.config_map_expressions.clone().unwrap_or_default();
        let wants_secrets =
            spec.secrets.values().any(Option::is_some) || !secret_expressions.is_empty() || kubeconfig.is_some();
        let wants_config_maps = spec.config_maps.values().any(Option::is_some) || !config_map_expressions.is_empty();
        if !wants_secrets && !wants_config_maps {
            return Ok(());
        }
        let this = if secret_expressions.is_empty() && config_map_expressions.is_empty() {
            Value::Null
        } else {
            self.self_value()
        };
        if wants_config_maps {
            let plan = self.config_map_plan(&spec, &config_map_expressions)?;
            for (name, keys) in &plan {
                self.write_config_map(name, keys, &this).await?;
            }
        }
        if wants_secrets {
            let plan = self.secret_plan(&spec, &secret_expressions)?;
            let mut values = SecretValues::default();
            let force = !self.ready_for_generation();
            for (name, keys) in &plan {
                self.write_secret(name, keys, &this, &mut values, force).await?;
            }
        }
        Ok(())
    }

    fn namespace(&self) -> String {
        self.object.namespace().unwrap_or_default()
    }

    fn describe(&self) -> String {
        format!("{} {}/{}", self.info.kind, self.namespace(), self.object.name_any())
    }

    fn kube_error(&self, action: &'static str, source: kube::Error) -> ExportError {
        ExportError::Kube(Error::Kube {
            object: self.describe(),
            action,
            source,
        })
    }

    /// Whether the previous reconcile left `Ready=True` for the current generation (so that the resource did
    /// not just become ready: no create, update or failure since).
    fn ready_for_generation(&self) -> bool {
        let ready = self
            .object
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
            });
        ready.is_some_and(|c| {
            c.get("status").and_then(Value::as_str) == Some("True")
                && c.get("observedGeneration").and_then(Value::as_i64) == self.object.metadata.generation
        })
    }

    /// `self` of the CEL expressions: the custom resource, with the status of the ARM GET body.
    fn self_value(&self) -> Value {
        let info = self.info;
        let status = aks_api::import_custom_resource(
            info.group,
            info.version,
            info.kind,
            &self.arm.to_string(),
            &self.object.name_any(),
            Some(&self.namespace()),
        )
        .and_then(Result::ok)
        .and_then(|cr| cr.get("status").cloned())
        .or_else(|| self.object.data.get("status").cloned())
        .unwrap_or_else(|| json!({}));
        json!({
            "apiVersion": info.api_version(),
            "kind": info.kind,
            "metadata": {
                "name": self.object.name_any(),
                "namespace": self.namespace(),
                "labels": self.object.labels(),
                "annotations": self.object.annotations(),
            },
            "spec": self.object.data.get("spec").cloned().unwrap_or_else(|| json!({})),
            "status": status,
        })
    }

    fn config_map_plan<'s>(
        &self,
        spec: &'s OperatorSpec,
        expressions: &'s [ExportExpression],
    ) -> Result<Plan<'s>, Failure> {
        let mut plan = Plan::new();
        for (export, destination) in &spec.config_maps {
            let Some(destination) = destination else { continue };
            let Some((_, path)) = self.info.config_map_exports.iter().find(|(n, _)| n == export) else {
                return Err(unknown_export(self.info, "configMaps", export));
            };
            let source = Source::ConfigMapPath { export, path };
            add(&mut plan, "ConfigMap", destination, source)?;
        }
        for (i, e) in expressions.iter().enumerate() {
            let source = Source::Expression {
                field: format!("spec.operatorSpec.configMapExpressions[{i}]"),
                expression: &e.value,
            };
            add(&mut plan, "ConfigMap", &destination_of(e), source)?;
        }
        Ok(plan)
    }

    fn secret_plan<'s>(
        &self,
        spec: &'s OperatorSpec,
        expressions: &'s [ExportExpression],
    ) -> Result<Plan<'s>, Failure> {
        let mut plan = Plan::new();
        for (export, destination) in &spec.secrets {
            let Some(destination) = destination else { continue };
            let Some(e) = self.info.secret_exports.iter().find(|e| e.name == export) else {
                return Err(unknown_export(self.info, "secrets", export));
            };
            add(&mut plan, "Secret", destination, Source::Export(e))?;
        }
        for (i, e) in expressions.iter().enumerate() {
            let source = Source::Expression {
                field: format!("spec.operatorSpec.secretExpressions[{i}]"),
                expression: &e.value,
            };
            add(&mut plan, "Secret", &destination_of(e), source)?;
        }
        // The kubeconfig Secret of Cluster API's control plane contract (`<cluster>-kubeconfig`, key `value`).
        if let Some((name, export)) = crate::capi::kubeconfig_secret(self.info, self.object) {
            let Some(e) = self.info.secret_exports.iter().find(|e| e.name == export) else {
                return Err(unknown_export(self.info, "secrets", export));
            };
            let destination = SecretDestination {
                name,
                key: armgen_runtime::capi::KUBECONFIG_KEY.to_string(),
            };
            add(&mut plan, "Secret", &destination, Source::Export(e))?;
        }
        Ok(plan)
    }

    fn owner_reference(&self) -> Result<OwnerReference, Failure> {
        let uid = self.object.uid().ok_or_else(|| {
            Failure::waiting(
                "ExportFailed",
                format!(
                    "{} has no uid yet; exports need one for their ownerReference",
                    self.describe()
                ),
            )
        })?;
        Ok(OwnerReference {
            api_version: self.info.api_version(),
            kind: self.info.kind.to_string(),
            name: self.object.name_any(),
            uid,
            controller: Some(true),
            block_owner_deletion: Some(true),
        })
    }

    /// Refuses to touch an existing object not controlled by the custom resource.
    fn check_owner(&self, what: &str, name: &str, meta: &ObjectMeta, owner: &OwnerReference) -> Result<(), Failure> {
        let references = meta.owner_references.as_deref().unwrap_or_default();
        if references
            .iter()
            .any(|r| r.uid == owner.uid && r.controller == Some(true))
        {
            return Ok(());
        }
        let holder = match references.iter().find(|r| r.controller == Some(true)) {
            Some(r) => format!("it is controlled by {} {}", r.kind, r.name),
            None => "it has no controller".to_string(),
        };
        Err(Failure::waiting(
            "ExportConflict",
            format!(
                "{what} {}/{name} exists and is not owned by {}: {holder}; refusing to overwrite it",
                self.namespace(),
                self.describe()
            ),
        ))
    }

    async fn write_config_map(
        &self,
        name: &str,
        keys: &BTreeMap<String, Source<'_>>,
        this: &Value,
    ) -> Result<(), ExportError> {
        let mut data = BTreeMap::new();
        for (key, source) in keys {
            let value = match source {
                Source::ConfigMapPath { export, path } => self.arm_value(export, path)?,
                Source::Expression { field, expression } => evaluate(field, expression, this, None)?,
                Source::Export(_) => continue,
            };
            data.insert(key.clone(), value);
        }
        let owner = self.owner_reference()?;
        let api: Api<ConfigMap> = Api::namespaced(self.shared.client.clone(), &self.namespace());
        let existing = api
            .get_opt(name)
            .await
            .map_err(|e| self.kube_error("reading an export ConfigMap", e))?;
        match existing {
            Some(mut current) => {
                self.check_owner("ConfigMap", name, &current.metadata, &owner)?;
                let labelled = current.labels().get(EXPORT_LABEL).is_some_and(|v| v == "true");
                if current.data.as_ref() == Some(&data) && current.binary_data.is_none() && labelled {
                    return Ok(());
                }
                current.data = Some(data);
                current.binary_data = None;
                current
                    .labels_mut()
                    .insert(EXPORT_LABEL.to_string(), "true".to_string());
                api.replace(name, &PostParams::default(), &current)
                    .await
                    .map_err(|e| self.kube_error("updating an export ConfigMap", e))?;
            }
            None => {
                let cm = ConfigMap {
                    metadata: self.new_meta(name, owner, BTreeMap::new()),
                    data: Some(data),
                    ..Default::default()
                };
                api.create(&PostParams::default(), &cm)
                    .await
                    .map_err(|e| self.kube_error("creating an export ConfigMap", e))?;
            }
        }
        tracing::info!(kind = self.info.kind, object = %self.describe(), config_map = name, "exported ConfigMap");
        Ok(())
    }

    fn new_meta(&self, name: &str, owner: OwnerReference, annotations: BTreeMap<String, String>) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(self.namespace()),
            owner_references: Some(vec![owner]),
            labels: Some(BTreeMap::from([(EXPORT_LABEL.to_string(), "true".to_string())])),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..Default::default()
        }
    }

    /// A ConfigMap export's value: a scalar at `path` of the GET body.
    fn arm_value(&self, export: &str, path: &str) -> Result<String, Failure> {
        let at = format!("spec.operatorSpec.configMaps.{export}");
        match armgen_runtime::exports::lookup(self.arm, path) {
            Ok(Some(v)) => armgen_runtime::exports::scalar_text(v).ok_or_else(|| {
                Failure::permanent(
                    "ExportValueMissing",
                    format!("{at}: {path} of the Azure resource is not a single value"),
                )
            }),
            Ok(None) => Err(Failure::waiting(
                "ExportValueMissing",
                format!("{at}: the Azure resource has no {path}"),
            )),
            Err(e) => Err(Failure::permanent("ExportValueMissing", format!("{at}: {e}"))),
        }
    }

    async fn write_secret(
        &self,
        name: &str,
        keys: &BTreeMap<String, Source<'_>>,
        this: &Value,
        values: &mut SecretValues,
        force: bool,
    ) -> Result<(), ExportError> {
        let owner = self.owner_reference()?;
        let api: Api<Secret> = Api::namespaced(self.shared.client.clone(), &self.namespace());
        let existing = api
            .get_opt(name)
            .await
            .map_err(|e| self.kube_error("reading an export Secret", e))?;
        if let Some(current) = &existing {
            self.check_owner("Secret", name, &current.metadata, &owner)?;
            let same_keys = current.data.as_ref().is_some_and(|d| d.keys().eq(keys.keys()));
            if !force && same_keys && self.fresh(current) {
                return Ok(());
            }
        }
        let mut data = BTreeMap::new();
        for (key, source) in keys {
            let value = match source {
                Source::Export(e) => values.get(self, e).await?.to_vec(),
                Source::Expression { field, expression } => {
                    let secrets = values.all(self).await?;
                    evaluate(field, expression, this, Some(&secrets))?.into_bytes()
                }
                Source::ConfigMapPath { .. } => continue,
            };
            data.insert(key.clone(), ByteString(value));
        }
        let now = k8s_openapi::jiff::Timestamp::now().to_string();
        match existing {
            Some(current) if current.data.as_ref() == Some(&data) && current.string_data.is_none() => {
                // Unchanged: only the refresh time.
                let patch = json!({"metadata": {"annotations": {EXPORTED_AT: now}}});
                api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(|e| self.kube_error("updating an export Secret", e))?;
            }
            Some(mut current) => {
                current.data = Some(data);
                current.string_data = None;
                current
                    .metadata
                    .annotations
                    .get_or_insert_with(BTreeMap::new)
                    .insert(EXPORTED_AT.to_string(), now);
                api.replace(name, &PostParams::default(), &current)
                    .await
                    .map_err(|e| self.kube_error("updating an export Secret", e))?;
                tracing::info!(kind = self.info.kind, object = %self.describe(), secret = name, keys = ?keys.keys().collect::<Vec<_>>(), "exported Secret");
            }
            None => {
                let mut metadata = self.new_meta(name, owner, BTreeMap::from([(EXPORTED_AT.to_string(), now)]));
                // The kubeconfig Secret as Cluster API reads it: its type (fixed at creation) and cluster label.
                let capi = crate::capi::kubeconfig_secret(self.info, self.object).filter(|(n, _)| n == name);
                let type_ = match &capi {
                    Some(_) => armgen_runtime::capi::SECRET_TYPE,
                    None => "Opaque",
                };
                if capi.is_some()
                    && let Some(cluster) = crate::capi::cluster_name(self.object)
                {
                    metadata.labels.get_or_insert_with(BTreeMap::new).insert(
                        armgen_runtime::capi::CLUSTER_NAME_LABEL.to_string(),
                        cluster.to_string(),
                    );
                }
                let secret = Secret {
                    metadata,
                    data: Some(data),
                    type_: Some(type_.into()),
                    ..Default::default()
                };
                api.create(&PostParams::default(), &secret)
                    .await
                    .map_err(|e| self.kube_error("creating an export Secret", e))?;
                tracing::info!(kind = self.info.kind, object = %self.describe(), secret = name, keys = ?keys.keys().collect::<Vec<_>>(), "exported Secret");
            }
        }
        Ok(())
    }

    /// Whether the Secret's values were fetched less than `export_refresh` ago.
    fn fresh(&self, secret: &Secret) -> bool {
        let Some(at) = secret
            .annotations()
            .get(EXPORTED_AT)
            .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
        else {
            return false;
        };
        let age = k8s_openapi::jiff::Timestamp::now().as_millisecond() - at.as_millisecond();
        let limit = i64::try_from(self.shared.settings.export_refresh.as_millis()).unwrap_or(i64::MAX);
        (0..limit).contains(&age)
    }

    /// One Secret export's value, from its ARM POST action.
    async fn fetch(&self, export: &SecretExport) -> Result<Vec<u8>, Failure> {
        let at = format!("Secret export {} (POST {})", export.name, export.action);
        let id = self
            .arm
            .get("id")
            .and_then(Value::as_str)
            .ok_or_else(|| Failure::waiting("ExportFailed", format!("{at}: the Azure resource has no id")))?;
        let body = self
            .shared
            .arm
            .post(id, export.action, self.info.arm.api_version, self.bearer)
            .await
            .map_err(|e| Failure::arm(&e))?
            .unwrap_or(Value::Null);
        let value = match armgen_runtime::exports::lookup(&body, export.value_path) {
            Ok(Some(Value::String(s))) => s.clone(),
            Ok(Some(_)) => {
                return Err(Failure::permanent(
                    "ExportValueMissing",
                    format!("{at}: {} of the response is not a string", export.value_path),
                ));
            }
            Ok(None) => {
                return Err(Failure::waiting(
                    "ExportValueMissing",
                    format!("{at}: the response has no {}", export.value_path),
                ));
            }
            Err(e) => return Err(Failure::permanent("ExportValueMissing", format!("{at}: {e}"))),
        };
        if !export.base64 {
            return Ok(value.into_bytes());
        }
        base64::engine::general_purpose::STANDARD
            .decode(value.trim())
            .map_err(|_| {
                Failure::permanent(
                    "ExportValueMissing",
                    format!("{at}: {} of the response is not base64", export.value_path),
                )
            })
    }
}

/// The Secret export values fetched during one reconcile (each action at most once).
#[derive(Default)]
struct SecretValues {
    fetched: BTreeMap<String, Vec<u8>>,
}

impl SecretValues {
    async fn get(&mut self, exporter: &Exporter<'_>, export: &SecretExport) -> Result<&[u8], Failure> {
        if !self.fetched.contains_key(export.name) {
            let value = exporter.fetch(export).await?;
            self.fetched.insert(export.name.to_string(), value);
        }
        Ok(self.fetched.get(export.name).map(Vec::as_slice).unwrap_or_default())
    }

    /// Every Secret export of the kind, by name (the `secret` of `secretExpressions`); values that are not
    /// UTF-8 are left out.
    async fn all(&mut self, exporter: &Exporter<'_>) -> Result<BTreeMap<String, String>, Failure> {
        let mut out = BTreeMap::new();
        for export in exporter.info.secret_exports {
            let value = self.get(exporter, export).await?;
            if let Ok(text) = std::str::from_utf8(value) {
                out.insert(export.name.to_string(), text.to_string());
            }
        }
        Ok(out)
    }
}

fn parse_operator_spec(value: &Value) -> Result<OperatorSpec, Failure> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let at = if path == "." {
            "spec.operatorSpec".to_string()
        } else {
            format!("spec.operatorSpec.{path}")
        };
        Failure::permanent("InvalidSpec", format!("{at}: {}", e.into_inner()))
    })
}

fn unknown_export(info: &KindInfo, part: &str, export: &str) -> Failure {
    let known: Vec<&str> = if part == "secrets" {
        info.secret_exports.iter().map(|e| e.name).collect()
    } else {
        info.config_map_exports.iter().map(|(n, _)| *n).collect()
    };
    Failure::permanent(
        "InvalidSpec",
        format!(
            "spec.operatorSpec.{part}.{export}: {} has no such export (it has: {})",
            info.kind,
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ),
    )
}

fn destination_of(e: &ExportExpression) -> SecretDestination {
    SecretDestination {
        name: e.name.clone(),
        key: e.key.clone(),
    }
}

/// Adds `source` at `destination`; two sources for one key are an error naming both.
fn add<'s>(
    plan: &mut Plan<'s>,
    what: &str,
    destination: &SecretDestination,
    source: Source<'s>,
) -> Result<(), Failure> {
    if destination.name.is_empty() || destination.key.is_empty() {
        return Err(Failure::permanent(
            "InvalidSpec",
            format!("{}: the {what} name and key must not be empty", source.describe()),
        ));
    }
    let keys = plan.entry(destination.name.clone()).or_default();
    if let Some(other) = keys.get(&destination.key) {
        return Err(Failure::permanent(
            "InvalidSpec",
            format!(
                "{what} {} key {} is written by both {} and {}",
                destination.name,
                destination.key,
                other.describe(),
                source.describe()
            ),
        ));
    }
    keys.insert(destination.key.clone(), source);
    Ok(())
}

/// Evaluates a CEL export expression to a string: `self` is `this`, `secret` (for Secrets) the export values.
/// Errors name the field and the expression; Secret values are redacted from them.
pub fn evaluate(
    field: &str,
    expression: &str,
    this: &Value,
    secrets: Option<&BTreeMap<String, String>>,
) -> Result<String, Failure> {
    let run = || -> Result<String, String> {
        let program = cel::Program::compile(expression).map_err(|e| format!("does not compile: {e}"))?;
        let mut context = cel::Context::default();
        context.add_variable_from_value("self", cel_value(this));
        if let Some(secrets) = secrets {
            let secret: std::collections::HashMap<String, cel::Value> = secrets
                .iter()
                .map(|(k, v)| (k.clone(), cel::Value::from(v.as_str())))
                .collect();
            context.add_variable_from_value("secret", secret);
        }
        match program.execute(&context) {
            Ok(cel::Value::String(s)) => Ok(s.to_string()),
            Ok(other) => Err(format!("gives {}, not a string", type_name(&other))),
            Err(e) => Err(format!("fails: {e}")),
        }
    };
    // The CEL crate is third-party code running on user input: a panic in it is an invalid expression here.
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err("the CEL interpreter failed on it".to_string()));
    outcome.map_err(|message| {
        let message = match secrets {
            Some(secrets) => redact(&message, secrets.values()),
            None => message,
        };
        Failure::permanent("ExportExpressionInvalid", format!("{field} ({expression:?}) {message}"))
    })
}

/// JSON as CEL sees it (as in Kubernetes CEL): integers are `int` (`uint` only beyond `int`'s range).
fn cel_value(value: &Value) -> cel::Value {
    match value {
        Value::Null => cel::Value::Null,
        Value::Bool(b) => cel::Value::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => cel::Value::Int(i),
            (None, Some(u)) => cel::Value::UInt(u),
            _ => cel::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => cel::Value::from(s.as_str()),
        Value::Array(items) => cel::Value::from(items.iter().map(cel_value).collect::<Vec<_>>()),
        Value::Object(map) => {
            let map: std::collections::HashMap<String, cel::Value> =
                map.iter().map(|(k, v)| (k.clone(), cel_value(v))).collect();
            cel::Value::from(map)
        }
    }
}

fn type_name(value: &cel::Value) -> &'static str {
    match value {
        cel::Value::List(_) => "a list",
        cel::Value::Map(_) => "a map",
        cel::Value::Function(..) => "a function",
        cel::Value::Int(_) => "an int",
        cel::Value::UInt(_) => "a uint",
        cel::Value::Float(_) => "a double",
        cel::Value::String(_) => "a string",
        cel::Value::Bytes(_) => "bytes",
        cel::Value::Bool(_) => "a bool",
        cel::Value::Opaque(_) => "an opaque value",
        cel::Value::Null => "null",
    }
}

/// `message` with every value (and its escaped form, as error messages quote values) replaced.
fn redact<'v>(message: &str, values: impl Iterator<Item = &'v String>) -> String {
    let mut out = message.to_string();
    for v in values.filter(|v| !v.is_empty()) {
        let escaped = format!("{v:?}");
        let escaped = escaped.trim_matches('"');
        out = out.replace(v.as_str(), "<redacted>");
        if !escaped.is_empty() {
            out = out.replace(escaped, "<redacted>");
        }
    }
    out
}

/// What to do after a failure, by its retry class (the same as the loop's).
pub fn retry_interval(retry: Retry, settings: &crate::context::Settings) -> Option<std::time::Duration> {
    match retry {
        Retry::OnChange => None,
        Retry::Wait => Some(settings.wait),
        Retry::Failed => Some(settings.failed),
        Retry::After(d) => Some(d.max(std::time::Duration::from_millis(1))),
        Retry::Backoff { at_least } => Some(settings.backoff.base().max(at_least)),
        Retry::OwnerChange => Some(settings.resync),
        Retry::Terminal => (!settings.terminal_retry.is_zero()).then_some(settings.terminal_retry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_give_strings_over_self_and_secret() {
        let this = json!({"spec": {"dnsPrefix": "demo", "count": 3}, "status": {"fqdn": "demo.example"}});
        assert_eq!(
            evaluate("f", "self.status.fqdn + \":443\"", &this, None).expect("evaluates"),
            "demo.example:443"
        );
        let secrets = BTreeMap::from([("adminCredentials".to_string(), "kube\nconfig".to_string())]);
        assert_eq!(
            evaluate("f", "\"x\" + secret.adminCredentials", &this, Some(&secrets)).expect("evaluates"),
            "xkube\nconfig"
        );
        let e = evaluate(
            "spec.operatorSpec.configMapExpressions[0]",
            "self.spec.count",
            &this,
            None,
        )
        .unwrap_err();
        assert_eq!(e.reason, "ExportExpressionInvalid");
        assert!(
            e.message
                .starts_with("spec.operatorSpec.configMapExpressions[0] (\"self.spec.count\") gives an int"),
            "{}",
            e.message
        );
        let e = evaluate("f", "self.spec.(", &this, None).unwrap_err();
        assert!(e.message.contains("does not compile"), "{}", e.message);
    }

    #[test]
    fn secret_values_are_redacted_from_errors() {
        let secrets = BTreeMap::from([("adminCredentials".to_string(), "s3cr3t\nvalue".to_string())]);
        let e = evaluate("f", "secret.adminCredentials - 1", &json!({}), Some(&secrets)).unwrap_err();
        assert!(
            !e.message.contains("s3cr3t") && e.message.contains("<redacted>"),
            "{}",
            e.message
        );
    }
}
