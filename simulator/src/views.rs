//! What the views of the generated registry ([`aks_api::VIEWS`]: read-only `GET <resource ID>/<path>` of the specs,
//! no PUT on that path) answer, as data: one [`Row`] per (ARM type, view path), each with the public source of the
//! behaviour, its response computed from the target's current state (and its parent's and children's). A view of
//! the registry without a row is answered `501 NotImplemented` naming it; a unit test checks that every view of
//! [`aks_api::VIEWS`] has one.
//!
//! | ARM type | view | response |
//! |---|---|---|
//! | `managedClusters` | `upgradeProfiles/default` | `controlPlaneProfile`: the version that runs (`currentKubernetesVersion`), `osType` `Linux`, upgrades to the next patch and the next minor version; `agentPoolProfiles`: one per pool of the cluster (its name, running version, `osType`, [`pool_upgrades`]) |
//! | `managedClusters` | `availableAgentPoolVersions` | the cluster's version (`default: true`) and the two minor versions below it (`.0`), oldest first |
//! | `managedClusters/agentPools` | `upgradeProfiles/default` | the pool's running version (`currentOrchestratorVersion`), `osType`, [`pool_upgrades`], `latestNodeImageVersion` ([`latest_node_image`]) |
//! | `managedClusters/agentPools` | `machines` (pageable) | one machine per node (`properties.count`, 1 when absent, as the spec's default): `aks-<pool>-<8 digits>-vmss<6 base-36 digits>`, its VMSS instance's ID in the cluster's node resource group and an IPv4 address |
//!
//! Every response is checked against the generated ARM type of the view's API version before it is sent (the
//! resource's status field holding the view, [`armgen_runtime::ViewInfo::field`]): a property that version does not
//! declare is a `500`, never a silent extra.
//!
//! The machines are the pool's first `count` instances of its scale set: names and IDs depend only on the pool's
//! and the cluster's IDs, so they are the same on every GET; after `deleteMachines` the pool lists its first
//! `count` instances again (the simulator does not remember which machines were deleted).

use serde_json::{Value, json};

use crate::registry::subscription_and_group;
use crate::util::stable_uuid;

const MANAGED_CLUSTERS: &str = "Microsoft.ContainerService/managedClusters";
const AGENT_POOLS: &str = "Microsoft.ContainerService/managedClusters/agentPools";

/// How a view's response is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A `ManagedClusterUpgradeProfile` of the target cluster.
    ClusterUpgradeProfile,
    /// An `AgentPoolAvailableVersions` of the target cluster.
    AgentPoolVersions,
    /// An `AgentPoolUpgradeProfile` of the target pool.
    PoolUpgradeProfile,
    /// The `Machine`s of the target pool (a pageable list).
    Machines,
}

impl Shape {
    /// Whether the response is a pageable list (`{value, nextLink}`).
    pub fn pageable(self) -> bool {
        matches!(self, Shape::Machines)
    }
}

/// How the simulator answers one view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    /// The target's ARM type (case-insensitive).
    pub arm_type: &'static str,
    /// The view's path after the target's ID, as [`armgen_runtime::ViewInfo::path`] (case-insensitive).
    pub path: &'static str,
    /// The `name` of the response (of a single object).
    pub name: &'static str,
    /// The `type` of the response (of a single object, or of each item of a list).
    pub response_type: &'static str,
    /// The public source of the behaviour.
    pub source: &'static str,
    pub shape: Shape,
}

