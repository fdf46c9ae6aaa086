//! What the watch cache keeps of an object: everything the loop reads, nothing else.
//!
//! The cache holds every object of every served kind, so its size is the reconciler's memory at scale
//! (BENCHMARKS.md, "Reconciler at scale"): an object is a `serde_json` tree, several times the size of its JSON,
//! and a ManagedCluster's status — the ARM GET's read-only view — is most of it. [`slim`] drops, before an object
//! enters the cache:
//!
//! - `metadata.managedFields` (on a real API server often as large as the spec and status together) and
//!   `kubectl apply`'s copy of the object in [`LAST_APPLIED`];
//! - the status fields the loop never reads back ([`KEPT_STATUS`] are the ones it reads: `conditions`, `id`,
//!   `operatorStatus`, `provisioningState`, and what the caller keeps, [`slim_with`]), replaced by a [`digest`] of
//!   the whole status;
//! - the kind's views ([`crate::views`]: an upgrade profile, a pool's machines — most of a status the loop keeps),
//!   replaced by a [`digest`] of each ([`view_digests`]). A status written without reading a view again needs its
//!   value: the status write reads it from the API server then ([`crate::reconcile`]), which happens only when
//!   the status changed, never for an object in sync (the digests say so without the values);
//! - the object's `apiVersion` and `kind` (the controller knows them; two strings per object);
//! - `spec` and the kept `status` as trees: the object's data becomes one compact JSON text (a JSON string where a
//!   custom resource has an object) holding the spec, the kept status and the digests, shrunk to its length. A
//!   `preserve_order` tree is a map with a `String` per key and per value, several times its text. [`whole`] parses
//!   it back when the object is reconciled, [`spec`] and [`status`] for the watch-side indexes (owner → children,
//!   references, a child's conditions).
//!
//! And the cached objects are [`Cached`]: their dynamic type is an `Arc<ApiResource>`, so the `ObjectRef`s
//! kube-runtime keeps per object (store, scheduler) hold a pointer, not five strings.
//!
//! Measured at 10,000 ManagedClusters + 30,000 AgentPools: BENCHMARKS.md, "Reconciler at scale, 10,000
//! ManagedClusters + 30,000 AgentPools".
//!
//! Owners and referenced objects are read from the API server, never from this cache, so their statuses are
//! whole. The status write ([`crate::reconcile`]) compares the digest of the status it would write with the cached
//! digest (so an object in sync still costs no write), and when they differ replaces the status as a whole
//! (RFC 6902 `add /status`), since it cannot diff against fields it no longer holds. Safe because the loop writes
//! custom resources only by patch (finalizers, status), never by replacing the cached object, so nothing dropped
//! here is written back.
//!
//! May depend on nothing else in the crate.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use kube::Resource;
use kube::api::{ApiResource, DynamicObject, ObjectMeta};
use serde_json::Value;

/// An object of the watch cache: a [`DynamicObject`] whose dynamic type (`Resource::DynamicType`) is an
/// `Arc<ApiResource>` rather than an `ApiResource`. kube-runtime keeps an `ObjectRef` with a clone of the dynamic
/// type per object in the reflector store and two per object in the controller's scheduler (its map and its delay
/// queue, one entry per object for the resync requeue): with a plain `ApiResource` each clone is five `String`s
/// (group, version, API version, kind, plural — ≈ 300 bytes with the allocator's overhead), with this one a
/// pointer. The object itself is behind an `Arc` so that the reconcile gets it as the `Arc<DynamicObject>` it
/// takes, without a copy.
#[derive(Clone, Debug)]
pub struct Cached(pub Arc<DynamicObject>);

impl Resource for Cached {
    type DynamicType = Arc<ApiResource>;
    type Scope = kube::core::DynamicResourceScope;

    fn kind(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn group(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn api_version(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &Arc<ApiResource>) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.0.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut Arc::make_mut(&mut self.0).metadata
    }
}

impl<'de> serde::Deserialize<'de> for Cached {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DynamicObject::deserialize(d).map(|o| Cached(Arc::new(o)))
    }
}

impl std::borrow::Borrow<DynamicObject> for Cached {
    fn borrow(&self) -> &DynamicObject {
        &self.0
    }
}

impl Cached {
    /// [`slim_with`] the object (the watch's `.modify`: the object was just decoded, so it is not shared and is
    /// not copied).
    pub fn slim_with(&mut self, keep: &[&str], views: &[&str]) {
        slim_with(Arc::make_mut(&mut self.0), keep, views);
    }
}

