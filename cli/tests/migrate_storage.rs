//! `armctl migrate-storage` against the fake API server (served over HTTP in the test, with the generated
//! conversion as its converter, standing in for the conversion webhook).
//!
//! The scenario: our CRDs (as `armctl crds` prints them) are first installed with an older version as storage —
//! a test-only copy, since the generated CRDs mark the hub — and objects of every kind are written, at the older
//! version and at the hub, in two namespaces; then the real CRDs are installed (the storage moves to the hub,
//! `storedVersions` lists both); then `migrate-storage` runs: `--dry-run`, `--namespace`, a run with an injected
//! failure, a resumed run, an idempotent rerun. Every API group of the registry, each with its own versions
//! (`aks_api::VERSIONS`): a CRD's hub is its group's storage version, the older one the newest served non-storage
//! version of the group that the CRD has (the previous storage version when the hub moved to a new version, as it
//! did from `v2alpha1` to `v2beta1`); a CRD of a group with one version has no older one and nothing to migrate.
//!
//! No spec root needed: objects are built from each CRD's schema (the required fields only).

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use common::{stderr, stdout};
use fake_apiserver::FakeApiServer;
use serde_json::{Value, json};

const NAMESPACES: [&str; 2] = ["team-a", "team-b"];

/// Per Kubernetes API group of the registry: the hub (storage) version and the other served versions, newest (by
/// ARM API version) first.
fn registry_versions() -> BTreeMap<String, (String, Vec<String>)> {
    let mut out = BTreeMap::new();
    let groups: std::collections::BTreeSet<&str> = aks_api::VERSIONS.iter().map(|v| v.kube_group).collect();
    for group in groups {
        let mut versions: Vec<_> = aks_api::VERSIONS
            .iter()
            .filter(|v| v.kube_group == group && v.served)
            .collect();
        versions.sort_by(|a, b| b.api_version.cmp(a.api_version));
        let hub = versions
            .iter()
            .find(|v| v.storage)
            .map(|v| v.version.to_string())
            .unwrap_or_else(|| panic!("{group} has a storage version"));
        let others = versions
            .iter()
            .filter(|v| !v.storage)
            .map(|v| v.version.to_string())
            .collect();
        out.insert(group.to_string(), (hub, others));
    }
    out
}

fn armctl(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_armctl"))
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .output()
        .expect("run armctl")
}

async fn armctl_async(kubeconfig: &Path, args: &[&str]) -> Output {
    let kubeconfig = kubeconfig.to_path_buf();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        armctl(&kubeconfig, &args)
    })
    .await
    .expect("armctl task")
}

fn text(o: &Output) -> String {
    format!("{}{}", stdout(o), stderr(o))
}

/// Our CRD manifests, as `armctl crds` prints them.
fn our_crds(kubeconfig: &Path) -> Vec<Value> {
    let out = armctl(kubeconfig, &["crds"]);
    assert!(out.status.success(), "{}", text(&out));
    let yaml = stdout(&out);
    serde_yaml_ng::Deserializer::from_str(&yaml)
        .map(|doc| serde::Deserialize::deserialize(doc).expect("a CRD document"))
        .collect()
}

/// A value that satisfies `schema`'s required fields, and nothing else.
fn minimal(schema: &Value) -> Value {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") | None if schema.get("properties").is_some() => {
            let mut out = serde_json::Map::new();
            for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
                if let Some(name) = required.as_str() {
                    out.insert(name.to_string(), minimal(&schema["properties"][name]));
                }
            }
            Value::Object(out)
        }
        Some("array") => json!([]),
        Some("string") => match schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
            Some(first) => first.clone(),
            None => json!("x"),
        },
        Some("integer" | "number") => json!(1),
        Some("boolean") => json!(false),
        _ => json!({}),
    }
}

fn versions_of(crd: &Value) -> Vec<&Value> {
    crd["spec"]["versions"]
        .as_array()
        .map(|v| v.iter().collect())
        .unwrap_or_default()
}

/// `crd` with `storage` as its storage version.
fn with_storage(crd: &Value, storage: &str) -> Value {
    let mut crd = crd.clone();
    if let Some(versions) = crd["spec"]["versions"].as_array_mut() {
        for v in versions {
            let is = v["name"] == storage;
            v["storage"] = json!(is);
        }
    }
    crd
}

