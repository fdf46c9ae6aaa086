//! The thin reconciler: one generic reconcile loop over every generated custom resource kind
//! ([`aks_api::KINDS`]), against Azure Resource Manager.
//!
//! - [`arm`], [`credentials`], [`names`]: the ARM client (long-running operations, retries, error bodies), its
//!   Entra ID tokens and the checks of names bound for a URL — the `arm-client` crate, re-exported here, shared
//!   with `armctl`.
//! - [`reconcile`]: the loop itself, the same code path for every kind; [`context`]: what it shares with the
//!   modules it calls (settings, failures, credentials interface); [`kinds`]: the generated kinds by name.
//! - [`resolve`]: secret and resource references resolved into the PUT body.
//! - [`exports`]: `spec.operatorSpec` exports to Secrets and ConfigMaps once a resource is ready.
//! - [`views`]: read-only ARM GETs under a resource (upgrade profiles, machines) kept in its status.
//! - [`controller`]: one kube-rs `Controller` per registered kind; [`cache`]: what its watch cache keeps of an
//!   object.
//! - [`leader`]: Lease-based leader election, so two replicas never reconcile the same object.
//! - [`import`]: existing Azure resources → custom resources (`armctl import <ARM ID>`): the `arm-import` crate,
//!   re-exported here.
//! - [`events`]: Kubernetes Events about the objects, repeats folded into series, in bounded memory.
//! - [`serve`]: the conversion webhook over TLS, the probes and metrics server; [`metrics`]: the Prometheus
//!   series.
//! - [`claims`]: one custom resource per Azure resource.
//! - [`sources`]: which credential an object uses (annotation, namespace Secret, global default).
//!
//! It depends on the generated crate (`aks-api`: the registry and the types), `armgen-runtime`, `arm-client` and
//! `arm-import`, never on the generator, the simulator or the fake API server (those are dev-dependencies of its
//! tests), and it holds no code per kind or per field: what differs between kinds is data in the registry.

pub mod actions;
pub mod cache;
pub mod capi;
pub mod claims;
pub mod context;
pub mod controller;
pub mod events;
pub mod exports;
pub mod kinds;
pub mod leader;
pub mod metrics;
pub mod reconcile;
pub mod resolve;
pub mod serve;
pub mod sources;
pub mod views;

// The paths the reconciler's modules, its tests and its users have always used (`crate::arm`,
// `aks_reconciler::credentials`, …), now from the crates shared with `armctl`.
pub use arm_client::{arm, credentials, names};
pub use arm_import as import;

#[cfg(test)]
mod architecture {
    //! The crate's modules form no cycle: each `crate::<module>` path in a module's code (comments aside) is an
    //! edge, and the graph of the top-level modules must be acyclic.

    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// `crate::x` edges of one module's source text, comments and doc comments left out.
    fn edges(source: &str, own: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for line in source.lines() {
            let code = line.split("//").next().unwrap_or_default();
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != own && modules.contains(&name) {
                    out.insert(name);
                }
            }
        }
        out
    }

    /// A cycle of `graph`, if there is one (depth-first search; the path from the first revisited module).
    fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
        fn visit(
            node: &str,
            graph: &BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
        ) -> Option<Vec<String>> {
            if let Some(at) = path.iter().position(|n| n == node) {
                let mut found = path[at..].to_vec();
                found.push(node.to_string());
                return Some(found);
            }
            if done.contains(node) {
                return None;
            }
            path.push(node.to_string());
            for next in graph.get(node).into_iter().flatten() {
                if let Some(found) = visit(next, graph, path, done) {
                    return Some(found);
                }
            }
            path.pop();
            done.insert(node.to_string());
            None
        }
        let mut done = BTreeSet::new();
        graph
            .keys()
            .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
    }

    fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
        let mut sources: BTreeMap<String, String> = BTreeMap::new();
        for entry in std::fs::read_dir(src).expect("reconciler/src") {
            let path = entry.expect("entry").path();
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            if path.is_dir() {
                for file in std::fs::read_dir(&path).expect("module folder") {
                    let file = file.expect("entry").path();
                    let text = std::fs::read_to_string(&file).expect("source");
                    sources.entry(name.clone()).or_default().push_str(&text);
                }
            } else if name != "lib" && name != "main" {
                sources.insert(name, std::fs::read_to_string(&path).expect("source"));
            }
        }
        let modules: BTreeSet<String> = sources.keys().cloned().collect();
        sources
            .iter()
            .map(|(name, text)| (name.clone(), edges(text, name, &modules)))
            .collect()
    }

    #[test]
    fn the_modules_form_no_cycle() {
        let graph = module_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
        assert!(graph.len() > 10, "the crate's modules were read: {:?}", graph.keys());
        assert!(graph["reconcile"].contains("context"), "edges are found: {graph:?}");
        if let Some(found) = cycle(&graph) {
            panic!("module cycle: {}", found.join(" → "));
        }
    }

    #[test]
    fn a_cycle_is_found_and_comments_are_not_edges() {
        let modules: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
        let a = edges(
            "use crate::b::X;\n/// see [`crate::c`]\nfn f() { crate::c::g() } // crate::a",
            "a",
            &modules,
        );
        assert_eq!(a, ["b", "c"].map(String::from).into());
        let mut graph = BTreeMap::new();
        graph.insert("a".to_string(), a);
        graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
        graph.insert("c".to_string(), BTreeSet::new());
        assert_eq!(cycle(&graph), None);
        graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
        assert_eq!(cycle(&graph).map(|c| c.join(" → ")), Some("a → b → c → a".to_string()));
    }
}
