//! The views of the registry (`aks_api::VIEWS`: read-only `GET <resource ID>/<path>`) through the simulator: every
//! one on a target created over HTTP, read back through the generated types of its version, and the behaviours of
//! `arm_simulator`'s view table (paging, effects of the target's changes, refusals, counts).

mod common;

use armgen_runtime::{KindInfo, ViewInfo};
use common::*;
use serde_json::{Value, json};

const CLUSTERS: &str = "Microsoft.ContainerService/managedClusters";
const POOLS: &str = "Microsoft.ContainerService/managedClusters/agentPools";

/// The resource kind a view is read from.
fn kind_of(v: &ViewInfo) -> &'static KindInfo {
    aks_api::KINDS
        .iter()
        .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind)
        .unwrap_or_else(|| panic!("{} {} {} in aks_api::KINDS", v.group, v.version, v.kind))
}

/// The view of the registry on `arm_type` with `path` at `api_version`.
fn view(arm_type: &str, path: &str, api_version: &str) -> &'static ViewInfo {
    aks_api::VIEWS
        .iter()
        .find(|v| {
            let k = kind_of(v);
            k.arm.arm_type == arm_type && v.path == path && k.arm.api_version == api_version
        })
        .unwrap_or_else(|| panic!("{arm_type} {path} {api_version} in aks_api::VIEWS"))
}

/// The ID of a resource of `kind` named after `tag`, its parents seeded.
fn target_id(env: &Env, kind: &KindInfo, tag: &str) -> String {
    let arm = &kind.arm;
    let last = arm.path.rsplit('/').next().unwrap_or_default().to_string();
    let id = fill(arm.path, |p| match p {
        "subscriptionId" => SUB.to_string(),
        "resourceGroupName" => "views".to_string(),
        p if format!("{{{p}}}") == last => format!("t{tag}"),
        _ => format!("parent{tag}"),
    })
    .replace("/resourcegroups/", "/resourceGroups/");
    if !arm.parents.is_empty() {
        let parent = id.rsplitn(3, '/').nth(2).expect("parent").to_string();
        if env.sim.resource(&parent).is_none() {
            env.sim
                .seed(&parent, arm.api_version, json!({"location": "westeurope"}))
                .expect("seed the parent");
        }
    }
    id
}

/// Creates a resource of `kind` over HTTP (a minimal body, its operation polled to the end); returns its ID.
async fn create_target(env: &Env, kind: &KindInfo, tag: &str) -> String {
    let id = target_id(env, kind, tag);
    let v = kind.arm.api_version;
    let (body, r) = put_minimal(env, &id, v).await;
    assert!(r.status == 200 || r.status == 201, "{id}: {} with {body}", r.body);
    if let Some(url) = r.header("azure-asyncoperation") {
        assert_eq!(env.wait(&url).await["status"], "Succeeded");
    }
    id
}

/// GETs the view `path` of `id`; for a pageable view follows every `nextLink` (each on the simulator's host) and
/// returns the items of every page as one array, and the number of pages.
async fn read_view(env: &Env, id: &str, path: &str, api_version: &str, pageable: bool) -> (Value, usize) {
    let r = env.get(&format!("{id}/{path}"), api_version).await;
    assert_eq!(r.status, 200, "GET {id}/{path}: {}", r.body);
    if !pageable {
        return (r.body, 1);
    }
    let mut items: Vec<Value> = Vec::new();
    let mut page = r.body;
    let mut pages = 1;
    loop {
        items.extend(page["value"].as_array().expect("a page's value").iter().cloned());
        let Some(next) = page.get("nextLink").and_then(Value::as_str).map(str::to_string) else {
            break;
        };
        assert!(
            next.starts_with(&format!("{}/", env.running.base_url)),
            "{next}: not on the simulator"
        );
        assert!(next.contains("$skipToken="), "{next}");
        let r = env.get_url(&next).await;
        assert_eq!(r.status, 200, "GET {next}: {}", r.body);
        page = r.body;
        pages += 1;
        assert!(pages < 1000, "endless paging");
    }
    (Value::Array(items), pages)
}

