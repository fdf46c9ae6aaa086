//! The scenario harness: the real reconcile loop against the ARM simulator (over HTTP) and the fake API server
//! (through a real `kube::Client`). Tests drive the loop step by step, as the controller's queue would.
//!
//! Traffic recording (opt-in, for `.ci/oav.sh`): when `ARMGEN_TRAFFIC_DIR` is set, every exchange with the
//! simulator is written there when the harness is dropped, in `oav validate-traffic`'s file format, one folder per
//! test (`<DIR>/<test binary>/<test name>/00001-PUT-201.json`, …). Tests that reset the simulator's counters call
//! [`Harness::clear_traffic`], which keeps what was recorded so far for that file.

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use aks_reconciler::arm::{ArmClient, RetryPolicy};
use aks_reconciler::controller::reconcile_any as reconcile;
use aks_reconciler::controller::served_kinds;
use aks_reconciler::events::{Recorder, Reporter};
use aks_reconciler::reconcile::{
    Access, CredentialProvider, KindContext, Settings, Shared, StaticAccess, api_resource,
};
use arm_simulator::{Exchange, Running, Simulator, SimulatorConfig};
use fake_apiserver::FakeApiServer;
use kube::Api;
use kube::api::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};

pub const NS: &str = "team-a";
pub const SUB: &str = "00000000-0000-0000-0000-000000000001";
pub const RG: &str = "rg-team-a";

pub struct Harness {
    pub api: FakeApiServer,
    pub sim: Simulator,
    pub running: Running,
    pub shared: Arc<Shared>,
    /// `--kube-version` overrides (GROUP, VERSION): which Kubernetes version of each kind the harness serves and
    /// creates (default: the storage versions).
    pub versions: Vec<(String, String)>,
    /// Exchanges recorded before a [`Harness::clear_traffic`], kept for `ARMGEN_TRAFFIC_DIR`.
    recorded: Mutex<Vec<Exchange>>,
}

/// The environment variable that turns traffic recording on: the folder to write into.
pub const TRAFFIC_DIR_ENV: &str = "ARMGEN_TRAFFIC_DIR";

pub fn sim_config() -> SimulatorConfig {
    SimulatorConfig {
        operation_polls: 2,
        retry_after_secs: 0,
        ..SimulatorConfig::default()
    }
}

impl Harness {
    pub async fn new() -> Self {
        Self::with(sim_config(), None).await
    }

    pub async fn with(config: SimulatorConfig, credentials: Option<Arc<dyn CredentialProvider>>) -> Self {
        let sim = Simulator::new(config);
        let running = sim
            .serve("127.0.0.1:0".parse().expect("address"))
            .await
            .expect("simulator starts");
        let api = FakeApiServer::new();
        // The plurals the CRDs declare (an action kind named after a plural is its own plural), which the fake
        // API server learns from installed CRDs and would otherwise guess.
        for k in aks_api::every_kind() {
            api.register_kind(&k.api_version(), k.kind, k.plural);
        }
        let credentials = credentials.unwrap_or_else(|| {
            Arc::new(StaticAccess(Access {
                subscription_id: SUB.into(),
                bearer: None,
            }))
        });
        let shared = Self::shared(&api, &running.base_url, credentials);
        Harness {
            api,
            sim,
            running,
            shared,
            recorded: Mutex::new(Vec::new()),
            versions: Vec::new(),
        }
    }

    /// Serves (and creates) `group`'s kinds at Kubernetes version `version`, as `--kube-version GROUP=VERSION`
    /// does, so that the reconciler speaks that version's ARM API version.
    pub fn serving(mut self, group: &str, version: &str) -> Self {
        self.versions.push((group.to_string(), version.to_string()));
        self
    }

    /// Resets the simulator's recorded traffic and counters ([`Simulator::clear_traffic`]), keeping the exchanges
    /// so far for `ARMGEN_TRAFFIC_DIR`.
    pub fn clear_traffic(&self) {
        if std::env::var_os(TRAFFIC_DIR_ENV).is_some() {
            let mut recorded = self.recorded.lock().unwrap_or_else(|e| e.into_inner());
            recorded.extend(self.sim.traffic());
        }
        self.sim.clear_traffic();
    }

    /// A fresh `Shared` — a restarted operator: new ARM client, nothing in memory.
    pub fn shared(api: &FakeApiServer, base_url: &str, credentials: Arc<dyn CredentialProvider>) -> Arc<Shared> {
        let client = api.client();
        let arm = ArmClient::new(
            reqwest::Client::new(),
            base_url.parse().expect("simulator URL"),
            RetryPolicy {
                max_attempts: 4,
                base_delay: Duration::from_millis(10),
                max_delay: Duration::from_secs(5),
            },
        )
        .with_token_scope(aks_reconciler::credentials::ARM_SCOPE);
        let reporter = Reporter {
            controller: "aks-reconciler".into(),
            instance: None,
        };
        Arc::new(Shared {
            recorder: Some(Recorder::new(client.clone(), reporter)),
            client,
            arm,
            credentials,
            settings: Settings {
                resync: Duration::from_secs(600),
                wait: Duration::from_secs(30),
                poll: Duration::from_millis(1),
                failed: Duration::from_secs(300),
                export_refresh: Duration::from_secs(3600),
                ..Settings::default()
            },
            metrics: aks_reconciler::metrics::Metrics::default(),
        })
    }

