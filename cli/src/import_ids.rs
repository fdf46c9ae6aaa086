//! `armctl import ARM_ID...`: GET existing Azure resources and print them as custom resources (YAML documents),
//! through `arm_import::import` — the same ARM client and credentials as the reconciler (`arm-client`). The ID decides the kind
//! (its resource type, in every API group of the registry) and the owner (by the kind's scope: the resource group,
//! the parent custom resource, the scope an extension resource extends, or none for a resource group).

use arm_client::arm::{ArmClient, RetryPolicy};
use arm_client::credentials::CredentialConfig;

use crate::{Failure, emit};

pub fn run(
    ids: &[String],
    children: bool,
    endpoint: &str,
    anonymous: bool,
    version: Option<&str>,
    namespace: Option<&str>,
) -> Result<(), Failure> {
    let endpoint: url::Url = endpoint
        .parse()
        .map_err(|e| format!("--arm-endpoint {endpoint:?}: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let http = reqwest::Client::new();
        let arm = ArmClient::new(http.clone(), endpoint, RetryPolicy::default());
        let bearer = if anonymous {
            None
        } else {
            let config = CredentialConfig::from_env(|k| std::env::var(k).ok())
                .map_err(|e| format!("credentials: {e} (or pass --anonymous for a simulator)"))?;
            let credential = config.credential(http);
            let token = credential
                .token(&arm.token_scope())
                .await
                .map_err(|e| format!("credentials: {e}"))?;
            Some(token.token.expose().to_string())
        };
        let objects = arm_import::import(&arm, bearer.as_deref(), ids, version, namespace, children)
            .await
            .map_err(|e| e.to_string())?;
        let mut out = String::new();
        for object in &objects {
            let yaml = serde_yaml_ng::to_string(object).map_err(|e| format!("cannot write YAML: {e}"))?;
            out.push_str("---\n");
            out.push_str(&yaml);
        }
        emit(&out)
    })
}
