//! The HTTP surface: the axum router, ARM request handling and the `/_simulator/` admin endpoints.

use std::collections::BTreeMap;

use axum::Json;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as AxState;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde_json::{Value, json};

use armgen_runtime::ActionInfo;

use crate::actions::ResultOf;
use crate::defaults::{self, DEFAULT_TENANT_ID};
use crate::registry::{
    ResourceType, Target, ViewRoute, guess_type, parent_id, resource_group_of, subscription_and_group,
};
use crate::util::{ArmError, now_rfc3339, random_uuid};
use crate::{
    ActionRun, Exchange, ExchangeRequest, ExchangeResponse, Fault, FaultRule, Operation, Outcome, Simulator, State,
    Stored,
};

/// A response before it becomes HTTP.
pub(crate) struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Option<Value>,
}

impl Reply {
    fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Some(body),
        }
    }

    fn empty(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: None,
        }
    }

    fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.push((name.to_string(), value.into()));
        self
    }

    pub fn into_response(self) -> Response {
        let mut b = Response::builder().status(StatusCode::from_u16(self.status).unwrap_or(StatusCode::OK));
        for (k, v) in &self.headers {
            b = b.header(k.as_str(), v.as_str());
        }
        let body = match &self.body {
            Some(v) => {
                b = b.header(header::CONTENT_TYPE, "application/json; charset=utf-8");
                Body::from(serde_json::to_vec(v).unwrap_or_default())
            }
            None => Body::empty(),
        };
        b.body(body)
            .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
    }
}

impl From<ArmError> for Reply {
    fn from(e: ArmError) -> Self {
        Reply::json(e.status, e.body())
    }
}

/// An ARM request.
pub(crate) struct Req<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    /// `http://host:port`, from the `Host` header.
    pub base: String,
}

impl Req<'_> {
    fn query_param(&self, name: &str) -> Option<&str> {
        self.query?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }

    /// A query parameter by name, case-insensitively and with `%24` read as `$` in the name (`$skipToken`,
    /// `%24skiptoken`), as ARM reads OData-style parameters.
    fn query_param_any_case(&self, name: &str) -> Option<&str> {
        self.query?
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| {
                let k = match k.get(..3) {
                    Some(p) if p.eq_ignore_ascii_case("%24") => format!("${}", &k[3..]),
                    _ => (*k).to_string(),
                };
                k.eq_ignore_ascii_case(name)
            })
            .map(|(_, v)| v)
    }
}

pub(crate) fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    format!("http://{host}")
}

pub(crate) fn terminal(state: &str) -> bool {
    matches!(state, "Succeeded" | "Failed" | "Canceled")
}

/// Counts a request: an operation poll, a view `GET`, else a resource request by method.
fn count_request(st: &mut State, target: Option<&Target<'_>>, method: &str) {
    match target {
        Some(Target::Operation { .. }) => st.polls += 1,
        Some(Target::View { ty, id, view }) if method.eq_ignore_ascii_case("GET") => {
            let key = (
                ty.arm_type.to_lowercase(),
                crate::view_path(view.path),
                id.to_lowercase(),
            );
            *st.view_reads.entry(key).or_default() += 1;
        }
        _ => *st.counts.entry(method.to_ascii_uppercase()).or_default() += 1,
    }
}

/// `providers/...` part of an ID, as ARM names resources in messages.
fn type_and_name(id: &str) -> &str {
    id.find("/providers/")
        .map(|i| &id[i + "/providers/".len()..])
        .unwrap_or(id)
}

/// ARM's answer for a resource ID it does not hold: `ResourceGroupNotFound` for a resource group (what ARM
/// answers `GET /subscriptions/{s}/resourcegroups/{rg}` of a missing group), else `ResourceNotFound`.
fn not_found(id: &str) -> ArmError {
    if let Some((rg_id, rg)) = resource_group_of(id)
        && rg_id.len() == id.len()
    {
        return resource_group_not_found(&rg);
    }
    let (_, rg) = subscription_and_group(id);
    let under = if rg.is_empty() {
        String::new()
    } else {
        format!(" under resource group '{rg}'")
    };
    ArmError::new(
        404,
        "ResourceNotFound",
        format!(
            "The Resource '{}'{under} was not found. For more details please go to https://aka.ms/ARMResourceNotFoundFix",
            type_and_name(id)
        ),
    )
}

fn resource_group_not_found(rg: &str) -> ArmError {
    ArmError::new(
        404,
        "ResourceGroupNotFound",
        format!("Resource group '{rg}' could not be found."),
    )
}

fn conflict(stored: &Stored) -> ArmError {
    ArmError::new(
        409,
        "OperationNotAllowed",
        format!(
            "Operation is not allowed because there's an in progress operation on the resource (provisioningState {}). Please wait for it to finish before starting a new operation.",
            stored.state
        ),
    )
}

fn set_state(stored: &mut Stored, state: &str) {
    stored.state = state.to_string();
    write_state(&mut stored.body, stored.models_state, state);
}

/// Writes the state into the body. Items of child-owned arrays show their child resource's state
/// ([`Simulator::refresh_owned`]).
fn write_state(body: &mut Value, models_state: bool, state: &str) {
    if !models_state {
        return;
    }
    if let Some(obj) = body.as_object_mut()
        && let Some(props) = obj.entry("properties").or_insert_with(|| json!({})).as_object_mut()
    {
        props.insert("provisioningState".into(), json!(state));
    }
}

impl Simulator {
    /// The router: ARM resource URLs, operation URLs, token endpoints and `/_simulator/` admin endpoints. Served
    /// in process (e.g. with `tower::ServiceExt::oneshot`) [`Fault::DropConnection`] has no effect.
    pub fn router(&self) -> Router {
        Router::new()
            .route("/_simulator/faults", post(admin_fault).delete(admin_clear_faults))
            .route("/_simulator/traffic", get(admin_traffic).delete(admin_clear_traffic))
            .route("/_simulator/resources", get(admin_resources))
            .route("/_simulator/counts", get(admin_counts))
            .route("/metadata/identity/oauth2/token", get(crate::auth::imds))
            .route("/{tenant}/oauth2/v2.0/token", post(crate::auth::token))
            .fallback(arm)
            .with_state(self.clone())
    }

    fn elapsed_ms(&self) -> u64 {
        self.inner.start.elapsed().as_millis() as u64
    }

    /// Takes the first rule matching the request whose fault `pick` accepts.
    fn take_fault(st: &mut State, method: &str, path: &str, pick: impl Fn(&Fault) -> bool) -> Option<Fault> {
        let i = st
            .faults
            .iter()
            .position(|r| r.times > 0 && pick(&r.fault) && r.matches(method, path))?;
        let rule: &mut FaultRule = &mut st.faults[i];
        rule.times -= 1;
        let fault = rule.fault.clone();
        if rule.times == 0 {
            st.faults.remove(i);
        }
        Some(fault)
    }

