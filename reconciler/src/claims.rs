//! Claims: one custom resource per Azure resource.
//!
//! With one operator credential shared by many namespaces, nothing in Azure tells team-a's cluster from a copy of
//! its custom resource that another tenant writes in namespace `other` with the same resource group and
//! `azureName`. So before the loop reads or writes an Azure resource it **claims** the resource's ARM ID: a
//! `coordination.k8s.io/v1` Lease in the operator's own namespace ([`Claims::namespace`], which tenants cannot
//! write), named after a hash of the lowercased ID (ARM IDs are case-insensitive), holding the claimant's kind,
//! namespace, name and UID. A second custom resource for the same ID is refused (`Ready=False`, reason
//! `ClaimedByOther`, naming the claimant) for as long as the claimant exists; a claim whose claimant is gone
//! (deleted, or recreated with another UID) is taken over. A claim is released when its claimant's deletion is
//! done (DELETE finished, or detached).
//!
//! The same record answers two other questions the loop must not take from tenant-writable status:
//! - **Which ID may a deletion DELETE?** Only one this object holds the claim of ([`Claims::holds`]); a
//!   `status.id` edited to point elsewhere is refused.
//! - **Which ID does a child's owner have?** The owner's `status.id` only counts when the owner holds its claim,
//!   so a forged status on a tenant's own "owner" object cannot aim a child at somebody else's cluster.
//!
//! Why a Lease: it is namespaced, typed, small, already granted for leader election, and a `create` is atomic, so
//! two claimants racing for one ID cannot both win. Why not an ARM tag (Azure Service Operator records ownership in
//! the Kubernetes object): not every ARM resource has tags, a tag is visible to and writable by anyone with Azure
//! access, and writing one would be a PUT where nothing changed. Confirmed claims are cached in memory, so an
//! object in sync costs no API-server call for its claim after the first reconcile.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kube::Api;
use kube::api::{DynamicObject, ObjectMeta, PostParams};
use sha2::{Digest, Sha256};

use crate::kinds::{api_resource, find_kind};

/// Annotations on a claim Lease.
const ARM_ID: &str = "armgen.dev/arm-id";
const CLAIMANT_UID: &str = "armgen.dev/claimant-uid";
const CLAIMANT_GROUP: &str = "armgen.dev/claimant-group";
const CLAIMANT_VERSION: &str = "armgen.dev/claimant-version";
const CLAIMANT_KIND: &str = "armgen.dev/claimant-kind";
const CLAIMANT_NAMESPACE: &str = "armgen.dev/claimant-namespace";
const CLAIMANT_NAME: &str = "armgen.dev/claimant-name";
/// The label every claim Lease has (`kubectl get leases -l armgen.dev/claim`).
pub const CLAIM_LABEL: &str = "armgen.dev/claim";

/// The custom resource that claims (or holds) an ARM ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimant {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: String,
}

impl std::fmt::Display for Claimant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// Why a claim was not granted.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    /// Another existing custom resource holds it.
    #[error("{id} is managed by {holder}; one Azure resource is managed by one custom resource")]
    Taken { id: String, holder: Claimant },
    /// The API server failed.
    #[error("claim of {id}: {source}")]
    Kube {
        id: String,
        #[source]
        source: kube::Error,
    },
}

/// The claims of one operator: the namespace of their Leases and the claims confirmed so far. Clones share the
/// cache.
#[derive(Debug, Clone)]
pub struct Claims {
    namespace: String,
    /// ARM ID ([`Claims::key`]: the first 160 bits of the SHA-256 of the lowercased ID, as in the Lease name)
    /// → UID of the custom resource holding it (confirmed against the API server). One entry per resource the
    /// reconciler serves: a key of 20 bytes rather than the ID's text (≈ 150 bytes) keeps it small at scale.
    confirmed: Arc<Mutex<HashMap<[u8; 20], String>>>,
}

