//! Credentials against a fake Entra token endpoint and a fake IMDS, served by axum on
//! 127.0.0.1 inside the test.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arm_client::credentials::{
    ARM_SCOPE, AZURE_PUBLIC_CLOUD, AccessToken, AuthMethod, Cached, ClientSecret, CredentialConfig, CredentialDefaults,
    CredentialError, Credentials, FederatedToken, IMDS_ENDPOINT, ManagedIdentity, Secret, TokenCredential,
    WorkloadIdentity, credential_secret_name,
};
use axum::Json;
use axum::extract::{Form, Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use url::Url;

const TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT: &str = "11111111-2222-3333-4444-555555555555";

// ---------------------------------------------------------------------------------------------
// The fake

#[derive(Default)]
struct FakeState {
    token_requests: Vec<(String, HashMap<String, String>)>,
    imds_requests: Vec<(HashMap<String, String>, Option<String>)>,
    expires_in: Option<u64>,
    /// Answer token requests with 401 and an Entra error body echoing the credential.
    fail: bool,
    issued: u64,
}

#[derive(Clone, Default)]
struct Fake(Arc<Mutex<FakeState>>);

impl Fake {
    fn with<R>(&self, f: impl FnOnce(&mut FakeState) -> R) -> R {
        f(&mut self.0.lock().unwrap())
    }
    fn token_requests(&self) -> Vec<(String, HashMap<String, String>)> {
        self.with(|s| s.token_requests.clone())
    }
    fn exchanges(&self) -> usize {
        self.with(|s| s.token_requests.len())
    }
}

async fn token_endpoint(
    State(fake): State<Fake>,
    Path(tenant): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    // Long enough for concurrent callers to pile up behind one refresh.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (fail, n, expires_in) = fake.with(|s| {
        s.token_requests.push((tenant, form.clone()));
        s.issued += 1;
        (s.fail, s.issued, s.expires_in.unwrap_or(3600))
    });
    if fail {
        let echoed = form
            .get("client_assertion")
            .or_else(|| form.get("client_secret"))
            .cloned()
            .unwrap_or_default();
        let body = serde_json::json!({
            "error": "invalid_client",
            "error_description": format!("AADSTS700024: Client assertion {echoed} is not within its valid time range."),
            "error_codes": [700024],
        });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    }
    Json(serde_json::json!({
        "token_type": "Bearer",
        "expires_in": expires_in,
        "ext_expires_in": expires_in,
        "access_token": format!("tok-{n}"),
    }))
    .into_response()
}

async fn imds(State(fake): State<Fake>, Query(query): Query<HashMap<String, String>>, headers: HeaderMap) -> Response {
    let metadata = headers
        .get("Metadata")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let n = fake.with(|s| {
        s.imds_requests.push((query.clone(), metadata.clone()));
        s.issued += 1;
        s.issued
    });
    if metadata.as_deref() != Some("true") {
        let body = serde_json::json!({
            "error": "invalid_request",
            "error_description": "Required metadata header not specified",
        });
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    if query.get("client_id").map(String::as_str) == Some("unknown-client") {
        let body = serde_json::json!({"error": "invalid_request", "error_description": "Identity not found"});
        return (StatusCode::BAD_REQUEST, Json(body)).into_response();
    }
    Json(serde_json::json!({
        "access_token": format!("mi-tok-{n}"),
        "expires_in": "3599",
        "expires_on": "1900000000",
        "resource": query.get("resource"),
        "token_type": "Bearer",
    }))
    .into_response()
}

/// Starts the fake; returns it and its base URL `http://127.0.0.1:PORT/`.
async fn start() -> (Fake, Url) {
    let fake = Fake::default();
    let app = axum::Router::new()
        .route("/{tenant}/oauth2/v2.0/token", post(token_endpoint))
        .route("/metadata/identity/oauth2/token", get(imds))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (fake, Url::parse(&format!("http://{addr}/")).unwrap())
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn token_file(content: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), content).unwrap();
    file
}

fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

fn assert_hidden(text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "{secret:?} leaked into {text:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Token exchanges

#[tokio::test]
async fn workload_identity_sends_exactly_the_form_fields() {
    let (fake, base) = start().await;
    let file = token_file("federated-assertion-1\n");
    let credential = WorkloadIdentity::new(
        http(),
        base,
        TENANT,
        CLIENT,
        FederatedToken::File(file.path().to_path_buf()),
    );
    let token = credential.token(ARM_SCOPE).await.unwrap();
    assert_eq!(token.token.expose(), "tok-1");
    let remaining = token.remaining().as_secs();
    assert!((3590..=3600).contains(&remaining), "{remaining}");

    let requests = fake.token_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].0, TENANT);
    assert_eq!(
        requests[0].1,
        form(&[
            ("grant_type", "client_credentials"),
            ("client_id", CLIENT),
            ("scope", ARM_SCOPE),
            (
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
            ),
            ("client_assertion", "federated-assertion-1"),
        ])
    );
}

