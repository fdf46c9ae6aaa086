//! armctl's behaviour without the spec root: errors (exit code 2, a message naming the problem), defaults,
//! `--owner`, secret placeholders and unresolvable references on export, stdin.

mod common;

use armgen_runtime::{KindInfo, Scope, VersionInfo};
use common::{armctl, sample_arm_body, stderr, stdout};
use serde_json::{Value, json};

/// The Kubernetes API groups of the registry, each once.
fn groups() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in aks_api::VERSIONS {
        if !out.iter().any(|g| g == v.kube_group) {
            out.push(v.kube_group.to_string());
        }
    }
    out
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

fn assert_error(o: &std::process::Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {err}");
    assert!(stdout(o).is_empty(), "nothing on stdout on error: {}", stdout(o));
    for n in needles {
        assert!(err.contains(n), "stderr names {n:?}: {err}");
    }
}

const CLUSTER: &str = r#"{"name": "cluster1", "location": "westeurope", "properties": {"dnsPrefix": "dns1"}}"#;

#[test]
fn unknown_kind_lists_the_known_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(&dir, "c.json", CLUSTER);
    let o = armctl(&["import", "--from-file", &f, "--kind", "VirtualMachine"], None);
    // Every kind of every API group of the registry is listed, under its group.
    let mut needles = vec!["unknown kind `VirtualMachine`".to_string()];
    for v in aks_api::VERSIONS {
        needles.push(format!("{}: ", v.kube_group));
        needles.extend(v.kinds.iter().map(|k| k.to_string()));
    }
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    assert_error(&o, &needles);
    let o = armctl(&["crds", "--kind", "VirtualMachine"], None);
    assert_error(&o, &needles);
    let cr = "apiVersion: containerservice.armgen.dev/v2alpha1\nkind: VirtualMachine\nmetadata: {name: a}\nspec: {}\n";
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert_error(&o, &["unknown kind `VirtualMachine`", "ManagedCluster"]);
}

#[test]
fn unknown_version_lists_the_known_ones() {
    // Versions are per API group: for a kind of each group, an unknown version lists that group's versions, and
    // only those.
    for group in groups() {
        let versions: Vec<&VersionInfo> = aks_api::VERSIONS.iter().filter(|v| v.kube_group == group).collect();
        let kind = versions[0].kinds[0];
        let o = armctl(
            &[
                "import",
                "--from-file",
                "-",
                "--kind",
                kind,
                "--group",
                &group,
                "--version",
                "v3",
                "--name",
                "a",
            ],
            Some("{}"),
        );
        let mut needles = vec![format!("unknown version `v3` of {group}; known versions: ")];
        needles.push(versions.iter().map(|v| v.version).collect::<Vec<_>>().join(", "));
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_error(&o, &needles);
        let listed = stderr(&o);
        let listed = listed.split("known versions: ").nth(1).unwrap_or_default().trim();
        let others: Vec<&str> = listed
            .split(", ")
            .filter(|v| !versions.iter().any(|x| x.version == *v))
            .collect();
        assert!(others.is_empty(), "{kind}: versions of other groups listed: {others:?}");
    }
}

/// A kind is looked up in every API group; `--group` (either name of the group) picks the group, and a kind that
/// group lacks is an error listing the group's kinds; an unknown group lists the known ones.
#[test]
fn kinds_are_found_in_every_group_and_group_picks_one() {
    for group in groups() {
        let info = aks_api::KINDS
            .iter()
            .find(|k| k.kube_group == group && k.served)
            .expect("a served kind per group");
        let short = info.group;
        for g in [short, group.as_str()] {
            let o = armctl(
                &[
                    "import",
                    "--from-file",
                    "-",
                    "--kind",
                    &info.kind.to_lowercase(),
                    "--group",
                    g,
                    "--version",
                    info.version,
                    "--name",
                    "a",
                ],
                Some(&sample_arm_body(info).to_string()),
            );
            assert!(o.status.success(), "{} --group {g}: {}", info.kind, stderr(&o));
            let cr: Value = serde_yaml_ng::from_str(&stdout(&o)).expect("YAML");
            assert_eq!(cr["apiVersion"], info.api_version());
            assert_eq!(cr["kind"], info.kind);
        }
        // A kind of another group, asked for in this one.
        let other = aks_api::KINDS
            .iter()
            .find(|k| {
                k.kube_group != group && !aks_api::KINDS.iter().any(|x| x.kube_group == group && x.kind == k.kind)
            })
            .expect("a kind of another group");
        let o = armctl(
            &[
                "import",
                "--from-file",
                "-",
                "--kind",
                other.kind,
                "--group",
                &group,
                "--name",
                "a",
            ],
            Some("{}"),
        );
        let mut needles = vec![format!(
            "unknown kind `{}` in {group}; known kinds: {group}: ",
            other.kind
        )];
        needles.extend(
            aks_api::KINDS
                .iter()
                .filter(|k| k.kube_group == group)
                .map(|k| k.kind.to_string()),
        );
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_error(&o, &needles);
    }
    let o = armctl(
        &[
            "import",
            "--from-file",
            "-",
            "--kind",
            "ManagedCluster",
            "--group",
            "compute",
            "--name",
            "a",
        ],
        Some("{}"),
    );
    let mut needles = vec!["unknown API group `compute`".to_string()];
    needles.extend(groups());
    let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
    assert_error(&o, &needles);
}

