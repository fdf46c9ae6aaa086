//! Token caching shared by concurrent callers.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::Mutex;

use super::{AccessToken, CredentialError, TokenCredential};

/// A cached token is replaced once it is this close to its expiry.
pub const REFRESH_BEFORE_EXPIRY: Duration = Duration::from_secs(5 * 60);

/// If a refresh fails while the cached token is still valid for at least this long, the cached
/// token is returned instead of the error (and the next call tries again).
const GRACE: Duration = Duration::from_secs(30);

/// Caches the tokens of a credential, per scope.
///
/// One exchange serves every caller until the token is within [`REFRESH_BEFORE_EXPIRY`] of its
/// expiry. Concurrent callers share one refresh: they wait on a lock while it runs and then get
/// its token — or its error (as [`CredentialError::ConcurrentRefresh`]) rather than starting an
/// exchange of their own. Errors are not cached: the next call after a failure exchanges again.
pub struct Cached<C> {
    inner: C,
    /// Number of completed exchanges (of any scope).
    completed: AtomicU64,
    slots: Mutex<HashMap<String, Slot>>,
}

#[derive(Default)]
struct Slot {
    token: Option<AccessToken>,
    /// The completion number and message of the latest failed refresh.
    failure: Option<(u64, String)>,
}

impl<C: TokenCredential> Cached<C> {
    /// Caches the tokens of `inner`.
    pub fn new(inner: C) -> Self {
        Self {
            inner,
            completed: AtomicU64::new(0),
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped credential.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    async fn cached_token(&self, scope: &str) -> Result<AccessToken, CredentialError> {
        let seen = self.completed.load(Ordering::Acquire);
        let mut slots = self.slots.lock().await;
        let slot = slots.entry(scope.to_string()).or_default();
        if let Some(token) = slot.token.as_ref().filter(|t| t.remaining() > REFRESH_BEFORE_EXPIRY) {
            return Ok(token.clone());
        }
        if let Some((completion, message)) = &slot.failure {
            if *completion > seen {
                // A refresh that ran while this caller waited for the lock has failed.
                return Err(CredentialError::ConcurrentRefresh {
                    message: message.clone(),
                });
            }
        }
        let result = self.inner.token(scope).await;
        let completion = self.completed.fetch_add(1, Ordering::AcqRel) + 1;
        match result {
            Ok(token) => {
                slot.token = Some(token.clone());
                slot.failure = None;
                Ok(token)
            }
            Err(error) => {
                slot.failure = Some((completion, error.to_string()));
                match slot.token.as_ref().filter(|t| t.remaining() > GRACE) {
                    Some(token) => {
                        tracing::warn!(%error, "token refresh failed; using the cached token until it expires");
                        Ok(token.clone())
                    }
                    None => Err(error),
                }
            }
        }
    }
}

impl<C: TokenCredential> TokenCredential for Cached<C> {
    fn token<'a>(&'a self, scope: &'a str) -> BoxFuture<'a, Result<AccessToken, CredentialError>> {
        Box::pin(self.cached_token(scope))
    }

    fn invalidate(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.slots.lock().await.clear();
            self.inner.invalidate().await;
        })
    }
}

impl<C: fmt::Debug> fmt::Debug for Cached<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cached")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}
