//! Kubernetes Events (`events.k8s.io/v1`) about the objects the reconciler serves, repeats folded into a series.
//!
//! An event is published as kube-runtime's `events::Recorder` publishes it — the same object, name, fields and
//! [`Event`]/[`Reporter`] types — and a repeat of an event (same type, reason, action, reporter, regarded and
//! related object) within [`SERIES_WINDOW`] of the last one is a merge patch of the first one's `series` (count,
//! last observed time) rather than a new Event object.
//!
//! Why not kube-runtime's `Recorder` (kube 5): it keeps every event it published, the whole `Event` object, for six
//! minutes, and scans that whole cache on every publish. Creating 10,000 ManagedClusters and 30,000 AgentPools
//! publishes a few events per object within minutes, so its cache grew to every one of them (11.8 MB of hash table
//! alone for 4,000 objects under heaptrack, BENCHMARKS.md "Reconciler at scale") and each publish cost a pass over
//! it (quadratic in the events of six minutes). This recorder keeps, per series, its key's 64-bit hash, the event's
//! name, its count and when it was last seen — at most [`MAX_SERIES`] of them, evicting the least recently seen
//! first — like client-go's event correlator, whose LRU cache holds 4,096 entries
//! (`k8s.io/client-go/tools/record/events_cache.go`, `maxLruCacheEntries`). A repeat of an evicted series starts a
//! new Event object, which is what the API server's own event TTL (one hour by default) does to old series anyway.
//!
//! A series whose Event object is gone (the API server's TTL removed it: the patch answers 404) starts again with a
//! new object.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kube::api::{Api, Patch, PatchParams, PostParams};
pub use kube::runtime::events::{Event, EventType, Reporter};

/// How long after an event its repeat still joins its series (kube-runtime's and client-go's: six minutes).
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);

/// The most series remembered at once (client-go's event correlator: 4,096).
pub const MAX_SERIES: usize = 4096;

/// Publishes events; clones share the series they remember.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    reporter: Reporter,
    series: Arc<Mutex<Series>>,
}

/// What is remembered of a series.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    namespace: String,
    name: String,
    count: i32,
    last: Instant,
}

/// The series remembered: key hash → what was seen, at most `capacity`, the least recently seen evicted first.
#[derive(Debug)]
struct Series {
    seen: HashMap<u64, Seen>,
    capacity: usize,
}