    pub fn restart(&mut self) {
        let credentials = self.shared.credentials.clone();
        self.shared = Self::shared(&self.api, &self.running.base_url, credentials);
    }

    /// A restarted operator with these service rules (`--rules`).
    pub fn set_rules(&mut self, rules: Arc<armgen_runtime::rules::Rules>) {
        let mut shared = Self::shared(&self.api, &self.running.base_url, self.shared.credentials.clone());
        if let Some(s) = Arc::get_mut(&mut shared) {
            s.settings.rules = rules;
        }
        self.shared = shared;
    }

    /// A restarted operator whose other settings are changed by `edit`.
    pub fn set_settings(&mut self, edit: impl FnOnce(&mut Settings)) {
        let mut shared = Self::shared(&self.api, &self.running.base_url, self.shared.credentials.clone());
        if let Some(s) = Arc::get_mut(&mut shared) {
            edit(&mut s.settings);
        }
        self.shared = shared;
    }

    /// A restarted operator whose exported Secrets are refreshed after `refresh`.
    pub fn set_export_refresh(&mut self, refresh: Duration) {
        let mut shared = Self::shared(&self.api, &self.running.base_url, self.shared.credentials.clone());
        if let Some(s) = Arc::get_mut(&mut shared) {
            s.settings.export_refresh = refresh;
        }
        self.shared = shared;
    }

    /// A core/v1 object (`secrets`, `configmaps`, `events`, …) in the test namespace, as JSON.
    pub fn core(&self, plural: &str, name: &str) -> Option<Value> {
        self.api.get("v1", plural, Some(NS), name)
    }

    pub fn ctx(&self, kind: &str) -> Arc<KindContext> {
        let info = served_kinds(&self.versions)
            .into_iter()
            .chain(aks_reconciler::actions::served_actions(&self.versions))
            .find(|k| k.kind == kind)
            .expect("a served kind");
        Arc::new(KindContext::new(self.shared.clone(), info))
    }

    fn dyn_api(&self, kind: &str) -> Api<DynamicObject> {
        self.api_in(kind, NS)
    }

    /// The API of the served version of `kind` in `namespace`.
    pub fn api_in(&self, kind: &str, namespace: &str) -> Api<DynamicObject> {
        let ctx = self.ctx(kind);
        Api::namespaced_with(self.api.client(), namespace, &api_resource(ctx.info))
    }

    /// Creates a custom resource of the served version of `kind` in `namespace`.
    pub fn apply_in(&self, kind: &str, namespace: &str, name: &str, spec: Value) -> Value {
        self.api.insert(json!({
            "apiVersion": self.ctx(kind).info.api_version(),
            "kind": kind,
            "metadata": {"name": name, "namespace": namespace},
            "spec": spec,
        }))
    }

    /// Creates a custom resource of the served version of `kind`.
    pub async fn apply(&self, kind: &str, name: &str, spec: Value) -> Value {
        self.apply_with(kind, name, spec, json!({})).await
    }

    pub async fn apply_with(&self, kind: &str, name: &str, spec: Value, annotations: Value) -> Value {
        let ctx = self.ctx(kind);
        self.api.insert(json!({
            "apiVersion": ctx.info.api_version(),
            "kind": kind,
            "metadata": {"name": name, "namespace": NS, "annotations": annotations},
            "spec": spec,
        }))
    }

    pub async fn object(&self, kind: &str, name: &str) -> Option<DynamicObject> {
        self.object_in(kind, NS, name).await
    }

    pub async fn object_in(&self, kind: &str, namespace: &str, name: &str) -> Option<DynamicObject> {
        self.api_in(kind, namespace)
            .get_opt(name)
            .await
            .expect("API server answers")
    }

