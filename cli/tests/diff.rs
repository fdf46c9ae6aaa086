//! `armctl diff`: a custom resource against an ARM GET body — no difference (exit 0, no output), differences
//! (exit 1, one line each, or JSON), errors (exit 2), in both served versions.

mod common;

use common::{armctl, stderr, stdout};
use serde_json::{Value, json};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path.to_string_lossy().into_owned()
}

/// An ARM GET body of a cluster with two pools, read-only properties included.
fn get_body(count2: i32) -> String {
    json!({
        "id": "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1",
        "name": "c1",
        "location": "westeurope",
        "properties": {
            "provisioningState": "Succeeded",
            "kubernetesVersion": "1.30.7",
            "dnsPrefix": "dns1",
            "fqdn": "dns1-abc.hcp.westeurope.azmk8s.io",
            "agentPoolProfiles": [
                {"name": "pool1", "count": 3, "vmSize": "Standard_DS2_v2", "mode": "System", "provisioningState": "Succeeded"},
                {"name": "pool2", "count": count2, "vmSize": "Standard_DS2_v2", "mode": "User", "osType": "Linux"}
            ]
        }
    })
    .to_string()
}

fn custom_resource(version: &str) -> String {
    format!(
        "apiVersion: containerservice.armgen.dev/{version}
kind: ManagedCluster
metadata:
  name: c1
spec:
  owner:
    name: rg
  location: westeurope
  dnsPrefix: dns1
  agentPoolProfiles:
    - name: pool2
      count: 2
      mode: user
      osType: linux
    - name: pool1
      count: 3
"
    )
}

#[test]
fn in_sync_is_exit_code_0_and_prints_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let actual = write(&dir, "get.json", &get_body(2));
    // Every version of the registry that has ManagedCluster.
    let versions: Vec<&str> = aks_api::KINDS
        .iter()
        .filter(|k| k.kind == "ManagedCluster")
        .map(|k| k.version)
        .collect();
    assert!(!versions.is_empty());
    for version in versions {
        let cr = write(&dir, "cr.yaml", &custom_resource(version));
        let o = armctl(&["diff", "-f", &cr, "--actual", &actual], None);
        assert_eq!(o.status.code(), Some(0), "{version}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    }
}

#[test]
fn differences_are_exit_code_1_one_line_each_or_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let actual = write(&dir, "get.json", &get_body(5));
    let cr = custom_resource("v2alpha1").replace("dnsPrefix: dns1", "dnsPrefix: dns2");
    let cr = write(&dir, "cr.yaml", &cr);
    let o = armctl(&["diff", "-f", &cr, "--actual", &actual], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "spec.dnsPrefix: desired \"dns2\", actual \"dns1\"\n\
         spec.agentPoolProfiles[name=pool2].count: desired 2, actual 5\n"
    );
    let o = armctl(&["diff", "-f", &cr, "--actual", &actual, "--output", "json"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON output");
    assert_eq!(
        v,
        json!([
            {"path": "spec.dnsPrefix", "desired": "dns2", "actual": "dns1"},
            {"path": "spec.agentPoolProfiles[name=pool2].count", "desired": 2, "actual": 5}
        ])
    );
    // A pool Azure lacks: the actual side is absent.
    let extra = custom_resource("v1beta1") + "    - name: pool3\n      count: 1\n";
    let extra = write(&dir, "extra.yaml", &extra);
    let o = armctl(&["diff", "-f", &extra, "--actual", &actual, "-o", "json"], None);
    let v: Value = serde_json::from_str(&stdout(&o)).expect("JSON output");
    assert_eq!(
        v[1],
        json!({"path": "spec.agentPoolProfiles[name=pool3]", "desired": {"name": "pool3", "count": 1}})
    );
}

#[test]
fn errors_are_exit_code_2_naming_the_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let actual = write(&dir, "get.json", &get_body(2));
    let cr = write(&dir, "cr.yaml", &custom_resource("v2alpha1"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![cr.clone(), write(&dir, "bad.json", "{\"properties\": 3}")],
            "bad.json: not a ManagedCluster ARM body",
        ),
        (
            vec![write(&dir, "v9.yaml", &custom_resource("v9")), actual.clone()],
            "unknown apiVersion `containerservice.armgen.dev/v9`",
        ),
        (
            vec![
                write(
                    &dir,
                    "nokind.yaml",
                    "apiVersion: containerservice.armgen.dev/v2alpha1\n",
                ),
                actual.clone(),
            ],
            "no `kind`",
        ),
        (
            vec![
                cr.clone(),
                dir.path().join("missing.json").to_string_lossy().into_owned(),
            ],
            "cannot read",
        ),
        (
            vec![
                write(
                    &dir,
                    "badspec.yaml",
                    &custom_resource("v2alpha1").replace("count: 3", "count: three"),
                ),
                actual.clone(),
            ],
            "not a ManagedCluster custom resource",
        ),
    ];
    for (files, needle) in cases {
        let o = armctl(&["diff", "-f", &files[0], "--actual", &files[1]], None);
        assert_eq!(o.status.code(), Some(2), "{needle}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
        assert!(stderr(&o).contains(needle), "stderr names {needle:?}: {}", stderr(&o));
    }
}
