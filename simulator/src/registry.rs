//! The resource types the simulator serves, built from the registry of kinds ([`aks_api::KINDS`] unless
//! [`crate::Simulator::with_kinds`] names another), and URL matching against their PUT path templates.
//!
//! A template is a list of segments, each a literal (matched case-insensitively, as ARM does) or a parameter
//! (any non-empty segment). Three shapes of template are told apart by the template alone:
//!
//! - **Provider resources** (`/subscriptions/{s}/resourceGroups/{rg}/providers/{namespace}/{type}/{name}`, and
//!   child types below them): a path matches when it has as many segments as the template and each segment
//!   matches.
//! - **Resources without a `providers` segment** (resource groups:
//!   `/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}`, ARM type
//!   `Microsoft.Resources/resourceGroups`): matched the same way. The literals ARM names IDs with
//!   (`subscriptions`, `resourceGroups`, `providers`) take ARM's casing in IDs whatever the spec writes, so the
//!   ID of a resource group is `/subscriptions/{s}/resourceGroups/{name}`.
//! - **Extension resources** (`/{scope}/providers/Microsoft.Authorization/roleAssignments/{name}`): a leading
//!   `{scope}` stands for any ARM resource ID, one or more segments (`/subscriptions/{s}`, a resource group, a
//!   resource, a child resource). A path matches when it ends with the rest of the template and what comes
//!   before is shaped like a resource ID (an even number of non-empty segments, as every ARM ID has: type/name
//!   pairs, `providers/{namespace}` counting as one). The ID is `<scope>/providers/...`, the scope keeping the
//!   casing of the served type it names (else ARM's casing of `subscriptions`, `resourceGroups`, `providers`).
//!
//! Templates without a scope are tried before templates with one, so a path that is a provider resource (a
//! managed cluster) never matches an extension type. Resources win over collections, collections over views (a
//! held resource's ID followed by the path of one of its type's views of [`aks_api::VIEWS`],
//! `…/upgradeProfiles/default`), views over actions.

use armgen_runtime::{KindInfo, ViewInfo};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segment {
    Literal(&'static str),
    Param,
    /// A leading `{scope}`: any resource ID (one or more segments). Only ever first in a template.
    Scope,
}

/// The fewest segments of a scope: `/subscriptions/{s}`.
const MIN_SCOPE: usize = 2;

/// The literals of resource IDs that ARM writes with one casing, whatever the spec writes.
const ID_LITERALS: &[&str] = &["subscriptions", "resourceGroups", "providers"];

/// The literal with ARM's casing of IDs when it is one of [`ID_LITERALS`].
fn id_literal(s: &str) -> Option<&'static str> {
    ID_LITERALS.iter().copied().find(|l| l.eq_ignore_ascii_case(s))
}

/// Whether `segs` is an instance of `template` (no scope in it).
fn matches_fixed(template: &[Segment], segs: &[&str]) -> bool {
    segs.len() == template.len()
        && template.iter().zip(segs).all(|(t, s)| match t {
            Segment::Literal(l) => l.eq_ignore_ascii_case(s),
            Segment::Param => !s.is_empty(),
            Segment::Scope => false,
        })
}

/// Whether `segs` is shaped like a resource ID: type/name pairs of non-empty segments.
fn is_resource_id(segs: &[&str]) -> bool {
    segs.len() >= MIN_SCOPE && segs.len() % 2 == 0 && segs.iter().all(|s| !s.is_empty())
}

/// One ARM resource type (one PUT path template) with every API version that serves it.
#[derive(Debug)]
pub(crate) struct ResourceType {
    pub arm_type: &'static str,
    pub template: Vec<Segment>,
    pub versions: Vec<&'static KindInfo>,
    /// The views of the type (read-only GETs under its resources), by path.
    pub views: Vec<ViewRoute>,
}

