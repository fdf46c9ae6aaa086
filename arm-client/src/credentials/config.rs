//! Configuration sources: the operator's environment and per-namespace Secrets.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

use url::Url;

use super::{CREDENTIAL_FROM_ANNOTATION, CredentialError, DEFAULT_CREDENTIAL_SECRET, Secret};

/// The public-cloud Entra authority host, the default for `AZURE_AUTHORITY_HOST`.
pub const AZURE_PUBLIC_CLOUD: &str = "https://login.microsoftonline.com/";

/// The Azure Instance Metadata Service token endpoint, the default for `AZURE_IDENTITY_ENDPOINT`.
pub const IMDS_ENDPOINT: &str = "http://169.254.169.254/metadata/identity/oauth2/token";

const SUBSCRIPTION: &str = "AZURE_SUBSCRIPTION_ID";
const TENANT: &str = "AZURE_TENANT_ID";
const CLIENT: &str = "AZURE_CLIENT_ID";
const TOKEN_FILE: &str = "AZURE_FEDERATED_TOKEN_FILE";
const INLINE_TOKEN: &str = "AZURE_FEDERATED_TOKEN";
const CLIENT_SECRET: &str = "AZURE_CLIENT_SECRET";
const USE_MI: &str = "AZURE_USE_MANAGED_IDENTITY";
const USE_WI: &str = "AZURE_USE_WORKLOAD_IDENTITY";
const AUTHORITY: &str = "AZURE_AUTHORITY_HOST";
const IDENTITY_ENDPOINT: &str = "AZURE_IDENTITY_ENDPOINT";

/// Keys a credential Secret must not carry, and why: each would let whoever writes the Secret use the operator's
/// own identity (its federated token, the node's managed identity) or read a file of the operator's pod.
const REFUSED_IN_SECRETS: [(&str, &str); 4] = [
    (
        USE_WI,
        "not allowed in a namespace credential: it would exchange the operator's own federated token; put this \
         namespace's own federated token in AZURE_FEDERATED_TOKEN instead",
    ),
    (
        USE_MI,
        "not allowed in a namespace credential: it would use the managed identity of the operator's node; use \
         AZURE_FEDERATED_TOKEN or AZURE_CLIENT_SECRET instead",
    ),
    (
        TOKEN_FILE,
        "not allowed in a namespace credential: it names a file on the operator's filesystem; put the token itself \
         in AZURE_FEDERATED_TOKEN instead",
    ),
    (
        IDENTITY_ENDPOINT,
        "not allowed in a namespace credential: the managed identity endpoint is the operator's setting",
    ),
];

/// Where a workload identity gets its federated (Kubernetes service-account) token.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FederatedToken {
    /// A file, read again on every exchange (the kubelet rotates it).
    File(PathBuf),
    /// A token given inline (from a Secret's `AZURE_FEDERATED_TOKEN`).
    Inline(Secret),
}

/// How a [`CredentialConfig`] authenticates.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum AuthMethod {
    /// Federated token exchanged at Entra's token endpoint.
    WorkloadIdentity {
        /// Entra tenant ID (GUID or domain).
        tenant_id: String,
        /// Client ID of the application or user-assigned identity.
        client_id: String,
        /// Where the federated token comes from.
        token: FederatedToken,
    },
    /// Token from the node's managed identity endpoint (IMDS).
    ManagedIdentity {
        /// Client ID of a user-assigned identity; `None` for the system-assigned identity.
        client_id: Option<String>,
        /// The identity endpoint, [`IMDS_ENDPOINT`] unless overridden.
        endpoint: Url,
    },
    /// Application password exchanged at Entra's token endpoint.
    ClientSecret {
        /// Entra tenant ID (GUID or domain).
        tenant_id: String,
        /// Client ID of the application.
        client_id: String,
        /// The application password.
        secret: Secret,
    },
}

impl AuthMethod {
    /// A short name of the method: `workload identity`, `managed identity` or `client secret`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::WorkloadIdentity { .. } => "workload identity",
            Self::ManagedIdentity { .. } => "managed identity",
            Self::ClientSecret { .. } => "client secret",
        }
    }
}