#[tokio::test]
async fn inline_federated_token_is_sent_as_the_assertion() {
    let (fake, base) = start().await;
    let credential = WorkloadIdentity::new(
        http(),
        base,
        TENANT,
        CLIENT,
        FederatedToken::Inline(Secret::new("inline-assertion")),
    );
    credential.token(ARM_SCOPE).await.unwrap();
    assert_eq!(fake.token_requests()[0].1["client_assertion"], "inline-assertion");
}

#[tokio::test]
async fn token_file_is_read_again_after_rotation() {
    let (fake, base) = start().await;
    let file = token_file("assertion-before-rotation");
    let credential = Cached::new(WorkloadIdentity::new(
        http(),
        base,
        TENANT,
        CLIENT,
        FederatedToken::File(file.path().to_path_buf()),
    ));
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");

    // The kubelet rotates the projected token.
    std::fs::write(file.path(), "assertion-after-rotation").unwrap();
    // Still cached: no exchange.
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");
    assert_eq!(fake.exchanges(), 1);

    // Force expiry: the next exchange carries the new assertion.
    credential.invalidate().await;
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-2");
    let requests = fake.token_requests();
    assert_eq!(requests[0].1["client_assertion"], "assertion-before-rotation");
    assert_eq!(requests[1].1["client_assertion"], "assertion-after-rotation");
}

#[tokio::test]
async fn ten_concurrent_callers_share_one_exchange() {
    let (fake, base) = start().await;
    let credential = Arc::new(Cached::new(WorkloadIdentity::new(
        http(),
        base,
        TENANT,
        CLIENT,
        FederatedToken::Inline(Secret::new("assertion")),
    )));
    let calls = (0..10).map(|_| {
        let credential = credential.clone();
        tokio::spawn(async move { credential.token(ARM_SCOPE).await })
    });
    let tokens: Vec<AccessToken> = futures::future::join_all(calls)
        .await
        .into_iter()
        .map(|r| r.unwrap().unwrap())
        .collect();
    assert_eq!(fake.exchanges(), 1);
    assert!(tokens.iter().all(|t| t.token.expose() == "tok-1"));

    // Another scope is cached separately.
    credential.token("https://vault.azure.net/.default").await.unwrap();
    assert_eq!(fake.exchanges(), 2);
}

#[tokio::test]
async fn tokens_near_expiry_are_refreshed() {
    let (fake, base) = start().await;
    fake.with(|s| s.expires_in = Some(200)); // inside the 5-minute refresh window
    let credential = Cached::new(ClientSecret::new(http(), base, TENANT, CLIENT, Secret::new("pw")));
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-2");
    assert_eq!(fake.exchanges(), 2);

    fake.with(|s| s.expires_in = Some(3600));
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-3");
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-3");
    assert_eq!(fake.exchanges(), 3);
}

#[tokio::test]
async fn managed_identity_sends_metadata_header_and_client_id() {
    let (fake, base) = start().await;
    let endpoint = base.join("metadata/identity/oauth2/token").unwrap();
    let credential = ManagedIdentity::new(http(), endpoint.clone(), Some("mi-client".to_string()));
    let token = credential.token(ARM_SCOPE).await.unwrap();
    assert_eq!(token.token.expose(), "mi-tok-1");
    let remaining = token.remaining().as_secs();
    assert!(
        (3590..=3599).contains(&remaining),
        "expires_in given as a string: {remaining}"
    );

    let system_assigned = ManagedIdentity::new(http(), endpoint, None);
    system_assigned.token(ARM_SCOPE).await.unwrap();

    let requests = fake.with(|s| s.imds_requests.clone());
    assert_eq!(
        requests[0],
        (
            form(&[
                ("api-version", "2018-02-01"),
                ("resource", "https://management.azure.com"),
                ("client_id", "mi-client"),
            ]),
            Some("true".to_string())
        )
    );
    assert_eq!(
        requests[1].0,
        form(&[
            ("api-version", "2018-02-01"),
            ("resource", "https://management.azure.com")
        ])
    );
}

#[tokio::test]
async fn client_secret_sends_the_secret() {
    let (fake, base) = start().await;
    let credential = ClientSecret::new(http(), base, TENANT, CLIENT, Secret::new("app-password"));
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");
    assert_eq!(
        fake.token_requests()[0].1,
        form(&[
            ("grant_type", "client_credentials"),
            ("client_id", CLIENT),
            ("scope", ARM_SCOPE),
            ("client_secret", "app-password"),
        ])
    );
}

