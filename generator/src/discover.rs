//! Pass 2, **discover**: every ARM PUT path is a resource. Its ARM type, parent chain and scope come from
//! the path; its payload types from the operations on that path. There is no hand-written list.

use std::path::{Path, PathBuf};

use openapiv3::{Operation, ReferenceOr};
use serde::Serialize;

use crate::error::{Error, Result, escape_pointer};
use crate::load::{SpecSet, Target};

/// Where a resource lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Scope {
    Tenant,
    Subscription,
    ResourceGroup,
    /// An extension resource on any scope (`/{scope}/providers/…`).
    Extension,
}

/// A resource found from a PUT path.
#[derive(Debug, Clone, Serialize)]
pub struct DiscoveredResource {
    /// The resource's name: the name of its PUT body schema (e.g. `ManagedCluster`).
    pub name: String,
    /// e.g. `Microsoft.ContainerService/managedClusters/agentPools`.
    pub arm_type: String,
    /// The PUT path, as written in the spec.
    pub path: String,
    pub scope: Scope,
    /// Names of the path parameters that name this resource and its parents, outermost first.
    pub name_parameters: Vec<String>,
    /// The ARM types of the parent resources, outermost first.
    pub parents: Vec<String>,
    pub long_running: bool,
    /// The POST operations under the resource's path (`<PUT path>/<action>`), e.g. `listClusterAdminCredential`,
    /// sorted by name; also those deeper under it (`accessProfiles/{roleName}/listCredential`), which no action
    /// kind can stand for ([`DiscoveredAction::nested`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<DiscoveredAction>,
    /// The read-only GET operations under the resource's path that are neither a resource's GET nor a child
    /// resource's list (`upgradeProfiles/default`, `availableAgentPoolVersions`, `machines/{machineName}`), sorted
    /// by path: what `views` of the config may read into the status.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub views: Vec<DiscoveredView>,
    pub put_operation_id: Option<String>,
    #[serde(skip)]
    pub file: PathBuf,
    /// The PUT body schema (a `$ref` target).
    #[serde(skip)]
    pub put_body: Target,
    /// The schema of the GET 200 response on the same path, when there is one.
    #[serde(skip)]
    pub get_response: Option<Target>,
}

/// A POST operation under a resource's path: an ARM action on the resource.
#[derive(Debug, Clone, Serialize)]
pub struct DiscoveredAction {
    /// The path after the resource's (`runCommand`; `accessProfiles/{roleName}/listCredential` when nested).
    pub name: String,
    /// The POST path, as written in the spec.
    pub path: String,
    /// Whether the path goes deeper than one segment after the resource's, or has a parameter of its own.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
    pub long_running: bool,
    /// The response status codes the spec declares (`default` aside), ascending.
    pub statuses: Vec<u16>,
    pub operation_id: Option<String>,
    /// The action kind's name when the config renames it (set when the resources are selected).
    #[serde(skip)]
    pub kind: Option<String>,
    /// Whether the config excludes it: no action kind (set when the resources are selected).
    #[serde(skip)]
    pub excluded: bool,
    /// The request body schema, when the action takes one.
    #[serde(skip)]
    pub body: Option<Target>,
    /// The response body schema (of the first declared 2xx status that has one).
    #[serde(skip)]
    pub response: Option<Target>,
    /// The schema of the `default` (error) response.
    #[serde(skip)]
    pub error: Option<Target>,
}

/// A read-only GET under a resource's path: a candidate view ([`DiscoveredResource::views`]).
#[derive(Debug, Clone, Serialize)]
pub struct DiscoveredView {
    /// The path after the resource's, as the spec writes it (`upgradeProfiles/default`).
    pub name: String,
    /// The GET path, as written in the spec.
    pub path: String,
    /// Whether the path has a parameter of its own after the resource's (`machines/{machineName}`): no view can
    /// read it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nested: bool,
    /// `x-ms-pageable`: a list whose pages are joined by `nextLink`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pageable: bool,
    pub operation_id: Option<String>,
    /// The status field the config reads it into (set when the resources are selected).
    #[serde(skip)]
    pub field: Option<String>,
    /// Whether the config says it is not read (set when the resources are selected).
    #[serde(skip)]
    pub excluded: bool,
    /// How often the reconciler reads it, in seconds (set with `field`).
    #[serde(skip)]
    pub refresh_seconds: u64,
    /// The 200 response body schema.
    #[serde(skip)]
    pub response: Option<Target>,
}

