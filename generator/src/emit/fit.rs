//! Fitting a CRD manifest into its size budget in linear time (what [`super::crd::Crd::fit`] does).
//!
//! The budget is measured on the YAML file. Serializing the manifest once per candidate (as the first version of
//! `fit` did, once per depth level) costs O(depth × size), and for a chain of nested definitions the YAML itself
//! grows with the square of the depth (indentation), so a 1,000-deep chain took minutes. Instead:
//!
//! - **A size model of the YAML** (`serde_yaml_ng`: block style, two spaces per mapping level, sequences inside
//!   mappings not indented, no line folding, no indentation on blank lines of a block scalar). A node's size is
//!   `bytes + indent × lines` ([`Size`]): its bytes at indentation 0 and how many of its lines carry the
//!   indentation of where it is placed. Sizes are computed once per node, bottom up, from the serialization of
//!   each scalar entry alone; a mapping or sequence adds only its key line. [`measure`] walks the manifest once
//!   and records, for every schema node under `openAPIV3Schema`, its field depth, what cutting its description
//!   to the first sentence saves and what replacing its fields by `x-kubernetes-preserve-unknown-fields` saves,
//!   at the indentation it really has. A key the model cannot size (a non-simple YAML key) marks the measure
//!   inexact, and fitting falls back to measuring real serializations.
//! - **One pass over depths** then predicts the size for every trim depth (prefix sums of the savings per depth)
//!   and picks the deepest trim that fits, exactly as trying them one by one from the deepest would.
//!
//! The real YAML is serialized twice: once for the original size and once to check the result; when the check
//! disagrees with the model (it never should; `generator/tests/fit.rs` compares them), the trim steps on with real
//! measurements, so the budget holds either way.
//!
//! What is given up, in order, until the manifest fits (decision: structure is worth more than prose, and
//! shallow fields more than deep ones):
//!
//! 0. (before any of this, in [`super::crd::Crd::fit`]) the field descriptions of the older versions, the oldest
//!    first, never of the storage version or the newest served one: their structure stays whole;
//! 1. descriptions of fields more than `limit` levels below spec/status are cut to their first sentence, for the
//!    largest `limit` that fits (the deepest fields first);
//! 2. when even every description below spec/status cut to its first sentence is not enough: objects more than
//!    `cut` levels below spec/status keep their description but lose their fields (`properties`, `required`) and
//!    become `x-kubernetes-preserve-unknown-fields: true` (the API server stops validating there; the Rust types
//!    still do), for the largest `cut` that fits with step 1 at its strongest; then step 1 runs again on the cut
//!    manifest, so that as many descriptions as fit are kept whole.
//!
//! Each step is reported as a note of the manifest (in its file header) and in [`Fitted`], which `generate`
//! prints as a warning.

use serde_json::{Map, Value};

/// The YAML size of a node placed at some indentation: `bytes + indent × lines`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Size {
    /// Bytes at indentation 0.
    pub bytes: usize,
    /// Lines that carry the indentation (every line but the blank lines of block scalars).
    pub lines: usize,
}

impl Size {
    fn of_text(s: &str) -> Size {
        Size {
            bytes: s.len(),
            lines: s.split('\n').filter(|l| !l.is_empty()).count(),
        }
    }

    /// Bytes when placed at `indent`.
    pub fn at(self, indent: usize) -> usize {
        self.bytes + indent * self.lines
    }

    fn shifted(self, by: usize) -> Size {
        Size {
            bytes: self.bytes + by * self.lines,
            lines: self.lines,
        }
    }
}

impl std::ops::Add for Size {
    type Output = Size;
    fn add(self, o: Size) -> Size {
        Size {
            bytes: self.bytes + o.bytes,
            lines: self.lines + o.lines,
        }
    }
}

impl std::ops::AddAssign for Size {
    fn add_assign(&mut self, o: Size) {
        *self = *self + o;
    }
}

/// What [`measure`] learned about one schema node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// Field depth: the `openAPIV3Schema` root is 0, spec and status 1, their fields 2.
    pub depth: usize,
    /// Bytes saved by cutting its description to the first sentence (0: nothing to cut).
    pub trim_saving: usize,
    /// Whether cutting its description changes it.
    pub trimmable: bool,
    /// For an object with `properties` that no object at the same depth contains: the bytes saved by replacing
    /// its fields with `x-kubernetes-preserve-unknown-fields: true`.
    pub cut_saving: Option<usize>,
}

/// The model's view of a manifest.
#[derive(Debug, Clone, Default)]
pub struct Measure {
    /// The YAML body (without the header comments).
    pub size: Size,
    /// Every schema node, in document order.
    pub nodes: Vec<Node>,
    /// False when a key could not be sized (then the size is not to be trusted).
    pub exact: bool,
}

impl Measure {
    /// Deepest field depth (0 for a manifest without schemas).
    pub fn deepest(&self) -> usize {
        self.nodes.iter().map(|n| n.depth).max().unwrap_or(0)
    }