/// A view path of a resource type (`upgradeProfiles/default`) and the API versions that serve it.
#[derive(Debug)]
pub(crate) struct ViewRoute {
    /// The path after the resource's ID, as the first view of the registry with it spells it.
    pub path: &'static str,
    segments: Vec<&'static str>,
    /// Each view of the registry with this path, and its kind (one per API version).
    pub infos: Vec<(&'static ViewInfo, &'static KindInfo)>,
}

impl ViewRoute {
    /// The view and kind at `api_version`.
    pub fn version(&self, api_version: &str) -> Option<(&'static ViewInfo, &'static KindInfo)> {
        self.infos
            .iter()
            .copied()
            .find(|(_, k)| k.arm.api_version == api_version)
    }

    pub fn supported_versions(&self) -> String {
        let mut v: Vec<&str> = self.infos.iter().map(|(_, k)| k.arm.api_version).collect();
        v.sort_unstable();
        v.join(", ")
    }

    /// Whether `segs` (the path's last segments) are this view's path, case-insensitively.
    fn matches(&self, segs: &[&str]) -> bool {
        segs.len() == self.segments.len() && self.segments.iter().zip(segs).all(|(a, b)| a.eq_ignore_ascii_case(b))
    }
}

impl ResourceType {
    pub fn version(&self, api_version: &str) -> Option<&'static KindInfo> {
        self.versions.iter().copied().find(|k| k.arm.api_version == api_version)
    }

    pub fn supported_versions(&self) -> String {
        let mut v: Vec<&str> = self.versions.iter().map(|k| k.arm.api_version).collect();
        v.sort_unstable();
        v.join(", ")
    }

    /// The namespace, e.g. `Microsoft.ContainerService`.
    pub fn namespace(&self) -> &'static str {
        self.arm_type.split('/').next().unwrap_or(self.arm_type)
    }

    /// The literal segment naming the collection of this type under its parent (`agentPools`).
    pub fn collection(&self) -> Option<&'static str> {
        match self.template.iter().rev().nth(1) {
            Some(Segment::Literal(l)) => Some(l),
            _ => None,
        }
    }

    /// How many ancestors (parent resources) the type has.
    pub fn depth(&self) -> usize {
        self.arm_type.matches('/').count().saturating_sub(1)
    }

    /// Whether the type is an extension resource (its template starts with `{scope}`).
    pub fn is_extension(&self) -> bool {
        self.template.first() == Some(&Segment::Scope)
    }

    /// The scope ID of an extension resource's ID (the ID without the template's segments after `{scope}`);
    /// `None` for other types.
    pub fn scope_of<'i>(&self, id: &'i str) -> Option<&'i str> {
        if !self.is_extension() {
            return None;
        }
        let mut cut = id.len();
        for _ in 1..self.template.len() {
            cut = id[..cut].rfind('/')?;
        }
        Some(&id[..cut])
    }

    /// How many leading segments of `segs` the scope takes when `segs` is an instance of `template` (this
    /// type's template or a prefix of it): `Some(0)` for a template without a scope.
    fn instance(template: &[Segment], segs: &[&str]) -> Option<usize> {
        match template.split_first() {
            Some((Segment::Scope, rest)) => {
                let n = segs.len().checked_sub(rest.len())?;
                (is_resource_id(&segs[..n]) && matches_fixed(rest, &segs[n..])).then_some(n)
            }
            _ => matches_fixed(template, segs).then_some(0),
        }
    }

    /// The path with the template's literal casing (ARM's for [`ID_LITERALS`]) and the request's parameter
    /// values; the scope is `scope` (already canonical). `segs` is an instance of `template`, its first
    /// `scope_len` segments the scope.
    fn canonical(template: &[Segment], segs: &[&str], scope_len: usize, scope: &str) -> String {
        let mut out = scope.to_string();
        let literals = if scope_len > 0 { &template[1..] } else { template };
        for (t, s) in literals.iter().zip(&segs[scope_len..]) {
            out.push('/');
            out.push_str(match t {
                Segment::Literal(l) => l,
                Segment::Param | Segment::Scope => s,
            });
        }
        out
    }
}

