//! Pass **recursion**: boxes the fields that close a cycle of direct containment.
//!
//! A field holding a named type directly (not inside a `Vec` or a map) is an edge of the containment graph;
//! union variants are edges too. A field edge `A → B` is boxed when `B` reaches `A` again through direct
//! edges — that is every field edge on a cycle, direct or indirect (A → B → C → A), so the generated types
//! have a finite size.
//!
//! An edge `A → B` closes a cycle exactly when `A` and `B` are in the same strongly connected component of the
//! graph (a self-edge included), so the components are computed once (Tarjan's algorithm, `petgraph`, which
//! runs without recursion): linear in the size of the IR, where following the edges again from every field took
//! quadratic time on long chains of definitions.

use std::collections::BTreeMap;

use petgraph::graph::{DiGraph, NodeIndex};

use crate::ir::{Ir, TypeId, TypeKind, TypeRef};

pub fn run(ir: &mut Ir) {
    let mut graph: DiGraph<(), ()> = DiGraph::new();
    let nodes: BTreeMap<&TypeId, NodeIndex> = ir.types.keys().map(|id| (id, graph.add_node(()))).collect();
    let edge = |graph: &mut DiGraph<(), ()>, from: NodeIndex, to: &TypeId| {
        if let Some(&to) = nodes.get(to) {
            graph.update_edge(from, to, ());
        }
    };
    for (id, def) in &ir.types {
        let Some(&from) = nodes.get(id) else { continue };
        match &def.kind {
            TypeKind::Object(o) => {
                for p in &o.properties {
                    if let TypeRef::Named(n) = &p.ty {
                        edge(&mut graph, from, n);
                    }
                }
            }
            TypeKind::Union(u) => {
                for (_, v) in &u.variants {
                    edge(&mut graph, from, v);
                }
            }
            TypeKind::Enum(_) => {}
        }
    }
    let mut component = vec![usize::MAX; graph.node_count()];
    for (i, scc) in petgraph::algo::tarjan_scc(&graph).iter().enumerate() {
        for n in scc {
            component[n.index()] = i;
        }
    }
    let same_component = |a: &TypeId, b: &TypeId| match (nodes.get(a), nodes.get(b)) {
        (Some(a), Some(b)) => component[a.index()] == component[b.index()],
        _ => false,
    };
    let mut to_box = Vec::new();
    for (id, def) in &ir.types {
        if let TypeKind::Object(o) = &def.kind {
            for (i, p) in o.properties.iter().enumerate() {
                if let TypeRef::Named(n) = &p.ty {
                    // `n` reaches `id` again: a self-edge, or both in one component.
                    if n == id || same_component(n, id) {
                        to_box.push((id.clone(), i));
                    }
                }
            }
        }
    }
    for (id, i) in to_box {
        if let Some(TypeKind::Object(o)) = ir.types.get_mut(&id).map(|t| &mut t.kind) {
            if let Some(p) = o.properties.get_mut(i) {
                p.boxed = true;
            }
        }
    }
}
