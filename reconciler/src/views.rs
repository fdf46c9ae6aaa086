//! Views: read-only ARM GETs under a resource (`GET <resource ID>/upgradeProfiles/default`, `…/machines`) whose
//! typed response the reconciler keeps in the resource's status (`status.upgradeProfile`, `status.machines`).
//!
//! Which GETs are views is data: `kubernetes.resources.<Kind>.views` of the generator's config, in the registry as
//! [`aks_api::VIEWS`], each with the status field it fills and how often it is read. The generated ARM type of the
//! resource has that field, so the view's body, put at `field` of the resource's GET body, becomes a typed status
//! field through the same generated ARM → status conversion as the rest of the status.
//!
//! When a view is read:
//!
//! - only for a resource that exists and is in sync (`Ready` `True`, also under the `skip` policy: a GET writes
//!   nothing), at most once per its interval ([`armgen_runtime::ViewInfo::refresh_seconds`], or
//!   [`crate::context::Settings::view_refresh`] for every view), and right after a change the reconciler made (a PUT
//!   that succeeded), since an upgrade or a scale changes what the views say;
//! - the schedule is this process's memory ([`ViewSchedule`]), never written to the object: an object in sync costs
//!   its views' GETs per interval and no write at all (the status is written only when a view's content changed).
//!   A restarted or newly elected reconciler reads every view once at its first reconcile of each object.
//!
//! What a read gives:
//!
//! - `200`: the body (for a pageable view, the `value` items of every page, following `nextLink` on the ARM
//!   endpoint's origin only ([`crate::arm::ArmClient::get_next_page`]), at most [`MAX_PAGES`] pages);
//! - `404`: the view is absent (the field is removed from the status);
//! - any other failure, or a result over [`MAX_VIEW_BYTES`]: the field keeps its previous value, a `ViewFailed`
//!   warning event says why, and the view is read again at the next reconcile (not after a whole interval).
//!
//! The cost, in ARM GETs (README, "Views"): per object, one GET per resync (`--resync-interval`) plus one per view
//! per refresh interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use armgen_runtime::{KindInfo, ViewInfo};
use serde_json::Value;

use crate::arm::ArmClient;

/// The most pages of a pageable view read in one refresh (a pool's machines: ARM pages hold up to 100 or so).
pub const MAX_PAGES: usize = 50;

/// The largest view kept in a status, as JSON bytes: a custom resource is one etcd object (1.5 MiB by default,
/// spec and the rest of the status included).
pub const MAX_VIEW_BYTES: usize = 256 * 1024;

/// The views of `info`'s kind and version.
pub fn of(info: &KindInfo) -> impl Iterator<Item = &'static ViewInfo> + '_ {
    aks_api::VIEWS
        .iter()
        .filter(move |v| v.group == info.group && v.version == info.version && v.kind == info.kind)
}

/// The status fields of `info`'s views.
pub fn fields(info: &KindInfo) -> Vec<&'static str> {
    of(info).map(|v| v.field).collect()
}