/// The annotation `kubectl apply` keeps a copy of the whole applied object in.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The status fields the loop reads from a cached object (its own; owners are read from the API server): the
/// conditions (settledness, the Ready transition time), the ARM ID, the persisted operation and retry state, and
/// the provisioning state.
pub const KEPT_STATUS: &[&str] = &["conditions", "id", "operatorStatus", "provisioningState"];

/// Where [`whole`] puts the cached [`digest`] of the whole status: a key of the object beside `spec` and
/// `status`, which no custom resource has (it is not a valid field name of a generated schema) and which is never
/// written back.
pub const STATUS_DIGEST: &str = "armgen.dev/statusDigest";

/// Where [`whole`] puts the cached [`digest`]s of the kind's views that the status held: an array in the order of
/// the views given to [`slim_with`], `null` for a view the status did not hold; absent when it held none. Like
/// [`STATUS_DIGEST`].
pub const VIEW_DIGESTS: &str = "armgen.dev/viewDigests";

/// What a slimmed object keeps of its `spec` and `status`, as one compact JSON text: the object's `data` (its
/// fields other than `apiVersion`, `kind` and `metadata`) becomes this text, a JSON string. A custom resource's
/// data is always a JSON object, so a string there is always [`slim_with`]'s. One `String` per object, rather than
/// a map with a `String` per key (≈ 1 KiB per object more, measured with heaptrack: BENCHMARKS.md).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct Slim {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    digest: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    views: Option<Vec<Option<u64>>>,
}

/// Drops what the reconciler never reads from an object before it enters the watch cache (see the module docs).
/// A status made only of [`KEPT_STATUS`] fields stays whole and gets no digest.
pub fn slim(object: &mut DynamicObject) {
    slim_with(object, &[], &[]);
}

/// [`slim`], keeping also the status fields `keep` (Cluster API's "first ready" marks, [`crate::capi`]), and
/// keeping of the status fields `views` (the kind's views, [`crate::views`]) only their digests ([`view_digests`]).
/// An object already slimmed is left as it is.
pub fn slim_with(object: &mut DynamicObject, keep: &[&str], views: &[&str]) {
    let kept = |k: &str| KEPT_STATUS.contains(&k) || (keep.contains(&k) && !views.contains(&k));
    object.types = None;
    object.metadata.managed_fields = None;
    if let Some(annotations) = object.metadata.annotations.as_mut() {
        annotations.remove(LAST_APPLIED);
        if annotations.is_empty() {
            object.metadata.annotations = None;
        }
    }
    let Some(data) = object.data.as_object_mut() else {
        return;
    };
    let mut slim = Slim {
        spec: data.remove("spec"),
        ..Slim::default()
    };
    if let Some(Value::Object(mut status)) = data.remove("status") {
        if !status.keys().all(|k| kept(k)) {
            slim.digest = Some(digest_object(&status));
            let held: Vec<Option<u64>> = views.iter().map(|v| status.get(*v).map(digest)).collect();
            if held.iter().any(Option::is_some) {
                slim.views = Some(held);
            }
            status.retain(|k, _| kept(k));
        }
        slim.status = Some(Value::Object(status));
    }
    // The rest of the data (no custom resource has more than spec and status) is not read by the loop.
    match serde_json::to_string(&slim) {
        Ok(mut text) => {
            text.shrink_to_fit();
            object.data = Value::String(text);
        }
        // Not reachable for values that came from JSON; the object then keeps spec and status as trees.
        Err(_) => {
            if let Some(spec) = slim.spec {
                data.insert("spec".into(), spec);
            }
            if let Some(status) = slim.status {
                data.insert("status".into(), status);
            }
        }
    }
}

/// The parts [`slim_with`] kept, when it slimmed `object`.
fn slimmed(object: &DynamicObject) -> Option<Slim> {
    let text = object.data.as_str()?;
    serde_json::from_str(text).ok()
}

/// The digests of the views (`views`, in the order [`slim_with`] was given them) a cached object's status held
/// when [`slim_with`] dropped them (also read from [`whole`]'s copy); empty for an object it did not slim.
pub fn view_digests<'a>(object: &DynamicObject, views: &[&'a str]) -> Vec<(&'a str, u64)> {
    let held: Vec<Option<u64>> = match slimmed(object) {
        Some(slim) => slim.views.unwrap_or_default(),
        None => match object.data.get(VIEW_DIGESTS) {
            Some(Value::Array(held)) if object.data.get(STATUS_DIGEST).is_some() => {
                held.iter().map(Value::as_u64).collect()
            }
            _ => Vec::new(),
        },
    };
    views
        .iter()
        .zip(held)
        .filter_map(|(view, d)| d.map(|d| (*view, d)))
        .collect()
}