    /// Whether the connection carrying this request is to be dropped (a [`Fault::DropConnection`] matched).
    pub(crate) fn take_drop(&self, method: &str, path: &str) -> bool {
        if !path.to_ascii_lowercase().starts_with("/subscriptions/") {
            return false;
        }
        let mut st = self.state();
        let dropped = Self::take_fault(&mut st, method, path, |f| matches!(f, Fault::DropConnection)).is_some();
        if dropped {
            count_request(&mut st, self.inner.registry.match_path(path).as_ref(), method);
            tracing::info!(method, path, "fault: dropping the connection");
        }
        dropped
    }

    fn handle(&self, req: &Req<'_>) -> (Reply, bool) {
        let mut st = self.state();
        let target = self.inner.registry.match_path(req.path);
        let is_poll = matches!(target, Some(Target::Operation { .. }));
        count_request(&mut st, target.as_ref(), req.method);
        let reply = self.handle_locked(&mut st, req, target).unwrap_or_else(Reply::from);
        tracing::info!(
            method = req.method,
            path = req.path,
            status = reply.status,
            "ARM request"
        );
        let exchange = Exchange {
            at_ms: self.elapsed_ms(),
            request: ExchangeRequest {
                url: match req.query {
                    Some(q) => format!("{}{}?{q}", req.base, req.path),
                    None => format!("{}{}", req.base, req.path),
                },
                method: req.method.to_string(),
                headers: req
                    .headers
                    .iter()
                    .map(|(k, v)| {
                        let v = if k == header::AUTHORIZATION {
                            "Bearer <redacted>".to_string()
                        } else {
                            String::from_utf8_lossy(v.as_bytes()).into_owned()
                        };
                        (k.as_str().to_string(), v)
                    })
                    .collect(),
                body: if req.body.is_empty() {
                    None
                } else {
                    Some(
                        serde_json::from_slice(req.body)
                            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(req.body).into_owned())),
                    )
                },
            },
            response: ExchangeResponse {
                status_code: reply.status,
                headers: {
                    let mut h: BTreeMap<String, String> = reply
                        .headers
                        .iter()
                        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
                        .collect();
                    if reply.body.is_some() {
                        h.insert("content-type".into(), "application/json; charset=utf-8".into());
                    }
                    h
                },
                body: reply.body.clone(),
            },
        };
        if self.inner.config.record_traffic {
            st.traffic.push(exchange);
        }
        (reply, is_poll)
    }

    fn authenticate(&self, st: &mut State, req: &Req<'_>) -> Result<(), Reply> {
        let Some(auth) = &self.inner.config.auth else {
            return Ok(());
        };
        let header = req.headers.get(header::AUTHORIZATION).and_then(|h| h.to_str().ok());
        let (message, error) = match header.map(|h| h.split_once(' ')) {
            None => ("Authentication failed. The 'Authorization' header is missing.", None),
            Some(Some((scheme, token))) if scheme.eq_ignore_ascii_case("Bearer") => {
                if st.tokens.contains(token.trim()) {
                    st.authenticated += 1;
                    return Ok(());
                }
                (
                    "Authentication failed. The access token was not issued by the token endpoints.",
                    Some("invalid_token"),
                )
            }
            Some(_) => (
                "Authentication failed. The 'Authorization' header is not of the 'Bearer' scheme.",
                None,
            ),
        };
        let mut www = format!(
            "Bearer authorization_uri=\"https://login.microsoftonline.com/{}\"",
            auth.tenant_id
        );
        if let Some(error) = error {
            www.push_str(&format!(", error=\"{error}\""));
        }
        Err(Reply::from(ArmError::new(401, "AuthenticationFailed", message)).header("WWW-Authenticate", www))
    }

    fn handle_locked(&self, st: &mut State, req: &Req<'_>, target: Option<Target<'_>>) -> Result<Reply, ArmError> {
        if let Err(reply) = self.authenticate(st, req) {
            return Ok(reply);
        }
        match Self::take_fault(st, req.method, req.path, |f| {
            matches!(f, Fault::Throttle { .. } | Fault::ServerError | Fault::NotFound)
        }) {
            Some(Fault::NotFound) => {
                return Err(ArmError::new(404, "NotFound", "The requested resource was not found."));
            }
            Some(Fault::Throttle { retry_after_secs }) => {
                return Ok(Reply::from(ArmError::new(
                    429,
                    "TooManyRequests",
                    "The request is being throttled as the limit has been reached for operation type. Please try again after the time in Retry-After.",
                ))
                .header("Retry-After", retry_after_secs.to_string()));
            }
            Some(_) => {
                return Err(ArmError::new(
                    500,
                    "InternalServerError",
                    "An unexpected error occured while processing the request.",
                ));
            }
            None => {}
        }
        let Some(target) = target else {
            let version = req.query_param("api-version").unwrap_or_default();
            return Err(match guess_type(req.path) {
                Some((ty, ns)) => ArmError::new(
                    404,
                    "InvalidResourceType",
                    format!(
                        "The resource type '{ty}' could not be found in the namespace '{ns}' for api version '{version}'."
                    ),
                ),
                None => ArmError::new(
                    404,
                    "NotFound",
                    format!("No HTTP resource was found that matches '{}'.", req.path),
                ),
            });
        };
        let Some(api_version) = req.query_param("api-version").filter(|v| !v.is_empty()) else {
            return Err(ArmError::new(
                400,
                "MissingApiVersionParameter",
                "The api-version query parameter (?api-version=) is required for all requests.",
            ));
        };
        let ty = match &target {
            Target::Operation { id, result } => return self.poll(st, req, id, *result),
            Target::Resource { ty, .. }
            | Target::Collection { ty, .. }
            | Target::View { ty, .. }
            | Target::Action { ty, .. } => *ty,
        };
        if ty.version(api_version).is_none() {
            return Err(ArmError::new(
                400,
                "InvalidApiVersionParameter",
                format!(
                    "The api-version '{api_version}' is invalid. The supported versions for resource type '{}' are '{}'.",
                    ty.arm_type,
                    ty.supported_versions()
                ),
            ));
        }
        match (target, req.method) {
            (Target::Resource { id, .. }, "GET") => self.get(st, &id),
            (Target::Resource { ty, id, name }, "PUT") => self.put(st, req, ty, &id, &name, api_version),
            (Target::Resource { ty, id, .. }, "DELETE") => self.delete(st, req, ty, &id, api_version),
            (Target::Collection { ty, prefix }, "GET") => self.list(st, ty, &prefix),
            (Target::View { ty, id, view }, "GET") => self.view(st, req, ty, &id, view, api_version),
            (Target::Action { ty, id, name, action }, "POST") => {
                self.action(st, req, ty, &id, &name, &action, api_version)
            }
            (_, method) => Err(ArmError::new(
                405,
                "MethodNotAllowed",
                format!("The method '{method}' is not supported on '{}'.", req.path),
            )),
        }
    }

    fn get(&self, st: &mut State, id: &str) -> Result<Reply, ArmError> {
        let key = id.to_lowercase();
        if let Some(op) = st.resources.get(&key).and_then(|s| s.operation.clone()) {
            self.advance(st, &op);
        }
        match st.resources.get(&key) {
            Some(s) => Ok(Reply::json(200, s.body.clone())),
            None => Err(not_found(id)),
        }
    }

    fn list(&self, st: &mut State, ty: &ResourceType, prefix: &str) -> Result<Reply, ArmError> {
        if ty.depth() > 0
            && let Some(parent) = prefix.rfind('/').map(|i| &prefix[..i])
            && !st.resources.contains_key(&parent.to_lowercase())
        {
            return Err(not_found(parent));
        }
        let start = format!("{}/", prefix.to_lowercase());
        let value: Vec<Value> = st
            .resources
            .range(start.clone()..)
            .take_while(|(k, _)| k.starts_with(&start))
            .filter(|(k, _)| !k[start.len()..].contains('/'))
            .map(|(_, s)| s.body.clone())
            .collect();
        Ok(Reply::json(200, json!({ "value": value })))
    }

    /// `GET <id>/<view path>`: a view of [`aks_api::VIEWS`] of a held resource, its response computed by its row
    /// of [`crate::views`] from the resource's current state (and its parent's and children's), checked against the
    /// generated type of the view's API version. A pageable view answers a page of at most
    /// [`crate::SimulatorConfig::page_size`] items from its `$skipToken` on, with a `nextLink` when more follow.
    fn view(
        &self,
        st: &State,
        req: &Req<'_>,
        ty: &ResourceType,
        id: &str,
        view: &ViewRoute,
        api_version: &str,
    ) -> Result<Reply, ArmError> {
        let Some((info, kind)) = view.version(api_version) else {
            return Err(ArmError::new(
                400,
                "InvalidApiVersionParameter",
                format!(
                    "The api-version '{api_version}' is invalid. The supported versions for '{}/{}' are '{}'.",
                    ty.arm_type,
                    view.path,
                    view.supported_versions()
                ),
            ));
        };
        let Some(row) = crate::views::row(ty.arm_type, view.path) else {
            return Err(ArmError::new(
                501,
                "NotImplemented",
                format!(
                    "The ARM simulator does not serve the view 'GET {{id}}/{}' of '{}' (api-version {api_version}, status field '{}' of {} {}): it has no row in simulator/src/views.rs.",
                    view.path, ty.arm_type, info.field, info.kind, info.version
                ),
            ));
        };
        let key = id.to_lowercase();
        let Some(target) = st.resources.get(&key) else {
            return Err(not_found(id));
        };
        let parent = parent_id(&key).and_then(|p| st.resources.get(p));
        let prefix = format!("{key}/");
        let subject = crate::views::Subject {
            id: target.body.get("id").and_then(Value::as_str).unwrap_or(id),
            body: &target.body,
            parent: parent.map(|p| &p.body),
            children: st
                .resources
                .range(prefix.clone()..)
                .take_while(|(k, _)| k.starts_with(&prefix))
                .filter(|(k, _)| k[prefix.len()..].matches('/').count() == 1)
                .map(|(_, s)| &s.body)
                .collect(),
        };
        let internal = |message: String| ArmError::new(500, "InternalServerError", message);
        let mismatch = || {
            internal(format!(
                "the view '{}' of '{}' is {}pageable in the spec but its row in views.rs is {}a list",
                view.path,
                ty.arm_type,
                if info.pageable { "" } else { "not " },
                if row.shape.pageable() { "" } else { "not " },
            ))
        };
        if info.pageable != row.shape.pageable() {
            return Err(mismatch());
        }
        let (body, typed) = if info.pageable {
            let skip = match req.query_param_any_case("$skipToken") {
                None => 0,
                Some(token) => token.parse::<usize>().map_err(|_| {
                    ArmError::new(
                        400,
                        "InvalidSkipToken",
                        format!("The $skipToken '{token}' is not valid for '{}'.", view.path),
                    )
                })?,
            };
            let take = self.inner.config.page_size.max(1);
            let (items, total) = crate::views::items(row, &subject, skip, take).ok_or_else(mismatch)?;
            let next = skip.saturating_add(items.len());
            let mut body = json!({ "value": items.clone() });
            if next < total {
                body["nextLink"] = json!(format!(
                    "{}{}?api-version={api_version}&$skipToken={next}",
                    req.base, req.path
                ));
            }
            (body, Value::Array(items))
        } else {
            let body = crate::views::single(row, &subject).ok_or_else(mismatch)?;
            (body.clone(), body)
        };
        // The response as the generated type of the view's API version reads it (the resource's field for the
        // view): anything that version does not declare is the simulator's error, not the client's.
        let mut check = target.body.clone();
        if let Some(obj) = check.as_object_mut() {
            obj.insert(info.field.to_string(), typed);
        }
        let rt = crate::validate::round_trip(self.inner.round_trip, kind, &check).map_err(|e| {
            internal(format!(
                "the simulator's response to the view '{}' does not read as the generated type of {} {}: {}",
                view.path, kind.arm.arm_type, api_version, e.message
            ))
        })?;
        let field = format!("/{}", info.field);
        let unknown: Vec<&String> = rt
            .unknown
            .iter()
            .filter(|u| u.as_str() == field || u.starts_with(&format!("{field}/")))
            .collect();
        if !unknown.is_empty() {
            return Err(internal(format!(
                "the simulator's response to the view '{}' has what {} {} does not declare: {unknown:?}",
                view.path, kind.arm.arm_type, api_version
            )));
        }
        Ok(Reply::json(200, body))
    }

    /// The ancestors' IDs, nearest first; an error naming the first missing one.
    fn check_parents(st: &State, ty: &ResourceType, id: &str) -> Result<Option<String>, ArmError> {
        let mut cur = id;
        let mut nearest = None;
        for _ in 0..ty.depth() {
            let Some(parent) = parent_id(cur) else { break };
            if !st.resources.contains_key(&parent.to_lowercase()) {
                let name = parent.rsplit('/').next().unwrap_or(parent);
                return Err(ArmError::new(
                    404,
                    "ParentResourceNotFound",
                    format!(
                        "Can not perform requested operation on nested resource. Parent resource '{name}' not found."
                    ),
                ));
            }
            nearest.get_or_insert_with(|| parent.to_string());
            cur = parent;
        }
        Ok(nearest)
    }

    /// [`crate::SimulatorConfig::require_resource_groups`]: the resource group of a resource at `id` (of type `ty`)
    /// and, for an extension resource, its scope must be stored. A resource group needs nothing, nor does a
    /// scope that is a subscription (`/subscriptions/{s}`, which always exists).
    fn check_container(st: &State, ty: &ResourceType, id: &str) -> Result<(), ArmError> {
        let scope = ty.scope_of(id);
        let contained = scope.unwrap_or(id);
        if let Some((rg_id, rg)) = resource_group_of(contained)
            // A resource group is not in itself; an extension resource on one needs it.
            && (scope.is_some() || rg_id.len() < contained.len())
            && !st.resources.contains_key(&rg_id.to_lowercase())
        {
            return Err(resource_group_not_found(&rg));
        }
        if let Some(scope) = scope
            && scope.trim_start_matches('/').split('/').count() > 2
            && !st.resources.contains_key(&scope.to_lowercase())
        {
            return Err(not_found(scope));
        }
        Ok(())
    }

    /// The stored parent of a resource of `ty` at `id`: its body and location.
    fn stored_parent<'s>(st: &'s State, ty: &ResourceType, id: &str) -> Option<(&'s Value, &'s str)> {
        parent_id(id)
            .filter(|_| ty.depth() > 0)
            .and_then(|p| st.resources.get(&p.to_lowercase()))
            .map(|p| (&p.body, p.location.as_str()))
    }

    /// The body as the service stores it: server fields, secrets removed, defaults, the normalizer, the state;
    /// checked against the generated type. `parent` is the parent resource's body and location. Returns the
    /// body, whether the type models `provisioningState`, the location, and the state written (`Creating`
    /// becomes `Updating` where the type's states lack it).
    #[allow(clippy::too_many_arguments)]
    fn materialize(
        &self,
        st: &State,
        parent: Option<(&Value, &str)>,
        ty: &ResourceType,
        kind: &armgen_runtime::KindInfo,
        id: &str,
        name: &str,
        body: Value,
        state: &'static str,
    ) -> Result<(Value, bool, String, &'static str), ArmError> {
        let Value::Object(fields) = body else {
            return Err(ArmError::new(
                400,
                "InvalidRequestContent",
                "The request content must be a JSON object.",
            ));
        };
        let mut out = serde_json::Map::new();
        out.insert("id".into(), json!(id));
        out.insert("name".into(), json!(name));
        out.insert("type".into(), json!(ty.arm_type));
        for (k, v) in fields {
            if !matches!(k.as_str(), "id" | "name" | "type") {
                out.insert(k, v);
            }
        }
        let mut body = Value::Object(out);
        if let Some(Value::Object(p)) = body.get_mut("properties") {
            p.remove("provisioningState");
        }
        let location = body
            .get("location")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| parent.map(|(_, l)| l.to_string()))
            .unwrap_or_else(|| self.inner.config.location_default.clone());
        let tenant = self
            .inner
            .config
            .auth
            .as_ref()
            .map(|a| a.tenant_id.as_str())
            .unwrap_or(DEFAULT_TENANT_ID);
        defaults::strip_secrets(ty.arm_type, &mut body);
        let ctx = defaults::Context {
            arm_type: ty.arm_type,
            id,
            name,
            location: &location,
            tenant_id: tenant,
            parent: parent.map(|(b, _)| b),
            scope: ty.scope_of(id),
        };
        defaults::apply(&ctx, &mut body);
        if let Some(n) = st.normalizers.get(&ty.arm_type.to_lowercase()) {
            n(&mut body);
        }
        let had_properties = body.get("properties").is_some();
        write_state(&mut body, true, state);
        let internal = |e: ArmError| {
            ArmError::new(
                500,
                "InternalServerError",
                format!("the simulator's response does not deserialize ({})", e.message),
            )
        };
        let rt = match crate::validate::round_trip(self.inner.round_trip, kind, &body) {
            Ok(rt) => rt,
            // `properties` is optional but has required members: the state cannot go in a new one.
            Err(_) if !had_properties => {
                if let Some(obj) = body.as_object_mut() {
                    obj.remove("properties");
                }
                crate::validate::round_trip(self.inner.round_trip, kind, &body).map_err(internal)?;
                return Ok((body, false, location, state));
            }
            Err(e) => return Err(internal(e)),
        };
        let mut models_state = !rt.unknown.iter().any(|u| u == "/properties/provisioningState");
        if state == "Creating" && rt.unknown.iter().any(|u| u == "/properties/provisioningState=Creating") {
            // The type's closed list of states lacks `Creating` (2024-09-01 TrustedAccessRoleBinding): the
            // service says `Updating` then.
            write_state(&mut body, true, "Updating");
            models_state = true;
            return Ok((body, models_state, location, "Updating"));
        }
        if !models_state && let Some(Value::Object(p)) = body.get_mut("properties") {
            p.remove("provisioningState");
        }
        Ok((body, models_state, location, state))
    }

    /// The child resources a parent's PUT (or seed) writes, as they will be stored: each materialized below
    /// the parent's new body, in `state`, an update keeping its reported versions while `long_running`.
    #[allow(clippy::too_many_arguments)]
    fn materialize_children(
        &self,
        st: &State,
        writes: Vec<crate::rules::ChildWrite>,
        parent_body: &Value,
        parent_location: &str,
        state: &'static str,
        long_running: bool,
    ) -> Result<Vec<(String, Stored)>, ArmError> {
        let mut out = Vec::new();
        for w in writes {
            let Some(ty) = self.inner.registry.type_of(w.kind) else {
                continue;
            };
            let (mut body, models_state, location, state) = self.materialize(
                st,
                Some((parent_body, parent_location)),
                ty,
                w.kind,
                &w.id,
                &w.name,
                w.body,
                state,
            )?;
            if w.existing
                && long_running
                && let Some(old) = st.resources.get(&w.key)
            {
                defaults::keep_reported(ty.arm_type, &old.body, &mut body);
            }
            out.push((
                w.key,
                Stored {
                    arm_type: ty.arm_type,
                    kind: w.kind,
                    body,
                    state: state.into(),
                    models_state,
                    location,
                    operation: None,
                },
            ));
        }
        Ok(out)
    }

    pub(crate) fn seed_locked(
        &self,
        st: &mut State,
        id: &str,
        api_version: &str,
        body: Value,
    ) -> Result<Value, ArmError> {
        let Some(Target::Resource { ty, id, name }) = self.inner.registry.match_path(id) else {
            return Err(ArmError::new(
                404,
                "InvalidResourceType",
                format!("'{id}' is not the ID of a served resource type"),
            ));
        };
        let Some(kind) = ty.version(api_version) else {
            return Err(ArmError::new(
                400,
                "InvalidApiVersionParameter",
                format!(
                    "The api-version '{api_version}' is invalid. The supported versions are '{}'.",
                    ty.supported_versions()
                ),
            ));
        };
        crate::validate::round_trip(self.inner.round_trip, kind, &body)?;
        let key = id.to_lowercase();
        let parent = Self::stored_parent(st, ty, &id);
        let (body, models_state, location, _) =
            self.materialize(st, parent, ty, kind, &id, &name, body, "Succeeded")?;
        // The children of its child-owned arrays, as a create would make them (no rule is checked).
        // Checked against an empty store, every item is a child to create; no rule refuses a seed.
        let writes = match &self.inner.rules {
            Ok(rules) => self.check_put(&State::default(), rules, kind, &key, &id, &body)?,
            Err(_) => Vec::new(),
        };
        let children = self.materialize_children(st, writes, &body, &location, "Succeeded", false)?;
        let stored = Stored {
            arm_type: ty.arm_type,
            kind,
            body,
            state: "Succeeded".into(),
            models_state,
            location,
            operation: None,
        };
        st.resources.insert(key.clone(), stored);
        for (k, child) in children {
            st.resources.insert(k, child);
        }
        self.refresh_owned(st, &key);
        if let Some(parent) = parent_id(&key).map(str::to_string) {
            self.refresh_owned(st, &parent);
        }
        Ok(st.resources.get(&key).map(|s| s.body.clone()).unwrap_or_default())
    }

    fn start_operation(&self, st: &mut State, req: &Req<'_>, key: &str, linked: Vec<String>, delete: bool) -> String {
        let outcome = match Self::take_fault(st, req.method, req.path, |f| {
            matches!(f, Fault::FailOperation { .. } | Fault::CancelOperation)
        }) {
            Some(Fault::FailOperation { code, message }) => Outcome::Fail { code, message },
            Some(_) => Outcome::Cancel,
            None => Outcome::Succeed,
        };
        let id = random_uuid();
        st.operations.insert(
            id.clone(),
            Operation {
                resource_key: key.to_string(),
                linked,
                delete,
                polls: 0,
                outcome,
                status: "InProgress",
                start: now_rfc3339(),
                end: None,
                action: None,
            },
        );
        id
    }

    fn operation_url(
        req: &Req<'_>,
        ty: &ResourceType,
        id: &str,
        location: &str,
        op: &str,
        segment: &str,
        api_version: &str,
    ) -> String {
        let (sub, _) = subscription_and_group(id);
        let location = location.to_lowercase().replace(' ', "");
        format!(
            "{}/subscriptions/{sub}/providers/{}/locations/{location}/{segment}/{op}?api-version={api_version}",
            req.base,
            ty.namespace()
        )
    }

    fn put(
        &self,
        st: &mut State,
        req: &Req<'_>,
        ty: &ResourceType,
        id: &str,
        name: &str,
        api_version: &str,
    ) -> Result<Reply, ArmError> {
        let kind = ty
            .version(api_version)
            .ok_or_else(|| ArmError::new(400, "InvalidApiVersionParameter", api_version))?;
        if self.inner.config.require_resource_groups {
            Self::check_container(st, ty, id)?;
        }
        Self::check_parents(st, ty, id)?;
        let key = id.to_lowercase();
        let existing = st.resources.get(&key);
        if let Some(s) = existing
            && !terminal(&s.state)
        {
            return Err(conflict(s));
        }
        let creating = existing.is_none();
        let id = existing
            .and_then(|s| s.body.get("id"))
            .and_then(Value::as_str)
            .unwrap_or(id)
            .to_string();
        if req.body.iter().all(u8::is_ascii_whitespace) {
            return Err(ArmError::new(
                400,
                "InvalidRequestContent",
                "The request content was invalid: the body is empty.",
            ));
        }
        let body: Value = serde_json::from_slice(req.body).map_err(|e| {
            ArmError::new(
                400,
                "InvalidRequestContent",
                format!("The request content was invalid and cannot be deserialized: {e}."),
            )
        })?;
        if !body.is_object() {
            return Err(ArmError::new(
                400,
                "InvalidRequestContent",
                "The request content must be a JSON object.",
            ));
        }
        crate::validate::round_trip(self.inner.round_trip, kind, &body)?;
        let writes = self.check_put(st, self.write_rules()?, kind, &key, &id, &body)?;
        let long_running = kind.arm.long_running;
        let state = match (long_running, creating) {
            (false, _) => "Succeeded",
            (true, true) => "Creating",
            (true, false) => "Updating",
        };
        let parent = Self::stored_parent(st, ty, &id);
        let (mut body, models_state, location, state) =
            self.materialize(st, parent, ty, kind, &id, name, body, state)?;
        if long_running && let Some(old) = st.resources.get(&key) {
            defaults::keep_reported(ty.arm_type, &old.body, &mut body);
        }
        let children = self.materialize_children(st, writes, &body, &location, state, long_running)?;
        let mut stored = Stored {
            arm_type: ty.arm_type,
            kind,
            body,
            state: state.into(),
            models_state,
            location,
            operation: None,
        };
        let status = if creating { 201 } else { 200 };
        let mut headers = Vec::new();
        // Every child of a child-owned array runs with the parent's operation, those the PUT did not name too.
        let mut linked: Vec<String> = children.iter().map(|(k, _)| k.clone()).collect();
        for k in self.owned_children(st, &key) {
            if !linked.contains(&k) {
                linked.push(k);
            }
        }
        let op = if long_running {
            let op = self.start_operation(st, req, &key, linked.clone(), false);
            let url = Self::operation_url(req, ty, &id, &stored.location, &op, "operations", api_version);
            headers.push(("Azure-AsyncOperation".to_string(), url));
            headers.push((
                "Retry-After".to_string(),
                self.inner.config.retry_after_secs.to_string(),
            ));
            stored.operation = Some(op.clone());
            Some(op)
        } else {
            None
        };
        st.resources.insert(key.clone(), stored);
        let written: Vec<String> = children.iter().map(|(k, _)| k.clone()).collect();
        for (k, child) in children {
            st.resources.insert(k, child);
        }
        for k in &linked {
            if let Some(child) = st.resources.get_mut(k) {
                if !written.contains(k) {
                    set_state(child, state);
                }
                child.operation.clone_from(&op);
            }
        }
        self.refresh_owned(st, &key);
        if let Some(parent) = parent_id(&key).map(str::to_string) {
            self.refresh_owned(st, &parent);
        }
        let body = st.resources.get(&key).map(|s| s.body.clone()).unwrap_or_default();
        let mut reply = Reply::json(status, body);
        for (k, v) in headers {
            reply = reply.header(&k, v);
        }
        Ok(reply)
    }

    /// Removes the resource at `key` and everything whose ID is below it: its child resources, and the extension
    /// resources (`<scope>/providers/...`) scoped to it or to one of its children. Of a resource group that is
    /// every resource in it, as Azure deletes them: "When you delete a resource group, all of its resources are
    /// also deleted" (<https://learn.microsoft.com/en-us/azure/azure-resource-manager/management/delete-resource-group>).
    fn remove_tree(st: &mut State, key: &str) {
        st.resources.remove(key);
        let prefix = format!("{key}/");
        let children: Vec<String> = st
            .resources
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect();
        for k in children {
            st.resources.remove(&k);
        }
    }

    fn delete(
        &self,
        st: &mut State,
        req: &Req<'_>,
        ty: &ResourceType,
        id: &str,
        api_version: &str,
    ) -> Result<Reply, ArmError> {
        let key = id.to_lowercase();
        let Some(s) = st.resources.get(&key) else {
            return Ok(Reply::empty(204));
        };
        if !terminal(&s.state) {
            return Err(conflict(s));
        }
        let kind = ty
            .version(api_version)
            .ok_or_else(|| ArmError::new(400, "InvalidApiVersionParameter", api_version))?;
        self.check_delete(st, self.write_rules()?, kind, &key)?;
        let parent = parent_id(&key).map(str::to_string);
        if !kind.arm.long_running {
            // An extension resource's synchronous delete answers with the deleted resource (Role Assignments -
            // Delete: "200 OK: the deleted role assignment", its spec's RoleAssignments_Delete 200 schema); others
            // with an empty 200, as their specs say.
            let deleted = (kind.arm.scope == armgen_runtime::Scope::Extension).then(|| s.body.clone());
            Self::remove_tree(st, &key);
            if let Some(parent) = &parent {
                self.refresh_owned(st, parent);
            }
            return Ok(match deleted {
                Some(body) => Reply::json(200, body),
                None => Reply::empty(200),
            });
        }
        let location = s.location.clone();
        // The children of its child-owned arrays are deleted with it, in its operation.
        let linked = self.owned_children(st, &key);
        let op = self.start_operation(st, req, &key, linked.clone(), true);
        for k in linked.iter().chain([&key]) {
            if let Some(s) = st.resources.get_mut(k) {
                set_state(s, "Deleting");
                s.operation = Some(op.clone());
            }
        }
        self.refresh_owned(st, &key);
        if let Some(parent) = &parent {
            self.refresh_owned(st, parent);
        }
        Ok(Reply::empty(202)
            .header(
                "Location",
                Self::operation_url(req, ty, id, &location, &op, "operationresults", api_version),
            )
            .header(
                "Azure-AsyncOperation",
                Self::operation_url(req, ty, id, &location, &op, "operations", api_version),
            )
            .header("Retry-After", self.inner.config.retry_after_secs.to_string()))
    }

    /// One poll of an operation: ends it once it has been polled `operation_polls` times.
    fn advance(&self, st: &mut State, op_id: &str) {
        let Some(op) = st.operations.get_mut(op_id) else { return };
        if op.status != "InProgress" {
            return;
        }
        if op.polls < self.inner.config.operation_polls {
            op.polls += 1;
            return;
        }
        op.end = Some(now_rfc3339());
        op.status = match op.outcome {
            Outcome::Succeed => "Succeeded",
            Outcome::Fail { .. } => "Failed",
            Outcome::Cancel => "Canceled",
        };
        let (key, delete, status) = (op.resource_key.clone(), op.delete, op.status);
        let linked = op.linked.clone();
        let (start, end) = (op.start.clone(), op.end.clone().unwrap_or_default());
        let action = op.action.clone().filter(|_| status == "Succeeded");
        if delete && status == "Succeeded" {
            Self::remove_tree(st, &key);
        } else {
            let final_state = action.as_ref().map_or(status, |a| a.final_state);
            for k in linked.iter().chain([&key]) {
                let Some(s) = st.resources.get_mut(k) else { continue };
                if s.operation.as_deref() != Some(op_id) {
                    continue;
                }
                set_state(s, final_state);
                s.operation = None;
                if status == "Succeeded" {
                    defaults::settle_reported(s.arm_type, &mut s.body);
                }
            }
            if let Some(run) = &action {
                Self::apply_action(st, &key, run);
            }
            self.refresh_owned(st, &key);
        }
        if let Some(parent) = parent_id(&key).map(str::to_string) {
            self.refresh_owned(st, &parent);
        }
        if let Some(run) = &action {
            let result = Self::action_result(st, &key, run, &start, &end);
            if let Some(a) = st.operations.get_mut(op_id).and_then(|o| o.action.as_mut()) {
                a.result = result;
            }
        }
    }

    fn poll(&self, st: &mut State, req: &Req<'_>, op_id: &str, result: bool) -> Result<Reply, ArmError> {
        if !st.operations.contains_key(op_id) {
            return Err(ArmError::new(
                404,
                "NotFound",
                format!("The operation '{op_id}' was not found."),
            ));
        }
        self.advance(st, op_id);
        let Some(op) = st.operations.get(op_id) else {
            return Err(ArmError::new(
                404,
                "NotFound",
                format!("The operation '{op_id}' was not found."),
            ));
        };
        let retry = self.inner.config.retry_after_secs.to_string();
        if result {
            let url = match req.query {
                Some(q) => format!("{}{}?{q}", req.base, req.path),
                None => format!("{}{}", req.base, req.path),
            };
            return Ok(match (&op.outcome, op.status) {
                (_, "InProgress") => Reply::empty(202).header("Location", url).header("Retry-After", retry),
                // A POST action's final state is its Location's answer: its result, or no content.
                (_, "Succeeded") if op.action.is_some() => match op.action.as_ref().and_then(|a| a.result.clone()) {
                    Some(result) => Reply::json(200, result),
                    None => Reply::empty(204),
                },
                (_, "Succeeded") if op.delete => Reply::empty(204),
                (_, "Succeeded") => match st.resources.get(&op.resource_key) {
                    Some(s) => Reply::json(200, s.body.clone()),
                    None => Reply::empty(204),
                },
                (Outcome::Fail { code, message }, _) => Reply::from(ArmError::new(400, code, message.clone())),
                _ => Reply::from(ArmError::new(400, "OperationCanceled", "The operation was canceled.")),
            });
        }
        let mut body = json!({"name": op_id, "status": op.status, "startTime": op.start});
        if let Some(end) = &op.end {
            body["endTime"] = json!(end);
        }
        match &op.outcome {
            Outcome::Fail { code, message } if op.status == "Failed" => {
                body["error"] = json!({"code": code, "message": message});
            }
            Outcome::Cancel if op.status == "Canceled" => {
                body["error"] = json!({"code": "OperationCanceled", "message": "The operation was canceled."});
            }
            _ => {}
        }
        let reply = Reply::json(200, body);
        Ok(if op.status == "InProgress" {
            reply.header("Retry-After", retry)
        } else {
            reply
        })
    }

    /// `POST <id>/<action>`: an action of [`aks_api::ACTIONS`] on a held resource of its target type and API
    /// version ([`crate::actions`] says what it does), else a credential action of a managed cluster.
    #[allow(clippy::too_many_arguments)]
    fn action(
        &self,
        st: &mut State,
        req: &Req<'_>,
        ty: &ResourceType,
        id: &str,
        name: &str,
        action: &str,
        api_version: &str,
    ) -> Result<Reply, ArmError> {
        let infos: Vec<&'static ActionInfo> = aks_api::ACTIONS
            .iter()
            .filter(|a| a.kind.arm.arm_type.eq_ignore_ascii_case(ty.arm_type) && a.action.eq_ignore_ascii_case(action))
            .collect();
        if infos.is_empty() {
            return self.credentials(st, ty, id, name, action);
        }
        let Some(info) = infos.iter().copied().find(|a| a.kind.arm.api_version == api_version) else {
            let mut versions: Vec<&str> = infos.iter().map(|a| a.kind.arm.api_version).collect();
            versions.sort_unstable();
            return Err(ArmError::new(
                400,
                "InvalidApiVersionParameter",
                format!(
                    "The api-version '{api_version}' is invalid. The supported versions for action '{}/{}' are '{}'.",
                    ty.arm_type,
                    infos[0].action,
                    versions.join(", ")
                ),
            ));
        };
        let key = id.to_lowercase();
        let Some(target) = st.resources.get(&key) else {
            return Err(not_found(id));
        };
        let id = target.body.get("id").and_then(Value::as_str).unwrap_or(id).to_string();
        let location = target.location.clone();
        let request = if info.body {
            Some(Self::action_request(req, info)?)
        } else {
            None
        };
        let behaviour = crate::actions::behaviour(ty.arm_type, info.action);
        let running = target
            .operation
            .clone()
            .filter(|op| st.operations.get(op).is_some_and(|o| o.status == "InProgress"));
        if !behaviour.cancels {
            if !terminal(&target.state) {
                return Err(conflict(target));
            }
            self.check_action(st, self.write_rules()?, target.kind, &key)?;
        }
        let mut final_state = "Succeeded";
        if behaviour.cancels
            && let Some(op_id) = &running
        {
            // The running operation ends Canceled now; what followed it too (its target is Canceling until the
            // abort ends).
            let mut linked = Vec::new();
            if let Some(op) = st.operations.get_mut(op_id) {
                op.status = "Canceled";
                op.outcome = Outcome::Cancel;
                op.end = Some(now_rfc3339());
                linked = op.linked.clone();
            }
            for k in &linked {
                if let Some(s) = st.resources.get_mut(k)
                    && s.operation.as_deref() == Some(op_id.as_str())
                {
                    set_state(s, "Canceled");
                    s.operation = None;
                }
            }
            final_state = "Canceled";
        }
        let run = ActionRun {
            info,
            behaviour,
            request,
            final_state,
            result: None,
        };
        let parent = parent_id(&key).map(str::to_string);
        // Long-running when the spec says so and declares 202; an abort with nothing to abort ends at once.
        let long_running =
            info.long_running && info.statuses.contains(&202) && !(behaviour.cancels && running.is_none());
        if !long_running {
            let now = now_rfc3339();
            Self::apply_action(st, &key, &run);
            self.refresh_owned(st, &key);
            if let Some(parent) = &parent {
                self.refresh_owned(st, parent);
            }
            let result = Self::action_result(st, &key, &run, &now, &now);
            let status = crate::actions::sync_status(info.statuses, result.is_some());
            return Ok(match result {
                Some(body) if status != 204 => Reply::json(status, body),
                _ => Reply::empty(status),
            });
        }
        let op = self.start_operation(st, req, &key, Vec::new(), false);
        if let Some(o) = st.operations.get_mut(&op) {
            o.action = Some(run);
        }
        if let Some(state) = behaviour.running_state
            && let Some(s) = st.resources.get_mut(&key)
        {
            set_state(s, state);
            s.operation = Some(op.clone());
        }
        self.refresh_owned(st, &key);
        if let Some(parent) = &parent {
            self.refresh_owned(st, parent);
        }
        let mut reply = if behaviour.accepted_body {
            Reply::json(202, st.resources.get(&key).map(|s| s.body.clone()).unwrap_or_default())
        } else {
            Reply::empty(202)
        };
        reply = reply
            .header(
                "Location",
                Self::operation_url(req, ty, &id, &location, &op, "operationresults", api_version),
            )
            .header(
                "Azure-AsyncOperation",
                Self::operation_url(req, ty, &id, &location, &op, "operations", api_version),
            )
            .header("Retry-After", self.inner.config.retry_after_secs.to_string());
        Ok(reply)
    }

    /// The request body of an action that takes one: JSON read as the action kind's `parameters`.
    fn action_request(req: &Req<'_>, info: &ActionInfo) -> Result<Value, ArmError> {
        if req.body.iter().all(u8::is_ascii_whitespace) {
            return Err(ArmError::new(
                400,
                "InvalidRequestContent",
                format!(
                    "The request content was invalid: '{}' takes a request body, and it is empty.",
                    info.action
                ),
            ));
        }
        let body: Value = serde_json::from_slice(req.body).map_err(|e| {
            ArmError::new(
                400,
                "InvalidRequestContent",
                format!("The request content was invalid and cannot be deserialized: {e}."),
            )
        })?;
        crate::validate::action_body(info, &body)?;
        Ok(body)
    }

    /// The effects of a succeeded action on its target (at `key`), and its entry in the action log.
    fn apply_action(st: &mut State, key: &str, run: &ActionRun) {
        if let Some(s) = st.resources.get_mut(key) {
            crate::actions::apply(run.behaviour.effects, &mut s.body, run.request.as_ref());
        }
        st.action_log
            .entry(key.to_string())
            .or_default()
            .push(run.info.action.to_string());
    }

    /// The result of a succeeded action on the target at `key` (`None` for actions without one), the action having
    /// started at `started` and ended at `finished`.
    fn action_result(st: &State, key: &str, run: &ActionRun, started: &str, finished: &str) -> Option<Value> {
        if !run.info.result {
            return None;
        }
        let target = st.resources.get(key);
        let target_id = target
            .and_then(|s| s.body.get("id"))
            .and_then(Value::as_str)
            .unwrap_or(key)
            .to_string();
        let request = run.request.clone().unwrap_or_else(|| json!({}));
        Some(match run.behaviour.result {
            ResultOf::Target => target.map(|s| s.body.clone())?,
            ResultOf::RunCommand => {
                let command = request.get("command").and_then(Value::as_str).unwrap_or_default();
                let (exit_code, logs) = crate::actions::run_command(command);
                json!({
                    "id": random_uuid().replace('-', ""),
                    "properties": {
                        "provisioningState": "Succeeded",
                        "exitCode": exit_code,
                        "startedAt": started,
                        "finishedAt": finished,
                        "logs": logs,
                    }
                })
            }
            ResultOf::EchoWith { member, template } => {
                let mut body = request;
                let group = resource_group_of(&target_id).map(|(id, _)| id).unwrap_or_default();
                let name = body
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("default")
                    .to_string();
                if let Some(obj) = body.as_object_mut() {
                    obj.insert(
                        member.to_string(),
                        json!(template.replace("{group}", &group).replace("{name}", &name)),
                    );
                }
                body
            }
            ResultOf::Template => {
                let prefix = format!("{key}/");
                let resources: Vec<Value> = st
                    .resources
                    .range(prefix.clone()..)
                    .take_while(|(k, _)| k.starts_with(&prefix))
                    .map(|(_, s)| template_resource(s))
                    .collect();
                json!({"template": {
                    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
                    "contentVersion": "1.0.0.0",
                    "parameters": {},
                    "resources": resources,
                }})
            }
        })
    }

    /// `listClusterAdminCredential` / `listClusterUserCredential` of a managed cluster.
    fn credentials(
        &self,
        st: &mut State,
        ty: &ResourceType,
        id: &str,
        name: &str,
        action: &str,
    ) -> Result<Reply, ArmError> {
        let user = if action.eq_ignore_ascii_case("listClusterAdminCredential") {
            false
        } else if action.eq_ignore_ascii_case("listClusterUserCredential") {
            true
        } else {
            return Err(ArmError::new(
                404,
                "InvalidResourceType",
                format!("The resource type '{}/{action}' could not be found.", ty.arm_type),
            ));
        };
        if !ty
            .arm_type
            .eq_ignore_ascii_case("Microsoft.ContainerService/managedClusters")
        {
            return Err(ArmError::new(
                404,
                "InvalidResourceType",
                format!("'{action}' is not an action of '{}'.", ty.arm_type),
            ));
        }
        let s = st.resources.get(&id.to_lowercase()).ok_or_else(|| not_found(id))?;
        let p = s.body.get("properties");
        let fqdn = p
            .and_then(|p| p.get("fqdn").or_else(|| p.get("privateFQDN")))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| format!("{name}.hcp.{}.azmk8s.io", s.location.to_lowercase()));
        let (_, rg) = subscription_and_group(id);
        let (cred, context) = if user {
            ("clusterUser", name.to_string())
        } else {
            ("clusterAdmin", format!("{name}-admin"))
        };
        let user_name = format!("{cred}_{rg}_{name}");
        let b64 = base64::engine::general_purpose::STANDARD;
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority-data: {ca}\n    server: https://{fqdn}:443\n  name: {name}\ncontexts:\n- context:\n    cluster: {name}\n    user: {user_name}\n  name: {context}\ncurrent-context: {context}\npreferences: {{}}\nusers:\n- name: {user_name}\n  user:\n    token: {token}\n",
            ca = b64.encode(format!("simulated CA of {fqdn}")),
            token = crate::util::stable_uuid(&format!("{}/{cred}", id.to_lowercase())).replace('-', ""),
        );
        Ok(Reply::json(
            200,
            json!({"kubeconfigs": [{"name": cred, "value": b64.encode(kubeconfig)}]}),
        ))
    }
}

