//! The reconciler's Prometheus metrics ([`Metrics`]), served as text by [`crate::serve`] on `/metrics`.
//!
//! | series | type | labels | what |
//! | --- | --- | --- | --- |
//! | `aks_reconciler_reconciles_total` | counter | `kind`, `result` | finished reconciles: `ready` (`Ready=True`, or a deletion finished), `not_ready` (`Ready=False` or `Unknown`: waiting, an operation in progress, a rejected request), `error` (the API server failed us; retried with backoff) |
//! | `aks_reconciler_arm_requests_total` | counter | `verb`, `code` | HTTP requests to ARM, each retry counted: `code` is the status (`200`, `429`, …) or `error` when no response came (connection failed, body unreadable) |
//! | `aks_reconciler_arm_operation_duration_seconds` | histogram | `kind`, `verb` | long-running PUT and DELETE operations from the request that started them to the poll that saw them end (succeeded, failed or canceled); see below |
//! | `aks_reconciler_queue_depth` | gauge | `kind` | objects being reconciled now plus objects not ready with a retry scheduled; see below |
//! | `process_resident_memory_bytes`, `process_open_fds`, `process_start_time_seconds` | gauge | | from `/proc/self` on Linux (absent elsewhere); the start time is when the [`Metrics`] were created |
//!
//! **Operation durations** survive restarts: the start time is stored with the pending operation in the custom
//! resource's status (`status.operatorStatus.pendingOperation`), so an operation started by one process and
//! finished under another is measured from its real start. An operation recorded by a version without the start
//! time is not observed. Operations ARM completes synchronously (no `Azure-AsyncOperation`/`Location`) are not
//! long-running and not observed.
//!
//! **Queue depth**: kube-rs's controller does not expose its scheduler queue, so the gauge counts, per kind, the
//! objects whose reconcile is running plus those whose last reconcile was `not_ready` or `error` and scheduled a
//! retry (an operation being polled, a wait for an owner, a throttled request, …). Objects in sync, waiting only
//! for their periodic resync, and objects that failed permanently (retried only when they change) are not
//! counted; an object leaves the count when its reconcile ends ready, when it is deleted, or when the controller
//! finds it gone from its cache ([`Metrics::forget`]).
//!
//! The text is OpenMetrics 1.0 (what Prometheus asks for first; `# EOF` at the end, counters' `# TYPE` lines name
//! the family without `_total`).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The `Content-Type` of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Buckets of the operation duration histogram, in seconds: AKS operations take from seconds (a tag change) to
/// an hour (a cluster upgrade).
pub const OPERATION_BUCKETS: [f64; 12] = [
    1.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
];

/// How one reconcile ended (the `result` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReconcileResult {
    /// `Ready=True`, or the deletion finished.
    Ready,
    /// `Ready=False` or `Ready=Unknown`.
    NotReady,
    /// An error the controller retries with backoff.
    Error,
}

