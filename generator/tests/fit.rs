//! Fitting CRD manifests into their size budget (`armgen::emit::fit`, `Crd::fit`): the YAML size model agrees
//! with `serde_yaml_ng` byte for byte, the linear `fit` decides as the one-depth-at-a-time reference does, and a
//! 1,000-deep chain of definitions generates with every CRD within 1 MiB and the trim reported on stderr.
//! (How fast: `generator/benches/deep_chain.rs`, recorded in BENCHMARKS.md.)

use std::path::Path;
use std::process::Command;

use armgen::emit::crd::{self, Crd, MAX_CRD_BYTES};
use armgen::emit::fit;
use proptest::prelude::*;
use serde_json::{Value, json};

#[path = "support/deep_chain.rs"]
mod deep_chain;

/// Generates the deep-chain fixture of `depth` levels in a temp dir.
fn deep(depth: usize) -> (tempfile::TempDir, armgen::Generation) {
    let dir = tempfile::tempdir().expect("temp dir");
    deep_chain::write(dir.path(), depth).expect("write fixture");
    let generation = armgen::Builder::new(dir.path().join("azure-arm.yaml"))
        .specs(dir.path())
        .generate()
        .unwrap_or_else(|e| panic!("a {depth}-deep chain generates: {e}"));
    (dir, generation)
}

/// The model's size of the manifest's YAML body equals the real one.
#[track_caller]
fn assert_model_exact(c: &Crd) {
    let yaml = c.to_yaml().expect("yaml");
    let body = serde_yaml_ng::to_string(&c.manifest).expect("yaml");
    let m = fit::measure(&c.manifest);
    assert!(m.exact, "{}: the model sized every key", c.kind);
    assert_eq!(m.size.bytes, body.len(), "{}: model vs serde_yaml_ng", c.kind);
    assert!(yaml.ends_with(&body));
}

#[test]
fn a_thousand_deep_chain_generates_and_every_crd_fits_in_one_mebibyte() {
    let (_dir, g) = deep(1000);
    // Every level is generated as a Rust type.
    let arm = g
        .files
        .iter()
        .find(|(p, _)| p.ends_with("arm/widget.rs"))
        .map(|(_, c)| c.as_str())
        .unwrap_or_default();
    assert!(arm.contains("pub struct Level999"), "the deepest level is generated");
    let crds: Vec<_> = g
        .files
        .iter()
        .filter(|(p, _)| p.starts_with("crds") && !p.ends_with("kustomization.yaml"))
        .collect();
    assert_eq!(crds.len(), 1);
    for (path, yaml) in &crds {
        assert!(yaml.len() <= MAX_CRD_BYTES, "{}: {} bytes", path.display(), yaml.len());
    }
    let yaml = crds[0].1;
    // What was given up is said: in the file's header and in the generation's report.
    let [f] = g.fitted.as_slice() else {
        panic!("one CRD was fitted: {:?}", g.fitted)
    };
    assert_eq!(f.crd, "widgets.test.armgen.dev");
    assert!(
        f.original > 10 * MAX_CRD_BYTES,
        "the untrimmed manifest is far over: {}",
        f.original
    );
    assert_eq!(f.fitted, yaml.len());
    assert!(f.cut > 0 && f.cut_limit.is_some(), "structure was cut: {f:?}");
    assert!(yaml.contains("keep no fields (`x-kubernetes-preserve-unknown-fields: true`"));
    let notes = yaml.lines().filter(|l| l.starts_with("# Note: crd Widget: ")).count();
    assert_eq!(notes, 1 + usize::from(f.trim_limit.is_some()), "one note per step");
    // The cut is where the report says: the object at that depth has no fields and keeps unknown ones. (The
    // manifest is too deep for serde_yaml_ng to parse back: its recursion limit is 128.)
    let crds = crd::crds_of(&g);
    let manifest = &crds.first().expect("the CRD").manifest;
    assert_eq!(&crds[0].to_yaml().expect("yaml"), yaml);
    let mut node = manifest
        .pointer("/spec/versions/0/schema/openAPIV3Schema/properties/spec")
        .expect("spec schema");
    let mut levels = 0;
    while let Some(next) = node
        .pointer("/properties/properties")
        .or_else(|| node.pointer("/properties/next"))
    {
        node = next;
        levels += 1;
    }
    assert_eq!(
        node.get(fit::PRESERVE),
        Some(&json!(true)),
        "the cut object keeps unknown fields"
    );
    assert!(node.get("properties").is_none());
    assert_eq!(
        Some(levels),
        f.cut_limit,
        "cut more than {:?} levels below spec",
        f.cut_limit
    );
    // Deterministic.
    let (_dir2, g2) = deep(1000);
    assert_eq!(g.files, g2.files);
}

