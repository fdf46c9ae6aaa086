//! Credentials for Azure Resource Manager, preferably without static secrets.
//!
//! The reconciler and `armctl` authenticate to Azure Resource Manager (ARM) with an OAuth2 access token from
//! Microsoft Entra ID. This module turns *configuration* (the operator's environment, or a
//! Kubernetes Secret in the namespace of a resource) into a [`TokenCredential`] that hands out
//! cached access tokens.
//!
//! # Authentication methods
//!
//! | Method | How it proves its identity | Static secret? |
//! |---|---|---|
//! | **Workload identity** ([`WorkloadIdentity`]) | a Kubernetes service-account token (projected into the pod by the AKS workload-identity webhook, or stored in a Secret), exchanged at Entra's token endpoint as a federated client assertion | no |
//! | **Managed identity** ([`ManagedIdentity`]) | the Azure Instance Metadata Service (IMDS) of the node, `http://169.254.169.254/metadata/identity/oauth2/token` | no |
//! | **Client secret** ([`ClientSecret`]) | an application password | **yes** — use only where the others are unavailable |
//!
//! Workload identity posts to `{authority_host}/{tenant}/oauth2/v2.0/token` the form fields
//! `grant_type=client_credentials`, `client_id`, `scope`,
//! `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer` and
//! `client_assertion=<the federated token>`. The federated token file is **read again on every
//! exchange**, because the kubelet rotates it. Client secret uses the same endpoint with
//! `client_secret` instead of the assertion. Managed identity sends
//! `GET {endpoint}?api-version=2018-02-01&resource=<scope without /.default>[&client_id=…]` with
//! the header `Metadata: true`.
//!
//! # The operator's own credential: environment variables
//!
//! [`CredentialConfig::from_env`] reads:
//!
//! | Variable | Meaning |
//! |---|---|
//! | `AZURE_SUBSCRIPTION_ID` | subscription the resources live in (required) |
//! | `AZURE_TENANT_ID` | Entra tenant (required for workload identity and client secret) |
//! | `AZURE_CLIENT_ID` | application / identity client ID (required for workload identity and client secret; selects a user-assigned managed identity) |
//! | `AZURE_USE_MANAGED_IDENTITY` | `true` → managed identity |
//! | `AZURE_FEDERATED_TOKEN_FILE` | path of the projected service-account token → workload identity (the AKS workload-identity webhook injects this, `AZURE_TENANT_ID`, `AZURE_CLIENT_ID` and `AZURE_AUTHORITY_HOST`) |
//! | `AZURE_CLIENT_SECRET` | application password → client secret |
//! | `AZURE_AUTHORITY_HOST` | Entra authority, default `https://login.microsoftonline.com/`; e.g. `https://login.microsoftonline.us/` for Azure Government, `https://login.chinacloudapi.cn/` for Azure China |
//! | `AZURE_IDENTITY_ENDPOINT` | replaces the IMDS token endpoint for managed identity |
//!
//! **Precedence**: `AZURE_USE_MANAGED_IDENTITY=true` wins; otherwise `AZURE_FEDERATED_TOKEN_FILE`
//! selects workload identity; otherwise `AZURE_CLIENT_SECRET` selects client secret; otherwise
//! configuration fails with an error naming every missing variable. Empty values count as unset.
//!
//! # Per-namespace credentials: Secrets
//!
//! A resource can name a Secret in its own namespace with the annotation
//! [`armgen.dev/credential-from`](CREDENTIAL_FROM_ANNOTATION) (a Secret name: a DNS-1123
//! subdomain, so no `/`, no `..`, no other namespace — anything else sets `Ready=False` with reason
//! `InvalidCredentialReference`); without the annotation the namespace's Secret
//! [`armgen-credential`](DEFAULT_CREDENTIAL_SECRET) applies ([`credential_secret_name`] picks and
//! checks the name). Where no such Secret exists, the operator's own credential (from its
//! environment) is the fallback. [`CredentialConfig::from_secret`] (or
//! [`CredentialConfig::from_kube_secret`]) reads these keys:
//!
//! | Key | Meaning |
//! |---|---|
//! | `AZURE_SUBSCRIPTION_ID` | required |
//! | `AZURE_TENANT_ID` | required |
//! | `AZURE_CLIENT_ID` | required |
//! | `AZURE_FEDERATED_TOKEN` | this namespace's own federated token, inline → workload identity |
//! | `AZURE_CLIENT_SECRET` | this namespace's own application password → client secret |
//! | `AZURE_AUTHORITY_HOST` | optional, one of the operator's allowed authority hosts; defaults to the operator's authority host |
//!
//! `AZURE_FEDERATED_TOKEN` wins over `AZURE_CLIENT_SECRET`. These keys are **refused**
//! ([`CredentialError::NotAllowed`], `Ready=False` with reason `CredentialsNotAllowed`, naming the
//! Secret and the key): `AZURE_USE_WORKLOAD_IDENTITY`, `AZURE_USE_MANAGED_IDENTITY`,
//! `AZURE_FEDERATED_TOKEN_FILE`, `AZURE_IDENTITY_ENDPOINT`.
//!
//! Errors name the Secret and the key — `Secret team-a/armgen-credential: key AZURE_CLIENT_ID is
//! missing` — and never a value.
//!
//! # Trust model
//!
//! Whoever can write Secrets (or annotate custom resources) in a watched namespace is a tenant,
//! and a tenant's credential Secret is untrusted input. The operator's own identity — its
//! projected service-account token (`AZURE_FEDERATED_TOKEN_FILE`), the managed identity of its
//! node, its environment and files — belongs to the operator, so:
//!
//! * **A namespace credential proves its own identity only**: an inline federated token or an
//!   application password the tenant put there. It can never ask the operator to exchange the
//!   operator's federated token (`AZURE_USE_WORKLOAD_IDENTITY`, removed: it let a namespace use any
//!   identity trusting the operator's service account and send that token to a host of its choice),
//!   the node's managed identity (`AZURE_USE_MANAGED_IDENTITY`, removed), a file path
//!   (`AZURE_FEDERATED_TOKEN_FILE`) or an identity endpoint (`AZURE_IDENTITY_ENDPOINT`).
//!   Namespaces that used the removed keys move to `AZURE_FEDERATED_TOKEN` (a token the tenant
//!   obtains for its own service account) or to the operator's global credential.
//! * **Token requests go only to authority hosts the operator allows**:
//!   [`CredentialDefaults::allowed_authority_hosts`], set with `--allowed-authority-hosts`
//!   (`AZURE_ALLOWED_AUTHORITY_HOSTS`), by default the public cloud
//!   (`https://login.microsoftonline.com/`) plus the operator's own `AZURE_AUTHORITY_HOST`; the
//!   operator's own authority host is always allowed. A Secret naming another host is refused before
//!   any request is made, so even a tenant's own secret never goes to a host the operator did not
//!   choose.
//! * **A shared credential is shared power**: a namespace without a credential Secret is
//!   reconciled with the operator's global credential, so every such namespace can act with that
//!   identity's Azure permissions (within the resources its objects claim). Give the global identity
//!   only what every namespace may do, or give each namespace its own Secret (and run the operator
//!   without a global credential).
//! * The Secret's name comes from an annotation: it is checked to be a DNS-1123 subdomain before it
//!   reaches an API server URL, and it is always looked up in the resource's own namespace.

