//! The three token exchanges, directly on `reqwest`.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::future::BoxFuture;
use serde::Deserialize;
use url::Url;

use super::config::validate_tenant;
use super::{AccessToken, CredentialError, FederatedToken, Secret, TokenCredential};

/// The scope of Azure Resource Manager in the public cloud.
pub const ARM_SCOPE: &str = "https://management.azure.com/.default";

const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const WORKLOAD: &str = "workload identity";
const MANAGED: &str = "managed identity";
const CLIENT_SECRET: &str = "client secret";

/// Workload identity: exchanges a Kubernetes service-account token (federated credential) for an
/// access token at `{authority_host}/{tenant_id}/oauth2/v2.0/token`. A token file is read again
/// on every exchange. Wrap in [`Cached`](super::Cached) to avoid an exchange per call.
#[derive(Clone)]
pub struct WorkloadIdentity {
    http: reqwest::Client,
    authority_host: Url,
    tenant_id: String,
    client_id: String,
    token: FederatedToken,
}

impl WorkloadIdentity {
    /// A workload identity credential using `http` for the exchange.
    pub fn new(
        http: reqwest::Client,
        authority_host: Url,
        tenant_id: impl Into<String>,
        client_id: impl Into<String>,
        token: FederatedToken,
    ) -> Self {
        Self {
            http,
            authority_host,
            tenant_id: tenant_id.into(),
            client_id: client_id.into(),
            token,
        }
    }

    async fn assertion(&self) -> Result<Secret, CredentialError> {
        let (value, origin) = match &self.token {
            FederatedToken::File(path) => {
                let text = tokio::fs::read_to_string(path)
                    .await
                    .map_err(|error| CredentialError::TokenFile {
                        path: path.clone(),
                        error,
                    })?;
                (Secret::new(text.trim()), format!("file {}", path.display()))
            }
            FederatedToken::Inline(token) => (Secret::new(token.expose().trim()), "inline token".to_string()),
        };
        if value.expose().is_empty() {
            return Err(CredentialError::EmptyToken { origin });
        }
        Ok(value)
    }

    async fn exchange(&self, scope: &str) -> Result<AccessToken, CredentialError> {
        let endpoint = token_endpoint(WORKLOAD, &self.authority_host, &self.tenant_id)?;
        let assertion = self.assertion().await?;
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", self.client_id.as_str()),
            ("scope", scope),
            ("client_assertion_type", JWT_BEARER),
            ("client_assertion", assertion.expose()),
        ];
        let request = self.http.post(endpoint.clone()).form(&form);
        send(WORKLOAD, &endpoint, request, &[assertion.expose()]).await
    }
}

impl fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkloadIdentity")
            .field("authority_host", &self.authority_host.as_str())
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl TokenCredential for WorkloadIdentity {
    fn token<'a>(&'a self, scope: &'a str) -> BoxFuture<'a, Result<AccessToken, CredentialError>> {
        Box::pin(self.exchange(scope))
    }
}

/// Client secret: exchanges an application password for an access token at
/// `{authority_host}/{tenant_id}/oauth2/v2.0/token`. Prefer [`WorkloadIdentity`].
#[derive(Clone)]
pub struct ClientSecret {
    http: reqwest::Client,
    authority_host: Url,
    tenant_id: String,
    client_id: String,
    secret: Secret,
}

impl ClientSecret {
    /// A client secret credential using `http` for the exchange.
    pub fn new(
        http: reqwest::Client,
        authority_host: Url,
        tenant_id: impl Into<String>,
        client_id: impl Into<String>,
        secret: Secret,
    ) -> Self {
        Self {
            http,
            authority_host,
            tenant_id: tenant_id.into(),
            client_id: client_id.into(),
            secret,
        }
    }

