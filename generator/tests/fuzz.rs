//! Fuzzing the whole pipeline with mutations of the real AKS spec: load, discover, lower, every pass and the
//! Rust emitter must never panic. Returning an error is fine; that is what bad input should do.
//!
//! Each case takes the 2025-10-01 `managedClusters.json` and the common-types files it references (parsed
//! once), applies a short random sequence of mutations (delete a key, change a value's JSON type, break a
//! `$ref`, change a `type`, add `allOf` or alias cycles, rename properties, definitions and paths to awkward
//! names, mangle enums and discriminators, splice one subtree over another), writes the mutated documents
//! into a temporary folder at the same relative paths (so cross-file `$ref`s still resolve), and runs the
//! pipeline there inside `catch_unwind`.
//!
//! Bounded for CI: `ARMGEN_FUZZ_CASES` cases (default 64, about 10 s in a debug build on two cores) from the
//! fixed seed `ARMGEN_FUZZ_SEED` (default below; `random` for a fresh one each run, printed so that it can be
//! repeated). `ARMGEN_FUZZ_VERBOSE=1` prints each case's mutations and outcome before the next, which names
//! the culprit of a stack overflow (an abort that `catch_unwind` cannot catch). A panic fails the test with
//! the mutations that caused it, shrunk.
//!
//! Needs the spec root: fails when `CI` is set and it is missing, and is ignored otherwise (`cfg(spec_root_missing)`,
//! see `tests/README.md` at the workspace root).

use std::collections::BTreeSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use armgen::discover::discover;
use armgen::emit::rust::{Emitter, format_file};
use armgen::load::SpecSet;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};
use serde_json::{Map, Value, json};

const ROOT_SPEC: &str = concat!(
    "specification/containerservice/resource-manager/Microsoft.ContainerService/aks/",
    "stable/2025-10-01/managedClusters.json"
);
const DEFAULT_CASES: u32 = 64;
const DEFAULT_SEED: u64 = 0x0041_524d_4745_4e00;

/// The real documents, parsed once: relative path under the spec root → JSON. The root spec comes first.
struct Corpus {
    spec_root: PathBuf,
    docs: Vec<(PathBuf, Value)>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The corpus, read once from the spec root. The tests that call this are marked
/// `#[cfg_attr(spec_root_missing, ignore = ...)]` (`generator/build.rs`), so a missing spec root here fails the test.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let root = armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
            panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
        });
        // The loader finds the files the root spec references; the fuzz mutates their raw JSON.
        let specs = SpecSet::load(&root, &[PathBuf::from(ROOT_SPEC)]).expect("the real spec loads");
        let mut docs: Vec<(PathBuf, Value)> = specs
            .docs
            .values()
            .map(|doc| {
                let text = std::fs::read_to_string(&doc.path).expect("read spec");
                let value: Value = serde_json::from_str(&text).expect("spec JSON");
                (doc.display.clone(), value)
            })
            .collect();
        assert!(
            docs.iter().all(|(p, _)| p.is_relative() && !p.starts_with("..")),
            "every document is under the spec root"
        );
        docs.sort_by_key(|(p, _)| p != Path::new(ROOT_SPEC));
        assert_eq!(docs[0].0, Path::new(ROOT_SPEC));
        Corpus { spec_root: root, docs }
    })
}

/// How far a case got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    LoadError,
    DiscoverError,
    LowerError,
    EmitError,
    Generated,
}

const OUTCOMES: [Outcome; 5] = [
    Outcome::LoadError,
    Outcome::DiscoverError,
    Outcome::LowerError,
    Outcome::EmitError,
    Outcome::Generated,
];

/// Writes `docs` under a new temporary spec root and runs every stage on it. `Err` is a panic.
fn run_case(docs: &[(PathBuf, Value)]) -> Result<(Outcome, String), String> {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, value) in docs {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("create folder");
        std::fs::write(&path, serde_json::to_vec(value).expect("serialize")).expect("write spec");
    }
    let root = dir.path().to_path_buf();
    let result = catch_unwind(AssertUnwindSafe(|| pipeline(&root)));
    result.map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic with a non-string payload".into())
    })
}