    pub async fn patch_spec(&self, kind: &str, name: &str, patch: Value) {
        self.dyn_api(kind)
            .patch(
                name,
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({ "spec": patch })),
            )
            .await
            .expect("patch");
    }

    pub async fn delete(&self, kind: &str, name: &str) {
        self.dyn_api(kind)
            .delete(name, &Default::default())
            .await
            .expect("delete");
    }

    /// Writes to the API server (every request but GET, as `METHOD path`) since its requests were last cleared.
    pub fn kube_writes(&self) -> Vec<String> {
        self.api
            .requests()
            .into_iter()
            .filter(|r| r.method != "GET")
            .map(|r| format!("{} {}", r.method, r.path))
            .collect()
    }

    /// One reconcile of the object as it is now; `None` when it no longer exists.
    pub async fn reconcile(&self, kind: &str, name: &str) -> Option<Action> {
        self.reconcile_in(kind, NS, name).await
    }

    /// One reconcile of the object in `namespace`; `None` when it no longer exists.
    pub async fn reconcile_in(&self, kind: &str, namespace: &str, name: &str) -> Option<Action> {
        let object = self.object_in(kind, namespace, name).await?;
        Some(reconcile(Arc::new(object), self.ctx(kind)).await.expect("reconcile"))
    }

    /// `Ready`'s status, reason and message.
    pub async fn ready(&self, kind: &str, name: &str) -> (String, String, String) {
        self.ready_in(kind, NS, name).await
    }

    /// `Ready`'s status, reason and message of the object in `namespace`.
    pub async fn ready_in(&self, kind: &str, namespace: &str, name: &str) -> (String, String, String) {
        let object = self.object_in(kind, namespace, name).await.expect("object exists");
        let c = object
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .and_then(|c| c.iter().find(|c| c["type"] == "Ready"))
            .cloned()
            .unwrap_or(Value::Null);
        let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        (s("status"), s("reason"), s("message"))
    }

    /// Reconciles until `Ready` is `True` (or `False` with a reason other than waiting); the steps taken.
    pub async fn converge(&self, kind: &str, name: &str) -> usize {
        for step in 1..=20 {
            self.reconcile(kind, name).await;
            let (status, reason, _) = self.ready(kind, name).await;
            if status == "True" || (status == "False" && reason != "Reconciling") {
                return step;
            }
        }
        panic!("{kind} {name} did not converge: {:?}", self.ready(kind, name).await);
    }

    /// Reconciles a deleted object until it is gone; the steps taken.
    pub async fn reconcile_until_gone(&self, kind: &str, name: &str) -> usize {
        for step in 1..=20 {
            if self.reconcile(kind, name).await.is_none() {
                return step;
            }
        }
        panic!("{kind} {name} was not removed");
    }
}

impl Drop for Harness {
    /// With `ARMGEN_TRAFFIC_DIR` set: writes the test's exchanges into `<DIR>/<test binary>/<test name>/`.
    fn drop(&mut self) {
        let Some(root) = std::env::var_os(TRAFFIC_DIR_ENV) else {
            return;
        };
        // libtest runs each test on a thread named after it; `#[tokio::test]` polls the test on that thread.
        let test = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .replace("::", "-")
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_', "_");
        let dir = PathBuf::from(root).join(env!("CARGO_CRATE_NAME")).join(test);
        let mut exchanges = std::mem::take(&mut *self.recorded.lock().unwrap_or_else(|e| e.into_inner()));
        exchanges.extend(self.sim.traffic());
        let write = || -> std::io::Result<()> {
            // A test may build more than one harness: number on after the files already there.
            std::fs::create_dir_all(&dir)?;
            let first = std::fs::read_dir(&dir)?.count();
            for (i, e) in exchanges.iter().enumerate() {
                let name = format!(
                    "{:05}-{}-{}.json",
                    first + i + 1,
                    e.request.method,
                    e.response.status_code
                );
                let text = serde_json::to_string_pretty(&e.to_live_traffic()).map_err(std::io::Error::other)?;
                std::fs::write(dir.join(name), text)?;
            }
            Ok(())
        };
        if let Err(e) = write() {
            eprintln!("cannot write the traffic to {}: {e}", dir.display());
        }
    }
}

pub fn cluster_spec() -> Value {
    json!({
        "owner": {"name": RG},
        "location": "westeurope",
        "dnsPrefix": "demo",
        "kubernetesVersion": "1.31",
        "identity": {"type": "SystemAssigned"},
        "agentPoolProfiles": [
            {"name": "system", "count": 3, "vmSize": "Standard_D4s_v5", "mode": "System", "osType": "Linux"}
        ],
    })
}

pub fn pool_spec(cluster: &str) -> Value {
    json!({
        "owner": {"name": cluster},
        "count": 2,
        "vmSize": "Standard_D8s_v5",
        "mode": "User",
        "osType": "Linux",
    })
}

pub fn cluster_id(name: &str) -> String {
    format!("/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.ContainerService/managedClusters/{name}")
}

/// The next long-running PUT ends `Failed` with ARM error `code`.
pub fn failed_operation_on_next_put(code: &str) -> arm_simulator::FaultRule {
    arm_simulator::FaultRule::new(arm_simulator::Fault::FailOperation {
        code: code.into(),
        message: "the operation failed".into(),
    })
    .method("PUT")
}

/// The next long-running PUT ends `Failed` with AKS's quota error.
pub fn quota_exceeded_on_next_put() -> arm_simulator::FaultRule {
    arm_simulator::FaultRule::new(arm_simulator::Fault::FailOperation {
        code: "QuotaExceeded".into(),
        message: "Operation could not be completed as it results in exceeding approved quota".into(),
    })
    .method("PUT")
}
