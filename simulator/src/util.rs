//! Small helpers: ARM error bodies, time stamps, random and deterministic identifiers.
//!
//! The identifiers and times come from crates rather than from hand-rolled code: `uuid` (already a workspace
//! dependency, as the runtime derives name-based UUIDs) for operation IDs (version 4) and the server-assigned
//! IDs that must stay the same across updates (version 5, name-based: stable across runs and Rust versions,
//! which std's hashers are not); `jiff` (already in the tree through `k8s-openapi`, only its `std` feature
//! added) for RFC 3339 time stamps; `rand` 0.9 (already in the lock through `proptest`) for bearer tokens,
//! from its thread-local cryptographically secure generator. No simulator behaviour depends on a seed: the
//! only random values are identifiers and tokens no test compares, so there is no seeded generator.

use jiff::Timestamp;
use rand::Rng;
use serde_json::{Value, json};
use uuid::Uuid;

/// An ARM error: an HTTP status and the `{"error":{"code","message","target"?}}` body (the specs' `CloudError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ArmError {
    /// The HTTP status code.
    pub status: u16,
    /// The ARM error code, e.g. `ResourceNotFound`.
    pub code: String,
    /// The message.
    pub message: String,
    /// What the error is about, e.g. the property a `PropertyChangeNotAllowed` names.
    pub target: Option<String>,
}

impl ArmError {
    pub(crate) fn new(status: u16, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            code: code.to_string(),
            message: message.into(),
            target: None,
        }
    }

    /// The same error about `target`.
    pub(crate) fn with_target(mut self, target: impl Into<String>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// The ARM error body.
    pub fn body(&self) -> Value {
        let mut error = json!({"code": self.code, "message": self.message});
        if let Some(target) = &self.target {
            error["target"] = json!(target);
        }
        json!({ "error": error })
    }
}

/// The namespace of the simulator's name-based UUIDs: the version 5 UUID of `urn:armgen:arm-simulator` in the
/// URL namespace of RFC 4122 (a test checks the derivation), so they never coincide with the runtime's
/// [`armgen_runtime::derived_uuid_name`]s, which use the URL namespace itself.
const STABLE_NAMESPACE: Uuid = Uuid::from_u128(0xd798_18a2_ae47_5092_9017_2b66_04a5_c1e7);

/// A random (version 4) UUID, as ARM writes operation IDs.
pub(crate) fn random_uuid() -> String {
    Uuid::new_v4().to_string()
}

/// A name-based (version 5) UUID of `seed`, so that server-assigned IDs (principal and client IDs, the FQDN's
/// hash) stay the same across updates and simulator runs.
pub(crate) fn stable_uuid(seed: &str) -> String {
    Uuid::new_v5(&STABLE_NAMESPACE, seed.as_bytes()).to_string()
}

/// An opaque random token: 32 bytes from the thread's cryptographically secure generator, as 64 hex digits.
pub(crate) fn random_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> i64 {
    Timestamp::now().as_second()
}

/// The current time as RFC 3339 in UTC with 7 fractional digits, as ARM writes it (`2025-01-01T12:00:00.1234567Z`).
pub(crate) fn now_rfc3339() -> String {
    rfc3339(Timestamp::now())
}

fn rfc3339(at: Timestamp) -> String {
    format!("{at:.7}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_namespace_is_derived_as_documented() {
        assert_eq!(
            STABLE_NAMESPACE,
            Uuid::new_v5(&Uuid::NAMESPACE_URL, b"urn:armgen:arm-simulator")
        );
    }

    #[test]
    fn uuids_are_shaped_and_stable() {
        let u = random_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(u.matches('-').count(), 4);
        assert_eq!(Uuid::parse_str(&u).map(|u| u.get_version_num()), Ok(4));
        assert_ne!(random_uuid(), u);
        assert_eq!(stable_uuid("a"), stable_uuid("a"));
        assert_ne!(stable_uuid("a"), stable_uuid("b"));
        assert_eq!(Uuid::parse_str(&stable_uuid("a")).map(|u| u.get_version_num()), Ok(5));
    }

    #[test]
    fn tokens_are_random_hex() {
        let t = random_token();
        assert_eq!(t.len(), 64);
        assert!(t.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(random_token(), t);
    }

    #[test]
    fn times_are_rfc3339_with_seven_digits() {
        let at = Timestamp::new(1_704_067_200, 123_456_789).expect("in range");
        assert_eq!(rfc3339(at), "2024-01-01T00:00:00.1234567Z");
        let leap = Timestamp::new(1_709_210_096, 0).expect("in range");
        assert_eq!(rfc3339(leap), "2024-02-29T12:34:56.0000000Z");
        let now = now_rfc3339();
        assert_eq!(now.len(), 28, "{now}");
        assert!(now.parse::<Timestamp>().is_ok(), "{now}");
        assert!(unix_now() > 1_704_067_200);
    }
}
