//! One kube-rs `Controller` per registered kind: the registry is generated ([`aks_api::KINDS`]), so a new kind or
//! AKS version needs no edit here.
//!
//! Each controller watches its kind at one Kubernetes version (by default the storage version of its group; the
//! API server converts objects stored at other versions). Only changes that matter trigger a reconcile:
//! `metadata.generation` (spec changes), annotations (reconcile policy, credentials) and the deletion timestamp —
//! the reconciler's own status writes do not. Objects in sync are resynced every [`Settings::resync`].
//!
//! [`Settings::resync`]: crate::reconcile::Settings::resync

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use armgen_runtime::KindInfo;
use futures::{FutureExt, StreamExt};
use kube::api::DynamicObject;
use kube::runtime::controller::{Config, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};

use crate::reconcile::{KindContext, Shared, api_resource, error_policy, find_kind, reconcile};

/// The kinds a reconciler serves: per kind, its storage version (`KindInfo::storage`: the group's storage version
/// when it has the kind, else the newest non-preview version that has it); `versions` (`group=version` pairs)
/// overrides the version per API group.
pub fn served_kinds(overrides: &[(String, String)]) -> Vec<&'static KindInfo> {
    let mut out: Vec<&'static KindInfo> = Vec::new();
    for info in aks_api::KINDS {
        let wanted = match overrides.iter().find(|(g, _)| g == info.kube_group || g == info.group) {
            Some((_, v)) => info.version == v,
            None => {
                info.storage
                    || !aks_api::KINDS
                        .iter()
                        .any(|o| o.storage && o.kube_group == info.kube_group && o.kind == info.kind)
            }
        };
        if wanted
            && !out
                .iter()
                .any(|o| o.kube_group == info.kube_group && o.kind == info.kind)
        {
            out.push(info);
        }
    }
    out
}

/// Whether a child's `Ready` condition says it waits for its owner: only those are woken by the owner's
/// changes (the others have their own triggers; waking them would cost an ARM GET each, e.g. on every restart).
fn waiting_for_owner(child: &DynamicObject) -> bool {
    child
        .data
        .pointer("/status/conditions")
        .and_then(|c| c.as_array())
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["reason"] == "WaitingForOwner")
        })
}

/// What triggers a reconcile: generation, annotations, deletion.
fn trigger_hash(object: &DynamicObject) -> Option<u64> {
    let meta = object.meta();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut h);
    meta.annotations.hash(&mut h);
    meta.deletion_timestamp.is_some().hash(&mut h);
    Some(h.finish())
}

/// The owner kind's watch events as objects; a deleted owner comes with a `deletionTimestamp` (set here when the
/// API server deleted it at once, without a finalizer), so the mapper can tell a deletion from a change.
fn owner_events(
    api: Api<DynamicObject>,
) -> impl futures::Stream<Item = Result<DynamicObject, watcher::Error>> + Send + 'static {
    watcher(api, watcher::Config::default())
        .default_backoff()
        .filter_map(|event| {
            futures::future::ready(match event {
                Ok(watcher::Event::Apply(o)) | Ok(watcher::Event::InitApply(o)) => Some(Ok(o)),
                Ok(watcher::Event::Delete(mut o)) => {
                    if o.metadata.deletion_timestamp.is_none() {
                        o.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                            k8s_openapi::jiff::Timestamp::now(),
                        ));
                    }
                    Some(Ok(o))
                }
                Ok(watcher::Event::Init) | Ok(watcher::Event::InitDone) => None,
                Err(e) => Some(Err(e)),
            })
        })
}

/// How [`run`] runs the controllers.
pub struct RunOptions {
    /// Watch only this namespace.
    pub namespace: Option<String>,
    /// Concurrent reconciles per kind (0: unbounded).
    pub concurrency: u16,
    /// Stop when this completes (in-flight reconciles finish first); `None`: on Ctrl-C / SIGTERM.
    pub shutdown: Option<futures::future::BoxFuture<'static, ()>>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            namespace: None,
            concurrency: 16,
            shutdown: None,
        }
    }
}

/// Runs one controller per kind until shutdown. A child kind's controller also watches its owner kind, so a
/// child waiting for its owner (`Ready` reason `WaitingForOwner`) is reconciled as soon as the owner changes (e.g.
/// gets its ARM ID), not only at the next retry.
pub async fn run(shared: Arc<Shared>, kinds: Vec<&'static KindInfo>, options: RunOptions) {
    let shutdown = options.shutdown.map(FutureExt::shared);
    let mut controllers = Vec::new();
    for info in kinds {
        let ctx = Arc::new(KindContext::new(shared.clone(), info));
        let api_for = |resource: &kube::api::ApiResource| -> Api<DynamicObject> {
            match &options.namespace {
                Some(ns) => Api::namespaced_with(shared.client.clone(), ns, resource),
                None => Api::all_with(shared.client.clone(), resource),
            }
        };
        let writer = reflector::store::Writer::new(ctx.resource.clone());
        let reader = writer.as_reader();
        let trigger = watcher(api_for(&ctx.resource), watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .applied_objects()
            .predicate_filter(trigger_hash, Default::default());
        let kind = info.kind;
        let metrics = shared.metrics.clone();
        tracing::info!(
            kind,
            version = info.version,
            api_version = info.arm.api_version,
            "watching"
        );
        let mut controller = Controller::for_stream_with(trigger, reader.clone(), ctx.resource.clone())
            .with_config(Config::default().concurrency(options.concurrency));
        if let Some(owner) = info
            .owner_kind
            .and_then(|o| find_kind(info.kube_group, info.version, o))
        {
            let owner_resource = api_resource(owner);
            let children = reader.clone();
            let child_resource = ctx.resource.clone();
            controller = controller.watches_stream_with(
                owner_events(api_for(&owner_resource)),
                move |owner: DynamicObject| {
                    let (name, namespace) = (owner.metadata.name.clone(), owner.metadata.namespace.clone());
                    // An owner being deleted (or gone) wakes every child: they report it instead of staying
                    // Ready until their next resync.
                    let deleting = owner.metadata.deletion_timestamp.is_some();
                    children
                        .state()
                        .into_iter()
                        .filter(|child| {
                            child.metadata.namespace == namespace
                                && child.data.pointer("/spec/owner/name").and_then(|v| v.as_str()) == name.as_deref()
                                && (deleting || waiting_for_owner(child))
                        })
                        .map(|child| ObjectRef::from_obj_with(child.as_ref(), child_resource.clone()))
                        .collect::<Vec<_>>()
                },
                owner_resource,
            );
        }
        controller = match &shutdown {
            Some(signal) => controller.graceful_shutdown_on(signal.clone()),
            None => controller.shutdown_on_signal(),
        };
        let running = controller.run(reconcile, error_policy, ctx).for_each(move |result| {
            if let Err(e) = result {
                if let kube::runtime::controller::Error::ObjectNotFound(gone) = &e {
                    // A retry scheduled for an object deleted since: it no longer waits.
                    let key = format!("{}/{}", gone.namespace.as_deref().unwrap_or_default(), gone.name);
                    metrics.forget(kind, &key);
                }
                tracing::debug!(kind, "controller: {e}");
            }
            futures::future::ready(())
        });
        controllers.push(Box::pin(running));
    }
    futures::future::join_all(controllers).await;
}