/// Object key (its keyed hash, [`ViewSchedule::slot`]) → (view field, when it was last read): a list, as a kind
/// has a view or two. One entry per object the reconciler serves, so small matters at scale: ≈ 90 bytes an object
/// rather than ≈ 200 with the key's text and a map per object.
type LastRead = HashMap<u64, Box<[(&'static str, Instant)]>>;

/// When each view of each object was last read, in this process (see the module docs). Clones share it.
#[derive(Debug, Clone, Default)]
pub struct ViewSchedule {
    read: Arc<Mutex<LastRead>>,
    /// The key of [`ViewSchedule::slot`]'s hash: random per process, so no one can aim two objects at one slot
    /// (two objects in one slot would only share when their views were last read).
    keys: std::hash::RandomState,
}

impl ViewSchedule {
    fn with<T>(&self, f: impl FnOnce(&mut LastRead) -> T) -> T {
        f(&mut self.read.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn slot(&self, key: &str) -> u64 {
        use std::hash::BuildHasher;
        self.keys.hash_one(key)
    }

    /// When `field` of object `key` was last read.
    fn last(&self, read: &LastRead, key: &str, field: &str) -> Option<Instant> {
        read.get(&self.slot(key))?
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, at)| *at)
    }

    /// Whether `field` of object `key` is due: never read, or read `every` ago or longer.
    fn due(&self, key: &str, field: &str, every: Duration, now: Instant) -> bool {
        self.with(|m| {
            self.last(m, key, field)
                .is_none_or(|at| now.saturating_duration_since(at) >= every)
        })
    }

    fn mark(&self, key: &str, field: &'static str, now: Instant) {
        let slot = self.slot(key);
        self.with(|m| {
            let fields = m.entry(slot).or_default();
            match fields.iter_mut().find(|(f, _)| *f == field) {
                Some((_, at)) => *at = now,
                None => {
                    let mut more = std::mem::take(fields).into_vec();
                    more.push((field, now));
                    *fields = more.into_boxed_slice();
                }
            }
        });
    }

    /// How long until the first of `views` of object `key` is due (zero when one is due now).
    fn next_due(&self, key: &str, views: &[(&'static ViewInfo, Duration)], now: Instant) -> Option<Duration> {
        self.with(|m| {
            views
                .iter()
                .map(|(v, every)| match self.last(m, key, v.field) {
                    Some(at) => every.saturating_sub(now.saturating_duration_since(at)),
                    None => Duration::ZERO,
                })
                .min()
        })
    }

    /// Forgets object `key` (it is gone).
    pub fn forget(&self, key: &str) {
        let slot = self.slot(key);
        self.with(|m| {
            m.remove(&slot);
        });
    }

    /// How many objects it holds (for tests and the scale benchmark).
    pub fn len(&self) -> usize {
        self.with(|m| m.len())
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one refresh read.
#[derive(Debug, Default)]
pub struct Refreshed {
    /// Views read: field → the value to put at `field` of the ARM GET body (`Value::Null`: absent, 404).
    pub values: Vec<(&'static str, Value)>,
    /// Views that failed: field → why.
    pub failed: Vec<(&'static str, String)>,
    /// How long until the next view of the object is due, when it has views.
    pub next_due: Option<Duration>,
}

/// What a refresh needs of the reconcile it runs in.
pub struct Request<'a> {
    pub arm: &'a ArmClient,
    pub info: &'static KindInfo,
    /// The object's schedule key (its kind and UID).
    pub key: &'a str,
    /// The resource's ARM ID.
    pub id: &'a str,
    pub bearer: Option<&'a str>,
    /// Read every view now (the reconciler just changed the resource).
    pub force: bool,
    /// Every view's interval instead of its own, when set.
    pub every: Option<Duration>,
}

/// Reads the views of the object that are due (all when `force`): see the module docs.
pub async fn refresh(schedule: &ViewSchedule, req: Request<'_>) -> Refreshed {
    let views: Vec<(&'static ViewInfo, Duration)> = of(req.info)
        .map(|v| (v, req.every.unwrap_or(Duration::from_secs(v.refresh_seconds))))
        .collect();
    let mut out = Refreshed::default();
    if views.is_empty() {
        return out;
    }
    for (view, every) in &views {
        let now = Instant::now();
        if !req.force && !schedule.due(req.key, view.field, *every, now) {
            continue;
        }
        match read(&req, view).await {
            Ok(value) => {
                schedule.mark(req.key, view.field, now);
                out.values.push((view.field, value));
            }
            Err(message) => out.failed.push((view.field, message)),
        }
    }
    // A failed view is due again at the next reconcile: it was not marked.
    out.next_due = schedule.next_due(req.key, &views, Instant::now());
    out
}

/// Whether `value` read at `field` of the ARM body `body` of a resource of `info`'s kind converts to its status
/// (the generated ARM → status conversion): `Err` says why not. Run once per view read, not per reconcile.
pub fn fits(info: &KindInfo, body: &Value, field: &str, value: &Value) -> Result<(), String> {
    let mut with = body.clone();
    if let Some(map) = with.as_object_mut() {
        map.insert(field.to_string(), value.clone());
    }
    match aks_api::import_custom_resource(info.group, info.version, info.kind, &with.to_string(), "view", None) {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(format!("the response does not fit the generated type: {e}")),
        None => Err(format!("{} {} is not in the registry", info.kind, info.version)),
    }
}

/// Reads one view: its value for the ARM body (see [`Refreshed::values`]) or why not.
async fn read(req: &Request<'_>, view: &ViewInfo) -> Result<Value, String> {
    let id = format!("{}/{}", req.id.trim_end_matches('/'), view.path);
    let api_version = req.info.arm.api_version;
    let first = match req.arm.get(&id, api_version, req.bearer).await {
        Ok(Some(body)) => body,
        Ok(None) => return Ok(Value::Null),
        Err(e) => return Err(e.to_string()),
    };
    let value = if view.pageable {
        let mut items = Vec::new();
        let mut page = first;
        for n in 1.. {
            match page.get_mut("value").map(Value::take) {
                Some(Value::Array(more)) => items.extend(more),
                Some(Value::Null) | None => {}
                Some(_) => return Err(format!("GET {id}: the page's `value` is not a list")),
            }
            let Some(next) = page.get("nextLink").and_then(Value::as_str).filter(|l| !l.is_empty()) else {
                break;
            };
            if n >= MAX_PAGES {
                return Err(format!("GET {id}: more than {MAX_PAGES} pages"));
            }
            page = req
                .arm
                .get_next_page(next, &id, req.bearer)
                .await
                .map_err(|e| e.to_string())?;
        }
        Value::Array(items)
    } else {
        first
    };
    let size = serde_json::to_vec(&value).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_VIEW_BYTES {
        return Err(format!(
            "GET {id}: {size} bytes, over the {MAX_VIEW_BYTES} bytes a view may keep in a status"
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(field: &'static str, every: u64) -> &'static ViewInfo {
        Box::leak(Box::new(ViewInfo {
            group: "g",
            version: "v1",
            kind: "K",
            field,
            path: field,
            route: field,
            pageable: false,
            refresh_seconds: every,
        }))
    }

    #[test]
    fn a_view_is_due_once_per_interval_per_object() {
        let s = ViewSchedule::default();
        let t0 = Instant::now();
        let hour = Duration::from_secs(3600);
        assert!(s.due("a", "upgradeProfile", hour, t0));
        s.mark("a", "upgradeProfile", t0);
        assert!(!s.due("a", "upgradeProfile", hour, t0 + Duration::from_secs(3599)));
        assert!(s.due("a", "upgradeProfile", hour, t0 + hour));
        // Another object, another field: its own schedule.
        assert!(s.due("b", "upgradeProfile", hour, t0));
        assert!(s.due("a", "machines", hour, t0));
        let views = [
            (view("upgradeProfile", 3600), hour),
            (view("machines", 600), Duration::from_secs(600)),
        ];
        assert_eq!(
            s.next_due("a", &views, t0 + Duration::from_secs(100)),
            Some(Duration::ZERO)
        );
        s.mark("a", "machines", t0);
        assert_eq!(
            s.next_due("a", &views, t0 + Duration::from_secs(100)),
            Some(Duration::from_secs(500))
        );
        assert_eq!(s.len(), 1);
        s.forget("a");
        assert!(s.is_empty());
        assert!(s.due("a", "upgradeProfile", hour, t0));
    }

    #[test]
    fn a_view_the_generated_type_cannot_read_fails_alone() {
        let v = aks_api::VIEWS.first().expect("a view");
        let info = aks_api::KINDS
            .iter()
            .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind)
            .expect("its kind");
        let body = serde_json::json!({"location": "westeurope", "name": "c"});
        assert_eq!(fits(info, &body, v.field, &Value::Null), Ok(()), "absent (a 404) fits");
        // A number where an object or a list is expected: refused, naming the field.
        let e = fits(info, &body, v.field, &serde_json::json!(5)).expect_err("a number");
        assert!(e.contains("does not fit"), "{e}");
    }

    #[test]
    fn every_view_names_a_served_kind_of_its_version() {
        for v in aks_api::VIEWS {
            let kind = aks_api::KINDS
                .iter()
                .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind);
            assert!(kind.is_some(), "{}/{} {}: no such kind", v.group, v.version, v.kind);
            assert_eq!(
                fields(kind.unwrap()).iter().filter(|f| **f == v.field).count(),
                1,
                "{}",
                v.field
            );
            assert!(v.refresh_seconds >= 60, "{}: {}", v.kind, v.refresh_seconds);
        }
    }
}