/// What a URL path under `/subscriptions/` names.
#[derive(Debug)]
pub(crate) enum Target<'a> {
    /// One resource: its canonical ID and name.
    Resource {
        ty: &'a ResourceType,
        id: String,
        name: String,
    },
    /// The collection of resources of a type under one parent (or resource group, or scope).
    Collection { ty: &'a ResourceType, prefix: String },
    /// `GET {resource}/{view path}`: a view of the resource's type ([`aks_api::VIEWS`]).
    View {
        ty: &'a ResourceType,
        /// The canonical ID of the resource.
        id: String,
        view: &'a ViewRoute,
    },
    /// `POST {resource}/{action}`.
    Action {
        ty: &'a ResourceType,
        id: String,
        name: String,
        action: String,
    },
    /// An asynchronous operation's status (`operations`) or result (`operationresults`) URL.
    Operation { id: String, result: bool },
}

#[derive(Debug)]
pub(crate) struct Registry {
    pub types: Vec<ResourceType>,
}

impl Registry {
    /// The types of `kinds`, with the `views` whose kind (group, version, kind) is one of them.
    pub fn new(kinds: &'static [KindInfo], views: &'static [ViewInfo]) -> Self {
        let mut types: Vec<ResourceType> = Vec::new();
        for k in kinds {
            let template: Vec<Segment> = k
                .arm
                .path
                .split('/')
                .filter(|s| !s.is_empty())
                .enumerate()
                .map(|(i, s)| match (i, s.starts_with('{')) {
                    // A template starting with a parameter (`{scope}`, `{resourceUri}`) is an extension type's.
                    (0, true) => Segment::Scope,
                    (_, true) => Segment::Param,
                    (_, false) => Segment::Literal(id_literal(s).unwrap_or(s)),
                })
                .collect();
            match types
                .iter_mut()
                .find(|t| t.arm_type == k.arm.arm_type && t.template == template)
            {
                Some(t) => t.versions.push(k),
                None => types.push(ResourceType {
                    arm_type: k.arm.arm_type,
                    template,
                    versions: vec![k],
                    views: Vec::new(),
                }),
            }
        }
        for v in views {
            // A view of a kind not served here (another registry's) is left out.
            let Some((ty, kind)) = types.iter_mut().find_map(|t| {
                let kind = t
                    .versions
                    .iter()
                    .copied()
                    .find(|k| k.group == v.group && k.version == v.version && k.kind == v.kind)?;
                Some((t, kind))
            }) else {
                continue;
            };
            let segments: Vec<&'static str> = v.path.split('/').filter(|s| !s.is_empty()).collect();
            if segments.is_empty() {
                continue;
            }
            match ty.views.iter_mut().find(|r| r.matches(&segments)) {
                Some(route) => route.infos.push((v, kind)),
                None => ty.views.push(ViewRoute {
                    path: v.path,
                    segments,
                    infos: vec![(v, kind)],
                }),
            }
        }
        Self { types }
    }

