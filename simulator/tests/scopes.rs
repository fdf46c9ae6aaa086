//! Resources of other scopes than a resource group, through a simulator serving a registry of its own
//! ([`Simulator::with_kinds`], so that these tests do not depend on which kinds `aks_api` generates): resource
//! groups (subscription scope), role assignments (extension resources, any scope), deletes that cascade, and
//! [`SimulatorConfig::require_resource_groups`].

mod common;

use arm_simulator::{Simulator, SimulatorConfig};
use armgen_runtime::json::Error as JsonError;
use armgen_runtime::{KindInfo, NameFormat, ResourceInfo, RoundTrip, Scope};
use common::*;
use serde_json::{Value, json};

const RG_API: &str = "2025-04-01";
const RA_API: &str = "2022-04-01";
const NET_API: &str = "2024-05-01";
const AKS_API: &str = "2025-10-01";

const fn kind(
    kind: &'static str,
    arm_type: &'static str,
    api_version: &'static str,
    path: &'static str,
    scope: Scope,
    long_running: bool,
) -> KindInfo {
    KindInfo {
        group: "scopes",
        kube_group: "scopes.armgen.dev",
        version: "v1",
        kind,
        plural: "",
        storage: true,
        served: true,
        owner_kind: None,
        name_format: NameFormat::Any,
        secret_exports: &[],
        config_map_exports: &[],
        arm: ResourceInfo {
            kind,
            arm_type,
            api_version,
            path,
            parents: &[],
            scope,
            long_running,
        },
    }
}

static KINDS: &[KindInfo] = &[
    kind(
        "ResourceGroup",
        "Microsoft.Resources/resourceGroups",
        RG_API,
        "/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}",
        Scope::Subscription,
        false,
    ),
    kind(
        "RoleAssignment",
        "Microsoft.Authorization/roleAssignments",
        RA_API,
        "/{scope}/providers/Microsoft.Authorization/roleAssignments/{roleAssignmentName}",
        Scope::Extension,
        false,
    ),
    kind(
        "VirtualNetwork",
        "Microsoft.Network/virtualNetworks",
        NET_API,
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}",
        Scope::ResourceGroup,
        false,
    ),
    kind(
        "Subnet",
        "Microsoft.Network/virtualNetworks/subnets",
        NET_API,
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}/subnets/{subnetName}",
        Scope::ResourceGroup,
        false,
    ),
    kind(
        "ManagedCluster",
        "Microsoft.ContainerService/managedClusters",
        AKS_API,
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ContainerService/managedClusters/{resourceName}",
        Scope::ResourceGroup,
        true,
    ),
];

/// The types of [`KINDS`], leniently: the required members must be there; a role assignment does not model
/// `provisioningState` (its spec has none).
fn round_trip(_group: &str, _version: &str, kind: &str, json: &str) -> Option<Result<RoundTrip, JsonError>> {
    let body: Value = match serde_json::from_str(json) {
        Ok(v) => v,
        Err(e) => return Some(Err(e.into())),
    };
    let required: &[&str] = match kind {
        "ResourceGroup" | "VirtualNetwork" | "ManagedCluster" => &["/location"],
        "RoleAssignment" => &["/properties/roleDefinitionId", "/properties/principalId"],
        "Subnet" => &[],
        _ => return None,
    };
    if let Some(missing) = required.iter().find(|p| body.pointer(p).is_none()) {
        let field = missing.rsplit('/').next().unwrap_or_default();
        return Some(Err(JsonError::at(
            &armgen_runtime::json::ROOT,
            format!("missing field `{field}`"),
        )));
    }
    let unknown = match body.pointer("/properties/provisioningState") {
        Some(_) if kind == "RoleAssignment" => vec!["/properties/provisioningState".to_string()],
        _ => Vec::new(),
    };
    Some(Ok(RoundTrip {
        json: body.to_string(),
        unknown,
    }))
}