impl ReconcileResult {
    /// The label value: `ready`, `not_ready` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReconcileResult::Ready => "ready",
            ReconcileResult::NotReady => "not_ready",
            ReconcileResult::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    kind: String,
    result: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ArmLabels {
    verb: String,
    code: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    kind: String,
    verb: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: String,
}

type HistogramFamily = Family<OperationLabels, Histogram, fn() -> Histogram>;

fn operation_histogram() -> Histogram {
    Histogram::new(OPERATION_BUCKETS)
}

/// Objects per kind counted by the queue-depth gauge.
#[derive(Debug, Default)]
struct Work {
    running: HashSet<String>,
    waiting: HashSet<String>,
}

impl Work {
    fn depth(&self) -> i64 {
        let both = self.running.iter().filter(|k| self.waiting.contains(*k)).count();
        i64::try_from(self.running.len() + self.waiting.len() - both).unwrap_or(i64::MAX)
    }
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    reconciles: Family<ReconcileLabels, Counter>,
    arm_requests: Family<ArmLabels, Counter>,
    operations: HistogramFamily,
    queue_depth: Family<KindLabels, Gauge>,
    work: Mutex<HashMap<String, Work>>,
}

/// The metrics handle: cheap to clone, all clones record into one registry. [`Metrics::default`] is a fresh,
/// unserved registry (what tests and callers that serve no metrics use).
#[derive(Debug, Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// The ARM client's hook ([`ArmClient::with_metrics`](crate::arm::ArmClient::with_metrics)): every request it
/// sends is counted in `aks_reconciler_arm_requests_total`.
impl arm_client::RequestMetrics for Metrics {
    fn arm_request(&self, method: &str, status: Option<u16>) {
        Metrics::arm_request(self, method, status);
    }
}

impl Metrics {
    /// A new registry with every series of the [module documentation](self).
    pub fn new() -> Self {
        let mut root = Registry::default();
        let registry = root.sub_registry_with_prefix("aks_reconciler");
        let reconciles = Family::<ReconcileLabels, Counter>::default();
        registry.register(
            "reconciles",
            "Finished reconciles by kind and result (ready, not_ready, error)",
            reconciles.clone(),
        );
        let arm_requests = Family::<ArmLabels, Counter>::default();
        registry.register(
            "arm_requests",
            "HTTP requests to Azure Resource Manager by verb and status code (error: no response)",
            arm_requests.clone(),
        );
        let operations: HistogramFamily = Family::new_with_constructor(operation_histogram);
        registry.register(
            "arm_operation_duration_seconds",
            "Long-running ARM operations (PUT, DELETE) from their start to the poll that saw them end",
            operations.clone(),
        );
        let queue_depth = Family::<KindLabels, Gauge>::default();
        registry.register(
            "queue_depth",
            "Objects being reconciled plus objects not ready with a retry scheduled, by kind",
            queue_depth.clone(),
        );
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        // At the root: the process_* names are the conventional ones, without our prefix.
        root.register_collector(Box::new(ProcessCollector { started }));
        Metrics {
            inner: Arc::new(Inner {
                registry: root,
                reconciles,
                arm_requests,
                operations,
                queue_depth,
                work: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// A reconcile of the object `key` (`namespace/name`) of `kind` started.
    pub fn reconcile_started(&self, kind: &str, key: &str) {
        self.with_work(kind, |work| {
            work.running.insert(key.to_string());
        });
    }

    /// A reconcile ended with `result`; `retry_scheduled`: the controller runs it again after a delay (a requeue
    /// or the error backoff), not only when the object changes.
    pub fn reconcile_finished(&self, kind: &str, key: &str, result: ReconcileResult, retry_scheduled: bool) {
        self.inner
            .reconciles
            .get_or_create(&ReconcileLabels {
                kind: kind.to_string(),
                result: result.as_str().to_string(),
            })
            .inc();
        self.with_work(kind, |work| {
            work.running.remove(key);
            if result != ReconcileResult::Ready && retry_scheduled {
                work.waiting.insert(key.to_string());
            } else {
                work.waiting.remove(key);
            }
        });
    }

    /// The object is gone: it no longer counts in the queue depth.
    pub fn forget(&self, kind: &str, key: &str) {
        self.with_work(kind, |work| {
            work.running.remove(key);
            work.waiting.remove(key);
        });
    }

    /// One HTTP request to ARM: `verb` (`GET`, `PUT`, …) and the status code, `None` when no response came.
    pub fn arm_request(&self, verb: &str, status: Option<u16>) {
        let code = match status {
            Some(code) => code.to_string(),
            None => "error".to_string(),
        };
        self.inner
            .arm_requests
            .get_or_create(&ArmLabels {
                verb: verb.to_string(),
                code,
            })
            .inc();
    }

    /// A long-running operation (`verb` `PUT` or `DELETE`) on an object of `kind` ended after `duration`.
    pub fn operation_completed(&self, kind: &str, verb: &str, duration: Duration) {
        self.inner
            .operations
            .get_or_create(&OperationLabels {
                kind: kind.to_string(),
                verb: verb.to_string(),
            })
            .observe(duration.as_secs_f64());
    }

    /// The current queue depth of `kind` (what the gauge shows).
    pub fn queue_depth(&self, kind: &str) -> i64 {
        self.inner
            .work
            .lock()
            .map(|work| work.get(kind).map(Work::depth).unwrap_or(0))
            .unwrap_or(0)
    }

    /// Every series as OpenMetrics text ([`CONTENT_TYPE`]).
    pub fn encode(&self) -> Result<String, fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.inner.registry)?;
        Ok(text)
    }

    fn with_work(&self, kind: &str, change: impl FnOnce(&mut Work)) {
        // A poisoned lock only means another thread panicked mid-update of plain sets: keep counting.
        let mut all = self.inner.work.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let work = all.entry(kind.to_string()).or_default();
        change(work);
        let depth = work.depth();
        self.inner
            .queue_depth
            .get_or_create(&KindLabels { kind: kind.to_string() })
            .set(depth);
    }
}

/// `process_*` gauges read from `/proc/self` at each scrape; nothing where `/proc` is not readable.
#[derive(Debug)]
struct ProcessCollector {
    started: f64,
}

impl ProcessCollector {
    fn resident_bytes() -> Option<i64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    }

    fn open_fds() -> Option<i64> {
        let entries = std::fs::read_dir("/proc/self/fd").ok()?;
        i64::try_from(entries.count()).ok()
    }
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let mut gauge = |name: &str, help: &str, value: f64| -> Result<(), fmt::Error> {
            let gauge = ConstGauge::new(value);
            let metric = encoder.encode_descriptor(name, help, None, gauge.metric_type())?;
            gauge.encode(metric)
        };
        gauge(
            "process_start_time_seconds",
            "When the process started its metrics, in seconds since the Unix epoch",
            self.started,
        )?;
        if let Some(bytes) = Self::resident_bytes() {
            gauge(
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                bytes as f64,
            )?;
        }
        if let Some(fds) = Self::open_fds() {
            gauge("process_open_fds", "Open file descriptors", fds as f64)?;
        }
        Ok(())
    }
}