/// Finds every resource in the root documents of `specs`, sorted by ARM type.
pub fn discover(specs: &SpecSet) -> Result<Vec<DiscoveredResource>> {
    let mut out = Vec::new();
    for root in &specs.roots {
        let Some(doc) = specs.doc(root) else { continue };
        for (route, item) in doc.openapi.paths.iter() {
            let item_ptr = format!("/paths/{}", escape_pointer(route));
            let ReferenceOr::Item(item) = item else {
                return Err(Error::spec(
                    &doc.location(&item_ptr),
                    "path items by $ref are not supported",
                ));
            };
            let Some(put) = &item.put else { continue };
            let put_ptr = format!("{item_ptr}/put");
            let at = doc.location(&put_ptr);
            let Some(parsed) = parse_arm_path(route) else { continue };
            let put_body = body_target(specs, root, put, &put_ptr)?
                .ok_or_else(|| Error::spec(&at, "a resource PUT without a JSON request body"))?;
            let name = put_body
                .pointer
                .rsplit('/')
                .next()
                .map(crate::error::unescape_pointer)
                .unwrap_or_default();
            let get_response = match &item.get {
                Some(get) => response_target(specs, root, get, &format!("{item_ptr}/get"), 200)?,
                None => None,
            };
            let long_running = put
                .extensions
                .get("x-ms-long-running-operation")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false);
            out.push(DiscoveredResource {
                name,
                arm_type: parsed.arm_type,
                path: route.clone(),
                scope: parsed.scope,
                name_parameters: parsed.name_parameters,
                parents: parsed.parents,
                long_running,
                actions: actions(specs, root, &doc.openapi.paths, route)?,
                views: views(specs, root, &doc.openapi.paths, route)?,
                put_operation_id: put.operation_id.clone(),
                file: root.clone(),
                put_body,
                get_response,
            });
        }
    }
    // A POST under a child resource's path is the child's action, not its parent's.
    let routes: Vec<String> = out.iter().map(|r| normalize_route(&r.path)).collect();
    for r in &mut out {
        let own = normalize_route(&r.path);
        let deeper: Vec<&String> = routes
            .iter()
            .filter(|other| other.len() > own.len() && other.starts_with(&own))
            .collect();
        let under_deeper = |path: &str| {
            let path = normalize_route(path);
            deeper.iter().any(|d| {
                path.strip_prefix(d.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
        };
        r.actions.retain(|a| !under_deeper(&a.path));
        // A GET of a child resource, under one, or of a child resource's collection (`…/agentPools`) is no view.
        r.views.retain(|v| {
            let collection = format!("{}/{{}}", normalize_route(&v.path));
            !under_deeper(&v.path) && !routes.contains(&collection)
        });
    }
    out.sort_by(|a, b| a.arm_type.cmp(&b.arm_type).then(a.path.cmp(&b.path)));
    Ok(out)
}

/// The POST operations under the resource at `route` (`root`'s paths): paths that begin with `route` (compared
/// without case and with every parameter name alike, as ARM routes them) and have a `post` operation.
fn actions(specs: &SpecSet, root: &Path, paths: &openapiv3::Paths, route: &str) -> Result<Vec<DiscoveredAction>> {
    let prefix = normalize_route(route);
    let mut out = Vec::new();
    for (path, item) in paths.iter() {
        let ReferenceOr::Item(item) = item else { continue };
        let Some(post) = &item.post else { continue };
        let Some((name, rest)) = below(&prefix, route, path) else {
            continue;
        };
        let op_ptr = format!("/paths/{}/post", escape_pointer(path));
        let mut statuses: Vec<u16> = post
            .responses
            .responses
            .keys()
            .filter_map(|c| match c {
                openapiv3::StatusCode::Code(n) => Some(*n),
                openapiv3::StatusCode::Range(_) => None,
            })
            .collect();
        statuses.sort_unstable();
        let mut response = None;
        for code in &statuses {
            if (200..300).contains(code)
                && let Some(t) = response_target(specs, root, post, &op_ptr, *code)?
            {
                response = Some(t);
                break;
            }
        }
        out.push(DiscoveredAction {
            nested: rest.contains(['/', '{']),
            name,
            path: path.clone(),
            long_running: post
                .extensions
                .get("x-ms-long-running-operation")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(false),
            statuses,
            operation_id: post.operation_id.clone(),
            kind: None,
            excluded: false,
            body: body_target(specs, root, post, &op_ptr)?,
            response,
            error: default_target(specs, root, post, &op_ptr)?,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The GET operations under the resource at `route` (`root`'s paths) on paths without a PUT: the candidate
/// views (those of child resources are dropped by [`discover`], which knows every resource).
fn views(specs: &SpecSet, root: &Path, paths: &openapiv3::Paths, route: &str) -> Result<Vec<DiscoveredView>> {
    let prefix = normalize_route(route);
    let mut out = Vec::new();
    for (path, item) in paths.iter() {
        let ReferenceOr::Item(item) = item else { continue };
        let (Some(get), None) = (&item.get, &item.put) else {
            continue;
        };
        let Some((name, rest)) = below(&prefix, route, path) else {
            continue;
        };
        let op_ptr = format!("/paths/{}/get", escape_pointer(path));
        out.push(DiscoveredView {
            nested: rest.contains('{'),
            name,
            path: path.clone(),
            pageable: get.extensions.contains_key("x-ms-pageable"),
            operation_id: get.operation_id.clone(),
            field: None,
            excluded: false,
            refresh_seconds: 0,
            response: response_target(specs, root, get, &op_ptr, 200)?,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Whether `path` is below the resource at `route` (`prefix`: its [`normalize_route`]): the path after the resource's
/// as the spec writes it (`runCommand`, `machines/{machineName}`), and normalized.
fn below(prefix: &str, route: &str, path: &str) -> Option<(String, String)> {
    let normalized = normalize_route(path);
    let rest = normalized.strip_prefix(prefix)?.strip_prefix('/')?;
    if rest.is_empty() {
        return None;
    }
    // The name as the spec writes it: the same number of characters as the normalized rest only when the path has
    // no parameter after the resource's, so count segments instead.
    let skip = route.split('/').count();
    let name = path.split('/').skip(skip).collect::<Vec<_>>().join("/");
    Some((name, rest.to_string()))
}

/// A route as ARM matches it: without case, every `{parameter}` alike.
fn normalize_route(route: &str) -> String {
    route
        .split('/')
        .map(|s| {
            if is_parameter(s) {
                "{}".to_string()
            } else {
                s.to_ascii_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

struct ParsedPath {
    arm_type: String,
    scope: Scope,
    name_parameters: Vec<String>,
    parents: Vec<String>,
}

/// ARM's one resource type whose path has no provider segment: a resource group,
/// `/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}` (any case), of type
/// `Microsoft.Resources/resourceGroups` (as the resource group's `type` in every ARM response says).
const RESOURCE_GROUP_TYPE: &str = "Microsoft.Resources/resourceGroups";

/// Parses `…/providers/Namespace/type/{name}/subtype/{name}`, and a resource group's path. Returns `None` for
/// paths that do not name a resource (no provider segment, or an odd number of segments after it).
fn parse_arm_path(route: &str) -> Option<ParsedPath> {
    let lower = route.to_ascii_lowercase();
    if let ["", "subscriptions", sub, "resourcegroups", name] = lower.split('/').collect::<Vec<_>>().as_slice()
        && is_parameter(sub)
        && is_parameter(name)
    {
        let name = route.rsplit('/').next().unwrap_or_default();
        return Some(ParsedPath {
            arm_type: RESOURCE_GROUP_TYPE.to_string(),
            scope: Scope::Subscription,
            name_parameters: vec![name.trim_start_matches('{').trim_end_matches('}').to_string()],
            parents: Vec::new(),
        });
    }
    let idx = lower.rfind("/providers/")?;
    let prefix = &route[..idx];
    let rest = &route[idx + "/providers/".len()..];
    let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let (namespace, pairs) = segments.split_first()?;
    if pairs.is_empty() || pairs.len() % 2 != 0 {
        return None;
    }
    let mut types = Vec::new();
    let mut names = Vec::new();
    for pair in pairs.chunks(2) {
        let (ty, name) = (pair[0], pair[1]);
        if ty.starts_with('{') {
            return None;
        }
        types.push(ty);
        names.push(name.trim_start_matches('{').trim_end_matches('}').to_string());
    }
    let prefix_lower = prefix.to_ascii_lowercase();
    let scope = if prefix.is_empty() {
        Scope::Tenant
    } else if prefix_lower.contains("/resourcegroups/") {
        Scope::ResourceGroup
    } else if prefix_lower.starts_with("/subscriptions/") && prefix.matches('/').count() == 2 {
        Scope::Subscription
    } else {
        Scope::Extension
    };
    let mut parents = Vec::new();
    for i in 1..types.len() {
        parents.push(format!("{namespace}/{}", types[..i].join("/")));
    }
    Some(ParsedPath {
        arm_type: format!("{namespace}/{}", types.join("/")),
        scope,
        name_parameters: names,
        parents,
    })
}

/// A path segment that is a parameter (`{name}`).
fn is_parameter(segment: &str) -> bool {
    segment.len() > 2 && segment.starts_with('{') && segment.ends_with('}')
}

/// The schema of `op` (at `op_ptr` in `file`)'s JSON request body, when it has one: a `$ref` to a named
/// schema, which must resolve.
fn body_target(specs: &SpecSet, file: &Path, op: &Operation, op_ptr: &str) -> Result<Option<Target>> {
    let body_ptr = format!("{op_ptr}/requestBody");
    let at = &specs.location(file, &body_ptr);
    // Where the body is written: a `$ref`'d body's references are relative to its own file.
    let (body, body_file, body_ptr) = match &op.request_body {
        None => return Ok(None),
        Some(ReferenceOr::Item(b)) => (b.clone(), file.to_path_buf(), body_ptr),
        Some(ReferenceOr::Reference { reference }) => {
            let ref_err = |message: String| Error::Ref {
                at: at.clone(),
                reference: specs.original_reference(file, reference),
                message,
            };
            let target = specs.target(file, reference, at)?;
            let doc = specs
                .doc(&target.file)
                .ok_or_else(|| ref_err("the file is not loaded".into()))?;
            let value = doc
                .raw
                .pointer(&target.pointer)
                .ok_or_else(|| ref_err("the pointer does not resolve".into()))?;
            let body = serde_json::from_value(value.clone())
                .map_err(|e| Error::spec(&doc.location(&target.pointer), format!("not a request body: {e}")))?;
            (body, target.file, target.pointer)
        }
    };
    let Some(media) = body.content.get("application/json") else {
        return Ok(None);
    };
    // The `$ref` site: the body's schema (for Swagger 2.0, the body parameter's `schema`).
    let at = &specs.location(&body_file, &format!("{body_ptr}/content/application~1json/schema"));
    match &media.schema {
        Some(ReferenceOr::Reference { reference }) => {
            let target = specs.target(&body_file, reference, at)?;
            // The body must exist and be a schema now, so that the error names the PUT, not the target.
            specs.resolve_schema(&body_file, reference, at)?;
            if !is_named_schema(&target.pointer) {
                return Err(Error::Ref {
                    at: at.clone(),
                    reference: specs.original_reference(&body_file, reference),
                    message: "a resource's request body must be a named definition (`#/definitions/Name`)".into(),
                });
            }
            Ok(Some(target))
        }
        Some(ReferenceOr::Item(_)) => Err(Error::spec(
            at,
            "an inline request body schema is not supported for a resource PUT",
        )),
        None => Ok(None),
    }
}

/// Whether `pointer` (upconverted) names a schema of `components/schemas`, whose name can name a resource.
fn is_named_schema(pointer: &str) -> bool {
    matches!(
        crate::load::split_pointer(pointer).as_slice(),
        [components, schemas, name] if components == "components" && schemas == "schemas" && !name.is_empty()
    )
}

/// The schema of `op` (at `op_ptr` in `file`)'s `code` JSON response, when it is a `$ref`, which must resolve.
fn response_target(specs: &SpecSet, file: &Path, op: &Operation, op_ptr: &str, code: u16) -> Result<Option<Target>> {
    let Some(resp) = op.responses.responses.get(&openapiv3::StatusCode::Code(code)) else {
        return Ok(None);
    };
    let at = &specs.location(
        file,
        &format!("{op_ptr}/responses/{code}/content/application~1json/schema"),
    );
    let ReferenceOr::Item(resp) = resp else { return Ok(None) };
    response_schema(specs, file, resp, at)
}

/// The schema of `op` (at `op_ptr` in `file`)'s `default` (error) JSON response, when it is a `$ref`.
fn default_target(specs: &SpecSet, file: &Path, op: &Operation, op_ptr: &str) -> Result<Option<Target>> {
    let Some(ReferenceOr::Item(resp)) = &op.responses.default else {
        return Ok(None);
    };
    let at = &specs.location(
        file,
        &format!("{op_ptr}/responses/default/content/application~1json/schema"),
    );
    response_schema(specs, file, resp, at)
}

/// The `$ref`'d JSON schema of a response (at `at`), which must resolve.
fn response_schema(
    specs: &SpecSet,
    file: &Path,
    resp: &openapiv3::Response,
    at: &crate::error::Location,
) -> Result<Option<Target>> {
    let Some(media) = resp.content.get("application/json") else {
        return Ok(None);
    };
    match &media.schema {
        Some(ReferenceOr::Reference { reference }) => {
            let target = specs.target(file, reference, at)?;
            specs.resolve_schema(file, reference, at)?;
            Ok(Some(target))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_resource_group_child_path() {
        let p = parse_arm_path(
            "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Microsoft.ContainerService/managedClusters/{resourceName}/agentPools/{agentPoolName}",
        )
        .expect("an ARM path");
        assert_eq!(p.arm_type, "Microsoft.ContainerService/managedClusters/agentPools");
        assert_eq!(p.scope, Scope::ResourceGroup);
        assert_eq!(
            p.parents,
            vec!["Microsoft.ContainerService/managedClusters".to_string()]
        );
        assert_eq!(
            p.name_parameters,
            vec!["resourceName".to_string(), "agentPoolName".to_string()]
        );
    }

    #[test]
    fn scopes() {
        let sub = parse_arm_path("/subscriptions/{s}/providers/Microsoft.X/things/{n}").expect("path");
        assert_eq!(sub.scope, Scope::Subscription);
        let tenant = parse_arm_path("/providers/Microsoft.X/things/{n}").expect("path");
        assert_eq!(tenant.scope, Scope::Tenant);
        let ext = parse_arm_path("/{scope}/providers/Microsoft.X/things/{n}").expect("path");
        assert_eq!(ext.scope, Scope::Extension);
        assert!(parse_arm_path("/subscriptions/{s}/providers/Microsoft.X/things").is_none());
        let rg = parse_arm_path("/subscriptions/{subscriptionId}/resourcegroups/{resourceGroupName}").expect("path");
        assert_eq!(rg.arm_type, "Microsoft.Resources/resourceGroups");
        assert_eq!(rg.scope, Scope::Subscription);
        assert_eq!(rg.name_parameters, vec!["resourceGroupName".to_string()]);
        assert!(parse_arm_path("/subscriptions/{s}/resourceGroups/fixed").is_none());
        assert!(parse_arm_path("/subscriptions/{s}/resourceGroups/{rg}/things").is_none());
    }
}
