//! armctl's behaviour without the spec root: errors (exit code 2, a message naming the problem), defaults,
//! `--owner`, secret placeholders and unresolvable references on export, stdin.

mod common;

use common::{armctl, stderr, stdout};
use serde_json::{Value, json};

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
    assert_error(
        &o,
        &[
            "unknown kind `VirtualMachine`",
            "ManagedCluster",
            "AgentPool",
            "Snapshot",
        ],
    );
    let o = armctl(&["crds", "--kind", "VirtualMachine"], None);
    assert_error(&o, &["unknown kind `VirtualMachine`", "ManagedCluster"]);
    let cr = "apiVersion: containerservice.armgen.dev/v2alpha1\nkind: VirtualMachine\nmetadata: {name: a}\nspec: {}\n";
    let o = armctl(&["export", "-f", "-"], Some(cr));
    assert_error(&o, &["unknown kind `VirtualMachine`", "ManagedCluster"]);
}

#[test]
fn unknown_version_lists_the_known_ones() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(&dir, "c.json", CLUSTER);
    let o = armctl(
        &[
            "import",
            "--from-file",
            &f,
            "--kind",
            "ManagedCluster",
            "--version",
            "v3",
        ],
        None,
    );
    // The error lists every version of the registry.
    let mut needles = vec!["unknown version `v3`"];
    needles.extend(aks_api::VERSIONS.iter().map(|v| v.version));
    assert_error(&o, &needles);
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
    for api_version in ["containerservice.armgen.dev/v9", "compute.armgen.dev/v2alpha1", "v1"] {
        let cr = format!("apiVersion: {api_version}\nkind: ManagedCluster\nmetadata: {{name: a}}\nspec: {{}}\n");
        let o = armctl(&["export", "-f", "-"], Some(&cr));
        assert_error(
            &o,
            &[
                &format!("unknown apiVersion `{api_version}`"),
                "containerservice.armgen.dev/v1beta1",
                "containerservice.armgen.dev/v2alpha1",
            ],
        );
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
