//! Which credentials an object is reconciled with: the Secret named by its `armgen.dev/credential-from`
//! annotation, else the namespace's `armgen-credential` Secret, else the operator's global credential — and the
//! `Ready` condition naming what is missing — and what a namespace's Secret may not do: use the operator's own
//! identity (federated token file, node managed identity, a file path, an identity endpoint), send token
//! requests to an authority host the operator did not allow, or name a Secret outside its namespace.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use aks_reconciler::credentials::{CREDENTIAL_FROM_ANNOTATION, CredentialConfig, CredentialDefaults, Credentials};
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

// ---------------------------------------------------------------------------------------------
// A hostile tenant's credential Secret

/// The operator's own federated token (its projected service-account token), which only the simulator's fake Entra
/// accepts.
const OPERATOR_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.operator-service-account.sig";

/// A listener standing in for the attacker's host: counts the connections it gets (and answers none).
struct Attacker {
    url: String,
    connections: Arc<AtomicUsize>,
}

async fn attacker() -> Attacker {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("address"));
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    Attacker { url, connections }
}

/// The operator runs with workload identity (its token file, the simulator as its authority host, which a tenant's
/// client secret may use too) and a global credential.
async fn operator_with_workload_identity(dir: &tempfile::TempDir, allowed: Vec<url::Url>) -> Harness {
    let config = arm_simulator::SimulatorConfig {
        auth: Some(AuthConfig {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            federated_token: Some(OPERATOR_TOKEN.into()),
            client_secret: Some(SECRET.into()),
            managed_identity: true,
        }),
        ..sim_config()
    };
    let mut h = Harness::with(config, None).await;
    let token_file = dir.path().join("azure-identity-token");
    std::fs::write(&token_file, OPERATOR_TOKEN).expect("token file");
    let authority = format!("{}/", h.running.base_url);
    let token_file = token_file.display().to_string();
    let env = move |k: &str| match k {
        "AZURE_SUBSCRIPTION_ID" => Some(SUB.to_string()),
        "AZURE_TENANT_ID" => Some(TENANT.to_string()),
        "AZURE_CLIENT_ID" => Some(CLIENT.to_string()),
        "AZURE_FEDERATED_TOKEN_FILE" => Some(token_file.clone()),
        "AZURE_AUTHORITY_HOST" => Some(authority.clone()),
        _ => None,
    };
    let global = CredentialConfig::from_env(&env).expect("global credential");
    let mut defaults = CredentialDefaults::from_env(&env).expect("defaults");
    if !allowed.is_empty() {
        defaults = defaults
            .with_allowed_authority_hosts(allowed, "--allowed-authority-hosts")
            .expect("allowed hosts");
    }
    let sources = Arc::new(CredentialSources::new(
        Credentials::new(reqwest::Client::new()),
        Some(global),
        defaults,
    ));
    h.shared = Harness::shared(&h.api, &h.running.base_url, sources);
    h
}

fn secret_with(name: &str, pairs: &[(&str, &str)]) -> serde_json::Value {
    use base64::Engine;
    let b64 = |v: &str| base64::engine::general_purpose::STANDARD.encode(v);
    let mut data = serde_json::Map::new();
    for (k, v) in [
        ("AZURE_SUBSCRIPTION_ID", SUB),
        ("AZURE_TENANT_ID", TENANT),
        ("AZURE_CLIENT_ID", CLIENT),
    ]
    .iter()
    .chain(pairs)
    {
        data.insert(k.to_string(), json!(b64(v)));
    }
    json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": NS}, "data": data})
}

