//! Pass **emit CRDs**: one `CustomResourceDefinition` manifest (YAML) per kind, with every Kubernetes version
//! of the kind in it, built from the Kubernetes shape ([`KubeIr`]) and the ARM IR ([`Ir`]) of each version.
//!
//! Layout: `crds/<plural>.<group>.yaml` in the generated crate's folder, e.g.
//! `crds/managedclusters.containerservice.armgen.dev.yaml`. Each file starts with the generated-file header
//! (sources, and the ARM API version of every Kubernetes version in it). Beside them, `crds/kustomization.yaml`
//! lists every manifest (sorted, the header as comments), so that a deployment can compose the folder with
//! kustomize (which refuses files outside a kustomization root): `config/crd` references it.
//!
//! What a manifest holds:
//!
//! - `apiextensions.k8s.io/v1`, namespaced, `names` (kind, `<Kind>List`, plural, lowercase singular, the
//!   categories `azure` and the group's first label, e.g. `kubectl get containerservice`);
//! - every version the kind exists in, `served: true`, `storage: true` on the version the configuration makes
//!   storage (when a kind is missing from the storage version, the newest non-preview version that has it is
//!   stored — a preview only when no other version has it — and the choice is reported, here and in
//!   `REPORT.md`); the conversion strategy is left at its default (`None`): a conversion webhook
//!   needs a service of the deployment, which the deployment adds;
//! - subresources: `status` everywhere; `scale` where spec and status both have an integer `count` at their
//!   root (`specReplicasPath: .spec.count`, `statusReplicasPath: .status.count`; AKS: AgentPool);
//! - printer columns `Ready` and `Reason` (from the `Ready` condition) and `Age`.
//! - an action kind (`crate::ir::ActionMeta`): its spec fixed after creation (`self == oldSelf` on `spec`), no scale
//!   subresource, printer columns `Target`, `Succeeded`, `Reason`, `Started` and `Age`.
//!
//! Template kinds (`kubernetes.resources.<Kind>.template: true`): one more manifest, `<Kind>Template` (plural
//! `<kind>templates`), with the same versions, served and storage flags; its `spec.template.spec` is the kind's
//! spec schema (both levels required); no status, no subresources, printer column `Age`.
//!
//! The `openAPIV3Schema` is structural (apiextensions v1): every node has a `type` (or is
//! `x-kubernetes-preserve-unknown-fields: true`), everything is inlined (no `$ref`):
//!
//! | Kubernetes shape | schema |
//! | --- | --- |
//! | nested object ([`KubeRef::Kube`]) | `type: object`, `properties`, `required` from [`KubeField::required`] |
//! | closed ARM enum | `type: string` + `enum` |
//! | open ARM enum (`modelAsString`) | `type: string`; the known values in the description (new values must pass) |
//! | map | `type: object` + `additionalProperties` |
//! | array | `type: array` + `items`; `uniqueItems` (CRDs forbid it) → `x-kubernetes-list-type: set` (scalar items) |
//! | free-form JSON ([`KubeRef::Json`]) | `x-kubernetes-preserve-unknown-fields: true` |
//! | secret | `{name, key}`, both required |
//! | resource reference | `{armId, group, kind, name, namespace}` |
//! | owner | `{name, armId}` for a resource group, `{name}` (required) for a parent custom resource |
//! | conditions, operator status | the shapes of `armgen_runtime::kube::{Condition, OperatorStatus}` |
//! | `operatorSpec` | `{secrets: {<export>: {name, key}}, configMaps: {<export>: {name, key}}}` (the declared exports only), `secretExpressions`/`configMapExpressions: [{name, key, value}]` |
//! | `x-nullable` | `nullable: true` |
//!
//! Descriptions come from the IR (the field's, else its type's: never both). Validations come from the spec
//! (`pattern`, `minLength`/`maxLength`, `minimum`/`maximum`, `minItems`/`maxItems`) where the node's type allows
//! them: the string validations of an ARM ID go to the reference's `armId`; those of a secret are dropped (the
//! value is in the Secret). A `pattern` that is not an RE2 expression (the API server compiles patterns with Go's
//! `regexp`) is dropped and reported. The status carries no validation keywords, only types and closed enums: it
//! holds what Azure returns, and a value outside the spec's own limits must not block a status update. Spec
//! defaults are not emitted: the API server would fill them in, and an unset property is the service's to
//! default. A closed enum's values are matched case-sensitively by the API server (ARM compares them
//! case-insensitively): write them in the spec's spelling.
//!
//! Immutable fields (create-only properties, `azureName`, `owner`) carry the CEL transition rule
//! `self == oldSelf`. The API server only accepts transition rules where old and new values correlate: under
//! objects and maps, not inside (atomic) arrays. An immutable field inside an array gets no rule, and that is
//! reported (AKS has none).
//!
//! Limitations, each reported as a diagnostic of the manifest (a `# Note:` line in the file's header):
//!
//! - **Discriminated unions** ([`KubeRef::ArmUnion`]) are `type: object` with
//!   `x-kubernetes-preserve-unknown-fields: true` and a description naming the discriminator and the variants: a
//!   structural schema cannot say "one of these objects, chosen by this property", so the API server does not
//!   validate them; the Rust types do. AKS has none.
//! - **Recursion**: a type that contains itself is inlined once; at the point of recursion the schema is
//!   `type: object` + `x-kubernetes-preserve-unknown-fields: true`. AKS has it in status only: the error details
//!   of `ErrorDetail.details` and of the pod identity provisioning error.
//!
//! Size: no manifest may exceed [`MAX_CRD_BYTES`] (the API server stores a CRD in one etcd object). When one
//! would, the older versions (never the storage version or the newest served one) lose their field descriptions
//! first, the oldest first, each a note of the manifest (see [`Crd::undescribed`]); when that is not enough,
//! descriptions are trimmed deterministically from the deepest fields up, and when that is not enough
//! (a chain of hundreds of nested definitions), the deepest objects first lose their fields to
//! `x-kubernetes-preserve-unknown-fields` (see [`Crd::fit`] and [`super::fit`], which does it in linear time).
//! Each step is a note in the file's header, and [`Crd::fitted`] says what was given up, which `armgen
//! generate` prints as a warning. The AKS manifests need no trim: ManagedCluster, the largest, is about 760 kB
//! with its three versions (a fourth leaves the oldest undescribed; docs/config.md, "Served versions").

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Map, Value, json};

use super::fit::{self, Fitted, PRESERVE};
use crate::error::{Error, Result};
use crate::ir::{Diagnostic, Ir, Primitive, TypeKind, Validation};
use crate::pipeline::generation::Generation;
use crate::shape::{ContractField, Exports, KubeField, KubeIr, KubeRef, KubeResource, KubeTypeId, Owner, Special};

/// The folder of the manifests, relative to the generated crate's folder.
pub const CRD_DIR: &str = "crds";

/// The largest manifest the generator writes without trimming descriptions (1 MiB).
pub const MAX_CRD_BYTES: usize = 1 << 20;

/// The CEL rule of an immutable field.
pub const IMMUTABLE_RULE: &str = "self == oldSelf";