/// `--owner` follows where the kind lives (`KindInfo::arm.scope`): a resource group by name or ARM ID for kinds in
/// one, the parent's name for children, the ARM ID or custom resource (`KIND[.GROUP]/NAME`) an extension resource
/// extends, and no owner at all for kinds outside resource groups.
#[test]
fn owner_follows_the_scope_of_the_kind() {
    let import = |info: &KindInfo, owner: &str| {
        armctl(
            &[
                "import",
                "--from-file",
                "-",
                "--kind",
                info.kind,
                "--version",
                info.version,
                "--name",
                "a",
                "--owner",
                owner,
            ],
            Some(&sample_arm_body(info).to_string()),
        )
    };
    let owner_of = |o: &std::process::Output| -> Value {
        assert!(o.status.success(), "{}", stderr(o));
        let cr: Value = serde_yaml_ng::from_str(&stdout(o)).expect("YAML");
        cr["spec"]["owner"].clone()
    };
    let mut scopes = std::collections::BTreeSet::new();
    for info in aks_api::KINDS.iter().filter(|k| k.served) {
        scopes.insert(format!("{:?}", info.arm.scope));
        if info.owner_kind.is_some() {
            assert_eq!(
                owner_of(&import(info, "parent1")),
                json!({"name": "parent1"}),
                "{}",
                info.kind
            );
            continue;
        }
        let rg = "/subscriptions/s1/resourceGroups/rg1";
        match info.arm.scope {
            Scope::ResourceGroup => {
                assert_eq!(owner_of(&import(info, "rg1")), json!({"name": "rg1"}), "{}", info.kind);
                assert_eq!(owner_of(&import(info, rg)), json!({"armId": rg}), "{}", info.kind);
            }
            Scope::Extension => {
                assert_eq!(owner_of(&import(info, rg)), json!({"armId": rg}), "{}", info.kind);
                // Any kind of the registry, by its kind alone or qualified with either name of its group.
                let mut targets: Vec<&KindInfo> = Vec::new();
                for k in aks_api::KINDS {
                    if !targets.iter().any(|t| (t.kube_group, t.kind) == (k.kube_group, k.kind)) {
                        targets.push(k);
                    }
                }
                for target in targets {
                    let expected = json!({"group": target.kube_group, "kind": target.kind, "name": "x1"});
                    for spelled in [
                        target.kind.to_string(),
                        format!("{}.{}", target.kind, target.kube_group),
                        format!("{}.{}", target.kind, target.group),
                    ] {
                        let o = import(info, &format!("{spelled}/x1"));
                        assert_eq!(owner_of(&o), expected, "{} --owner {spelled}/x1", info.kind);
                    }
                }
                let o = import(info, "x1");
                assert_error(&o, &["--owner x1", info.kind, "ARM ID", "KIND[.GROUP]/NAME"]);
                let o = import(info, "Widget/x1");
                assert_error(&o, &["--owner Widget/x1", "unknown kind `Widget`"]);
            }
            Scope::Subscription | Scope::Tenant => {
                let o = import(info, "rg1");
                assert_error(&o, &["--owner rg1", info.kind, "no owner"]);
                // Without --owner: no spec.owner.
                let o = armctl(
                    &[
                        "import",
                        "--from-file",
                        "-",
                        "--kind",
                        info.kind,
                        "--version",
                        info.version,
                        "--name",
                        "a",
                    ],
                    Some(&sample_arm_body(info).to_string()),
                );
                assert!(o.status.success(), "{}", stderr(&o));
                let cr: Value = serde_yaml_ng::from_str(&stdout(&o)).expect("YAML");
                assert!(cr["spec"].get("owner").is_none(), "{}: {cr}", info.kind);
            }
        }
    }
    // The registry has kinds of more than one scope, so more than one branch above ran.
    assert!(scopes.len() > 1, "{scopes:?}");
}

