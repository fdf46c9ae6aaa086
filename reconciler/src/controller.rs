//! One kube-rs `Controller` per registered kind: the registry is generated ([`aks_api::KINDS`]), so a new kind or
//! AKS version needs no edit here.
//!
//! Each controller watches its kind at one Kubernetes version (by default the storage version of its group; the
//! API server converts objects stored at other versions). Only changes that matter trigger a reconcile:
//! `metadata.generation` (spec changes), annotations (reconcile policy, credentials) and the deletion timestamp —
//! the reconciler's own status writes do not. Objects in sync are resynced every [`Settings::resync`] (or sooner
//! when a view is due): the controller keeps those deadlines itself, a hash and an instant per object, and sends
//! the objects due to kube-runtime's controller each second (`Controller::reconcile_on`), rather than leaving a
//! requeue per object in kube-runtime's scheduler.
//!
//! What waits is woken by what it waits for: a child by its owner's changes (`Children`), and any object by the
//! changes of the custom resources its spec references — `{group, kind, name}` references and an extension
//! resource's scope (`References`, shared by all controllers) — only while it is not settled, so a referenced
//! object's change costs nothing for objects already in sync.
//!
//! The controllers run over [`Cached`] objects rather than `DynamicObject`s: the same objects, slimmed by
//! [`crate::cache`] as they enter the watch cache, but with an `Arc<ApiResource>` as their dynamic type. kube-runtime
//! keeps an `ObjectRef` — with a clone of the dynamic type — per object in the reflector store and two per object in
//! the scheduler (every object in sync waits there for its resync), so with a plain `ApiResource` (five `String`s)
//! the per-kind type information was copied three times per object; now it is a pointer. The reconcile still
//! takes the `Arc<DynamicObject>` inside (no copy). The owner and reference watches stay on `DynamicObject`: their
//! objects only pass through.
//!
//! [`Settings::resync`]: crate::context::Settings::resync

use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use armgen_runtime::KindInfo;
use futures::{FutureExt, StreamExt};
use kube::api::DynamicObject;
use kube::runtime::controller::{Config, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Resource};

use crate::cache::Cached;
use crate::context::{KindContext, Shared};
use crate::kinds::{api_resource, find_kind};
use crate::reconcile::error_policy;

/// The kinds a reconciler serves: per kind, its storage version (`KindInfo::storage`: the group's storage version
/// when it has the kind, else the newest non-preview version that has it); `versions` (`group=version` pairs)
/// overrides the version per API group. A version that is not served (`VersionInfo::served`) is never picked.
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
            && info.served
            && !out
                .iter()
                .any(|o| o.kube_group == info.kube_group && o.kind == info.kind)
        {
            out.push(info);
        }
    }
    out
}

/// The reconcile of a kind: the resources' loop ([`crate::reconcile::reconcile`]), or an action kind's
/// ([`crate::actions`]).
pub async fn reconcile_any(
    object: std::sync::Arc<DynamicObject>,
    ctx: std::sync::Arc<crate::context::KindContext>,
) -> Result<kube::runtime::controller::Action, crate::context::Error> {
    reconcile_any_resync(object, ctx).await.map(|(action, _)| action)
}

/// [`reconcile_any`], and for a resource in sync when it is resynced ([`crate::reconcile::reconcile_resync`]).
async fn reconcile_any_resync(
    object: std::sync::Arc<DynamicObject>,
    ctx: std::sync::Arc<crate::context::KindContext>,
) -> Result<(kube::runtime::controller::Action, Option<std::time::Duration>), crate::context::Error> {
    if crate::actions::action_of(&ctx).is_some() {
        crate::actions::reconcile(object, ctx).await.map(|a| (a, None))
    } else {
        crate::reconcile::reconcile_resync(object, ctx).await
    }
}

/// When each object in sync is resynced: the deadline of its next resync, kept here rather than as a requeue in
/// kube-runtime's scheduler. A requeue is an entry in the scheduler's map and in its delay queue, each with a copy
/// of the object's reference (name, namespace, resource version, UID): ≈ 600 bytes for every object the
/// reconciler serves, as every object in sync waits for its resync (BENCHMARKS.md, "Reconciler at scale"). Here
/// it is a keyed 64-bit hash of its namespace and name and an instant (random per process, so no one can aim at a
/// collision, which would only resync an object early). Once a second, the objects due are looked up in the
/// watch cache and sent to the controller ([`Resyncs::due`]): the same resync, to the second.
#[derive(Default)]
struct Resyncs {
    keys: std::hash::RandomState,
    at: Mutex<HashMap<u64, std::time::Instant>>,
}

impl Resyncs {
    /// How often the deadlines are checked.
    const TICK: std::time::Duration = std::time::Duration::from_secs(1);