/// One CustomResourceDefinition.
#[derive(Debug, Clone)]
pub struct Crd {
    /// The Kubernetes API group, e.g. `containerservice.armgen.dev`.
    pub group: String,
    pub kind: String,
    pub plural: String,
    /// The Kubernetes versions in the manifest, each with its ARM API version, in the manifest's order.
    pub versions: Vec<(String, String)>,
    /// The root spec files of those versions.
    pub sources: Vec<String>,
    /// The manifest, as the YAML file has it.
    pub manifest: Value,
    /// What the emitter decided and a reviewer should know (recursion cut, unions, dropped validations, trims).
    pub diagnostics: Vec<Diagnostic>,
    /// How [`Crd::fit`] made the manifest fit its size budget, when trimming or cutting was needed.
    pub fitted: Option<Fitted>,
    /// The versions whose schemas [`Crd::fit`] left without field descriptions to fit the budget (the older
    /// versions first; never the storage version or the newest served one), in the order it did so.
    pub undescribed: Vec<String>,
    /// For an action kind: the kind of its target.
    pub action_target: Option<String>,
}

impl Crd {
    /// `crds/<plural>.<group>.yaml`.
    pub fn path(&self) -> PathBuf {
        PathBuf::from(CRD_DIR).join(format!("{}.{}.yaml", self.plural, self.group))
    }

    /// `<plural>.<group>`, the CRD's `metadata.name`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    /// The `openAPIV3Schema` of `version`, if the manifest has that version.
    pub fn schema(&self, version: &str) -> Option<&Value> {
        self.manifest
            .pointer("/spec/versions")?
            .as_array()?
            .iter()
            .find(|v| v.get("name").and_then(Value::as_str) == Some(version))?
            .pointer("/schema/openAPIV3Schema")
    }

    /// The YAML file: the generated-file header, the diagnostics as comments, then the manifest.
    pub fn to_yaml(&self) -> Result<String> {
        Ok(format!("{}{}", self.file_header(), self.body_yaml()?))
    }

    fn file_header(&self) -> String {
        let mut out = super::output::header("#", &self.sources, None);
        for (kube, api) in &self.versions {
            out.push_str(&format!("# ARM API version: {api} (Kubernetes version {kube})\n"));
        }
        for d in &self.diagnostics {
            let line = format!("{}: {}", d.at, d.message).replace('\n', " ");
            out.push_str(&format!("# Note: {line}\n"));
        }
        out
    }

    fn body_yaml(&self) -> Result<String> {
        serde_yaml_ng::to_string(&self.manifest).map_err(|e| Error::Emit {
            what: self.path().display().to_string(),
            message: e.to_string(),
        })
    }
}

/// The manifests of every kind in `versions` (the Kubernetes shape and ARM IR of each version, any groups),
/// sorted by file path.
///
/// Runs on a thread with a large stack (building a schema recurses once per level of nesting; see
/// [`crate::Builder::generate`]).
pub fn crds(versions: &[(&KubeIr, &Ir)]) -> Vec<Crd> {
    crate::pipeline::stack::on_big_stack(|| crds_here(versions))
}

fn crds_here(versions: &[(&KubeIr, &Ir)]) -> Vec<Crd> {
    // group → kube version → (shape, IR), so that versions appear in a stable order.
    let mut groups: BTreeMap<&str, BTreeMap<&str, (&KubeIr, &Ir)>> = BTreeMap::new();
    for (kube, ir) in versions {
        groups
            .entry(kube.group.as_str())
            .or_default()
            .entry(kube.version.as_str())
            .or_insert((kube, ir));
    }
    let mut out = Vec::new();
    for (group, versions) in groups {
        let mut kinds: BTreeMap<&str, Vec<(&KubeIr, &Ir, &KubeResource)>> = BTreeMap::new();
        for (kube, ir) in versions.values() {
            for r in &kube.resources {
                kinds.entry(r.kind.as_str()).or_default().push((kube, ir, r));
            }
        }
        for (kind, per_version) in kinds {
            out.push(build_crd(group, kind, &per_version, false));
            let templated: Vec<_> = per_version.iter().copied().filter(|(_, _, r)| r.template).collect();
            if !templated.is_empty() {
                out.push(build_crd(group, kind, &templated, true));
            }
        }
    }
    out.sort_by_key(Crd::path);
    out
}

/// The manifests of a generation (every group and version it shaped).
pub fn crds_of(generation: &Generation) -> Vec<Crd> {
    manifests(&generation.kubes, &generation.irs)
}

/// The manifest files and `crds/kustomization.yaml`, path (relative to the generated crate) → YAML; what
/// `generate` writes.
pub fn files(kubes: &BTreeMap<String, KubeIr>, irs: &BTreeMap<String, Ir>) -> Result<BTreeMap<PathBuf, String>> {
    manifest_files(&crds(&pairs(kubes, irs)))
}

/// The manifests of every kind the versions shaped (`kubes` and `irs` by `group/version`), sorted by file path;
/// each that was over its size budget says in [`Crd::fitted`] how it was made to fit (see [`Crd::fit`]).
pub fn manifests(kubes: &BTreeMap<String, KubeIr>, irs: &BTreeMap<String, Ir>) -> Vec<Crd> {
    crds(&pairs(kubes, irs))
}

/// The files of `crds`: each manifest and `crds/kustomization.yaml` (none without a manifest), path (relative to
/// the generated crate) → YAML.
pub fn manifest_files(crds: &[Crd]) -> Result<BTreeMap<PathBuf, String>> {
    let mut files = crds
        .iter()
        .map(|c| Ok((c.path(), c.to_yaml()?)))
        .collect::<Result<BTreeMap<_, _>>>()?;
    if !crds.is_empty() {
        files.insert(kustomization_path(), kustomization(crds));
    }
    Ok(files)
}

/// `crds/kustomization.yaml`.
pub fn kustomization_path() -> PathBuf {
    PathBuf::from(CRD_DIR).join("kustomization.yaml")
}

/// `crds/kustomization.yaml`: the generated-file header (every source of the manifests) as comments, then a
/// kustomize `Kustomization` whose `resources` are the manifest files, sorted by name.
pub fn kustomization(crds: &[Crd]) -> String {
    let sources: BTreeSet<&String> = crds.iter().flat_map(|c| &c.sources).collect();
    let sources: Vec<String> = sources.into_iter().cloned().collect();
    let mut out = super::output::header("#", &sources, None);
    out.push_str("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n");
    let names: BTreeSet<String> = crds
        .iter()
        .filter_map(|c| c.path().file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    for name in names {
        out.push_str(&format!("- {name}\n"));
    }
    out
}

/// The `openAPIV3Schema` of `kind` in Kubernetes version `version`, exactly as its manifest has it (the first
/// group, in key order, that has the kind); `None` when no group has that kind in that version. It builds every
/// manifest of the generation: to look up many schemas, call [`crds_of`] once and use [`Crd::schema`].
pub fn schema_for(generation: &Generation, kind: &str, version: &str) -> Option<Value> {
    crds_of(generation)
        .into_iter()
        .filter(|c| c.kind == kind)
        .find_map(|c| c.schema(version).cloned())
}

fn pairs<'a>(kubes: &'a BTreeMap<String, KubeIr>, irs: &'a BTreeMap<String, Ir>) -> Vec<(&'a KubeIr, &'a Ir)> {
    kubes
        .iter()
        .filter_map(|(key, kube)| irs.get(key).map(|ir| (kube, ir)))
        .collect()
}