    /// The kind `kind` of API group `group` at Kubernetes version `version`.
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&'static KindInfo> {
        self.types
            .iter()
            .flat_map(|t| t.versions.iter().copied())
            .find(|k| k.group == group && k.version == version && k.kind == kind)
    }

    /// The resource type of a kind.
    pub fn type_of(&self, kind: &KindInfo) -> Option<&ResourceType> {
        self.types.iter().find(|t| t.versions.contains(&kind))
    }

    /// The types in the order paths are tried: those without a scope first.
    fn ordered(&self) -> impl Iterator<Item = &ResourceType> {
        let fixed = self.types.iter().filter(|t| !t.is_extension());
        fixed.chain(self.types.iter().filter(|t| t.is_extension()))
    }

    /// The canonical ID of `segs`, an instance of `template` (a prefix of `ty`'s) whose scope is `scope_len`
    /// segments long.
    fn canonical(&self, template: &[Segment], segs: &[&str], scope_len: usize) -> String {
        let scope = if scope_len > 0 {
            self.canonical_scope(&segs[..scope_len])
        } else {
            String::new()
        };
        ResourceType::canonical(template, segs, scope_len, &scope)
    }

    /// The canonical form of a scope: the ID of the served resource it names, else the path with ARM's casing
    /// of [`ID_LITERALS`] in type positions.
    fn canonical_scope(&self, segs: &[&str]) -> String {
        if let Some((_, id)) = self.match_resource(segs) {
            return id;
        }
        let mut out = String::new();
        for (i, s) in segs.iter().enumerate() {
            out.push('/');
            out.push_str(id_literal(s).filter(|_| i % 2 == 0).unwrap_or(s));
        }
        out
    }

    /// The type and canonical ID of the resource `segs` names.
    fn match_resource(&self, segs: &[&str]) -> Option<(&ResourceType, String)> {
        self.ordered().find_map(|ty| {
            let n = ResourceType::instance(&ty.template, segs)?;
            Some((ty, self.canonical(&ty.template, segs, n)))
        })
    }

    /// Matches a path (without query). Resources win over collections, collections over views, views over
    /// actions; within each, types without a scope win over extension types.
    pub fn match_path<'a>(&'a self, path: &str) -> Option<Target<'a>> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if let Some(op) = match_operation(&segs) {
            return Some(op);
        }
        if let Some((ty, id)) = self.match_resource(&segs) {
            let name = segs.last().copied().unwrap_or_default().to_string();
            return Some(Target::Resource { ty, id, name });
        }
        let collection = self.ordered().find_map(|ty| {
            let (Segment::Param, prefix) = ty.template.split_last()? else {
                return None;
            };
            let n = ResourceType::instance(prefix, &segs)?;
            Some(Target::Collection {
                ty,
                prefix: self.canonical(prefix, &segs, n),
            })
        });
        if collection.is_some() {
            return collection;
        }
        if let Some(view) = self.match_view(&segs) {
            return Some(view);
        }
        let (action, resource) = segs.split_last()?;
        if action.is_empty() || resource.is_empty() {
            return None;
        }
        let (ty, id) = self.match_resource(resource)?;
        Some(Target::Action {
            ty,
            id,
            name: resource.last().copied().unwrap_or_default().to_string(),
            action: action.to_string(),
        })
    }

    /// A resource's ID followed by the path of one of its type's views.
    fn match_view<'a>(&'a self, segs: &[&str]) -> Option<Target<'a>> {
        let longest = self
            .types
            .iter()
            .flat_map(|t| t.views.iter().map(|v| v.segments.len()))
            .max()?;
        (1..=longest.min(segs.len().saturating_sub(1))).find_map(|n| {
            let (resource, path) = segs.split_at(segs.len() - n);
            let (ty, id) = self.match_resource(resource)?;
            let view = ty.views.iter().find(|v| v.matches(path))?;
            Some(Target::View { ty, id, view })
        })
    }
}

/// `/subscriptions/{sub}/providers/{namespace}/locations/{location}/operations|operationresults/{id}`.
fn match_operation(segs: &[&str]) -> Option<Target<'static>> {
    if segs.len() == 8
        && segs[0].eq_ignore_ascii_case("subscriptions")
        && segs[2].eq_ignore_ascii_case("providers")
        && segs[4].eq_ignore_ascii_case("locations")
        && !segs[7].is_empty()
    {
        let result = if segs[6].eq_ignore_ascii_case("operationresults") {
            true
        } else if segs[6].eq_ignore_ascii_case("operations") {
            false
        } else {
            return None;
        };
        return Some(Target::Operation {
            id: segs[7].to_string(),
            result,
        });
    }
    None
}

