//! One cached credential per configuration source.

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::{AuthMethod, Cached, ClientSecret, CredentialConfig, ManagedIdentity, TokenCredential, WorkloadIdentity};

/// How many credentials [`Credentials::new`] keeps before evicting the least recently used.
pub const DEFAULT_MAX_CREDENTIALS: usize = 1024;

/// A registry of cached credentials, one per configuration [`source`](CredentialConfig::source)
/// (the environment, or a Secret).
///
/// [`credential`](Self::credential) returns the same [`Cached`] credential for an unchanged
/// configuration, so its token cache is shared. The registry compares a keyed hash over every
/// field of the configuration, secret material included: when a Secret is rotated, the next call
/// builds a new credential and drops the old one. At most `max` sources are kept; the least
/// recently used is evicted beyond that, and [`forget`](Self::forget) drops one explicitly (e.g.
/// when its Secret is deleted).
pub struct Credentials {
    http: reqwest::Client,
    hasher: std::collections::hash_map::RandomState,
    max: usize,
    entries: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    fingerprint: u64,
    credential: Arc<dyn TokenCredential>,
    last_used: Instant,
}

impl Credentials {
    /// A registry whose credentials use `http` for their token requests.
    pub fn new(http: reqwest::Client) -> Self {
        Self::with_max(http, DEFAULT_MAX_CREDENTIALS)
    }

    /// A registry keeping at most `max` (at least 1) credentials.
    pub fn with_max(http: reqwest::Client, max: usize) -> Self {
        Self {
            http,
            hasher: Default::default(),
            max: max.max(1),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The cached credential for `config`: reused while the configuration of its source is
    /// unchanged, replaced when it changes.
    pub fn credential(&self, config: &CredentialConfig) -> Arc<dyn TokenCredential> {
        let fingerprint = self.hasher.hash_one(config);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = entries.get_mut(&config.source) {
            if entry.fingerprint == fingerprint {
                entry.last_used = Instant::now();
                return entry.credential.clone();
            }
        }
        if !entries.contains_key(&config.source) && entries.len() >= self.max {
            let oldest = entries
                .iter()
                .min_by_key(|(_, e)| e.last_used)
                .map(|(source, _)| source.clone());
            if let Some(oldest) = oldest {
                entries.remove(&oldest);
            }
        }
        let credential = build(&self.http, config);
        entries.insert(
            config.source.clone(),
            Entry {
                fingerprint,
                credential: credential.clone(),
                last_used: Instant::now(),
            },
        );
        credential
    }

    /// Drops the credential of `source` (e.g. `Secret team-a/armgen-credential`); true if there
    /// was one.
    pub fn forget(&self, source: &str) -> bool {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(source)
            .is_some()
    }

    /// How many credentials are kept.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// True if no credential is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("credentials", &self.len())
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

/// A new cached credential for `config`.
fn build(http: &reqwest::Client, config: &CredentialConfig) -> Arc<dyn TokenCredential> {
    let http = http.clone();
    let host = config.authority_host.clone();
    match &config.auth {
        AuthMethod::WorkloadIdentity {
            tenant_id,
            client_id,
            token,
        } => Arc::new(Cached::new(WorkloadIdentity::new(
            http,
            host,
            tenant_id,
            client_id,
            token.clone(),
        ))),
        AuthMethod::ClientSecret {
            tenant_id,
            client_id,
            secret,
        } => Arc::new(Cached::new(ClientSecret::new(
            http,
            host,
            tenant_id,
            client_id,
            secret.clone(),
        ))),
        AuthMethod::ManagedIdentity { client_id, endpoint } => Arc::new(Cached::new(ManagedIdentity::new(
            http,
            endpoint.clone(),
            client_id.clone(),
        ))),
    }
}

impl CredentialConfig {
    /// A new credential for this configuration, wrapped in [`Cached`], outside any registry.
    /// Prefer [`Credentials::credential`], which reuses one credential (and its token cache)
    /// across calls.
    pub fn credential(&self, http: reqwest::Client) -> Arc<dyn TokenCredential> {
        build(&http, self)
    }
}
