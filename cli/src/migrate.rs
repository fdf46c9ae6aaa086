//! `armctl migrate-storage`: moves every stored object of our custom resources to its CRD's current storage
//! version, then drops the older versions from the CRD's `status.storedVersions`.
//!
//! Why: when a CRD's storage version moves (a new hub), objects written before stay encoded at the old version
//! in etcd — they keep working, the conversion webhook serves them — and `status.storedVersions` keeps listing the
//! old version, so it can never leave `spec.versions`. The procedure is the one of the Kubernetes documentation,
//! "Versions in CustomResourceDefinitions" → "Upgrade existing objects to a new stored version"
//! (<https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/#upgrade-existing-objects-to-a-new-stored-version>):
//! with the new version set as storage, list every existing object and write it back with the same content, which
//! makes the API server store it at the current storage version; then remove the old versions from
//! `status.storedVersions`.
//!
//! Why a write of the same content is enough: the API server skips a write only when the newly encoded bytes equal
//! the stored ones; an object stored at an old version is encoded differently at the new one (its `apiVersion`
//! alone differs), so the write goes to etcd, while an object already at the storage version is left alone (a
//! cheap no-op). The write is a `PUT` of the object as read, with its `resourceVersion`; a `409 Conflict` means
//! somebody wrote it meanwhile (which stored it at the storage version too) and is retried with a fresh read. The
//! list is read at the storage version, through the conversion webhook for the older objects.
//!
//! - Which CRDs: the manifests armctl carries (`armctl crds`: every kind of every API group, templates included),
//!   looked up by name in the cluster; one not installed is skipped. `--kind` and `--group` select as they do for
//!   `armctl crds`. The storage version and `storedVersions` are the installed CRD's.
//! - Idempotent: a CRD whose `storedVersions` is already just its storage version is left alone (nothing listed).
//! - Resumable: an interrupted run changes nothing that a rerun does not redo; `storedVersions` is patched only
//!   after every object of the CRD was rewritten, and only when the storage version did not move meanwhile.
//! - `--namespace` rewrites one namespace's objects and does not patch `storedVersions` (objects elsewhere may still
//!   be at an old version); `--dry-run` lists what would be rewritten and patched and writes nothing.
//! - A failed object is named (kind, namespace/name, CRD) and keeps its CRD's `storedVersions` as they are; the
//!   other objects and CRDs go on; the exit code is then 2.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::Failure;

/// How many objects a list page holds.
const PAGE: u32 = 500;
/// How often a write that conflicts is retried with a fresh read.
const CONFLICT_RETRIES: usize = 5;

/// The options of `armctl migrate-storage`.
pub struct Options {
    pub namespace: Option<String>,
    pub kinds: Vec<String>,
    pub group: Option<String>,
    pub dry_run: bool,
}

/// One of our CRDs, by its manifest.
struct Ours {
    name: String,
    kind: String,
}

/// Our CRDs (those `armctl crds` prints), optionally only some kinds (case-insensitive, each looked up in every API
/// group) and only one group: as `armctl crds --kind --group` selects them.
fn ours(kinds: &[String], group: Option<&str>) -> Result<Vec<Ours>, Failure> {
    let manifests = crate::manifests()?;
    let selected = crate::select_manifests(&manifests, kinds, group)?;
    let mut all = Vec::new();
    for (g, k, yaml) in &manifests {
        if !selected.iter().any(|(sg, sk)| sg == g && sk == k) {
            continue;
        }
        let doc: serde_json::Value =
            serde_yaml_ng::from_str(yaml).map_err(|e| format!("a CRD manifest armctl carries does not parse: {e}"))?;
        if let Some(name) = doc.pointer("/metadata/name").and_then(|v| v.as_str()) {
            all.push(Ours {
                name: name.to_string(),
                kind: k.clone(),
            });
        }
    }
    Ok(all)
}

pub fn run(options: &Options) -> Result<(), Failure> {
    let selected = ours(&options.kinds, options.group.as_deref())?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let client = kube::Client::try_default().await.map_err(|e| {
            format!("cannot connect to the cluster (KUBECONFIG, ~/.kube/config or the in-cluster service account): {e}")
        })?;
        let mut failures = Vec::new();
        for crd in &selected {
            if let Err(e) = migrate(&client, crd, options).await {
                failures.push(e);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(Failure(format!(
                "{} CRD(s) not migrated (rerun to resume):\n  {}",
                failures.len(),
                failures.join("\n  ")
            )))
        }
    })
}

/// The storage version and the stored versions of an installed CRD.
fn versions_of(crd: &CustomResourceDefinition) -> (Option<String>, Vec<String>) {
    let storage = crd.spec.versions.iter().find(|v| v.storage).map(|v| v.name.clone());
    let stored = crd
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    (storage, stored)
}

/// A client error, shortly: the API server's message and code, else the error.
fn describe(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(status) => format!("{} ({} {})", status.message, status.code, status.reason),
        other => other.to_string(),
    }
}

fn list(versions: &[String]) -> String {
    format!("[{}]", versions.join(", "))
}