impl Default for Claims {
    /// Claims in `aks-reconciler-system`, the namespace `config/` deploys to.
    fn default() -> Self {
        Claims::new("aks-reconciler-system")
    }
}

impl Claims {
    pub fn new(namespace: impl Into<String>) -> Self {
        Claims {
            namespace: namespace.into(),
            confirmed: Arc::default(),
        }
    }

    /// The namespace of the claim Leases (the operator's own).
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The Lease name of an ARM ID's claim: `armgen-claim-` and 40 hex digits of the SHA-256 of the lowercased ID.
    pub fn lease_name(id: &str) -> String {
        let hex: String = Self::key(id).iter().map(|b| format!("{b:02x}")).collect();
        format!("armgen-claim-{hex}")
    }

    /// The first 160 bits of the SHA-256 of the lowercased ID: the Lease name's hex digits, and the cache's key.
    fn key(id: &str) -> [u8; 20] {
        let digest = Sha256::digest(id.to_ascii_lowercase().as_bytes());
        let mut key = [0u8; 20];
        key.copy_from_slice(&digest[..20]);
        key
    }

    fn cached(&self, id: &str) -> Option<String> {
        self.confirmed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&Self::key(id))
            .cloned()
    }

    fn remember(&self, id: &str, uid: Option<&str>) {
        let key = Self::key(id);
        let mut confirmed = self.confirmed.lock().unwrap_or_else(|e| e.into_inner());
        match uid {
            Some(uid) => confirmed.insert(key, uid.to_string()),
            None => confirmed.remove(&key),
        };
    }

    fn api(&self, client: &kube::Client) -> Api<Lease> {
        Api::namespaced(client.clone(), &self.namespace)
    }

    /// Claims `id` for `me`, or confirms that `me` holds it. Refused while another existing custom resource
    /// holds it.
    pub async fn claim(&self, client: &kube::Client, id: &str, me: &Claimant) -> Result<(), ClaimError> {
        if self.cached(id).as_deref() == Some(me.uid.as_str()) {
            return Ok(());
        }
        let kube_err = |source| ClaimError::Kube {
            id: id.to_string(),
            source,
        };
        let api = self.api(client);
        let name = Self::lease_name(id);
        for _ in 0..3 {
            match api.get_opt(&name).await.map_err(kube_err)? {
                None => match api.create(&PostParams::default(), &lease(&name, id, me, None)).await {
                    Ok(_) => {
                        self.remember(id, Some(&me.uid));
                        return Ok(());
                    }
                    // Somebody created it in between: read it again.
                    Err(kube::Error::Api(s)) if s.code == 409 => continue,
                    Err(e) => return Err(kube_err(e)),
                },
                Some(existing) => {
                    let holder = holder_of(&existing);
                    if holder.as_ref().is_some_and(|h| h.uid == me.uid) {
                        self.remember(id, Some(&me.uid));
                        return Ok(());
                    }
                    if let Some(holder) = holder
                        && exists(client, &holder).await.map_err(kube_err)?
                    {
                        return Err(ClaimError::Taken {
                            id: id.to_string(),
                            holder,
                        });
                    }
                    // The holder is gone: take the claim over (optimistically, at the version read).
                    let version = existing.metadata.resource_version.clone();
                    match api
                        .replace(&name, &PostParams::default(), &lease(&name, id, me, version))
                        .await
                    {
                        Ok(_) => {
                            self.remember(id, Some(&me.uid));
                            return Ok(());
                        }
                        Err(kube::Error::Api(s)) if s.code == 409 => continue,
                        Err(e) => return Err(kube_err(e)),
                    }
                }
            }
        }
        Err(kube_err(kube::Error::Api(Box::new(
            kube::core::Status::failure("the claim changed while it was being taken", "Conflict").with_code(409),
        ))))
    }

    /// Who holds the claim of `id`: `None` when nobody does.
    pub async fn holder(&self, client: &kube::Client, id: &str) -> Result<Option<Claimant>, kube::Error> {
        let lease = self.api(client).get_opt(&Self::lease_name(id)).await?;
        Ok(lease.as_ref().and_then(holder_of))
    }

    /// Whether the custom resource with `uid` holds the claim of `id`.
    pub async fn holds(&self, client: &kube::Client, id: &str, uid: &str) -> Result<bool, kube::Error> {
        if self.cached(id).as_deref() == Some(uid) {
            return Ok(true);
        }
        let held = self.holder(client, id).await?.is_some_and(|h| h.uid == uid);
        if held {
            self.remember(id, Some(uid));
        }
        Ok(held)
    }

    /// Releases `me`'s claim of `id` (nothing when somebody else holds it).
    pub async fn release(&self, client: &kube::Client, id: &str, me: &Claimant) -> Result<(), kube::Error> {
        let api = self.api(client);
        let name = Self::lease_name(id);
        if let Some(existing) = api.get_opt(&name).await?
            && holder_of(&existing).is_some_and(|h| h.uid == me.uid)
        {
            match api.delete(&name, &Default::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        self.remember(id, None);
        Ok(())
    }
}

fn lease(name: &str, id: &str, me: &Claimant, resource_version: Option<String>) -> Lease {
    let annotations = BTreeMap::from([
        (ARM_ID.to_string(), id.to_string()),
        (CLAIMANT_UID.to_string(), me.uid.clone()),
        (CLAIMANT_GROUP.to_string(), me.group.clone()),
        (CLAIMANT_VERSION.to_string(), me.version.clone()),
        (CLAIMANT_KIND.to_string(), me.kind.clone()),
        (CLAIMANT_NAMESPACE.to_string(), me.namespace.clone()),
        (CLAIMANT_NAME.to_string(), me.name.clone()),
    ]);
    Lease {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            annotations: Some(annotations),
            labels: Some(BTreeMap::from([(CLAIM_LABEL.to_string(), "true".to_string())])),
            resource_version,
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(me.to_string()),
            ..Default::default()
        }),
    }
}