/// `data[key]` (`spec` or `status`), of a slimmed object or of any other.
fn part<'a>(object: &'a DynamicObject, key: &str) -> Option<Cow<'a, Value>> {
    if let Some(slim) = slimmed(object) {
        let part = if key == "spec" { slim.spec } else { slim.status };
        return part.map(Cow::Owned);
    }
    object.data.get(key).map(Cow::Borrowed)
}

/// The spec of a cached object (parsed from [`slim_with`]'s text), or of any other object. `None` when it has
/// none.
pub fn spec(object: &DynamicObject) -> Option<Cow<'_, Value>> {
    part(object, "spec")
}

/// The (kept) status of a cached object (parsed from [`slim_with`]'s text), or of any other object.
pub fn status(object: &DynamicObject) -> Option<Cow<'_, Value>> {
    part(object, "status")
}

/// A cached object as the API server sent it, but for what [`slim_with`] dropped for good (managed fields, the
/// last-applied copy, `apiVersion` and `kind`, the status fields outside [`KEPT_STATUS`], the views): `spec` and
/// `status` are trees again, with the status's digest at [`STATUS_DIGEST`] and the views' at [`VIEW_DIGESTS`]. An
/// object [`slim_with`] did not slim is returned as it is.
pub fn whole(object: &DynamicObject) -> Cow<'_, DynamicObject> {
    let Some(slim) = slimmed(object) else {
        return Cow::Borrowed(object);
    };
    let mut data = serde_json::Map::new();
    if let Some(spec) = slim.spec {
        data.insert("spec".into(), spec);
    }
    if let Some(status) = slim.status {
        data.insert("status".into(), status);
    }
    if let Some(digest) = slim.digest {
        data.insert(STATUS_DIGEST.into(), Value::from(digest));
        if let Some(views) = slim.views {
            data.insert(
                VIEW_DIGESTS.into(),
                Value::Array(views.into_iter().map(|d| d.map_or(Value::Null, Value::from)).collect()),
            );
        }
    }
    Cow::Owned(DynamicObject {
        types: None,
        metadata: object.metadata.clone(),
        data: Value::Object(data),
    })
}

/// The cached digest of `object`'s whole status, when [`slim_with`] dropped part of it (read from the slimmed
/// object or from [`whole`]'s copy).
pub fn cached_digest(object: &DynamicObject) -> Option<u64> {
    match slimmed(object) {
        Some(slim) => slim.digest,
        None => object.data.get(STATUS_DIGEST).and_then(Value::as_u64),
    }
}

/// A digest of a JSON value that does not depend on the order of object keys (the API server need not keep
/// them in the order they were written): equal values (`serde_json`'s equality) have equal digests. Computed and
/// compared within one process only (the cache is not persisted), with std's `DefaultHasher`. An object's digest
/// is [`digest_entries`] of its members' digests, so the digest of a status can be computed from the digests of
/// fields the cache no longer holds.
pub fn digest(value: &Value) -> u64 {
    match value {
        Value::Object(map) => digest_object(map),
        other => {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            feed(other, &mut hasher);
            hasher.finish()
        }
    }
}

/// [`digest`] of `Value::Object(map)`, without building the value.
pub fn digest_object(map: &serde_json::Map<String, Value>) -> u64 {
    digest_entries(map.iter().map(|(k, v)| (k.as_str(), digest(v))))
}

/// The [`digest`] of an object with the members `entries`: (key, [`digest`] of the value), in any order, keys
/// distinct.
pub fn digest_entries<'a>(entries: impl IntoIterator<Item = (&'a str, u64)>) -> u64 {
    let mut entries: Vec<(&str, u64)> = entries.into_iter().collect();
    entries.sort_unstable_by_key(|(k, _)| *k);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (5u8, entries.len()).hash(&mut h);
    for (k, d) in entries {
        (k, d).hash(&mut h);
    }
    h.finish()
}

