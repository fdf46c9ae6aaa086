//! The library API for build scripts (`armgen::Builder` options and `compile`) on the hand-written fixture
//! specs in `fixtures/arm/` (a root file `fixture/widgets.json` that `$ref`s `common/types.json`).
//!
//! `examples/build-rs-demo` uses the same API from a real `build.rs` and checks what cargo recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use armgen::config::{Config, GroupConfig, OutputConfig, VersionConfig};
use armgen::{Builder, Error};

fn fixture_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm")
}

/// The config of the fixture, in code: one group, one version.
fn config() -> Config {
    Config {
        output: OutputConfig {
            crate_name: "widgets-api".into(),
            description: None,
            api_domain: armgen::config::DEFAULT_API_DOMAIN.into(),
            version_crates: false,
        },
        groups: BTreeMap::from([(
            "fixture".to_string(),
            GroupConfig {
                provider: "Microsoft.Fixture".into(),
                spec_folder: PathBuf::from("fixture"),
                kubernetes_group: None,
                versions: BTreeMap::from([(
                    "v1".to_string(),
                    VersionConfig {
                        arm_api_version: "2024-01-01".into(),
                        spec_files: vec![PathBuf::from("widgets.json")],
                        storage: true,
                        served: true,
                        renames: Default::default(),
                    },
                )]),
                resources: Default::default(),
                overrides: Default::default(),
                kubernetes: Default::default(),
            },
        )]),
    }
}

fn builder() -> Builder {
    Builder::from_config(config())
        .specs(fixture_root())
        .cargo_instructions(false)
}

/// The same config as a file, in `dir`.
fn config_file(dir: &Path) -> PathBuf {
    let path = dir.join("armgen.yaml");
    let text = "output:\n  crateName: widgets-api\ngroups:\n  fixture:\n    provider: Microsoft.Fixture\n    \
                specFolder: fixture\n    versions:\n      v1:\n        armApiVersion: \"2024-01-01\"\n        \
                specFiles: [widgets.json]\n        storage: true\n";
    std::fs::write(&path, text).expect("write config");
    path
}

fn mtimes(dir: &Path, files: &BTreeMap<PathBuf, String>) -> Vec<std::time::SystemTime> {
    files
        .keys()
        .map(|p| {
            std::fs::metadata(dir.join(p))
                .and_then(|m| m.modified())
                .expect("mtime")
        })
        .collect()
}

#[test]
fn compile_writes_once_and_then_nothing_in_both_layouts() {
    for single in [false, true] {
        let out = tempfile::tempdir().expect("tempdir");
        let mut b = builder().out_dir(out.path());
        if single {
            b = b.single_file("widgets.rs");
        }
        let first = b.compile().expect("first compile");
        assert_eq!(
            first.written.len(),
            first.generation.files.len(),
            "the first run writes every file"
        );
        assert!(first.written.len() > if single { 0 } else { 5 });
        let before = mtimes(out.path(), &first.generation.files);
        let second = b.compile().expect("second compile");
        assert!(
            second.written.is_empty() && second.removed.is_empty(),
            "{:?}",
            second.written
        );
        assert_eq!(mtimes(out.path(), &second.generation.files), before);
        // Generation::write agrees: an up-to-date folder gets no writes.
        if !single {
            let (written, removed) = second.generation.write(out.path()).expect("write");
            assert!(written.is_empty() && removed.is_empty());
        }
    }
}

#[test]
fn single_file_writes_only_its_file_and_leaves_the_rest_of_the_folder_alone() {
    let out = tempfile::tempdir().expect("tempdir");
    std::fs::write(out.path().join("other.txt"), "not ours").expect("write");
    builder()
        .out_dir(out.path())
        .single_file("widgets.rs")
        .compile()
        .expect("compile");
    let names: BTreeSet<String> = std::fs::read_dir(out.path())
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    // The file, the CRD manifests its `Kind::crd()` functions include (`crds/` beside it) and the rules
    // document `rules()` includes.
    assert_eq!(
        names,
        BTreeSet::from([
            "other.txt".into(),
            "widgets.rs".into(),
            "crds".into(),
            "rules.json".into()
        ])
    );
}