/// Writes the simulator's traffic under `ARMGEN_TRAFFIC_DIR/<name>` when it is set (as `.ci/oav.sh` records the
/// tests' traffic for Azure's validator), without the 400s of the minimal-body derivation (invalid on purpose).
fn write_traffic(env: &Env, name: &str) {
    let Some(dir) = std::env::var_os("ARMGEN_TRAFFIC_DIR") else {
        return;
    };
    let dir = std::path::Path::new(&dir).join(name);
    std::fs::create_dir_all(&dir).expect("traffic folder");
    let traffic = env.sim.traffic();
    for (i, e) in traffic.iter().filter(|e| e.response.status_code != 400).enumerate() {
        let file = dir.join(format!(
            "{:05}-{}-{}.json",
            i + 1,
            e.request.method,
            e.response.status_code
        ));
        std::fs::write(file, e.to_live_traffic().to_string()).expect("write an exchange");
    }
}

#[tokio::test]
async fn every_view_of_the_registry_reads_as_its_generated_type() {
    let env = Env::start(arm_simulator::SimulatorConfig {
        retry_after_secs: 0,
        // Small pages, so that every pageable view is paged.
        page_size: 1,
        ..Default::default()
    })
    .await;
    assert!(!aks_api::VIEWS.is_empty());
    for (i, v) in aks_api::VIEWS.iter().enumerate() {
        let kind = kind_of(v);
        let api_version = kind.arm.api_version;
        let what = format!("{} {} {api_version}", kind.arm.arm_type, v.path);
        let id = create_target(&env, kind, &i.to_string()).await;
        // Two nodes for a pool, so that its machines take two pages (only writable properties sent, as a client
        // sends them: the traffic goes to oav).
        if v.pageable {
            env.create(&id, api_version, &json!({"properties": {"count": 2}})).await;
        }
        let gets = env.sim.count("GET");
        let (view, pages) = read_view(&env, &id, v.path, api_version, v.pageable).await;
        // View GETs are counted apart from the resource's own GETs.
        assert_eq!(env.sim.count("GET"), gets, "{what}");
        assert_eq!(env.sim.views_read_on(&id, v.path), pages, "{what}");
        if v.pageable {
            let items = view.as_array().expect("items");
            assert_eq!((items.len(), pages), (2, 2), "{what}: {view:#}");
            for m in items {
                let machine_id = m["id"].as_str().expect("id");
                assert!(
                    machine_id.starts_with(&format!("{id}/{}/", v.path)),
                    "{what}: {machine_id}"
                );
                assert!(m["properties"]["resourceId"].is_string(), "{what}: {m}");
            }
        } else {
            let view_id = view["id"].as_str().expect("id");
            assert!(
                view_id.to_lowercase() == format!("{id}/{}", v.path).to_lowercase(),
                "{what}: {view_id}"
            );
            assert!(view["properties"].is_object(), "{what}: {view:#}");
        }
        // The resource's GET body with the view at its field reads as the generated ARM type of the version, with
        // nothing the type does not declare.
        let mut arm = env.get(&id, api_version).await.body;
        arm[v.field] = view.clone();
        let text = arm.to_string();
        match aks_api::arm_round_trip(kind.group, kind.version, kind.kind, &text) {
            Some(Ok(rt)) => assert!(rt.unknown.is_empty(), "{what}: not modelled {:?}\n{view:#}", rt.unknown),
            other => panic!("{what}: {other:?}\n{view:#}"),
        }
        // And imports as the custom resource, the view in `status.<field>`.
        let cr = match aks_api::import_custom_resource(kind.group, kind.version, kind.kind, &text, "v", Some("ns")) {
            Some(Ok(cr)) => cr,
            other => panic!("{what}: {other:?}"),
        };
        let status = &cr["status"][v.field];
        let filled = match status {
            Value::Array(items) => !items.is_empty(),
            Value::Object(fields) => !fields.is_empty(),
            _ => false,
        };
        assert!(filled, "{what}: status.{} is {status}", v.field);
    }
    assert_eq!(
        env.sim.count_views(),
        aks_api::VIEWS
            .iter()
            .map(|v| if v.pageable { 2 } else { 1 })
            .sum::<usize>()
    );
    write_traffic(&env, "views");
}