/// The manifest of `kind`, or (`template`) of `<kind>Template`, whose `spec.template.spec` is the kind's spec.
fn build_crd(group: &str, kind: &str, per_version: &[(&KubeIr, &Ir, &KubeResource)], template: bool) -> Crd {
    let mut diagnostics = Vec::new();
    let base_kind = kind;
    let template_kind = format!("{kind}Template");
    let kind = if template { template_kind.as_str() } else { kind };
    let at = format!("crd {kind}");
    let plural = if template {
        crate::shape::plural_of(kind)
    } else {
        per_version
            .iter()
            .find(|(k, _, _)| k.storage)
            .or(per_version.last())
            .map(|(_, _, r)| r.plural.clone())
            .unwrap_or_else(|| crate::shape::plural_of(kind))
    };
    for (kube, _, r) in per_version {
        if !template && r.plural != plural {
            diagnostics.push(diag(
                &at,
                format!(
                    "version {} names the plural {}; the CRD uses {plural}",
                    kube.version, r.plural
                ),
            ));
        }
    }
    let storage_index = storage_index(&at, per_version, &mut diagnostics);

    let mut sources = BTreeSet::new();
    let mut versions = Vec::new();
    let mut version_values = Vec::new();
    for (i, (kube, ir, r)) in per_version.iter().enumerate() {
        sources.extend(ir.spec_files.iter().cloned());
        versions.push((kube.version.clone(), ir.api_version.clone()));
        let value = if !kube.served {
            unserved_version(kube)
        } else {
            let templated = template.then_some(base_kind);
            served_version(kind, templated, (kube, ir, r), i == storage_index, &mut diagnostics)
        };
        version_values.push(value);
    }

    let mut manifest = crd_manifest(group, kind, &plural, version_values);
    // A kind implementing a Cluster API contract (and its template) is labelled with the versions that implement
    // it, for each contract version (the contracts' "APIVersion field value" rules; docs/cluster-api.md): Cluster
    // API takes the last, the storage version here.
    if per_version.iter().any(|(_, _, r)| r.cluster_api.is_some()) {
        let mut names: Vec<&str> = per_version
            .iter()
            .enumerate()
            .filter(|(i, (k, _, r))| k.served && r.cluster_api.is_some() && *i != storage_index)
            .map(|(_, (k, _, _))| k.version.as_str())
            .collect();
        if let Some((k, _, r)) = per_version.get(storage_index)
            && r.cluster_api.is_some()
        {
            names.push(k.version.as_str());
        }
        let value = Value::String(names.join("_"));
        if let Some(meta) = manifest.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert(
                "labels".into(),
                json!({"cluster.x-k8s.io/v1beta1": value.clone(), "cluster.x-k8s.io/v1beta2": value}),
            );
        }
    }
    let mut crd = Crd {
        group: group.to_string(),
        kind: kind.to_string(),
        plural,
        versions,
        sources: sources.into_iter().collect(),
        manifest,
        diagnostics,
        fitted: None,
        undescribed: Vec::new(),
        action_target: per_version
            .iter()
            .find_map(|(_, _, r)| r.action.as_ref())
            .filter(|_| !template)
            .map(|a| a.target.clone()),
    };
    crd.fit(MAX_CRD_BYTES);
    crd
}

/// The index in `per_version` of the stored version, with a diagnostic (at `at`) when it is not the group's
/// storage version.
fn storage_index(at: &str, per_version: &[(&KubeIr, &Ir, &KubeResource)], diagnostics: &mut Vec<Diagnostic>) -> usize {
    // Exactly one version is stored: the group's storage version, else the newest non-preview one that has the
    // kind (super::output::kind_storage, as the registry and REPORT.md say).
    if per_version.iter().filter(|(k, _, _)| k.storage).count() > 1 {
        diagnostics.push(diag(at, "several storage versions; the first is stored"));
    }
    // Only a served version can be stored (an unserved one is kept for reading what is stored there).
    let candidates: Vec<(&str, &str, bool)> = per_version
        .iter()
        .filter(|(k, _, _)| k.served)
        .map(|(k, ir, _)| (k.version.as_str(), ir.api_version.as_str(), k.storage))
        .collect();
    match super::output::kind_storage(&candidates) {
        Some((i, why)) => {
            if why != super::output::StorageReason::GroupStorage {
                diagnostics.push(diag(at, format!("{} is stored: {}", candidates[i].0, why.describe())));
            }
            per_version
                .iter()
                .position(|(k, _, _)| k.version == candidates[i].0)
                .unwrap_or(0)
        }
        None => {
            diagnostics.push(diag(at, "no served version has the kind; the first version is stored"));
            0
        }
    }
}

/// The manifest's entry for a version `served: false`.
fn unserved_version(kube: &KubeIr) -> Value {
    // Kept only so that objects stored at this version can be read and converted: the API server serves
    // no request at it, so its schema need not validate; it must not prune what is stored either.
    json!({
        "name": kube.version,
        "served": false,
        "storage": false,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": {
            "description": format!(
                "Not served (`served: false` in the generator's configuration): kept so that objects stored at {} can be read and converted; every field is kept.",
                kube.version
            ),
            "type": "object",
            PRESERVE: true,
        }},
    })
}

/// The manifest's entry for a served version of `kind`, or (`template` is `Some(base kind)`) of the template
/// kind, with the schema's diagnostics added to `diagnostics`.
fn served_version(
    kind: &str,
    template: Option<&str>,
    (kube, ir, r): (&KubeIr, &Ir, &KubeResource),
    stored: bool,
    diagnostics: &mut Vec<Diagnostic>,
) -> Value {
    let mut b = SchemaBuilder {
        kube,
        ir,
        resource: r,
        stack: Vec::new(),
        diagnostics: Vec::new(),
        at: format!("crd {kind} {}", kube.version),
    };
    if let Some(base_kind) = template {
        let schema = b.template_root(base_kind);
        diagnostics.append(&mut b.diagnostics);
        return json!({
            "name": kube.version,
            "served": true,
            "storage": stored,
            "additionalPrinterColumns": [age_column()],
            "schema": {"openAPIV3Schema": schema},
        });
    }
    let mut schema = b.root();
    diagnostics.append(&mut b.diagnostics);
    if r.action.is_some() {
        // An action runs once, for the spec it was created with: a changed spec would run nothing.
        if let Some(spec) = schema.pointer_mut("/properties/spec").and_then(Value::as_object_mut) {
            spec.insert(
                "x-kubernetes-validations".into(),
                json!([{"rule": IMMUTABLE_RULE, "message": "an action's spec is fixed: create a new object to run it again"}]),
            );
        }
        return json!({
            "name": kube.version,
            "served": true,
            "storage": stored,
            "additionalPrinterColumns": action_columns(),
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": schema},
        });
    }
    let mut subresources = Map::new();
    subresources.insert("status".into(), json!({}));
    if has_count(&r.spec_fields) && has_count(&r.status_fields) {
        subresources.insert(
            "scale".into(),
            json!({"specReplicasPath": ".spec.count", "statusReplicasPath": ".status.count"}),
        );
    }
    json!({
        "name": kube.version,
        "served": true,
        "storage": stored,
        "additionalPrinterColumns": printer_columns(),
        "subresources": subresources,
        "schema": {"openAPIV3Schema": schema},
    })
}

/// The `CustomResourceDefinition` of `kind` (plural `plural`) in API group `group`, with `versions`.
fn crd_manifest(group: &str, kind: &str, plural: &str, versions: Vec<Value>) -> Value {
    let short_group = group.split('.').next().unwrap_or(group);
    let mut categories = vec!["azure".to_string()];
    if short_group != "azure" {
        categories.push(short_group.to_string());
    }
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{group}")},
        "spec": {
            "group": group,
            "names": {
                "kind": kind,
                "listKind": format!("{kind}List"),
                "plural": plural,
                "singular": kind.to_ascii_lowercase(),
                "categories": categories,
            },
            "scope": "Namespaced",
            "versions": versions,
        },
    })
}

fn diag(at: &str, message: impl Into<String>) -> Diagnostic {
    Diagnostic {
        at: at.to_string(),
        message: message.into(),
    }
}

fn has_count(fields: &[KubeField]) -> bool {
    fields.iter().any(|f| {
        f.json_name == "count"
            && f.special == Special::None
            && matches!(f.ty, KubeRef::Primitive(Primitive::Int32 | Primitive::Int64))
    })
}

