//! An Azure Resource Manager simulator for tests and demos, driven by the generated resource registry
//! ([`aks_api::KINDS`]).