#[tokio::test]
async fn entra_errors_are_surfaced_without_secrets() {
    let (fake, base) = start().await;
    fake.with(|s| s.fail = true);
    let assertion = "eyJhbGciOiJSUzI1NiJ9.SECRET-ASSERTION.sig";
    let credential = Cached::new(WorkloadIdentity::new(
        http(),
        base.clone(),
        TENANT,
        CLIENT,
        FederatedToken::Inline(Secret::new(assertion)),
    ));
    let error = credential.token(ARM_SCOPE).await.unwrap_err();
    let shown = error.to_string();
    assert!(shown.contains("workload identity"), "{shown}");
    assert!(shown.contains(&format!("{base}{TENANT}/oauth2/v2.0/token")), "{shown}");
    assert!(shown.contains("HTTP 401"), "{shown}");
    assert!(shown.contains("invalid_client"), "{shown}");
    assert!(
        shown.contains("AADSTS700024: Client assertion <redacted> is not within"),
        "{shown}"
    );
    assert_hidden(&shown, &[assertion, "SECRET-ASSERTION"]);
    assert_hidden(&format!("{error:?}"), &[assertion, "SECRET-ASSERTION"]);
    assert_hidden(&format!("{credential:?}"), &[assertion]);
    match &error {
        CredentialError::Rejected {
            status,
            error,
            description,
            ..
        } => {
            assert_eq!(*status, 401);
            assert_eq!(error.as_deref(), Some("invalid_client"));
            assert!(description.as_deref().unwrap_or_default().starts_with("AADSTS700024"));
        }
        other => panic!("unexpected {other:?}"),
    }

    // The error is not cached.
    fake.with(|s| s.fail = false);
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-2");
    assert_eq!(fake.exchanges(), 2);

    // The same for a client secret.
    fake.with(|s| s.fail = true);
    let secret = "SUPER-SECRET-APP-PASSWORD";
    let credential = ClientSecret::new(http(), base, TENANT, CLIENT, Secret::new(secret));
    let error = credential.token(ARM_SCOPE).await.unwrap_err();
    assert!(error.to_string().contains("client secret"), "{error}");
    assert_hidden(&error.to_string(), &[secret]);
    assert_hidden(&format!("{error:?}"), &[secret]);
    assert_hidden(&format!("{credential:?}"), &[secret]);
}

#[tokio::test]
async fn concurrent_callers_share_a_failed_refresh() {
    let (fake, base) = start().await;
    fake.with(|s| s.fail = true);
    let credential = Arc::new(Cached::new(ClientSecret::new(
        http(),
        base,
        TENANT,
        CLIENT,
        Secret::new("pw-123456"),
    )));
    let calls = (0..5).map(|_| {
        let credential = credential.clone();
        tokio::spawn(async move { credential.token(ARM_SCOPE).await })
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(|r| matches!(r, Ok(Err(_)))));
    assert_eq!(
        fake.exchanges(),
        1,
        "waiters share the failed refresh instead of retrying"
    );
    // A later caller tries again.
    credential.token(ARM_SCOPE).await.unwrap_err();
    assert_eq!(fake.exchanges(), 2);
}

#[tokio::test]
async fn managed_identity_errors_name_the_endpoint() {
    let (_fake, base) = start().await;
    let endpoint = base.join("metadata/identity/oauth2/token").unwrap();
    let error = ManagedIdentity::new(http(), endpoint.clone(), Some("unknown-client".into()))
        .token(ARM_SCOPE)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("managed identity: {endpoint} answered HTTP 400: invalid_request: Identity not found")
    );

    // An unreachable endpoint; the query (resource, client_id) is not shown.
    let unreachable = Url::parse("http://127.0.0.1:1/metadata/identity/oauth2/token").unwrap();
    let error = ManagedIdentity::new(http(), unreachable, Some("mi".into()))
        .token(ARM_SCOPE)
        .await
        .unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.starts_with("managed identity: request to http://127.0.0.1:1/metadata/identity/oauth2/token failed"),
        "{shown}"
    );
    assert!(!shown.contains("api-version"), "{shown}");
}

#[tokio::test]
async fn a_failed_refresh_falls_back_to_the_still_valid_token() {
    let (fake, base) = start().await;
    fake.with(|s| s.expires_in = Some(200)); // due for refresh, but valid for minutes
    let credential = Cached::new(ClientSecret::new(
        http(),
        base,
        TENANT,
        CLIENT,
        Secret::new("pw-123456"),
    ));
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");
    fake.with(|s| s.fail = true);
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-1");
    assert_eq!(fake.exchanges(), 2, "the refresh was attempted");
    fake.with(|s| s.fail = false);
    assert_eq!(credential.token(ARM_SCOPE).await.unwrap().token.expose(), "tok-3");
}