fn printer_columns() -> Value {
    json!([
        {
            "name": "Ready",
            "type": "string",
            "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status",
        },
        {
            "name": "Reason",
            "type": "string",
            "jsonPath": ".status.conditions[?(@.type==\"Ready\")].reason",
        },
        age_column(),
    ])
}

/// An action kind's columns: its target, `Succeeded` (status and reason), when it started, and `Age`.
fn action_columns() -> Value {
    json!([
        {"name": "Target", "type": "string", "jsonPath": ".spec.owner.name"},
        {
            "name": "Succeeded",
            "type": "string",
            "jsonPath": ".status.conditions[?(@.type==\"Succeeded\")].status",
        },
        {
            "name": "Reason",
            "type": "string",
            "jsonPath": ".status.conditions[?(@.type==\"Succeeded\")].reason",
        },
        {"name": "Started", "type": "date", "jsonPath": ".status.startTime"},
        age_column(),
    ])
}

fn age_column() -> Value {
    json!({
        "name": "Age",
        "type": "date",
        "jsonPath": ".metadata.creationTimestamp",
    })
}

/// Builds the schema of one version of one kind.
struct SchemaBuilder<'a> {
    kube: &'a KubeIr,
    ir: &'a Ir,
    resource: &'a KubeResource,
    /// The nested types being inlined, outermost first: a type met again here is a recursion.
    stack: Vec<KubeTypeId>,
    diagnostics: Vec<Diagnostic>,
    at: String,
}

/// Where a node is: its field path (for messages) and whether old and new values correlate there (no array
/// above it), which transition rules need.
#[derive(Clone)]
struct Pos {
    path: String,
    correlatable: bool,
    /// Whether the spec's validation keywords apply (in spec, not in status).
    validated: bool,
}

impl Pos {
    fn field(&self, name: &str) -> Pos {
        Pos {
            path: format!("{}.{name}", self.path),
            correlatable: self.correlatable,
            validated: self.validated,
        }
    }
    fn item(&self) -> Pos {
        Pos {
            path: format!("{}[]", self.path),
            correlatable: false,
            validated: self.validated,
        }
    }
    fn value(&self) -> Pos {
        Pos {
            path: format!("{}{{}}", self.path),
            correlatable: self.correlatable,
            validated: self.validated,
        }
    }
}

