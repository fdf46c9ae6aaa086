//! Where each kind is stored when the storage version lacks it, on the widgets fixture in three versions: `v1`
//! (2024-01-01, widgets and gadgets), the storage version `v2` (2024-06-01, `storage/lean.json`: widgets only)
//! and the preview `v3alpha1` (2025-01-01-preview, widgets and gadgets). Gadgets must be stored in `v1`, the
//! newest non-preview version that has them, not in the preview (the newest version, and the last by name);
//! the CRD, the registry (`KindInfo::storage`) and `REPORT.md` say the same, and converting a gadget says that the
//! hub lacks it. And a CRD over its size budget leaves the descriptions out of its older versions first.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use armgen::Builder;
use armgen::config::{Config, GroupConfig, OutputConfig, VersionConfig};

fn version(api: &str, file: &str, storage: bool) -> VersionConfig {
    VersionConfig {
        arm_api_version: api.into(),
        spec_files: vec![PathBuf::from(file)],
        storage,
        served: true,
        renames: Default::default(),
    }
}

fn unserved(mut v: VersionConfig) -> VersionConfig {
    v.served = false;
    v
}

fn generate(versions: &[(&str, VersionConfig)]) -> armgen::Generation {
    generate_with(versions, Default::default()).expect("generate")
}

fn generate_with(
    versions: &[(&str, VersionConfig)],
    kubernetes: armgen::config::KubernetesConfig,
) -> Result<armgen::Generation, armgen::Error> {
    let config = Config {
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
                spec_folder: PathBuf::from("."),
                kubernetes_group: None,
                versions: versions.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
                resources: Default::default(),
                overrides: Default::default(),
                kubernetes,
            },
        )]),
    };
    Builder::from_config(config)
        .specs(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm"))
        .cargo_instructions(false)
        .generate()
}

/// The versions of a CRD file with `storage: true`.
fn stored(generation: &armgen::Generation, file: &str) -> Vec<String> {
    let text = &generation.files[Path::new(file)];
    let crd: serde_json::Value = serde_yaml_ng::from_str(text).expect("yaml");
    crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter(|v| v["storage"] == true)
        .map(|v| v["name"].as_str().expect("name").to_string())
        .collect()
}

