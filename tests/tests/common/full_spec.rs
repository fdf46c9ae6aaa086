//! A spec of a kind with every writable field set, built by walking the Kubernetes IR, and its leaves: what
//! changing each one does to change detection. Used by `tests/diff.rs` and the `diff` benchmark.

use armgen::ir::{Primitive, TypeKind};
use armgen::shape::{KubeField, KubeIr, KubeRef, Special};
use serde_json::{Value, json};

/// One leaf of the full spec the walker builds.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// Where the leaf is in the spec JSON.
    pub pointer: String,
    /// The path a difference of this leaf is reported at.
    pub path: String,
    /// The changed value.
    pub changed: Value,
    /// How the difference shows the changed value (JSON text).
    pub shown: String,
    pub what: LeafKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafKind {
    /// Changing it is exactly one difference at `path`.
    Compared,
    /// A secret: never compared.
    Secret,
    /// An identifier of an array item (`[name=…]`): changing it makes the item another one (two differences).
    Identifier,
}

/// Builds a spec in which every writable field is set: strings `"abc"`, booleans `false`, integers 3,
/// numbers 1.5, the first value of each enum, one item per array, one key (`key1`) per map.
struct Walker<'a> {
    ir: &'a armgen::ir::Ir,
    kube: &'a KubeIr,
    leaves: Vec<Leaf>,
}