impl SchemaBuilder<'_> {
    fn diag(&mut self, pos: &Pos, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            at: format!("{} {}", self.at, pos.path),
            message: message.into(),
        });
    }

    fn root(&mut self) -> Value {
        let r = self.resource;
        let spec = self.object_of_fields(
            &r.spec_fields,
            &Pos {
                path: "spec".into(),
                correlatable: true,
                validated: true,
            },
        );
        let status = self.object_of_fields(
            &r.status_fields,
            &Pos {
                path: "status".into(),
                correlatable: true,
                validated: false,
            },
        );
        let spec_required = spec.contains_key("required");
        let spec = described(
            "The desired state: the writable properties of the Azure resource, its name and its owner.".into(),
            spec,
        );
        let status = described(
            "The observed state: what Azure returns, and the conditions of the resource.".into(),
            status,
        );
        let mut properties = object_header();
        properties.insert("spec".into(), Value::Object(spec));
        properties.insert("status".into(), Value::Object(status));
        let mut root = Map::new();
        let description = match &r.description {
            Some(d) => format!(
                "{}\n\nAzure resource type `{}`, ARM API version {}.",
                d.trim(),
                r.arm_type,
                self.ir.api_version
            ),
            None => format!(
                "Azure resource type `{}`, ARM API version {}.",
                r.arm_type, self.ir.api_version
            ),
        };
        root.insert("description".into(), json!(description));
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), Value::Object(properties));
        if spec_required {
            root.insert("required".into(), json!(["spec"]));
        }
        Value::Object(root)
    }

    /// The schema of `<kind>Template`: `spec.template.spec` is the kind's spec (`template` and its `spec`
    /// required), no status.
    fn template_root(&mut self, kind: &str) -> Value {
        let r = self.resource;
        let spec = self.object_of_fields(
            &r.spec_fields,
            &Pos {
                path: "spec.template.spec".into(),
                correlatable: true,
                validated: true,
            },
        );
        let spec = described(
            format!("The `{kind}` spec that resources made from this template get."),
            spec,
        );
        let string_map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let metadata = json!({
            "description": format!("The labels and annotations a `{kind}` made from this template gets."),
            "type": "object",
            "properties": {"labels": string_map.clone(), "annotations": string_map},
        });
        let resource = described(
            format!("What a `{kind}` made from this template gets."),
            object(json!({ "metadata": metadata, "spec": Value::Object(spec) }), &["spec"]),
        );
        let template_spec = described(
            "The template.".into(),
            object(json!({ "template": Value::Object(resource) }), &["template"]),
        );
        let mut properties = object_header();
        properties.insert("spec".into(), Value::Object(template_spec));
        let mut root = Map::new();
        root.insert(
            "description".into(),
            json!(format!(
                "A template of `{kind}` specs (Azure resource type `{}`, ARM API version {}): `spec.template.spec` \
                 is what a `{kind}` made from it gets. Nothing is created in Azure for a template.",
                r.arm_type, self.ir.api_version
            )),
        );
        root.insert("type".into(), json!("object"));
        root.insert("properties".into(), Value::Object(properties));
        root.insert("required".into(), json!(["spec"]));
        Value::Object(root)
    }

    /// `type: object` with one property per field and the required ones listed.
    fn object_of_fields(&mut self, fields: &[KubeField], pos: &Pos) -> Map<String, Value> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut rules = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            let schema = self.field(f, &pos.field(&f.json_name));
            properties.insert(f.json_name.clone(), schema);
            // A `fromConfig` value: the value or its ConfigMap, exactly one when required, else at most one.
            let sibling = fields
                .get(i + 1)
                .filter(|g| f.from_config && g.special == Special::FromConfig);
            if let Some(g) = sibling {
                let (a, b) = (&f.json_name, &g.json_name);
                rules.push(if f.required {
                    json!({"rule": format!("has(self.{a}) != has(self.{b})"), "message": format!("set one of {a} and {b}")})
                } else {
                    json!({"rule": format!("!(has(self.{a}) && has(self.{b}))"), "message": format!("set {a} or {b}, not both")})
                });
            } else if f.required {
                required.push(json!(f.json_name));
            }
        }
        let mut out = Map::new();
        out.insert("type".into(), json!("object"));
        out.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            out.insert("required".into(), Value::Array(required));
        }
        if !rules.is_empty() {
            out.insert("x-kubernetes-validations".into(), Value::Array(rules));
        }
        out
    }

    fn field(&mut self, f: &KubeField, pos: &Pos) -> Value {
        let mut schema = match f.special {
            Special::None => {
                let mut s = self.of_ref(&f.ty, pos);
                if pos.validated {
                    self.apply_validation(&mut s, &f.ty, &f.validation, pos);
                }
                s
            }
            Special::AzureName => string_schema(),
            Special::Owner => owner_schema(&self.resource.owner),
            Special::Conditions => conditions_schema(),
            Special::OperatorStatus => operator_status_schema(),
            Special::OperatorSpec => operator_spec_schema(&self.resource.exports),
            Special::FromConfig => config_map_reference_schema(),
            Special::Contract(c) => contract_schema(c),
        };
        if f.arm_props.last().is_some_and(|p| p.nullable) {
            schema.insert("nullable".into(), json!(true));
        }
        if f.immutable {
            if pos.correlatable {
                // Beside the object's own rules (a `fromConfig` field's), if any.
                let rule = json!({"rule": IMMUTABLE_RULE, "message": format!("{} is immutable", f.json_name)});
                match schema.get_mut("x-kubernetes-validations").and_then(Value::as_array_mut) {
                    Some(rules) => rules.push(rule),
                    None => {
                        schema.insert("x-kubernetes-validations".into(), json!([rule]));
                    }
                }
            } else {
                self.diag(
                    pos,
                    "immutable, but inside an array: the API server accepts no transition rule (self == oldSelf) \
                     there, so the CRD does not enforce it",
                );
            }
        }
        let description = self.describe(f);
        Value::Object(match description {
            Some(d) => described(d, schema),
            None => schema,
        })
    }

    /// The field's description (else its type's), with the known values of an open enum and the shape of a
    /// union appended.
    fn describe(&self, f: &KubeField) -> Option<String> {
        let own = f.description.as_deref().map(str::trim).filter(|d| !d.is_empty());
        let mut parts: Vec<String> = Vec::new();
        let innermost = innermost(&f.ty);
        let type_description = match innermost {
            KubeRef::Kube(id) => self.kube.types.get(id).and_then(|t| t.description.clone()),
            KubeRef::ArmEnum(id) | KubeRef::ArmUnion(id) => self.ir.types.get(id).and_then(|t| t.description.clone()),
            _ => None,
        };
        match (
            own,
            type_description.as_deref().map(str::trim).filter(|d| !d.is_empty()),
        ) {
            (Some(d), _) | (None, Some(d)) => parts.push(d.to_string()),
            (None, None) => {}
        }
        if f.special == Special::None {
            match innermost {
                KubeRef::ArmEnum(id) => {
                    if let Some(TypeKind::Enum(e)) = self.ir.types.get(id).map(|t| &t.kind) {
                        if e.open && !e.values.is_empty() {
                            let values: Vec<String> = e.values.iter().map(|v| format!("`{}`", v.value)).collect();
                            parts.push(format!("Known values (others are accepted): {}.", values.join(", ")));
                        }
                    }
                }
                KubeRef::ArmUnion(id) => {
                    if let Some(TypeKind::Union(u)) = self.ir.types.get(id).map(|t| &t.kind) {
                        let variants: Vec<String> = u.variants.iter().map(|(v, _)| format!("`{v}`")).collect();
                        parts.push(format!(
                            "One of several objects, chosen by `{}`: {}. Not validated by the CRD (a structural \
                             schema cannot express the choice).",
                            u.property,
                            variants.join(", ")
                        ));
                    }
                }
                _ => {}
            }
        }
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    fn of_ref(&mut self, ty: &KubeRef, pos: &Pos) -> Map<String, Value> {
        match ty {
            KubeRef::Kube(id) => {
                if self.stack.contains(id) {
                    self.diag(
                        pos,
                        format!(
                            "recursive type {id}: inlined once; below this point the schema accepts any object \
                             (x-kubernetes-preserve-unknown-fields)"
                        ),
                    );
                    return preserve_object();
                }
                let Some(t) = self.kube.types.get(id) else {
                    self.diag(pos, format!("unknown type {id}: any object accepted"));
                    return preserve_object();
                };
                self.stack.push(id.clone());
                let out = self.object_of_fields(&t.fields, pos);
                self.stack.pop();
                out
            }
            KubeRef::ArmEnum(id) => {
                let mut out = string_schema();
                match self.ir.types.get(id).map(|t| &t.kind) {
                    Some(TypeKind::Enum(e)) if !e.open => {
                        out.insert(
                            "enum".into(),
                            Value::Array(e.values.iter().map(|v| json!(v.value)).collect()),
                        );
                    }
                    Some(TypeKind::Enum(_)) => {}
                    _ => self.diag(pos, format!("unknown enum {id}: any string accepted")),
                }
                out
            }
            KubeRef::ArmUnion(id) => {
                self.diag(
                    pos,
                    format!(
                        "discriminated union {id}: any object accepted (x-kubernetes-preserve-unknown-fields); \
                         the Rust types check the variant"
                    ),
                );
                preserve_object()
            }
            KubeRef::Primitive(p) => primitive_schema(*p),
            KubeRef::Array(inner) => {
                let items = self.of_ref(inner, &pos.item());
                let mut out = Map::new();
                out.insert("type".into(), json!("array"));
                out.insert("items".into(), Value::Object(items));
                out
            }
            KubeRef::Map(inner) => {
                let values = self.of_ref(inner, &pos.value());
                let mut out = Map::new();
                out.insert("type".into(), json!("object"));
                out.insert("additionalProperties".into(), Value::Object(values));
                out
            }
            KubeRef::Json => {
                let mut out = Map::new();
                out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                out
            }
            KubeRef::Secret => secret_schema(),
            KubeRef::ResourceRef => resource_reference_schema(),
            KubeRef::ConfigMapRef => config_map_reference_schema(),
            KubeRef::RefKeys(_) => {
                let mut out = Map::new();
                out.insert("type".into(), json!("array"));
                out.insert("items".into(), Value::Object(resource_reference_schema()));
                out
            }
        }
    }

    /// Puts the spec's validation keywords where the node's type allows them.
    fn apply_validation(&mut self, schema: &mut Map<String, Value>, ty: &KubeRef, v: &Validation, pos: &Pos) {
        if *v == Validation::default() {
            return;
        }
        let mut dropped: Vec<&str> = Vec::new();
        let strings = v.pattern.is_some() || v.min_length.is_some() || v.max_length.is_some();
        let numbers = v.minimum.is_some() || v.maximum.is_some();
        let arrays = v.min_items.is_some() || v.max_items.is_some() || v.unique_items;
        let is_string = matches!(ty, KubeRef::Primitive(Primitive::String) | KubeRef::ArmEnum(_));
        let is_number = matches!(ty, KubeRef::Primitive(p) if *p != Primitive::String && *p != Primitive::Bool);
        if strings {
            if is_string {
                self.string_validation(schema, v, pos);
            } else if *ty == KubeRef::ResourceRef {
                let mut arm_id = Map::new();
                if let Some(Value::Object(props)) = schema.get_mut("properties") {
                    if let Some(Value::Object(a)) = props.get_mut("armId") {
                        arm_id = std::mem::take(a);
                    }
                    self.string_validation(&mut arm_id, v, pos);
                    props.insert("armId".into(), Value::Object(arm_id));
                }
            } else if *ty != KubeRef::Secret {
                dropped.extend(["pattern", "minLength", "maxLength"]);
            }
        }
        if numbers {
            if is_number {
                if let Some(m) = v.minimum {
                    schema.insert("minimum".into(), json!(m));
                }
                if let Some(m) = v.maximum {
                    schema.insert("maximum".into(), json!(m));
                }
            } else {
                dropped.extend(["minimum", "maximum"]);
            }
        }
        if arrays {
            if let KubeRef::Array(inner) = ty {
                if let Some(m) = v.min_items {
                    schema.insert("minItems".into(), json!(m));
                }
                if let Some(m) = v.max_items {
                    schema.insert("maxItems".into(), json!(m));
                }
                if v.unique_items {
                    if matches!(**inner, KubeRef::Primitive(_) | KubeRef::ArmEnum(_)) {
                        schema.insert("x-kubernetes-list-type".into(), json!("set"));
                    } else {
                        self.diag(
                            pos,
                            "uniqueItems on an array of objects: CRDs forbid uniqueItems and sets need scalar \
                             items; not enforced",
                        );
                    }
                }
            } else {
                dropped.extend(["minItems", "maxItems", "uniqueItems"]);
            }
        }
        if !dropped.is_empty() {
            self.diag(
                pos,
                format!(
                    "validation ({}) does not apply to this field's type; dropped",
                    dropped.join(", ")
                ),
            );
        }
    }

    fn string_validation(&mut self, schema: &mut Map<String, Value>, v: &Validation, pos: &Pos) {
        if let Some(p) = &v.pattern {
            match regex_syntax::Parser::new().parse(p) {
                Ok(_) => {
                    schema.insert("pattern".into(), json!(p));
                }
                Err(e) => self.diag(
                    pos,
                    format!(
                        "pattern {p:?} is not an RE2 expression (the API server compiles it with Go's regexp): \
                         dropped ({})",
                        e.to_string().lines().last().unwrap_or_default().trim()
                    ),
                ),
            }
        }
        if let Some(m) = v.min_length {
            schema.insert("minLength".into(), json!(m));
        }
        if let Some(m) = v.max_length {
            schema.insert("maxLength".into(), json!(m));
        }
    }
}