struct Crd {
    manifest: Value,
    name: String,
    kind: String,
    plural: String,
    group: String,
    /// The version objects are first stored at: the newest older one the CRD has, else the hub.
    old: String,
    /// Its group's storage version.
    hub: String,
    served: Vec<String>,
}

fn describe(manifest: &Value, registry: &BTreeMap<String, (String, Vec<String>)>) -> Crd {
    let names: Vec<String> = versions_of(manifest)
        .iter()
        .filter_map(|v| v["name"].as_str().map(str::to_string))
        .collect();
    let storage = versions_of(manifest)
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let group = manifest["spec"]["group"].as_str().unwrap_or_default().to_string();
    let (hub, others) = registry
        .get(&group)
        .unwrap_or_else(|| panic!("the CRD's group {group} is a group of the registry"));
    assert_eq!(&storage, hub, "the generated CRDs store their group's hub");
    Crd {
        name: manifest["metadata"]["name"].as_str().unwrap_or_default().to_string(),
        kind: manifest["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        plural: manifest["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        group,
        old: others
            .iter()
            .find(|o| names.contains(o))
            .cloned()
            .unwrap_or_else(|| hub.to_string()),
        hub: hub.clone(),
        served: versions_of(manifest)
            .iter()
            .filter(|v| v["served"] == true)
            .filter_map(|v| v["name"].as_str().map(str::to_string))
            .collect(),
        manifest: manifest.clone(),
    }
}

fn object(crd: &Crd, version: &str, namespace: &str, name: &str) -> Value {
    let schema = versions_of(&crd.manifest)
        .into_iter()
        .find(|v| v["name"] == version)
        .map(|v| v["schema"]["openAPIV3Schema"]["properties"]["spec"].clone())
        .unwrap_or(Value::Null);
    json!({
        "apiVersion": format!("{}/{version}", crd.group),
        "kind": crd.kind,
        "metadata": { "name": name, "namespace": namespace },
        "spec": minimal(&schema),
    })
}

fn stored_versions(server: &FakeApiServer, crd: &Crd) -> Value {
    server
        .get("apiextensions.k8s.io/v1", "customresourcedefinitions", None, &crd.name)
        .map(|c| c["status"]["storedVersions"].clone())
        .unwrap_or(Value::Null)
}

fn encoded(server: &FakeApiServer, crd: &Crd, namespace: &str, name: &str) -> Option<String> {
    server.stored_version(
        &format!("{}/{}", crd.group, crd.old),
        &crd.plural,
        Some(namespace),
        name,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migrate_storage_moves_every_object_to_the_hub_and_reduces_stored_versions() {
    let registry = registry_versions();
    assert!(
        registry.values().any(|(_, others)| !others.is_empty()),
        "every group of the registry has only its hub: there is no older storage version to migrate from"
    );
    let server = FakeApiServer::new();
    // The conversion webhook serves every group.
    for group in registry.keys() {
        server.set_converter(group, |object, to| {
            aks_api::convert_custom_resource(object, to).map_err(|e| format!("{}: {}", e.path, e.message))
        });
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let serving = tokio::spawn(server.clone().serve(listener));
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster: {{server: \"{url}\"}}\ncontexts:\n- name: fake\n  \
             context: {{cluster: fake, user: fake, namespace: default}}\ncurrent-context: fake\nusers:\n- name: fake\n  user: {{}}\n"
        ),
    )
    .expect("kubeconfig");

    let crds: Vec<Crd> = our_crds(&kubeconfig).iter().map(|m| describe(m, &registry)).collect();
    // Every group's CRDs are among ours.
    let groups: std::collections::BTreeSet<&str> = crds.iter().map(|c| c.group.as_str()).collect();
    assert_eq!(
        groups,
        registry.keys().map(String::as_str).collect(),
        "a CRD of every group"
    );
    assert!(crds.iter().any(|c| c.old != c.hub), "some CRD has an older version");

    // Storage at the older version (a test-only copy of each CRD); objects written at every served version.
    let mut written: BTreeMap<(String, String, String), Value> = BTreeMap::new();
    for crd in &crds {
        server.insert(with_storage(&crd.manifest, &crd.old));
        for (i, namespace) in NAMESPACES.iter().enumerate() {
            for version in &crd.served {
                let name = format!("{version}-{i}");
                let o = object(crd, version, namespace, &name);
                server.insert(o.clone());
                assert_eq!(
                    encoded(&server, crd, namespace, &name).as_deref(),
                    Some(crd.old.as_str())
                );
                written.insert((crd.name.clone(), namespace.to_string(), name), o);
            }
        }
    }
    // The storage moves to the hub: storedVersions lists both.
    for crd in &crds {
        server.insert(crd.manifest.clone());
        let expected: Vec<&str> = if crd.old == crd.hub {
            vec![&crd.hub]
        } else {
            vec![&crd.old, &crd.hub]
        };
        assert_eq!(stored_versions(&server, crd), json!(expected), "{}", crd.name);
    }
    let still_old = |server: &FakeApiServer, namespace: Option<&str>| -> usize {
        written
            .keys()
            .filter(|(crd_name, ns, _)| namespace.is_none_or(|n| n == ns) && crds.iter().any(|c| c.name == *crd_name))
            .filter(|(crd_name, ns, name)| {
                let crd = crds.iter().find(|c| c.name == *crd_name).expect("crd");
                encoded(server, crd, ns, name).as_deref() != Some(crd.hub.as_str())
            })
            .count()
    };
    let at_old = still_old(&server, None);
    assert!(at_old > 0);

    // --dry-run: everything listed, nothing written.
    server.clear_requests();
    let dry = armctl_async(&kubeconfig, &["migrate-storage", "--dry-run"]).await;
    assert!(dry.status.success(), "{}", text(&dry));
    assert_eq!(server.count("PUT", "/"), 0, "no writes in a dry run");
    assert_eq!(server.count("PATCH", "/"), 0, "no writes in a dry run");
    assert_eq!(still_old(&server, None), at_old);
    assert!(stdout(&dry).contains(": would rewrite"), "{}", text(&dry));
    for crd in crds.iter().filter(|c| c.old != c.hub) {
        let patch = format!(
            "{}: would set status.storedVersions [{}, {}] → [{}]",
            crd.name, crd.old, crd.hub, crd.hub
        );
        assert!(stdout(&dry).contains(&patch), "{patch}: {}", text(&dry));
    }

    // --group: only that group's CRDs (by either name of the group).
    for group in registry.keys() {
        let short = aks_api::VERSIONS
            .iter()
            .find(|v| v.kube_group == group)
            .map(|v| v.group)
            .expect("the group's module name");
        for g in [group.as_str(), short] {
            let dry = armctl_async(&kubeconfig, &["migrate-storage", "--dry-run", "--group", g]).await;
            assert!(dry.status.success(), "{}", text(&dry));
            for crd in &crds {
                let prefix = format!("{}: ", crd.name);
                let named = stdout(&dry).lines().any(|l| l.starts_with(&prefix));
                assert_eq!(named, crd.group == *group, "--group {g}, {}: {}", crd.name, text(&dry));
            }
        }
    }
    assert_eq!(server.count("PUT", "/"), 0, "no writes in a dry run");
    assert_eq!(server.count("PATCH", "/"), 0, "no writes in a dry run");

    // --namespace: that namespace only, storedVersions kept.
    let one = armctl_async(&kubeconfig, &["migrate-storage", "--namespace", NAMESPACES[0]]).await;
    assert!(one.status.success(), "{}", text(&one));
    assert_eq!(still_old(&server, Some(NAMESPACES[0])), 0);
    assert!(still_old(&server, Some(NAMESPACES[1])) > 0);
    assert!(
        stdout(&one).contains("only a run over all namespaces reduces it"),
        "{}",
        text(&one)
    );
    for crd in crds.iter().filter(|c| c.old != c.hub) {
        assert_eq!(stored_versions(&server, crd), json!([crd.old, crd.hub]), "{}", crd.name);
    }

    // A failing write is named, and keeps its CRD's storedVersions; a conflict is retried.
    let migrated: Vec<&Crd> = crds.iter().filter(|c| c.old != c.hub).collect();
    let failing = migrated[0];
    let failing_object = format!("{}-1", failing.old);
    server.fail_next(
        "PUT",
        &format!("/namespaces/{}/{}/{failing_object}", NAMESPACES[1], failing.plural),
        500,
        1,
    );
    let conflicting = migrated[migrated.len() - 1];
    server.fail_next(
        "PUT",
        &format!(
            "/namespaces/{}/{}/{}-1",
            NAMESPACES[1], conflicting.plural, conflicting.hub
        ),
        409,
        1,
    );
    let broken = armctl_async(&kubeconfig, &["migrate-storage"]).await;
    assert_eq!(broken.status.code(), Some(2), "{}", text(&broken));
    let message = stderr(&broken);
    for needle in [
        &failing.kind,
        &format!("{}/{failing_object}", NAMESPACES[1]),
        &failing.name,
        &"rerun".to_string(),
    ] {
        assert!(
            message.contains(needle.as_str()),
            "the error does not name {needle}: {message}"
        );
    }
    assert_eq!(stored_versions(&server, failing), json!([failing.old, failing.hub]));
    if conflicting.name != failing.name {
        assert_eq!(
            stored_versions(&server, conflicting),
            json!([conflicting.hub]),
            "the conflict was retried"
        );
    }
    assert_eq!(
        encoded(&server, failing, NAMESPACES[1], &failing_object).as_deref(),
        Some(failing.old.as_str())
    );

    // Resumed: everything at the hub, storedVersions reduced, every object readable at every served version with
    // what was written.
    let resumed = armctl_async(&kubeconfig, &["migrate-storage"]).await;
    assert!(resumed.status.success(), "{}", text(&resumed));
    assert!(stdout(&resumed).contains("rewritten"), "{}", text(&resumed));
    assert_eq!(still_old(&server, None), 0);
    for crd in &crds {
        assert_eq!(stored_versions(&server, crd), json!([crd.hub]), "{}", crd.name);
    }
    let client = server.client();
    for ((crd_name, namespace, name), original) in &written {
        let crd = crds.iter().find(|c| c.name == *crd_name).expect("crd");
        for version in &crd.served {
            let resource = kube::api::ApiResource::from_gvk_with_plural(
                &kube::api::GroupVersionKind::gvk(&crd.group, version, &crd.kind),
                &crd.plural,
            );
            let api: kube::Api<kube::api::DynamicObject> =
                kube::Api::namespaced_with(client.clone(), namespace, &resource);
            let read = api
                .get(name)
                .await
                .unwrap_or_else(|e| panic!("{} {namespace}/{name} at {version}: {e}", crd.kind));
            let expected = aks_api::convert_custom_resource(original.clone(), &format!("{}/{version}", crd.group))
                .expect("the written object converts");
            assert_eq!(
                read.data["spec"], expected["spec"],
                "{} {namespace}/{name} at {version}",
                crd.kind
            );
        }
    }

    // Idempotent: nothing to do, nothing written.
    server.clear_requests();
    let again = armctl_async(&kubeconfig, &["migrate-storage"]).await;
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        stdout(&again).matches(": nothing to do").count(),
        crds.len(),
        "{}",
        text(&again)
    );
    assert_eq!(server.count("PUT", "/"), 0);
    assert_eq!(server.count("PATCH", "/"), 0);
    serving.abort();
}

#[test]
fn migrate_storage_names_unknown_kinds_and_an_unreachable_cluster() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kubeconfig = dir.path().join("kubeconfig");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    drop(listener);
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"http://127.0.0.1:{port}\"}}\n\
             contexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\nusers:\n- name: u\n  user: {{}}\n"
        ),
    )
    .expect("kubeconfig");
    let out = armctl(&kubeconfig, &["migrate-storage", "--kind", "VirtualMachine"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("unknown kind `VirtualMachine`"), "{}", text(&out));
    assert!(stderr(&out).contains("ManagedCluster"), "{}", text(&out));

    let out = armctl(&kubeconfig, &["migrate-storage", "--kind", "ManagedCluster"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let message = stderr(&out);
    assert!(message.contains("managedclusters."), "names the CRD: {message}");
    assert!(message.contains("cannot read the CRD"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
}