    fn key(&self, o: &DynamicObject) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one((&o.metadata.namespace, &o.metadata.name))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, std::time::Instant>> {
        self.at.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `o` is resynced `after` from now (`None`: not by this schedule — it is not in sync, or gone).
    fn set(&self, o: &DynamicObject, after: Option<std::time::Duration>) {
        let key = self.key(o);
        match after {
            Some(after) => {
                self.lock().insert(key, std::time::Instant::now() + after);
            }
            None => {
                self.lock().remove(&key);
            }
        }
    }

    /// How many ticks apart the deadlines of objects gone from the cache are dropped (an object's last reconcile
    /// normally drops its own: a deletion ends in sync with `None`).
    const PRUNE_TICKS: u64 = 60;

    /// The objects of `objects` due at `now`, forgetting their deadlines (their reconcile sets the next one); with
    /// `prune`, also the deadlines of objects no longer in `objects`.
    fn take_due(&self, objects: &[Arc<Cached>], now: std::time::Instant, prune: bool) -> Vec<Arc<Cached>> {
        let mut at = self.lock();
        if !prune && !at.values().any(|t| *t <= now) {
            return Vec::new();
        }
        let mut due = Vec::new();
        let mut present = std::collections::HashSet::with_capacity(if prune { objects.len() } else { 0 });
        for o in objects {
            let key = self.key(&o.0);
            if prune {
                present.insert(key);
            }
            if at.get(&key).is_some_and(|t| *t <= now) {
                at.remove(&key);
                due.push(o.clone());
            }
        }
        if prune {
            at.retain(|key, _| present.contains(key));
        }
        due
    }

    /// The references of the objects due, checked every [`Resyncs::TICK`], for `Controller::reconcile_on`.
    fn due(
        self: Arc<Self>,
        store: reflector::Store<Cached>,
        dyntype: Arc<kube::api::ApiResource>,
    ) -> impl futures::Stream<Item = ObjectRef<Cached>> + Send + 'static {
        futures::stream::unfold(
            (self, store, dyntype, Vec::<ObjectRef<Cached>>::new(), 0u64),
            |(resyncs, store, dyntype, mut pending, mut ticks)| async move {
                while pending.is_empty() {
                    tokio::time::sleep(Self::TICK).await;
                    ticks += 1;
                    let prune = ticks % Self::PRUNE_TICKS == 0;
                    let due = resyncs.take_due(&store.state(), std::time::Instant::now(), prune);
                    pending = due
                        .iter()
                        .map(|o| ObjectRef::from_obj_with(&**o, dyntype.clone()))
                        .collect();
                }
                let next = pending.pop()?;
                Some((next, (resyncs, store, dyntype, pending, ticks)))
            },
        )
    }
}

/// Whether a child is not settled — its `Ready` condition is not `True` for its current generation (it waits for
/// its owner, for a reference, or is between a spec change and its status write). Only those are woken by the
/// owner's changes (the others have their own triggers; waking them would cost an ARM GET each, e.g. on every
/// restart). Checking "not settled" rather than "waiting" closes the race where the owner changes between the
/// child reading it and the child writing `WaitingForOwner` (the controller reruns a reconcile requested while it
/// runs).
fn unsettled(child: &DynamicObject) -> bool {
    let status = crate::cache::status(child);
    let ready = status
        .as_deref()
        .and_then(|s| s.get("conditions"))
        .and_then(|c| c.as_array())
        .and_then(|c| c.iter().find(|c| c["type"] == "Ready"));
    match ready {
        Some(c) => c["status"] != "True" || c["observedGeneration"].as_i64() != child.metadata.generation,
        None => true,
    }
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

/// Which watch events trigger a reconcile: an object seen for the first time, or whose [`trigger_hash`] changed,
/// or last seen more than [`Triggers::TTL`] ago — kube-runtime's `predicate_filter` with its default TTL, but
/// keyed by a 64-bit hash of the object's namespace, name and UID (with a per-process random key, so no one can
/// aim at a collision) rather than by a copy of those three strings: 40 bytes per object the reconciler serves
/// instead of ≈ 230 (BENCHMARKS.md, "Reconciler at scale"). A deleted object's entry goes with it.
#[derive(Default)]
struct Triggers {
    keys: std::hash::RandomState,
    seen: HashMap<u64, (u64, std::time::Instant)>,
    last_evicted: Option<std::time::Instant>,
}

impl Triggers {
    /// kube-runtime's `predicate_filter` default: an entry older than this counts as unseen, and entries are
    /// dropped after it.
    const TTL: std::time::Duration = std::time::Duration::from_secs(3600);

    fn key(&self, o: &DynamicObject) -> u64 {
        use std::hash::BuildHasher;
        let m = &o.metadata;
        self.keys.hash_one((&m.namespace, &m.name, &m.uid))
    }

    /// Whether `event`'s object triggers a reconcile (`None` for the other events), and forgets deleted objects.
    fn admit(&mut self, event: &watcher::Event<Cached>, now: std::time::Instant) -> bool {
        if self
            .last_evicted
            .is_none_or(|at| now.saturating_duration_since(at) >= Self::TTL)
        {
            self.seen
                .retain(|_, (_, seen)| now.saturating_duration_since(*seen) < Self::TTL);
            self.last_evicted = Some(now);
        }
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                let Some(hash) = trigger_hash(&o.0) else {
                    return true;
                };
                let key = self.key(&o.0);
                let changed = self
                    .seen
                    .get(&key)
                    .is_none_or(|(h, seen)| *h != hash || now.saturating_duration_since(*seen) >= Self::TTL);
                self.seen.insert(key, (hash, now));
                changed
            }
            watcher::Event::Delete(o) => {
                let key = self.key(&o.0);
                self.seen.remove(&key);
                false
            }
            watcher::Event::Init | watcher::Event::InitDone => false,
        }
    }

    /// The filter over a watch's events: the objects that trigger a reconcile, and the watch's errors.
    #[allow(clippy::type_complexity)]
    fn filter(
        mut self,
    ) -> impl FnMut(
        Result<watcher::Event<Cached>, watcher::Error>,
    ) -> futures::future::Ready<Option<Result<Cached, watcher::Error>>> {
        move |event| {
            futures::future::ready(match event {
                Ok(event) => {
                    if self.admit(&event, std::time::Instant::now()) {
                        match event {
                            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => Some(Ok(o)),
                            _ => None,
                        }
                    } else {
                        None
                    }
                }
                Err(e) => Some(Err(e)),
            })
        }
    }
}

