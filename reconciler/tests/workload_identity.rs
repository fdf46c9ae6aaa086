//! Workload identity end to end: the federated token file is exchanged at the simulator's fake Entra token
//! endpoint, the bearer token it issues reaches the simulated ARM, and no secret value (federated token, access
//! token, a spec secret) appears in logs, events or status.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use aks_reconciler::credentials::{ARM_SCOPE, CredentialConfig, CredentialDefaults, Credentials};
use aks_reconciler::reconcile::CredentialProvider;
use aks_reconciler::sources::CredentialSources;
use arm_simulator::{AuthConfig, SimulatorConfig};
use common::*;
use serde_json::json;

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT: &str = "0b2d6c6e-1111-4c4c-9a9a-0123456789ab";
const FEDERATED: &str = "eyJhbGciOiJSUzI1NiJ9.federated-token-value.sig";
const PASSWORD: &str = "Windows-Admin-P4ss!";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
    move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone())
}

async fn harness(federated: &str, dir: &tempfile::TempDir) -> (Harness, Arc<CredentialSources>, CredentialConfig) {
    let config = SimulatorConfig {
        auth: Some(AuthConfig {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            federated_token: Some(FEDERATED.into()),
            client_secret: None,
            managed_identity: false,
        }),
        ..sim_config()
    };
    let mut h = Harness::with(config, None).await;
    let token_file = dir.path().join("azure-identity-token");
    std::fs::write(&token_file, federated).expect("token file");
    let env = env_of(vec![
        ("AZURE_SUBSCRIPTION_ID", SUB.to_string()),
        ("AZURE_TENANT_ID", TENANT.to_string()),
        ("AZURE_CLIENT_ID", CLIENT.to_string()),
        ("AZURE_FEDERATED_TOKEN_FILE", token_file.display().to_string()),
        ("AZURE_AUTHORITY_HOST", format!("{}/", h.running.base_url)),
    ]);
    let global = CredentialConfig::from_env(&env).expect("config from env");
    let defaults = CredentialDefaults::from_env(&env).expect("defaults");
    let sources = Arc::new(CredentialSources::new(
        Credentials::new(reqwest::Client::new()),
        Some(global.clone()),
        defaults,
    ));
    h.shared = Harness::shared(&h.api, &h.running.base_url, sources.clone());
    (h, sources, global)
}

#[tokio::test]
async fn the_federated_token_is_exchanged_and_the_bearer_reaches_arm_and_no_secret_leaks() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let dir = tempfile::tempdir().expect("tempdir");
    let (h, sources, _) = harness(FEDERATED, &dir).await;
    h.api.insert(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "win-admin", "namespace": NS},
        "stringData": {"password": PASSWORD},
    }));
    let mut spec = cluster_spec();
    spec["windowsProfile"] =
        json!({"adminUsername": "azureuser", "adminPassword": {"name": "win-admin", "key": "password"}});
    h.apply("ManagedCluster", "demo", spec).await;
    h.converge("ManagedCluster", "demo").await;
    let ready = h.ready("ManagedCluster", "demo").await;
    assert_eq!(ready.0, "True", "{ready:?}");

    assert_eq!(h.sim.issued_tokens(), 1, "one exchange; the token is cached");
    let arm_requests = h.sim.traffic().len();
    assert!(arm_requests >= 3);
    assert_eq!(
        h.sim.authenticated_requests(),
        arm_requests,
        "every ARM request carried the issued bearer token"
    );

    // The access token the simulator issued (the cached one, not a new exchange).
    let access = sources
        .access(&h.api.client(), NS, &Default::default(), ARM_SCOPE)
        .await
        .expect("access");
    let bearer = access.bearer.expect("a bearer token");
    assert_eq!(h.sim.issued_tokens(), 1);

    let logs = String::from_utf8(logs.0.lock().expect("logs").clone()).expect("utf-8");
    assert!(
        logs.contains("ManagedCluster"),
        "logs were captured: {} bytes",
        logs.len()
    );
    let events = serde_json::to_string(&h.api.list("events.k8s.io/v1", "events")).expect("json");
    let status = serde_json::to_string(&h.object("ManagedCluster", "demo").await.expect("exists")).expect("json");
    for (what, text) in [("logs", &logs), ("events", &events), ("the custom resource", &status)] {
        for (name, secret) in [
            ("federated token", FEDERATED),
            ("access token", bearer.as_str()),
            ("password", PASSWORD),
        ] {
            assert!(!text.contains(secret), "the {name} appears in {what}");
        }
    }
}

#[tokio::test]
async fn a_rejected_federated_token_is_reported_without_its_value() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wrong = "eyJ.wrong-federated-token.sig";
    let (h, _, _) = harness(wrong, &dir).await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "AuthenticationFailed"),
        "{message}"
    );
    assert!(!message.contains(wrong) && !message.contains(FEDERATED), "{message}");
    assert_eq!(h.sim.traffic().len(), 0, "nothing reached ARM");
}