fn pipeline(root: &Path) -> (Outcome, String) {
    let specs = match SpecSet::load(root, &[PathBuf::from(ROOT_SPEC)]) {
        Ok(s) => s,
        Err(e) => return (Outcome::LoadError, e.to_string()),
    };
    let resources = match discover(&specs) {
        Ok(r) => r,
        Err(e) => return (Outcome::DiscoverError, e.to_string()),
    };
    let mut ir = match armgen::passes::lower::lower(&specs, &resources, "2025-10-01") {
        Ok(ir) => ir,
        Err(e) => return (Outcome::LowerError, e.to_string()),
    };
    armgen::passes::run_all(&mut ir, &Default::default());
    let mut modules: BTreeSet<String> = ir.types.values().map(|t| t.module.clone()).collect();
    modules.extend(ir.resources.iter().map(|r| r.module.clone()));
    let emitter = Emitter::new(&ir);
    for module in &modules {
        let formatted = emitter.module(module).and_then(|tokens| format_file(tokens, module));
        if let Err(e) = formatted {
            return (Outcome::EmitError, e.to_string());
        }
    }
    (
        Outcome::Generated,
        format!("{} resources, {} types", ir.resources.len(), ir.types.len()),
    )
}

// Mutations. Each step is an operation and three random indexes that pick where and how; the sites are
// found in the document as it is at that step, so every step applies to something.

#[derive(Debug, Clone)]
struct Step {
    op: Op,
    doc: Index,
    a: Index,
    b: Index,
    c: Index,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    DeleteKey,
    ChangeJsonType,
    BreakRef,
    SetType,
    AllOfCycle,
    AliasCycle,
    RenameProperty,
    RenameDefinition,
    MangleEnum,
    MangleDiscriminator,
    Splice,
    MangleRequired,
    RenamePath,
}

const OPS: [Op; 13] = [
    Op::DeleteKey,
    Op::ChangeJsonType,
    Op::BreakRef,
    Op::SetType,
    Op::AllOfCycle,
    Op::AliasCycle,
    Op::RenameProperty,
    Op::RenameDefinition,
    Op::MangleEnum,
    Op::MangleDiscriminator,
    Op::Splice,
    Op::MangleRequired,
    Op::RenamePath,
];

/// Names that are hard to turn into Rust: keywords, digits first, empty, non-ASCII, reserved by the generated
/// code, pointer-escaped characters, or already taken.
const AWKWARD_NAMES: &[&str] = &[
    "",
    "self",
    "Self",
    "type",
    "1st",
    "ümlaut",
    "a b",
    "a/b",
    "a~b",
    "unknown_fields",
    "_",
    "__",
    "super",
    "crate",
    "Option",
    "r#type",
    "null",
    "ManagedCluster",
    "managed_cluster",
    "Other",
    "gen",
    "$ref",
    "properties",
];

fn step_strategy() -> impl Strategy<Value = Step> {
    (
        prop::sample::select(OPS.to_vec()),
        any::<Index>(),
        any::<Index>(),
        any::<Index>(),
        any::<Index>(),
    )
        .prop_map(|(op, doc, a, b, c)| Step { op, doc, a, b, c })
}

fn esc(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Pointers of every value in `v` (outside `x-ms-examples`) that `keep` accepts, in document order.
fn sites(v: &Value, keep: &dyn Fn(&str, &Value) -> bool) -> Vec<String> {
    fn walk(v: &Value, ptr: &mut String, keep: &dyn Fn(&str, &Value) -> bool, out: &mut Vec<String>) {
        if keep(ptr, v) {
            out.push(ptr.clone());
        }
        let len = ptr.len();
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    if k == "x-ms-examples" {
                        continue;
                    }
                    ptr.push('/');
                    ptr.push_str(&esc(k));
                    walk(child, ptr, keep, out);
                    ptr.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    ptr.push_str(&format!("/{i}"));
                    walk(child, ptr, keep, out);
                    ptr.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut String::new(), keep, &mut out);
    out
}

fn pick<'a, T>(items: &'a [T], i: &Index) -> Option<&'a T> {
    (!items.is_empty()).then(|| i.get(items))
}