#[test]
fn malformed_json_names_the_file_and_the_place() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        &dir,
        "broken.json",
        "{\"location\": \"westeurope\",\n  \"properties\": [}",
    );
    let o = armctl(
        &["import", "--from-file", &f, "--kind", "ManagedCluster", "--name", "a"],
        None,
    );
    assert_error(&o, &["broken.json", "not valid JSON", "line 2"]);
    // Valid JSON, but not the ARM type's shape.
    let f = write(&dir, "wrong.json", r#"{"location": 5}"#);
    let o = armctl(
        &["import", "--from-file", &f, "--kind", "ManagedCluster", "--name", "a"],
        None,
    );
    // The default version's ARM API version: the newest served version with the kind (not the storage version,
    // which may be older).
    let api_version = armgen_runtime::newest(aks_api::KINDS, |k| k.kind == "ManagedCluster" && k.served)
        .map(|k| k.arm.api_version)
        .expect("a served ManagedCluster");
    assert_error(&o, &["wrong.json", "not a valid ManagedCluster ARM body", api_version]);
    let f = write(&dir, "array.json", "[]");
    let o = armctl(
        &["import", "--from-file", &f, "--kind", "ManagedCluster", "--name", "a"],
        None,
    );
    assert_error(&o, &["array.json", "JSON object"]);
    let o = armctl(&["export", "-f", "-"], Some("kind: [\n"));
    assert_error(&o, &["<stdin>", "not a valid YAML or JSON document"]);
    let o = armctl(&["export", "-f", "-"], Some("a: 1\n---\nb: 2\n"));
    assert_error(&o, &["<stdin>", "more than one document"]);
    let cr = "apiVersion: containerservice.armgen.dev/v2alpha1\nkind: ManagedCluster\nspec: {location: [1]}\n";
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert_error(
        &o,
        &["<stdin>", "spec.location: invalid type: sequence, expected a string"],
    );
}

#[test]
fn unreadable_files_are_named() {
    let o = armctl(
        &[
            "import",
            "--from-file",
            "/nonexistent/arm.json",
            "--kind",
            "ManagedCluster",
        ],
        None,
    );
    assert_error(&o, &["cannot read /nonexistent/arm.json"]);
    let o = armctl(&["export", "-f", "/nonexistent/cr.yaml"], None);
    assert_error(&o, &["cannot read /nonexistent/cr.yaml"]);
}

#[test]
fn export_of_an_unknown_api_version_lists_the_known_ones() {
    // Every apiVersion of the registry (of every group) is listed.
    let known: Vec<String> = aks_api::VERSIONS
        .iter()
        .map(|v| format!("{}/{}", v.kube_group, v.version))
        .collect();
    for api_version in ["containerservice.armgen.dev/v9", "compute.armgen.dev/v2alpha1", "v1"] {
        let cr = format!("apiVersion: {api_version}\nkind: ManagedCluster\nmetadata: {{name: a}}\nspec: {{}}\n");
        let o = armctl(&["export", "-f", "-"], Some(&cr));
        let mut needles = vec![format!("unknown apiVersion `{api_version}`")];
        needles.extend(known.iter().cloned());
        let needles: Vec<&str> = needles.iter().map(String::as_str).collect();
        assert_error(&o, &needles);
    }
    let o = armctl(&["export", "-f", "-"], Some("kind: ManagedCluster\n"));
    assert_error(&o, &["no `apiVersion`"]);
}

