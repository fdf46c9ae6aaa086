//! ARM semantics over real HTTP: the create/poll/update/delete lifecycle, errors and their shapes.

mod common;

use common::*;
use serde_json::json;

fn cluster_body() -> serde_json::Value {
    json!({
        "location": "westeurope",
        "identity": {"type": "SystemAssigned"},
        "properties": {
            "dnsPrefix": "c1",
            "kubernetesVersion": "1.30",
            "oidcIssuerProfile": {"enabled": true},
            "servicePrincipalProfile": {"clientId": "msi", "secret": "hunter2"},
            "windowsProfile": {"adminUsername": "azureuser", "adminPassword": "P@ssw0rd1234!"},
            "agentPoolProfiles": [{"name": "system", "count": 1, "vmSize": "Standard_D2s_v5", "mode": "System"}]
        }
    })
}

#[tokio::test]
async fn long_running_create_poll_update_delete() {
    let env = Env::default().await;
    let id = cluster_id("rg1", "c1");

    let r = env.put(&id, V2, &cluster_body()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["properties"]["provisioningState"], "Creating");
    assert_eq!(r.body["id"], id);
    assert_eq!(r.body["name"], "c1");
    assert_eq!(r.body["type"], "Microsoft.ContainerService/managedClusters");
    assert_eq!(r.header("retry-after").as_deref(), Some("0"));
    let async_url = r.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    let prefix = format!(
        "{}/subscriptions/{SUB}/providers/Microsoft.ContainerService/locations/westeurope/operations/",
        env.running.base_url
    );
    assert!(
        async_url.starts_with(&prefix) && async_url.ends_with("?api-version=2025-10-01"),
        "{async_url}"
    );

    // operation_polls = 2: two polls answer InProgress, the third ends it.
    for _ in 0..2 {
        let p = env.get_url(&async_url).await;
        assert_eq!(p.status, 200);
        assert_eq!(p.body["status"], "InProgress");
        assert!(p.body["startTime"].is_string() && p.body.get("endTime").is_none());
        assert!(p.body["name"].as_str().is_some_and(|n| async_url.contains(n)));
    }
    let done = env.get_url(&async_url).await;
    assert_eq!(done.body["status"], "Succeeded");
    assert!(done.body["endTime"].is_string());
    assert_eq!(env.sim.count_polls(), 3);

    let g = env.get(&id, V2).await;
    assert_eq!(g.status, 200);
    let p = &g.body["properties"];
    assert_eq!(p["provisioningState"], "Succeeded");
    assert_eq!(p["currentKubernetesVersion"], "1.30.0");
    assert_eq!(p["nodeResourceGroup"], "MC_rg1_c1_westeurope");
    assert_eq!(p["powerState"]["code"], "Running");
    assert!(
        p["fqdn"]
            .as_str()
            .is_some_and(|f| f.ends_with(".hcp.westeurope.azmk8s.io"))
    );
    assert_eq!(p["agentPoolProfiles"][0]["provisioningState"], "Succeeded");
    assert!(p["agentPoolProfiles"][0]["nodeImageVersion"].is_string());
    assert!(p["oidcIssuerProfile"]["issuerURL"].is_string());
    assert!(g.body["identity"]["principalId"].is_string());
    assert!(p["servicePrincipalProfile"].get("secret").is_none(), "secret returned");
    assert!(p["windowsProfile"].get("adminPassword").is_none(), "password returned");
    assert_eq!(
        deserializes("Microsoft.ContainerService/managedClusters", V2, &g.body),
        Vec::<String>::new()
    );
    // Also readable with the other API version.
    assert_eq!(env.get(&id, V1).await.status, 200);

    // Update: 200, Updating, stable server-assigned values.
    let mut body = cluster_body();
    body["tags"] = json!({"env": "test"});
    let u = env.put(&id, V2, &body).await;
    assert_eq!(u.status, 200);
    assert_eq!(u.body["properties"]["provisioningState"], "Updating");
    assert_eq!(u.body["identity"]["principalId"], g.body["identity"]["principalId"]);
    let url = u.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    assert_eq!(env.wait(&url).await["status"], "Succeeded");
    assert_eq!(env.get(&id, V2).await.body["tags"]["env"], "test");

    // Delete: 202, Location answers 202 then 204, the resource is gone.
    let d = env.delete(&id, V2).await;
    assert_eq!(d.status, 202);
    assert_eq!(d.header("retry-after").as_deref(), Some("0"));
    assert!(d.header("azure-asyncoperation").is_some());
    let location = d.header("location").expect("Location");
    assert!(location.contains("/operationresults/"), "{location}");
    assert_eq!(
        env.sim.resource(&id).expect("stored")["properties"]["provisioningState"],
        "Deleting"
    );
    assert_eq!(env.get_url(&location).await.status, 202);
    assert_eq!(env.get_url(&location).await.status, 202);
    assert_eq!(env.get_url(&location).await.status, 204);
    let gone = env.get(&id, V2).await;
    assert_eq!(gone.status, 404);
    assert_eq!(env.delete(&id, V2).await.status, 204);

    assert_eq!(env.sim.count("PUT"), 2);
    assert_eq!(env.sim.count("DELETE"), 2);
    assert_eq!(env.sim.count("GET"), 4);
}