#[test]
fn cargo_instructions_name_exactly_the_files_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = config_file(dir.path());
    let out = Builder::new(&config)
        .specs(fixture_root())
        .cargo_instructions(false)
        .out_dir(dir.path().join("out"))
        .compile()
        .expect("compile");
    let root = fixture_root();
    let expected = BTreeSet::from([
        format!("cargo:rerun-if-changed={}", config.display()),
        format!("cargo:rerun-if-changed={}", root.join("common/types.json").display()),
        format!("cargo:rerun-if-changed={}", root.join("fixture/widgets.json").display()),
    ]);
    let got: BTreeSet<String> = out.cargo_instructions.iter().cloned().collect();
    assert_eq!(got, expected);
    assert_eq!(out.cargo_instructions.len(), 3, "no duplicates");
}

/// Run by [`a_spec_root_from_the_environment_is_watched`] in a child process whose environment names the
/// fixture as the spec root.
#[test]
#[ignore = "run by a_spec_root_from_the_environment_is_watched, with its own environment"]
fn spec_root_from_the_environment_child() {
    let out = tempfile::tempdir().expect("tempdir");
    let result = Builder::from_config(config())
        .cargo_instructions(false)
        .out_dir(out.path())
        .compile()
        .expect("compile with the spec root from $AZURE_REST_API_SPECS");
    assert!(
        result
            .cargo_instructions
            .contains(&"cargo:rerun-if-env-changed=AZURE_REST_API_SPECS".to_string()),
        "{:?}",
        result.cargo_instructions
    );
    // An in-code config has no file to watch: the two spec files only.
    assert_eq!(result.inputs.len(), 2, "{:?}", result.inputs);
}

#[test]
fn a_spec_root_from_the_environment_is_watched() {
    let exe = std::env::current_exe().expect("test binary");
    let out = std::process::Command::new(exe)
        .args(["--exact", "spec_root_from_the_environment_child", "--include-ignored"])
        .env("AZURE_REST_API_SPECS", fixture_root())
        .output()
        .expect("run the child test");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

#[test]
fn an_in_code_config_is_validated_like_a_file() {
    let mut c = config();
    if let Some(g) = c.groups.get_mut("fixture")
        && let Some(v) = g.versions.get_mut("v1")
    {
        v.renames.insert("noSchema".into(), "capacity".into());
    }
    let err = Builder::from_config(c)
        .specs(fixture_root())
        .generate()
        .expect_err("a malformed rename");
    assert!(matches!(err, Error::Config { .. }), "{err}");
    assert!(
        err.to_string().contains("groups.fixture.versions.v1.renames.noSchema"),
        "{err}"
    );
}

#[test]
fn doc_comments_can_be_left_out() {
    let with = builder().generate().expect("generate");
    let without = builder().doc_comments(false).generate().expect("generate");
    assert_eq!(
        with.files.keys().collect::<Vec<_>>(),
        without.files.keys().collect::<Vec<_>>()
    );
    let rust = |g: &armgen::Generation| -> String {
        g.files
            .iter()
            .filter(|(p, _)| p.extension().is_some_and(|e| e == "rs"))
            .map(|(_, c)| c.as_str())
            .collect()
    };
    assert!(rust(&with).contains("///"));
    let stripped = rust(&without);
    assert!(!stripped.contains("///") && !stripped.contains("//!") && !stripped.contains("#[doc"));
    // Every file still starts with the generated-file header.
    for (path, text) in &without.files {
        if path.extension().is_some_and(|e| e == "rs") {
            assert!(text.starts_with("// Code generated by armgen"), "{}", path.display());
            syn::parse_file(text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()));
        }
    }
}