    async fn exchange(&self, scope: &str) -> Result<AccessToken, CredentialError> {
        let endpoint = token_endpoint(CLIENT_SECRET, &self.authority_host, &self.tenant_id)?;
        let form = [
            ("grant_type", "client_credentials"),
            ("client_id", self.client_id.as_str()),
            ("scope", scope),
            ("client_secret", self.secret.expose()),
        ];
        let request = self.http.post(endpoint.clone()).form(&form);
        send(CLIENT_SECRET, &endpoint, request, &[self.secret.expose()]).await
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSecret")
            .field("authority_host", &self.authority_host.as_str())
            .field("tenant_id", &self.tenant_id)
            .field("client_id", &self.client_id)
            .field("secret", &self.secret)
            .finish_non_exhaustive()
    }
}

impl TokenCredential for ClientSecret {
    fn token<'a>(&'a self, scope: &'a str) -> BoxFuture<'a, Result<AccessToken, CredentialError>> {
        Box::pin(self.exchange(scope))
    }
}

/// Managed identity: asks the node's identity endpoint (IMDS by default) for a token with
/// `GET {endpoint}?api-version=2018-02-01&resource=…[&client_id=…]` and `Metadata: true`.
///
/// The `reqwest` client must not send these requests through an HTTP proxy (IMDS is link-local;
/// add `169.254.169.254` to `NO_PROXY` where a proxy is configured).
#[derive(Clone)]
pub struct ManagedIdentity {
    http: reqwest::Client,
    endpoint: Url,
    client_id: Option<String>,
}

impl ManagedIdentity {
    /// A managed identity credential asking `endpoint` (e.g. [`IMDS_ENDPOINT`](super::IMDS_ENDPOINT)),
    /// for the user-assigned identity `client_id` or, with `None`, the system-assigned identity.
    pub fn new(http: reqwest::Client, endpoint: Url, client_id: Option<String>) -> Self {
        Self {
            http,
            endpoint,
            client_id,
        }
    }

    async fn exchange(&self, scope: &str) -> Result<AccessToken, CredentialError> {
        let resource = scope.strip_suffix("/.default").unwrap_or(scope);
        let mut url = self.endpoint.clone();
        url.set_fragment(None);
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("api-version", "2018-02-01");
            query.append_pair("resource", resource);
            if let Some(client_id) = &self.client_id {
                query.append_pair("client_id", client_id);
            }
        }
        let mut shown = self.endpoint.clone();
        shown.set_query(None);
        let request = self.http.get(url).header("Metadata", "true");
        send(MANAGED, &shown, request, &[]).await
    }
}

impl fmt::Debug for ManagedIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManagedIdentity")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

impl TokenCredential for ManagedIdentity {
    fn token<'a>(&'a self, scope: &'a str) -> BoxFuture<'a, Result<AccessToken, CredentialError>> {
        Box::pin(self.exchange(scope))
    }
}

/// `{authority_host}/{tenant}/oauth2/v2.0/token`, keeping any path prefix of the authority host.
fn token_endpoint(credential: &'static str, authority_host: &Url, tenant: &str) -> Result<Url, CredentialError> {
    validate_tenant(tenant, format!("{credential}: tenant ID"))?;
    let mut url = authority_host.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| CredentialError::InvalidValue {
            location: format!("{credential}: authority host {authority_host}"),
            reason: "cannot be a base URL".to_string(),
        })?
        .pop_if_empty()
        .extend([tenant, "oauth2", "v2.0", "token"]);
    Ok(url)
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: Option<String>,
    expires_in: Option<serde_json::Value>,
    expires_on: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ErrorResponse {
    error: Option<String>,
    error_description: Option<String>,
}

