//! The generated kinds ([`aks_api::KINDS`]) looked up by name, and their Kubernetes API resources. A leaf: it
//! depends on no other module of the crate.

use armgen_runtime::KindInfo;
use kube::api::ApiResource;

/// The `ApiResource` of a generated kind.
pub fn api_resource(info: &KindInfo) -> ApiResource {
    ApiResource {
        group: info.kube_group.to_string(),
        version: info.version.to_string(),
        api_version: info.api_version(),
        kind: info.kind.to_string(),
        plural: info.plural.to_string(),
    }
}

/// A generated kind by group, version and kind name.
pub fn find_kind(kube_group: &str, version: &str, kind: &str) -> Option<&'static KindInfo> {
    aks_api::KINDS
        .iter()
        .find(|k| k.kube_group == kube_group && k.version == version && k.kind.eq_ignore_ascii_case(kind))
}

/// The served kind of resource groups (`Microsoft.Resources/resourceGroups`), if generated: a resource-group-scoped
/// object whose `spec.owner.name` names an object of this kind waits for it.
pub fn resource_group_kind() -> Option<&'static KindInfo> {
    let matches = |k: &&KindInfo| {
        k.served
            && k.arm
                .arm_type
                .eq_ignore_ascii_case("Microsoft.Resources/resourceGroups")
    };
    aks_api::KINDS
        .iter()
        .filter(matches)
        .find(|k| k.storage)
        .or_else(|| armgen_runtime::newest(aks_api::KINDS, |k| matches(&k)))
}

/// The kind `kind` of API group `kube_group` at a version to read it at, for references across groups and versions
/// (the API server converts): its storage version, else its newest served one.
pub fn find_served_kind(kube_group: &str, kind: &str) -> Option<&'static KindInfo> {
    let matches = |k: &&KindInfo| k.kube_group == kube_group && k.kind.eq_ignore_ascii_case(kind) && k.served;
    aks_api::KINDS
        .iter()
        .filter(matches)
        .find(|k| k.storage)
        .or_else(|| armgen_runtime::newest(aks_api::KINDS, |k| matches(&k)))
}