#[tokio::test]
async fn views_follow_the_cluster_and_its_pools() {
    let env = Env::default().await;
    let id = cluster_id("rg", "upgrades");
    env.create(
        &id,
        V2,
        &json!({"location": "westeurope", "properties": {"kubernetesVersion": "1.32.7", "dnsPrefix": "up"}}),
    )
    .await;
    let pool = pool_id("rg", "upgrades", "np1");
    env.create(
        &pool,
        V2,
        &json!({"properties": {"count": 3, "orchestratorVersion": "1.31.5"}}),
    )
    .await;
    let path = view(CLUSTERS, "upgradeProfiles/default", V2).path;
    let profile = env.get(&format!("{id}/{path}"), V2).await.body;
    assert_eq!(profile["name"], "default");
    assert_eq!(
        profile["type"],
        "Microsoft.ContainerService/managedClusters/upgradeprofiles"
    );
    let cp = &profile["properties"]["controlPlaneProfile"];
    assert_eq!(
        (cp["kubernetesVersion"].as_str(), cp["osType"].as_str()),
        (Some("1.32.7"), Some("Linux"))
    );
    let upgrades: Vec<&str> = cp["upgrades"]
        .as_array()
        .expect("upgrades")
        .iter()
        .filter_map(|u| u["kubernetesVersion"].as_str())
        .collect();
    assert_eq!(upgrades, ["1.32.8", "1.33.0"]);
    assert_eq!(
        profile["properties"]["agentPoolProfiles"],
        json!([{"name": "np1", "kubernetesVersion": "1.31.5", "osType": "Linux",
            "upgrades": [{"kubernetesVersion": "1.32.7"}]}])
    );
    // The pools may run the cluster's version and the two minor versions below.
    let available = env.get(&format!("{id}/availableAgentPoolVersions"), V2).await.body;
    let versions = available["properties"]["agentPoolVersions"]
        .as_array()
        .expect("versions");
    assert!(
        versions.contains(&json!({"kubernetesVersion": "1.32.7", "default": true})),
        "{available:#}"
    );
    assert!(
        versions
            .iter()
            .all(|v| v["kubernetesVersion"].as_str() <= Some("1.32.7"))
    );

    // The pool's profile follows its version once the upgrade succeeded, not while it runs.
    let pool_profile = format!("{pool}/upgradeProfiles/default");
    let before = env.get(&pool_profile, V2).await.body;
    assert_eq!(before["properties"]["kubernetesVersion"], "1.31.5");
    assert_eq!(
        before["properties"]["upgrades"],
        json!([{"kubernetesVersion": "1.32.7"}])
    );
    let mut body = env.get(&pool, V2).await.body;
    body["properties"]["orchestratorVersion"] = json!("1.32.7");
    let r = env.put(&pool, V2, &body).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let during = env.get(&pool_profile, V2).await.body;
    assert_eq!(during["properties"]["kubernetesVersion"], "1.31.5");
    env.wait(&r.header("azure-asyncoperation").expect("an upgrade in flight"))
        .await;
    let after = env.get(&pool_profile, V2).await.body;
    assert_eq!(after["properties"]["kubernetesVersion"], "1.32.7");
    assert_eq!(after["properties"]["upgrades"], json!([]));
    let profile = env.get(&format!("{id}/{path}"), V2).await.body;
    assert_eq!(
        profile["properties"]["agentPoolProfiles"][0]["kubernetesVersion"],
        "1.32.7"
    );

    // The control plane upgrades to what its profile offered.
    let mut cluster = env.get(&id, V2).await.body;
    cluster["properties"]["kubernetesVersion"] = json!("1.32.8");
    env.create(&id, V2, &cluster).await;
    let profile = env.get(&format!("{id}/{path}"), V2).await.body;
    assert_eq!(
        profile["properties"]["controlPlaneProfile"]["kubernetesVersion"],
        "1.32.8"
    );
    let available = env.get(&format!("{id}/availableAgentPoolVersions"), V2).await.body;
    assert!(
        available["properties"]["agentPoolVersions"]
            .as_array()
            .expect("versions")
            .contains(&json!({"kubernetesVersion": "1.32.8", "default": true}))
    );
    assert_eq!(
        env.get(&pool_profile, V2).await.body["properties"]["upgrades"],
        json!([{"kubernetesVersion": "1.32.8"}])
    );
}