/// The type inside arrays and maps.
fn innermost(ty: &KubeRef) -> &KubeRef {
    match ty {
        KubeRef::Array(inner) | KubeRef::Map(inner) => innermost(inner),
        other => other,
    }
}

/// `schema` with `description` as its first key.
fn described(description: String, schema: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("description".into(), json!(description));
    for (k, v) in schema {
        if k != "description" {
            out.insert(k, v);
        }
    }
    out
}

/// The schema of a Cluster API contract field (docs/cluster-api.md).
fn contract_schema(c: ContractField) -> Map<String, Value> {
    let value = match c {
        ContractField::Endpoint => json!({
            "type": "object",
            "properties": {"host": {"type": "string"}, "port": {"type": "integer", "format": "int32"}},
        }),
        ContractField::Version | ContractField::StatusVersion => json!({"type": "string"}),
        ContractField::ProviderIds => json!({"type": "array", "items": {"type": "string"}}),
        ContractField::Initialization => json!({
            "type": "object",
            "properties": {"controlPlaneInitialized": {"type": "boolean"}, "provisioned": {"type": "boolean"}},
        }),
        ContractField::Initialized | ContractField::Ready | ContractField::ExternalManaged => {
            json!({"type": "boolean"})
        }
        ContractField::Replicas => json!({"type": "integer", "format": "int32"}),
    };
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn string_schema() -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("type".into(), json!("string"));
    out
}

fn preserve_object() -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
    out
}

fn primitive_schema(p: Primitive) -> Map<String, Value> {
    let (ty, format) = match p {
        Primitive::String => ("string", None),
        Primitive::Bool => ("boolean", None),
        Primitive::Int32 => ("integer", Some("int32")),
        Primitive::Int64 => ("integer", Some("int64")),
        Primitive::Float => ("number", Some("float")),
        Primitive::Double => ("number", Some("double")),
    };
    let mut out = Map::new();
    out.insert("type".into(), json!(ty));
    if let Some(f) = format {
        out.insert("format".into(), json!(f));
    }
    out
}

fn object(properties: Value, required: &[&str]) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("properties".into(), properties);
    if !required.is_empty() {
        out.insert("required".into(), json!(required));
    }
    out
}

fn string_described(description: &str) -> Value {
    json!({"description": description, "type": "string"})
}

/// `armgen_runtime::kube::SecretReference`.
fn secret_schema() -> Map<String, Value> {
    object(
        json!({
            "name": string_described("The Secret's name, in the custom resource's namespace."),
            "key": string_described("The key within the Secret."),
        }),
        &["name", "key"],
    )
}

/// `armgen_runtime::kube::ConfigMapReference`.
fn config_map_reference_schema() -> Map<String, Value> {
    object(
        json!({
            "name": string_described("The ConfigMap's name, in the custom resource's namespace."),
            "key": string_described("The key within the ConfigMap."),
        }),
        &["name", "key"],
    )
}

/// `armgen_runtime::kube::ResourceReference`.
fn resource_reference_schema() -> Map<String, Value> {
    object(
        json!({
            // Short: a reference appears wherever the spec has an ARM ID (the CRD budget).
            "armId": string_described("The ARM ID."),
            "group": string_described("Or a custom resource: its API group,"),
            "kind": string_described("kind,"),
            "name": string_described("name,"),
            "namespace": string_described("namespace (default: this one's)."),
        }),
        &[],
    )
}

/// `armgen_runtime::kube::{ResourceGroupOwner, KnownOwner}`.
fn owner_schema(owner: &Owner) -> Map<String, Value> {
    match owner {
        Owner::Parent(_) => object(
            json!({"name": string_described("The parent custom resource's name.")}),
            &["name"],
        ),
        Owner::Scope => object(
            json!({
                "armId": string_described("The ARM ID of the resource this one extends."),
                "group": string_described("The API group of the custom resource this one extends."),
                "kind": string_described("The kind of the custom resource this one extends."),
                "name": string_described("The name of the custom resource this one extends (in this namespace)."),
            }),
            &[],
        ),
        Owner::ResourceGroup | Owner::Unsupported => object(
            json!({
                "name": string_described("The resource group's name."),
                "armId": string_described("The resource group's ARM ID (`/subscriptions/…/resourceGroups/…`)."),
            }),
            &[],
        ),
    }
}

/// An array of `armgen_runtime::kube::Condition`, keyed by `type`.
fn conditions_schema() -> Map<String, Value> {
    let condition = object(
        json!({
            "type": string_described("The condition's type, e.g. `Ready`."),
            "status": {
                "description": "`True`, `False` or `Unknown`.",
                "type": "string",
                "enum": ["True", "False", "Unknown"],
            },
            "reason": string_described("Why the condition has its status, in CamelCase."),
            "message": string_described("What happened, for people."),
            "lastTransitionTime": {
                "description": "RFC 3339 time of the last status change.",
                "type": "string",
                "format": "date-time",
            },
            "observedGeneration": {
                "description": "The `metadata.generation` the condition was set for.",
                "type": "integer",
                "format": "int64",
            },
        }),
        &["type", "status"],
    );
    let mut out = Map::new();
    out.insert("type".into(), json!("array"));
    out.insert("items".into(), Value::Object(condition));
    out.insert("x-kubernetes-list-type".into(), json!("map"));
    out.insert("x-kubernetes-list-map-keys".into(), json!(["type"]));
    out
}