/// The views the simulator serves.
pub(crate) static ROWS: &[Row] = &[
    // "Check for available AKS cluster upgrades": `az aks get-upgrades` lists the control plane's version and the
    // versions it can upgrade to (newer patches of its minor version and the next minor version), and the same for
    // each node pool (https://learn.microsoft.com/azure/aks/upgrade-aks-cluster). Shape: "Managed Clusters - Get
    // Upgrade Profile" (https://learn.microsoft.com/rest/api/aks/managed-clusters/get-upgrade-profile), whose
    // example names it `default`, type `Microsoft.ContainerService/managedClusters/upgradeprofiles`.
    Row {
        arm_type: MANAGED_CLUSTERS,
        path: "upgradeProfiles/default",
        name: "default",
        response_type: "Microsoft.ContainerService/managedClusters/upgradeprofiles",
        source: "https://learn.microsoft.com/azure/aks/upgrade-aks-cluster",
        shape: Shape::ClusterUpgradeProfile,
    },
    // "Agent Pools - Get Available Agent Pool Versions": "the list of supported Kubernetes versions for the specified
    // agent pool" (https://learn.microsoft.com/rest/api/aks/agent-pools/get-available-agent-pool-versions, whose
    // example names it `default`, type `…/availableAgentpoolVersions`); a pool's minor version "must be within two
    // minor versions of the control plane version" and "cannot be greater than the control plane version" (the
    // spec's `orchestratorVersion`; https://learn.microsoft.com/azure/aks/supported-kubernetes-versions).
    Row {
        arm_type: MANAGED_CLUSTERS,
        path: "availableAgentPoolVersions",
        name: "default",
        response_type: "Microsoft.ContainerService/managedClusters/availableAgentpoolVersions",
        source: "https://learn.microsoft.com/rest/api/aks/agent-pools/get-available-agent-pool-versions",
        shape: Shape::AgentPoolVersions,
    },
    // "Upgrade AKS node images": `az aks nodepool get-upgrades` shows the pool's `latestNodeImageVersion`, to compare
    // with its `nodeImageVersion` before `az aks nodepool upgrade --node-image-only`
    // (https://learn.microsoft.com/azure/aks/node-image-upgrade); Kubernetes upgrades of a pool up to the control
    // plane's version (https://learn.microsoft.com/azure/aks/manage-node-pools#upgrade-a-single-node-pool). Shape:
    // "Agent Pools - Get Upgrade Profile" (https://learn.microsoft.com/rest/api/aks/agent-pools/get-upgrade-profile).
    Row {
        arm_type: AGENT_POOLS,
        path: "upgradeProfiles/default",
        name: "default",
        response_type: "Microsoft.ContainerService/managedClusters/agentPools/upgradeProfiles",
        source: "https://learn.microsoft.com/azure/aks/node-image-upgrade",
        shape: Shape::PoolUpgradeProfile,
    },
    // "Machines - List": "Get a list of machines in the specified agent pool", pageable
    // (https://learn.microsoft.com/rest/api/aks/machines/list); a pool's nodes are the instances of its virtual
    // machine scale set `aks-<pool>-<number>-vmss` in the cluster's node resource group, named after it with a
    // base-36 instance suffix (`aks-nodepool1-12345678-vmss000000`), as `kubectl get nodes` lists them
    // (https://learn.microsoft.com/azure/aks/concepts-clusters-workloads#node-resource-group,
    // https://learn.microsoft.com/azure/aks/manage-node-pools). Addresses from AKS's default node subnet
    // `10.224.0.0/16`, nodes from `.4` on (https://learn.microsoft.com/azure/aks/configure-kubenet).
    Row {
        arm_type: AGENT_POOLS,
        path: "machines",
        name: "",
        response_type: "Microsoft.ContainerService/managedClusters/agentPools/machines",
        source: "https://learn.microsoft.com/rest/api/aks/machines/list",
        shape: Shape::Machines,
    },
];

/// The row of the view `path` of `arm_type`, if there is one.
pub(crate) fn row(arm_type: &str, path: &str) -> Option<&'static Row> {
    ROWS.iter()
        .find(|r| r.arm_type.eq_ignore_ascii_case(arm_type) && r.path.eq_ignore_ascii_case(path))
}

/// What a view reads: its target and what is around it.
pub(crate) struct Subject<'a> {
    /// The target's ID, as stored.
    pub id: &'a str,
    /// The target's body, as `GET` returns it.
    pub body: &'a Value,
    /// The parent resource's body (a pool's cluster), if held.
    pub parent: Option<&'a Value>,
    /// The bodies of the target's direct child resources (a cluster's pools), ordered by ID.
    pub children: Vec<&'a Value>,
}

/// The response of a view that is not a list, `None` for a list ([`Shape::pageable`]).
pub(crate) fn single(row: &Row, subject: &Subject<'_>) -> Option<Value> {
    let properties = match row.shape {
        Shape::ClusterUpgradeProfile => cluster_upgrade_profile(subject),
        Shape::AgentPoolVersions => agent_pool_versions(subject),
        Shape::PoolUpgradeProfile => pool_upgrade_profile(subject),
        Shape::Machines => return None,
    };
    Some(json!({
        "id": format!("{}/{}", subject.id, row.path),
        "name": row.name,
        "type": row.response_type,
        "properties": properties,
    }))
}