#[tokio::test]
async fn missing_token_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("azure-identity-token");
    let credential = WorkloadIdentity::new(
        http(),
        Url::parse("http://127.0.0.1:1/").unwrap(),
        TENANT,
        CLIENT,
        FederatedToken::File(path.clone()),
    );
    let error = credential.token(ARM_SCOPE).await.unwrap_err();
    assert!(matches!(error, CredentialError::TokenFile { .. }));
    assert!(error.to_string().contains(&path.display().to_string()), "{error}");

    std::fs::write(&path, "  \n").unwrap();
    let error = credential.token(ARM_SCOPE).await.unwrap_err();
    assert!(error.to_string().contains("is empty"), "{error}");
}

#[tokio::test]
async fn invalid_token_responses_are_reported_without_the_body() {
    let app = axum::Router::new().route(
        "/{tenant}/oauth2/v2.0/token",
        post(|| async { Json(serde_json::json!({"access_token": "LEAKY-TOKEN", "expires_in": "later"})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let base = Url::parse(&format!("http://{addr}/")).unwrap();
    let error = ClientSecret::new(http(), base, TENANT, CLIENT, Secret::new("pw"))
        .token(ARM_SCOPE)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("expires_in is not a number"), "{error}");
    assert_hidden(&error.to_string(), &["LEAKY-TOKEN"]);
    assert_hidden(&format!("{error:?}"), &["LEAKY-TOKEN"]);
}

// ---------------------------------------------------------------------------------------------
// Configuration from the environment

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k| map.get(k).cloned()
}

const BASE_ENV: [(&str, &str); 3] = [
    ("AZURE_SUBSCRIPTION_ID", "sub-1"),
    ("AZURE_TENANT_ID", TENANT),
    ("AZURE_CLIENT_ID", CLIENT),
];

fn with_base(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    BASE_ENV.iter().chain(extra).copied().collect()
}

#[test]
fn env_federated_token_file_selects_workload_identity() {
    let config = CredentialConfig::from_env(env(&with_base(&[
        (
            "AZURE_FEDERATED_TOKEN_FILE",
            "/var/run/secrets/azure/tokens/azure-identity-token",
        ),
        ("AZURE_CLIENT_SECRET", "ignored-secret"),
        ("AZURE_AUTHORITY_HOST", "https://login.microsoftonline.us/"),
    ])))
    .unwrap();
    assert_eq!(config.subscription_id, "sub-1");
    assert_eq!(config.source, "environment");
    assert_eq!(config.authority_host.as_str(), "https://login.microsoftonline.us/");
    assert_eq!(
        config.auth,
        AuthMethod::WorkloadIdentity {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            token: FederatedToken::File("/var/run/secrets/azure/tokens/azure-identity-token".into()),
        }
    );
    assert_eq!(config.tenant_id(), Some(TENANT));
    assert_eq!(config.client_id(), Some(CLIENT));
}

#[test]
fn env_managed_identity_flag_wins() {
    let config = CredentialConfig::from_env(env(&[
        ("AZURE_SUBSCRIPTION_ID", "sub-1"),
        ("AZURE_CLIENT_ID", "mi-client"),
        ("AZURE_USE_MANAGED_IDENTITY", "true"),
        ("AZURE_FEDERATED_TOKEN_FILE", "/token"),
        ("AZURE_CLIENT_SECRET", "s"),
    ]))
    .unwrap();
    assert_eq!(
        config.auth,
        AuthMethod::ManagedIdentity {
            client_id: Some("mi-client".into()),
            endpoint: Url::parse(IMDS_ENDPOINT).unwrap(),
        }
    );
    assert_eq!(config.authority_host.as_str(), "https://login.microsoftonline.com/");

    let config = CredentialConfig::from_env(env(&[
        ("AZURE_SUBSCRIPTION_ID", "sub-1"),
        ("AZURE_USE_MANAGED_IDENTITY", "TRUE"),
        ("AZURE_IDENTITY_ENDPOINT", "http://127.0.0.1:9999/token"),
    ]))
    .unwrap();
    assert_eq!(
        config.auth,
        AuthMethod::ManagedIdentity {
            client_id: None,
            endpoint: Url::parse("http://127.0.0.1:9999/token").unwrap(),
        }
    );
}

#[test]
fn env_client_secret_is_the_fallback() {
    let config = CredentialConfig::from_env(env(&with_base(&[
        ("AZURE_CLIENT_SECRET", "app-password"),
        ("AZURE_FEDERATED_TOKEN_FILE", ""), // empty counts as unset
        ("AZURE_USE_MANAGED_IDENTITY", "false"),
    ])))
    .unwrap();
    assert_eq!(
        config.auth,
        AuthMethod::ClientSecret {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            secret: Secret::new("app-password"),
        }
    );
    assert_hidden(&format!("{config:?}"), &["app-password"]);
    assert_hidden(&config.to_string(), &["app-password"]);
}

#[test]
fn env_errors_name_every_missing_variable() {
    let error = CredentialConfig::from_env(env(&[])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "environment: AZURE_SUBSCRIPTION_ID, AZURE_FEDERATED_TOKEN_FILE or AZURE_CLIENT_SECRET or \
         AZURE_USE_MANAGED_IDENTITY=true, AZURE_TENANT_ID, AZURE_CLIENT_ID are not set"
    );
    let error = CredentialConfig::from_env(env(&[
        ("AZURE_SUBSCRIPTION_ID", "s"),
        ("AZURE_CLIENT_ID", "c"),
        ("AZURE_FEDERATED_TOKEN_FILE", "/t"),
    ]))
    .unwrap_err();
    assert_eq!(error.to_string(), "environment: AZURE_TENANT_ID is not set");
    let error = CredentialConfig::from_env(env(&[("AZURE_USE_MANAGED_IDENTITY", "true")])).unwrap_err();
    assert_eq!(error.to_string(), "environment: AZURE_SUBSCRIPTION_ID is not set");
}

#[test]
fn env_invalid_values_are_named_but_not_echoed() {
    let error = CredentialConfig::from_env(env(&with_base(&[
        ("AZURE_CLIENT_SECRET", "s"),
        ("AZURE_USE_MANAGED_IDENTITY", "secret-looking-value"),
    ])))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "environment variable AZURE_USE_MANAGED_IDENTITY: expected true or false"
    );

    let error = CredentialConfig::from_env(env(&with_base(&[
        ("AZURE_CLIENT_SECRET", "s"),
        ("AZURE_AUTHORITY_HOST", "http://login.example.com/"),
    ])))
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("environment variable AZURE_AUTHORITY_HOST: an authority host must use https"),
        "{error}"
    );
    let error = CredentialConfig::from_env(env(&with_base(&[
        ("AZURE_CLIENT_SECRET", "s"),
        ("AZURE_AUTHORITY_HOST", "not a url with password hunter2"),
    ])))
    .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("environment variable AZURE_AUTHORITY_HOST: not a URL")
    );
    assert_hidden(&error.to_string(), &["hunter2"]);

    let error = CredentialConfig::from_env(env(&[
        ("AZURE_SUBSCRIPTION_ID", "s"),
        ("AZURE_TENANT_ID", "../../evil"),
        ("AZURE_CLIENT_ID", "c"),
        ("AZURE_CLIENT_SECRET", "x"),
    ]))
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "environment variable AZURE_TENANT_ID: a tenant ID must be a GUID or a domain name"
    );

    // Loopback http is accepted (local fakes).
    let config = CredentialConfig::from_env(env(&with_base(&[
        ("AZURE_CLIENT_SECRET", "s"),
        ("AZURE_AUTHORITY_HOST", "http://127.0.0.1:8080/"),
    ])))
    .unwrap();
    assert_eq!(config.authority_host.as_str(), "http://127.0.0.1:8080/");
}