    /// Per depth: (bytes saved, descriptions changed) by trimming the descriptions at exactly that depth.
    pub fn trim_by_depth(&self) -> Vec<(usize, usize)> {
        let mut out = vec![(0, 0); self.deepest() + 1];
        for n in &self.nodes {
            if n.trimmable {
                out[n.depth].0 += n.trim_saving;
                out[n.depth].1 += 1;
            }
        }
        out
    }

    /// Per depth: (bytes saved, objects cut) by cutting the fields of the objects at exactly that depth.
    pub fn cut_by_depth(&self) -> Vec<(usize, usize)> {
        let mut out = vec![(0, 0); self.deepest() + 1];
        for n in &self.nodes {
            if let Some(s) = n.cut_saving {
                out[n.depth].0 += s;
                out[n.depth].1 += 1;
            }
        }
        out
    }
}

/// Measures `manifest` as `serde_yaml_ng::to_string` would write it.
pub fn measure(manifest: &Value) -> Measure {
    let mut m = Measure {
        exact: true,
        ..Measure::default()
    };
    m.size = match manifest {
        Value::Object(map) if !map.is_empty() => map_size(map, 0, &mut m),
        Value::Array(items) if !items.is_empty() => seq_size(items, 0, &mut m),
        other => text_size(other),
    };
    m
}

/// The YAML size of a value serialized alone.
fn text_size(v: &Value) -> Size {
    serde_yaml_ng::to_string(v)
        .map(|t| Size::of_text(&t))
        .unwrap_or_default()
}

/// `key: value` for a value written on the key's line (scalar, empty mapping or sequence).
fn scalar_entry(key: &str, v: &Value) -> Size {
    let mut one = Map::new();
    one.insert(key.to_string(), v.clone());
    text_size(&Value::Object(one))
}

/// `key:` on its own line (before a nested mapping or sequence).
fn key_line(key: &str, m: &mut Measure) -> Size {
    let mut one = Map::new();
    one.insert(key.to_string(), Value::Object(Map::new()));
    let text = serde_yaml_ng::to_string(&Value::Object(one)).unwrap_or_default();
    match text.strip_suffix(" {}\n") {
        Some(k) if !k.contains('\n') && !k.starts_with('?') => Size {
            bytes: k.len() + 1,
            lines: 1,
        },
        _ => {
            m.exact = false;
            Size {
                bytes: text.len(),
                lines: 1,
            }
        }
    }
}

fn entry_size(key: &str, v: &Value, indent: usize, m: &mut Measure) -> Size {
    match v {
        Value::Object(map) if !map.is_empty() => {
            let kl = key_line(key, m);
            let body = if key == "openAPIV3Schema" {
                schema_size(map, indent + 2, 0, None, m)
            } else {
                map_size(map, indent + 2, m)
            };
            kl + body.shifted(2)
        }
        Value::Array(items) if !items.is_empty() => key_line(key, m) + seq_size(items, indent, m),
        _ => scalar_entry(key, v),
    }
}

/// A block mapping whose entries are at `indent`; the size is relative (at indentation 0).
fn map_size(map: &Map<String, Value>, indent: usize, m: &mut Measure) -> Size {
    let mut s = Size::default();
    for (k, v) in map {
        s += entry_size(k, v, indent, m);
    }
    s
}

/// A block sequence whose `- ` marks are at `indent` (not indented under its key).
fn seq_size(items: &[Value], indent: usize, m: &mut Measure) -> Size {
    let mut s = Size::default();
    for item in items {
        s += match item {
            Value::Object(map) if !map.is_empty() => map_size(map, indent + 2, m).shifted(2),
            Value::Array(inner) if !inner.is_empty() => seq_size(inner, indent + 2, m).shifted(2),
            _ => text_size(&Value::Array(vec![item.clone()])),
        };
    }
    s
}

/// A schema node (a mapping) whose entries are at `indent`, at field depth `depth`; `props_depth` is the depth
/// of the nearest enclosing object with `properties`.
fn schema_size(
    map: &Map<String, Value>,
    indent: usize,
    depth: usize,
    props_depth: Option<usize>,
    m: &mut Measure,
) -> Size {
    let slot = m.nodes.len();
    m.nodes.push(Node {
        depth,
        trim_saving: 0,
        trimmable: false,
        cut_saving: None,
    });
    let has_props = matches!(map.get("properties"), Some(Value::Object(p)) if !p.is_empty());
    let inner_props_depth = if has_props { Some(depth) } else { props_depth };
    let mut total = Size::default();
    // What replacing the fields removes: the `properties` and `required` entries.
    let mut removed = Size::default();
    for (k, v) in map {
        let s = match (k.as_str(), v) {
            ("properties", Value::Object(props)) if !props.is_empty() => {
                let mut s = key_line(k, m);
                for (name, child) in props {
                    s += match child {
                        Value::Object(c) if !c.is_empty() => {
                            key_line(name, m).shifted(2)
                                + schema_size(c, indent + 4, depth + 1, inner_props_depth, m).shifted(4)
                        }
                        _ => scalar_entry(name, child).shifted(2),
                    };
                }
                removed += s;
                s
            }
            ("items" | "additionalProperties", Value::Object(c)) if !c.is_empty() => {
                key_line(k, m) + schema_size(c, indent + 2, depth, inner_props_depth, m).shifted(2)
            }
            ("description", Value::String(d)) => {
                let full = scalar_entry(k, v);
                let first = first_sentence(d);
                if first.len() < d.len() {
                    let cut = scalar_entry(k, &Value::String(first));
                    m.nodes[slot].trimmable = true;
                    m.nodes[slot].trim_saving = full.at(indent).saturating_sub(cut.at(indent));
                }
                full
            }
            ("required", _) => {
                let s = entry_size(k, v, indent, m);
                removed += s;
                s
            }
            _ => entry_size(k, v, indent, m),
        };
        total += s;
    }
    // Only the outermost object at a depth is cut (those inside it go with it).
    if has_props && props_depth != Some(depth) {
        let added = if map.contains_key(PRESERVE) {
            Size::default()
        } else {
            scalar_entry(PRESERVE, &Value::Bool(true))
        };
        m.nodes[slot].cut_saving = Some(removed.at(indent).saturating_sub(added.at(indent)));
    }
    total
}

