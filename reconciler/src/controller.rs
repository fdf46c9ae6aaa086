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
use futures::StreamExt;
use kube::api::DynamicObject;
use kube::runtime::controller::Controller;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};

use crate::reconcile::{KindContext, Shared, error_policy, reconcile};

/// The kinds a reconciler serves: per kind, the storage version when it has the kind, else the newest version
/// that has it; `versions` (`group=version` pairs) overrides the version per API group.
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

/// What triggers a reconcile: generation, annotations, deletion.
fn trigger_hash(object: &DynamicObject) -> Option<u64> {
    let meta = object.meta();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    meta.generation.hash(&mut h);
    meta.annotations.hash(&mut h);
    meta.deletion_timestamp.is_some().hash(&mut h);
    Some(h.finish())
}

/// Runs one controller per kind until shutdown (Ctrl-C / SIGTERM); `namespace` limits the watch.
pub async fn run(shared: Arc<Shared>, kinds: Vec<&'static KindInfo>, namespace: Option<String>) {
    let mut controllers = Vec::new();
    for info in kinds {
        let ctx = Arc::new(KindContext::new(shared.clone(), info));
        let api: Api<DynamicObject> = match &namespace {
            Some(ns) => Api::namespaced_with(shared.client.clone(), ns, &ctx.resource),
            None => Api::all_with(shared.client.clone(), &ctx.resource),
        };
        let writer = reflector::store::Writer::new(ctx.resource.clone());
        let reader = writer.as_reader();
        let trigger = watcher(api, watcher::Config::default())
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
        let controller = Controller::for_stream_with(trigger, reader, ctx.resource.clone())
            .shutdown_on_signal()
            .run(reconcile, error_policy, ctx)
            .for_each(move |result| {
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
        controllers.push(Box::pin(controller));
    }
    futures::future::join_all(controllers).await;
}