#[test]
fn defaults_from_env() {
    let defaults = CredentialDefaults::from_env(env(&[
        (
            "AZURE_FEDERATED_TOKEN_FILE",
            "/var/run/secrets/azure/tokens/azure-identity-token",
        ),
        ("AZURE_AUTHORITY_HOST", "https://login.chinacloudapi.cn/"),
    ]))
    .unwrap();
    assert_eq!(defaults.authority_host.as_str(), "https://login.chinacloudapi.cn/");
    let allowed: Vec<&str> = defaults.allowed_authority_hosts.iter().map(Url::as_str).collect();
    assert_eq!(
        allowed,
        ["https://login.microsoftonline.com/", "https://login.chinacloudapi.cn/"],
        "the public cloud and the operator's own authority host"
    );
    assert_eq!(
        CredentialDefaults::from_env(env(&[])).unwrap(),
        CredentialDefaults::default()
    );
    assert_eq!(
        CredentialDefaults::default().allowed_authority_hosts,
        [Url::parse(AZURE_PUBLIC_CLOUD).unwrap()]
    );

    // --allowed-authority-hosts replaces the list; the operator's own host stays allowed; plain http only to
    // loopback.
    let defaults = defaults
        .with_allowed_authority_hosts(
            [Url::parse("https://login.microsoftonline.us").unwrap()],
            "--allowed-authority-hosts",
        )
        .unwrap();
    assert!(defaults.is_allowed_authority(&Url::parse("https://login.microsoftonline.us/").unwrap()));
    assert!(defaults.is_allowed_authority(&Url::parse("https://login.chinacloudapi.cn").unwrap()));
    assert!(!defaults.is_allowed_authority(&Url::parse(AZURE_PUBLIC_CLOUD).unwrap()));
    let error = CredentialDefaults::default()
        .with_allowed_authority_hosts(
            [Url::parse("http://login.example.com/").unwrap()],
            "--allowed-authority-hosts",
        )
        .unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("--allowed-authority-hosts: an authority host must use https"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration from Secrets

const SECRET: &str = "team-a/armgen-credential";

fn data(pairs: &[(&str, &[u8])]) -> BTreeMap<String, Vec<u8>> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
}

fn base_data(extra: &[(&'static str, &'static [u8])]) -> BTreeMap<String, Vec<u8>> {
    let mut pairs: Vec<(&str, &[u8])> = vec![
        ("AZURE_SUBSCRIPTION_ID", b"sub-a"),
        ("AZURE_TENANT_ID", TENANT.as_bytes()),
        ("AZURE_CLIENT_ID", CLIENT.as_bytes()),
    ];
    pairs.extend_from_slice(extra);
    data(&pairs)
}

fn operator_defaults() -> CredentialDefaults {
    CredentialDefaults::default()
}

#[test]
fn secret_missing_keys_are_named() {
    let mut d = base_data(&[("AZURE_CLIENT_SECRET", b"pw-value")]);
    d.remove("AZURE_CLIENT_ID");
    let error = CredentialConfig::from_secret(SECRET, &d, &operator_defaults()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Secret team-a/armgen-credential: key AZURE_CLIENT_ID is missing"
    );
    assert_hidden(&format!("{error} {error:?}"), &["pw-value"]);

    let error = CredentialConfig::from_secret(SECRET, &data(&[]), &operator_defaults()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Secret team-a/armgen-credential: keys AZURE_SUBSCRIPTION_ID, AZURE_FEDERATED_TOKEN or AZURE_CLIENT_SECRET, \
         AZURE_TENANT_ID, AZURE_CLIENT_ID are missing"
    );
}

#[test]
fn secret_invalid_utf8_is_reported_by_key() {
    let d = base_data(&[("AZURE_CLIENT_SECRET", b"\xff\xfe")]);
    let error = CredentialConfig::from_secret(SECRET, &d, &operator_defaults()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Secret team-a/armgen-credential: key AZURE_CLIENT_SECRET is not valid UTF-8"
    );
}

#[test]
fn secret_methods_and_precedence() {
    let defaults = operator_defaults();

    let config =
        CredentialConfig::from_secret(SECRET, &base_data(&[("AZURE_CLIENT_SECRET", b"pw")]), &defaults).unwrap();
    assert_eq!(config.source, "Secret team-a/armgen-credential");
    assert_eq!(config.subscription_id, "sub-a");
    assert!(matches!(config.auth, AuthMethod::ClientSecret { ref secret, .. } if secret.expose() == "pw"));

    let config = CredentialConfig::from_secret(
        SECRET,
        &base_data(&[
            ("AZURE_FEDERATED_TOKEN", b"inline-jwt\n"),
            ("AZURE_CLIENT_SECRET", b"pw"),
        ]),
        &defaults,
    )
    .unwrap();
    assert_eq!(
        config.auth,
        AuthMethod::WorkloadIdentity {
            tenant_id: TENANT.into(),
            client_id: CLIENT.into(),
            token: FederatedToken::Inline(Secret::new("inline-jwt")),
        }
    );
}

/// A namespace Secret is tenant input: it can never use the operator's own federated token, the node's managed
/// identity, a file of the operator's pod or another identity endpoint — whatever else it says.
#[test]
fn secret_keys_that_would_use_the_operators_identity_are_refused() {
    let defaults = operator_defaults();
    for (key, value, says) in [
        (
            "AZURE_USE_WORKLOAD_IDENTITY",
            &b"true"[..],
            "the operator's own federated token",
        ),
        (
            "AZURE_USE_MANAGED_IDENTITY",
            b"true",
            "managed identity of the operator's node",
        ),
        (
            "AZURE_FEDERATED_TOKEN_FILE",
            b"/var/run/secrets/azure/tokens/azure-identity-token",
            "a file on the operator's filesystem",
        ),
        (
            "AZURE_IDENTITY_ENDPOINT",
            b"http://169.254.169.254/x",
            "the operator's setting",
        ),
    ] {
        // Even next to a perfectly good client secret.
        let d = base_data(&[("AZURE_CLIENT_SECRET", b"pw")]);
        let mut d = d;
        d.insert(key.to_string(), value.to_vec());
        let error = CredentialConfig::from_secret(SECRET, &d, &defaults).unwrap_err();
        assert!(matches!(error, CredentialError::NotAllowed { .. }), "{key}: {error:?}");
        let text = error.to_string();
        assert!(
            text.starts_with(&format!(
                "Secret team-a/armgen-credential: key {key}: not allowed in a namespace credential"
            )),
            "{text}"
        );
        assert!(text.contains(says), "{text}");
        assert_hidden(&text, &["pw", "/var/run/secrets", "169.254"]);
    }
}

#[test]
fn secret_authority_host_overrides_the_default() {
    let defaults = CredentialDefaults {
        authority_host: Url::parse("https://login.microsoftonline.us/").unwrap(),
        ..CredentialDefaults::default()
    };
    let config =
        CredentialConfig::from_secret(SECRET, &base_data(&[("AZURE_CLIENT_SECRET", b"pw")]), &defaults).unwrap();
    assert_eq!(config.authority_host.as_str(), "https://login.microsoftonline.us/");
    // The public cloud is allowed by default; so is the operator's own host, with or without the trailing `/`.
    for (host, expected) in [
        (
            &b"https://login.microsoftonline.com"[..],
            "https://login.microsoftonline.com/",
        ),
        (b"https://LOGIN.microsoftonline.us", "https://login.microsoftonline.us/"),
    ] {
        let config = CredentialConfig::from_secret(
            SECRET,
            &base_data(&[("AZURE_CLIENT_SECRET", b"pw"), ("AZURE_AUTHORITY_HOST", host)]),
            &defaults,
        )
        .unwrap();
        assert_eq!(config.authority_host.as_str(), expected);
    }
    // Any other host is refused, naming the Secret, the key and the allowed hosts (not the value).
    for host in [
        &b"https://login.chinacloudapi.cn"[..],
        b"https://attacker.example",
        b"https://login.microsoftonline.com.attacker.example/",
        b"https://login.microsoftonline.com@attacker.example/",
        b"http://127.0.0.1:9/",
    ] {
        let error = CredentialConfig::from_secret(
            SECRET,
            &base_data(&[("AZURE_CLIENT_SECRET", b"pw"), ("AZURE_AUTHORITY_HOST", host)]),
            &defaults,
        )
        .unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("Secret team-a/armgen-credential: key AZURE_AUTHORITY_HOST: "),
            "{text}"
        );
        assert!(
            matches!(
                error,
                CredentialError::NotAllowed { .. } | CredentialError::InvalidValue { .. }
            ),
            "{error:?}"
        );
        assert_hidden(&text, &["attacker", "chinacloudapi", "127.0.0.1"]);
    }
    let allowed = defaults
        .clone()
        .with_allowed_authority_hosts(
            [Url::parse("https://login.chinacloudapi.cn/").unwrap()],
            "--allowed-authority-hosts",
        )
        .unwrap();
    let config = CredentialConfig::from_secret(
        SECRET,
        &base_data(&[
            ("AZURE_CLIENT_SECRET", b"pw"),
            ("AZURE_AUTHORITY_HOST", b"https://login.chinacloudapi.cn"),
        ]),
        &allowed,
    )
    .unwrap();
    assert_eq!(config.authority_host.as_str(), "https://login.chinacloudapi.cn/");

    let error = CredentialConfig::from_secret(
        SECRET,
        &base_data(&[("AZURE_CLIENT_SECRET", b"pw"), ("AZURE_TENANT_ID", b"../evil")]),
        &defaults,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Secret team-a/armgen-credential: key AZURE_TENANT_ID: a tenant ID must be a GUID or a domain name"
    );
}