/// The key that makes the API server keep fields it has no schema for.
pub const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";

/// Replaces the fields of every object more than `cut` levels below spec/status (an object at depth `cut + 1`
/// or deeper with `properties`) by `x-kubernetes-preserve-unknown-fields: true`; returns how many objects were
/// cut (the outermost ones).
pub fn cut(node: &mut Value, depth: usize, limit: usize) -> usize {
    let Value::Object(map) = node else { return 0 };
    let has_props = matches!(map.get("properties"), Some(Value::Object(p)) if !p.is_empty());
    if has_props && depth > limit {
        map.remove("properties");
        map.remove("required");
        map.insert(PRESERVE.into(), Value::Bool(true));
        return 1;
    }
    let mut n = 0;
    for (k, v) in map.iter_mut() {
        match k.as_str() {
            "properties" => {
                if let Value::Object(props) = v {
                    for p in props.values_mut() {
                        n += cut(p, depth + 1, limit);
                    }
                }
            }
            "items" | "additionalProperties" => n += cut(v, depth, limit),
            _ => {}
        }
    }
    n
}

/// How a manifest was made to fit its budget: what `generate` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// The file's size before fitting, and after.
    pub original: usize,
    pub fitted: usize,
    pub budget: usize,
    /// Descriptions cut to their first sentence, and the depth below spec/status beyond which they were.
    pub trimmed: usize,
    pub trim_limit: Option<usize>,
    /// Objects whose fields were replaced by `x-kubernetes-preserve-unknown-fields`, and the depth beyond which.
    pub cut: usize,
    pub cut_limit: Option<usize>,
}

impl std::fmt::Display for Fitted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CRD {} is {} bytes, over the budget of {}; ",
            self.crd, self.original, self.budget
        )?;
        let mut parts = Vec::new();
        if let Some(l) = self.cut_limit {
            parts.push(format!(
                "{} objects more than {l} levels below spec/status lost their fields \
                 (x-kubernetes-preserve-unknown-fields)",
                self.cut
            ));
        }
        if let Some(l) = self.trim_limit {
            parts.push(format!(
                "{} descriptions of fields more than {l} levels below spec/status were cut to their first sentence",
                self.trimmed
            ));
        }
        if parts.is_empty() {
            parts.push("nothing could be trimmed".into());
        }
        write!(f, "{}", parts.join(", and "))?;
        if self.fitted > self.budget {
            write!(f, "; still {} bytes", self.fitted)
        } else {
            write!(f, " ({} bytes written)", self.fitted)
        }
    }
}

/// The text up to the end of its first sentence (a `.` followed by a space and a capital letter, not after
/// `e.g`/`i.e`; or a paragraph break), or all of it.
pub(crate) fn first_sentence(d: &str) -> String {
    let mut sentence_end = None;
    for (i, _) in d.match_indices(". ") {
        let before = &d[..i];
        let next = d[i + 2..].chars().next();
        let abbreviation = ["e.g", "i.e", "etc", "vs"].iter().any(|a| before.ends_with(a));
        if !abbreviation && next.is_some_and(|c| c.is_uppercase()) {
            sentence_end = Some(i + 1);
            break;
        }
    }
    let cut = [sentence_end, d.find("\n\n")].into_iter().flatten().min();
    match cut {
        Some(i) => d[..i].trim_end().to_string(),
        None => d.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn first_sentences() {
        assert_eq!(first_sentence("One. Two."), "One.");
        assert_eq!(
            first_sentence("Set it (e.g. '5') or not. Then"),
            "Set it (e.g. '5') or not."
        );
        assert_eq!(first_sentence("A list.\n\nKnown values: `a`."), "A list.");
        assert_eq!(
            first_sentence("version 1.2. lower case goes on"),
            "version 1.2. lower case goes on"
        );
        assert_eq!(first_sentence("No end"), "No end");
    }
}
