//! Which credentials an object is reconciled with: the Secret its annotation names
//! ([`CREDENTIAL_FROM_ANNOTATION`]), else the namespace's Secret [`DEFAULT_CREDENTIAL_SECRET`] when it exists, else
//! the operator's global credential from its environment. See [`crate::credentials`] for the keys and methods, and
//! for the trust model: a namespace's Secret proves only its own identity (inline federated token or client
//! secret), at an authority host the operator allows; the annotation must be a Secret name in the object's own
//! namespace (`Ready=False`, reason `InvalidCredentialReference`, otherwise).

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

use crate::context::{Access, CredentialProvider, Failure};
use crate::credentials::{
    CREDENTIAL_FROM_ANNOTATION, CredentialConfig, CredentialDefaults, CredentialError, Credentials,
    DEFAULT_CREDENTIAL_SECRET, credential_secret_name,
};

/// The operator's credential sources.
pub struct CredentialSources {
    credentials: Credentials,
    global: Option<CredentialConfig>,
    defaults: CredentialDefaults,
}

impl CredentialSources {
    /// `global`: the operator's own credential (`None`: only namespaces with a credential Secret work);
    /// `defaults`: the authority host Secret-sourced configuration inherits and the authority hosts it may choose.
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
        let named = annotations
            .get(CREDENTIAL_FROM_ANNOTATION)
            .is_some_and(|s| !s.trim().is_empty());
        // The name reaches the API server's URL: checked first (a DNS-1123 subdomain, this namespace only).
        let name = credential_secret_name(Some(annotations))
            .map_err(|e| Failure::permanent("InvalidCredentialReference", e.to_string()))?;
        let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
        let secret = secrets.get_opt(name).await.map_err(|e| {
            Failure::waiting(
                "CredentialsUnavailable",
                format!("reading Secret {namespace}/{name}: {e}"),
            )
        })?;
        match (secret, named) {
            (Some(secret), _) => CredentialConfig::from_kube_secret(&secret, &self.defaults).map_err(|e| {
                let reason = match e {
                    CredentialError::NotAllowed { .. } => "CredentialsNotAllowed",
                    _ => "CredentialsInvalid",
                };
                Failure::waiting(reason, e.to_string())
            }),
            (None, true) => Err(Failure::waiting(
                "CredentialsNotFound",
                format!("Secret {namespace}/{name} (annotation {CREDENTIAL_FROM_ANNOTATION}) does not exist"),
            )),
            (None, false) => self.global.clone().ok_or_else(|| {
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