fn feed(value: &Value, h: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        // Equal numbers (serde_json's equality: the same integer, or the same float) hash the same.
        Value::Number(n) => (2u8, n.as_u64(), n.as_i64(), n.as_f64().map(f64::to_bits)).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for item in items {
                feed(item, h);
            }
        }
        Value::Object(map) => (5u8, digest_object(map)).hash(h),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(status: Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "containerservice.armgen.dev/v2alpha1",
            "kind": "ManagedCluster",
            "metadata": {
                "name": "c", "namespace": "a",
                "annotations": {LAST_APPLIED: "{\"spec\":{}}", "armgen.dev/reconcile-policy": "manage"},
                "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsType": "FieldsV1"}],
            },
            "spec": {"location": "westeurope", "dnsPrefix": "c"},
            "status": status,
        }))
        .expect("object")
    }

    #[test]
    fn managed_fields_and_the_last_applied_copy_go() {
        let mut o = object(json!({"id": "/subscriptions/s"}));
        let before = o.data.clone();
        slim(&mut o);
        assert!(o.metadata.managed_fields.is_none());
        let annotations = o.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(annotations.keys().collect::<Vec<_>>(), ["armgen.dev/reconcile-policy"]);
        assert_eq!(
            whole(&o).data,
            before,
            "a status of kept fields only stays whole, with no digest"
        );
        assert_eq!(cached_digest(&o), None);
        // Only the last-applied copy: the annotations go away altogether.
        let mut only: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "X",
            "metadata": {"name": "p", "annotations": {LAST_APPLIED: "{}"}},
        }))
        .expect("object");
        slim(&mut only);
        assert!(only.metadata.annotations.is_none());
    }

    #[test]
    fn a_kinds_views_are_digested_and_what_the_caller_keeps_is_kept() {
        let status = json!({
            "provisioningState": "Succeeded",
            "upgradeProfile": {"properties": {"controlPlaneProfile": {"kubernetesVersion": "1.31.1"}}},
            "fqdn": "c-1234.hcp.westeurope.azmk8s.io",
            "initialization": {"provisioned": true},
        });
        let mut o = object(status.clone());
        slim_with(&mut o, &["initialization"], &["upgradeProfile", "machines"]);
        let kept = super::status(&o).expect("status");
        let kept = kept.as_object().expect("status");
        assert_eq!(kept.get("initialization"), status.get("initialization"), "kept");
        assert!(kept.get("upgradeProfile").is_none(), "a view is not kept");
        assert!(kept.get("fqdn").is_none());
        assert!(o.types.is_none(), "apiVersion and kind are the controller's");
        assert_eq!(
            cached_digest(&o),
            Some(digest(&status)),
            "the digest is of the whole status"
        );
        assert_eq!(
            view_digests(&o, &["upgradeProfile", "machines"]),
            [("upgradeProfile", digest(&status["upgradeProfile"]))],
            "the digest of each view the status held"
        );
        // The whole status's digest from what the cache holds and the views' digests.
        let mut entries: Vec<(&str, u64)> = status
            .as_object()
            .expect("object")
            .iter()
            .filter(|(k, _)| k.as_str() != "upgradeProfile")
            .map(|(k, v)| (k.as_str(), digest(v)))
            .collect();
        entries.extend(view_digests(&o, &["upgradeProfile", "machines"]));
        assert_eq!(digest_entries(entries), digest(&status));
        // No view held: no digests.
        let mut plain = object(json!({"id": "x", "fqdn": "f"}));
        slim_with(&mut plain, &[], &["upgradeProfile"]);
        assert!(plain.data.get(VIEW_DIGESTS).is_none());
        assert!(view_digests(&plain, &["upgradeProfile"]).is_empty());
        // A tenant's array at the key is not taken for digests.
        let mut planted = object(json!({"id": "x"}));
        planted.data[VIEW_DIGESTS] = json!([42]);
        slim_with(&mut planted, &[], &["upgradeProfile"]);
        assert!(view_digests(&planted, &["upgradeProfile"]).is_empty());
    }

    #[test]
    fn texts_are_shrunk_to_their_length() {
        let mut o = object(json!({"id": "x".repeat(700), "fqdn": "f"}));
        slim(&mut o);
        match &o.data {
            Value::String(text) => assert_eq!(text.capacity(), text.len()),
            other => panic!("not slimmed: {other:?}"),
        }
    }

    #[test]
    fn the_status_keeps_what_the_loop_reads_and_a_digest_of_the_rest() {
        let status = json!({
            "id": "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c",
            "provisioningState": "Succeeded",
            "conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}],
            "operatorStatus": {"failedAttempts": 2},
            "fqdn": "c-1234.hcp.westeurope.azmk8s.io",
            "powerState": {"code": "Running"},
            "agentPoolProfiles": [{"name": "system", "count": 3}],
        });
        let mut o = object(status.clone());
        slim(&mut o);
        assert!(o.data.get("status").is_none(), "the status is kept as text");
        let kept = super::status(&o).expect("status");
        let kept = kept.as_object().expect("status");
        let mut keys: Vec<&str> = kept.keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut want = KEPT_STATUS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want);
        for k in KEPT_STATUS {
            assert_eq!(kept[*k], status[*k], "{k} is kept as it was");
        }
        assert!(o.data.get("spec").is_none(), "the spec is kept as text");
        let text = o.data.as_str().expect("one text");
        assert!(!text.contains(' '), "compact: {text}");
        assert_eq!(
            serde_json::from_str::<Value>(text).ok().map(|v| v["spec"].clone()),
            Some(json!({"location": "westeurope", "dnsPrefix": "c"}))
        );
        assert_eq!(
            spec(&o).as_deref(),
            Some(&json!({"location": "westeurope", "dnsPrefix": "c"}))
        );
        let back = whole(&o);
        assert_eq!(back.data["spec"], json!({"location": "westeurope", "dnsPrefix": "c"}));
        assert_eq!(Some(&back.data["status"]), super::status(&o).as_deref());
        assert_eq!(
            cached_digest(&back),
            cached_digest(&o),
            "the digest stays for the status write"
        );
        assert_eq!(cached_digest(&o), Some(digest(&status)));
        // Slimming again (a relist of the same object) changes nothing.
        let once = o.data.clone();
        let mut again = object(status);
        slim(&mut again);
        assert_eq!(again.data, once);
    }

    #[test]
    fn an_object_slim_did_not_compact_is_read_as_it_is() {
        let o = object(json!({"id": "x"}));
        assert!(matches!(whole(&o), Cow::Borrowed(_)));
        assert_eq!(spec(&o).as_deref(), Some(&o.data["spec"]));
        let mut none: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "X", "metadata": {"name": "p"},
        }))
        .expect("object");
        assert_eq!(spec(&none), None);
        slim(&mut none);
        assert_eq!(spec(&none), None, "no spec, no text");
        assert_eq!(none.data.as_str(), Some("{}"), "nothing kept");
        // Keys a tenant put beside spec and status are not taken for what slim keeps.
        let mut planted = object(json!({"id": "x", "fqdn": "f"}));
        planted.data["digest"] = json!(42);
        planted.data["views"] = json!([42]);
        planted.data["spec2"] = json!({"owner": {"name": "other"}});
        slim_with(&mut planted, &[], &["upgradeProfile"]);
        assert_eq!(
            spec(&planted).as_deref(),
            Some(&json!({"location": "westeurope", "dnsPrefix": "c"}))
        );
        assert_eq!(cached_digest(&planted), Some(digest(&json!({"id": "x", "fqdn": "f"}))));
        assert!(view_digests(&planted, &["upgradeProfile"]).is_empty());
        let back = whole(&planted);
        assert!(back.data.get("spec2").is_none() && back.data.get("digest").is_none());
    }

    #[test]
    fn a_stale_digest_in_the_input_is_not_trusted() {
        let mut o = object(json!({"id": "x"}));
        o.data[STATUS_DIGEST] = json!(42);
        slim(&mut o);
        assert_eq!(cached_digest(&o), None, "a digest only ever comes from slim itself");
    }

    #[test]
    fn the_digest_ignores_key_order_and_sees_every_change() {
        let a: Value = serde_json::from_str(r#"{"a": 1, "b": {"c": [1, "x"], "d": null}}"#).expect("json");
        let b: Value = serde_json::from_str(r#"{"b": {"d": null, "c": [1, "x"]}, "a": 1}"#).expect("json");
        assert_eq!(a, b);
        assert_eq!(digest(&a), digest(&b));
        for changed in [
            r#"{"a": 2, "b": {"c": [1, "x"], "d": null}}"#,
            r#"{"a": 1, "b": {"c": ["x", 1], "d": null}}"#,
            r#"{"a": 1, "b": {"c": [1, "x"]}}"#,
            r#"{"a": 1, "b": {"c": [1, "x"], "d": false}}"#,
            r#"{"a": "1", "b": {"c": [1, "x"], "d": null}}"#,
            r#"{"a": 1.0, "b": {"c": [1, "x"], "d": null}}"#,
            r#"{"a": -1, "b": {"c": [1, "x"], "d": null}}"#,
            r#"{"a": 1, "b": {"c": [1, "x"], "e": null}}"#,
        ] {
            let c: Value = serde_json::from_str(changed).expect("json");
            assert_ne!(digest(&a), digest(&c), "{changed}");
        }
    }
}