/// The names of the definitions of a Swagger 2.0 document.
fn definition_names(doc: &Value) -> Vec<String> {
    doc.get("definitions")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn object_at<'a>(doc: &'a mut Value, ptr: &str) -> Option<&'a mut Map<String, Value>> {
    doc.pointer_mut(ptr).and_then(Value::as_object_mut)
}

/// Renames `old` to `new` in `map`, keeping its position.
fn rename_key(map: &mut Map<String, Value>, old: &str, new: &str) {
    let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    for (k, v) in entries {
        map.insert(if k == old { new.to_string() } else { k }, v);
    }
}

/// Replaces every `$ref` string equal to `from` with `to`.
fn rewrite_refs(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "$ref" && child.as_str() == Some(from) {
                    *child = json!(to);
                } else {
                    rewrite_refs(child, from, to);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|c| rewrite_refs(c, from, to)),
        _ => {}
    }
}

/// Applies `step` to one of `docs`; returns what it did, for the failure report.
fn apply(docs: &mut [(PathBuf, Value)], step: &Step) -> String {
    // The root spec three times in four; else any document.
    let n = docs.len();
    let di = step.doc.index(4 * n).saturating_sub(3 * n);
    let (path, doc) = &mut docs[di];
    let file = path
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or_default()
        .to_string();
    let what = mutate(doc, step);
    format!("{file}: {what}")
}