#[tokio::test]
async fn the_latest_node_image_is_what_an_upgrade_installs() {
    let env = Env::default().await;
    env.create(&cluster_id("rg", "img"), V2, &json!({"location": "westeurope"}))
        .await;
    let pool = pool_id("rg", "img", "np1");
    let created = env.create(&pool, V2, &json!({"properties": {"count": 1}})).await;
    let profile = format!("{pool}/upgradeProfiles/default");
    let latest = env.get(&profile, V2).await.body["properties"]["latestNodeImageVersion"]
        .as_str()
        .expect("latestNodeImageVersion")
        .to_string();
    assert_ne!(created["properties"]["nodeImageVersion"], json!(latest));
    let r = env.post(&pool, "upgradeNodeImageVersion", V2, None).await;
    assert_eq!(r.status, 202, "{}", r.body);
    env.wait(&r.header("azure-asyncoperation").expect("Azure-AsyncOperation"))
        .await;
    let upgraded = env.get(&pool, V2).await.body;
    assert_eq!(upgraded["properties"]["nodeImageVersion"], json!(latest));
    assert_eq!(
        env.get(&profile, V2).await.body["properties"]["latestNodeImageVersion"],
        json!(latest)
    );
}

#[tokio::test]
async fn machines_are_paged_and_follow_the_node_count() {
    let env = Env::start(arm_simulator::SimulatorConfig {
        retry_after_secs: 0,
        page_size: 2,
        ..Default::default()
    })
    .await;
    let v = view(POOLS, "machines", V2);
    assert!(v.pageable);
    let cluster = cluster_id("rg", "paged");
    env.create(&cluster, V2, &json!({"location": "westeurope"})).await;
    let node_rg = env.get(&cluster, V2).await.body["properties"]["nodeResourceGroup"]
        .as_str()
        .expect("nodeResourceGroup")
        .to_string();
    let pool = pool_id("rg", "paged", "np1");
    env.create(&pool, V2, &json!({"properties": {"count": 3}})).await;
    let url = format!("{pool}/machines");
    let first = env.get(&url, V2).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["value"].as_array().map(Vec::len), Some(2));
    let next = first.body["nextLink"].as_str().expect("nextLink").to_string();
    assert!(
        next.starts_with(&format!("{}{pool}/machines?", env.running.base_url)),
        "{next}"
    );
    let second = env.get_url(&next).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.body["value"].as_array().map(Vec::len), Some(1));
    assert!(second.body.get("nextLink").is_none(), "{}", second.body);
    let (machines, pages) = read_view(&env, &pool, "machines", V2, true).await;
    assert_eq!(pages, 2);
    let machines = machines.as_array().expect("machines").clone();
    let names: Vec<&str> = machines.iter().filter_map(|m| m["name"].as_str()).collect();
    assert_eq!(names.len(), 3);
    // Stable across GETs, named as AKS names scale set instances, in the cluster's node resource group.
    let mut all: Vec<Value> = first.body["value"].as_array().expect("value").clone();
    all.extend(second.body["value"].as_array().expect("value").iter().cloned());
    assert_eq!(all, machines);
    for (i, m) in machines.iter().enumerate() {
        let name = m["name"].as_str().expect("name");
        assert!(
            name.starts_with("aks-np1-") && name.ends_with(&format!("-vmss00000{i}")),
            "{name}"
        );
        assert_eq!(m["id"], json!(format!("{pool}/machines/{name}")));
        assert_eq!(
            m["type"],
            "Microsoft.ContainerService/managedClusters/agentPools/machines"
        );
        let vm = m["properties"]["resourceId"].as_str().expect("resourceId");
        assert!(
            vm.starts_with(&format!("/subscriptions/{SUB}/resourceGroups/{node_rg}/providers/Microsoft.Compute/virtualMachineScaleSets/aks-np1-")),
            "{vm}"
        );
        assert!(vm.ends_with(&format!("-vmss/virtualMachines/{i}")), "{vm}");
        assert_eq!(m["properties"]["network"]["ipAddresses"][0]["family"], "IPv4");
    }
    assert_eq!(env.sim.views_read_on(&pool, "machines"), 4);
    assert_eq!(env.sim.views_read(POOLS, "MACHINES"), 4);
    assert_eq!(env.sim.views_read(CLUSTERS, "machines"), 0);

    // Scaled through a PUT: the machines follow the count.
    let mut body = env.get(&pool, V2).await.body;
    body["properties"]["count"] = json!(5);
    env.create(&pool, V2, &body).await;
    let (machines, pages) = read_view(&env, &pool, "machines", V2, true).await;
    assert_eq!((machines.as_array().map(Vec::len), pages), (Some(5), 3));
    let scaled: Vec<&str> = machines
        .as_array()
        .expect("machines")
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert_eq!(&scaled[..3], &names[..], "the first machines keep their names");
    // A page exactly full has no nextLink; an empty pool lists none.
    body["properties"]["count"] = json!(2);
    env.create(&pool, V2, &body).await;
    let r = env.get(&url, V2).await;
    assert_eq!(r.body["value"].as_array().map(Vec::len), Some(2));
    assert!(r.body.get("nextLink").is_none(), "{}", r.body);
    body["properties"]["count"] = json!(0);
    env.create(&pool, V2, &body).await;
    let r = env.get(&url, V2).await;
    assert_eq!(r.body, json!({"value": []}));
    // The skip token read as ARM reads OData parameters: any case, `$` percent-encoded or not.
    body["properties"]["count"] = json!(3);
    env.create(&pool, V2, &body).await;
    let r = env
        .get_url(&format!(
            "{}{url}?api-version={V2}&%24SKIPTOKEN=2",
            env.running.base_url
        ))
        .await;
    assert_eq!(r.body["value"].as_array().map(Vec::len), Some(1), "{}", r.body);
    assert_eq!(r.body["value"][0], machines[2]);
    // A skip token the simulator did not write.
    let r = env
        .get_url(&format!(
            "{}{url}?api-version={V2}&$skipToken=abc",
            env.running.base_url
        ))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn refusals_are_worded_as_arm_words_them() {
    let env = Env::default().await;
    // A target the simulator does not hold: 404 naming it, as for an action; counted as a view GET.
    let missing = cluster_id("rg", "missing");
    let r = env.get(&format!("{missing}/upgradeProfiles/default"), V2).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"), "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("managedClusters/missing"),
        "{}",
        r.body
    );
    assert_eq!(env.sim.views_read_on(&missing, "upgradeProfiles/default"), 1);
    let id = cluster_id("rg", "words");
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    let pool = pool_id("rg", "words", "gone");
    let r = env.get(&format!("{pool}/machines"), V2).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"), "{}", r.body);
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("agentPools/gone"),
        "{}",
        r.body
    );
    // Case-insensitive paths, as ARM's.
    let r = env
        .get(&format!("{}/UPGRADEPROFILES/Default", id.to_uppercase()), V2)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    // An API version the view lacks; a method other than GET.
    let r = env.get(&format!("{id}/upgradeProfiles/default"), "2019-01-01").await;
    assert_eq!((r.status, r.code()), (400, "InvalidApiVersionParameter"), "{}", r.body);
    let r = env.post(&id, "upgradeProfiles/default", V2, None).await;
    assert_eq!(r.status, 405, "{}", r.body);
    assert_eq!(env.sim.views_read(CLUSTERS, "upgradeProfiles/default"), 3);
    assert_eq!(env.sim.count_views(), 4);
}