/// A complete credential configuration: which subscription, and how to get tokens for it.
///
/// `Debug` never shows secret material (see [`Secret`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CredentialConfig {
    /// Where this configuration came from: `environment` or `Secret namespace/name`. The
    /// [`Credentials`](super::Credentials) registry keeps one credential per source.
    pub source: String,
    /// The Azure subscription ID.
    pub subscription_id: String,
    /// The Entra authority host, e.g. `https://login.microsoftonline.com/`.
    pub authority_host: Url,
    /// How tokens are obtained.
    pub auth: AuthMethod,
}

/// Operator-wide settings for Secret-sourced (namespace) configuration: the authority host a Secret without
/// `AZURE_AUTHORITY_HOST` gets, and the authority hosts a Secret may choose.
///
/// There is deliberately no federated token file and no managed identity endpoint here: a namespace credential
/// never uses the operator's own identity (see the [module documentation](super), "Trust model").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CredentialDefaults {
    /// Authority host used when a Secret has no `AZURE_AUTHORITY_HOST` (the operator's own, from its environment).
    pub authority_host: Url,
    /// The authority hosts a Secret's `AZURE_AUTHORITY_HOST` may name (compared by scheme, host, port and path,
    /// ignoring a trailing `/`). [`authority_host`](Self::authority_host) is always allowed as well.
    pub allowed_authority_hosts: Vec<Url>,
}

impl Default for CredentialDefaults {
    fn default() -> Self {
        Self::new(public_cloud())
    }
}

fn public_cloud() -> Url {
    Url::parse(AZURE_PUBLIC_CLOUD).expect("constant URL")
}

fn imds() -> Url {
    Url::parse(IMDS_ENDPOINT).expect("constant URL")
}

/// How two authority hosts are compared: scheme, host, port and path without trailing `/`.
fn authority_key(url: &Url) -> String {
    format!(
        "{}{}",
        url.origin().ascii_serialization(),
        url.path().trim_end_matches('/')
    )
}

impl CredentialDefaults {
    /// Secrets without `AZURE_AUTHORITY_HOST` use `authority_host`; a Secret may name the public cloud
    /// ([`AZURE_PUBLIC_CLOUD`]) or `authority_host`.
    pub fn new(authority_host: Url) -> Self {
        let mut defaults = Self {
            authority_host,
            allowed_authority_hosts: vec![public_cloud()],
        };
        defaults.keep_own_authority();
        defaults
    }

    /// Reads the operator's `AZURE_AUTHORITY_HOST` through `get` (usually `|k| std::env::var(k).ok()`); see
    /// [`new`](Self::new) for the allowed hosts.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, CredentialError> {
        let env = Env(&get);
        Ok(Self::new(env.authority_host()?))
    }

    /// Replaces the allowed authority hosts (the operator's `--allowed-authority-hosts`); the operator's own
    /// [`authority_host`](Self::authority_host) stays allowed. Each must be `https` (or `http` to a loopback
    /// address), without user, query or fragment; `location` names the setting in errors.
    pub fn with_allowed_authority_hosts(
        mut self,
        hosts: impl IntoIterator<Item = Url>,
        location: &str,
    ) -> Result<Self, CredentialError> {
        let mut allowed = Vec::new();
        for host in hosts {
            allowed.push(parse_authority_host(host.as_str(), location.to_string())?);
        }
        self.allowed_authority_hosts = allowed;
        self.keep_own_authority();
        Ok(self)
    }

    fn keep_own_authority(&mut self) {
        let own = authority_key(&self.authority_host);
        if !self.allowed_authority_hosts.iter().any(|h| authority_key(h) == own) {
            self.allowed_authority_hosts.push(self.authority_host.clone());
        }
    }

    /// Whether a Secret may send its token requests to `url`.
    pub fn is_allowed_authority(&self, url: &Url) -> bool {
        let key = authority_key(url);
        authority_key(&self.authority_host) == key
            || self.allowed_authority_hosts.iter().any(|h| authority_key(h) == key)
    }

    fn allowed_list(&self) -> String {
        let mut keys: Vec<String> = self.allowed_authority_hosts.iter().map(|h| h.to_string()).collect();
        let own = self.authority_host.to_string();
        if !self
            .allowed_authority_hosts
            .iter()
            .any(|h| authority_key(h) == authority_key(&self.authority_host))
        {
            keys.push(own);
        }
        keys.join(", ")
    }
}

