//! `armgen diff` and the API structure files it reads.
//!
//! Small hand-written structures check each kind of change; then the real AKS change from 2024-09-01
//! (`v1beta1`) to 2025-10-01 (`v2alpha1`) is checked against facts counted independently of armgen, from
//! the raw spec JSON, by `fixtures/apidiff/api_facts.py`:
//!
//! ```sh
//! cd $AZURE_REST_API_SPECS/specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable
//! python3 …/generator/tests/fixtures/apidiff/api_facts.py 2024-09-01/managedClusters.json \
//!     2025-10-01/managedClusters.json --json > …/fixtures/apidiff/aks-2024-09-01-to-2025-10-01.json
//! ```
//!
//! How it counts: every PUT path with a body is a resource (named after its body definition); from the body
//! schema it follows `$ref`s (in the file and into common-types), merges `allOf` parents, and descends
//! into array items (`[]`) and `additionalProperties` (`{}`); a definition already on the current path is
//! not expanded again. Every property reached is one path (`properties.agentPoolProfiles[].name`). For each
//! path on both sides it compares the enum values, `readOnly`, `x-ms-mutability` and the validation
//! keywords (keywords beside a `$ref` apply to the property, else those of the `$ref` target).
//!
//! Result (resources in both versions): 141 paths added — `AgentPool` 55, `ManagedCluster` 79 (21 of
//! them under `properties.agentPoolProfiles[].localDNSProfile`), `PrivateEndpointConnection` 7
//! (`systemData`) —, 1 removed (`ManagedCluster` `properties.enablePodSecurityPolicy`), 17 enum values
//! added at 11 paths (`AgentPool` 6, `ManagedCluster` 8, `Snapshot` 3), none removed; 3 read-only or
//! mutability changes in `ManagedCluster` and 1 in `Snapshot`; no validation change; and the new resource
//! `ManagedNamespace` with 28 paths. (Counted over the 7 resources separately, a path shared by two
//! resources counts twice: the agent pool properties appear under `AgentPool` and under
//! `ManagedCluster`'s `agentPoolProfiles[]`. With `ManagedNamespace`'s 28 paths, 169 paths are new.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use armgen::report::apidiff::{self, ApiDiff};
use armgen::report::structure::ApiStructure;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

fn structure(text: &str) -> ApiStructure {
    ApiStructure::parse(text, "test").unwrap_or_else(|e| panic!("{e}"))
}

const OLD: &str = r#"
@version g/v1 2024-01-01
Thing: object<Thing> resource=Microsoft.X/things long-running path=/things/{name}
Thing.Name: string
Thing.count: int32 minimum=1
Thing.enableFoo: bool
Thing.legacy: object<Legacy>
Thing.legacy.level: int32
Thing.size: enum<Size> open
Thing.size = "M"
Thing.size = "S"
Thing.state: string
Thing.tags: {string} mutability=read,create,update
Thing.windowsProfile: object<WindowsProfile>
Thing.windowsProfile.adminUser: string required
Gone: object<Gone> resource=Microsoft.X/gone
Gone.a: string
"#;

const NEW: &str = r#"
@version g/v2 2025-01-01
Thing: object<Thing> resource=Microsoft.X/things path=/things/{name}
Thing.name: string
Thing.count: int64 minimum=0 maximum=9
Thing.enableBar: bool
Thing.size: enum<Size> closed
Thing.size = "L"
Thing.size = "S"
Thing.state: string read-only
Thing.tags: {string}
Thing.windowsSettings: object<WindowsProfile>
Thing.windowsSettings.adminUser: string required secret
Fresh: object<Fresh> resource=Microsoft.X/fresh
Fresh.b: [string]
Fresh.c: string
"#;

fn synthetic() -> ApiDiff {
    apidiff::diff(&structure(OLD), &structure(NEW))
}

