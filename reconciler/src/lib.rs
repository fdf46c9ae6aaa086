//! The thin reconciler: one generic reconcile loop over every generated custom resource kind
//! ([`aks_api::KINDS`]), against Azure Resource Manager.
//!
//! - [`arm`]: the ARM client (long-running operations, retries, error bodies).
//! - [`reconcile`]: the loop itself, the same code path for every kind.
//! - [`resolve`]: secret and resource references resolved into the PUT body.
//! - [`exports`]: `spec.operatorSpec` exports to Secrets and ConfigMaps once a resource is ready.
//! - [`controller`]: one kube-rs `Controller` per registered kind.
//! - [`leader`]: Lease-based leader election, so two replicas never reconcile the same object.
//! - [`import`]: existing Azure resources → custom resources (`armctl import <ARM ID>`).
//! - [`serve`]: the conversion webhook over TLS, the probes and metrics server; [`metrics`]: the Prometheus
//!   series.
//! - [`names`]: tenant-written names checked before they reach a URL; [`claims`]: one custom resource per
//!   Azure resource.
//! - [`credentials`]: workload identity, managed identity and client-secret tokens; [`sources`]: which one an
//!   object uses (annotation, namespace Secret, global default).
//!
//! It depends on the generated crate (`aks-api`: the registry and the types) and `armgen-runtime`, never on the
//! generator, the simulator or the fake API server (those are dev-dependencies of its tests), and it holds no
//! code per kind or per field: what differs between kinds is data in the registry.

pub mod arm;
pub mod claims;
pub mod controller;
pub mod credentials;
pub mod exports;
pub mod import;
pub mod leader;
pub mod metrics;
pub mod names;
pub mod reconcile;
pub mod resolve;
pub mod serve;
pub mod sources;