/// The reported attack: `AZURE_USE_WORKLOAD_IDENTITY=true` and `AZURE_AUTHORITY_HOST=<attacker>` in a namespace
/// Secret made the reconciler post the operator's service-account token to the attacker.
#[tokio::test]
async fn a_namespace_secret_cannot_send_the_operators_token_anywhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = operator_with_workload_identity(&dir, vec![]).await;
    let evil = attacker().await;
    h.api.insert(secret_with(
        "armgen-credential",
        &[
            ("AZURE_USE_WORKLOAD_IDENTITY", "true"),
            ("AZURE_AUTHORITY_HOST", &evil.url),
        ],
    ));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CredentialsNotAllowed"),
        "{message}"
    );
    assert!(
        message.starts_with("Secret team-a/armgen-credential: key AZURE_USE_WORKLOAD_IDENTITY: not allowed"),
        "{message}"
    );
    assert_eq!(
        evil.connections.load(Ordering::SeqCst),
        0,
        "nothing reached the attacker's host"
    );
    assert_eq!(h.sim.issued_tokens(), 0, "no token exchange at all");
    assert_eq!(h.sim.traffic().len(), 0, "nothing reached ARM");

    // Without the flag, the Secret's own client secret may not go to the attacker's host either.
    h.api.insert(secret_with(
        "armgen-credential",
        &[("AZURE_CLIENT_SECRET", SECRET), ("AZURE_AUTHORITY_HOST", &evil.url)],
    ));
    h.reconcile("ManagedCluster", "demo").await;
    let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "CredentialsNotAllowed"),
        "{message}"
    );
    assert!(
        message.starts_with(
            "Secret team-a/armgen-credential: key AZURE_AUTHORITY_HOST: not an authority host the operator allows"
        ),
        "{message}"
    );
    assert!(message.contains("https://login.microsoftonline.com/"), "{message}");
    assert_eq!(
        evil.connections.load(Ordering::SeqCst),
        0,
        "nothing reached the attacker's host"
    );
    assert_eq!(h.sim.issued_tokens(), 0);
}

#[tokio::test]
async fn a_namespace_secret_cannot_use_the_nodes_managed_identity_or_the_operators_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = operator_with_workload_identity(&dir, vec![]).await;
    let operator_token_file = dir.path().join("azure-identity-token").display().to_string();
    let identity_endpoint = format!("{}/metadata/identity/oauth2/token", h.running.base_url);
    for (key, value) in [
        ("AZURE_USE_MANAGED_IDENTITY", "true"),
        ("AZURE_FEDERATED_TOKEN_FILE", operator_token_file.as_str()),
        ("AZURE_IDENTITY_ENDPOINT", identity_endpoint.as_str()),
    ] {
        h.api.insert(secret_with("armgen-credential", &[(key, value)]));
        h.apply("ManagedCluster", "demo", cluster_spec()).await;
        h.reconcile("ManagedCluster", "demo").await;
        let (status, reason, message) = h.ready("ManagedCluster", "demo").await;
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "CredentialsNotAllowed"),
            "{key}: {message}"
        );
        assert!(
            message.starts_with(&format!("Secret team-a/armgen-credential: key {key}: not allowed")),
            "{message}"
        );
        assert!(!message.contains(value), "the value is not echoed: {message}");
        assert_eq!(h.sim.issued_tokens(), 0, "{key}: no token was issued");
        assert_eq!(h.sim.traffic().len(), 0, "{key}: nothing reached ARM");
    }
}