fn env_location(name: &str) -> String {
    format!("environment variable {name}")
}

/// Looks up non-empty environment values and describes their location.
struct Env<'a, F: Fn(&str) -> Option<String>>(&'a F);

impl<F: Fn(&str) -> Option<String>> Env<'_, F> {
    fn get(&self, name: &str) -> Option<String> {
        (self.0)(name).filter(|v| !v.trim().is_empty())
    }

    fn authority_host(&self) -> Result<Url, CredentialError> {
        match self.get(AUTHORITY) {
            Some(v) => parse_authority_host(&v, env_location(AUTHORITY)),
            None => Ok(public_cloud()),
        }
    }

    fn identity_endpoint(&self) -> Result<Url, CredentialError> {
        match self.get(IDENTITY_ENDPOINT) {
            Some(v) => parse_endpoint(&v, env_location(IDENTITY_ENDPOINT)),
            None => Ok(imds()),
        }
    }

    fn flag(&self, name: &str) -> Result<bool, CredentialError> {
        self.get(name).map_or(Ok(false), |v| parse_flag(&v, env_location(name)))
    }
}

impl CredentialConfig {
    /// Configuration from environment variables, read through `get` (usually
    /// `|k| std::env::var(k).ok()`). Precedence: `AZURE_USE_MANAGED_IDENTITY=true`, else
    /// `AZURE_FEDERATED_TOKEN_FILE` (workload identity), else `AZURE_CLIENT_SECRET`. The error
    /// names every missing variable. See the [module documentation](super).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Self, CredentialError> {
        let env = Env(&get);
        let mut missing = Vec::new();
        let subscription_id = env.get(SUBSCRIPTION);
        if subscription_id.is_none() {
            missing.push(SUBSCRIPTION.to_string());
        }
        let authority_host = env.authority_host()?;
        let tenant = env.get(TENANT);
        let client = env.get(CLIENT);
        if let Some(t) = &tenant {
            validate_tenant(t, env_location(TENANT))?;
        }