#[tokio::test]
async fn resource_get_also_advances_the_operation() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    assert_eq!(env.put(&id, V1, &json!({"location": "westeurope"})).await.status, 201);
    assert_eq!(
        env.get(&id, V1).await.body["properties"]["provisioningState"],
        "Creating"
    );
    assert_eq!(
        env.get(&id, V1).await.body["properties"]["provisioningState"],
        "Creating"
    );
    assert_eq!(
        env.get(&id, V1).await.body["properties"]["provisioningState"],
        "Succeeded"
    );
}

#[tokio::test]
async fn conflict_while_in_progress() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    let r = env.put(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!(r.status, 201);
    let again = env.put(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!(again.status, 409);
    assert_eq!(again.code(), "OperationNotAllowed");
    let del = env.delete(&id, V2).await;
    assert_eq!(del.status, 409);
    let url = r.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    env.wait(&url).await;
    assert_eq!(env.put(&id, V2, &json!({"location": "westeurope"})).await.status, 200);
}

#[tokio::test]
async fn not_found_shapes() {
    let env = Env::default().await;
    let id = cluster_id("rg9", "nope");
    let r = env.get(&id, V2).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.code(), "ResourceNotFound");
    assert_eq!(
        r.body["error"]["message"],
        "The Resource 'Microsoft.ContainerService/managedClusters/nope' under resource group 'rg9' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"
    );

    let unknown = format!("/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/fleets/f1");
    let r = env.get(&unknown, V2).await;
    assert_eq!((r.status, r.code()), (404, "InvalidResourceType"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Microsoft.ContainerService/fleets"))
    );

    let r = env.get_url(&format!("{}{id}", env.running.base_url)).await;
    assert_eq!((r.status, r.code()), (400, "MissingApiVersionParameter"));

    let r = env.get(&id, "2019-01-01").await;
    assert_eq!((r.status, r.code()), (400, "InvalidApiVersionParameter"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&managed_cluster_api_versions())),
        "{}",
        r.body
    );

    // ManagedNamespace exists only in 2025-10-01.
    let ns = format!("{}/managedNamespaces/ns1", cluster_id("rg", "c"));
    let r = env.get(&ns, V1).await;
    assert_eq!((r.status, r.code()), (400, "InvalidApiVersionParameter"));
}