/// The items `skip..skip + take` of a list view and how many it has in all; `None` for a view that is not a list.
pub(crate) fn items(row: &Row, subject: &Subject<'_>, skip: usize, take: usize) -> Option<(Vec<Value>, usize)> {
    match row.shape {
        Shape::Machines => {
            let total = node_count(subject.body);
            let end = skip.saturating_add(take).min(total);
            let items = (skip.min(end)..end).map(|i| machine(row, subject, i)).collect();
            Some((items, total))
        }
        _ => None,
    }
}

/// The version a cluster runs: `currentKubernetesVersion`, else its `kubernetesVersion` (full).
fn cluster_version(cluster: &Value) -> String {
    let p = cluster.get("properties");
    p.and_then(|p| p.get("currentKubernetesVersion"))
        .or_else(|| p.and_then(|p| p.get("kubernetesVersion")))
        .and_then(Value::as_str)
        .map(crate::defaults::full_version)
        .unwrap_or_else(|| crate::defaults::DEFAULT_KUBERNETES_VERSION.to_string())
}

/// The version a pool runs (its properties, as a pool resource has them or as a cluster lists them):
/// `currentOrchestratorVersion`, else `orchestratorVersion` (full), else the cluster's.
fn pool_version(pool_properties: Option<&Value>, cluster_version: &str) -> String {
    pool_properties
        .and_then(|p| {
            p.get("currentOrchestratorVersion")
                .or_else(|| p.get("orchestratorVersion"))
        })
        .and_then(Value::as_str)
        .map(crate::defaults::full_version)
        .unwrap_or_else(|| cluster_version.to_string())
}

fn os_type(pool_properties: Option<&Value>) -> String {
    pool_properties
        .and_then(|p| p.get("osType"))
        .and_then(Value::as_str)
        .unwrap_or("Linux")
        .to_string()
}

/// The numbers of a version (`1.32.7` → `[1, 32, 7]`; digits runs of any string), to compare versions.
fn numbers(version: &str) -> Vec<u64> {
    version
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or(u64::MAX))
        .collect()
}

/// `major.minor` of a version, when it has them.
fn major_minor(version: &str) -> Option<(u64, u64)> {
    match numbers(version).as_slice() {
        [major, minor, ..] => Some((*major, *minor)),
        _ => None,
    }
}

/// What a pool running `pool` can upgrade to under a control plane running `control_plane`: the control plane's
/// version when it is newer (a pool's version "cannot be greater than the control plane version"), else nothing.
pub(crate) fn pool_upgrades(pool: &str, control_plane: &str) -> Vec<Value> {
    if numbers(control_plane) > numbers(pool) {
        vec![json!({"kubernetesVersion": control_plane})]
    } else {
        Vec::new()
    }
}

/// The upgrades of a control plane running `version`: the next patch and the next minor version (`.0`).
fn control_plane_upgrades(version: &str) -> Vec<Value> {
    let mut out = vec![json!({"kubernetesVersion": crate::actions::newer(version)})];
    if let Some((major, minor)) = major_minor(version) {
        out.push(json!({"kubernetesVersion": format!("{major}.{}.0", minor + 1)}));
    }
    out
}

fn cluster_upgrade_profile(s: &Subject<'_>) -> Value {
    let version = cluster_version(s.body);
    // The pools: the child resources, and the cluster's `agentPoolProfiles` items no child resource names (a
    // simulator without the child-owned rule keeps them apart).
    let mut pools: Vec<(String, Option<&Value>)> = s
        .children
        .iter()
        .filter(|c| {
            c.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.eq_ignore_ascii_case(AGENT_POOLS))
        })
        .map(|c| (name_of(c), c.get("properties")))
        .collect();
    let listed = s
        .body
        .pointer("/properties/agentPoolProfiles")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    for item in listed {
        let name = name_of(item);
        if !name.is_empty() && !pools.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name)) {
            pools.push((name, Some(item)));
        }
    }
    let agent_pools: Vec<Value> = pools
        .into_iter()
        .map(|(name, p)| {
            let pool = pool_version(p, &version);
            json!({
                "name": name,
                "kubernetesVersion": pool,
                "osType": os_type(p),
                "upgrades": pool_upgrades(&pool, &version),
            })
        })
        .collect();
    json!({
        "controlPlaneProfile": {
            "kubernetesVersion": version,
            "osType": "Linux",
            "upgrades": control_plane_upgrades(&version),
        },
        "agentPoolProfiles": agent_pools,
    })
}

