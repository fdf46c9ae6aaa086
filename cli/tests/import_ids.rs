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