fn holder_of(lease: &Lease) -> Option<Claimant> {
    let a = lease.metadata.annotations.as_ref()?;
    let get = |k: &str| a.get(k).filter(|v| !v.is_empty()).cloned();
    Some(Claimant {
        group: get(CLAIMANT_GROUP)?,
        version: get(CLAIMANT_VERSION)?,
        kind: get(CLAIMANT_KIND)?,
        namespace: get(CLAIMANT_NAMESPACE)?,
        name: get(CLAIMANT_NAME)?,
        uid: get(CLAIMANT_UID)?,
    })
}

/// Whether the claimant still exists (same UID). A kind this reconciler does not know counts as existing: its
/// claim is never taken over.
async fn exists(client: &kube::Client, holder: &Claimant) -> Result<bool, kube::Error> {
    let Some(info) = find_kind(&holder.group, &holder.version, &holder.kind) else {
        return Ok(true);
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &holder.namespace, &api_resource(info));
    Ok(api
        .get_opt(&holder.name)
        .await?
        .is_some_and(|o| o.metadata.uid.as_deref() == Some(holder.uid.as_str())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_names_are_stable_case_insensitive_and_valid() {
        let a = Claims::lease_name("/subscriptions/S/resourceGroups/RG/providers/Microsoft.X/y/z");
        let b = Claims::lease_name("/subscriptions/s/resourcegroups/rg/providers/microsoft.x/y/z");
        assert_eq!(a, b);
        assert_eq!(a.len(), "armgen-claim-".len() + 40);
        assert!(crate::names::check_object_name("lease", &a).is_ok());
        assert_ne!(
            a,
            Claims::lease_name("/subscriptions/s/resourceGroups/rg/providers/Microsoft.X/y/w")
        );
    }
}