fn agent_pool_versions(s: &Subject<'_>) -> Value {
    let version = cluster_version(s.body);
    let mut versions = Vec::new();
    if let Some((major, minor)) = major_minor(&version) {
        for back in [2, 1] {
            if let Some(older) = minor.checked_sub(back) {
                versions.push(json!({"kubernetesVersion": format!("{major}.{older}.0")}));
            }
        }
    }
    versions.push(json!({"kubernetesVersion": version, "default": true}));
    json!({ "agentPoolVersions": versions })
}

fn pool_upgrade_profile(s: &Subject<'_>) -> Value {
    let control_plane = s.parent.map(cluster_version);
    let p = s.body.get("properties");
    let version = pool_version(
        p,
        control_plane
            .as_deref()
            .unwrap_or(crate::defaults::DEFAULT_KUBERNETES_VERSION),
    );
    let upgrades = control_plane.map(|cp| pool_upgrades(&version, &cp)).unwrap_or_default();
    json!({
        "kubernetesVersion": version,
        "osType": os_type(p),
        "upgrades": upgrades,
        "latestNodeImageVersion": latest_node_image(p),
    })
}

/// The newest node image of a pool: one newer than the image a new pool of its OS gets
/// ([`crate::defaults::node_image`]), which is what one `upgradeNodeImageVersion` installs
/// ([`crate::actions::newer`]); the pool's own image when that is newer still (of the same series).
pub(crate) fn latest_node_image(pool_properties: Option<&Value>) -> String {
    let str_of = |key: &str| pool_properties.and_then(|p| p.get(key)).and_then(Value::as_str);
    let latest = crate::actions::newer(crate::defaults::node_image(
        str_of("osType").unwrap_or("Linux"),
        str_of("osSKU").unwrap_or("Ubuntu"),
    ));
    match str_of("nodeImageVersion") {
        Some(current) if series(current) == series(&latest) && numbers(current) > numbers(&latest) => {
            current.to_string()
        }
        _ => latest,
    }
}

/// A node image's series: the image name without its numbers (`AKSUbuntu-2204gen2containerd-202507.21.0` →
/// `AKSUbuntu-gencontainerd-.`).
fn series(image: &str) -> String {
    image.chars().filter(|c| !c.is_ascii_digit()).collect()
}

fn name_of(v: &Value) -> String {
    v.get("name").and_then(Value::as_str).unwrap_or_default().to_string()
}

/// A pool's node count: `properties.count`, 1 when absent (the spec's default), 0 when negative.
fn node_count(pool: &Value) -> usize {
    match pool.pointer("/properties/count") {
        Some(n) => n.as_u64().map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        None => 1,
    }
}

/// A number of `digits` decimal digits derived from `seed` (the same for the same seed).
fn stable_digits(seed: &str, digits: u32) -> String {
    let hex: String = stable_uuid(seed)
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(12)
        .collect();
    let n = u64::from_str_radix(&hex, 16).unwrap_or(0) % 10u64.pow(digits);
    format!("{n:0width$}", width = digits as usize)
}