//! # Caching and reuse
//!
//! [`Cached`] wraps a credential: one token exchange serves every caller until the token is within
//! five minutes of its expiry; concurrent callers wait for one shared refresh; failures are not
//! cached; if a refresh fails while the cached token is still valid for at least 30 seconds, the
//! cached token is returned. [`TokenCredential::invalidate`] drops cached tokens (e.g. after ARM
//! answered 401). [`Credentials`] keeps one cached credential per configuration source and
//! replaces it when the configuration (including its secret material) changes.
//!
//! ```no_run
//! # async fn example() -> Result<(), arm_client::credentials::CredentialError> {
//! use arm_client::credentials::{ARM_SCOPE, CredentialConfig, Credentials};
//!
//! let config = CredentialConfig::from_env(|name| std::env::var(name).ok())?;
//! let credentials = Credentials::new(reqwest::Client::new());
//! let token = credentials.credential(&config).token(ARM_SCOPE).await?;
//! let _authorization = token.bearer(); // "Bearer …"
//! # Ok(())
//! # }
//! ```
//!
//! # Secrets never leak
//!
//! Tokens, client secrets and federated tokens are held in [`Secret`], whose `Debug` prints
//! `<redacted>` and which has no `Display`. Errors ([`CredentialError`]) say which source, which
//! variable, Secret key, file or endpoint failed, and include Entra's `error` and
//! `error_description`, but never the secret material (any echo of it in an error description
//! is replaced by `<redacted>`).
//!
//! # Why not the `azure_identity` crate
//!
//! `azure_identity` 1.x (evaluated: 1.1.0-beta.1) does not fit:
//!
//! * it rejects any authority host that is not `https`, so a local `http://127.0.0.1:PORT` fake
//!   Entra endpoint cannot be used in tests;
//! * its virtual-machine managed identity uses the hard-coded IMDS URL, not overridable;
//! * its workload identity re-reads the federated token file only when the cached copy is older
//!   than ten minutes, not on every exchange;
//! * it reads the process environment itself (its environment abstraction is crate-private), so
//!   Secret-sourced configuration cannot be fed to it without a per-namespace shim;
//! * it depends on `reqwest` 0.13 (through `azure_core`), so it cannot use our `reqwest` 0.12
//!   client and would add a second HTTP stack (`azure_core`, `typespec`, `time`, `async-lock`,
//!   `pin-project`, …) to a 2-core CI build.
//!
//! The three flows are small OAuth2 requests, so they are implemented here directly on
//! `reqwest`.