        let auth = if env.flag(USE_MI)? {
            Some(AuthMethod::ManagedIdentity {
                client_id: client,
                endpoint: env.identity_endpoint()?,
            })
        } else {
            let method = if let Some(file) = env.get(TOKEN_FILE) {
                Some(Method::Token(FederatedToken::File(PathBuf::from(file))))
            } else if let Some(secret) = env.get(CLIENT_SECRET) {
                Some(Method::Secret(Secret::new(secret)))
            } else {
                missing.push(format!("{TOKEN_FILE} or {CLIENT_SECRET} or {USE_MI}=true"));
                None
            };
            Method::complete(method, tenant, client, &mut missing)
        };
        match (subscription_id, auth) {
            (Some(subscription_id), Some(auth)) if missing.is_empty() => Ok(Self {
                source: "environment".to_string(),
                subscription_id,
                authority_host,
                auth,
            }),
            _ => Err(CredentialError::MissingEnv { names: missing }),
        }
    }

    /// Configuration from the `data` of a credential Secret. `secret_name` (conventionally
    /// `namespace/name`) is used in errors and as the [`source`](Self::source). Keys and
    /// precedence are described in the [module documentation](super); errors name the Secret and
    /// the key, never a value.
    ///
    /// A Secret is tenant input: keys that would use the operator's own identity or filesystem
    /// (`AZURE_USE_WORKLOAD_IDENTITY`, `AZURE_USE_MANAGED_IDENTITY`, `AZURE_FEDERATED_TOKEN_FILE`,
    /// `AZURE_IDENTITY_ENDPOINT`) and an `AZURE_AUTHORITY_HOST` outside
    /// [`CredentialDefaults::allowed_authority_hosts`] are refused with [`CredentialError::NotAllowed`].
    pub fn from_secret(
        secret_name: &str,
        data: &BTreeMap<String, Vec<u8>>,
        defaults: &CredentialDefaults,
    ) -> Result<Self, CredentialError> {
        let s = SecretData {
            name: secret_name,
            data,
        };
        for (key, reason) in REFUSED_IN_SECRETS {
            if s.get(key)?.is_some() {
                return Err(CredentialError::NotAllowed {
                    location: s.location(key),
                    reason: reason.to_string(),
                });
            }
        }
        let mut missing = Vec::new();
        let subscription_id = s.get(SUBSCRIPTION)?;
        if subscription_id.is_none() {
            missing.push(SUBSCRIPTION.to_string());
        }
        let authority_host = match s.get(AUTHORITY)? {
            Some(v) => {
                let url = parse_authority_host(&v, s.location(AUTHORITY))?;
                if !defaults.is_allowed_authority(&url) {
                    return Err(CredentialError::NotAllowed {
                        location: s.location(AUTHORITY),
                        reason: format!(
                            "not an authority host the operator allows (allowed: {}; the operator sets them with \
                             --allowed-authority-hosts)",
                            defaults.allowed_list()
                        ),
                    });
                }
                url
            }
            None => defaults.authority_host.clone(),
        };
        let tenant = s.get(TENANT)?;
        if let Some(t) = &tenant {
            validate_tenant(t, s.location(TENANT))?;
        }
        let client = s.get(CLIENT)?;

        let method = if let Some(token) = s.get(INLINE_TOKEN)? {
            Some(Method::Token(FederatedToken::Inline(Secret::new(token))))
        } else if let Some(secret) = s.get(CLIENT_SECRET)? {
            Some(Method::Secret(Secret::new(secret)))
        } else {
            missing.push(format!("{INLINE_TOKEN} or {CLIENT_SECRET}"));
            None
        };
        let auth = Method::complete(method, tenant, client, &mut missing);
        match (subscription_id, auth) {
            (Some(subscription_id), Some(auth)) if missing.is_empty() => Ok(Self {
                source: format!("Secret {secret_name}"),
                subscription_id,
                authority_host,
                auth,
            }),
            _ => Err(CredentialError::MissingKey {
                secret: secret_name.to_string(),
                keys: missing,
            }),
        }
    }

    /// [`from_secret`](Self::from_secret) for a Kubernetes Secret object, named
    /// `namespace/name` in errors.
    pub fn from_kube_secret(
        secret: &k8s_openapi::api::core::v1::Secret,
        defaults: &CredentialDefaults,
    ) -> Result<Self, CredentialError> {
        let name = format!(
            "{}/{}",
            secret.metadata.namespace.as_deref().unwrap_or_default(),
            secret.metadata.name.as_deref().unwrap_or_default()
        );
        let data: BTreeMap<String, Vec<u8>> = secret
            .data
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.0.clone()))
            .collect();
        Self::from_secret(&name, &data, defaults)
    }

    /// The tenant ID, if the method uses one.
    pub fn tenant_id(&self) -> Option<&str> {
        match &self.auth {
            AuthMethod::WorkloadIdentity { tenant_id, .. } | AuthMethod::ClientSecret { tenant_id, .. } => {
                Some(tenant_id)
            }
            AuthMethod::ManagedIdentity { .. } => None,
        }
    }

    /// The client ID, if any (a system-assigned managed identity has none).
    pub fn client_id(&self) -> Option<&str> {
        match &self.auth {
            AuthMethod::WorkloadIdentity { client_id, .. } | AuthMethod::ClientSecret { client_id, .. } => {
                Some(client_id)
            }
            AuthMethod::ManagedIdentity { client_id, .. } => client_id.as_deref(),
        }
    }
}

/// The name of the credential Secret for a resource with these annotations: the value of
/// [`CREDENTIAL_FROM_ANNOTATION`] if present and non-empty, else [`DEFAULT_CREDENTIAL_SECRET`].
///
/// The annotation is tenant input that ends up in an API server URL, so it must be a Secret name: a DNS-1123
/// subdomain (lowercase letters, digits, `-` and `.`, at most 253 characters, starting and ending with a letter
/// or digit) — no `/`, no `..`, no other namespace. Anything else is an error naming the annotation.
pub fn credential_secret_name(annotations: Option<&BTreeMap<String, String>>) -> Result<&str, CredentialError> {
    let named = annotations
        .and_then(|a| a.get(CREDENTIAL_FROM_ANNOTATION))
        .map(|v| v.trim())
        .filter(|v| !v.is_empty());
    match named {
        Some(name) if crate::names::is_dns1123_subdomain(name) => Ok(name),
        Some(_) => Err(CredentialError::InvalidValue {
            location: format!("annotation {CREDENTIAL_FROM_ANNOTATION}"),
            reason: "must name a Secret in the resource's own namespace: a DNS-1123 subdomain (lowercase letters, \
                     digits, '-' and '.', at most 253 characters, starting and ending with a letter or digit)"
                .to_string(),
        }),
        None => Ok(DEFAULT_CREDENTIAL_SECRET),
    }
}