#[tokio::test]
async fn child_requires_parent_and_is_deleted_with_it() {
    let env = Env::default().await;
    let pool = pool_id("rg", "c", "np1");
    let r = env.put(&pool, V2, &json!({"properties": {"count": 1}})).await;
    assert_eq!((r.status, r.code()), (404, "ParentResourceNotFound"));
    assert!(r.body["error"]["message"].as_str().is_some_and(|m| m.contains("'c'")));
    let r = env
        .get_url(&env.url(&format!("{}/agentPools", cluster_id("rg", "c")), V2))
        .await;
    assert_eq!(r.status, 404);

    env.create(
        &cluster_id("rg", "c"),
        V2,
        &json!({"location": "westeurope", "properties": {"kubernetesVersion": "1.31"}}),
    )
    .await;
    let created = env
        .create(
            &pool,
            V2,
            &json!({"properties": {"count": 1, "vmSize": "Standard_D2s_v5"}}),
        )
        .await;
    assert_eq!(created["properties"]["currentOrchestratorVersion"], "1.31.0");
    assert_eq!(created["properties"]["provisioningState"], "Succeeded");
    env.create(&pool_id("rg", "c", "np2"), V2, &json!({"properties": {"count": 2}}))
        .await;

    // Case-insensitive literal segments; ID keeps the canonical casing.
    let lower = pool
        .replace("resourceGroups", "RESOURCEGROUPS")
        .replace("agentPools", "agentpools");
    let g = env.get(&lower, V2).await;
    assert_eq!(g.status, 200);
    assert_eq!(g.body["id"], pool);

    let list = env
        .get_url(&env.url(&format!("{}/agentPools", cluster_id("rg", "c")), V2))
        .await;
    assert_eq!(list.status, 200);
    let names: Vec<&str> = list.body["value"]
        .as_array()
        .expect("value")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(names, ["np1", "np2"]);
    let clusters = env
        .get_url(&env.url(
            &format!("/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters"),
            V2,
        ))
        .await;
    assert_eq!(clusters.body["value"].as_array().map(Vec::len), Some(1));

    let d = env.delete(&cluster_id("rg", "c"), V2).await;
    let url = d.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    assert_eq!(env.wait(&url).await["status"], "Succeeded");
    assert!(env.sim.resource(&pool).is_none());
    assert_eq!(env.sim.resource_count(), 0);
}

#[tokio::test]
async fn non_long_running_kinds_succeed_at_once() {
    let env = Env::default().await;
    env.create(&cluster_id("rg", "c"), V1, &json!({"location": "westeurope"}))
        .await;
    let id = format!("{}/maintenanceConfigurations/default", cluster_id("rg", "c"));
    let body = json!({"properties": {"timeInWeek": [{"day": "Monday", "hourSlots": [1, 2]}]}});
    let r = env.put(&id, V1, &body).await;
    assert_eq!(r.status, 201);
    assert!(r.header("azure-asyncoperation").is_none());
    // MaintenanceConfiguration has no provisioningState: none is invented.
    assert!(r.body["properties"].get("provisioningState").is_none(), "{}", r.body);
    assert_eq!(env.put(&id, V1, &body).await.status, 200);
    assert_eq!(env.delete(&id, V1).await.status, 200);
    assert_eq!(env.delete(&id, V1).await.status, 204);
}

#[tokio::test]
async fn validation_names_the_field() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    let body =
        json!({"location": "westeurope", "properties": {"agentPoolProfiles": [{"name": "a", "count": "three"}]}});
    let r = env.put(&id, V2, &body).await;
    assert_eq!((r.status, r.code()), (400, "InvalidRequestContent"));
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Path 'properties.agentPoolProfiles[0].count'"),
        "{message}"
    );

    let r = env.put(&id, V2, &json!({"properties": {}})).await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("location")),
        "{}",
        r.body
    );

    let raw = env
        .client
        .put(env.url(&id, V2))
        .body("{not json")
        .send()
        .await
        .expect("PUT");
    let r = Reply::of(raw).await;
    assert_eq!((r.status, r.code()), (400, "InvalidRequestContent"));
    assert!(env.sim.resource(&id).is_none());
}