mod cache;
mod config;
mod flows;
mod registry;

use std::fmt;
use std::time::{Duration, SystemTime};

use futures::future::BoxFuture;

pub use cache::{Cached, REFRESH_BEFORE_EXPIRY};
pub use config::{
    AZURE_PUBLIC_CLOUD, AuthMethod, CredentialConfig, CredentialDefaults, FederatedToken, IMDS_ENDPOINT,
    credential_secret_name,
};
pub use flows::{ARM_SCOPE, ClientSecret, ManagedIdentity, WorkloadIdentity};
pub use registry::{Credentials, DEFAULT_MAX_CREDENTIALS};

/// Annotation on a custom resource naming the Secret (in the resource's namespace) that holds the
/// credential for it.
pub const CREDENTIAL_FROM_ANNOTATION: &str = "armgen.dev/credential-from";

/// Name of the Secret used for a namespace's resources when they carry no
/// [`CREDENTIAL_FROM_ANNOTATION`].
pub const DEFAULT_CREDENTIAL_SECRET: &str = "armgen-credential";

/// A secret string (access token, client secret, federated token) that never shows in `Debug`
/// output and has no `Display`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret value; use it only where it must be sent (an HTTP header or form field).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

/// An access token for a scope, with its expiry.
#[derive(Clone, Debug)]
pub struct AccessToken {
    /// The bearer token (send as `Authorization: Bearer …`).
    pub token: Secret,
    /// When the token stops being valid.
    pub expires_at: SystemTime,
}

impl AccessToken {
    /// A token that expires at `expires_at`.
    pub fn new(token: Secret, expires_at: SystemTime) -> Self {
        Self { token, expires_at }
    }

    /// Time left until expiry; zero if already expired.
    pub fn remaining(&self) -> Duration {
        self.expires_at.duration_since(SystemTime::now()).unwrap_or_default()
    }

    /// The value of an `Authorization` header carrying this token.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token.expose())
    }
}

impl fmt::Display for AccessToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "access token (<redacted>, expires in {} s)",
            self.remaining().as_secs()
        )
    }
}