/// Migrates one CRD; the error names the CRD and the objects that failed.
async fn migrate(client: &kube::Client, ours: &Ours, options: &Options) -> Result<(), String> {
    let name = &ours.name;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let Some(crd) = crds
        .get_opt(name)
        .await
        .map_err(|e| format!("{name}: cannot read the CRD: {}", describe(&e)))?
    else {
        println!("{name}: not installed, skipped");
        return Ok(());
    };
    let (Some(storage), stored) = versions_of(&crd) else {
        return Err(format!("{name}: the CRD has no storage version"));
    };
    if stored == [storage.clone()] {
        println!(
            "{name}: stored versions {} are the storage version: nothing to do",
            list(&stored)
        );
        return Ok(());
    }
    // Read (and write) at the storage version when it is served, else at a served version: either way the API
    // server stores what is written at the storage version.
    let Some(version) = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == storage && v.served)
        .or_else(|| crd.spec.versions.iter().find(|v| v.served))
        .map(|v| v.name.clone())
    else {
        return Err(format!("{name}: the CRD serves no version"));
    };
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&crd.spec.group, &version, &crd.spec.names.kind),
        &crd.spec.names.plural,
    );
    let namespaced = crd.spec.scope == "Namespaced";
    let api: Api<DynamicObject> = match (&options.namespace, namespaced) {
        (Some(ns), true) => Api::namespaced_with(client.clone(), ns, &resource),
        _ => Api::all_with(client.clone(), &resource),
    };
    let scope = match &options.namespace {
        Some(ns) if namespaced => format!("in namespace {ns}"),
        _ => "in all namespaces".to_string(),
    };
    println!(
        "{name}: storage version {storage}, stored versions {}; rewriting every {} {scope} at {version}",
        list(&stored),
        ours.kind
    );

    let mut objects = Vec::new();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = api.list(&params).await.map_err(|e| {
            format!(
                "{name}: cannot list the {} objects at {version}: {}",
                ours.kind,
                describe(&e)
            )
        })?;
        objects.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }

    let total = objects.len();
    let mut failed = Vec::new();
    for (i, object) in objects.into_iter().enumerate() {
        let ns = object.metadata.namespace.clone().unwrap_or_default();
        let object_name = object.metadata.name.clone().unwrap_or_default();
        let shown = if ns.is_empty() {
            object_name.clone()
        } else {
            format!("{ns}/{object_name}")
        };
        if options.dry_run {
            println!("  [{}/{total}] {} {shown}: would rewrite", i + 1, ours.kind);
            continue;
        }
        let scoped: Api<DynamicObject> = if ns.is_empty() {
            Api::all_with(client.clone(), &resource)
        } else {
            Api::namespaced_with(client.clone(), &ns, &resource)
        };
        match rewrite(&scoped, &object_name, object).await {
            Ok(Rewrite::Written) => println!("  [{}/{total}] {} {shown}: rewritten", i + 1, ours.kind),
            Ok(Rewrite::Gone) => println!("  [{}/{total}] {} {shown}: deleted meanwhile", i + 1, ours.kind),
            Err(e) => {
                println!("  [{}/{total}] {} {shown}: failed", i + 1, ours.kind);
                failed.push(format!("{} {shown} ({name}, {version}): {}", ours.kind, describe(&e)));
            }
        }
    }
    if !failed.is_empty() {
        return Err(format!(
            "{name}: {} of {total} object(s) not rewritten, status.storedVersions left at {}: {}",
            failed.len(),
            list(&stored),
            failed.join("; ")
        ));
    }
    if options.namespace.is_some() && namespaced {
        println!(
            "{name}: status.storedVersions left at {}: only a run over all namespaces reduces it",
            list(&stored)
        );
        return Ok(());
    }
    if options.dry_run {
        println!(
            "{name}: would set status.storedVersions {} → [{storage}]",
            list(&stored)
        );
        return Ok(());
    }
    // The storage version must not have moved while the objects were rewritten.
    let now = crds
        .get(name)
        .await
        .map_err(|e| format!("{name}: cannot read the CRD again: {}", describe(&e)))?;
    let (storage_now, stored_now) = versions_of(&now);
    if storage_now.as_deref() != Some(storage.as_str()) {
        return Err(format!(
            "{name}: the storage version moved from {storage} to {} during the migration; rerun",
            storage_now.unwrap_or_default()
        ));
    }
    crds.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": { "storedVersions": [storage] } })),
    )
    .await
    .map_err(|e| {
        format!(
            "{name}: every object was rewritten, but status.storedVersions could not be set: {}",
            describe(&e)
        )
    })?;
    println!("{name}: status.storedVersions {} → [{storage}]", list(&stored_now));
    Ok(())
}

enum Rewrite {
    Written,
    Gone,
}

/// Writes `object` back unchanged; on a conflict, reads it again and retries.
async fn rewrite(api: &Api<DynamicObject>, name: &str, mut object: DynamicObject) -> Result<Rewrite, kube::Error> {
    let mut attempt = 0;
    loop {
        match api.replace(name, &PostParams::default(), &object).await {
            Ok(_) => return Ok(Rewrite::Written),
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(Rewrite::Gone),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < CONFLICT_RETRIES => {
                attempt += 1;
                match api.get_opt(name).await? {
                    Some(fresh) => object = fresh,
                    None => return Ok(Rewrite::Gone),
                }
            }
            Err(e) => return Err(e),
        }
    }
}
