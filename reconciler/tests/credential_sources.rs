//! Which credentials an object is reconciled with: the Secret named by its `armgen.azure.com/credential-from`
//! annotation, else the namespace's `armgen-credential` Secret, else the operator's global credential — and the
//! `Ready` condition naming what is missing.

mod common;

use std::sync::Arc;

use aks_reconciler::credentials::{CREDENTIAL_FROM_ANNOTATION, CredentialDefaults, Credentials};
use aks_reconciler::sources::CredentialSources;
use arm_simulator::AuthConfig;
use common::*;
use serde_json::json;

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT: &str = "5b1e9c1e-2222-4c4c-9a9a-0123456789ab";
const SECRET: &str = "app-password-of-team-a";

async fn harness() -> Harness {
    let config = arm_simulator::SimulatorConfig {
        auth: Some(AuthConfig {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            federated_token: None,
            client_secret: Some(SECRET.into()),
            managed_identity: false,
        }),
        ..sim_config()
    };
    let mut h = Harness::with(config, None).await;
    let defaults = CredentialDefaults {
        authority_host: format!("{}/", h.running.base_url).parse().expect("URL"),
        ..CredentialDefaults::default()
    };
    // No global credential: only Secrets work.
    let sources = Arc::new(CredentialSources::new(
        Credentials::new(reqwest::Client::new()),
        None,
        defaults,
    ));
    h.shared = Harness::shared(&h.api, &h.running.base_url, sources);
    h
}

/// A credential Secret as the API server stores it (`data`, base64).
fn credential_secret(name: &str, client_secret: &str) -> serde_json::Value {
    use base64::Engine;
    let b64 = |v: &str| base64::engine::general_purpose::STANDARD.encode(v);
    json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NS},
        "data": {
            "AZURE_SUBSCRIPTION_ID": b64(SUB), "AZURE_TENANT_ID": b64(TENANT), "AZURE_CLIENT_ID": b64(CLIENT),
            "AZURE_CLIENT_SECRET": b64(client_secret),
        },
    })
}

#[tokio::test]
async fn without_any_credential_the_condition_says_so() {
    let h = harness().await;
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!((status.as_str(), reason.as_str()), ("False", "CredentialsNotFound"));
    assert!(message.contains("team-a/armgen-credential"), "{message}");
    assert_eq!(h.sim.traffic().len(), 0);
}

#[tokio::test]
async fn the_namespace_secret_is_used_and_the_annotation_overrides_it() {
    let h = harness().await;
    h.api.insert(credential_secret("armgen-credential", SECRET));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let ready = h.ready("ManagedCluster", "demo").await;
    assert_eq!(ready.0, "True", "{ready:?}");
    assert!(h.sim.issued_tokens() >= 1);
    assert_eq!(h.sim.authenticated_requests(), h.sim.traffic().len());

    // The annotation names another Secret: missing → named; with a wrong password → Entra's rejection, no value.
    h.apply_with(
        "ManagedCluster",
        "other",
        cluster_spec(),
        json!({CREDENTIAL_FROM_ANNOTATION: "team-b-cred"}),
    )
    .await;
    h.reconcile("ManagedCluster", "other").await;
    let (_, reason, message) = h.ready("ManagedCluster", "other").await;
    assert_eq!(reason, "CredentialsNotFound");
    assert!(message.contains("team-a/team-b-cred"), "{message}");
    h.api.insert(credential_secret("team-b-cred", "not-the-password"));
    h.reconcile("ManagedCluster", "other").await;
    let (_, reason, message) = h.ready("ManagedCluster", "other").await;
    assert_eq!(reason, "AuthenticationFailed", "{message}");
    assert!(!message.contains("not-the-password"), "{message}");
}