/// Sends a token request and interprets the OAuth2 answer. `secrets` are redacted from any text
/// taken from the response.
async fn send(
    credential: &'static str,
    endpoint: &Url,
    request: reqwest::RequestBuilder,
    secrets: &[&str],
) -> Result<AccessToken, CredentialError> {
    let endpoint_text = endpoint.to_string();
    let http_error = |error: reqwest::Error| CredentialError::Http {
        credential,
        endpoint: endpoint_text.clone(),
        error: error.without_url(),
    };
    let response = request
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(http_error)?;
    let status = response.status();
    let body = response.bytes().await.map_err(http_error)?;
    let invalid = |reason: String| CredentialError::InvalidResponse {
        credential,
        endpoint: endpoint_text.clone(),
        reason,
    };

    if !status.is_success() {
        let parsed: Option<ErrorResponse> = serde_json::from_slice(&body).ok();
        let (error, description) = parsed.map_or((None, None), |e| (e.error, e.error_description));
        return Err(CredentialError::Rejected {
            credential,
            endpoint: endpoint_text.clone(),
            status: status.as_u16(),
            error: error.map(|e| redact(e, secrets)),
            description: description.map(|d| redact(d, secrets)),
        });
    }

    // serde_json's error messages quote no input strings beyond a few characters of context, but
    // keep them out anyway: the body holds the token.
    let parsed: TokenResponse =
        serde_json::from_slice(&body).map_err(|_| invalid("the body is not a JSON token response".to_string()))?;
    let token = parsed
        .access_token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("no access_token".to_string()))?;
    let now = SystemTime::now();
    let expires_at = if let Some(v) = &parsed.expires_in {
        let secs = seconds(v).ok_or_else(|| invalid("expires_in is not a number of seconds".to_string()))?;
        now + Duration::from_secs(secs)
    } else if let Some(v) = &parsed.expires_on {
        let secs = seconds(v).ok_or_else(|| invalid("expires_on is not a Unix time".to_string()))?;
        UNIX_EPOCH + Duration::from_secs(secs)
    } else {
        return Err(invalid("neither expires_in nor expires_on".to_string()));
    };
    Ok(AccessToken::new(Secret::new(token), expires_at))
}

/// A non-negative whole number of seconds given as a JSON number or string.
fn seconds(value: &serde_json::Value) -> Option<u64> {
    match value {
        serde_json::Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0 && *f < 1e12)
                .map(|f| f as u64)
        }),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn redact(text: String, secrets: &[&str]) -> String {
    secrets
        .iter()
        .filter(|s| !s.is_empty())
        .fold(text, |text, secret| text.replace(secret, "<redacted>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_keeps_prefix_and_handles_trailing_slash() {
        let host = Url::parse("https://login.microsoftonline.us").unwrap();
        assert_eq!(
            token_endpoint(WORKLOAD, &host, "contoso.onmicrosoft.com")
                .unwrap()
                .as_str(),
            "https://login.microsoftonline.us/contoso.onmicrosoft.com/oauth2/v2.0/token"
        );
        let host = Url::parse("http://127.0.0.1:8080/prefix/").unwrap();
        assert_eq!(
            token_endpoint(WORKLOAD, &host, "t1").unwrap().as_str(),
            "http://127.0.0.1:8080/prefix/t1/oauth2/v2.0/token"
        );
    }

    #[test]
    fn tenant_cannot_escape_the_path() {
        let host = Url::parse("https://login.microsoftonline.com/").unwrap();
        for bad in ["..", "a/b", "a?b", "", "x#y"] {
            let err = token_endpoint(WORKLOAD, &host, bad).unwrap_err();
            assert!(err.to_string().contains("tenant ID"), "{err}");
        }
    }

    #[test]
    fn seconds_accepts_numbers_and_strings() {
        assert_eq!(seconds(&serde_json::json!(3599)), Some(3599));
        assert_eq!(seconds(&serde_json::json!("3599")), Some(3599));
        assert_eq!(seconds(&serde_json::json!(3599.0)), Some(3599));
        assert_eq!(seconds(&serde_json::json!(-1)), None);
        assert_eq!(seconds(&serde_json::json!("soon")), None);
        assert_eq!(seconds(&serde_json::json!(null)), None);
    }

    #[test]
    fn redact_removes_every_secret() {
        assert_eq!(
            redact(
                "bad assertion abc.def.ghi here abc.def.ghi".to_string(),
                &["abc.def.ghi", ""]
            ),
            "bad assertion <redacted> here <redacted>"
        );
    }
}