#[tokio::test]
async fn credentials() {
    use base64::Engine as _;
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    let action = |a: &str| env.url(&format!("{id}/{a}"), V2);
    let r = Reply::of(
        env.client
            .post(action("listClusterUserCredential"))
            .send()
            .await
            .expect("POST"),
    )
    .await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"));

    let cluster = env
        .create(
            &id,
            V2,
            &json!({"location": "westeurope", "properties": {"dnsPrefix": "c"}}),
        )
        .await;
    let fqdn = cluster["properties"]["fqdn"].as_str().expect("fqdn").to_string();
    for (a, name) in [
        ("listClusterAdminCredential", "clusterAdmin"),
        ("listClusterUserCredential", "clusterUser"),
    ] {
        let r = Reply::of(env.client.post(action(a)).send().await.expect("POST")).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body["kubeconfigs"][0]["name"], name);
        let value = r.body["kubeconfigs"][0]["value"].as_str().expect("value");
        let config = base64::engine::general_purpose::STANDARD.decode(value).expect("base64");
        let config = String::from_utf8(config).expect("UTF-8");
        assert!(config.contains(&format!("server: https://{fqdn}:443")), "{config}");
    }
}

#[tokio::test]
async fn seed_and_normalizer() {
    let env = Env::default().await;
    env.sim.set_normalizer(
        "Microsoft.ContainerService/managedClusters",
        std::sync::Arc::new(|body: &mut serde_json::Value| {
            if let Some(v) = body.pointer_mut("/properties/kubernetesVersion")
                && v == "1.30"
            {
                *v = json!("1.30.7");
            }
        }),
    );
    let id = cluster_id("rg", "adopted");
    let seeded = env.sim.seed(
        &id,
        V2,
        json!({"location": "westeurope", "properties": {"kubernetesVersion": "1.30"}}),
    );
    let seeded = seeded.expect("seed");
    assert_eq!(seeded["properties"]["provisioningState"], "Succeeded");
    assert_eq!(seeded["properties"]["kubernetesVersion"], "1.30.7");
    let g = env.get(&id, V2).await;
    assert_eq!(g.body, seeded);
    assert_eq!(env.sim.count("PUT"), 0);

    let bad = env
        .sim
        .seed(&id, V2, json!({"properties": {}}))
        .expect_err("no location");
    assert_eq!(bad.status, 400);
    assert!(
        env.sim
            .seed("/subscriptions/s/resourceGroups/r", V2, json!({}))
            .is_err()
    );

    let r = env
        .put(
            &cluster_id("rg", "new"),
            V2,
            &json!({"location": "westeurope", "properties": {"kubernetesVersion": "1.30"}}),
        )
        .await;
    assert_eq!(r.body["properties"]["kubernetesVersion"], "1.30.7");
}

/// 4,000 resources: each list returns exactly its parent's children. (How fast is a benchmark's business, not a
/// test's: `bench/scale.sh` runs the reconciler against the simulator with 1,000 clusters and 3,000 pools.)
#[tokio::test]
async fn many_resources_list_by_their_parent() {
    let env = Env::default().await;
    for c in 0..1000 {
        let id = cluster_id("scale", &format!("c{c}"));
        env.sim
            .seed(&id, V2, json!({"location": "westeurope"}))
            .expect("seed cluster");
        for p in 0..3 {
            env.sim
                .seed(
                    &format!("{id}/agentPools/p{p}"),
                    V2,
                    json!({"properties": {"count": 1}}),
                )
                .expect("seed pool");
        }
    }
    assert_eq!(env.sim.resource_count(), 4000);
    for c in (0..1000).step_by(50) {
        let parent = cluster_id("scale", &format!("c{c}"));
        let list = env.get_url(&env.url(&format!("{parent}/agentPools"), V2)).await;
        let ids: Vec<&str> = list.body["value"]
            .as_array()
            .map(|v| v.iter().filter_map(|p| p["id"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(ids.len(), 3, "{parent}: {}", list.body);
        assert!(
            ids.iter().all(|id| id.starts_with(&format!("{parent}/agentPools/"))),
            "{ids:?}"
        );
    }
}

/// The ARM API versions of ManagedCluster in the generated registry, as the error lists them (`a, b`).
fn managed_cluster_api_versions() -> String {
    let mut versions: Vec<&str> = aks_api::KINDS
        .iter()
        .filter(|k| k.kind == "ManagedCluster")
        .map(|k| k.arm.api_version)
        .collect();
    versions.sort_unstable();
    versions.dedup();
    versions.join(", ")
}
