//! Helpers shared by the simulator's tests.

#![allow(dead_code)]

use arm_simulator::{Running, Simulator, SimulatorConfig};
use serde_json::Value;

pub const SUB: &str = "00000000-0000-0000-0000-000000000000";
/// Two ARM API versions the tests use as fixtures (their resources and properties differ: ManagedNamespace is new
/// in 2025-10-01); tests over every version read them from `aks_api::KINDS`.
pub const V1: &str = "2024-09-01";
pub const V2: &str = "2025-10-01";

pub fn cluster_id(rg: &str, name: &str) -> String {
    format!("/subscriptions/{SUB}/resourceGroups/{rg}/providers/Microsoft.ContainerService/managedClusters/{name}")
}

pub fn pool_id(rg: &str, cluster: &str, name: &str) -> String {
    format!("{}/agentPools/{name}", cluster_id(rg, cluster))
}

pub struct Env {
    pub sim: Simulator,
    pub running: Running,
    pub client: reqwest::Client,
}

impl Env {
    pub async fn start(config: SimulatorConfig) -> Self {
        Self::serve(Simulator::new(config)).await
    }

    /// Serves `sim` (e.g. one of [`Simulator::with_kinds`]).
    pub async fn serve(sim: Simulator) -> Self {
        let running = sim.serve("127.0.0.1:0".parse().expect("address")).await.expect("serve");
        Self {
            sim,
            running,
            client: reqwest::Client::new(),
        }
    }

    /// A simulator with `Retry-After: 0` and otherwise default settings.
    pub async fn default() -> Self {
        Self::start(SimulatorConfig {
            retry_after_secs: 0,
            ..Default::default()
        })
        .await
    }

    pub fn url(&self, id: &str, api_version: &str) -> String {
        format!("{}{id}?api-version={api_version}", self.running.base_url)
    }

    pub async fn put(&self, id: &str, api_version: &str, body: &Value) -> Reply {
        Reply::of(
            self.client
                .put(self.url(id, api_version))
                .json(body)
                .send()
                .await
                .expect("PUT"),
        )
        .await
    }

    pub async fn get(&self, id: &str, api_version: &str) -> Reply {
        Reply::of(self.client.get(self.url(id, api_version)).send().await.expect("GET")).await
    }

    pub async fn delete(&self, id: &str, api_version: &str) -> Reply {
        Reply::of(
            self.client
                .delete(self.url(id, api_version))
                .send()
                .await
                .expect("DELETE"),
        )
        .await
    }

    pub async fn get_url(&self, url: &str) -> Reply {
        Reply::of(self.client.get(url).send().await.expect("GET")).await
    }

    /// Polls the operation until it is terminal; returns the final status body.
    pub async fn wait(&self, async_url: &str) -> Value {
        for _ in 0..20 {
            let r = self.get_url(async_url).await;
            assert_eq!(r.status, 200, "{:?}", r.body);
            if r.body["status"] != "InProgress" {
                return r.body;
            }
        }
        panic!("the operation {async_url} did not end");
    }

    /// PUTs and, for a long-running operation, polls it to the end; returns the final GET body.
    pub async fn create(&self, id: &str, api_version: &str, body: &Value) -> Value {
        let r = self.put(id, api_version, body).await;
        assert!(r.status == 200 || r.status == 201, "PUT {id}: {} {}", r.status, r.body);
        if let Some(url) = r.header("azure-asyncoperation") {
            assert_eq!(self.wait(&url).await["status"], "Succeeded");
        }
        let g = self.get(id, api_version).await;
        assert_eq!(g.status, 200, "{}", g.body);
        g.body
    }
}

pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    pub async fn of(r: reqwest::Response) -> Self {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).expect("JSON body")
        };
        Self { status, headers, body }
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
    }

    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }
}

/// Reads `body` through the generated ARM type of (`arm_type`, `api_version`); returns what it did not model.
pub fn deserializes(arm_type: &str, api_version: &str, body: &Value) -> Vec<String> {
    let kind = aks_api::KINDS
        .iter()
        .find(|k| k.arm.arm_type == arm_type && k.arm.api_version == api_version)
        .expect("kind in KINDS");
    match aks_api::arm_round_trip(kind.group, kind.version, kind.kind, &body.to_string()) {
        Some(Ok(rt)) => rt.unknown,
        Some(Err(e)) => panic!("{arm_type} {api_version}: {e}\n{body:#}"),
        None => panic!("no generated type for {arm_type} {api_version}"),
    }
}
