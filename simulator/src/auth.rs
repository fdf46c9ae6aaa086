//! Fake token endpoints: Entra ID client credentials (`POST /{tenant}/oauth2/v2.0/token`) and managed identity
//! (IMDS, `GET /metadata/identity/oauth2/token`). Both answer 404 when the simulator has no [`crate::AuthConfig`].

use std::collections::HashMap;

use axum::Form;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::Simulator;
use crate::util::{random_token, unix_now};

const ARM_SCOPE: &str = "https://management.azure.com/.default";
const ARM_RESOURCES: &[&str] = &["https://management.azure.com/", "https://management.azure.com"];
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

fn aad_error(status: StatusCode, error: &str, description: String) -> Response {
    (
        status,
        axum::Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

fn no_auth() -> Response {
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({"error": "not_found", "error_description": "the simulator has no auth configuration"})),
    )
        .into_response()
}

impl Simulator {
    fn issue_token(&self) -> String {
        let token = random_token();
        let mut st = self.state();
        st.tokens.insert(token.clone());
        st.issued_tokens += 1;
        token
    }
}

pub(crate) async fn token(
    State(sim): State<Simulator>,
    Path(tenant): Path<String>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let Some(auth) = sim.config().auth.clone() else {
        return no_auth();
    };
    let field = |k: &str| form.get(k).map(String::as_str).unwrap_or_default();
    if tenant != auth.tenant_id {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            format!("AADSTS90002: Tenant '{tenant}' not found. Check to make sure you have the correct tenant ID."),
        );
    }
    if field("grant_type") != "client_credentials" {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            format!(
                "AADSTS70003: The app requested an unsupported grant type '{}'.",
                field("grant_type")
            ),
        );
    }
    if field("client_id") != auth.client_id {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            format!(
                "AADSTS700016: Application with identifier '{}' was not found in the directory '{tenant}'.",
                field("client_id")
            ),
        );
    }
    if field("scope") != ARM_SCOPE {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            format!(
                "AADSTS70011: The provided value for the input parameter 'scope' is not valid: '{}'.",
                field("scope")
            ),
        );
    }
    if form.contains_key("client_assertion") {
        if field("client_assertion_type") != JWT_BEARER {
            return aad_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("AADSTS50027: client_assertion_type must be '{JWT_BEARER}'."),
            );
        }
        if auth.federated_token.as_deref() != Some(field("client_assertion")) {
            return aad_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "AADSTS70021: No matching federated identity record found for presented assertion.".into(),
            );
        }
    } else if form.contains_key("client_secret") {
        if auth.client_secret.as_deref() != Some(field("client_secret")) {
            return aad_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                format!(
                    "AADSTS7000215: Invalid client secret provided for app '{}'.",
                    auth.client_id
                ),
            );
        }
    } else {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_client",
            "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'."
                .into(),
        );
    }
    let token = sim.issue_token();
    tracing::info!(tenant, "token issued (client credentials)");
    axum::Json(json!({"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": token}))
        .into_response()
}

pub(crate) async fn imds(
    State(sim): State<Simulator>,
    headers: HeaderMap,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(auth) = sim.config().auth.clone() else {
        return no_auth();
    };
    if headers
        .get("metadata")
        .and_then(|v| v.to_str().ok())
        .is_none_or(|v| !v.eq_ignore_ascii_case("true"))
    {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Required metadata header not specified".into(),
        );
    }
    if !auth.managed_identity {
        return aad_error(StatusCode::BAD_REQUEST, "invalid_request", "Identity not found".into());
    }
    if query.get("api-version").is_none_or(String::is_empty) {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "Required query variable 'api-version' is missing".into(),
        );
    }
    let resource = query.get("resource").cloned().unwrap_or_default();
    if !ARM_RESOURCES.contains(&resource.as_str()) {
        return aad_error(
            StatusCode::BAD_REQUEST,
            "invalid_resource",
            format!("AADSTS500011: The resource principal named {resource} was not found in the tenant."),
        );
    }
    if let Some(client_id) = query.get("client_id")
        && *client_id != auth.client_id
    {
        return aad_error(StatusCode::BAD_REQUEST, "invalid_request", "Identity not found".into());
    }
    let token = sim.issue_token();
    tracing::info!("token issued (managed identity)");
    axum::Json(json!({
        "access_token": token,
        "client_id": auth.client_id,
        "expires_in": "86399",
        "expires_on": (unix_now() + 86_399).to_string(),
        "ext_expires_in": "86399",
        "not_before": unix_now().to_string(),
        "resource": resource,
        "token_type": "Bearer",
    }))
    .into_response()
}