/// `<Kind>OperatorSpec`: `secrets` and `configMaps` (those the kind declares), each an object of optional
/// destinations `{name, key}` (both required), one per declared export (no other export is accepted); and
/// `secretExpressions` / `configMapExpressions`, lists of `{name, key, value}` (all required).
fn operator_spec_schema(exports: &Exports) -> Map<String, Value> {
    let destination = |what: &str, export: &str| {
        Value::Object(described(
            format!("Where to write the `{export}` export: the {what} (in the custom resource's namespace) and key."),
            object(
                json!({
                    "name": string_described(&format!("The {what}'s name.")),
                    "key": string_described(&format!("The key within the {what}.")),
                }),
                &["name", "key"],
            ),
        ))
    };
    let mut props = Map::new();
    if !exports.secrets.is_empty() {
        let secrets: Map<String, Value> = exports
            .secrets
            .iter()
            .map(|(n, e)| {
                let mut d = destination("Secret", n);
                if let Some(Value::String(text)) = d.get_mut("description") {
                    text.push_str(&format!(" The value comes from the Azure action `{}`.", e.action));
                }
                (n.clone(), d)
            })
            .collect();
        props.insert(
            "secrets".into(),
            Value::Object(described("Secret exports.".into(), object(Value::Object(secrets), &[]))),
        );
    }
    if !exports.config_maps.is_empty() {
        let maps: Map<String, Value> = exports
            .config_maps
            .iter()
            .map(|(n, path)| {
                let mut d = destination("ConfigMap", n);
                if let Some(Value::String(text)) = d.get_mut("description") {
                    text.push_str(&format!(" The value is `{path}` of the Azure resource."));
                }
                (n.clone(), d)
            })
            .collect();
        props.insert(
            "configMaps".into(),
            Value::Object(described("ConfigMap exports.".into(), object(Value::Object(maps), &[]))),
        );
    }
    let expressions = |what: &str, variables: &str| {
        let item = object(
            json!({
                "name": string_described(&format!("The {what}'s name (in the custom resource's namespace).")),
                "key": string_described(&format!("The key within the {what}.")),
                "value": string_described(&format!(
                    "A CEL expression giving a string; {variables}."
                )),
            }),
            &["name", "key", "value"],
        );
        let mut list = Map::new();
        list.insert("type".into(), json!("array"));
        list.insert("items".into(), Value::Object(item));
        Value::Object(described(
            format!("Values computed with CEL expressions and written to {what}s."),
            list,
        ))
    };
    props.insert(
        "secretExpressions".into(),
        expressions(
            "Secret",
            "`self` is the custom resource (spec and status), `secret` the Secret exports' values by name",
        ),
    );
    props.insert(
        "configMapExpressions".into(),
        expressions("ConfigMap", "`self` is the custom resource (spec and status)"),
    );
    object(Value::Object(props), &[])
}

/// `armgen_runtime::kube::OperatorStatus`.
fn operator_status_schema() -> Map<String, Value> {
    let difference = object(
        json!({
            "path": string_described("The field path, e.g. `spec.agentPoolProfiles[name=pool1].count`."),
            "desired": string_described("The desired value."),
            "actual": string_described("The value Azure has."),
        }),
        &["path"],
    );
    object(
        json!({
            "knownDifferences": {
                "description": "Differences the service does not apply; they do not trigger another PUT.",
                "type": "array",
                "items": difference,
            },
            "pendingOperation": string_described(
                "The long-running operation in flight, so that polling resumes after a restart."
            ),
            "annotations": {
                "description": "Free-form facts the operator keeps (for example the ARM ID it manages).",
                "type": "object",
                "additionalProperties": {"type": "string"},
            },
        }),
        &[],
    )
}

impl Crd {
    /// Fits the manifest (as its YAML file) into `budget` bytes when it is over: descriptions below a depth
    /// that decreases until the file fits keep their first sentence; when even all of them cut is too much,
    /// objects below a depth lose their fields (`x-kubernetes-preserve-unknown-fields`) first. Every step is a
    /// note of the manifest and is recorded in [`Crd::fitted`]. Linear in the manifest's size (see
    /// [`super::fit`]). The emitter applies it with [`MAX_CRD_BYTES`].
    pub fn fit(&mut self, budget: usize) {
        self.undescribe_older_versions(budget);
        let measure = fit::measure(&self.manifest);
        // The model's size is exact (`generator/tests/fit.rs`); still, whether a manifest is over the budget at
        // all is decided on the real YAML unless the model puts it far over (serializing a deep chain's
        // manifest, tens of megabytes, costs more than all of fitting).
        let modelled = self.file_header().len() + measure.size.bytes;
        let original = if measure.exact && modelled > 2 * budget {
            modelled
        } else {
            self.yaml_len()
        };
        if original <= budget {
            return;
        }
        let full = self.manifest.clone();
        let at = format!("crd {}", self.kind);
        let mut report = Fitted {
            crd: self.name(),
            original,
            fitted: original,
            budget,
            trimmed: 0,
            trim_limit: None,
            cut: 0,
            cut_limit: None,
        };
        let note_len = |message: &str| format!("# Note: {at}: {message}\n").len();
        let trim_note = |trimmed: usize, limit: usize| trim_message(original, budget, trimmed, limit);
        // The deepest trim (largest `limit`) the model predicts to fit, from a file of `size` bytes.
        let pick_trim = |m: &fit::Measure, size: usize| -> Option<(usize, usize)> {
            let by_depth = m.trim_by_depth();
            let (mut saved, mut trimmed) = (0, 0);
            for limit in (0..m.deepest().saturating_sub(1)).rev() {
                if let Some((bytes, count)) = by_depth.get(limit + 2) {
                    saved += bytes;
                    trimmed += count;
                }
                if (size + note_len(&trim_note(trimmed, limit))).saturating_sub(saved) <= budget {
                    return Some((limit, trimmed));
                }
            }
            None
        };
        let mut start_limit = measure.deepest().saturating_sub(1);
        if measure.exact {
            let mut choice = pick_trim(&measure, original);
            if choice.is_none() {
                // Even every description cut is too much: cut structure first, on the fully trimmed sizes.
                let mut trimmed_all = full.clone();
                let n_all: usize = versions_mut(&mut trimmed_all).map(|s| trim(s, 0, 0)).sum();
                let mt = fit::measure(&trimmed_all);
                let saved_all: usize = measure.trim_by_depth().iter().skip(2).map(|(b, _)| b).sum();
                let size_t = original.saturating_sub(saved_all) + note_len(&trim_note(n_all, 0));
                let by_depth = mt.cut_by_depth();
                let cut_note = |n: usize, limit: usize| {
                    format!(
                        "{original} bytes, over the budget of {budget}: {n} objects more than {limit} levels below \
                         spec/status keep no fields (`{PRESERVE}: true`; the API server does not validate below them)"
                    )
                };
                let cut_choice = (0..mt.deepest().saturating_sub(1)).rev().find_map(|limit| {
                    let (bytes, n) = by_depth.get(limit + 1).copied().unwrap_or_default();
                    (n > 0 && (size_t + note_len(&cut_note(n, limit))).saturating_sub(bytes) <= budget)
                        .then_some((limit, n))
                });
                // Not even that fits (the model says): only the strongest trim is left to try.
                start_limit = 1;
                if let Some((limit, _)) = cut_choice {
                    // The same objects as in the trimmed copy: trimming changes descriptions only.
                    let cut: usize = versions_mut(&mut self.manifest).map(|s| fit::cut(s, 0, limit)).sum();
                    report.cut = cut;
                    report.cut_limit = Some(limit);
                    self.diagnostics.push(diag(&at, cut_note(cut, limit)));
                    let mc = fit::measure(&self.manifest);
                    let size_c = self.file_header().len() + mc.size.bytes;
                    if size_c <= budget {
                        report.fitted = self.yaml_len();
                    } else {
                        choice = pick_trim(&mc, size_c);
                        start_limit = mc.deepest().saturating_sub(1);
                    }
                }
            }
            if let Some((limit, _)) = choice {
                let base = self.manifest.clone();
                let trimmed: usize = versions_mut(&mut self.manifest).map(|s| trim(s, 0, limit)).sum();
                self.diagnostics.push(diag(&at, trim_note(trimmed, limit)));
                let size = self.yaml_len();
                if size <= budget {
                    report.trimmed = trimmed;
                    report.trim_limit = Some(limit);
                    report.fitted = size;
                    self.fitted = Some(report);
                    return;
                }
                // The model was off (it should not be): go on trimming, measuring for real.
                self.diagnostics.pop();
                self.manifest = base;
                start_limit = limit;
            } else if report.cut_limit.is_some() && report.fitted <= budget {
                self.fitted = Some(report);
                return;
            }
        }
        self.fit_by_measuring(budget, start_limit, report);
    }