#[tokio::test]
async fn a_view_without_a_row_is_not_implemented() {
    // A type the simulator's view table does not know (another ARM type, the same generated kind): the registry's
    // views of that kind route to it, and the simulator answers 501 naming the view.
    let cluster = aks_api::KINDS
        .iter()
        .find(|k| k.arm.arm_type == CLUSTERS && k.arm.api_version == V2)
        .expect("ManagedCluster");
    let kinds: &'static [KindInfo] = Box::leak(Box::new([KindInfo {
        arm: armgen_runtime::ResourceInfo {
            arm_type: "Microsoft.Simulated/things",
            path: "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Simulated/things/{name}",
            ..cluster.arm
        },
        ..*cluster
    }]));
    let sim = arm_simulator::Simulator::with_kinds(
        arm_simulator::SimulatorConfig {
            retry_after_secs: 0,
            ..Default::default()
        },
        kinds,
        aks_api::arm_round_trip,
    );
    let env = Env::serve(sim).await;
    let id = format!("/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Simulated/things/t1");
    env.sim.seed(&id, V2, json!({"location": "westeurope"})).expect("seed");
    for v in aks_api::VIEWS
        .iter()
        .filter(|v| kind_of(v).arm.arm_type == CLUSTERS && kind_of(v).arm.api_version == V2)
    {
        let r = env.get(&format!("{id}/{}", v.path), V2).await;
        assert_eq!((r.status, r.code()), (501, "NotImplemented"), "{}", r.body);
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(v.path) && message.contains("Microsoft.Simulated/things") && message.contains(v.field),
            "{message}"
        );
    }
}
