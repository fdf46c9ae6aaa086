//! Helpers shared by the simulator's tests.

#![allow(dead_code)]

use arm_simulator::{Running, Simulator, SimulatorConfig};
use serde_json::{Value, json};

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

/// The template with `{name}` segments taken from `param`.
pub fn fill(template: &str, param: impl Fn(&str) -> String) -> String {
    template
        .split('/')
        .map(|s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(name) => param(name),
            None => s.to_string(),
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Sets the value at an ARM-style path (`properties.pools[0].name`; `` is the root), creating objects.
pub fn set_at(body: &mut Value, path: &str, value: Value) {
    let mut cur = body;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        let mut parts = seg.split('[');
        let name = parts.next().unwrap_or_default();
        if !name.is_empty() {
            if !cur.is_object() {
                *cur = json!({});
            }
            cur = cur.as_object_mut().expect("object").entry(name).or_insert(json!({}));
        }
        for index in parts {
            let i: usize = index.trim_end_matches(']').parse().expect("index");
            cur = &mut cur[i];
        }
    }
    *cur = value;
}

/// A value of the type serde expected (`invalid type: map, expected a string`).
pub fn value_for(expected: &str) -> Value {
    if expected.contains("string") {
        json!("value")
    } else if expected.contains("sequence") {
        json!([])
    } else if expected.contains("bool") {
        json!(true)
    } else if expected.contains("i32") || expected.contains("i64") || expected.contains("u") || expected.contains("f64")
    {
        json!(1)
    } else {
        json!({})
    }
}

/// PUTs bodies, starting from `{}`, each time adding what the simulator's 400 said was missing or of the
/// wrong type, until it is accepted; returns the accepted body and the PUT's reply.
pub async fn put_minimal(env: &Env, id: &str, api_version: &str) -> (Value, Reply) {
    minimal(id, api_version, async |body: &Value| {
        env.put(id, api_version, body).await
    })
    .await
}

/// Sends bodies with `send`, starting from `{}`, each time adding what the simulator's 400 said was missing or of
/// the wrong type (its message names the field, after `{api_version}: `), until one is not refused with 400;
/// returns that body and its reply. `what` names the request in panics.
pub async fn minimal(what: &str, api_version: &str, send: impl AsyncFn(&Value) -> Reply) -> (Value, Reply) {
    let id = what;
    let mut body = json!({});
    for _ in 0..40 {
        let r = send(&body).await;
        if r.status != 400 {
            return (body, r);
        }
        let message = r.body["error"]["message"].as_str().expect("message").to_string();
        let (head, path) = message.rsplit_once(". Path '").expect("a path in the message");
        let path = path.trim_end_matches("'.");
        let serde = head
            .split_once(&format!("{api_version}: "))
            .map(|(_, m)| m)
            .expect("the serde message");
        if let Some(field) = serde.strip_prefix("missing field `").and_then(|s| s.split('`').next()) {
            let path = if path.is_empty() {
                field.to_string()
            } else {
                format!("{path}.{field}")
            };
            set_at(&mut body, &path, json!({}));
        } else if let Some((_, expected)) = serde.split_once("expected one of `") {
            set_at(&mut body, path, json!(expected.split('`').next().unwrap_or_default()));
        } else if let Some((_, expected)) = serde.split_once(", expected ") {
            set_at(&mut body, path, value_for(expected));
        } else {
            panic!("{id}: cannot derive a body from {message}");
        }
    }
    panic!("{id}: no accepted body after 40 PUTs: {body}");
}

impl Env {
    /// `POST <id>/<action>?api-version=V`, with a JSON body when one is given.
    pub async fn post(&self, id: &str, action: &str, api_version: &str, body: Option<&Value>) -> Reply {
        let mut request = self.client.post(self.url(&format!("{id}/{action}"), api_version));
        if let Some(body) = body {
            request = request.json(body);
        }
        Reply::of(request.send().await.expect("POST")).await
    }
}