/// The derive list of `item` (`struct Name` or `enum Name`) in `text`. A generated enum is an
/// `armgen_runtime::open_enum!`/`closed_enum!` invocation holding the enum item.
fn derives_of(text: &str, item: &str) -> Vec<String> {
    let file = syn::parse_file(text).expect("parses");
    let (kind, name) = item.split_once(' ').expect("kind and name");
    let items: Vec<syn::Item> = file
        .items
        .iter()
        .map(|it| match it {
            syn::Item::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident.to_string().ends_with("_enum")) =>
            {
                syn::Item::Enum(syn::parse2(m.mac.tokens.clone()).expect("an enum macro holds an enum item"))
            }
            other => other.clone(),
        })
        .collect();
    for it in &items {
        let (attrs, ident) = match (it, kind) {
            (syn::Item::Struct(s), "struct") => (&s.attrs, &s.ident),
            (syn::Item::Enum(e), "enum") => (&e.attrs, &e.ident),
            _ => continue,
        };
        if ident != name {
            continue;
        }
        return attrs
            .iter()
            .filter(|a| a.path().is_ident("derive"))
            .flat_map(|a| {
                a.parse_args_with(syn::punctuated::Punctuated::<syn::Path, syn::Token![,]>::parse_terminated)
                    .expect("derive list")
                    .into_iter()
                    .map(|p| quote::quote!(#p).to_string().replace(' ', ""))
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    panic!("no {item}");
}

#[test]
fn extra_derives_are_added_once() {
    let g = builder()
        .derive("Eq")
        .derive("schemars::JsonSchema")
        .derive_for("Gadget", "Hash")
        .generate()
        .expect("generate");
    let all: String = g
        .files
        .iter()
        .filter(|(p, _)| p.to_string_lossy().contains("/arm/"))
        .map(|(_, c)| c.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let file_of = |needle: &str| -> &str {
        g.files
            .values()
            .find(|c| c.contains(needle))
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no file has {needle}"))
    };
    let gadget = derives_of(file_of("pub struct Gadget {"), "struct Gadget");
    assert_eq!(gadget.iter().filter(|d| *d == "Eq").count(), 1, "{gadget:?}");
    assert!(gadget.contains(&"schemars::JsonSchema".to_string()) && gadget.contains(&"Hash".to_string()));
    // Enums derive Eq already: not twice.
    let size = derives_of(file_of("pub enum WidgetSize {"), "enum WidgetSize");
    assert_eq!(size.iter().filter(|d| *d == "Eq").count(), 1, "{size:?}");
    // `derive_for` is for Gadget only.
    let widget = derives_of(file_of("pub struct Widget {"), "struct Widget");
    assert!(!widget.contains(&"Hash".to_string()), "{widget:?}");
    assert!(all.contains("schemars::JsonSchema"));
}

#[test]
fn bad_options_are_errors_that_name_the_option() {
    let cases: Vec<(Builder, &str)> = vec![
        (builder().versions(["v9"]), "armgen::Builder::versions: \"v9\""),
        (
            builder().resources(["Sprocket"]),
            "armgen::Builder::resources: \"Sprocket\"",
        ),
        (
            builder().derive("not a path!"),
            "armgen::Builder::derive(\"not a path!\")",
        ),
        (
            builder().derive_for("Sprocket", "Eq"),
            "armgen::Builder::derive_for(\"Sprocket\", \"Eq\")",
        ),
    ];
    for (b, what) in cases {
        match b.generate() {
            Err(Error::Invalid { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{what}: expected an Invalid error, got {other:?}"),
        }
    }
}

#[test]
fn versions_and_resources_select_what_is_generated() {
    let g = builder().resources(["Gadget"]).generate().expect("generate");
    let ir = &g.irs["fixture/v1"];
    assert_eq!(
        ir.resources.iter().map(|r| r.kind.as_str()).collect::<Vec<_>>(),
        ["Gadget"]
    );
    assert!(!g.files.values().any(|c| c.contains("pub struct Widget {")));
    // By ARM type as well.
    let g = builder()
        .resources(["Microsoft.Fixture/widgets"])
        .generate()
        .expect("generate");
    assert_eq!(
        g.irs["fixture/v1"]
            .resources
            .iter()
            .map(|r| r.kind.as_str())
            .collect::<Vec<_>>(),
        // The widget's POST action `restart` comes with it, as an action kind.
        ["Widget", "WidgetRestart"]
    );
    let g = builder().versions(["fixture/v1"]).generate().expect("generate");
    assert_eq!(g.irs.keys().collect::<Vec<_>>(), ["fixture/v1"]);
}

#[test]
fn the_single_file_form_is_self_contained() {
    let g = builder().single_file("widgets.rs").generate().expect("generate");
    let crds: Vec<&Path> = g
        .files
        .keys()
        .map(PathBuf::as_path)
        .filter(|p| p.starts_with("crds"))
        .collect();
    assert!(!crds.is_empty(), "the CRD manifests are written beside the file");
    assert!(
        g.files.contains_key(Path::new("rules.json")),
        "the rules document is written beside the file"
    );
    assert_eq!(g.files.len(), crds.len() + 2, "{:?}", g.files.keys());
    let text = &g.files[Path::new("widgets.rs")];
    assert!(
        text.contains("include_str!(\"rules.json\")"),
        "rules.json is included from beside the file"
    );
    for crd in &crds {
        assert!(
            text.contains(&format!("include_str!(\"{}\")", crd.display())),
            "{} is included from beside the file",
            crd.display()
        );
    }
    let file = syn::parse_file(text).expect("the single file parses");
    // No crate-level inner attributes (include! rejects them), no `crate::` paths (the file may be included
    // in any module), no cargo features of the generated crate, no `mod x;` left to resolve.
    assert!(file.attrs.is_empty());
    assert!(!text.contains("crate::"), "crate:: paths left");
    assert!(!text.contains("feature ="), "cfg(feature) left");
    assert!(!text.contains("mod registry;") && !text.contains("pub mod arm;"));
    assert!(text.contains("super::fixture::v1::arm::round_trip"));
    assert!(text.contains("pub struct Widget {") && text.contains("pub struct Gadget {"));
    assert!(text.starts_with("// Code generated by armgen"));
}

#[test]
fn progress_reports_each_version_and_the_emit() {
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    builder()
        .progress(move |p| sink.lock().expect("lock").push(p.clone()))
        .generate()
        .expect("generate");
    use armgen::pipeline::buildrs::Progress;
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            Progress::Start {
                versions: vec!["fixture/v1".into()]
            },
            Progress::Version {
                name: "fixture/v1".into(),
                api_version: "2024-01-01".into()
            },
            Progress::Emit,
        ]
    );
}

/// Every stage is timed, under its name and in the order the stages run (what `armgen generate --verbose`
/// prints): the passes after `lower` each under their own name.
#[test]
fn the_timings_name_every_stage_in_order() {
    let generation = builder().generate().expect("generate");
    let stages: Vec<&str> = generation.timings.stages.iter().map(|(s, _)| *s).collect();
    assert_eq!(
        stages,
        [
            "config",
            "load",
            "discover",
            "lower",
            "overrides",
            "allof",
            "unions",
            "prune",
            "enums",
            "names",
            "recursion",
            "layout",
            "kube",
            "emit",
            "structure",
            "options",
        ]
    );
}

/// `rbac/role.yaml`: every kind with a status subresource (from the CRDs of the generation), its status and its
/// finalizers, with the verbs the reconciler uses; `rbac/kustomization.yaml` lists it.
#[test]
fn the_rbac_of_the_custom_resources_is_generated_from_the_crds() {
    let generation = builder().generate().expect("generate");
    let role = &generation.files[Path::new("rbac/role.yaml")];
    let crds = armgen::emit::crd::crds_of(&generation);
    assert!(crds.len() >= 2, "the fixture has widgets and gadgets");
    for crd in &crds {
        for resource in [
            crd.plural.clone(),
            format!("{}/status", crd.plural),
            format!("{}/finalizers", crd.plural),
        ] {
            assert!(
                role.contains(&format!("  - {resource}\n")),
                "{resource} is granted:\n{role}"
            );
        }
    }
    assert!(
        role.contains("  name: widgets-api-custom-resources\n"),
        "named after the crate"
    );
    insta::assert_snapshot!("rbac_role", role);
    assert!(
        generation.files[Path::new("rbac/kustomization.yaml")].ends_with("resources:\n- role.yaml\n- actions.yaml\n")
    );
    // Per action kind (the widget's `restart`), a role to run it and nothing else.
    let actions = &generation.files[Path::new("rbac/actions.yaml")];
    let runners: Vec<&str> = actions.lines().filter(|l| l.starts_with("  name: ")).collect();
    assert_eq!(runners, ["  name: widgets-api-widgetrestarts-runner"], "{actions}");
    assert!(
        actions.contains("  - widgetrestarts\n  verbs:\n  - create\n"),
        "{actions}"
    );
    assert!(!actions.contains("  - widgets\n"), "no right on the target: {actions}");
}