/// The children of each owner: `(namespace, owner name)` → child names, kept from the child kind's watch events, so
/// that an owner's change finds its children without scanning every child (a scan per owner event made a resync
/// of 10,000 clusters with 30,000 pools quadratic). Keyed by keyed 64-bit hashes of `(namespace, name)` (random per
/// process, so no one can aim at a collision; one would only wake a child that did not need it), with each child's
/// name once: ≈ 80 bytes a child rather than ≈ 350 with tuples of strings as keys (BENCHMARKS.md).
#[derive(Default)]
struct Children {
    keys: std::hash::RandomState,
    /// owner → its children's names.
    by_owner: HashMap<u64, Vec<Box<str>>>,
    /// child → its owner, to move a child whose `spec.owner.name` changed.
    owner_of: HashMap<u64, u64>,
}

impl Children {
    fn owner_name(child: &DynamicObject) -> Option<String> {
        crate::cache::spec(child)?
            .pointer("/owner/name")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    }

    fn key(&self, ns: &str, name: &str) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one((ns, name))
    }

    fn apply(&mut self, child: &DynamicObject) {
        let (Some(ns), Some(name)) = (child.metadata.namespace.as_deref(), child.metadata.name.as_deref()) else {
            return;
        };
        self.delete(ns, name);
        if let Some(owner) = Self::owner_name(child) {
            let owner = self.key(ns, &owner);
            self.by_owner.entry(owner).or_default().push(name.into());
            let child = self.key(ns, name);
            self.owner_of.insert(child, owner);
        }
    }

    fn delete(&mut self, ns: &str, name: &str) {
        if let Some(owner) = self.owner_of.remove(&self.key(ns, name))
            && let Some(names) = self.by_owner.get_mut(&owner)
        {
            names.retain(|n| &**n != name);
            if names.is_empty() {
                self.by_owner.remove(&owner);
            }
        }
    }

    fn event<K: Borrow<DynamicObject>>(&mut self, event: &watcher::Event<K>) {
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => self.apply(o.borrow()),
            watcher::Event::Delete(o) => {
                let o: &DynamicObject = o.borrow();
                if let (Some(ns), Some(name)) = (&o.metadata.namespace, &o.metadata.name) {
                    self.delete(ns, name);
                }
            }
            // A relist starts over (objects deleted meanwhile never come as Delete events).
            watcher::Event::Init => {
                self.by_owner.clear();
                self.owner_of.clear();
            }
            watcher::Event::InitDone => {}
        }
    }

    /// The names of the children of `owner` in `ns`, sorted.
    fn of(&self, ns: &str, owner: &str) -> Vec<String> {
        let mut names: Vec<String> = self
            .by_owner
            .get(&self.key(ns, owner))
            .map(|names| names.iter().map(|n| n.to_string()).collect())
            .unwrap_or_default();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// A custom resource a spec references: `(API group, lowercase kind, namespace, name)`; a ConfigMap a
/// `<field>FromConfig` reads is `("", "configmap", namespace, name)`.
type Target = (String, String, String, String);

/// The target of a ConfigMap.
fn config_map_target(namespace: &str, name: &str) -> Target {
    (
        String::new(),
        "configmap".into(),
        namespace.to_string(),
        name.to_string(),
    )
}

/// Who references whom beyond owners: each object's references to other custom resources — `{group?, kind, name}`
/// objects anywhere in its spec (resource references, an extension resource's `spec.owner`) — kept from each kind's
/// watch events, shared by all controllers, so that a change of the referenced object wakes the objects that wait
/// for it (`WaitingForReference`, `WaitingForOwner` of an extension) instead of their retry timer. A child's owner by
/// `name` alone is [`Children`]'s.
#[derive(Default)]
struct References {
    /// referenced object → (referring kind's index in `run`, namespace, name).
    by_target: HashMap<Target, BTreeSet<(usize, String, String)>>,
    /// (referring kind's index, namespace, name) → what it references.
    of: HashMap<(usize, String, String), Vec<Target>>,
}

impl References {
    /// The references in `spec` (default group `group`, default namespace `namespace`).
    fn targets(spec: &serde_json::Value, group: &str, namespace: &str, out: &mut Vec<Target>) {
        match spec {
            serde_json::Value::Object(map) => {
                let text = |k: &str| map.get(k).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
                if let (Some(kind), Some(name), None) = (text("kind"), text("name"), text("armId")) {
                    out.push((
                        text("group").unwrap_or(group).to_string(),
                        kind.to_ascii_lowercase(),
                        text("namespace").unwrap_or(namespace).to_string(),
                        name.to_string(),
                    ));
                }
                for (key, v) in map {
                    if key.ends_with("FromConfig")
                        && let Some(name) = v.get("name").and_then(|n| n.as_str()).filter(|n| !n.is_empty())
                    {
                        out.push(config_map_target(namespace, name));
                        continue;
                    }
                    Self::targets(v, group, namespace, out);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| Self::targets(v, group, namespace, out)),
            _ => {}
        }
    }

    /// `resource_group`: the resource-group kind `(group, kind)` when the object's kind lives in a resource group,
    /// whose object named by `spec.owner.name` the object waits for (reconcile.rs `resource_group_kind`).
    fn apply(&mut self, kind: usize, group: &str, resource_group: Option<(&str, &str)>, object: &DynamicObject) {
        let (Some(ns), Some(name)) = (object.metadata.namespace.clone(), object.metadata.name.clone()) else {
            return;
        };
        self.delete(kind, &ns, &name);
        let mut targets = Vec::new();
        let spec = crate::cache::spec(object);
        if let Some(spec) = &spec {
            Self::targets(spec, group, &ns, &mut targets);
        }
        let owner = spec.as_deref().and_then(|s| s.get("owner"));
        let owner_name = owner.and_then(|o| o.get("name")).and_then(|n| n.as_str());
        if let (Some((rg_group, rg_kind)), Some(rg), None) =
            (resource_group, owner_name, owner.and_then(|o| o.get("armId")))
        {
            targets.push((
                rg_group.to_string(),
                rg_kind.to_ascii_lowercase(),
                ns.clone(),
                rg.to_string(),
            ));
        }
        if targets.is_empty() {
            return;
        }
        for t in &targets {
            self.by_target
                .entry(t.clone())
                .or_default()
                .insert((kind, ns.clone(), name.clone()));
        }
        self.of.insert((kind, ns, name), targets);
    }

    fn delete(&mut self, kind: usize, ns: &str, name: &str) {
        let key = (kind, ns.to_string(), name.to_string());
        for t in self.of.remove(&key).unwrap_or_default() {
            if let Some(set) = self.by_target.get_mut(&t) {
                set.remove(&key);
                if set.is_empty() {
                    self.by_target.remove(&t);
                }
            }
        }
    }

    fn event<K: Borrow<DynamicObject>>(
        &mut self,
        kind: usize,
        group: &str,
        resource_group: Option<(&str, &str)>,
        event: &watcher::Event<K>,
    ) {
        match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => {
                self.apply(kind, group, resource_group, o.borrow())
            }
            watcher::Event::Delete(o) => {
                let o: &DynamicObject = o.borrow();
                if let (Some(ns), Some(name)) = (&o.metadata.namespace, &o.metadata.name) {
                    self.delete(kind, ns, name);
                }
            }
            // A relist starts this kind over (objects deleted meanwhile never come as Delete events).
            watcher::Event::Init => {
                let gone: Vec<_> = self.of.keys().filter(|(k, _, _)| *k == kind).cloned().collect();
                for (k, ns, name) in gone {
                    self.delete(k, &ns, &name);
                }
            }
            watcher::Event::InitDone => {}
        }
    }

    /// The objects of kind `kind` (index) that reference `target`.
    fn referring(&self, target: &Target, kind: usize) -> Vec<(String, String)> {
        self.by_target
            .get(target)
            .map(|set| {
                set.iter()
                    .filter(|(k, _, _)| *k == kind)
                    .map(|(_, ns, name)| (ns.clone(), name.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The kinds (indexes) with objects referencing `target`.
    fn referring_kinds(&self, target: &Target) -> BTreeSet<usize> {
        self.by_target
            .get(target)
            .map(|set| set.iter().map(|(k, _, _)| *k).collect())
            .unwrap_or_default()
    }
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

/// The exported ConfigMaps' changes (label [`EXPORT_LABEL`], metadata only) sent to the kinds with objects reading
/// them (`<field>FromConfig`), like a referenced custom resource's. A ConfigMap without the label (one a user
/// wrote) is read again at the referring object's retry.
///
/// [`EXPORT_LABEL`]: crate::exports::EXPORT_LABEL
async fn wake_on_config_maps(
    api: Api<kube::core::PartialObjectMeta<k8s_openapi::api::core::v1::ConfigMap>>,
    references: Arc<Mutex<References>>,
    outbox: Arc<Vec<futures::channel::mpsc::UnboundedSender<DynamicObject>>>,
) {
    let config = watcher::Config::default().labels(&format!("{}=true", crate::exports::EXPORT_LABEL));
    watcher(api, config)
        .default_backoff()
        .applied_objects()
        .for_each(|meta| {
            if let Ok(meta) = meta
                && let (Some(ns), Some(name)) = (&meta.metadata.namespace, &meta.metadata.name)
            {
                let kinds = references
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .referring_kinds(&config_map_target(ns, name));
                if !kinds.is_empty() {
                    let changed = DynamicObject {
                        types: Some(kube::api::TypeMeta {
                            api_version: "/-".into(),
                            kind: "ConfigMap".into(),
                        }),
                        metadata: meta.metadata.clone(),
                        data: serde_json::Value::Null,
                    };
                    for kind in kinds {
                        if let Some(tx) = outbox.get(kind) {
                            let _ = tx.unbounded_send(changed.clone());
                        }
                    }
                }
            }
            futures::future::ready(())
        })
        .await;
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
/// child that is not settled (e.g. `Ready` reason `WaitingForOwner`) is reconciled as soon as the owner changes
/// (e.g. gets its ARM ID or finishes an operation), not only at the next retry.
pub async fn run(shared: Arc<Shared>, kinds: Vec<&'static KindInfo>, options: RunOptions) {
    let shutdown = options.shutdown.map(FutureExt::shared);
    let mut controllers = Vec::new();
    // Referenced objects' changes, per referring kind: each kind's watch sends its object to the kinds that have
    // objects referencing it, whose controllers wake those that are not settled.
    let references = Arc::new(Mutex::new(References::default()));
    let (senders, receivers): (Vec<_>, Vec<_>) = kinds
        .iter()
        .map(|_| futures::channel::mpsc::unbounded::<DynamicObject>())
        .unzip();
    let senders = Arc::new(senders);
    let config_maps = match &options.namespace {
        Some(ns) => Api::namespaced(shared.client.clone(), ns),
        None => Api::all(shared.client.clone()),
    };
    let config_map_wakes = wake_on_config_maps(config_maps, references.clone(), senders.clone());
    let mut receivers = receivers.into_iter();
    for (position, info) in kinds.into_iter().enumerate() {
        let ctx = Arc::new(KindContext::new(shared.clone(), info));
        let api_for = |resource: &kube::api::ApiResource| -> Api<DynamicObject> {
            match &options.namespace {
                Some(ns) => Api::namespaced_with(shared.client.clone(), ns, resource),
                None => Api::all_with(shared.client.clone(), resource),
            }
        };
        // The dynamic type of the cached objects: one `ApiResource` per kind, shared (see [`Cached`]).
        let dyntype = Arc::new(ctx.resource.clone());
        let cached_api: Api<Cached> = match &options.namespace {
            Some(ns) => Api::namespaced_with(shared.client.clone(), ns, &dyntype),
            None => Api::all_with(shared.client.clone(), &dyntype),
        };
        // The cache keeps the digests of the kind's views (a status written without reading them again carries
        // them over) and the Cluster API contract's "first ready" marks, which never go back (crate::capi).
        let views = crate::views::fields(info);
        let keep: &[&str] = match crate::capi::of(info) {
            Some(_) => &crate::capi::KEPT_STATUS,
            None => &[],
        };
        let writer = reflector::store::Writer::<Cached>::new(dyntype.clone());
        let reader = writer.as_reader();
        let children = Arc::new(Mutex::new(Children::default()));
        let index = children.clone();
        let (refs, outbox, group) = (references.clone(), senders.clone(), info.kube_group);
        let (kind_lower, kind_name) = (info.kind.to_ascii_lowercase(), info.kind);
        let resource_group = (info.owner_kind.is_none() && info.arm.scope == armgen_runtime::Scope::ResourceGroup)
            .then(crate::kinds::resource_group_kind)
            .flatten()
            .map(|k| (k.kube_group, k.kind));
        let trigger = watcher(cached_api, watcher::Config::default())
            .default_backoff()
            .modify(move |o| o.slim_with(keep, &views))
            .reflect(writer)
            .inspect(move |event| {
                if let Ok(event) = event {
                    index.lock().unwrap_or_else(|e| e.into_inner()).event(event);
                    let mut refs = refs.lock().unwrap_or_else(|e| e.into_inner());
                    refs.event(position, group, resource_group, event);
                    // This object changed: tell the kinds that reference it.
                    let changed = match event {
                        watcher::Event::Apply(o) | watcher::Event::InitApply(o) | watcher::Event::Delete(o) => {
                            Some(&o.0)
                        }
                        _ => None,
                    };
                    if let Some(o) = changed
                        && let (Some(ns), Some(name)) = (&o.metadata.namespace, &o.metadata.name)
                    {
                        let target = (group.to_string(), kind_lower.clone(), ns.clone(), name.clone());
                        let kinds = refs.referring_kinds(&target);
                        if !kinds.is_empty() {
                            // What the receiver keys by, whatever the watch event carried.
                            let mut o = DynamicObject::clone(o);
                            o.types = Some(kube::api::TypeMeta {
                                api_version: format!("{group}/-"),
                                kind: kind_name.to_string(),
                            });
                            for kind in kinds {
                                if let Some(tx) = outbox.get(kind) {
                                    let _ = tx.unbounded_send(o.clone());
                                }
                            }
                        }
                    }
                }
            })
            .filter_map(Triggers::default().filter());
        let kind = info.kind;
        let metrics = shared.metrics.clone();
        tracing::info!(
            kind,
            version = info.version,
            api_version = info.arm.api_version,
            "watching"
        );
        let mut controller = Controller::for_stream_with(trigger, reader.clone(), dyntype.clone())
            .with_config(Config::default().concurrency(options.concurrency));
        if let Some(owner) = info
            .owner_kind
            .and_then(|o| find_kind(info.kube_group, info.version, o))
        {
            let owner_resource = api_resource(owner);
            let store = reader.clone();
            let child_resource = dyntype.clone();
            controller = controller.watches_stream_with(
                owner_events(api_for(&owner_resource)),
                move |owner: DynamicObject| {
                    let (name, namespace) = (owner.metadata.name.clone(), owner.metadata.namespace.clone());
                    // An owner being deleted (or gone) wakes every child: they report it instead of staying
                    // Ready until their next resync.
                    let deleting = owner.metadata.deletion_timestamp.is_some();
                    let (Some(name), Some(namespace)) = (name, namespace) else {
                        return Vec::new();
                    };
                    let names = children.lock().unwrap_or_else(|e| e.into_inner()).of(&namespace, &name);
                    names
                        .into_iter()
                        .map(|child| ObjectRef::new_with(&child, child_resource.clone()).within(&namespace))
                        .filter(|r| store.get(r).is_some_and(|child| deleting || unsettled(&child.0)))
                        .collect::<Vec<_>>()
                },
                owner_resource,
            );
        }
        // Woken by what its objects reference (see [`References`]): the unsettled referring objects of this kind.
        if let Some(inbox) = receivers.next() {
            let (refs, store, own) = (references.clone(), reader.clone(), dyntype.clone());
            let changed_resource = ctx.resource.clone();
            controller = controller.watches_stream_with(
                inbox.map(Ok::<_, watcher::Error>),
                move |changed: DynamicObject| {
                    let (Some(kind), Some(ns), Some(name)) = (
                        changed.types.as_ref().map(|t| t.kind.to_ascii_lowercase()),
                        changed.metadata.namespace.clone(),
                        changed.metadata.name.clone(),
                    ) else {
                        return Vec::new();
                    };
                    let group = changed
                        .types
                        .as_ref()
                        .and_then(|t| t.api_version.split_once('/').map(|(g, _)| g.to_string()))
                        .unwrap_or_default();
                    let referring = refs
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .referring(&(group, kind, ns, name), position);
                    referring
                        .into_iter()
                        .map(|(ns, name)| ObjectRef::new_with(&name, own.clone()).within(&ns))
                        .filter(|r| store.get(r).is_some_and(|o| unsettled(&o.0)))
                        .collect::<Vec<_>>()
                },
                changed_resource,
            );
        }
        // Objects in sync are resynced from [`Resyncs`], not requeued.
        let resyncs = Arc::new(Resyncs::default());
        controller = controller.reconcile_on(resyncs.clone().due(reader.clone(), dyntype.clone()));
        controller = match &shutdown {
            Some(signal) => controller.graceful_shutdown_on(signal.clone()),
            None => controller.shutdown_on_signal(),
        };
        let running = controller
            .run(
                move |object: Arc<Cached>, ctx| {
                    let resyncs = resyncs.clone();
                    async move {
                        let (action, resync) = reconcile_any_resync(object.0.clone(), ctx).await?;
                        resyncs.set(&object.0, resync);
                        Ok(if resync.is_some() {
                            kube::runtime::controller::Action::await_change()
                        } else {
                            action
                        })
                    }
                },
                |object: Arc<Cached>, error: &crate::context::Error, ctx| error_policy(object.0.clone(), error, ctx),
                ctx,
            )
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
        controllers.push(Box::pin(running));
    }
    // The ConfigMap watch runs as long as the controllers (it never ends by itself).
    let config_map_wakes = config_map_wakes.then(|()| futures::future::pending::<()>());
    futures::future::select(
        Box::pin(futures::future::join_all(controllers)),
        Box::pin(config_map_wakes),
    )
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn child(ns: &str, name: &str, owner: &str) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "containerservice.armgen.dev/v2alpha1",
            "kind": "AgentPool",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"owner": {"name": owner}},
        }))
        .expect("object")
    }

    fn referring(ns: &str, name: &str, spec: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "authorization.armgen.dev/v1alpha1",
            "kind": "RoleAssignment",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        }))
        .expect("object")
    }

    #[test]
    fn references_are_indexed_from_the_spec_and_follow_the_watch() {
        let mut refs = References::default();
        let target =
            |g: &str, k: &str, ns: &str, n: &str| (g.to_string(), k.to_string(), ns.to_string(), n.to_string());
        // An extension's owner by custom resource, and a nested resource reference in the default group.
        refs.event(
            0,
            "authorization.armgen.dev",
            None,
            &watcher::Event::Apply(referring(
                "a",
                "r1",
                json!({
                    "owner": {"group": "containerservice.armgen.dev", "kind": "ManagedCluster", "name": "demo"},
                    "nested": [{"ref": {"kind": "Other", "name": "o"}}],
                    "byId": {"kind": "Ignored", "name": "x", "armId": "/subscriptions/s"},
                }),
            )),
        );
        let cluster = target("containerservice.armgen.dev", "managedcluster", "a", "demo");
        assert_eq!(refs.referring(&cluster, 0), [("a".to_string(), "r1".to_string())]);
        assert_eq!(refs.referring_kinds(&cluster), BTreeSet::from([0]));
        assert_eq!(
            refs.referring(&target("authorization.armgen.dev", "other", "a", "o"), 0)
                .len(),
            1
        );
        assert!(
            refs.by_target.keys().all(|t| t.1 != "ignored"),
            "a reference by armId waits for nothing"
        );
        // A spec change moves it; a deletion and a relist forget it.
        refs.event(
            0,
            "authorization.armgen.dev",
            None,
            &watcher::Event::Apply(referring(
                "a",
                "r1",
                json!({
                    "owner": {"group": "containerservice.armgen.dev", "kind": "ManagedCluster", "name": "prod"},
                }),
            )),
        );
        assert!(refs.referring(&cluster, 0).is_empty());
        let prod = target("containerservice.armgen.dev", "managedcluster", "a", "prod");
        assert_eq!(refs.referring(&prod, 0).len(), 1);
        refs.event(
            0,
            "authorization.armgen.dev",
            None,
            &watcher::Event::Delete(referring("a", "r1", json!({}))),
        );
        assert!(refs.by_target.is_empty() && refs.of.is_empty());
        refs.event(
            1,
            "g",
            None,
            &watcher::Event::Apply(referring("a", "r2", json!({"x": {"kind": "K", "name": "n"}}))),
        );
        refs.event(1, "g", None, &watcher::Event::<DynamicObject>::Init);
        assert!(refs.by_target.is_empty() && refs.of.is_empty());

        // A ConfigMap a `<field>FromConfig` reads, and the resource group object a resource-group-scoped object's
        // `spec.owner.name` names (not when the owner is an ARM ID).
        refs.event(
            2,
            "managedidentity.armgen.dev",
            Some(("resources.armgen.dev", "ResourceGroup")),
            &watcher::Event::Apply(referring(
                "a",
                "fic",
                json!({"owner": {"name": "rg1"}, "issuerFromConfig": {"name": "cluster-oidc", "key": "issuer"}}),
            )),
        );
        assert_eq!(refs.referring(&config_map_target("a", "cluster-oidc"), 2).len(), 1);
        assert_eq!(
            refs.referring(&target("resources.armgen.dev", "resourcegroup", "a", "rg1"), 2)
                .len(),
            1
        );
        refs.event(
            2,
            "managedidentity.armgen.dev",
            Some(("resources.armgen.dev", "ResourceGroup")),
            &watcher::Event::Apply(referring(
                "a",
                "byid",
                json!({"owner": {"name": "rg2", "armId": "/subscriptions/s/resourceGroups/rg2"}}),
            )),
        );
        assert!(
            refs.referring(&target("resources.armgen.dev", "resourcegroup", "a", "rg2"), 2)
                .is_empty()
        );
    }

    #[test]
    fn triggers_pass_what_is_new_or_changed_and_forget_what_is_deleted() {
        let cached = |name: &str, generation: i64| {
            let mut o = child("a", name, "c1");
            o.metadata.generation = Some(generation);
            o.metadata.uid = Some(format!("uid-{name}"));
            Cached(Arc::new(o))
        };
        let mut t = Triggers::default();
        let t0 = std::time::Instant::now();
        let apply = |o: Cached| watcher::Event::Apply(o);
        assert!(t.admit(&watcher::Event::InitApply(cached("p1", 1)), t0), "first seen");
        assert!(!t.admit(&apply(cached("p1", 1)), t0), "unchanged: a status write");
        assert!(t.admit(&apply(cached("p2", 1)), t0), "another object");
        assert!(t.admit(&apply(cached("p1", 2)), t0), "a spec change");
        assert!(!t.admit(&watcher::Event::Init, t0));
        assert!(!t.admit(&watcher::Event::Delete(cached("p1", 2)), t0));
        assert_eq!(t.seen.len(), 1, "a deleted object's entry goes");
        assert!(t.admit(&apply(cached("p1", 2)), t0), "seen again after its deletion");
        let later = t0 + Triggers::TTL;
        assert!(
            t.admit(&apply(cached("p2", 1)), later),
            "last seen a TTL ago: passes again"
        );
        assert!(!t.admit(&apply(cached("p2", 1)), later));
        assert_eq!(t.seen.len(), 1, "entries older than the TTL are dropped");
    }

    #[test]
    fn resyncs_are_due_at_their_deadline_once_and_forgotten_with_their_object() {
        let cached = |name: &str| Arc::new(Cached(Arc::new(child("a", name, "c1"))));
        let (p1, p2, p3) = (cached("p1"), cached("p2"), cached("p3"));
        let r = Resyncs::default();
        let t0 = std::time::Instant::now();
        r.set(&p1.0, Some(std::time::Duration::from_secs(10)));
        r.set(&p2.0, Some(std::time::Duration::from_secs(20)));
        r.set(&p3.0, Some(std::time::Duration::from_secs(10)));
        r.set(&p3.0, None);
        let all = [p1.clone(), p2.clone(), p3.clone()];
        let names =
            |due: Vec<Arc<Cached>>| -> Vec<String> { due.iter().filter_map(|o| o.0.metadata.name.clone()).collect() };
        assert!(r.take_due(&all, t0, false).is_empty(), "nothing due yet");
        let at = |s| t0 + std::time::Duration::from_secs(s);
        assert_eq!(
            names(r.take_due(&all, at(11), false)),
            ["p1"],
            "p3 is not in sync any more"
        );
        assert!(
            r.take_due(&all, at(12), false).is_empty(),
            "due once: its reconcile sets the next deadline"
        );
        // p2 is deleted: its deadline goes when the objects are next pruned.
        r.set(&p1.0, Some(std::time::Duration::from_secs(1)));
        assert_eq!(names(r.take_due(std::slice::from_ref(&p1), at(30), true)), ["p1"]);
        assert!(r.lock().is_empty(), "p2's deadline went with it");
    }

    #[test]
    fn the_index_follows_the_child_watch() {
        let mut index = Children::default();
        index.event(&watcher::Event::Apply(child("a", "p1", "c1")));
        index.event(&watcher::Event::Apply(child("a", "p2", "c1")));
        index.event(&watcher::Event::Apply(child("b", "p1", "c1")));
        assert_eq!(index.of("a", "c1"), ["p1", "p2"]);
        assert_eq!(index.of("b", "c1"), ["p1"]);
        // A child moved to another owner, and one deleted.
        index.event(&watcher::Event::Apply(child("a", "p2", "c2")));
        assert_eq!(index.of("a", "c1"), ["p1"]);
        assert_eq!(index.of("a", "c2"), ["p2"]);
        index.event(&watcher::Event::Delete(child("a", "p1", "c1")));
        assert!(index.of("a", "c1").is_empty());
        assert!(!index.by_owner.contains_key(&index.key("a", "c1")));
        // A relist starts over.
        index.event(&watcher::Event::<DynamicObject>::Init);
        index.event(&watcher::Event::InitApply(child("a", "p3", "c1")));
        index.event(&watcher::Event::<DynamicObject>::InitDone);
        assert_eq!(index.of("a", "c1"), ["p3"]);
        assert!(index.of("a", "c2").is_empty());
    }
}
