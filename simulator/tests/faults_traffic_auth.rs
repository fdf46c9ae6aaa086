//! Injected faults, the traffic log and its file format, and bearer-token authentication.

mod common;

use arm_simulator::{AuthConfig, Fault, FaultRule, SimulatorConfig};
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn throttle_server_error_and_dropped_connection() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    env.sim.inject(
        FaultRule::new(Fault::Throttle { retry_after_secs: 7 })
            .method("get")
            .path_contains("MANAGEDCLUSTERS")
            .times(2),
    );
    for _ in 0..2 {
        let r = env.get(&id, V2).await;
        assert_eq!((r.status, r.code()), (429, "TooManyRequests"));
        assert_eq!(r.header("retry-after").as_deref(), Some("7"));
    }
    assert_eq!(env.get(&id, V2).await.status, 404);
    // A PUT does not match a GET rule.
    env.sim.inject(FaultRule::new(Fault::ServerError).method("PUT"));
    assert_eq!(env.get(&id, V2).await.status, 404);
    let r = env.put(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!((r.status, r.code()), (500, "InternalServerError"));
    assert!(env.sim.resource(&id).is_none());

    env.sim
        .inject(FaultRule::new(Fault::DropConnection).path_contains("agentPools"));
    let pool = pool_id("rg", "c", "p");
    let err = env.client.get(env.url(&pool, V2)).send().await;
    assert!(err.is_err(), "expected a connection error, got {err:?}");
    assert_eq!(env.get(&pool, V2).await.status, 404);
    assert_eq!(env.sim.count("GET"), 6);
    // Dropped requests leave no exchange.
    assert_eq!(env.sim.traffic().len(), 6);
}

#[tokio::test]
async fn failed_and_canceled_operations() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    env.sim.inject(
        FaultRule::new(Fault::FailOperation {
            code: "QuotaExceeded".into(),
            message: "no cores left".into(),
        })
        .method("PUT"),
    );
    let r = env.put(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!(r.status, 201);
    let url = r.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    let end = env.wait(&url).await;
    assert_eq!(end["status"], "Failed");
    assert_eq!(
        end["error"],
        json!({"code": "QuotaExceeded", "message": "no cores left"})
    );
    assert_eq!(env.get(&id, V2).await.body["properties"]["provisioningState"], "Failed");
    // Failed is terminal: a new PUT is accepted, and the rule was used up.
    let again = env.put(&id, V2, &json!({"location": "westeurope"})).await;
    assert_eq!(again.status, 200);
    let url = again.header("azure-asyncoperation").expect("Azure-AsyncOperation");
    assert_eq!(env.wait(&url).await["status"], "Succeeded");

    env.sim.inject(FaultRule::new(Fault::CancelOperation).method("DELETE"));
    let d = env.delete(&id, V2).await;
    assert_eq!(d.status, 202);
    let location = d.header("location").expect("Location");
    assert_eq!(env.get_url(&location).await.status, 202);
    assert_eq!(env.get_url(&location).await.status, 202);
    let end = env.get_url(&location).await;
    assert_eq!(end.status, 400);
    let status = env
        .get_url(&d.header("azure-asyncoperation").expect("Azure-AsyncOperation"))
        .await;
    assert_eq!(status.body["status"], "Canceled");
    assert_eq!(
        env.get(&id, V2).await.body["properties"]["provisioningState"],
        "Canceled"
    );

    // An operation fault waits for a request that starts an operation.
    env.sim.inject(FaultRule::new(Fault::FailOperation {
        code: "Boom".into(),
        message: "m".into(),
    }));
    assert_eq!(env.get(&id, V2).await.status, 200);
    let p = env
        .put(&pool_id("rg", "c", "p"), V2, &json!({"properties": {"count": 1}}))
        .await;
    let end = env
        .wait(&p.header("azure-asyncoperation").expect("Azure-AsyncOperation"))
        .await;
    assert_eq!(end["error"]["code"], "Boom");
}

