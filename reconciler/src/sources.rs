//! Which credentials an object is reconciled with: the Secret its annotation names
//! ([`CREDENTIAL_FROM_ANNOTATION`]), else the namespace's Secret [`DEFAULT_CREDENTIAL_SECRET`] when it exists, else
//! the operator's global credential from its environment. See [`crate::credentials`] for the keys and methods.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::credentials::{
    CREDENTIAL_FROM_ANNOTATION, CredentialConfig, CredentialDefaults, Credentials, DEFAULT_CREDENTIAL_SECRET,
};
use crate::reconcile::{Access, CredentialProvider, Failure};

/// The operator's credential sources.
pub struct CredentialSources {
    credentials: Credentials,
    global: Option<CredentialConfig>,
    defaults: CredentialDefaults,
}

impl CredentialSources {
    /// `global`: the operator's own credential (`None`: only namespaces with a credential Secret work);
    /// `defaults`: what Secret-sourced configuration inherits (authority host, the pod's federated token file).
    pub fn new(credentials: Credentials, global: Option<CredentialConfig>, defaults: CredentialDefaults) -> Self {
        CredentialSources {
            credentials,
            global,
            defaults,
        }
    }

    async fn config(
        &self,
        client: &kube::Client,
        namespace: &str,
        annotations: &BTreeMap<String, String>,
    ) -> Result<CredentialConfig, Failure> {
        let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let named = annotations
            .get(CREDENTIAL_FROM_ANNOTATION)
            .map(|s| s.trim())
            .filter(|s| !s.is_empty());
        let name = named.unwrap_or(DEFAULT_CREDENTIAL_SECRET);
        let secret = secrets.get_opt(name).await.map_err(|e| {
            Failure::waiting(
                "CredentialsUnavailable",
                format!("reading Secret {namespace}/{name}: {e}"),
            )
        })?;
        match (secret, named) {
            (Some(secret), _) => CredentialConfig::from_kube_secret(&secret, &self.defaults)
                .map_err(|e| Failure::waiting("CredentialsInvalid", e.to_string())),
            (None, Some(_)) => Err(Failure::waiting(
                "CredentialsNotFound",
                format!("Secret {namespace}/{name} (annotation {CREDENTIAL_FROM_ANNOTATION}) does not exist"),
            )),
            (None, None) => self.global.clone().ok_or_else(|| {
                Failure::waiting(
                    "CredentialsNotFound",
                    format!(
                        "no Secret {namespace}/{DEFAULT_CREDENTIAL_SECRET} and the operator has no global credentials"
                    ),
                )
            }),
        }
    }
}

impl CredentialProvider for CredentialSources {
    fn access<'a>(
        &'a self,
        client: &'a kube::Client,
        namespace: &'a str,
        annotations: &'a BTreeMap<String, String>,
        scope: &'a str,
    ) -> BoxFuture<'a, Result<Access, Failure>> {
        Box::pin(async move {
            let config = self.config(client, namespace, annotations).await?;
            let credential = self.credentials.credential(&config);
            let token = credential
                .token(scope)
                .await
                .map_err(|e| Failure::waiting("AuthenticationFailed", e.to_string()))?;
            Ok(Access {
                subscription_id: config.subscription_id.clone(),
                bearer: Some(token.token.expose().to_string()),
            })
        })
    }
}
