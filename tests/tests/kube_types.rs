//! The generated custom resources as Kubernetes objects: `kube_core::Resource`, `apiVersion`/`kind` on the
//! wire, the collections rule of the spec → ARM conversion, `operatorSpec` exports, and the config errors of
//! the `kubernetes` key.
//!
//! The typed tests use the `v2alpha1` (2025-10-01) types as a fixture: typed code names its version, and that
//! one has every field they use. Tests that iterate versions take them from the generation or the registry.

use crate::common;

use aks_api::containerservice::v2alpha1::{AgentPool, AgentPoolSpec, ManagedCluster, ManagedClusterSpec, arm};
use aks_api::containerservice::v2alpha1::{
    AgentPoolTemplate, ManagedClusterOperatorConfigMaps, ManagedClusterOperatorSecrets, ManagedClusterOperatorSpec,
    ManagedClusterTemplate,
};
use armgen_runtime::kube::{
    ArmIdsOnly, ConfigMapDestination, ExportExpression, KnownOwner, ResourceReference, SecretDestination,
    SecretReference,
};
use kube_core::Resource;
use serde_json::json;

/// What `kube::Api::<K>` requires of `K`.
fn usable_with_kube_api<K>()
where
    K: Resource<DynamicType = (), Scope = kube_core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::de::DeserializeOwned
        + serde::Serialize,
{
}

#[test]
fn custom_resources_are_kube_resources() {
    usable_with_kube_api::<ManagedCluster>();
    usable_with_kube_api::<AgentPool>();
    assert_eq!(ManagedCluster::kind(&()), "ManagedCluster");
    assert_eq!(ManagedCluster::group(&()), "containerservice.armgen.dev");
    assert_eq!(ManagedCluster::version(&()), "v2alpha1");
    assert_eq!(ManagedCluster::plural(&()), "managedclusters");
    assert_eq!(ManagedCluster::api_version(&()), "containerservice.armgen.dev/v2alpha1");
    assert_eq!(
        ManagedCluster::url_path(&(), Some("ns")),
        "/apis/containerservice.armgen.dev/v2alpha1/namespaces/ns/managedclusters"
    );
}

#[test]
fn api_version_and_kind_are_written_and_read() {
    let cr = ManagedCluster::new(
        "c1",
        ManagedClusterSpec {
            location: Some("westeurope".into()),
            ..Default::default()
        },
    );
    let value = serde_json::to_value(&cr).expect("serialize");
    assert_eq!(value["apiVersion"], "containerservice.armgen.dev/v2alpha1");
    assert_eq!(value["kind"], "ManagedCluster");
    assert_eq!(value["metadata"]["name"], "c1");
    assert_eq!(value["spec"], json!({"location": "westeurope"}));
    assert!(value.get("status").is_none());
    let back: ManagedCluster = serde_json::from_value(value).expect("deserialize");
    assert_eq!(back, cr);
}