#[tokio::test]
async fn admin_endpoints() {
    let env = Env::default().await;
    let base = &env.running.base_url;
    let rule = json!({"fault": {"kind": "Throttle", "retry_after_secs": 3}, "method": "GET"});
    let r = env
        .client
        .post(format!("{base}/_simulator/faults"))
        .json(&rule)
        .send()
        .await
        .expect("POST");
    assert_eq!(r.status().as_u16(), 204);
    let id = cluster_id("rg", "c");
    assert_eq!(env.get(&id, V2).await.status, 429);
    env.create(&id, V2, &json!({"location": "westeurope"})).await;
    let resources: Value = env
        .client
        .get(format!("{base}/_simulator/resources"))
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    assert_eq!(resources["value"][0]["id"], id);
    let traffic: Value = env
        .client
        .get(format!("{base}/_simulator/traffic"))
        .send()
        .await
        .expect("GET")
        .json()
        .await
        .expect("JSON");
    let traffic = traffic.as_array().expect("array");
    assert_eq!(traffic.len(), env.sim.traffic().len());
    assert_eq!(traffic[0]["liveResponse"]["statusCode"], "429");
    env.client
        .delete(format!("{base}/_simulator/traffic"))
        .send()
        .await
        .expect("DELETE");
    assert!(env.sim.traffic().is_empty());
    assert_eq!(env.sim.count("GET"), 0);
}

fn auth() -> AuthConfig {
    AuthConfig {
        tenant_id: "11111111-1111-1111-1111-111111111111".into(),
        client_id: "22222222-2222-2222-2222-222222222222".into(),
        federated_token: Some("eyJ.federated.token".into()),
        client_secret: Some("s3cret".into()),
        managed_identity: true,
    }
}

async fn token(env: &Env, form: &[(&str, &str)]) -> (u16, Value) {
    let url = format!("{}/{}/oauth2/v2.0/token", env.running.base_url, auth().tenant_id);
    let r = env.client.post(url).form(form).send().await.expect("POST");
    (r.status().as_u16(), r.json().await.expect("JSON"))
}