#[test]
fn kube_secret_is_named_namespace_slash_name() {
    let secret = k8s_openapi::api::core::v1::Secret {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some("creds".into()),
            namespace: Some("team-b".into()),
            ..Default::default()
        },
        data: Some(
            [(
                "AZURE_SUBSCRIPTION_ID".to_string(),
                k8s_openapi::ByteString(b"sub".to_vec()),
            )]
            .into_iter()
            .collect(),
        ),
        ..Default::default()
    };
    let error = CredentialConfig::from_kube_secret(&secret, &operator_defaults()).unwrap_err();
    assert!(error.to_string().starts_with("Secret team-b/creds: keys "), "{error}");
}

#[test]
fn annotation_selects_the_secret() {
    assert_eq!(credential_secret_name(None).unwrap(), "armgen-credential");
    let mut annotations = BTreeMap::new();
    annotations.insert("other".to_string(), "x".to_string());
    assert_eq!(credential_secret_name(Some(&annotations)).unwrap(), "armgen-credential");
    annotations.insert("armgen.dev/credential-from".to_string(), "prod-creds".to_string());
    assert_eq!(credential_secret_name(Some(&annotations)).unwrap(), "prod-creds");
    annotations.insert("armgen.dev/credential-from".to_string(), " team.creds-2 ".to_string());
    assert_eq!(credential_secret_name(Some(&annotations)).unwrap(), "team.creds-2");
}

