//! The thin reconciler: one generic reconcile loop over every generated custom resource kind
//! ([`aks_api::KINDS`]), against Azure Resource Manager.

pub mod credentials;