impl Walker<'_> {
    fn object(&mut self, fields: &[KubeField], pointer: &str, path: &str, depth: usize) -> Value {
        let mut out = serde_json::Map::new();
        for f in fields.iter().filter(|f| f.special == Special::None) {
            let p = format!("{pointer}/{}", f.json_name);
            let q = format!("{path}.{}", f.json_name);
            if let Some(v) = self.value(&f.ty, f.identifiers.as_deref(), &p, &q, depth + 1) {
                out.insert(f.json_name.clone(), v);
            }
        }
        Value::Object(out)
    }

    fn leaf(&mut self, pointer: &str, path: &str, value: Value, changed: Value, what: LeafKind) -> Option<Value> {
        // A resource reference is shown as its ARM ID.
        let shown = changed.get("armId").unwrap_or(&changed).to_string();
        self.leaves.push(Leaf {
            pointer: pointer.to_string(),
            path: path.to_string(),
            changed,
            shown,
            what,
        });
        Some(value)
    }

    fn value(&mut self, k: &KubeRef, ids: Option<&[String]>, pointer: &str, path: &str, depth: usize) -> Option<Value> {
        assert!(depth < 16, "{path}: too deep");
        match k {
            KubeRef::Kube(id) => {
                let t = self.kube.types.get(id).expect("kube type");
                Some(self.object(&t.fields.clone(), pointer, path, depth))
            }
            KubeRef::Primitive(Primitive::String) => {
                self.leaf(pointer, path, json!("abc"), json!("abcx"), LeafKind::Compared)
            }
            KubeRef::Primitive(Primitive::Bool) => {
                self.leaf(pointer, path, json!(false), json!(true), LeafKind::Compared)
            }
            KubeRef::Primitive(Primitive::Int32 | Primitive::Int64) => {
                self.leaf(pointer, path, json!(3), json!(4), LeafKind::Compared)
            }
            KubeRef::Primitive(Primitive::Float | Primitive::Double) => {
                self.leaf(pointer, path, json!(1.5), json!(2.5), LeafKind::Compared)
            }
            KubeRef::ArmEnum(id) => {
                let Some(TypeKind::Enum(e)) = self.ir.types.get(id).map(|t| &t.kind) else {
                    panic!("{path}: enum {id} missing")
                };
                let first = json!(e.values[0].value);
                // A one-value closed enum cannot change; set, not a leaf.
                match (e.values.get(1), e.open) {
                    (Some(second), _) => self.leaf(pointer, path, first, json!(second.value), LeafKind::Compared),
                    (None, true) => self.leaf(pointer, path, first, json!("SomethingNew"), LeafKind::Compared),
                    (None, false) => Some(first),
                }
            }
            KubeRef::ResourceRef => self.leaf(
                pointer,
                path,
                json!({"armId": "/subscriptions/s/resourceGroups/rg/providers/P/t/one"}),
                json!({"armId": "/subscriptions/s/resourceGroups/rg/providers/P/t/two"}),
                LeafKind::Compared,
            ),
            KubeRef::Secret => self.leaf(
                pointer,
                path,
                json!({"name": "s", "key": "k"}),
                json!({"name": "s2", "key": "k"}),
                LeafKind::Secret,
            ),
            KubeRef::Json => self
                .leaf(
                    &format!("{pointer}/k"),
                    &format!("{path}.k"),
                    json!({"k": "v"}),
                    json!("w"),
                    LeafKind::Compared,
                )
                .map(|_| json!({"k": "v"})),
            KubeRef::Array(inner) => {
                let identified = match (inner.as_ref(), ids) {
                    (KubeRef::Kube(item), Some(ids)) if !ids.is_empty() => {
                        let t = self.kube.types.get(item).expect("item type");
                        ids.iter().all(|id| t.fields.iter().any(|g| g.json_name == *id))
                    }
                    _ => false,
                };
                let item_path = if identified {
                    let keys: Vec<String> = ids.into_iter().flatten().map(|id| format!("{id}=abc")).collect();
                    format!("{path}[{}]", keys.join(","))
                } else {
                    format!("{path}[0]")
                };
                let before = self.leaves.len();
                let item = self.value(inner, None, &format!("{pointer}/0"), &item_path, depth + 1)?;
                if identified {
                    for leaf in &mut self.leaves[before..] {
                        let id = leaf.pointer.rsplit('/').next().unwrap_or_default().to_string();
                        if leaf.pointer == format!("{pointer}/0/{id}") && ids.into_iter().flatten().any(|i| *i == id) {
                            leaf.what = LeafKind::Identifier;
                        }
                    }
                }
                Some(json!([item]))
            }
            KubeRef::Map(inner) => {
                let item = self.value(
                    inner,
                    None,
                    &format!("{pointer}/key1"),
                    &format!("{path}[key1]"),
                    depth + 1,
                )?;
                Some(json!({ "key1": item }))
            }
            // A map keyed by ARM IDs (`armIdKeys`), listed as references: the one item's ID is the leaf.
            KubeRef::RefKeys(_) => {
                let item = self.leaf(
                    &format!("{pointer}/0"),
                    &format!("{path}[0]"),
                    json!({"armId": "/subscriptions/s/resourceGroups/rg/providers/P/t/one"}),
                    json!({"armId": "/subscriptions/s/resourceGroups/rg/providers/P/t/two"}),
                    LeafKind::Compared,
                )?;
                Some(json!([item]))
            }
            // `<field>FromConfig` fields are special (not set here: the value is).
            KubeRef::ConfigMapRef => None,
            KubeRef::ArmUnion(_) => panic!("{path}: the configured specs have no unions in spec"),
        }
    }
}

/// The full spec of `kind` in `version` of group `group` (module name, e.g. `containerservice`) and its leaves.
pub fn full_spec(generation: &armgen::Generation, group: &str, version: &str, kind: &str) -> (Value, Vec<Leaf>) {
    let key = format!("{group}/{version}");
    let ir = generation.irs.get(&key).unwrap_or_else(|| panic!("no IR of {key}"));
    let kube = generation
        .kubes
        .get(&key)
        .unwrap_or_else(|| panic!("no shape of {key}"));
    let r = kube
        .resources
        .iter()
        .find(|r| r.kind == kind)
        .unwrap_or_else(|| panic!("{key}: no resource {kind}"));
    let mut w = Walker {
        ir,
        kube,
        leaves: Vec::new(),
    };
    let spec = w.object(&r.spec_fields, "", "spec", 0);
    (spec, w.leaves)
}
