//! The resource types the simulator serves, built from [`aks_api::KINDS`], and URL matching against their PUT
//! path templates.

use armgen_runtime::KindInfo;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segment {
    Literal(&'static str),
    Param,
}

/// One ARM resource type (one PUT path template) with every API version that serves it.
#[derive(Debug)]
pub(crate) struct ResourceType {
    pub arm_type: &'static str,
    pub template: Vec<Segment>,
    pub versions: Vec<&'static KindInfo>,
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

    fn matches(&self, segs: &[&str]) -> bool {
        segs.len() <= self.template.len()
            && self.template.iter().zip(segs).all(|(t, s)| match t {
                Segment::Literal(l) => l.eq_ignore_ascii_case(s),
                Segment::Param => !s.is_empty(),
            })
    }

    /// The path with the template's literal casing and the request's parameter values.
    fn canonical(&self, segs: &[&str]) -> String {
        let mut out = String::new();
        for (t, s) in self.template.iter().zip(segs) {
            out.push('/');
            out.push_str(match t {
                Segment::Literal(l) => l,
                Segment::Param => s,
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
    /// The collection of resources of a type under one parent (or resource group).
    Collection { ty: &'a ResourceType, prefix: String },
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
    pub fn new(kinds: &'static [KindInfo]) -> Self {
        let mut types: Vec<ResourceType> = Vec::new();
        for k in kinds {
            let template: Vec<Segment> = k
                .arm
                .path
                .split('/')
                .filter(|s| !s.is_empty())
                .map(|s| {
                    if s.starts_with('{') {
                        Segment::Param
                    } else {
                        Segment::Literal(s)
                    }
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

    /// Matches a path (without query). Resources win over collections, collections over actions.
    pub fn match_path<'a>(&'a self, path: &str) -> Option<Target<'a>> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if let Some(op) = match_operation(&segs) {
            return Some(op);
        }
        if let Some(ty) = self
            .types
            .iter()
            .find(|t| segs.len() == t.template.len() && t.matches(&segs))
        {
            let name = segs.last().copied().unwrap_or_default().to_string();
            return Some(Target::Resource {
                ty,
                id: ty.canonical(&segs),
                name,
            });
        }
        if let Some(ty) = self.types.iter().find(|t| {
            segs.len() + 1 == t.template.len() && t.template.last() == Some(&Segment::Param) && t.matches(&segs)
        }) {
            return Some(Target::Collection {
                ty,
                prefix: ty.canonical(&segs),
            });
        }
        if let Some(ty) = self.types.iter().find(|t| {
            segs.len() == t.template.len() + 1
                && t.matches(&segs[..t.template.len()])
                && segs.last().is_some_and(|a| !a.is_empty())
        }) {
            let n = ty.template.len();
            return Some(Target::Action {
                ty,
                id: ty.canonical(&segs[..n]),
                name: segs[n - 1].to_string(),
                action: segs[n].to_string(),
            });
        }
        None
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
/// the namespace; `None` when the path has no `providers/{namespace}/{type}` part.
pub(crate) fn guess_type(path: &str) -> Option<(String, String)> {
    let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let i = segs.iter().position(|s| s.eq_ignore_ascii_case("providers"))?;
    let ns = segs.get(i + 1)?;
    let types: Vec<&str> = segs.iter().skip(i + 2).step_by(2).copied().collect();
    if types.is_empty() {
        return None;
    }
    Some((format!("{ns}/{}", types.join("/")), ns.to_string()))
}

/// The `(subscription, resource group)` of a resource ID (`/subscriptions/{s}/resourceGroups/{rg}/...`).
pub(crate) fn scope(id: &str) -> (String, String) {
    let segs: Vec<&str> = id.trim_start_matches('/').split('/').collect();
    (
        segs.get(1).copied().unwrap_or_default().to_string(),
        segs.get(3).copied().unwrap_or_default().to_string(),
    )
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
        let r = Registry::new(aks_api::KINDS);
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
    fn ids() {
        assert_eq!(
            guess_type("/subscriptions/s/resourceGroups/r/providers/A.B/c/d/e/f"),
            Some(("A.B/c/e".into(), "A.B".into()))
        );
        assert_eq!(parent_id("/a/b/c/d/e/f"), Some("/a/b/c/d"));
        assert_eq!(
            scope("/subscriptions/s/resourceGroups/r/providers/x"),
            ("s".into(), "r".into())
        );
    }
}