/// The ARM type a path names, as ARM spells it in `InvalidResourceType` (`namespace/type[/childType]`), and
/// the namespace; `None` when the path has no `providers/{namespace}/{type}` part. Of an extension resource's
/// path the last `providers` part counts.
pub(crate) fn guess_type(path: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let i = segs.iter().rposition(|s| s.eq_ignore_ascii_case("providers"))?;
    let ns = segs.get(i + 1)?;
    let types: Vec<&str> = segs.iter().skip(i + 2).step_by(2).copied().collect();
    if types.is_empty() {
        return None;
    }
    Some((format!("{ns}/{}", types.join("/")), ns.to_string()))
}

/// The `(subscription, resource group)` of a resource ID (`/subscriptions/{s}/resourceGroups/{rg}/...`); the
/// resource group is empty when the ID is not in one (`/subscriptions/{s}/providers/...`).
pub(crate) fn subscription_and_group(id: &str) -> (String, String) {
    let segs: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    let rg = match segs.get(2) {
        Some(s) if s.eq_ignore_ascii_case("resourceGroups") => segs.get(3).copied().unwrap_or_default(),
        _ => "",
    };
    (segs.get(1).copied().unwrap_or_default().to_string(), rg.to_string())
}

/// The resource group an ID is in or names: its ID (`/subscriptions/{s}/resourceGroups/{rg}`, ARM's casing)
/// and name; `None` for IDs outside resource groups.
pub(crate) fn resource_group_of(id: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    match segs.as_slice() {
        [first, sub, groups, rg, ..]
            if first.eq_ignore_ascii_case("subscriptions")
                && groups.eq_ignore_ascii_case("resourceGroups")
                && !sub.is_empty()
                && !rg.is_empty() =>
        {
            Some((format!("/subscriptions/{sub}/resourceGroups/{rg}"), rg.to_string()))
        }
        _ => None,
    }
}