/// Why configuration or a token exchange failed. Says where (environment variable, Secret and
/// key, file, endpoint), never the secret material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// Required environment variables are not set.
    #[error("environment: {} not set", list_missing(.names))]
    MissingEnv {
        /// The missing variables (an alternative reads `A or B or C`).
        names: Vec<String>,
    },
    /// Required keys are missing from a credential Secret.
    #[error("Secret {secret}: {} missing", list_keys(.keys))]
    MissingKey {
        /// The Secret, as `namespace/name`.
        secret: String,
        /// The missing keys (an alternative reads `A or B or C`).
        keys: Vec<String>,
    },
    /// A Secret value is not UTF-8.
    #[error("Secret {secret}: key {key} is not valid UTF-8")]
    InvalidUtf8 {
        /// The Secret, as `namespace/name`.
        secret: String,
        /// The key whose value is not UTF-8.
        key: String,
    },
    /// A configuration value is malformed.
    #[error("{location}: {reason}")]
    InvalidValue {
        /// Where the value came from, e.g. `environment variable AZURE_AUTHORITY_HOST` or
        /// `Secret team-a/armgen-credential: key AZURE_TENANT_ID`.
        location: String,
        /// What is wrong (never the value itself).
        reason: String,
    },
    /// A namespace credential asks for something only the operator may use or choose (its own federated token,
    /// the node's managed identity, a file, an identity endpoint, an authority host outside the allow-list).
    #[error("{location}: {reason}")]
    NotAllowed {
        /// Where the request came from, e.g. `Secret team-a/armgen-credential: key AZURE_AUTHORITY_HOST`.
        location: String,
        /// Why it is refused and what to use instead (never the value itself).
        reason: String,
    },
    /// The federated token file could not be read.
    #[error("workload identity: cannot read the federated token file {}: {error}", .path.display())]
    TokenFile {
        /// The file.
        path: std::path::PathBuf,
        /// The I/O error.
        #[source]
        error: std::io::Error,
    },
    /// The federated token file or inline token is empty.
    #[error("workload identity: the federated token {origin} is empty")]
    EmptyToken {
        /// `file /path` or `inline token`.
        origin: String,
    },
    /// The token endpoint could not be reached or did not answer in time.
    #[error("{credential}: request to {endpoint} failed: {error}")]
    Http {
        /// The credential kind (`workload identity`, `managed identity`, `client secret`).
        credential: &'static str,
        /// The token endpoint, without query.
        endpoint: String,
        /// The transport error.
        #[source]
        error: reqwest::Error,
    },
    /// The token endpoint refused the request.
    #[error(
        "{credential}: {endpoint} answered HTTP {status}: {}{}",
        .error.as_deref().unwrap_or("no OAuth2 error in the response body"),
        .description.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
    )]
    Rejected {
        /// The credential kind.
        credential: &'static str,
        /// The token endpoint, without query.
        endpoint: String,
        /// The HTTP status code.
        status: u16,
        /// Entra's `error` code, e.g. `invalid_client`.
        error: Option<String>,
        /// Entra's `error_description`, e.g. `AADSTS7000215: Invalid client secret provided. …`
        /// (with any echo of the secret material redacted).
        description: Option<String>,
    },
    /// A refresh running concurrently for another caller failed; this caller shares its outcome
    /// instead of starting another exchange.
    #[error("{message} (outcome of a concurrent refresh)")]
    ConcurrentRefresh {
        /// The `Display` of the shared error.
        message: String,
    },
    /// The token endpoint answered success with an unusable body.
    #[error("{credential}: {endpoint} returned an unusable token response: {reason}")]
    InvalidResponse {
        /// The credential kind.
        credential: &'static str,
        /// The token endpoint, without query.
        endpoint: String,
        /// What is wrong with the response (never the token).
        reason: String,
    },
}

fn list_missing(names: &[String]) -> String {
    match names {
        [one] => format!("{one} is"),
        many => format!("{} are", many.join(", ")),
    }
}

fn list_keys(keys: &[String]) -> String {
    match keys {
        [one] => format!("key {one} is"),
        many => format!("keys {} are", many.join(", ")),
    }
}

/// A source of access tokens.
pub trait TokenCredential: Send + Sync + fmt::Debug {
    /// An access token for `scope`, e.g. [`ARM_SCOPE`] (`https://management.azure.com/.default`).
    fn token<'a>(&'a self, scope: &'a str) -> BoxFuture<'a, Result<AccessToken, CredentialError>>;

    /// Forgets any cached token, so the next [`token`](Self::token) call exchanges again (e.g.
    /// after ARM answered 401). Credentials without a cache do nothing.
    fn invalidate(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