#[test]
fn import_defaults_to_the_newest_version_and_the_arm_name() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(&dir, "c.json", CLUSTER);
    let o = armctl(
        &[
            "import",
            "--from-file",
            &f,
            "--kind",
            "ManagedCluster",
            "--owner",
            "rg1",
        ],
        None,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cr: Value = serde_yaml_ng::from_str(&stdout(&o)).expect("YAML");
    let newest = aks_api::KINDS
        .iter()
        .filter(|k| k.kind == "ManagedCluster")
        .max_by_key(|k| k.arm.api_version)
        .expect("ManagedCluster");
    assert_eq!(cr["apiVersion"], newest.api_version());
    assert_eq!(cr["kind"], "ManagedCluster");
    assert_eq!(cr["metadata"]["name"], "cluster1");
    assert!(cr["metadata"].get("namespace").is_none(), "{cr}");
    assert_eq!(cr["spec"]["owner"], json!({"name": "rg1"}));
    assert_eq!(cr["spec"]["dnsPrefix"], "dns1");
    // Without a `name` in the body, --name is required.
    let f = write(&dir, "unnamed.json", r#"{"location": "westeurope"}"#);
    let o = armctl(&["import", "--from-file", &f, "--kind", "ManagedCluster"], None);
    assert_error(&o, &["unnamed.json", "--name"]);
    // stdin, another version, a namespace.
    let o = armctl(
        &[
            "import",
            "--from-file",
            "-",
            "--kind",
            "AgentPool",
            "--version",
            "v1beta1",
            "--name",
            "pool1",
            "--namespace",
            "ns1",
            "--owner",
            "cluster1",
        ],
        Some(r#"{"properties": {"count": 3, "vmSize": "Standard_D2s_v3"}}"#),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let cr: Value = serde_yaml_ng::from_str(&stdout(&o)).expect("YAML");
    assert_eq!(cr["apiVersion"], "containerservice.armgen.dev/v1beta1");
    assert_eq!(cr["metadata"], json!({"name": "pool1", "namespace": "ns1"}));
    assert_eq!(cr["spec"]["owner"], json!({"name": "cluster1"}));
    assert_eq!(cr["spec"]["count"], 3);
}

#[test]
fn export_leaves_secrets_as_marked_references_and_lists_them() {
    let cr = r#"
apiVersion: containerservice.armgen.dev/v2alpha1
kind: ManagedCluster
metadata: {name: c}
spec:
  location: westeurope
  owner: {name: rg}
  servicePrincipalProfile: {clientId: id, secret: {name: sp, key: secret}}
  windowsProfile: {adminUsername: azureuser, adminPassword: {name: win, key: password}}
"#;
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert!(o.status.success(), "{}", stderr(&o));
    let arm: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(
        arm,
        json!({
            "location": "westeurope",
            "properties": {
                "servicePrincipalProfile": {"clientId": "id", "secret": "$secret:sp/secret"},
                "windowsProfile": {"adminUsername": "azureuser", "adminPassword": "$secret:win/password"}
            }
        })
    );
    let note = stderr(&o);
    assert!(note.contains("note: 2 secret(s)"), "{note}");
    assert!(
        note.contains("/properties/servicePrincipalProfile/secret: $secret:sp/secret"),
        "{note}"
    );
    assert!(
        note.contains("/properties/windowsProfile/adminPassword: $secret:win/password"),
        "{note}"
    );
    // The same custom resource as JSON, from a file.
    let dir = tempfile::tempdir().expect("tempdir");
    let value: Value = serde_yaml_ng::from_str(cr).expect("YAML");
    let f = write(&dir, "cr.json", &value.to_string());
    let o = armctl(&["export", "-f", &f], None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(serde_json::from_str::<Value>(&stdout(&o)).expect("JSON"), arm);
}

#[test]
fn export_cannot_resolve_a_reference_to_another_custom_resource() {
    let cr = r#"
apiVersion: containerservice.armgen.dev/v2alpha1
kind: AgentPool
metadata: {name: pool1}
spec:
  owner: {name: cluster1}
  vnetSubnetID: {group: network.armgen.dev, kind: VirtualNetworksSubnet, name: subnet1}
"#;
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert_error(&o, &["spec.vnetSubnetID", "VirtualNetworksSubnet/subnet1"]);
    // By ARM ID it resolves offline.
    let id = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/subnet1";
    let cr = cr.replace(
        "{group: network.armgen.dev, kind: VirtualNetworksSubnet, name: subnet1}",
        &format!("{{armId: {id}}}"),
    );
    let o = armctl(&["export", "-f", "-"], Some(&cr));
    assert!(o.status.success(), "{}", stderr(&o));
    let arm: Value = serde_json::from_str(&stdout(&o)).expect("JSON");
    assert_eq!(arm["properties"]["vnetSubnetID"], id);
}

#[test]
fn export_of_a_field_of_the_wrong_type_names_its_path() {
    let cr = r#"
apiVersion: containerservice.armgen.dev/v2alpha1
kind: AgentPool
metadata: {name: pool1}
spec:
  owner: {name: cluster1}
  availabilityZones: notalist
"#;
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert_error(
        &o,
        &["spec.availabilityZones: invalid type: string \"notalist\", expected a sequence"],
    );
}