/// A resource as an exported template lists it: type, API version, name (`parent/child` for child types, as
/// templates name them), location and properties.
fn template_resource(s: &Stored) -> Value {
    let id = s.body.get("id").and_then(Value::as_str).unwrap_or_default();
    let after = id
        .rfind("/providers/")
        .map(|i| &id[i + "/providers/".len()..])
        .unwrap_or(id);
    let name: Vec<&str> = after.split('/').skip(2).step_by(2).collect();
    let mut r = json!({"type": s.arm_type, "apiVersion": s.kind.arm.api_version, "name": name.join("/")});
    for member in ["location", "properties"] {
        if let Some(v) = s.body.get(member) {
            r[member] = v.clone();
        }
    }
    r
}

async fn arm(AxState(sim): AxState<Simulator>, method: Method, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let req = Req {
        method: method.as_str(),
        path: uri.path(),
        query: uri.query(),
        headers: &headers,
        body: &body,
        base: base_url(&headers),
    };
    if !req.path.to_ascii_lowercase().starts_with("/subscriptions/") {
        return Reply::from(ArmError::new(
            404,
            "NotFound",
            format!("No HTTP resource was found that matches '{}'.", req.path),
        ))
        .into_response();
    }
    sim.handle(&req).0.into_response()
}

async fn admin_fault(AxState(sim): AxState<Simulator>, Json(rule): Json<FaultRule>) -> StatusCode {
    tracing::info!(?rule, "fault injected");
    sim.inject(rule);
    StatusCode::NO_CONTENT
}

async fn admin_clear_faults(AxState(sim): AxState<Simulator>) -> StatusCode {
    sim.clear_faults();
    StatusCode::NO_CONTENT
}

async fn admin_traffic(AxState(sim): AxState<Simulator>) -> Json<Vec<Value>> {
    Json(sim.traffic().iter().map(Exchange::to_live_traffic).collect())
}

async fn admin_clear_traffic(AxState(sim): AxState<Simulator>) -> StatusCode {
    sim.clear_traffic();
    StatusCode::NO_CONTENT
}

async fn admin_counts(AxState(sim): AxState<Simulator>) -> Json<Value> {
    Json(json!({
        "GET": sim.count("GET"),
        "PUT": sim.count("PUT"),
        "DELETE": sim.count("DELETE"),
        "POST": sim.count("POST"),
        "polls": sim.count_polls(),
        "views": sim.count_views(),
        "resources": sim.resource_count(),
    }))
}

async fn admin_resources(AxState(sim): AxState<Simulator>) -> Json<Value> {
    Json(json!({ "value": sim.resources() }))
}
