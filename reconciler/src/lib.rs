//! The thin reconciler: one generic reconcile loop over every generated custom resource kind
//! ([`aks_api::KINDS`]), against Azure Resource Manager.
//!
//! - [`arm`]: the ARM client (long-running operations, retries, error bodies).
//! - [`reconcile`]: the loop itself, the same code path for every kind.
//! - [`resolve`]: secret and resource references resolved into the PUT body.
//! - [`exports`]: `spec.operatorSpec` exports to Secrets and ConfigMaps once a resource is ready.
//! - [`controller`]: one kube-rs `Controller` per registered kind.
//! - [`import`]: existing Azure resources → custom resources (`armctl import <ARM ID>`).
//! - [`credentials`]: workload identity, managed identity and client-secret tokens; [`sources`]: which one an
//!   object uses (annotation, namespace Secret, global default).

pub mod arm;
pub mod controller;
pub mod credentials;
pub mod exports;
pub mod import;
pub mod reconcile;
pub mod resolve;
pub mod sources;