/// `text` with every run of whitespace as one space (generated Rust is wrapped by prettyplease).
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn a_kind_the_storage_version_lacks_is_stored_in_the_newest_non_preview_version() {
    let generation = generate(&[
        ("v1", version("2024-01-01", "fixture/widgets.json", false)),
        ("v2", version("2024-06-01", "storage/lean.json", true)),
        ("v3alpha1", version("2025-01-01-preview", "fixture/widgets.json", false)),
    ]);
    assert_eq!(stored(&generation, "crds/widgets.fixture.armgen.dev.yaml"), ["v2"]);
    assert_eq!(stored(&generation, "crds/gadgets.fixture.armgen.dev.yaml"), ["v1"]);
    let crd = &generation.files[Path::new("crds/gadgets.fixture.armgen.dev.yaml")];
    assert!(
        crd.contains("v1 is stored: the storage version lacks the kind: the newest non-preview version that has it"),
        "the CRD notes the choice:\n{}",
        &crd[..crd.len().min(2000)]
    );

    let report = &generation.files[Path::new("REPORT.md")];
    let section = &report[report.find("## Storage versions").expect("a storage section")..];
    insta::assert_snapshot!("storage_versions", section);

    let registry = flat(&generation.files[Path::new("src/registry.rs")]);
    for (v, storage) in [("v1", true), ("v3alpha1", false)] {
        let row = format!(r#"version: "{v}", kind: "Gadget", plural: "gadgets", storage: {storage},"#);
        assert!(registry.contains(&row), "{row}");
    }
    assert!(registry.contains(r#"version: "v2", kind: "Widget", plural: "widgets", storage: true,"#));

    // Converting a gadget: no conversions go through a hub without gadgets, and the error says so.
    let group = flat(&generation.files[Path::new("src/fixture/mod.rs")]);
    assert!(
        group.contains(r#""Gadget" => { Err(armgen_runtime::hub::not_in_hub("Gadget", "v2", &["v1", "v3alpha1"])) }"#),
        "{group}"
    );
}

#[test]
fn a_kind_only_previews_have_is_stored_in_the_newest_preview() {
    let generation = generate(&[
        ("v2", version("2024-06-01", "storage/lean.json", true)),
        ("v3alpha1", version("2025-01-01-preview", "fixture/widgets.json", false)),
        ("v4alpha1", version("2025-06-01-preview", "fixture/widgets.json", false)),
    ]);
    assert_eq!(
        stored(&generation, "crds/gadgets.fixture.armgen.dev.yaml"),
        ["v4alpha1"]
    );
    let report = &generation.files[Path::new("REPORT.md")];
    assert!(
        report.contains(
            "| fixture | Gadget | v4alpha1 | the storage version lacks the kind and only previews have it: the newest of them |"
        ),
        "{report}"
    );
}

/// `served: false` keeps a version only to read and convert what is stored at it: its CRD versions are not served
/// and keep every field (a schema that cannot prune, a fraction of the size), the registry says so (no tool serves
/// or writes its kinds), and it is never a kind's storage version. The hub cannot be unserved.
#[test]
fn an_unserved_version_is_kept_for_stored_objects_only() {
    let both = generate(&[
        ("v1", version("2024-01-01", "fixture/widgets.json", false)),
        ("v3", version("2025-01-01", "fixture/widgets.json", true)),
    ]);
    let generation = generate(&[
        ("v1", unserved(version("2024-01-01", "fixture/widgets.json", false))),
        ("v2", version("2024-06-01", "storage/lean.json", true)),
        ("v3", version("2025-01-01", "fixture/widgets.json", false)),
    ]);
    let file = "crds/gadgets.fixture.armgen.dev.yaml";
    let crd: serde_json::Value = serde_yaml_ng::from_str(&generation.files[Path::new(file)]).expect("yaml");
    let versions = crd["spec"]["versions"].as_array().expect("versions");
    let v1 = versions
        .iter()
        .find(|v| v["name"] == "v1")
        .expect("v1 is still in the CRD");
    assert_eq!(
        (v1["served"].clone(), v1["storage"].clone()),
        (false.into(), false.into())
    );
    let schema = &v1["schema"]["openAPIV3Schema"];
    assert_eq!(schema["x-kubernetes-preserve-unknown-fields"], true, "{schema}");
    assert!(
        schema.get("properties").is_none(),
        "no fields to validate or prune: {schema}"
    );
    // Gadgets: the hub v2 lacks them and v1 is not served, so v3 stores them (not v1, as when all are served).
    assert_eq!(stored(&generation, file), ["v3"]);
    let smaller = generation.files[Path::new(file)].len();
    let full = both.files[Path::new(file)].len();
    assert!(
        smaller * 3 < full * 2,
        "an unserved version costs little: {smaller} vs {full} bytes"
    );

    let registry = flat(&generation.files[Path::new("src/registry.rs")]);
    assert!(registry.contains(r#"version: "v1", kind: "Gadget", plural: "gadgets", storage: false, served: false,"#));
    assert!(registry.contains(r#"version: "v3", kind: "Gadget", plural: "gadgets", storage: true, served: true,"#));
    assert!(registry.contains(r#"version: "v1", api_version: "2024-01-01", storage: false, served: false,"#));

    let config = Config {
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
                spec_folder: PathBuf::from("."),
                kubernetes_group: None,
                versions: BTreeMap::from([(
                    "v1".to_string(),
                    unserved(version("2024-01-01", "fixture/widgets.json", true)),
                )]),
                resources: Default::default(),
                overrides: Default::default(),
                kubernetes: Default::default(),
            },
        )]),
    };
    let e = Builder::from_config(config)
        .specs(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arm"))
        .cargo_instructions(false)
        .generate()
        .expect_err("an unserved hub");
    let text = e.to_string();
    assert!(text.contains("groups.fixture.versions.v1.served"), "{text}");
    assert!(text.contains("always served"), "{text}");
}

/// A CRD over its size budget first leaves the field descriptions out of its older versions (the oldest first),
/// never out of the storage version or the newest served one, and only then trims: the structure of every version
/// stays whole, each undescribed version is a note of the manifest, and its root says where the descriptions are.
#[test]
fn a_crd_over_its_budget_leaves_the_descriptions_out_of_older_versions_first() {
    let generation = generate(&[
        ("v1", version("2024-01-01", "fixture/widgets.json", false)),
        ("v2", version("2024-06-01", "fixture/widgets.json", true)),
        ("v3", version("2025-01-01", "fixture/widgets.json", false)),
        ("v4", version("2025-06-01", "fixture/widgets.json", false)),
    ]);
    let crds = armgen::emit::crd::crds_of(&generation);
    let widget = crds.iter().find(|c| c.kind == "Widget").expect("Widget");
    assert!(
        widget.undescribed.is_empty() && widget.fitted.is_none(),
        "under 1 MiB: nothing left out"
    );
    let whole = widget.to_yaml().expect("yaml").len();
    let descriptions = |c: &armgen::emit::crd::Crd, v: &str| -> usize {
        fn count(node: &serde_json::Value) -> usize {
            match node {
                serde_json::Value::Object(m) => {
                    usize::from(m.contains_key("description")) + m.values().map(count).sum::<usize>()
                }
                serde_json::Value::Array(a) => a.iter().map(count).sum(),
                _ => 0,
            }
        }
        count(c.schema(v).expect("version"))
    };
    let without_description = |c: &armgen::emit::crd::Crd, v: &str| {
        let mut s = c.schema(v).expect("version").clone();
        strip(&mut s);
        s
    };
    fn strip(node: &mut serde_json::Value) {
        match node {
            serde_json::Value::Object(m) => {
                m.remove("description");
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }

    // Just over: the oldest version (v1) goes first; no trim.
    let mut a = widget.clone();
    a.fit(whole - 1);
    let yaml = a.to_yaml().expect("yaml");
    assert!(yaml.len() < whole, "{} bytes", yaml.len());
    assert_eq!(a.undescribed, ["v1"]);
    assert!(a.fitted.is_none(), "{:?}", a.fitted);
    assert_eq!(
        descriptions(&a, "v1"),
        1,
        "only the root says where the descriptions are"
    );
    let root = a
        .schema("v1")
        .and_then(|s| s["description"].as_str())
        .expect("root description");
    assert!(
        root.contains("version v4 has them") && root.contains("--api-version=fixture.armgen.dev/v4"),
        "{root}"
    );
    for v in ["v2", "v3", "v4"] {
        assert_eq!(
            descriptions(&a, v),
            descriptions(widget, v),
            "{v} keeps its descriptions"
        );
    }
    for v in ["v1", "v2", "v3", "v4"] {
        assert_eq!(
            without_description(&a, v),
            without_description(widget, v),
            "{v}: the same structure"
        );
    }
    assert!(
        yaml.contains("version v1 keeps its schema without its"),
        "the header says so"
    );

    // Less than what v1 and v3 without descriptions save: both go, and the trims do the rest.
    let two_saved = {
        let mut b = widget.clone();
        b.fit(whole - 1);
        let mut c = b.clone();
        c.fit(b.to_yaml().expect("yaml").len() - 1);
        assert_eq!(c.undescribed, ["v1", "v3"]);
        c.to_yaml().expect("yaml").len()
    };
    let mut d = widget.clone();
    d.fit(two_saved - 200);
    assert_eq!(d.undescribed, ["v1", "v3"]);
    assert!(d.fitted.as_ref().is_some_and(|f| f.trimmed > 0), "{:?}", d.fitted);
    assert!(d.to_yaml().expect("yaml").len() <= two_saved - 200);
    assert!(
        descriptions(&d, "v2") > 1 && descriptions(&d, "v4") > 1,
        "the kept versions still describe"
    );
}

/// `kubernetes.resources.<Kind>.clusterApi` (docs/config.md, "Cluster API"): the contract's fields come before the
/// kind's ARM properties in spec and status, the kind's and its template's CRDs carry the contract labels (served
/// versions, the storage version last), the registry lists where each field comes from, Cluster API's manager gets
/// a role on them; an ARM path the kind lacks is an error naming the key and the ARM API version.
#[test]
fn a_kind_implementing_a_cluster_api_contract() {
    let kubernetes = |capi: &str| -> armgen::config::KubernetesConfig {
        serde_yaml_ng::from_str(&format!(
            "resources: {{Widget: {{template: true, clusterApi: {capi}}}}}"
        ))
        .expect("kubernetes config")
    };
    let src = "source: \"https://cluster-api.sigs.k8s.io/developer/providers/contracts/control-plane\"";
    let plane = format!(
        "{{role: controlPlane, {src}, endpoint: {{hosts: [properties.label, properties.displayName], port: 443}}, \
         version: {{spec: properties.osType, status: properties.revision}}}}"
    );
    let versions = [
        ("v1", version("2024-01-01", "fixture/widgets.json", false)),
        ("v2", version("2024-06-01", "fixture/widgets.json", true)),
        ("v3", version("2025-01-01", "fixture/widgets.json", false)),
    ];
    let generation = generate_with(&versions, kubernetes(&plane)).unwrap_or_else(|e| panic!("{e}"));
    let crd = |file: &str| -> serde_json::Value {
        serde_yaml_ng::from_str(&generation.files[Path::new(file)]).expect("yaml")
    };
    let widgets = crd("crds/widgets.fixture.armgen.dev.yaml");
    let templates = crd("crds/widgettemplates.fixture.armgen.dev.yaml");
    for c in [&widgets, &templates] {
        assert_eq!(
            c["metadata"]["labels"]["cluster.x-k8s.io/v1beta2"], "v1_v3_v2",
            "{}",
            c["metadata"]
        );
        assert_eq!(c["metadata"]["labels"]["cluster.x-k8s.io/v1beta1"], "v1_v3_v2");
    }
    let schema = &widgets["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"];
    let spec_keys: Vec<&String> = schema["spec"]["properties"].as_object().expect("spec").keys().collect();
    let status_keys: Vec<&String> = schema["status"]["properties"]
        .as_object()
        .expect("status")
        .keys()
        .collect();
    let template_meta = &templates["spec"]["versions"][1]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["template"]["properties"]["metadata"];
    let registry = flat(&generation.files[Path::new("src/registry.rs")]);
    let contract = &registry[registry.find("pub const CLUSTER_API").expect("CLUSTER_API")..];
    let contract = &contract[..contract.find("];").expect("end")];
    let rbac = &generation.files[Path::new("rbac/cluster-api.yaml")];
    insta::assert_snapshot!(
        "cluster_api_contract",
        format!(
            "spec: {spec_keys:?}\nstatus: {status_keys:?}\ntemplate metadata: {template_meta}\n\n{contract}\n\n{}",
            rbac.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        )
    );
    let rust = flat(&generation.files[Path::new("src/fixture/v2/widget.rs")]);
    assert!(
        rust.contains("pub control_plane_endpoint: Option<armgen_runtime::capi::ApiEndpoint>"),
        "{rust}"
    );

    // A path the ARM body lacks.
    let wrong = plane.replace("properties.displayName", "properties.nowhere");
    let Err(e) = generate_with(&versions, kubernetes(&wrong)) else {
        panic!("a path the ARM body lacks is refused")
    };
    let e = e.to_string();
    assert!(
        e.contains("kubernetes.resources.Widget.clusterApi.endpoint.hosts[1]")
            && e.contains("no property nowhere")
            && e.contains("2024-01-01"),
        "{e}"
    );
}