async fn env_with(require_resource_groups: bool) -> Env {
    Env::serve(Simulator::with_kinds(
        SimulatorConfig {
            retry_after_secs: 0,
            require_resource_groups,
            ..Default::default()
        },
        KINDS,
        round_trip,
    ))
    .await
}

fn rg_id(rg: &str) -> String {
    format!("/subscriptions/{SUB}/resourceGroups/{rg}")
}

fn vnet_id(rg: &str, vnet: &str) -> String {
    format!("{}/providers/Microsoft.Network/virtualNetworks/{vnet}", rg_id(rg))
}

fn subnet_id(rg: &str, vnet: &str, subnet: &str) -> String {
    format!("{}/subnets/{subnet}", vnet_id(rg, vnet))
}

fn ra_id(scope: &str, name: &str) -> String {
    format!("{scope}/providers/Microsoft.Authorization/roleAssignments/{name}")
}

fn ra_body(principal: &str) -> Value {
    json!({"properties": {
        "roleDefinitionId": format!("/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7"),
        "principalId": principal,
        "principalType": "ServicePrincipal"
    }})
}

fn rg_body() -> Value {
    json!({"location": "westeurope", "tags": {"env": "test"}})
}

fn vnet_body() -> Value {
    json!({"location": "westeurope", "properties": {"addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}}})
}

fn subnet_body() -> Value {
    json!({"properties": {"addressPrefix": "10.0.0.0/24"}})
}

fn ids(list: &Value) -> Vec<&str> {
    list["value"]
        .as_array()
        .expect("value")
        .iter()
        .filter_map(|v| v["id"].as_str())
        .collect()
}

#[tokio::test]
async fn resource_group_put_get_list_delete() {
    let env = env_with(false).await;
    // The spec's path writes `resourcegroups`; the ID has ARM's casing.
    let path = format!("/subscriptions/{SUB}/resourcegroups/rg1");
    let r = env.put(&path, RG_API, &rg_body()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(r.header("azure-asyncoperation").is_none(), "a synchronous PUT");
    assert_eq!(r.body["id"], rg_id("rg1"));
    assert_eq!(r.body["name"], "rg1");
    assert_eq!(r.body["type"], "Microsoft.Resources/resourceGroups");
    assert_eq!(r.body["location"], "westeurope");
    assert_eq!(r.body["tags"], json!({"env": "test"}));
    assert_eq!(r.body["properties"]["provisioningState"], "Succeeded");

    // Update: 200; the server's fields win over the request's.
    let mut body = rg_body();
    body["managedBy"] = json!("/subscriptions/x/resourceGroups/y/providers/Microsoft.Foo/bars/b");
    body["properties"] = json!({"provisioningState": "Deleting"});
    body["id"] = json!("/elsewhere");
    let u = env.put(&rg_id("rg1"), RG_API, &body).await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert_eq!(u.body["id"], rg_id("rg1"));
    assert_eq!(u.body["properties"]["provisioningState"], "Succeeded");
    assert_eq!(u.body["managedBy"], body["managedBy"]);

    let g = env.get(&path.to_uppercase(), RG_API).await;
    assert_eq!((g.status, &g.body), (200, &u.body));

    env.create(&rg_id("rg2"), RG_API, &rg_body()).await;
    let list = env
        .get_url(&env.url(&format!("/subscriptions/{SUB}/resourcegroups"), RG_API))
        .await;
    assert_eq!(list.status, 200, "{}", list.body);
    assert_eq!(ids(&list.body), [rg_id("rg1"), rg_id("rg2")]);

    let missing = env.get(&rg_id("nope"), RG_API).await;
    assert_eq!((missing.status, missing.code()), (404, "ResourceGroupNotFound"));
    assert_eq!(
        missing.body["error"]["message"],
        "Resource group 'nope' could not be found."
    );
    let invalid = env.put(&rg_id("rg3"), RG_API, &json!({"tags": {}})).await;
    assert_eq!((invalid.status, invalid.code()), (400, "InvalidRequestContent"));

    let d = env.delete(&path, RG_API).await;
    assert_eq!(d.status, 200);
    assert_eq!(env.get(&rg_id("rg1"), RG_API).await.status, 404);
    assert_eq!(env.delete(&rg_id("rg1"), RG_API).await.status, 204);
    assert_eq!(env.sim.resource_count(), 1);
}

#[tokio::test]
async fn role_assignment_put_get_delete_at_every_scope() {
    let env = env_with(false).await;
    env.create(&rg_id("rg"), RG_API, &rg_body()).await;
    env.create(&vnet_id("rg", "v"), NET_API, &vnet_body()).await;
    env.create(&subnet_id("rg", "v", "default"), NET_API, &subnet_body())
        .await;
    let scopes = [
        format!("/subscriptions/{SUB}"),
        rg_id("rg"),
        vnet_id("rg", "v"),
        subnet_id("rg", "v", "default"),
        // A scope the simulator does not serve or hold.
        format!("{}/providers/Microsoft.KeyVault/vaults/kv", rg_id("rg")),
    ];
    for (i, scope) in scopes.iter().enumerate() {
        let name = format!("0000000{i}-aaaa-bbbb-cccc-dddddddddddd");
        let id = ra_id(scope, &name);
        let r = env.put(&id, RA_API, &ra_body("p1")).await;
        assert_eq!(r.status, 201, "{id}: {}", r.body);
        assert!(r.header("azure-asyncoperation").is_none(), "a synchronous PUT");
        assert_eq!(r.body["id"], id);
        assert_eq!(r.body["name"], name);
        assert_eq!(r.body["type"], "Microsoft.Authorization/roleAssignments");
        let p = &r.body["properties"];
        assert_eq!(p["scope"], scope.as_str());
        assert_eq!(p["roleDefinitionId"], ra_body("p1")["properties"]["roleDefinitionId"]);
        assert_eq!(p["principalId"], "p1");
        assert_eq!(p["principalType"], "ServicePrincipal");
        assert!(p.get("provisioningState").is_none(), "{}", r.body);

        // The scope is read-only: a request's is replaced; an update answers 200.
        let mut body = ra_body("p1");
        body["properties"]["scope"] = json!("/subscriptions/other");
        let u = env.put(&id, RA_API, &body).await;
        assert_eq!(u.status, 200, "{}", u.body);
        assert_eq!(u.body["properties"]["scope"], scope.as_str());

        // Case-insensitive paths, canonical ID.
        let g = env
            .get(
                &id.replace(
                    "/providers/Microsoft.Authorization/",
                    "/PROVIDERS/microsoft.authorization/",
                ),
                RA_API,
            )
            .await;
        assert_eq!(g.status, 200, "{}", g.body);
        assert_eq!(g.body, u.body);

        // The collection at the scope lists the role assignments at exactly that scope.
        let list = env
            .get_url(&env.url(
                &format!("{scope}/providers/Microsoft.Authorization/roleAssignments"),
                RA_API,
            ))
            .await;
        assert_eq!(list.status, 200, "{}", list.body);
        assert_eq!(ids(&list.body), [id.as_str()]);
    }

    let missing = ra_id(&rg_id("rg"), "missing");
    let r = env.get(&missing, RA_API).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"));
    assert!(
        r.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("'Microsoft.Authorization/roleAssignments/missing'")),
        "{}",
        r.body
    );
    let r = env
        .get(&ra_id(&format!("/subscriptions/{SUB}"), "missing"), RA_API)
        .await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"));
    let invalid = env
        .put(&missing, RA_API, &json!({"properties": {"principalId": "p"}}))
        .await;
    assert_eq!((invalid.status, invalid.code()), (400, "InvalidRequestContent"));
    let r = env.get(&ra_id(&rg_id("rg"), "x"), "2019-01-01").await;
    assert_eq!((r.status, r.code()), (400, "InvalidApiVersionParameter"));

    let id = ra_id(&subnet_id("rg", "v", "default"), "00000003-aaaa-bbbb-cccc-dddddddddddd");
    assert_eq!(env.delete(&id, RA_API).await.status, 200);
    assert_eq!(env.get(&id, RA_API).await.status, 404);
    assert_eq!(env.delete(&id, RA_API).await.status, 204);
    assert!(
        env.sim.resource(&subnet_id("rg", "v", "default")).is_some(),
        "the scope stays"
    );

    // A seed is materialized as a PUT is.
    let seeded = env
        .sim
        .seed(&ra_id(&vnet_id("rg", "v"), "seeded"), RA_API, ra_body("p2"))
        .expect("seed");
    assert_eq!(seeded["properties"]["scope"], vnet_id("rg", "v"));
}

#[tokio::test]
async fn deleting_a_resource_group_deletes_everything_in_it() {
    let env = env_with(false).await;
    let sub = format!("/subscriptions/{SUB}");
    for rg in ["rg1", "rg10"] {
        env.create(&rg_id(rg), RG_API, &rg_body()).await;
        env.create(&vnet_id(rg, "v"), NET_API, &vnet_body()).await;
        env.create(&subnet_id(rg, "v", "default"), NET_API, &subnet_body())
            .await;
        for scope in [rg_id(rg), vnet_id(rg, "v"), subnet_id(rg, "v", "default")] {
            env.create(&ra_id(&scope, "ra"), RA_API, &ra_body("p")).await;
        }
    }
    let cluster = format!(
        "{}/providers/Microsoft.ContainerService/managedClusters/c1",
        rg_id("rg1")
    );
    env.create(&cluster, AKS_API, &json!({"location": "westeurope"})).await;
    env.create(&ra_id(&cluster, "ra"), RA_API, &ra_body("p")).await;
    env.create(&ra_id(&sub, "ra"), RA_API, &ra_body("p")).await;
    assert_eq!(env.sim.resource_count(), 2 * 6 + 3);

    let d = env
        .delete(&format!("/subscriptions/{SUB}/resourcegroups/RG1"), RG_API)
        .await;
    assert_eq!(d.status, 200, "{}", d.body);
    let left: Vec<String> = env
        .sim
        .resources()
        .iter()
        .filter_map(|r| r["id"].as_str().map(str::to_string))
        .collect();
    assert!(
        left.iter().all(|id| !id.starts_with(&format!("{}/", rg_id("rg1")))),
        "{left:#?}"
    );
    assert_eq!(env.sim.resource_count(), 6 + 1, "{left:#?}");
    assert!(env.sim.resource(&ra_id(&sub, "ra")).is_some());
    assert!(
        env.sim
            .resource(&ra_id(&subnet_id("rg10", "v", "default"), "ra"))
            .is_some()
    );
    for (id, api_version) in [
        (vnet_id("rg1", "v"), NET_API),
        (ra_id(&subnet_id("rg1", "v", "default"), "ra"), RA_API),
        (cluster, AKS_API),
    ] {
        assert_eq!(env.get(&id, api_version).await.status, 404, "{id}");
    }
}

#[tokio::test]
async fn deleting_a_resource_deletes_the_extension_resources_on_it_and_its_children() {
    let env = env_with(false).await;
    env.create(&vnet_id("rg", "v"), NET_API, &vnet_body()).await;
    env.create(&vnet_id("rg", "v2"), NET_API, &vnet_body()).await;
    env.create(&subnet_id("rg", "v", "default"), NET_API, &subnet_body())
        .await;
    let on_vnet = ra_id(&vnet_id("rg", "v"), "ra");
    let on_subnet = ra_id(&subnet_id("rg", "v", "default"), "ra");
    let on_other = ra_id(&vnet_id("rg", "v2"), "ra");
    let on_group = ra_id(&rg_id("rg"), "ra");
    for id in [&on_vnet, &on_subnet, &on_other, &on_group] {
        env.create(id, RA_API, &ra_body("p")).await;
    }

    // Deleting the subnet deletes the role assignment on it only.
    assert_eq!(env.delete(&subnet_id("rg", "v", "default"), NET_API).await.status, 200);
    assert!(env.sim.resource(&on_subnet).is_none());
    assert!(env.sim.resource(&on_vnet).is_some());

    env.create(&subnet_id("rg", "v", "default"), NET_API, &subnet_body())
        .await;
    env.create(&on_subnet, RA_API, &ra_body("p")).await;
    assert_eq!(env.delete(&vnet_id("rg", "v"), NET_API).await.status, 200);
    for gone in [
        &vnet_id("rg", "v"),
        &subnet_id("rg", "v", "default"),
        &on_vnet,
        &on_subnet,
    ] {
        assert!(env.sim.resource(gone).is_none(), "{gone}");
    }
    assert!(env.sim.resource(&on_other).is_some());
    assert!(env.sim.resource(&on_group).is_some());

    // A long-running delete deletes them when its operation succeeds.
    let cluster = format!(
        "{}/providers/Microsoft.ContainerService/managedClusters/c1",
        rg_id("rg")
    );
    env.create(&cluster, AKS_API, &json!({"location": "westeurope"})).await;
    let on_cluster = ra_id(&cluster, "ra");
    env.create(&on_cluster, RA_API, &ra_body("p")).await;
    let d = env.delete(&cluster, AKS_API).await;
    assert_eq!(d.status, 202);
    assert!(
        env.sim.resource(&on_cluster).is_some(),
        "deleted with the operation's end"
    );
    let url = d.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    assert_eq!(env.wait(&url).await["status"], "Succeeded");
    assert!(env.sim.resource(&cluster).is_none());
    assert!(env.sim.resource(&on_cluster).is_none());
    assert_eq!(env.sim.resource_count(), 3);
}

#[tokio::test]
async fn resource_groups_are_not_required_by_default() {
    let env = env_with(false).await;
    assert!(!SimulatorConfig::default().require_resource_groups);
    assert_eq!(env.put(&vnet_id("nope", "v"), NET_API, &vnet_body()).await.status, 201);
    let on_missing = ra_id(&vnet_id("nope", "missing"), "ra");
    assert_eq!(env.put(&on_missing, RA_API, &ra_body("p")).await.status, 201);
    assert_eq!(
        env.put(&ra_id(&rg_id("nope2"), "ra"), RA_API, &ra_body("p"))
            .await
            .status,
        201
    );
}

#[tokio::test]
async fn required_resource_groups_refuse_puts_outside_them() {
    let env = env_with(true).await;

    let r = env.put(&vnet_id("rg-missing", "v"), NET_API, &vnet_body()).await;
    assert_eq!((r.status, r.code()), (404, "ResourceGroupNotFound"));
    assert_eq!(
        r.body["error"]["message"],
        "Resource group 'rg-missing' could not be found."
    );
    let r = env
        .put(&subnet_id("rg-missing", "v", "s"), NET_API, &subnet_body())
        .await;
    assert_eq!((r.status, r.code()), (404, "ResourceGroupNotFound"));
    let r = env.put(&ra_id(&rg_id("rg-missing"), "ra"), RA_API, &ra_body("p")).await;
    assert_eq!((r.status, r.code()), (404, "ResourceGroupNotFound"));
    let r = env
        .put(&ra_id(&vnet_id("rg-missing", "v"), "ra"), RA_API, &ra_body("p"))
        .await;
    assert_eq!((r.status, r.code()), (404, "ResourceGroupNotFound"));
    assert_eq!(env.sim.resource_count(), 0);

    // A subscription always exists; a resource group needs nothing.
    let on_sub = ra_id(&format!("/subscriptions/{SUB}"), "ra");
    assert_eq!(env.put(&on_sub, RA_API, &ra_body("p")).await.status, 201);
    assert_eq!(env.put(&rg_id("RG"), RG_API, &rg_body()).await.status, 201);

    // Resource groups match case-insensitively.
    assert_eq!(env.put(&vnet_id("rg", "v"), NET_API, &vnet_body()).await.status, 201);
    assert_eq!(
        env.put(&ra_id(&rg_id("rg"), "ra"), RA_API, &ra_body("p")).await.status,
        201
    );
    let on_vnet = ra_id(&vnet_id("rg", "v"), "ra");
    assert_eq!(env.put(&on_vnet, RA_API, &ra_body("p")).await.status, 201);

    // The scope must be there: the error names it.
    let r = env
        .put(&ra_id(&subnet_id("rg", "v", "nope"), "ra"), RA_API, &ra_body("p"))
        .await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"));
    assert_eq!(
        r.body["error"]["message"],
        "The Resource 'Microsoft.Network/virtualNetworks/v/subnets/nope' under resource group 'rg' was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix"
    );
    let kv = format!("{}/providers/Microsoft.KeyVault/vaults/kv", rg_id("rg"));
    let r = env.put(&ra_id(&kv, "ra"), RA_API, &ra_body("p")).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"));

    // Past the resource group, a child still needs its parent.
    let r = env.put(&subnet_id("rg", "nope", "s"), NET_API, &subnet_body()).await;
    assert_eq!((r.status, r.code()), (404, "ParentResourceNotFound"));

    // Seeds are not checked.
    env.sim
        .seed(&vnet_id("unseen", "v"), NET_API, vnet_body())
        .expect("seed outside any resource group");

    // After the group is deleted (and everything in it), it is required again.
    assert_eq!(env.delete(&rg_id("rg"), RG_API).await.status, 200);
    assert!(env.sim.resource(&on_vnet).is_none());
    let r = env.put(&vnet_id("rg", "v"), NET_API, &vnet_body()).await;
    assert_eq!((r.status, r.code()), (404, "ResourceGroupNotFound"));
}

/// The same through the generated registry's resource groups and role assignments (the tests above use kinds of
/// their own, so they do not depend on azure-arm.yaml).
#[tokio::test]
async fn generated_resource_groups_and_role_assignments() {
    let version_of = |arm_type: &str| {
        aks_api::KINDS
            .iter()
            .filter(|k| k.arm.arm_type == arm_type)
            .map(|k| k.arm.api_version)
            .max()
    };
    // azure-arm.yaml generates both (groups `resources` and `authorization`): their absence is a failure.
    let rg_api = version_of("Microsoft.Resources/resourceGroups").expect("the registry has resource groups");
    let ra_api = version_of("Microsoft.Authorization/roleAssignments").expect("the registry has role assignments");
    let env = Env::start(SimulatorConfig {
        retry_after_secs: 0,
        require_resource_groups: true,
        ..Default::default()
    })
    .await;
    let r = env.put(&rg_id("rg"), rg_api, &rg_body()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["id"], rg_id("rg"));
    assert_eq!(r.body["properties"]["provisioningState"], "Succeeded");
    let cluster = format!(
        "{}/providers/Microsoft.ContainerService/managedClusters/c1",
        rg_id("rg")
    );
    let id = ra_id(&cluster, "00000000-aaaa-bbbb-cccc-dddddddddddd");
    let r = env.put(&id, ra_api, &ra_body("p")).await;
    assert_eq!((r.status, r.code()), (404, "ResourceNotFound"), "{}", r.body);
    env.create(&cluster, V2, &json!({"location": "westeurope"})).await;
    let r = env.put(&id, ra_api, &ra_body("p")).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["properties"]["scope"], cluster);
    assert_eq!(r.body["properties"]["principalType"], "ServicePrincipal");
    assert!(r.body["properties"].get("provisioningState").is_none(), "{}", r.body);
    assert_eq!(env.delete(&rg_id("rg"), rg_api).await.status, 200);
    assert_eq!(env.sim.resource_count(), 0);
}