#[test]
fn annotation_must_be_a_secret_name() {
    let long = "a".repeat(254);
    let long_label = "b".repeat(64);
    for bad in [
        "../kube-system/operator-token",
        "kube-system/armgen-credential",
        "..",
        "a..b",
        ".hidden",
        "creds-",
        "Creds",
        "creds?x=1",
        "creds%2F..",
        "creds#x",
        "cr eds",
        long.as_str(),
        long_label.as_str(),
    ] {
        let mut annotations = BTreeMap::new();
        annotations.insert("armgen.dev/credential-from".to_string(), bad.to_string());
        let error = credential_secret_name(Some(&annotations)).unwrap_err();
        assert!(
            error.to_string().starts_with(
                "annotation armgen.dev/credential-from: must name a Secret in the resource's own namespace"
            ),
            "{bad:?}: {error}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Redaction

#[test]
fn debug_never_shows_secret_material() {
    let defaults = operator_defaults();
    let secret_config = CredentialConfig::from_secret(
        SECRET,
        &base_data(&[("AZURE_CLIENT_SECRET", b"client-secret-value")]),
        &defaults,
    )
    .unwrap();
    let token_config = CredentialConfig::from_secret(
        SECRET,
        &base_data(&[("AZURE_FEDERATED_TOKEN", b"federated-token-value")]),
        &defaults,
    )
    .unwrap();
    let token = AccessToken::new(
        Secret::new("access-token-value"),
        SystemTime::now() + Duration::from_secs(600),
    );
    let shown =
        format!("{secret_config:?} {secret_config:#?} {token_config:?} {token_config} {token:?} {token:#?} {token}");
    assert_hidden(
        &shown,
        &["client-secret-value", "federated-token-value", "access-token-value"],
    );
    assert!(shown.contains("<redacted>"));
    assert_eq!(token.bearer(), "Bearer access-token-value");
}

// ---------------------------------------------------------------------------------------------
// The registry

#[tokio::test]
async fn registry_reuses_and_replaces_credentials() {
    let (fake, base) = start().await;
    let defaults = CredentialDefaults {
        authority_host: base,
        ..operator_defaults()
    };
    let registry = Credentials::new(http());
    let config_v1 =
        CredentialConfig::from_secret(SECRET, &base_data(&[("AZURE_CLIENT_SECRET", b"pw-1")]), &defaults).unwrap();

    let a = registry.credential(&config_v1);
    let b = registry.credential(&config_v1.clone());
    assert!(Arc::ptr_eq(&a, &b));
    a.token(ARM_SCOPE).await.unwrap();
    b.token(ARM_SCOPE).await.unwrap();
    assert_eq!(fake.exchanges(), 1, "one cached credential per unchanged config");

    // The Secret is rotated: a new credential replaces the old one.
    let config_v2 =
        CredentialConfig::from_secret(SECRET, &base_data(&[("AZURE_CLIENT_SECRET", b"pw-2")]), &defaults).unwrap();
    let c = registry.credential(&config_v2);
    assert!(!Arc::ptr_eq(&a, &c));
    assert_eq!(registry.len(), 1);
    c.token(ARM_SCOPE).await.unwrap();
    assert_eq!(fake.token_requests()[1].1["client_secret"], "pw-2");

    // Another Secret is another source.
    let other = CredentialConfig::from_secret(
        "team-b/armgen-credential",
        &base_data(&[("AZURE_CLIENT_SECRET", b"pw-1")]),
        &defaults,
    )
    .unwrap();
    registry.credential(&other);
    assert_eq!(registry.len(), 2);
    assert!(registry.forget("Secret team-b/armgen-credential"));
    assert_eq!(registry.len(), 1);
    assert_hidden(&format!("{registry:?}"), &["pw-1", "pw-2"]);
}

#[test]
fn registry_is_bounded() {
    let registry = Credentials::with_max(http(), 2);
    let defaults = operator_defaults();
    let configs: Vec<CredentialConfig> = ["ns-1/c", "ns-2/c", "ns-3/c"]
        .iter()
        .map(|name| {
            CredentialConfig::from_secret(name, &base_data(&[("AZURE_CLIENT_SECRET", b"pw")]), &defaults).unwrap()
        })
        .collect();
    let first = registry.credential(&configs[0]);
    registry.credential(&configs[1]);
    // Touch the first so the second is the least recently used.
    assert!(Arc::ptr_eq(&first, &registry.credential(&configs[0])));
    registry.credential(&configs[2]);
    assert_eq!(registry.len(), 2);
    assert!(!registry.forget("Secret ns-2/c"));
    assert!(registry.forget("Secret ns-1/c"));
}