/// The ID of the parent resource: the ID without its last `type/name` pair.
pub(crate) fn parent_id(id: &str) -> Option<&str> {
    let cut = id.rfind('/')?;
    let cut = id[..cut].rfind('/')?;
    Some(&id[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_every_template_case_insensitively() {
        let r = Registry::new(aks_api::KINDS, aks_api::VIEWS);
        // One type per ARM resource type of the registry, whatever its versions.
        let arm_types: std::collections::BTreeSet<&str> = aks_api::KINDS.iter().map(|k| k.arm.arm_type).collect();
        assert_eq!(r.types.len(), arm_types.len());
        let p =
            "/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.containerservice/MANAGEDCLUSTERS/c1/agentpools/np1";
        match r.match_path(p) {
            Some(Target::Resource { ty, id, name }) => {
                assert_eq!(ty.arm_type, "Microsoft.ContainerService/managedClusters/agentPools");
                assert_eq!(
                    id,
                    "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1/agentPools/np1"
                );
                assert_eq!(name, "np1");
                assert_eq!(ty.depth(), 1);
            }
            other => panic!("{other:?}"),
        }
        let c = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1/agentPools";
        assert!(matches!(r.match_path(c), Some(Target::Collection { .. })));
        let a = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1/listClusterUserCredential";
        assert!(
            matches!(r.match_path(a), Some(Target::Action { action, .. }) if action == "listClusterUserCredential")
        );
        let o = "/subscriptions/s/providers/Microsoft.ContainerService/locations/westeurope/operations/abc";
        assert!(matches!(r.match_path(o), Some(Target::Operation { result: false, .. })));
        assert!(
            r.match_path("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Foo/bars/b")
                .is_none()
        );
    }

    #[test]
    fn views_match_after_their_resource() {
        let r = Registry::new(aks_api::KINDS, aks_api::VIEWS);
        assert!(!aks_api::VIEWS.is_empty());
        for v in aks_api::VIEWS {
            let path: Vec<String> = v
                .route
                .split('/')
                .map(|s| {
                    if s.starts_with('{') {
                        "x1".to_string()
                    } else {
                        s.to_uppercase()
                    }
                })
                .collect();
            let path = path.join("/");
            match r.match_path(&path) {
                Some(Target::View { ty, id, view }) => {
                    assert!(view.path.eq_ignore_ascii_case(v.path), "{path}: {}", view.path);
                    assert!(
                        view.version(
                            ty.versions
                                .iter()
                                .find(|k| k.version == v.version)
                                .expect("version")
                                .arm
                                .api_version
                        )
                        .is_some()
                    );
                    assert!(path.to_lowercase().starts_with(&id.to_lowercase()), "{path}: {id}");
                    assert!(ty.versions.iter().any(|k| k.kind == v.kind && k.group == v.group));
                }
                other => panic!("{path}: {other:?}"),
            }
        }
        // A view of another type is not one: the cluster's `machines` is an action path.
        let cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1";
        assert!(matches!(
            r.match_path(&format!("{cluster}/machines")),
            Some(Target::Action { .. })
        ));
        assert!(r.match_path(&format!("{cluster}/upgradeProfiles/other")).is_none());
    }

    #[test]
    fn ids() {
        assert_eq!(
            guess_type("/subscriptions/s/resourceGroups/r/providers/A.B/c/d/e/f"),
            Some(("A.B/c/e".into(), "A.B".into()))
        );
        assert_eq!(
            guess_type("/subscriptions/s/resourceGroups/r/providers/A.B/c/d/providers/X.Y/z/n"),
            Some(("X.Y/z".into(), "X.Y".into()))
        );
        assert_eq!(parent_id("/a/b/c/d/e/f"), Some("/a/b/c/d"));
        assert_eq!(
            subscription_and_group("/subscriptions/s/resourceGroups/r/providers/x"),
            ("s".into(), "r".into())
        );
        assert_eq!(
            subscription_and_group("/subscriptions/s/providers/Microsoft.Authorization/roleAssignments/x"),
            ("s".into(), String::new())
        );
        assert_eq!(
            resource_group_of("/subscriptions/s/resourcegroups/rg/providers/A.B/c/d"),
            Some(("/subscriptions/s/resourceGroups/rg".into(), "rg".into()))
        );
        assert_eq!(
            resource_group_of("/subscriptions/s/resourceGroups/rg"),
            Some(("/subscriptions/s/resourceGroups/rg".into(), "rg".into()))
        );
        assert_eq!(resource_group_of("/subscriptions/s"), None);
        assert_eq!(resource_group_of("/subscriptions/s/providers/A.B/c/d"), None);
    }

    /// A kind of the test registries below (one API group, one version).
    const fn kind(kind: &'static str, arm_type: &'static str, path: &'static str, scope: Scope) -> KindInfo {
        KindInfo {
            group: "test",
            kube_group: "test.armgen.dev",
            version: "v1",
            kind,
            plural: "",
            storage: true,
            served: true,
            owner_kind: None,
            name_format: armgen_runtime::NameFormat::Any,
            secret_exports: &[],
            config_map_exports: &[],
            arm: armgen_runtime::ResourceInfo {
                kind,
                arm_type,
                api_version: "2025-01-01",
                path,
                parents: &[],
                scope,
                long_running: false,
            },
        }
    }

    use armgen_runtime::Scope;

    /// Every shape of template: subscription scope, resource group scope, child types, extension types.
    static SHAPES: &[KindInfo] = &[
        kind(
            "RoleAssignment",
            "Microsoft.Authorization/roleAssignments",
            "/{scope}/providers/Microsoft.Authorization/roleAssignments/{roleAssignmentName}",
            Scope::Extension,
        ),
        kind(
            "ResourceGroup",
            "Microsoft.Resources/resourceGroups",
            "/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}",
            Scope::Subscription,
        ),
        kind(
            "ManagedCluster",
            "Microsoft.ContainerService/managedClusters",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ContainerService/managedClusters/{resourceName}",
            Scope::ResourceGroup,
        ),
        kind(
            "AgentPool",
            "Microsoft.ContainerService/managedClusters/agentPools",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ContainerService/managedClusters/{resourceName}/agentPools/{agentPoolName}",
            Scope::ResourceGroup,
        ),
        kind(
            "VirtualNetwork",
            "Microsoft.Network/virtualNetworks",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}",
            Scope::ResourceGroup,
        ),
        kind(
            "Subnet",
            "Microsoft.Network/virtualNetworks/subnets",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.Network/virtualNetworks/{virtualNetworkName}/subnets/{subnetName}",
            Scope::ResourceGroup,
        ),
        kind(
            "UserAssignedIdentity",
            "Microsoft.ManagedIdentity/userAssignedIdentities",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{resourceName}",
            Scope::ResourceGroup,
        ),
        kind(
            "FederatedIdentityCredential",
            "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials",
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{resourceName}/federatedIdentityCredentials/{federatedIdentityCredentialResourceName}",
            Scope::ResourceGroup,
        ),
    ];

    fn resource(r: &Registry, path: &str) -> (&'static str, String, String) {
        match r.match_path(path) {
            Some(Target::Resource { ty, id, name }) => (ty.arm_type, id, name),
            other => panic!("{path}: {other:?}"),
        }
    }

    fn collection(r: &Registry, path: &str) -> (&'static str, String) {
        match r.match_path(path) {
            Some(Target::Collection { ty, prefix }) => (ty.arm_type, prefix),
            other => panic!("{path}: {other:?}"),
        }
    }

    const RG: &str = "Microsoft.Resources/resourceGroups";
    const RA: &str = "Microsoft.Authorization/roleAssignments";

    #[test]
    fn resource_groups_match_at_subscription_scope() {
        let r = Registry::new(SHAPES, &[]);
        assert_eq!(r.types.len(), SHAPES.len());
        let rg = r.types.iter().find(|t| t.arm_type == RG).expect("resource group type");
        assert!(!rg.is_extension());
        assert_eq!((rg.depth(), rg.collection()), (0, Some("resourceGroups")));
        for path in [
            "/subscriptions/s/resourcegroups/rg",
            "/subscriptions/s/resourceGroups/rg",
            "/SUBSCRIPTIONS/s/RESOURCEGROUPS/rg",
        ] {
            assert_eq!(
                resource(&r, path),
                (RG, "/subscriptions/s/resourceGroups/rg".into(), "rg".into())
            );
        }
        assert_eq!(
            collection(&r, "/subscriptions/s/resourcegroups"),
            (RG, "/subscriptions/s/resourceGroups".into())
        );
        assert!(matches!(
            r.match_path("/subscriptions/s/resourcegroups/rg/exportTemplate"),
            Some(Target::Action { ty, action, .. }) if ty.arm_type == RG && action == "exportTemplate"
        ));
        // Resource-group-scoped types and child types still match by segment count.
        let cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1";
        assert_eq!(resource(&r, cluster).0, "Microsoft.ContainerService/managedClusters");
        assert_eq!(
            resource(&r, &format!("{cluster}/agentPools/np1")).0,
            "Microsoft.ContainerService/managedClusters/agentPools"
        );
        assert_eq!(
            collection(
                &r,
                "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters"
            )
            .0,
            "Microsoft.ContainerService/managedClusters"
        );
        let fic = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/id1/federatedIdentityCredentials/f1";
        assert_eq!(
            resource(&r, fic).0,
            "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials"
        );
        assert!(r.match_path("/subscriptions/s/resourcegroups/").is_none());
        assert!(r.match_path("/subscriptions/s/resourcegroups//x").is_none());
    }

    #[test]
    fn extension_types_match_any_scope() {
        let r = Registry::new(SHAPES, &[]);
        let ra = r.types.iter().find(|t| t.arm_type == RA).expect("role assignment type");
        assert!(ra.is_extension());
        assert_eq!(ra.depth(), 0);
        let suffix = "/providers/Microsoft.Authorization/roleAssignments/ra1";
        for scope in [
            "/subscriptions/s",
            "/subscriptions/s/resourceGroups/rg",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/default",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.KeyVault/vaults/kv",
            "/subscriptions/s/providers/Microsoft.Foo/bars/b",
        ] {
            let id = format!("{scope}{suffix}");
            assert_eq!(resource(&r, &id), (RA, id.clone(), "ra1".into()));
            assert_eq!(ra.scope_of(&id), Some(scope));
            let list = format!("{scope}/providers/Microsoft.Authorization/roleAssignments");
            assert_eq!(collection(&r, &list), (RA, list.clone()));
        }
        // A role assignment on a role assignment is still one: its scope is the inner one's ID.
        let nested = format!("/subscriptions/s{suffix}{suffix}");
        assert_eq!(resource(&r, &nested).0, RA);
        assert_eq!(ra.scope_of(&nested), Some(&nested[..nested.len() - suffix.len()]));
        assert_eq!(r.types[2].scope_of("/subscriptions/s/resourceGroups/rg"), None);
    }

    #[test]
    fn extension_ids_take_the_casing_of_their_scope() {
        let r = Registry::new(SHAPES, &[]);
        // A served scope: its type's casing.
        let (_, id, _) = resource(
            &r,
            "/SUBSCRIPTIONS/s/resourcegroups/rg/providers/microsoft.network/VIRTUALNETWORKS/v/subnets/default/PROVIDERS/microsoft.authorization/roleassignments/ra1",
        );
        assert_eq!(
            id,
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/default/providers/Microsoft.Authorization/roleAssignments/ra1"
        );
        // A scope no type serves: ARM's casing of `subscriptions`, `resourceGroups`, `providers`, the rest kept.
        let (_, id, _) = resource(
            &r,
            "/subscriptions/s/RESOURCEGROUPS/rg/Providers/microsoft.keyvault/vaults/kv/providers/Microsoft.Authorization/roleAssignments/ra1",
        );
        assert_eq!(
            id,
            "/subscriptions/s/resourceGroups/rg/providers/microsoft.keyvault/vaults/kv/providers/Microsoft.Authorization/roleAssignments/ra1"
        );
        let (_, id, _) = resource(
            &r,
            "/subscriptions/s/resourcegroups/rg/providers/Microsoft.Authorization/roleAssignments/x",
        );
        assert_eq!(
            id,
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Authorization/roleAssignments/x"
        );
    }

    #[test]
    fn no_false_matches_of_extension_types() {
        let r = Registry::new(SHAPES, &[]);
        let cluster = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.ContainerService/managedClusters/c1";
        assert_eq!(resource(&r, cluster).0, "Microsoft.ContainerService/managedClusters");
        assert!(matches!(
            r.match_path(&format!("{cluster}/listClusterUserCredential")),
            Some(Target::Action { ty, .. }) if ty.arm_type == "Microsoft.ContainerService/managedClusters"
        ));
        for path in [
            // No scope, or a scope not shaped like a resource ID (odd segments, empty ones).
            "/providers/Microsoft.Authorization/roleAssignments/ra1",
            "/subscriptions/providers/Microsoft.Authorization/roleAssignments/ra1",
            "/subscriptions/s/resourceGroups/providers/Microsoft.Authorization/roleAssignments/ra1",
            "/subscriptions//providers/Microsoft.Authorization/roleAssignments/ra1",
            "/subscriptions/s/providers/Microsoft.Authorization/roleAssignments/",
            // Another extension type, another namespace.
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Authorization/roleDefinitions/d1",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Foo/roleAssignments/ra1",
            "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Foo/bars/b",
        ] {
            assert!(r.match_path(path).is_none(), "{path}: {:?}", r.match_path(path));
        }
    }
}
