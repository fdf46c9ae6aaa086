//! Our CRDs install beside Azure Service Operator's (which Cluster API Provider Azure puts on every management
//! cluster it runs on): no CRD name of ours may be one Azure Service Operator uses, or our `kubectl apply` would
//! replace their CRD and their objects would be read by our schema.
//!
//! Azure Service Operator (v2) names a provider's Kubernetes API group after the ARM provider namespace, without
//! `Microsoft.` and lowercased, under `azure.com` (`Microsoft.ContainerService` → `containerservice.azure.com`, its
//! API reference: <https://azure.github.io/azure-service-operator/reference/containerservice/v1api20231102preview/>;
//! `network.azure.com/VirtualNetworkGateway` in
//! <https://azure.github.io/azure-service-operator/guide/breaking-changes/breaking-changes-v2.19.0>), and a CRD
//! `<plural>.<group>`. Its kinds are not always ours (`ManagedClustersAgentPool` where we have `AgentPool`), so a
//! group outside `azure.com` is what keeps every name apart: the test checks both the names and the groups.

use std::collections::BTreeSet;
use std::path::Path;

/// The Kubernetes API group Azure Service Operator gives the resources of an ARM type's provider
/// (`Microsoft.ContainerService/managedClusters` → `containerservice.azure.com`).
fn aso_group(arm_type: &str) -> String {
    let provider = arm_type.split('/').next().unwrap_or(arm_type);
    let service = provider
        .strip_prefix("Microsoft.")
        .or_else(|| provider.strip_prefix("microsoft."))
        .unwrap_or(provider);
    format!("{}.azure.com", service.to_ascii_lowercase())
}

/// Why the CRD `<plural>.<group>` for `arm_type` collides with Azure Service Operator's, if it does.
fn collision(plural: &str, group: &str, arm_type: &str) -> Option<String> {
    let ours = format!("{plural}.{group}");
    let theirs = format!("{plural}.{}", aso_group(arm_type));
    let group = group.to_ascii_lowercase();
    if ours.eq_ignore_ascii_case(&theirs) {
        Some(format!(
            "{ours} is the CRD Azure Service Operator installs for {arm_type}"
        ))
    } else if group == "azure.com" || group.ends_with(".azure.com") {
        Some(format!(
            "{ours} is in {group}, under azure.com, where Azure Service Operator names its groups"
        ))
    } else {
        None
    }
}

#[test]
fn the_collision_check_knows_azure_service_operators_names() {
    // CRD names Azure Service Operator installs (its reference pages and the CAPZ docs list them).
    for (plural, arm_type) in [
        ("managedclusters", "Microsoft.ContainerService/managedClusters"),
        (
            "userassignedidentities",
            "Microsoft.ManagedIdentity/userAssignedIdentities",
        ),
        ("roleassignments", "Microsoft.Authorization/roleAssignments"),
        ("resourcegroups", "Microsoft.Resources/resourceGroups"),
        ("virtualnetworks", "Microsoft.Network/virtualNetworks"),
    ] {
        let group = aso_group(arm_type);
        assert!(
            collision(plural, &group, arm_type).is_some(),
            "{plural}.{group} must collide"
        );
    }
    assert_eq!(
        aso_group("Microsoft.ContainerService/managedClusters"),
        "containerservice.azure.com"
    );
    // A group of another service, but still under azure.com, is refused too.
    assert!(
        collision(
            "agentpools",
            "compute.azure.com",
            "Microsoft.ContainerService/managedClusters/agentPools"
        )
        .is_some()
    );
    assert!(
        collision(
            "agentpools",
            "containerservice.armgen.dev",
            "Microsoft.ContainerService/managedClusters/agentPools"
        )
        .is_none()
    );
}

#[test]
fn no_generated_crd_collides_with_azure_service_operators() {
    assert!(!aks_api::KINDS.is_empty(), "the registry lists no kind");
    let mut failures = Vec::new();
    for kind in aks_api::KINDS {
        if let Some(why) = collision(kind.plural, kind.kube_group, kind.arm.arm_type) {
            failures.push(why);
        }
    }
    assert!(
        failures.is_empty(),
        "CRD names that Azure Service Operator uses:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_crd_manifest_is_named_and_grouped_as_the_registry_says() {
    // The manifests users install, template kinds included: each in a group of the registry, none colliding.
    let groups: BTreeSet<&str> = aks_api::KINDS.iter().map(|k| k.kube_group).collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/crds");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let crd: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if crd["kind"].as_str() != Some("CustomResourceDefinition") {
            continue; // the folder's kustomization.yaml
        }
        let name = crd["metadata"]["name"].as_str().expect("metadata.name");
        let group = crd["spec"]["group"].as_str().expect("spec.group");
        let plural = crd["spec"]["names"]["plural"].as_str().expect("spec.names.plural");
        assert_eq!(name, format!("{plural}.{group}"), "{}", path.display());
        assert!(
            groups.contains(group),
            "{}: group {group} is not in the registry",
            path.display()
        );
        // Template kinds have no ARM type of their own: check them as their group's provider.
        let provider = aks_api::KINDS
            .iter()
            .find(|k| k.kube_group == group)
            .map(|k| k.arm.arm_type)
            .expect("a kind of the group");
        assert_eq!(collision(plural, group, provider), None, "{}", path.display());
        seen += 1;
    }
    assert!(seen >= groups.len(), "{} manifests for {} groups", seen, groups.len());
}
