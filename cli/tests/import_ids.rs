//! `armctl import ARM_ID... --children` against the ARM simulator: existing resources become custom resources
//! (YAML documents), parents first; errors name the ID.

mod common;

use arm_simulator::{Simulator, SimulatorConfig};
use common::{armctl, stderr, stdout};
use serde_json::{Value, json};

const CLUSTER: &str = "/subscriptions/s1/resourceGroups/rg1/providers/Microsoft.ContainerService/managedClusters/Prod";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_are_read_with_their_children_and_printed_as_custom_resources() {
    let sim = Simulator::new(SimulatorConfig {
        retry_after_secs: 0,
        ..SimulatorConfig::default()
    });
    let running = sim
        .serve("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("simulator");
    let cluster = json!({"location": "westeurope", "properties": {"dnsPrefix": "prod", "kubernetesVersion": "1.31",
        "agentPoolProfiles": [{"name": "system", "count": 1, "vmSize": "Standard_D2s_v5", "mode": "System"}]}});
    sim.seed(CLUSTER, "2025-10-01", cluster).expect("seed");
    sim.seed(
        &format!("{CLUSTER}/agentPools/gpu"),
        "2025-10-01",
        json!({"properties": {"count": 2, "vmSize": "Standard_NC6s_v3"}}),
    )
    .expect("seed pool");

    let url = running.base_url.clone();
    let o = tokio::task::spawn_blocking(move || {
        armctl(
            &[
                "import",
                "--anonymous",
                "--arm-endpoint",
                &url,
                "--children",
                "--namespace",
                "fleet",
                CLUSTER,
            ],
            None,
        )
    })
    .await
    .expect("armctl");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&stdout(&o))
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
        .collect();
    let names: Vec<(&str, &str)> = docs
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap_or_default(),
                d["metadata"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    // The cluster's inline pool is an AgentPool resource too (the simulator's childOwned rule, as in AKS, whose
    // agentPools list has every pool of the cluster).
    assert_eq!(
        names,
        [
            ("ManagedCluster", "prod"),
            ("AgentPool", "gpu"),
            ("AgentPool", "system")
        ]
    );
    assert_eq!(docs[2]["spec"]["mode"], json!("System"));
    assert_eq!(docs[0]["spec"]["azureName"], json!("Prod"));
    assert_eq!(
        docs[0]["spec"]["owner"],
        json!({"armId": "/subscriptions/s1/resourceGroups/rg1"})
    );
    assert_eq!(docs[0]["metadata"]["namespace"], json!("fleet"));
    assert_eq!(docs[1]["spec"]["owner"], json!({"name": "prod"}));
    assert_eq!(docs[1]["spec"]["count"], json!(2));

    let url = running.base_url.clone();
    let missing = format!("{CLUSTER}x");
    let o =
        tokio::task::spawn_blocking(move || armctl(&["import", "--anonymous", "--arm-endpoint", &url, &missing], None))
            .await
            .expect("armctl");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("managedClusters/Prodx") && stderr(&o).contains("not found"),
        "{}",
        stderr(&o)
    );
}