    /// Step 0 of [`Crd::fit`]: while the file is over `budget`, the schema of the oldest version that is neither
    /// stored nor the newest served one loses its field descriptions (its root says where they are: the newest
    /// version, which `kubectl explain` shows by default). The structure of every version stays whole, and the
    /// descriptions users read stay on the version they write; each version left undescribed is a note of the
    /// manifest and is listed in [`Crd::undescribed`]. A manifest with one or two versions is left to the trims.
    fn undescribe_older_versions(&mut self, budget: usize) {
        let api_of = |name: &str| {
            self.versions
                .iter()
                .find(|(v, _)| v == name)
                .map(|(_, api)| api.clone())
                .unwrap_or_default()
        };
        // (served, ARM API version, name, stored) per manifest version.
        let entries: Vec<(bool, String, String, bool)> = self
            .manifest
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|v| {
                let name = v.get("name").and_then(Value::as_str)?;
                let served = v.get("served").and_then(Value::as_bool).unwrap_or(false);
                let stored = v.get("storage").and_then(Value::as_bool).unwrap_or(false);
                Some((served, api_of(name), name.to_string(), stored))
            })
            .collect();
        let Some(newest) = entries
            .iter()
            .filter(|(served, ..)| *served)
            .max_by(|a, b| a.1.cmp(&b.1))
            .map(|(_, _, name, _)| name.clone())
        else {
            return;
        };
        let mut candidates: Vec<&(bool, String, String, bool)> = entries
            .iter()
            .filter(|(_, _, name, stored)| !*stored && *name != newest && !self.undescribed.contains(name))
            .collect();
        // Unserved versions first (nobody reads them through `kubectl explain`), then the oldest served ones.
        candidates.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        if candidates.is_empty() {
            return;
        }
        let original = self.yaml_len();
        if original <= budget {
            return;
        }
        let at = format!("crd {}", self.kind);
        for (_, _, name, _) in candidates {
            let Some(schema) = self
                .manifest
                .pointer_mut("/spec/versions")
                .and_then(Value::as_array_mut)
                .and_then(|vs| {
                    vs.iter_mut()
                        .find(|v| v.get("name").and_then(Value::as_str) == Some(name))
                })
                .and_then(|v| v.pointer_mut("/schema/openAPIV3Schema"))
            else {
                continue;
            };
            let removed = undescribe(schema);
            let note = format!(
                "Field descriptions are left out of version {name} to keep the CustomResourceDefinition under its \
                 size budget: version {newest} has them (`kubectl explain {} --api-version={}/{newest}`).",
                self.plural, self.group
            );
            if let Value::Object(m) = schema {
                let root = match m.get("description").and_then(Value::as_str) {
                    Some(own) if !own.trim().is_empty() => format!("{}\n\n{note}", own.trim_end()),
                    _ => note,
                };
                m.insert("description".into(), Value::String(root));
            }
            self.undescribed.push(name.clone());
            self.diagnostics.push(diag(
                &at,
                format!(
                    "{original} bytes with every description, more than {budget}: version {name} keeps its \
                     schema without its {removed} field descriptions (version {newest} has them)"
                ),
            ));
            if self.yaml_len() <= budget {
                return;
            }
        }
    }

    /// The reference for [`Crd::fit`] when only descriptions need trimming: tries every trim depth from the
    /// deepest, serializing the manifest each time (quadratic; for tests, and what `fit` falls back to).
    pub fn fit_measuring(&mut self, budget: usize) {
        let original = self.yaml_len();
        if original <= budget {
            return;
        }
        let deepest = fit::measure(&self.manifest).deepest();
        let report = Fitted {
            crd: self.name(),
            original,
            fitted: original,
            budget,
            trimmed: 0,
            trim_limit: None,
            cut: 0,
            cut_limit: None,
        };
        self.fit_by_measuring(budget, deepest.saturating_sub(1), report);
    }

    /// Trims below `start_limit - 1`, `start_limit - 2`, … 0 levels until the file fits, measuring each.
    fn fit_by_measuring(&mut self, budget: usize, start_limit: usize, mut report: Fitted) {
        let (original, at) = (report.original, format!("crd {}", self.kind));
        let base = self.manifest.clone();
        for limit in (0..start_limit).rev() {
            self.manifest = base.clone();
            let trimmed: usize = versions_mut(&mut self.manifest).map(|s| trim(s, 0, limit)).sum();
            // The note is part of the file, so it is measured too.
            self.diagnostics
                .push(diag(&at, trim_message(original, budget, trimmed, limit)));
            let size = self.yaml_len();
            if size <= budget {
                report.trimmed = trimmed;
                report.trim_limit = Some(limit);
                report.fitted = size;
                self.fitted = Some(report);
                return;
            }
            self.diagnostics.pop();
        }
        let still = self.yaml_len();
        let message = format!(
            "{original} bytes, over the budget of {budget}, and still {still} bytes with every description below \
             spec/status cut to its first sentence"
        );
        self.diagnostics.push(diag(&at, message));
        report.fitted = self.yaml_len();
        self.fitted = Some(report);
    }

    /// The size of the YAML file.
    fn yaml_len(&self) -> usize {
        self.file_header().len() + self.body_yaml().map(|y| y.len()).unwrap_or(0)
    }
}

/// The note of a trim.
fn trim_message(original: usize, budget: usize, trimmed: usize, limit: usize) -> String {
    format!(
        "{original} bytes, over the budget of {budget}: {trimmed} descriptions of fields more than {limit} levels \
         below spec/status cut to their first sentence"
    )
}

fn versions_mut(manifest: &mut Value) -> impl Iterator<Item = &mut Value> {
    manifest
        .pointer_mut("/spec/versions")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(|v| v.pointer_mut("/schema/openAPIV3Schema"))
}

/// The children of a schema node: (child, whether it is a field, one level deeper).
fn children_mut(node: &mut Value) -> Vec<(&mut Value, bool)> {
    let mut out = Vec::new();
    if let Value::Object(m) = node {
        for (k, v) in m.iter_mut() {
            match k.as_str() {
                "properties" => {
                    if let Value::Object(props) = v {
                        out.extend(props.values_mut().map(|p| (p, true)));
                    }
                }
                "items" | "additionalProperties" => out.push((v, false)),
                _ => {}
            }
        }
    }
    out
}

/// Removes every description below a schema's root; returns how many.
fn undescribe(node: &mut Value) -> usize {
    children_mut(node)
        .into_iter()
        .map(|(c, _)| {
            let own = match c {
                Value::Object(m) => usize::from(m.remove("description").is_some()),
                _ => 0,
            };
            own + undescribe(c)
        })
        .sum()
}

/// Cuts the descriptions of fields more than `limit` levels below spec/status (spec's own fields are level 1;
/// `depth` counts fields from the root, where spec and status are depth 1) to their first sentence; returns how
/// many changed.
fn trim(node: &mut Value, depth: usize, limit: usize) -> usize {
    let mut n = 0;
    if depth > limit + 1 {
        if let Some(Value::String(d)) = node.get_mut("description") {
            let first = fit::first_sentence(d);
            if first.len() < d.len() {
                *d = first;
                n += 1;
            }
        }
    }
    for (c, field) in children_mut(node) {
        n += trim(c, depth + usize::from(field), limit);
    }
    n
}

/// The properties every custom resource's root schema starts with: `apiVersion`, `kind`, `metadata`.
fn object_header() -> Map<String, Value> {
    let mut properties = Map::new();
    properties.insert(
        "apiVersion".into(),
        json!({"description": "The versioned schema of this representation of an object.", "type": "string"}),
    );
    properties.insert(
        "kind".into(),
        json!({"description": "The REST resource this object represents.", "type": "string"}),
    );
    properties.insert("metadata".into(), json!({"type": "object"}));
    properties
}