#[tokio::test]
async fn an_allow_listed_authority_host_works_and_others_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let evil = attacker().await;
    // The operator's own authority is the public cloud here (always allowed); it allows the simulator's fake Entra
    // by flag.
    let h = operator_with_workload_identity(&dir, vec![]).await;
    let sim_authority: url::Url = format!("{}/", h.running.base_url).parse().expect("URL");
    let defaults = CredentialDefaults::default()
        .with_allowed_authority_hosts([sim_authority.clone()], "--allowed-authority-hosts")
        .expect("allowed");
    assert!(!defaults.is_allowed_authority(&evil.url.parse().expect("URL")));
    let sources = Arc::new(CredentialSources::new(
        Credentials::new(reqwest::Client::new()),
        None,
        defaults,
    ));
    let mut h = h;
    h.shared = Harness::shared(&h.api, &h.running.base_url, sources);

    h.api.insert(secret_with(
        "armgen-credential",
        &[
            ("AZURE_CLIENT_SECRET", SECRET),
            ("AZURE_AUTHORITY_HOST", sim_authority.as_str()),
        ],
    ));
    h.apply("ManagedCluster", "demo", cluster_spec()).await;
    h.converge("ManagedCluster", "demo").await;
    let ready = h.ready("ManagedCluster", "demo").await;
    assert_eq!(ready.0, "True", "{ready:?}");
    assert_eq!(
        h.sim.issued_tokens(),
        1,
        "the tenant's own client secret, at the allowed host"
    );

    // The tenant's own federated token, inline, at the allowed host: fine too (the simulator only accepts the
    // operator's token, so this is the operator's token copied by hand — the point is the route, not the token).
    h.api.insert(secret_with(
        "team-b-cred",
        &[
            ("AZURE_FEDERATED_TOKEN", OPERATOR_TOKEN),
            ("AZURE_AUTHORITY_HOST", sim_authority.as_str()),
        ],
    ));
    h.apply_with(
        "ManagedCluster",
        "other",
        cluster_spec(),
        json!({CREDENTIAL_FROM_ANNOTATION: "team-b-cred"}),
    )
    .await;
    h.converge("ManagedCluster", "other").await;
    let ready = h.ready("ManagedCluster", "other").await;
    assert_eq!(ready.0, "True", "{ready:?}");

    // A cloud the operator did not list is refused (before any request), as is the attacker's host.
    h.api.insert(secret_with(
        "armgen-credential",
        &[
            ("AZURE_CLIENT_SECRET", SECRET),
            ("AZURE_AUTHORITY_HOST", "https://login.chinacloudapi.cn/"),
        ],
    ));
    h.reconcile("ManagedCluster", "demo").await;
    let (_, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(reason, "CredentialsNotAllowed", "{message}");
    h.api.insert(secret_with(
        "armgen-credential",
        &[("AZURE_CLIENT_SECRET", SECRET), ("AZURE_AUTHORITY_HOST", &evil.url)],
    ));
    h.reconcile("ManagedCluster", "demo").await;
    let (_, reason, message) = h.ready("ManagedCluster", "demo").await;
    assert_eq!(reason, "CredentialsNotAllowed", "{message}");
    assert_eq!(evil.connections.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_credential_annotation_must_name_a_secret_of_the_namespace() {
    let dir = tempfile::tempdir().expect("tempdir");
    let h = operator_with_workload_identity(&dir, vec![]).await;
    for (i, bad) in [
        "../kube-system/operator-creds",
        "kube-system/armgen-credential",
        "..",
        "Creds",
    ]
    .iter()
    .enumerate()
    {
        let name = format!("bad-{i}");
        h.apply_with(
            "ManagedCluster",
            &name,
            cluster_spec(),
            json!({CREDENTIAL_FROM_ANNOTATION: bad}),
        )
        .await;
        h.api.clear_requests();
        let action = h.reconcile("ManagedCluster", &name).await;
        assert_eq!(
            action,
            Some(kube::runtime::controller::Action::await_change()),
            "fixed by editing the object"
        );
        let (status, reason, message) = h.ready("ManagedCluster", &name).await;
        assert_eq!(
            (status.as_str(), reason.as_str()),
            ("False", "InvalidCredentialReference"),
            "{message}"
        );
        assert!(
            message.starts_with("annotation armgen.dev/credential-from: must name a Secret"),
            "{message}"
        );
        assert_eq!(h.api.count("GET", "/secrets"), 0, "{bad:?}: no Secret was read");
        assert_eq!(h.sim.traffic().len(), 0, "{bad:?}: nothing reached ARM");
    }
}
