//! Every resource type and API version of the registry, and every PUT example of the specs, through the simulator.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The spec root, resolved as the generator does. Tests that call this are marked
/// `#[cfg_attr(spec_root_missing, ignore = ...)]` (`simulator/build.rs` sets the `cfg` when the spec root is missing and `CI`
/// is not set), so a missing spec root here fails the test.
fn spec_root() -> PathBuf {
    armgen::resolve_spec_root(None, &workspace()).unwrap_or_else(|e| {
        panic!("{e} (CI is set, or the spec root was there when this test was built; see tests/README.md)")
    })
}

#[tokio::test]
async fn every_kind_and_api_version_with_a_minimal_body() {
    let env = Env::default().await;
    for k in aks_api::KINDS {
        let v = k.arm.api_version;
        let last = k.arm.path.rsplit('/').next().unwrap_or_default().to_string();
        // Extension resources (`/{scope}/providers/...`) go on the resource group; IDs have ARM's casing of
        // `resourceGroups` whatever the template writes.
        let id = fill(k.arm.path, |p| match p {
            "subscriptionId" => SUB.to_string(),
            "resourceGroupName" => "kinds".to_string(),
            "scope" => format!("subscriptions/{SUB}/resourceGroups/kinds"),
            p if format!("{{{p}}}") == last => format!("{}-{v}", k.kind.to_lowercase()),
            _ => format!("cluster-{v}"),
        })
        .replace("/resourcegroups/", "/resourceGroups/");
        if !k.arm.parents.is_empty() {
            let parent = id.rsplitn(3, '/').nth(2).expect("parent").to_string();
            if env.sim.resource(&parent).is_none() {
                env.sim
                    .seed(&parent, v, json!({"location": "westeurope"}))
                    .expect("seed the parent");
            }
        }
        let (body, r) = put_minimal(&env, &id, v).await;
        assert_eq!(r.status, 201, "{} {v}: {} with {body}", k.kind, r.body);
        assert_eq!(
            r.header("azure-asyncoperation").is_some(),
            k.arm.long_running,
            "{} {v}",
            k.kind
        );
        if let Some(url) = r.header("azure-asyncoperation") {
            assert_eq!(env.wait(&url).await["status"], "Succeeded");
        }
        for response in [r.body, env.get(&id, v).await.body] {
            assert_eq!(response["id"], id);
            assert_eq!(response["type"], k.arm.arm_type);
            // ARM's envelope is in every response, also of types whose PUT body lacks it (a role assignment's
            // `RoleAssignmentCreateParameters` has only `properties`).
            let mut unknown = deserializes(k.arm.arm_type, v, &response);
            unknown.retain(|u| !matches!(u.as_str(), "/id" | "/name" | "/type"));
            assert!(
                unknown.is_empty(),
                "{} {v}: the response has fields the type lacks: {unknown:?}",
                k.kind
            );
        }
        let list = env
            .get_url(&env.url(id.rsplit_once('/').expect("collection").0, v))
            .await;
        assert_eq!(list.status, 200, "{}", list.body);
        assert!(
            list.body["value"]
                .as_array()
                .is_some_and(|l| l.iter().any(|r| r["id"] == id))
        );
    }
}

#[tokio::test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
async fn every_put_example_of_the_specs_is_accepted() {
    let root = spec_root();
    let config = armgen::Config::load(&workspace().join("azure-arm.yaml")).expect("azure-arm.yaml");
    // The examples are unrelated documents of the schema that share resource names (`clustername1`), so each
    // PUT lands on the previous example's resource: as a history they would break the service's rules (a
    // changed dnsPrefix, pools added through the cluster), which tests/rules.rs covers. The schema is checked
    // here, with no rules.
    let env = Env::start(arm_simulator::SimulatorConfig {
        retry_after_secs: 0,
        rules: Some(armgen_runtime::rules::Rules::default()),
        ..Default::default()
    })
    .await;
    let mut accepted = 0;
    let mut absent = 0;
    let mut failures = Vec::new();
    for group in config.groups.values() {
        for version in group.versions.values() {
            let v = version.arm_api_version.as_str();
            for file in &version.spec_files {
                let spec_path = root.join(&group.spec_folder).join(file);
                let spec: Value = serde_json::from_str(&std::fs::read_to_string(&spec_path).expect("spec"))
                    .unwrap_or_else(|e| panic!("{}: {e}", spec_path.display()));
                let dir = spec_path.parent().expect("spec folder");
                for (path, ops) in spec["paths"].as_object().expect("paths") {
                    let Some(put) = ops.get("put") else { continue };
                    let Some(kind) = aks_api::KINDS
                        .iter()
                        .find(|k| k.arm.path == path && k.arm.api_version == v)
                    else {
                        continue;
                    };
                    let body_param = put["parameters"]
                        .as_array()
                        .expect("parameters")
                        .iter()
                        .map(
                            |p| match p["$ref"].as_str().and_then(|r| r.strip_prefix("#/parameters/")) {
                                Some(name) => &spec["parameters"][name],
                                None => p,
                            },
                        )
                        .find(|p| p["in"] == "body")
                        .and_then(|p| p["name"].as_str())
                        .expect("a body parameter");
                    let examples = put["x-ms-examples"].as_object().expect("x-ms-examples");
                    assert!(!examples.is_empty(), "{path} {v} has no PUT example");
                    for (title, reference) in examples {
                        let example_path = dir.join(reference["$ref"].as_str().expect("$ref"));
                        if !example_path.exists() {
                            // A referenced example the spec root lacks (listed in its README as absent).
                            absent += 1;
                            continue;
                        }
                        let example: Value =
                            serde_json::from_str(&std::fs::read_to_string(&example_path).expect("example"))
                                .expect("example JSON");
                        let params = &example["parameters"];
                        let id = fill(path, |p| params[p].as_str().unwrap_or_default().to_string());
                        if !kind.arm.parents.is_empty() {
                            let parent = id.rsplitn(3, '/').nth(2).expect("parent").to_string();
                            if env.sim.resource(&parent).is_none() {
                                env.sim
                                    .seed(&parent, v, json!({"location": "westeurope"}))
                                    .expect("seed the parent");
                            }
                        }
                        let r = env.put(&id, v, &params[body_param]).await;
                        if r.status != 200 && r.status != 201 {
                            failures.push(format!("{v} {title}: {} {}", r.status, r.body));
                            continue;
                        }
                        if let Some(url) = r.header("azure-asyncoperation") {
                            assert_eq!(env.wait(&url).await["status"], "Succeeded");
                        }
                        let got = env.get(&id, v).await;
                        deserializes(kind.arm.arm_type, v, &got.body);
                        accepted += 1;
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "rejected examples:\n{}", failures.join("\n"));
    assert!(accepted >= 20, "only {accepted} examples found");
    eprintln!("{accepted} PUT examples accepted ({absent} referenced examples absent from the spec root)");
}