/// The 6-character base-36 suffix of a scale set instance's computer name (`0` → `000000`, `10` → `00000a`).
fn instance_suffix(i: usize) -> String {
    let mut n = i;
    let mut out = Vec::new();
    for _ in 0..6 {
        out.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    out.iter().rev().collect()
}

/// Machine `i` of the target pool.
fn machine(row: &Row, s: &Subject<'_>, i: usize) -> Value {
    let pool = name_of(s.body).to_lowercase();
    let cluster_id = s.id.rsplitn(3, '/').nth(2).unwrap_or(s.id);
    let cluster_name = cluster_id.rsplit('/').next().unwrap_or_default();
    let (sub, rg) = subscription_and_group(s.id);
    let location = s
        .parent
        .and_then(|c| c.get("location"))
        .and_then(Value::as_str)
        .unwrap_or("westeurope")
        .to_lowercase()
        .replace(' ', "");
    let node_rg = s
        .parent
        .and_then(|c| c.pointer("/properties/nodeResourceGroup"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("MC_{rg}_{cluster_name}_{location}"));
    let vmss = format!("aks-{pool}-{}-vmss", stable_digits(&cluster_id.to_lowercase(), 8));
    let name = format!("{vmss}{}", instance_suffix(i));
    // The pool's addresses: a block of 1024 of the node subnet chosen by the pool's ID, from `.4` on.
    let block: usize = stable_digits(&s.id.to_lowercase(), 2).parse().unwrap_or(0) % 60;
    let host = block * 1024 + 4 + i % 1000;
    json!({
        "id": format!("{}/{}/{name}", s.id, row.path),
        "name": name,
        "type": row.response_type,
        "properties": {
            "resourceId": format!(
                "/subscriptions/{sub}/resourceGroups/{node_rg}/providers/Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{i}"
            ),
            "network": {
                "ipAddresses": [{"family": "IPv4", "ip": format!("10.224.{}.{}", host / 256, host % 256)}],
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_of_the_registry_has_a_row_of_its_pageability() {
        assert!(!aks_api::VIEWS.is_empty());
        for v in aks_api::VIEWS {
            let kind = aks_api::KINDS
                .iter()
                .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind)
                .unwrap_or_else(|| panic!("{} {} {} in aks_api::KINDS", v.group, v.version, v.kind));
            let row = row(kind.arm.arm_type, v.path)
                .unwrap_or_else(|| panic!("no row in views.rs for {} {}", kind.arm.arm_type, v.path));
            assert_eq!(row.shape.pageable(), v.pageable, "{} {}", kind.arm.arm_type, v.path);
        }
    }

    #[test]
    fn every_row_names_a_view_of_the_registry_and_a_source() {
        for r in ROWS {
            assert!(r.source.starts_with("https://"), "{} {}", r.arm_type, r.path);
            assert!(
                aks_api::VIEWS.iter().any(|v| v.path.eq_ignore_ascii_case(r.path)
                    && aks_api::KINDS.iter().any(|k| k.group == v.group
                        && k.version == v.version
                        && k.kind == v.kind
                        && k.arm.arm_type.eq_ignore_ascii_case(r.arm_type))),
                "{} {} is not in aks_api::VIEWS",
                r.arm_type,
                r.path
            );
        }
    }

    #[test]
    fn suffixes_are_base_36() {
        assert_eq!(instance_suffix(0), "000000");
        assert_eq!(instance_suffix(10), "00000a");
        assert_eq!(instance_suffix(36), "000010");
        assert_eq!(stable_digits("a", 8).len(), 8);
        assert_eq!(stable_digits("a", 8), stable_digits("a", 8));
    }

    #[test]
    fn versions() {
        assert_eq!(
            control_plane_upgrades("1.32.7"),
            [
                json!({"kubernetesVersion": "1.32.8"}),
                json!({"kubernetesVersion": "1.33.0"})
            ]
        );
        assert_eq!(
            pool_upgrades("1.31.0", "1.32.7"),
            [json!({"kubernetesVersion": "1.32.7"})]
        );
        assert!(pool_upgrades("1.32.7", "1.32.7").is_empty());
        assert!(pool_upgrades("1.32.10", "1.32.9").is_empty());
        let v = agent_pool_versions(&Subject {
            id: "x",
            body: &json!({"properties": {"currentKubernetesVersion": "1.1.3"}}),
            parent: None,
            children: Vec::new(),
        });
        assert_eq!(
            v,
            json!({"agentPoolVersions": [{"kubernetesVersion": "1.0.0"}, {"kubernetesVersion": "1.1.3", "default": true}]})
        );
    }

    #[test]
    fn the_latest_node_image_is_what_an_upgrade_installs() {
        let new_pool = json!({"osType": "Linux"});
        let latest = latest_node_image(Some(&new_pool));
        let default = crate::defaults::node_image("Linux", "Ubuntu");
        assert_eq!(latest, crate::actions::newer(default));
        let upgraded = json!({"nodeImageVersion": crate::actions::newer(&latest)});
        assert_eq!(latest_node_image(Some(&upgraded)), crate::actions::newer(&latest));
        let windows = json!({"osType": "Windows", "nodeImageVersion": "AKSUbuntu-2204gen2containerd-209901.01.0"});
        assert!(latest_node_image(Some(&windows)).starts_with("AKSWindows"));
    }
}