fn mutate(doc: &mut Value, step: &Step) -> String {
    let (a, b, c) = (&step.a, &step.b, &step.c);
    match step.op {
        Op::DeleteKey => {
            let objects = sites(doc, &|_, v| v.as_object().is_some_and(|m| !m.is_empty()));
            let Some(ptr) = pick(&objects, a).cloned() else {
                return "nothing to delete".into();
            };
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let keys: Vec<String> = m.keys().cloned().collect();
            let key = b.get(&keys).clone();
            m.shift_remove(&key);
            format!("delete {ptr}/{}", esc(&key))
        }
        Op::ChangeJsonType => {
            let all = sites(doc, &|p, _| !p.is_empty());
            let Some(ptr) = pick(&all, a).cloned() else {
                return "nothing to change".into();
            };
            let Some(v) = doc.pointer_mut(&ptr) else {
                return "gone".into();
            };
            let replacements = [
                json!(null),
                json!(true),
                json!(42),
                json!("armgen"),
                json!([]),
                json!({}),
                json!([v.clone()]),
                json!({ "value": v.clone() }),
            ];
            let candidates: Vec<&Value> = replacements
                .iter()
                .filter(|r| std::mem::discriminant(*r) != std::mem::discriminant(&*v))
                .collect();
            let new = (*b.get(&candidates)).clone();
            let described = format!("replace {ptr} ({}) with {new}", kind(v));
            *v = new;
            described
        }
        Op::BreakRef => {
            let refs = sites(doc, &|_, v| v.get("$ref").is_some_and(Value::is_string));
            let Some(ptr) = pick(&refs, a).cloned() else {
                return "no $ref".into();
            };
            let all = sites(doc, &|_, _| true);
            let defs = definition_names(doc);
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let old = m.get("$ref").and_then(Value::as_str).unwrap_or_default().to_string();
            let file_part = old.split('#').next().unwrap_or_default().to_string();
            let segments: Vec<&str> = ptr.split('/').collect();
            let ancestor = segments[..segments.len().saturating_sub(1 + c.index(3))].join("/");
            let new = match b.index(9) {
                0 => json!(format!("{file_part}#/definitions/ArmgenMissing")),
                1 => json!("./armgen-missing.json#/definitions/Foo"),
                2 => json!(format!("#{ptr}")),
                3 => json!(format!("#{ancestor}")),
                4 => json!(format!("#{}", pick(&all, c).cloned().unwrap_or_default())),
                5 => json!("#definitions/NotAPointer"),
                6 => json!(format!(
                    "#/definitions/{}",
                    esc(pick(&defs, c).map(String::as_str).unwrap_or("None"))
                )),
                7 => json!(17),
                _ => json!(file_part),
            };
            let described = format!("$ref at {ptr}: {old} -> {new}");
            m.insert("$ref".into(), new);
            described
        }
        Op::SetType => {
            let schemas = sites(doc, &|_, v| v.as_object().is_some_and(|m| m.contains_key("type")));
            let with_type = !schemas.is_empty() && b.index(4) != 0;
            let targets = if with_type {
                schemas
            } else {
                sites(doc, &|_, v| v.is_object())
            };
            let Some(ptr) = pick(&targets, a).cloned() else {
                return "no object".into();
            };
            let types = [
                json!("string"),
                json!("object"),
                json!("array"),
                json!("integer"),
                json!("number"),
                json!("boolean"),
                json!("file"),
                json!("strin"),
                json!(42),
                json!(["string", "null"]),
                json!(null),
            ];
            let new = c.get(&types).clone();
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let described = format!("type at {ptr}: {:?} -> {new}", m.get("type"));
            m.insert("type".into(), new);
            described
        }
        Op::AllOfCycle => {
            let defs = definition_names(doc);
            if defs.is_empty() {
                return "no definitions".into();
            }
            let first = a.get(&defs).clone();
            let second = b.get(&defs).clone();
            let third = c.get(&defs).clone();
            let cycle: Vec<String> = match c.index(3) {
                0 => vec![first.clone()],
                1 => vec![first.clone(), second],
                _ => vec![first.clone(), second, third],
            };
            for (i, name) in cycle.iter().enumerate() {
                let next = &cycle[(i + 1) % cycle.len()];
                let parent = json!({ "$ref": format!("#/definitions/{}", esc(next)) });
                let Some(def) = object_at(doc, &format!("/definitions/{}", esc(name))) else {
                    continue;
                };
                match def.get_mut("allOf") {
                    Some(Value::Array(items)) => items.push(parent),
                    _ => {
                        def.insert("allOf".into(), json!([parent]));
                    }
                }
            }
            format!("allOf cycle {}", cycle.join(" -> "))
        }
        Op::AliasCycle => {
            // A definition that is an array or map of itself, or a bare `$ref` to itself.
            let defs = definition_names(doc);
            let Some(name) = pick(&defs, a).cloned() else {
                return "no definitions".into();
            };
            let me = json!({ "$ref": format!("#/definitions/{}", esc(&name)) });
            let new = match b.index(4) {
                0 => json!({ "type": "array", "items": me }),
                1 => json!({ "type": "object", "additionalProperties": me }),
                2 => json!({ "type": "array", "items": { "type": "object", "additionalProperties": me } }),
                _ => me,
            };
            let described = format!("definition {name} := {new}");
            if let Some(defs) = doc.get_mut("definitions").and_then(Value::as_object_mut) {
                defs.insert(name, new);
            }
            described
        }
        Op::RenameProperty => {
            let maps = sites(doc, &|p, v| {
                p.ends_with("/properties") && v.as_object().is_some_and(|m| !m.is_empty())
            });
            let Some(ptr) = pick(&maps, a).cloned() else {
                return "no properties".into();
            };
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let keys: Vec<String> = m.keys().cloned().collect();
            let old = b.get(&keys).clone();
            let new = c.get(AWKWARD_NAMES).to_string();
            rename_key(m, &old, &new);
            format!("rename property {ptr}/{} to {new:?}", esc(&old))
        }
        Op::RenameDefinition => {
            let defs = definition_names(doc);
            let Some(old) = pick(&defs, a).cloned() else {
                return "no definitions".into();
            };
            let new = b.get(AWKWARD_NAMES).to_string();
            if let Some(m) = doc.get_mut("definitions").and_then(Value::as_object_mut) {
                rename_key(m, &old, &new);
            }
            // References in this document follow, unless the step says to leave them dangling.
            let follow = c.index(4) != 0;
            if follow {
                rewrite_refs(
                    doc,
                    &format!("#/definitions/{}", esc(&old)),
                    &format!("#/definitions/{}", esc(&new)),
                );
            }
            format!("rename definition {old} to {new:?} (references follow: {follow})")
        }
        Op::MangleEnum => {
            let enums = sites(doc, &|_, v| v.get("enum").is_some_and(Value::is_array));
            let Some(ptr) = pick(&enums, a).cloned() else {
                return "no enum".into();
            };
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let first = m
                .get("enum")
                .and_then(|e| e.get(0))
                .and_then(Value::as_str)
                .unwrap_or("value")
                .to_string();
            let how = b.index(9);
            let Some(Value::Array(values)) = m.get_mut("enum") else {
                return "gone".into();
            };
            match how {
                0 => values.clear(),
                1 => values.push(json!(first.to_uppercase())),
                2 => values.push(json!(7)),
                3 => values.push(json!(c.get(AWKWARD_NAMES))),
                4 => values.push(json!(first)),
                5 => values.push(json!(null)),
                6 => {
                    m.insert(
                        "x-ms-enum".into(),
                        json!({ "name": c.get(AWKWARD_NAMES), "modelAsString": true }),
                    );
                }
                7 => {
                    m.insert(
                        "x-ms-enum".into(),
                        json!({ "name": "Mangled", "values": [{ "value": first, "name": c.get(AWKWARD_NAMES) }] }),
                    );
                }
                _ => {
                    m.insert("x-ms-enum".into(), json!("not an object"));
                }
            }
            format!("enum at {ptr}: mangle #{how}")
        }
        Op::MangleDiscriminator => {
            let defs = definition_names(doc);
            let Some(name) = pick(&defs, a).cloned() else {
                return "no definitions".into();
            };
            let how = b.index(5);
            let Some(def) = object_at(doc, &format!("/definitions/{}", esc(&name))) else {
                return "not an object".into();
            };
            let prop = def
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|p| pick(&p.keys().cloned().collect::<Vec<_>>(), c).cloned())
                .unwrap_or_else(|| "kind".into());
            match how {
                0 => def.insert("discriminator".into(), json!(prop)),
                1 => def.insert("discriminator".into(), json!("noSuchProperty")),
                2 => def.insert("x-ms-discriminator-value".into(), json!(c.get(AWKWARD_NAMES))),
                3 => def.insert("x-ms-discriminator-value".into(), json!(5)),
                _ => def.insert("discriminator".into(), json!({ "propertyName": prop })),
            };
            format!("definition {name}: discriminator mangle #{how} ({prop})")
        }
        Op::Splice => {
            let all = sites(doc, &|p, _| !p.is_empty());
            let (Some(to), Some(from)) = (pick(&all, a).cloned(), pick(&all, b).cloned()) else {
                return "nothing to splice".into();
            };
            let Some(value) = doc.pointer(&from).cloned() else {
                return "gone".into();
            };
            if let Some(slot) = doc.pointer_mut(&to) {
                *slot = value;
            }
            format!("copy {from} over {to}")
        }
        Op::MangleRequired => {
            let schemas = sites(doc, &|_, v| v.get("properties").is_some_and(Value::is_object));
            let Some(ptr) = pick(&schemas, a).cloned() else {
                return "no object schema".into();
            };
            let Some(m) = object_at(doc, &ptr) else {
                return "gone".into();
            };
            let new = match b.index(4) {
                0 => json!(["noSuchProperty"]),
                1 => json!("name"),
                2 => json!([1, null, {}]),
                _ => Value::Array(
                    m.get("properties")
                        .and_then(Value::as_object)
                        .map(|p| p.keys().map(|k| json!(k)).collect())
                        .unwrap_or_default(),
                ),
            };
            let described = format!("required at {ptr} := {new}");
            m.insert("required".into(), new);
            described
        }
        Op::RenamePath => {
            let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
                return "no paths".into();
            };
            let routes: Vec<String> = paths.keys().cloned().collect();
            let Some(old) = pick(&routes, a).cloned() else {
                return "no routes".into();
            };
            let new = match b.index(8) {
                0 => old
                    .rsplit_once('/')
                    .map(|(head, _)| head.to_string())
                    .unwrap_or_default(),
                1 => format!("{old}/{{extra}}"),
                2 => old.replace("/providers/", "/PROVIDERS/"),
                3 => "/{scope}/providers/Microsoft.ContainerService/widgets/{name}".into(),
                4 => "/providers/Microsoft.ContainerService/{type}/{name}".into(),
                5 => String::new(),
                6 => "/providers/".into(),
                _ => old.replace("/providers/", &format!("/providers/{}/", c.get(AWKWARD_NAMES))),
            };
            rename_key(paths, &old, &new);
            format!("rename path {old:?} to {new:?}")
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A non-empty environment variable.
fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The harness itself: the documents copied into a temporary folder give what the real spec root gives.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn unmutated_specs_go_through_every_stage() {
    let corpus = corpus();
    let copied = run_case(&corpus.docs).expect("no panic");
    assert_eq!(copied.0, Outcome::Generated, "{}", copied.1);
    assert_eq!(copied, pipeline(&corpus.spec_root));
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn mutated_specs_never_panic() {
    let corpus = corpus();
    let cases = env_var("ARMGEN_FUZZ_CASES")
        .map(|v| v.parse().expect("ARMGEN_FUZZ_CASES is a number"))
        .unwrap_or(DEFAULT_CASES);
    let seed = match env_var("ARMGEN_FUZZ_SEED").as_deref() {
        Some("random") => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(DEFAULT_SEED),
        Some(v) => v.parse().expect("ARMGEN_FUZZ_SEED is a number or `random`"),
        None => DEFAULT_SEED,
    };
    let verbose = env_var("ARMGEN_FUZZ_VERBOSE").is_some();
    let config = ProptestConfig {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        // Each case takes a fraction of a second; shrinking a failure is worth a few dozen of them.
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    };
    let counts: Vec<AtomicUsize> = OUTCOMES.iter().map(|_| AtomicUsize::new(0)).collect();
    let start = Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&prop::collection::vec(step_strategy(), 1..=4), |steps| {
        let mut docs = corpus.docs.clone();
        let applied: Vec<String> = steps.iter().map(|s| apply(&mut docs, s)).collect();
        if verbose {
            eprintln!("case: {applied:#?}");
        }
        match run_case(&docs) {
            Ok((outcome, detail)) => {
                if verbose {
                    eprintln!("  -> {outcome:?}: {detail}");
                }
                let i = OUTCOMES.iter().position(|o| *o == outcome).unwrap_or(0);
                counts[i].fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(panic) => Err(TestCaseError::fail(format!(
                "the pipeline panicked: {panic}\nmutations: {applied:#?}"
            ))),
        }
    });
    let summary: Vec<String> = OUTCOMES
        .iter()
        .zip(&counts)
        .map(|(o, n)| format!("{o:?}: {}", n.load(Ordering::Relaxed)))
        .collect();
    eprintln!(
        "fuzz: {cases} cases (seed {seed}) in {:.1} s; {}",
        start.elapsed().as_secs_f64(),
        summary.join(", ")
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}