/// Resource IDs of every scope of the registry (`KindInfo::arm.scope`): a resource group
/// (`/subscriptions/{s}/resourceGroups/{name}`) is a kind outside resource groups, with no `spec.owner`; an
/// extension resource (`<scope ID>/providers/<type>/<GUID>`) has `spec.owner.armId` = the scope's ID, whatever
/// the scope is (a subscription, a resource group, a resource), and `spec.azureName` = its GUID; a resource in a
/// resource group keeps `spec.owner.armId` = the group. One run imports them all, in the order given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_of_every_scope_are_imported_with_the_owner_their_scope_takes() {
    use armgen_runtime::Scope;
    let newest = |scope: Scope, arm_type: Option<&str>| {
        armgen_runtime::newest(aks_api::KINDS, |k| {
            k.served
                && k.owner_kind.is_none()
                && k.arm.scope == scope
                && arm_type.is_none_or(|t| k.arm.arm_type.eq_ignore_ascii_case(t))
        })
        .unwrap_or_else(|| panic!("a served top-level kind of scope {scope:?} ({arm_type:?}) in the registry"))
    };
    let group = newest(Scope::Subscription, Some("Microsoft.Resources/resourceGroups"));
    let extension = newest(Scope::Extension, None);
    let cluster = aks_api::KINDS
        .iter()
        .find(|k| {
            k.arm
                .arm_type
                .eq_ignore_ascii_case("Microsoft.ContainerService/managedClusters")
        })
        .expect("ManagedCluster");

    let sim = Simulator::new(SimulatorConfig {
        retry_after_secs: 0,
        ..SimulatorConfig::default()
    });
    let running = sim
        .serve("127.0.0.1:0".parse().expect("address"))
        .await
        .expect("simulator");
    let rg = "/subscriptions/s1/resourceGroups/Fleet-RG";
    sim.seed(
        rg,
        group.arm.api_version,
        json!({"location": "westeurope", "tags": {"team": "a"}}),
    )
    .expect("seed resource group");
    sim.seed(
        CLUSTER,
        cluster.arm.api_version,
        json!({"location": "westeurope", "properties": {"dnsPrefix": "prod"}}),
    )
    .expect("seed cluster");
    // Role assignments at three scopes: the subscription, the resource group, the cluster.
    let role =
        "/subscriptions/s1/providers/Microsoft.Authorization/roleDefinitions/acdd72a7-3385-48ef-bd42-f606fba81ae7";
    let assignments = [
        ("/subscriptions/s1", "0b4c3e6d-1f9a-4d2e-9c1b-5a7e8f901234"),
        (rg, "1c5d4f7e-2a0b-4e3f-8d2c-6b8f9a012345"),
        (CLUSTER, "2d6e5a8f-3b1c-4f4a-9e3d-7c9a0b123456"),
    ];
    let mut ids = vec![rg.to_string()];
    for (scope, guid) in assignments {
        let id = format!("{scope}/providers/{}/{guid}", extension.arm.arm_type);
        sim.seed(
            &id,
            extension.arm.api_version,
            json!({"properties": {"roleDefinitionId": role, "principalId": "5e7f6b9a-4c2d-4a5b-8f4e-8d0b1c234567"}}),
        )
        .expect("seed role assignment");
        ids.push(id);
    }
    ids.push(CLUSTER.to_string());

    let url = running.base_url.clone();
    let args: Vec<String> = ["import", "--anonymous", "--arm-endpoint", &url, "--namespace", "fleet"]
        .iter()
        .map(|s| s.to_string())
        .chain(ids.iter().cloned())
        .collect();
    let o = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        armctl(&args, None)
    })
    .await
    .expect("armctl");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_str(&stdout(&o))
        .map(|d| serde::Deserialize::deserialize(d).expect("YAML document"))
        .collect();
    assert_eq!(docs.len(), ids.len(), "{docs:?}");

    // The resource group: its kind at its newest version, no owner.
    assert_eq!(docs[0]["apiVersion"], json!(group.api_version()));
    assert_eq!(docs[0]["kind"], json!(group.kind));
    assert_eq!(docs[0]["metadata"]["name"], json!("fleet-rg"));
    assert_eq!(docs[0]["metadata"]["namespace"], json!("fleet"));
    assert_eq!(docs[0]["spec"]["azureName"], json!("Fleet-RG"));
    assert_eq!(docs[0]["spec"]["location"], json!("westeurope"));
    assert!(docs[0]["spec"].get("owner").is_none(), "{}", docs[0]);

    // The role assignments: owner = the scope's ARM ID, azureName = the GUID.
    for (doc, (scope, guid)) in docs[1..].iter().zip(assignments) {
        assert_eq!(doc["apiVersion"], json!(extension.api_version()));
        assert_eq!(doc["kind"], json!(extension.kind));
        assert_eq!(doc["metadata"]["name"], json!(guid));
        assert_eq!(doc["spec"]["azureName"], json!(guid));
        assert_eq!(doc["spec"]["owner"], json!({"armId": scope}), "{doc}");
        assert_eq!(doc["spec"]["roleDefinitionId"], json!(role));
    }

    // A resource in a resource group, as before.
    let last = &docs[ids.len() - 1];
    assert_eq!(last["kind"], json!(cluster.kind));
    assert_eq!(
        last["spec"]["owner"],
        json!({"armId": "/subscriptions/s1/resourceGroups/rg1"})
    );
}