#[tokio::test]
async fn bearer_tokens_and_token_endpoints() {
    let env = Env::start(SimulatorConfig {
        retry_after_secs: 0,
        auth: Some(auth()),
        ..Default::default()
    })
    .await;
    let a = auth();
    let base = [
        ("grant_type", "client_credentials"),
        ("client_id", a.client_id.as_str()),
        ("scope", "https://management.azure.com/.default"),
        (
            "client_assertion_type",
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
        ),
    ];
    let with = |extra: (&'static str, &'static str)| {
        let mut f = base.to_vec();
        f.push(extra);
        f
    };
    let (status, body) = token(&env, &with(("client_assertion", "eyJ.wrong"))).await;
    assert_eq!(status, 401);
    assert_eq!(body["error"], "invalid_client");
    assert!(
        body["error_description"]
            .as_str()
            .is_some_and(|d| d.starts_with("AADSTS"))
    );
    let (status, body) = token(&env, &base[..3]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_client")));
    let mut wrong_scope = with(("client_assertion", "eyJ.federated.token"));
    wrong_scope[2] = ("scope", "https://graph.microsoft.com/.default");
    assert_eq!(token(&env, &wrong_scope).await.0, 400);

    let (status, body) = token(&env, &with(("client_assertion", "eyJ.federated.token"))).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "Bearer");
    assert_eq!(body["expires_in"], 3599);
    let access = body["access_token"].as_str().expect("token").to_string();
    let mut secret = base[..3].to_vec();
    secret.push(("client_secret", "s3cret"));
    assert_eq!(token(&env, &secret).await.0, 200);
    secret[3] = ("client_secret", "nope");
    assert_eq!(token(&env, &secret).await.0, 401);

    let id = cluster_id("rg", "c");
    let r = env.get(&id, V2).await;
    assert_eq!((r.status, r.code()), (401, "AuthenticationFailed"));
    assert!(
        r.header("www-authenticate")
            .is_some_and(|h| h.starts_with("Bearer authorization_uri="))
    );
    let r = Reply::of(
        env.client
            .get(env.url(&id, V2))
            .bearer_auth("forged")
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(r.status, 401);
    let r = Reply::of(
        env.client
            .get(env.url(&id, V2))
            .bearer_auth(&access)
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(env.sim.authenticated_requests(), 1);

    // IMDS.
    let imds = format!(
        "{}/metadata/identity/oauth2/token?api-version=2018-02-01&resource=https://management.azure.com/",
        env.running.base_url
    );
    let r = env.client.get(&imds).send().await.expect("GET");
    assert_eq!(r.status().as_u16(), 400);
    let r = env
        .client
        .get(&imds)
        .header("Metadata", "true")
        .send()
        .await
        .expect("GET");
    assert_eq!(r.status().as_u16(), 200);
    let body: Value = r.json().await.expect("JSON");
    assert_eq!(body["expires_in"], "86399");
    assert_eq!(body["resource"], "https://management.azure.com/");
    assert!(body["expires_on"].as_str().is_some_and(|s| s.parse::<u64>().is_ok()));
    let mi_token = body["access_token"].as_str().expect("token").to_string();
    let other = format!("{imds}&client_id=someone-else");
    assert_eq!(
        env.client
            .get(&other)
            .header("Metadata", "true")
            .send()
            .await
            .expect("GET")
            .status()
            .as_u16(),
        400
    );
    let r = Reply::of(
        env.client
            .get(env.url(&id, V2))
            .bearer_auth(&mi_token)
            .send()
            .await
            .expect("GET"),
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(env.sim.issued_tokens(), 3);
    assert_eq!(env.sim.authenticated_requests(), 2);

    // Token calls are not traffic; the Authorization header is redacted.
    let traffic = env.sim.traffic();
    assert_eq!(traffic.len(), 4);
    assert_eq!(
        traffic[3].request.headers.get("authorization").map(String::as_str),
        Some("Bearer <redacted>")
    );
    assert!(!format!("{traffic:?}").contains(&access));
}

#[tokio::test]
async fn tokens_are_not_served_without_auth_config() {
    let env = Env::default().await;
    let (status, _) = token(&env, &[("grant_type", "client_credentials")]).await;
    assert_eq!(status, 404);
    assert_eq!(env.get(&cluster_id("rg", "c"), V2).await.status, 404);
    assert_eq!(env.sim.authenticated_requests(), 0);
}

#[tokio::test]
async fn traffic_files_in_the_oav_format() {
    let env = Env::default().await;
    let id = cluster_id("rg", "c");
    env.create(&id, V2, &json!({"location": "westeurope", "tags": {"a": "b"}}))
        .await;
    let traffic = env.sim.traffic();
    // PUT, three polls, GET.
    assert_eq!(traffic.len(), 5);
    assert!(traffic.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    let dir = tempfile::tempdir().expect("tempdir");
    assert_eq!(env.sim.write_traffic(dir.path()).expect("write"), 5);
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 5);
    let first: Value = serde_json::from_str(&std::fs::read_to_string(&files[0]).expect("read")).expect("JSON");
    let req = &first["liveRequest"];
    assert_eq!(req["method"], "PUT");
    assert_eq!(req["url"], env.url(&id, V2));
    assert_eq!(req["body"]["tags"]["a"], "b");
    assert!(req["headers"].is_object());
    let resp = &first["liveResponse"];
    assert_eq!(resp["statusCode"], "201");
    assert_eq!(resp["headers"]["retry-after"], "0");
    assert!(resp["headers"]["azure-asyncoperation"].is_string());
    assert_eq!(resp["body"]["properties"]["provisioningState"], "Creating");
    let poll: Value = serde_json::from_str(&std::fs::read_to_string(&files[1]).expect("read")).expect("JSON");
    assert_eq!(poll["liveRequest"]["method"], "GET");
    assert_eq!(poll["liveResponse"]["body"]["status"], "InProgress");
    assert!(poll["liveRequest"]["body"].is_null());
}