#[test]
fn every_kind_of_change_is_classified() {
    let d = synthetic();
    assert_eq!(d.old, "g/v1 (2024-01-01)");
    assert_eq!(d.new, "g/v2 (2025-01-01)");
    assert_eq!(
        d.resources_added
            .iter()
            .map(|r| (r.kind.as_str(), r.properties))
            .collect::<Vec<_>>(),
        [("Fresh", 2)]
    );
    assert_eq!(
        d.resources_removed
            .iter()
            .map(|r| (r.kind.as_str(), r.properties))
            .collect::<Vec<_>>(),
        [("Gone", 1)]
    );
    let t = d.resource("Thing").expect("Thing is on both sides");
    let paths = |v: &[armgen::report::apidiff::PathEntry]| v.iter().map(|e| e.path.to_string()).collect::<Vec<_>>();
    // Two booleans with different names are not guessed to be a rename.
    assert_eq!(paths(&t.added), ["enableBar"]);
    assert_eq!(paths(&t.removed), ["enableFoo", "legacy", "legacy.level"]);
    // A rename: same named type and the same nested properties; or names differing in case only.
    let renames: Vec<(String, String, usize)> = t
        .renamed
        .iter()
        .map(|r| (r.from.to_string(), r.to.to_string(), r.nested))
        .collect();
    assert_eq!(
        renames,
        [
            ("Name".into(), "name".into(), 0),
            ("windowsProfile".into(), "windowsSettings".into(), 1)
        ]
    );
    let types: Vec<(String, String, String)> = t
        .type_changed
        .iter()
        .map(|c| (c.path.to_string(), c.old.to_string(), c.new.to_string()))
        .collect();
    assert_eq!(types, [("count".into(), "int32".into(), "int64".into())]);
    let values = |v: &[armgen::report::apidiff::EnumChange]| {
        v.iter()
            .map(|c| (c.path.to_string(), c.ty.clone(), c.values.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        values(&t.enum_values_added),
        [("size".into(), "Size".into(), vec!["L".to_string()])]
    );
    assert_eq!(
        values(&t.enum_values_removed),
        [("size".into(), "Size".into(), vec!["M".to_string()])]
    );
    let attrs = |v: &[armgen::report::apidiff::AttrChange]| {
        v.iter()
            .map(|c| format!("{} {} {:?} -> {:?}", c.path, c.attr, c.old, c.new))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        attrs(&t.access_changed),
        [
            "state read-only None -> Some(\"\")",
            "tags mutability Some(\"read,create,update\") -> None"
        ]
    );
    assert_eq!(
        attrs(&t.validation_changed),
        [
            "count minimum Some(\"1\") -> Some(\"0\")",
            "count maximum None -> Some(\"9\")"
        ]
    );
    assert_eq!(
        attrs(&t.other_changed),
        [
            " long-running Some(\"\") -> None",
            "size enum Some(\"open\") -> Some(\"closed\")"
        ]
    );
    // Attributes of a renamed property's nested properties are not compared (they moved).
    assert!(!format!("{t:?}").contains("secret"));
}

#[test]
fn the_markdown_report_lists_each_change() {
    let md = synthetic().markdown();
    for line in [
        "# API changes: g/v1 (2024-01-01) → g/v2 (2025-01-01)",
        "| `Thing` | 1 | 3 | 2 | 1 | 1 | 1 | 2 | 2 | 2 |",
        "| `Fresh` | new resource (2 properties) | | | | | | | | |",
        "| `Gone` | removed resource (1 properties) | | | | | | | | |",
        "| **total** | **1** | **3** | **2** | **1** | **1** | **1** | **2** | **2** | **2** |",
        "## `Thing` (`Microsoft.X/things`)",
        "### Added (1)",
        "- `enableBar`: `bool`",
        "### Removed (3)",
        "- `legacy`: `object<Legacy>`",
        "  - `legacy.level`: `int32`",
        "- `windowsProfile` → `windowsSettings`: `object<WindowsProfile>`, with 1 nested",
        "- `count`: `int32` → `int64`",
        "- `size` (`Size`): `L`",
        "- `state`: read-only no → yes",
        "- `tags`: mutability `read,create,update` → none",
        "- `count`: maximum none → `9`",
        "- (the resource): long-running yes → no",
        "- `size`: enum `open` → `closed`",
        "- `Fresh` (`Microsoft.X/fresh`): 2 properties",
    ] {
        assert!(md.lines().any(|l| l == line), "missing line {line:?} in:\n{md}");
    }
}

#[test]
fn the_report_does_not_depend_on_line_order() {
    let shuffle = |text: &str| {
        // Reverse the property lines, keeping each enum value after its property line.
        let mut lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
        let version = lines.remove(0);
        let mut groups: Vec<Vec<&str>> = Vec::new();
        for l in lines {
            if l.contains(" = ") {
                if let Some(g) = groups.last_mut() {
                    g.push(l);
                }
            } else {
                groups.push(vec![l]);
            }
        }
        groups.reverse();
        let mut out = vec![version];
        out.extend(groups.into_iter().flatten());
        out.join("\n")
    };
    let a = apidiff::diff(&structure(OLD), &structure(NEW)).markdown();
    let b = apidiff::diff(&structure(&shuffle(OLD)), &structure(&shuffle(NEW))).markdown();
    assert_eq!(a, b);
}

#[test]
fn identical_structures_have_no_changes() {
    let d = apidiff::diff(&structure(NEW), &structure(NEW));
    assert!(d.is_empty());
    assert!(d.markdown().contains("No API changes."));
}

#[test]
fn structure_files_round_trip_through_odd_names_and_values() {
    let text = r#"@version "g/v 1" 2024-01-01
"Odd Kind": object<X> resource=Microsoft.X/odd path="/odd things/{name}"
"Odd Kind"."a.b": string default="two words" pattern="^[a-z ]+$"
"Odd Kind"."a.b" = "va\"lue"
"Odd Kind".m{}.x: {[int64]} default={"k":[1,2]}
"Odd Kind".u: union<U>
"Odd Kind".u("kind/1").v: bool identifiers=""
"#;
    let s = structure(text);
    let rendered = s.render("# header\n");
    assert_eq!(
        structure(&rendered),
        s,
        "render then parse gives the same structure:\n{rendered}"
    );
    let r = &s.resources["Odd Kind"];
    let (path, entry) = r.properties().next().expect("a property");
    assert_eq!(path.to_string(), "\"a.b\"");
    assert_eq!(entry.get("default"), Some("\"two words\""));
    assert_eq!(entry.get("pattern"), Some("^[a-z ]+$"));
    assert_eq!(
        entry.values.as_ref().map(|v| v.iter().cloned().collect::<Vec<_>>()),
        Some(vec!["va\"lue".to_string()])
    );
    assert!(
        rendered.contains("\"Odd Kind\".u(\"kind/1\").v: bool identifiers=\"\""),
        "{rendered}"
    );
}

#[test]
fn malformed_structure_lines_are_errors_with_the_line_number() {
    for (text, line) in [
        ("Thing: object<X>\n", ""),
        ("@version g/v1 x\nThing: objekt<X>\n", "line 2"),
        ("@version g/v1 x\nThing.a = \"v\"\n", "line 2"),
        ("@version g/v1 x\nThing: object<X>\nThing: object<X>\n", "line 3"),
        ("@version g/v1 x\nThing.a string\n", "line 2"),
    ] {
        let err = ApiStructure::parse(text, "f.txt").expect_err(text).to_string();
        assert!(err.starts_with("f.txt#") && err.contains(line), "{text:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// The real AKS specs.

/// The spec root, resolved as the generator does. Tests that call this are marked
/// `#[cfg_attr(spec_root_missing, ignore = ...)]` (`generator/build.rs` sets the `cfg` when the spec root is missing
/// and `CI` is not set), so a missing spec root here fails the test.
fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    })
}

fn aks_diff(specs: &Path) -> ApiDiff {
    let generation = armgen::Builder::new(workspace().join("azure-arm.yaml"))
        .specs(specs)
        .generate()
        .expect("generate");
    let old = apidiff::from_generation(&generation, "v1beta1").expect("v1beta1");
    let new = apidiff::from_generation(&generation, "containerservice/v2alpha1").expect("v2alpha1");
    apidiff::diff(&old, &new)
}

/// The facts `fixtures/apidiff/api_facts.py` computed from the spec JSON (see the module docs).
#[derive(serde::Deserialize)]
struct Facts {
    resources: BTreeMap<String, ResourceFacts>,
    new_resources: BTreeMap<String, usize>,
    removed_resources: BTreeMap<String, usize>,
}

#[derive(serde::Deserialize)]
struct ResourceFacts {
    added: Vec<String>,
    removed: Vec<String>,
    enum_values_added: BTreeMap<String, Vec<String>>,
    enum_values_removed: BTreeMap<String, Vec<String>>,
    read_only_changed: Vec<String>,
    mutability_changed: Vec<String>,
    validation_changed: Vec<String>,
}

fn facts() -> Facts {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apidiff/aks-2024-09-01-to-2025-10-01.json");
    let text = std::fs::read_to_string(&path).expect("facts file");
    serde_json::from_str(&text).expect("facts JSON")
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn aks_v1beta1_to_v2alpha1_matches_the_facts_counted_from_the_spec_json() {
    let specs = spec_root();
    let d = aks_diff(&specs);
    let f = facts();

    // The headline numbers, as counted by the script (see the module docs).
    let total = |n: fn(&armgen::report::apidiff::ResourceDiff) -> usize| d.resources.iter().map(n).sum::<usize>();
    assert_eq!(total(|r| r.added.len()), 141);
    assert_eq!(total(|r| r.removed.len()), 1);
    assert_eq!(total(|r| r.enum_values_added.iter().map(|e| e.values.len()).sum()), 17);
    assert_eq!(total(|r| r.enum_values_added.len()), 11);
    assert_eq!(total(|r| r.enum_values_removed.len()), 0);
    assert_eq!(total(|r| r.access_changed.len()), 4);
    assert_eq!(total(|r| r.validation_changed.len()), 0);
    assert_eq!(total(|r| r.renamed.len()), 0);
    let counts: Vec<(&str, usize, usize)> = d
        .resources
        .iter()
        .map(|r| (r.kind.as_str(), r.added.len(), r.removed.len()))
        .collect();
    assert_eq!(
        counts,
        [
            ("AgentPool", 55, 0),
            ("MaintenanceConfiguration", 0, 0),
            ("ManagedCluster", 79, 1),
            ("PrivateEndpointConnection", 7, 0),
            ("Snapshot", 0, 0),
            ("TrustedAccessRoleBinding", 0, 0),
        ]
    );
    let mc = d.resource("ManagedCluster").expect("ManagedCluster");
    assert_eq!(
        mc.removed.iter().map(|e| e.path.to_string()).collect::<Vec<_>>(),
        ["properties.enablePodSecurityPolicy"]
    );
    let local_dns = mc
        .added
        .iter()
        .filter(|e| {
            e.path
                .to_string()
                .starts_with("properties.agentPoolProfiles[].localDNSProfile")
        })
        .count();
    assert_eq!(local_dns, 21);

    // Resource by resource, exactly the script's sets.
    assert_eq!(
        d.resources_added
            .iter()
            .map(|r| (r.kind.clone(), r.properties))
            .collect::<BTreeMap<_, _>>(),
        f.new_resources
    );
    assert_eq!(
        d.resources_removed
            .iter()
            .map(|r| (r.kind.clone(), r.properties))
            .collect::<BTreeMap<_, _>>(),
        f.removed_resources
    );
    assert_eq!(
        d.resources.iter().map(|r| r.kind.clone()).collect::<BTreeSet<_>>(),
        f.resources.keys().cloned().collect::<BTreeSet<_>>()
    );
    for r in &d.resources {
        let facts = &f.resources[&r.kind];
        let paths = |v: &[armgen::report::apidiff::PathEntry]| v.iter().map(|e| e.path.to_string()).collect::<Vec<_>>();
        assert_eq!(paths(&r.added), facts.added, "{}: added", r.kind);
        assert_eq!(paths(&r.removed), facts.removed, "{}: removed", r.kind);
        let values = |v: &[armgen::report::apidiff::EnumChange]| {
            v.iter()
                .map(|c| (c.path.to_string(), c.values.clone()))
                .collect::<BTreeMap<_, _>>()
        };
        assert_eq!(values(&r.enum_values_added), facts.enum_values_added, "{}", r.kind);
        assert_eq!(values(&r.enum_values_removed), facts.enum_values_removed, "{}", r.kind);
        let changed = |attr: &str| {
            r.access_changed
                .iter()
                .filter(|c| c.attr == attr)
                .map(|c| c.path.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(changed("read-only"), facts.read_only_changed, "{}", r.kind);
        assert_eq!(changed("mutability"), facts.mutability_changed, "{}", r.kind);
        let validation: Vec<String> = r.validation_changed.iter().map(|c| c.path.to_string()).collect();
        assert_eq!(validation, facts.validation_changed, "{}", r.kind);
    }
}

fn armgen(args: &[&str], specs: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_armgen"))
        .args(args)
        .arg("--specs")
        .arg(specs)
        .arg("--config")
        .arg(workspace().join("azure-arm.yaml"))
        .output()
        .expect("run armgen")
}

fn stdout(o: &std::process::Output) -> String {
    assert!(
        o.status.success(),
        "armgen failed: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn armgen_diff_prints_the_report_for_two_versions() {
    let specs = spec_root();
    let report = stdout(&armgen(&["diff", "v1beta1", "v2alpha1"], &specs));
    for line in [
        "# API changes: containerservice/v1beta1 (2024-09-01) → containerservice/v2alpha1 (2025-10-01)",
        "| `AgentPool` | 55 | 0 | 0 | 1 | 6 | 0 | 0 | 0 | 1 |",
        "| `ManagedNamespace` | new resource (28 properties) | | | | | | | | |",
        "- `ManagedNamespace` (`Microsoft.ContainerService/managedClusters/managedNamespaces`): 28 properties",
        "- `properties.agentPoolProfiles[].localDNSProfile`: `object<LocalDnsProfile>`",
        "  - `properties.agentPoolProfiles[].localDNSProfile.mode`: `enum<LocalDnsMode> open default=\"Preferred\"`",
        "- `properties.enablePodSecurityPolicy`: `bool`",
        "- `properties.agentPoolProfiles[].osSKU` (`Ossku`): `AzureLinux3`, `Ubuntu2204`, `Ubuntu2404`",
        "- `sku.name` (`ManagedClusterSkuName`): `Automatic`",
        "- `properties.networkProfile.outboundType` (`OutboundType`): `none`",
        "- `properties.networkProfile.loadBalancerProfile.effectiveOutboundIPs`: read-only no → yes",
        "- `tags`: mutability `read,create,update` → none",
        // A spec change the script does not look at: `format: float` on a number is `f32`, not `f64`.
        "- `properties.agentPoolProfiles[].spotMaxPrice`: `double` → `float`",
    ] {
        assert!(report.lines().any(|l| l == line), "missing {line:?} in:\n{report}");
    }
    // Deterministic.
    assert_eq!(report, stdout(&armgen(&["diff", "v1beta1", "v2alpha1"], &specs)));
    // The same report from the two structure files, but for the names in the title; from the two spec files,
    // which are read without the config's overrides, the same but for the secrets azure-arm.yaml marks in
    // v1beta1 (2025-10-01 marks them `x-ms-secret` itself).
    let folder = specs.join("specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable");
    let from_specs = stdout(&armgen(
        &[
            "diff",
            &folder.join("2024-09-01/managedClusters.json").to_string_lossy(),
            &folder.join("2025-10-01/managedClusters.json").to_string_lossy(),
        ],
        &specs,
    ));
    let api = workspace().join("generated/api");
    let from_files = stdout(&armgen(
        &[
            "diff",
            &api.join("containerservice-v1beta1.txt").to_string_lossy(),
            &api.join("containerservice-v2alpha1.txt").to_string_lossy(),
        ],
        &specs,
    ));
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(body(&from_files), body(&report));
    let secret_lines = |s: &str| -> Vec<String> {
        s.lines()
            .filter(|l| l.contains(": secret no → yes"))
            .map(str::to_string)
            .collect()
    };
    assert!(secret_lines(&report).is_empty(), "{report}");
    assert_eq!(
        secret_lines(&from_specs),
        [
            "- `properties.aadProfile.serverAppSecret`: secret no → yes",
            "- `properties.servicePrincipalProfile.secret`: secret no → yes",
            "- `properties.windowsProfile.adminPassword`: secret no → yes",
        ]
    );
    let without = |s: &str| -> Vec<String> {
        s.lines()
            .skip(1)
            .filter(|l| !l.contains(": secret no → yes") && !l.starts_with("| `ManagedCluster` |"))
            .filter(|l| !l.starts_with("| **total** |") && !l.starts_with("### Other changes"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(without(&from_specs), without(&report));
    assert!(from_specs.starts_with(
        "# API changes: specification/containerservice/resource-manager/Microsoft.ContainerService/aks/stable/2024-09-01/managedClusters.json (2024-09-01) →"
    ));
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn armgen_diff_of_two_generated_trees_and_its_exit_code() {
    let specs = spec_root();
    let generated = workspace().join("generated");
    let same = armgen(
        &[
            "diff",
            "--exit-code",
            &generated.to_string_lossy(),
            &generated.to_string_lossy(),
        ],
        &specs,
    );
    assert_eq!(same.status.code(), Some(0));
    let text = String::from_utf8_lossy(&same.stdout);
    // One report per configured version.
    let config = armgen::Config::load(&workspace().join("azure-arm.yaml")).expect("config");
    let versions: usize = config.groups.values().map(|g| g.versions.len()).sum();
    assert_eq!(text.matches("No API changes.").count(), versions, "{text}");

    // An older tree: v2alpha1 without one property and one enum value, and no v1beta1 at all.
    let old = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(old.path().join("api")).expect("mkdir");
    let current = std::fs::read_to_string(generated.join("api/containerservice-v2alpha1.txt")).expect("read");
    let edited: String = current
        .lines()
        .filter(|l| !l.starts_with("ManagedCluster.kind:") && *l != "ManagedCluster.sku.name = \"Automatic\"")
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(edited.lines().count() + 2, current.lines().count());
    std::fs::write(old.path().join("api/containerservice-v2alpha1.txt"), edited).expect("write");
    let out = armgen(
        &[
            "diff",
            "--exit-code",
            &old.path().to_string_lossy(),
            &generated.to_string_lossy(),
        ],
        &specs,
    );
    assert_eq!(out.status.code(), Some(1), "--exit-code: changes give 1");
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "# API changes: (no containerservice/v1beta1) → containerservice/v1beta1 (2024-09-01)",
        "# API changes: containerservice/v2alpha1 (2025-10-01) → containerservice/v2alpha1 (2025-10-01)",
        "- `kind`: `string`",
        "- `sku.name` (`ManagedClusterSkuName`): `Automatic`",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line:?} in:\n{text}");
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn armgen_diff_names_a_bad_operand() {
    let specs = spec_root();
    let out = armgen(&["diff", "v1beta1", "v3"], &specs);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`v3`")
            && err.contains("containerservice/v1beta1, containerservice/v2alpha1")
            && err.starts_with("error: "),
        "{err}"
    );
}