#[test]
fn a_chain_over_the_budget_is_reported_on_stderr() {
    let dir = tempfile::tempdir().expect("temp dir");
    deep_chain::write(dir.path(), 200).expect("write fixture");
    let out = Command::new(env!("CARGO_BIN_EXE_armgen"))
        .arg("generate")
        .arg("--config")
        .arg(dir.path().join("azure-arm.yaml"))
        .arg("--specs")
        .arg(dir.path())
        .arg("--out")
        .arg(dir.path().join("out"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run armgen");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("warning: CRD widgets.test.armgen.dev is "))
        .unwrap_or_else(|| panic!("no warning on stderr:\n{stderr}"));
    for needle in ["over the budget of 1048576", "descriptions", "bytes written"] {
        assert!(line.contains(needle), "{needle:?} in {line}");
    }
    let written = std::fs::read_to_string(dir.path().join("out/crds/widgets.test.armgen.dev.yaml")).expect("crd");
    assert!(line.contains(&format!("({} bytes written)", written.len())), "{line}");
}

#[test]
fn the_size_model_is_exact_on_generated_manifests() {
    for depth in [1, 5, 60] {
        let (_dir, g) = deep(depth);
        for c in crd::crds_of(&g) {
            assert_model_exact(&c);
        }
    }
}

/// The size model on the AKS manifests.
#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn the_size_model_is_exact_on_the_aks_manifests() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let root = armgen::resolve_spec_root(None, &workspace).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    });
    let g = armgen::Builder::new(workspace.join("azure-arm.yaml"))
        .specs(root)
        .generate()
        .expect("generate");
    let crds = crd::crds_of(&g);
    assert!(crds.len() > 5);
    for c in &crds {
        assert_model_exact(c);
    }
}

/// `fit` decides as the reference that serializes once per depth, when trimming descriptions suffices.
#[test]
fn fit_agrees_with_the_measuring_reference() {
    let (_dir, g) = deep(60);
    let crds = crd::crds_of(&g);
    let w = crds.iter().find(|c| c.kind == "Widget").expect("Widget");
    let full = w.to_yaml().expect("yaml").len();
    let mut checked = 0;
    for cut in [1, 100, 1_000, 5_000, 20_000, 40_000] {
        let budget = full - cut;
        let (mut a, mut b) = (w.clone(), w.clone());
        a.fit(budget);
        b.fit_measuring(budget);
        let fits = b.to_yaml().expect("yaml").len() <= budget;
        if !fits {
            continue;
        }
        checked += 1;
        assert_eq!(a.manifest, b.manifest, "budget {budget}");
        assert_eq!(
            a.to_yaml().expect("yaml"),
            b.to_yaml().expect("yaml"),
            "budget {budget}"
        );
        assert_eq!(a.fitted, b.fitted, "budget {budget}");
        assert!(a.fitted.as_ref().is_some_and(|f| f.trim_limit.is_some() && f.cut == 0));
    }
    assert!(checked >= 4, "most budgets are met by trimming alone ({checked})");
    // Under budget: untouched, nothing reported.
    let mut c = w.clone();
    c.fit(full);
    assert_eq!(c.manifest, w.manifest);
    assert!(c.fitted.is_none());
}

/// A budget that trimming cannot meet cuts structure, and the result is within it.
#[test]
fn fit_cuts_structure_only_when_trimming_is_not_enough() {
    let (_dir, g) = deep(60);
    let crds = crd::crds_of(&g);
    let w = crds.iter().find(|c| c.kind == "Widget").expect("Widget");
    let mut trimmed_all = w.clone();
    trimmed_all.fit_measuring(1);
    let floor = trimmed_all.to_yaml().expect("yaml").len();
    for budget in [floor - 1, floor / 2, floor / 4] {
        let mut a = w.clone();
        a.fit(budget);
        let yaml = a.to_yaml().expect("yaml");
        assert!(yaml.len() <= budget, "{} > {budget}", yaml.len());
        let f = a.fitted.as_ref().expect("reported");
        assert!(f.cut > 0, "{f:?}");
        assert_eq!(f.fitted, yaml.len());
        assert_model_exact(&a);
    }
}

/// Arbitrary JSON, with some of it under `openAPIV3Schema` (schema nodes are sized by their own rules).
fn json_value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "[a-z]{0,8}",
        ".{0,20}",
        "[ a-zA-Z.:#'\"\\-\n]{0,40}",
        Just(String::new()),
        Just(" leading".to_string()),
        Just("trailing \n".to_string()),
        Just("a\n\nb\n".to_string()),
        Just("yes".to_string()),
        Just("- x".to_string()),
        Just("First. Second sentence.\n\nThird.".to_string()),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|n| json!(n)),
        text.clone().prop_map(Value::String),
    ];
    let key = prop_oneof![
        "[a-zA-Z]{1,10}",
        Just("properties".to_string()),
        Just("items".to_string()),
        Just("additionalProperties".to_string()),
        Just("description".to_string()),
        Just("required".to_string()),
        Just("openAPIV3Schema".to_string()),
        Just("on".to_string()),
        Just("a: b".to_string()),
        Just(String::new()),
    ];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_size_model_matches_serde_yaml(v in json_value()) {
        let m = fit::measure(&v);
        let yaml = serde_yaml_ng::to_string(&v).expect("yaml");
        if m.exact {
            prop_assert_eq!(m.size.bytes, yaml.len(), "{}", yaml);
        }
    }
}