enum Method {
    Token(FederatedToken),
    Secret(Secret),
}

impl Method {
    /// The auth method when the method, tenant and client are all known; otherwise `None`, with the missing
    /// tenant and client names added to `missing`.
    fn complete(
        method: Option<Method>,
        tenant: Option<String>,
        client: Option<String>,
        missing: &mut Vec<String>,
    ) -> Option<AuthMethod> {
        if tenant.is_none() {
            missing.push(TENANT.to_string());
        }
        if client.is_none() {
            missing.push(CLIENT.to_string());
        }
        match (method, tenant, client) {
            (Some(m), Some(tenant_id), Some(client_id)) => Some(m.into_auth(tenant_id, client_id)),
            _ => None,
        }
    }

    fn into_auth(self, tenant_id: String, client_id: String) -> AuthMethod {
        match self {
            Self::Token(token) => AuthMethod::WorkloadIdentity {
                tenant_id,
                client_id,
                token,
            },
            Self::Secret(secret) => AuthMethod::ClientSecret {
                tenant_id,
                client_id,
                secret,
            },
        }
    }
}

struct SecretData<'a> {
    name: &'a str,
    data: &'a BTreeMap<String, Vec<u8>>,
}

impl SecretData<'_> {
    fn location(&self, key: &str) -> String {
        format!("Secret {}: key {key}", self.name)
    }

    /// The trimmed UTF-8 value of `key`; empty counts as missing.
    fn get(&self, key: &str) -> Result<Option<String>, CredentialError> {
        let Some(bytes) = self.data.get(key) else {
            return Ok(None);
        };
        let value = std::str::from_utf8(bytes).map_err(|_| CredentialError::InvalidUtf8 {
            secret: self.name.to_string(),
            key: key.to_string(),
        })?;
        let value = value.trim();
        Ok((!value.is_empty()).then(|| value.to_string()))
    }
}

fn parse_flag(value: &str, location: String) -> Result<bool, CredentialError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" => Ok(true),
        "false" | "0" | "no" => Ok(false),
        _ => Err(CredentialError::InvalidValue {
            location,
            reason: "expected true or false".to_string(),
        }),
    }
}

/// An authority host: `https`, or `http` to a loopback address (local fakes in tests).
fn parse_authority_host(value: &str, location: String) -> Result<Url, CredentialError> {
    let url = parse_endpoint(value, location.clone())?;
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip).is_loopback(),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip).is_loopback(),
        None => false,
    };
    if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
        return Err(CredentialError::InvalidValue {
            location,
            reason: "an authority host must not carry a user, query or fragment".to_string(),
        });
    }
    if url.scheme() == "https" || loopback {
        Ok(url)
    } else {
        Err(CredentialError::InvalidValue {
            location,
            reason: "an authority host must use https (plain http is accepted only for loopback addresses)".to_string(),
        })
    }
}

fn parse_endpoint(value: &str, location: String) -> Result<Url, CredentialError> {
    // url::ParseError never contains the input.
    let url = Url::parse(value.trim()).map_err(|e| CredentialError::InvalidValue {
        location: location.clone(),
        reason: format!("not a URL: {e}"),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(CredentialError::InvalidValue {
            location,
            reason: "expected an http or https URL with a host".to_string(),
        });
    }
    Ok(url)
}

/// A tenant ID is a GUID or a domain name; anything else could escape the token endpoint path.
pub(super) fn validate_tenant(tenant: &str, location: String) -> Result<(), CredentialError> {
    let ok = !tenant.is_empty()
        && tenant.len() <= 256
        && tenant != "."
        && tenant != ".."
        && tenant
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
    if ok {
        Ok(())
    } else {
        Err(CredentialError::InvalidValue {
            location,
            reason: "a tenant ID must be a GUID or a domain name".to_string(),
        })
    }
}

impl fmt::Display for CredentialConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} for subscription {} from {}",
            self.auth.kind(),
            self.subscription_id,
            self.source
        )
    }
}