impl Series {
    fn new(capacity: usize) -> Self {
        Series {
            seen: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// The series `key` was last seen within the window before `now`: its object and count so far.
    fn repeat_of(&self, key: u64, now: Instant) -> Option<(String, String, i32)> {
        self.seen
            .get(&key)
            .filter(|s| now.saturating_duration_since(s.last) < SERIES_WINDOW)
            .map(|s| (s.namespace.clone(), s.name.clone(), s.count))
    }

    /// Remembers that series `key` is at `count` on the object `namespace/name`, seen `now`.
    fn record(&mut self, key: u64, namespace: &str, name: &str, count: i32, now: Instant) {
        if !self.seen.contains_key(&key) && self.seen.len() >= self.capacity {
            self.evict(now);
        }
        self.seen.insert(
            key,
            Seen {
                namespace: namespace.to_string(),
                name: name.to_string(),
                count,
                last: now,
            },
        );
    }

    /// Makes room: drops the series out of the window and, when that is not enough, the least recently seen
    /// eighth (so that a full cache costs one pass per eighth of its capacity, not one per event).
    fn evict(&mut self, now: Instant) {
        self.seen
            .retain(|_, s| now.saturating_duration_since(s.last) < SERIES_WINDOW);
        if self.seen.len() < self.capacity {
            return;
        }
        let mut times: Vec<Instant> = self.seen.values().map(|s| s.last).collect();
        let drop = (self.capacity / 8).max(1).min(times.len());
        let (_, cutoff, _) = times.select_nth_unstable(drop - 1);
        let cutoff = *cutoff;
        let mut left = drop;
        self.seen.retain(|_, s| {
            if left > 0 && s.last <= cutoff {
                left -= 1;
                false
            } else {
                true
            }
        });
    }
}

impl Recorder {
    /// A recorder reporting as `reporter`.
    pub fn new(client: Client, reporter: Reporter) -> Self {
        Recorder {
            client,
            reporter,
            series: Arc::new(Mutex::new(Series::new(MAX_SERIES))),
        }
    }

    /// How many series it remembers (for tests and the scale benchmark).
    pub fn remembered(&self) -> usize {
        self.lock().seen.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Series> {
        self.series.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What makes two events one series (kube-runtime's event key: type, action, reason, reporter, the regarded
    /// and the related object).
    fn key(&self, ev: &Event, regarding: &ObjectReference) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        ev.type_.hash(&mut h);
        ev.action.hash(&mut h);
        ev.reason.hash(&mut h);
        self.reporter.controller.hash(&mut h);
        self.reporter.instance.hash(&mut h);
        for reference in std::iter::once(Some(regarding)).chain(std::iter::once(ev.secondary.as_ref())) {
            match reference {
                Some(r) => {
                    (&r.api_version, &r.kind, &r.name, &r.namespace, &r.uid).hash(&mut h);
                }
                None => 0u8.hash(&mut h),
            }
        }
        h.finish()
    }

    /// The Event object of a new series (kube-runtime's `Recorder` builds the same).
    fn new_event(&self, ev: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        K8sEvent {
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            note: ev.note.clone(),
            metadata: ObjectMeta {
                namespace: regarding.namespace.clone(),
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_ref().unwrap_or(&self.reporter.controller),
                    now.as_nanosecond()
                )),
                ..Default::default()
            },
            reporting_controller: Some(self.reporter.controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| self.reporter.controller.clone()),
            ),
            type_: Some(
                match ev.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .into(),
            ),
            related: ev.secondary.clone(),
            ..Default::default()
        }
    }

    /// Publishes `ev` about `regarding`: a new Event object, or the next count of its series. A cluster-scoped
    /// object's events go to the `default` namespace (as kube-runtime's).
    pub async fn publish(&self, ev: &Event, regarding: &ObjectReference) -> Result<(), kube::Error> {
        let key = self.key(ev, regarding);
        let repeat = self.lock().repeat_of(key, Instant::now());
        let now = Timestamp::now();
        if let Some((namespace, name, count)) = repeat {
            let api: Api<K8sEvent> = Api::namespaced(self.client.clone(), &namespace);
            let series = serde_json::json!({"series": {"count": count + 1, "lastObservedTime": MicroTime(now)}});
            match api.patch(&name, &PatchParams::default(), &Patch::Merge(&series)).await {
                Ok(_) => {
                    self.lock().record(key, &namespace, &name, count + 1, Instant::now());
                    return Ok(());
                }
                // Gone (the API server's event TTL): the series starts again.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        let event = self.new_event(ev, regarding, now);
        let namespace = regarding.namespace.clone().unwrap_or_else(|| "default".into());
        let api: Api<K8sEvent> = Api::namespaced(self.client.clone(), &namespace);
        let created = api.create(&PostParams::default(), &event).await?;
        let name = created.metadata.name.or(event.metadata.name).unwrap_or_default();
        // A series' first event counts as one; its first repeat makes the count 2 (as kube-runtime's).
        self.lock().record(key, &namespace, &name, 1, Instant::now());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_remembered_within_its_window_only() {
        let mut s = Series::new(8);
        let t0 = Instant::now();
        s.record(1, "ns", "e1", 1, t0);
        assert_eq!(
            s.repeat_of(1, t0 + Duration::from_secs(10)),
            Some(("ns".into(), "e1".into(), 1))
        );
        assert_eq!(s.repeat_of(2, t0), None);
        assert_eq!(
            s.repeat_of(1, t0 + SERIES_WINDOW),
            None,
            "a repeat after the window starts a new series"
        );
    }

    #[test]
    fn the_cache_is_bounded_and_evicts_the_least_recently_seen() {
        let mut s = Series::new(16);
        let t0 = Instant::now();
        for k in 0..16u64 {
            s.record(k, "ns", &format!("e{k}"), 1, t0 + Duration::from_millis(k));
        }
        // Series 0 is seen again: now the most recent.
        s.record(0, "ns", "e0", 2, t0 + Duration::from_millis(100));
        for k in 16..1000u64 {
            s.record(k, "ns", &format!("e{k}"), 1, t0 + Duration::from_millis(200 + k));
            assert!(s.seen.len() <= 16, "{} series remembered", s.seen.len());
        }
        assert!(s.seen.contains_key(&999), "the newest stays");
        assert!(!s.seen.contains_key(&1), "the least recently seen went first");
        // Entries out of the window go before any recent one.
        let mut s = Series::new(4);
        s.record(1, "ns", "old", 1, t0);
        for k in 2..5u64 {
            s.record(k, "ns", "new", 1, t0 + SERIES_WINDOW);
        }
        s.record(5, "ns", "new", 1, t0 + SERIES_WINDOW + Duration::from_secs(1));
        let mut keys: Vec<u64> = s.seen.keys().copied().collect();
        keys.sort_unstable();
        assert_eq!(keys, [2, 3, 4, 5]);
    }
}
