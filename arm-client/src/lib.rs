//! The Azure Resource Manager client shared by the reconciler (`aks-reconciler`) and `armctl`.
//!
//! - [`arm`]: the ARM HTTP client: GET, PUT, DELETE and POST on resource IDs; retries with jittered backoff
//!   ([`backon`]) and `Retry-After`; long-running operations ([`arm::Poller`]); errors that name the request,
//!   never the URL with its query; a [`RequestMetrics`] hook for the caller's metrics; the per-object requeue
//!   backoff the reconciler paces retries with.
//! - [`credentials`]: Entra ID tokens (workload identity, managed identity, client secret), cached, and their
//!   configuration from the environment or a Kubernetes Secret's data.
//! - [`names`]: tenant-written names checked before they reach a URL; the client checks every ARM ID with it, and
//!   the reconciler checks `spec` names with it.
//!
//! It may not depend on any workspace crate — not the generated `aks-api`, not `armgen-runtime`, not the
//! reconciler — nor on `kube` or kube-runtime's controller machinery: it speaks HTTP to ARM and Entra ID, and
//! knows nothing of kinds or controllers. It uses `k8s-openapi` for types only (a `Secret`'s data). Whoever
//! needs the registry (importing ARM bodies into custom resources) builds on it: `arm-import`.
//!
//! **Metrics are a hook** ([`RequestMetrics`]), not `prometheus-client` types: the reconciler owns the one
//! Prometheus registry and the series' names, `armctl` has no metrics, and neither should pull a metrics library
//! into the other's client.

pub mod arm;
pub mod credentials;
pub mod names;

pub use arm::{ArmClient, ArmError, RequestMetrics, RetryPolicy};

/// The names of the `[dependencies]` of a Cargo manifest (not the dev-dependencies), for the architecture tests.
#[cfg(test)]
pub(crate) fn dependencies(manifest: &str) -> Vec<&str> {
    let section = manifest.split("\n[dependencies]\n").nth(1).unwrap_or_default();
    let section = section.split("\n[").next().unwrap_or_default();
    section
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| line.split(['=', '.', ' ']).next())
        .collect()
}

#[cfg(test)]
mod architecture {
    //! What the crate docs say it may not depend on, checked against its manifest.

    #[test]
    fn depends_on_no_workspace_crate_nor_kube_nor_a_metrics_library() {
        let deps = super::dependencies(include_str!("../Cargo.toml"));
        assert!(deps.contains(&"reqwest") && deps.contains(&"backon"), "{deps:?}");
        for forbidden in [
            "aks-api",
            "armgen",
            "armgen-runtime",
            "aks-reconciler",
            "arm-import",
            "arm-simulator",
            "fake-apiserver",
            "kube",
            "kube-runtime",
            "prometheus-client",
        ] {
            assert!(
                !deps.contains(&forbidden),
                "arm-client may not depend on {forbidden}: {deps:?}"
            );
        }
    }

    #[test]
    fn dependencies_are_read_from_the_dependencies_section_only() {
        let manifest = "[package]\nname = \"x\"\n\n[dependencies]\n# a comment\na = \"1\"\nb.workspace = true\n\
                        c = { version = \"1\" }\n\n[dev-dependencies]\nd = \"1\"\n";
        assert_eq!(super::dependencies(manifest), ["a", "b", "c"]);
    }
}