#[test]
fn emptied_collections_are_sent_and_unset_ones_omitted() {
    let mut spec = ManagedClusterSpec {
        location: Some("westeurope".into()),
        ..Default::default()
    };
    let body = serde_json::to_value(spec.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert!(
        body.get("tags").is_none(),
        "unset tags are omitted (ARM leaves them unchanged): {body}"
    );
    spec.tags = Some(Default::default());
    let body = serde_json::to_value(spec.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert_eq!(body["tags"], json!({}), "emptied tags are sent as {{}}");

    let mut pool = AgentPoolSpec {
        owner: Some(KnownOwner { name: "c1".into() }),
        ..Default::default()
    };
    pool.node_taints = Some(Vec::new());
    let body = serde_json::to_value(pool.to_arm(&ArmIdsOnly).expect("to_arm")).expect("json");
    assert_eq!(
        body["properties"]["nodeTaints"],
        json!([]),
        "emptied taints are sent as []"
    );
    assert!(
        body["properties"].get("nodeLabels").is_none(),
        "unset labels are omitted"
    );
}

#[test]
fn references_resolve_through_the_resolver() {
    let mut spec = ManagedClusterSpec {
        location: Some("westeurope".into()),
        ..Default::default()
    };
    spec.disk_encryption_set_id = Some(ResourceReference::arm_id(
        "/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/diskEncryptionSets/d",
    ));
    spec.service_principal_profile = Some(
        aks_api::containerservice::v2alpha1::spec::ManagedClusterServicePrincipalProfile {
            client_id: Some("app".into()),
            secret: Some(SecretReference {
                name: "sp".into(),
                key: "password".into(),
            }),
        },
    );
    let body: arm::ManagedCluster = spec.to_arm(&ArmIdsOnly).expect("to_arm");
    let props = body.properties.expect("properties");
    assert_eq!(
        props.disk_encryption_set_id.as_deref(),
        Some("/subscriptions/s/resourceGroups/r/providers/Microsoft.Compute/diskEncryptionSets/d")
    );
    let sp = props.service_principal_profile.expect("service principal");
    assert_eq!(
        sp.secret.as_deref(),
        Some("$secret:sp/password"),
        "ArmIdsOnly marks unresolved secrets"
    );

    // A reference to another custom resource needs a cluster: a clear error naming the field.
    spec.disk_encryption_set_id = Some(ResourceReference {
        kind: Some("DiskEncryptionSet".into()),
        name: Some("d".into()),
        ..Default::default()
    });
    let err = spec.to_arm(&ArmIdsOnly).expect_err("unresolvable");
    assert_eq!(err.path, "spec.diskEncryptionSetID");

    // A required property left unset is an error naming it.
    let err = ManagedClusterSpec::default()
        .to_arm(&ArmIdsOnly)
        .expect_err("location is required");
    assert_eq!(err.path, "spec.location");
}

#[test]
fn operator_spec_declares_the_exports_and_is_not_sent_to_azure() {
    let secrets: Vec<(&str, &str, &str, bool)> = ManagedCluster::SECRET_EXPORTS
        .iter()
        .map(|e| (e.name, e.action, e.value_path, e.base64))
        .collect();
    assert_eq!(
        secrets,
        [
            (
                "adminCredentials",
                "listClusterAdminCredential",
                "kubeconfigs[0].value",
                true
            ),
            (
                "userCredentials",
                "listClusterUserCredential",
                "kubeconfigs[0].value",
                true
            ),
        ]
    );
    assert_eq!(
        ManagedCluster::CONFIG_MAP_EXPORTS,
        [
            ("oidcIssuerUrl", "properties.oidcIssuerProfile.issuerURL"),
            ("principalId", "identity.principalId"),
        ]
    );
    assert!(AgentPool::SECRET_EXPORTS.is_empty() && AgentPool::CONFIG_MAP_EXPORTS.is_empty());

    let plain = ManagedClusterSpec {
        location: Some("westeurope".into()),
        ..Default::default()
    };
    let with_exports = ManagedClusterSpec {
        operator_spec: Some(ManagedClusterOperatorSpec {
            secrets: Some(ManagedClusterOperatorSecrets {
                admin_credentials: Some(SecretDestination {
                    name: "aks1-admin".into(),
                    key: "kubeconfig".into(),
                }),
                user_credentials: None,
            }),
            config_maps: Some(ManagedClusterOperatorConfigMaps {
                oidc_issuer_url: Some(ConfigMapDestination {
                    name: "aks1-info".into(),
                    key: "issuer".into(),
                }),
                principal_id: None,
            }),
            config_map_expressions: Some(vec![ExportExpression {
                name: "aks1-info".into(),
                key: "endpoint".into(),
                value: "self.status.fqdn + \":443\"".into(),
            }]),
            secret_expressions: None,
        }),
        ..plain.clone()
    };
    // The custom resource carries it, under its JSON names.
    let cr = serde_json::to_value(ManagedCluster::new("c1", with_exports.clone())).expect("serialize");
    assert_eq!(
        cr["spec"]["operatorSpec"],
        json!({
            "secrets": {"adminCredentials": {"name": "aks1-admin", "key": "kubeconfig"}},
            "configMaps": {"oidcIssuerUrl": {"name": "aks1-info", "key": "issuer"}},
            "configMapExpressions": [{"name": "aks1-info", "key": "endpoint", "value": "self.status.fqdn + \":443\""}],
        })
    );
    let back: ManagedCluster = serde_json::from_value(cr.clone()).expect("deserialize");
    assert_eq!(back.spec, with_exports);
    // The ARM body does not: the same as without exports, and no trace of them in the JSON.
    let a = with_exports.to_arm(&ArmIdsOnly).expect("to_arm");
    assert_eq!(a, plain.to_arm(&ArmIdsOnly).expect("to_arm"));
    let text = serde_json::to_string(&a).expect("json");
    for word in ["operatorSpec", "aks1-admin", "aks1-info", "kubeconfig", "endpoint"] {
        assert!(!text.contains(word), "{word} reached the ARM body: {text}");
    }
    // Export through the dispatcher ignores it too; import leaves it unset.
    let exported = aks_api::export_custom_resource(
        &common::aks_group().name,
        "v2alpha1",
        "ManagedCluster",
        &cr,
        &ArmIdsOnly,
    )
    .expect("kind")
    .expect("export");
    assert!(!exported.to_string().contains("operatorSpec"));
    assert_eq!(ManagedClusterSpec::from_arm(&a).operator_spec, None);
}

/// `generate` on the real specs with azure-arm.yaml edited by `edit`: the error message.
fn config_error(edit: &dyn Fn(&str) -> String) -> String {
    let root = common::spec_root();
    let text = std::fs::read_to_string(common::workspace().join("azure-arm.yaml")).expect("config");
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("azure-arm.yaml");
    std::fs::write(&path, edited).expect("write");
    match armgen::Builder::new(&path).specs(root).generate() {
        Ok(_) => panic!("generate accepted the edited config"),
        Err(e) => e.to_string(),
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_config_map_export_path_missing_from_a_version_is_a_config_error() {
    let message = config_error(&|t| t.replace("identity.principalId", "identity.principalID"));
    assert!(
        message.contains(
            "config key `groups.containerservice.kubernetes.resources.ManagedCluster.configMaps.principalId`"
        ) && message.contains("no property principalID under identity"),
        "{message}"
    );
    // A path to an object is not a value.
    let message = config_error(&|t| t.replace("identity.principalId", "properties.oidcIssuerProfile"));
    assert!(
        message.contains("configMaps.principalId") && message.contains("not a single value"),
        "{message}"
    );
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn an_unknown_kind_under_kubernetes_resources_is_a_config_error() {
    let message = config_error(&|t| t.replace("        ManagedCluster:\n", "        ManagedClusters:\n"));
    assert!(
        message.contains("config key `groups.containerservice.kubernetes.resources.ManagedClusters`")
            && message.contains("no version of the specs has this kind"),
        "{message}"
    );
    let message = config_error(&|t| t.replace("adminCredentials:\n", "admin-credentials:\n"));
    assert!(
        message.contains("kubernetes.resources.ManagedCluster.secrets.admin-credentials")
            && message.contains("lowerCamelCase"),
        "{message}"
    );
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn a_secret_export_action_the_resource_lacks_is_a_config_error() {
    let message = config_error(&|t| t.replace("action: listClusterAdminCredential", "action: listClusterKubeconfig"));
    assert!(
        message.contains(
            "config key `groups.containerservice.kubernetes.resources.ManagedCluster.secrets.adminCredentials.action`"
        ) && message.contains("ManagedCluster has no POST action listClusterKubeconfig")
            && message.contains("listClusterAdminCredential, "),
        "{message}"
    );
}

#[test]
fn template_kinds_are_kube_resources_holding_the_spec() {
    usable_with_kube_api::<ManagedClusterTemplate>();
    usable_with_kube_api::<AgentPoolTemplate>();
    usable_with_kube_api::<aks_api::containerservice::v1beta1::ManagedClusterTemplate>();
    assert_eq!(ManagedClusterTemplate::kind(&()), "ManagedClusterTemplate");
    assert_eq!(ManagedClusterTemplate::group(&()), "containerservice.armgen.dev");
    assert_eq!(ManagedClusterTemplate::version(&()), "v2alpha1");
    assert_eq!(ManagedClusterTemplate::plural(&()), "managedclustertemplates");
    assert_eq!(AgentPoolTemplate::plural(&()), "agentpooltemplates");
    assert_eq!(
        AgentPoolTemplate::url_path(&(), Some("ns")),
        "/apis/containerservice.armgen.dev/v2alpha1/namespaces/ns/agentpooltemplates"
    );

    let spec = ManagedClusterSpec {
        location: Some("westeurope".into()),
        kubernetes_version: Some("1.33".into()),
        ..Default::default()
    };
    let t = ManagedClusterTemplate::new("standard", spec.clone());
    let value = serde_json::to_value(&t).expect("serialize");
    assert_eq!(
        value,
        json!({
            "apiVersion": "containerservice.armgen.dev/v2alpha1",
            "kind": "ManagedClusterTemplate",
            "metadata": {"name": "standard"},
            "spec": {"template": {"spec": {"location": "westeurope", "kubernetesVersion": "1.33"}}},
        })
    );
    let back: ManagedClusterTemplate = serde_json::from_value(value).expect("deserialize");
    assert_eq!(back, t);
    // A cluster made from the template gets its spec, which converts as any spec does.
    let cluster = ManagedCluster::new("c1", back.spec.template.spec.clone());
    assert_eq!(cluster.spec, spec);
    assert_eq!(cluster.spec.to_arm(&ArmIdsOnly).expect("to_arm").location, "westeurope");
}

/// `text` (azure-arm.yaml) with the first `from` in the AKS group's entry (provider `Microsoft.ContainerService`)
/// replaced by `to`: an edit of that group only, whatever other groups the config has.
fn in_aks_group(text: &str, from: &str, to: &str) -> String {
    let header = format!("\n  {}:\n", common::aks_group().name);
    let start = text.find(&header).expect("the AKS group in azure-arm.yaml") + header.len();
    // The group's entry ends where the next key of `groups` (two spaces of indentation) starts.
    let end = text[start..]
        .match_indices('\n')
        .map(|(i, _)| start + i + 1)
        .find(|&i| {
            let line = &text[i..];
            line.starts_with("  ") && line[2..].starts_with(|c: char| c.is_ascii_alphanumeric())
        })
        .unwrap_or(text.len());
    let entry = &text[start..end];
    assert!(entry.contains(from), "no {from:?} in the AKS group's entry");
    format!("{}{}{}", &text[..start], entry.replacen(from, to, 1), &text[end..])
}

/// `generate` on the real specs with azure-arm.yaml edited by `edit`.
fn generate_with(edit: &dyn Fn(&str) -> String) -> armgen::Generation {
    let root = common::spec_root();
    let text = std::fs::read_to_string(common::workspace().join("azure-arm.yaml")).expect("config");
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("azure-arm.yaml");
    std::fs::write(&path, edited).expect("write");
    armgen::Builder::new(&path).specs(root).generate().expect("generate")
}

/// The `omit_empty` flag of the spec field `json` of the AKS resource `kind` (root) or of the spec type `ty`.
fn omit_flags(g: &armgen::Generation, version: &str, owner: &str, json: &str) -> bool {
    let kube = &g.kubes[&format!("{}/{version}", common::aks_group().name)];
    let fields = match kube.resources.iter().find(|r| r.kind == owner) {
        Some(r) => &r.spec_fields,
        None => {
            &kube
                .types
                .values()
                .find(|t| t.family == armgen::shape::Family::Spec && t.rust_name == owner)
                .unwrap_or_else(|| panic!("no spec type {owner}"))
                .fields
        }
    };
    fields
        .iter()
        .find(|f| f.json_name == json)
        .unwrap_or_else(|| panic!("{owner} has no spec field {json}"))
        .omit_empty
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn empty_collections_follow_the_group_default_and_property_overrides() {
    const FILTER: &str = ".filter(|v| !v.is_empty())";
    let root = common::spec_root();
    // The configured default, `send`: no collection is filtered (the behaviour tested above on the real types).
    let g = armgen::Builder::new(common::workspace().join("azure-arm.yaml"))
        .specs(root)
        .generate()
        .expect("generate");
    for (path, text) in &g.files {
        assert!(
            !text.contains(FILTER),
            "{}: an empty collection is omitted",
            path.display()
        );
    }

    // `omit` for the AKS group, and nodeTaints (declared by ManagedClusterAgentPoolProfileProperties, inherited by
    // ManagedClusterAgentPoolProfile) back to `send`.
    let g = generate_with(&|t| {
        in_aks_group(
            &in_aks_group(
                t,
                "    kubernetes:\n",
                "    kubernetes:\n      emptyCollections: omit\n",
            ),
            "        ManagedClusterAgentPoolProfileProperties:\n          properties:\n",
            "        ManagedClusterAgentPoolProfileProperties:\n          properties:\n            \
             nodeTaints: { emptyCollection: send }\n",
        )
    });
    // The other groups keep the default, `send`.
    let aks = common::aks_group();
    // Each version's module tree, wherever the layout puts it (`Generation::version_dirs`).
    let other_groups: Vec<&std::path::PathBuf> = g
        .version_dirs
        .iter()
        .filter(|(key, _)| !key.starts_with(&format!("{}/", aks.name)))
        .map(|(_, dir)| dir)
        .collect();
    assert!(!other_groups.is_empty(), "no group besides {}", aks.name);
    for (path, text) in &g.files {
        if other_groups.iter().any(|dir| path.starts_with(dir)) {
            assert!(
                !text.contains(FILTER),
                "{}: an empty collection is omitted",
                path.display()
            );
        }
    }
    // Every AKS version that has both kinds (from the generation, i.e. azure-arm.yaml).
    let versions: Vec<&str> = g
        .kubes
        .values()
        .filter(|k| {
            k.group == aks.kube_group
                && ["ManagedCluster", "AgentPool"]
                    .iter()
                    .all(|kind| k.resources.iter().any(|r| r.kind == *kind))
        })
        .map(|k| k.version.as_str())
        .collect();
    assert!(!versions.is_empty(), "no version has ManagedCluster and AgentPool");
    for version in versions {
        assert!(omit_flags(&g, version, "ManagedCluster", "tags"), "{version} tags");
        assert!(
            !omit_flags(&g, version, "ManagedCluster", "location"),
            "{version}: not a collection"
        );
        assert!(
            omit_flags(&g, version, "AgentPool", "nodeLabels"),
            "{version} nodeLabels"
        );
        assert!(
            !omit_flags(&g, version, "AgentPool", "nodeTaints"),
            "{version} nodeTaints"
        );
        assert!(omit_flags(&g, version, "ManagedClusterAgentPoolProfile", "nodeLabels"));
        assert!(
            !omit_flags(&g, version, "ManagedClusterAgentPoolProfile", "nodeTaints"),
            "inherited override"
        );

        // Compared without whitespace: prettyplease decides the line breaks.
        let squash = |t: &str| t.split_whitespace().collect::<String>();
        let dir = &g.version_dirs[&format!("{}/{version}", aks.name)];
        let file = |name: &str| dir.join(name);
        let pool = squash(&g.files[&file("agent_pool.rs")]);
        let has = |text: &str, code: &str| text.contains(&squash(code));
        assert!(has(&pool, &format!("node_labels: self.node_labels.clone(){FILTER},")));
        assert!(has(&pool, "node_taints: self.node_taints.clone(),"));
        // The envelope is sent only when a field in it is: an empty omitted collection does not count.
        assert!(has(&pool, "self.node_labels.as_ref().is_some_and(|v| !v.is_empty())"));
        assert!(has(&pool, "self.node_taints.is_some()"));
        let cluster = squash(&g.files[&file("managed_cluster.rs")]);
        assert!(has(&cluster, &format!("tags: self.tags.clone(){FILTER},")));
        // A collection converted item by item: filtered before the conversion.
        assert!(has(
            &cluster,
            &format!("match self.agent_pool_profiles.as_ref(){FILTER} {{")
        ));
    }
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn an_empty_collection_override_on_a_scalar_is_a_config_error() {
    let message = config_error(&|t| {
        t.replacen(
            "count: { diffIgnoredWhen:",
            "count: { emptyCollection: omit, diffIgnoredWhen:",
            1,
        )
    });
    assert!(
        message.contains(
            "config key `groups.containerservice.overrides.types.ManagedClusterAgentPoolProfileProperties.properties.\
             count.emptyCollection`"
        ) && message.contains("not an array or a map"),
        "{message}"
    );
    let message = config_error(&|t| {
        in_aks_group(
            t,
            "    kubernetes:\n",
            "    kubernetes:\n      emptyCollections: never\n",
        )
    });
    assert!(
        message.contains("groups.containerservice.kubernetes.emptyCollections"),
        "{message}"
    );
}

/// `crd()` of the types of two versions (a fixture: the typed API names its version) gives the committed
/// multi-version manifest.
#[test]
fn crd_returns_the_committed_manifest_of_each_kind() {
    // Every kind of the registry, at every version that has it, and its template kind where it has one: the
    // committed manifest, storing the kind's storage version.
    for info in aks_api::KINDS {
        let template = format!("{}Template", info.kind);
        for (kind, plural) in [
            (info.kind.to_string(), info.plural.to_string()),
            (template.clone(), format!("{}s", template.to_ascii_lowercase())),
        ] {
            let Some(crd) = aks_api::custom_resource_definition(info.kube_group, &kind) else {
                assert_ne!(kind, info.kind, "every kind has a CRD");
                continue;
            };
            let crd = crd.unwrap_or_else(|e| panic!("{kind}: {e}"));
            assert_eq!(
                crd.metadata.name.as_deref(),
                Some(format!("{plural}.{}", info.kube_group).as_str())
            );
            assert_eq!(crd.spec.names.plural, plural);
            let stored: Vec<&str> = crd
                .spec
                .versions
                .iter()
                .filter(|v| v.storage)
                .map(|v| v.name.as_str())
                .collect();
            let storage = aks_api::KINDS
                .iter()
                .find(|k| k.kube_group == info.kube_group && k.kind == info.kind && k.storage)
                .expect("a storage version");
            assert_eq!(stored, [storage.version], "{plural}");
            let text = std::fs::read_to_string(
                common::workspace().join(format!("generated/crds/{plural}.{}.yaml", info.kube_group)),
            )
            .expect("committed manifest");
            let committed: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition =
                serde_yaml_ng::from_str(&text).expect("yaml");
            assert_eq!(crd, committed, "{plural}");
        }
    }
    // The typed accessor is the same manifest.
    assert_eq!(
        aks_api::containerservice::v2alpha1::ManagedCluster::crd().expect("crd"),
        aks_api::custom_resource_definition(&common::aks_group().kube_group, "ManagedCluster")
            .expect("ManagedCluster")
            .expect("crd")
    );
}

#[test]
#[cfg_attr(spec_root_missing, ignore = "needs the spec root: set AZURE_REST_API_SPECS")]
fn action_entries_of_the_config_are_checked() {
    // A nested action (a path parameter of its own) that is not excluded: the error names the key to add.
    let message = config_error(&|t| {
        t.lines()
            .filter(|l| !l.contains("accessProfiles/{roleName}/listCredential:"))
            .map(|l| format!("{l}\n"))
            .collect()
    });
    assert!(
        message.contains(
            "config key `groups.containerservice.kubernetes.resources.ManagedCluster.actions.exclude.accessProfiles/{roleName}/listCredential`"
        ) && message.contains("cannot be an action kind"),
        "{message}"
    );
    // An exclusion without a reason.
    let message = config_error(&|t| {
        t.replace(
            r#"listClusterUserCredential: "returns credentials: the Secret export userCredentials""#,
            r#"listClusterUserCredential: " ""#,
        )
    });
    assert!(
        message.contains("actions.exclude.listClusterUserCredential") && message.contains("say why"),
        "{message}"
    );
    // An exclusion of an action no version has.
    let message = config_error(&|t| {
        t.replace(
            "listClusterUserCredential: \"returns",
            "listClusterUsrCredential: \"returns",
        )
    });
    assert!(
        message.contains("actions.exclude.listClusterUsrCredential") && message.contains("matches nothing"),
        "{message}"
    );
}
