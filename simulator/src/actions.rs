//! What the ARM actions of the generated registry ([`aks_api::ACTIONS`]: every `POST <resource ID>/<action>` of the
//! specs) do to their target, as data: one [`Behaviour`] row per (ARM type, action) whose service does more than
//! the spec says, each with the public source of that behaviour. An action without a row gets [`DEFAULT`]: its
//! target is `Updating` while it runs and nothing else changes.
//!
//! How an action is answered follows its [`armgen_runtime::ActionInfo`] (the spec): a long-running one (`202` among
//! its statuses) answers `202 Accepted` with `Azure-AsyncOperation` and `Location` and ends by polls; its result, when
//! it has one, is the answer of the `Location` URL once it succeeded (`200`), as ARM does for a POST
//! (`final-state-via: location`). Others answer at once: `200` with the result, else `204` (the first of those the spec
//! declares).

use serde_json::{Value, json};

/// A change an action makes to its target's body (or to the operation it runs), once it succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Writes a value (JSON text) at a dotted path of the target's body, creating objects on the way.
    Set(&'static str, &'static str),
    /// Writes a newer version at a dotted path: the string there with its last number incremented.
    Newer(&'static str),
    /// Copies the request body to a dotted path, without the listed members (secrets are never returned).
    FromBody(&'static str, &'static [&'static str]),
    /// Subtracts from the number at a dotted path (not below 0) the number of items of the request body's array
    /// member.
    Decrement {
        path: &'static str,
        by_items_of: &'static str,
    },
}

/// What the result of an action is (when the spec says it has one, [`armgen_runtime::ActionInfo::result`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResultOf {
    /// The target as `GET` returns it after the action.
    Target,
    /// A `RunCommandResult` of the request's `command` ([`run_command`]).
    RunCommand,
    /// The request body with one member added: the ID built from the template (`{group}`: the ID of the target's
    /// resource group, `{name}`: the body's `name`).
    EchoWith {
        member: &'static str,
        template: &'static str,
    },
    /// An ARM template (`{"template": {...}}`) of the resources in the target resource group.
    Template,
}

/// How the simulator runs one action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Behaviour {
    /// The target's ARM type (case-insensitive).
    pub arm_type: &'static str,
    /// The action (case-insensitive).
    pub action: &'static str,
    /// The target's `provisioningState` while the action runs; `None`: the target is not busy (and stays writable).
    pub running_state: Option<&'static str>,
    /// The changes made once it succeeded.
    pub effects: &'static [Effect],
    pub result: ResultOf,
    /// Whether the `202` carries the target's body (the spec's `202` has the target's schema).
    pub accepted_body: bool,
    /// Whether it cancels the operation running on its target ([`Behaviour::running_state`] is then the state while
    /// canceling, and the target ends `Canceled`); it is then allowed while the target is busy.
    pub cancels: bool,
}

/// An action without a row of [`BEHAVIOURS`].
pub(crate) const DEFAULT: Behaviour = Behaviour {
    arm_type: "",
    action: "",
    running_state: Some("Updating"),
    effects: &[],
    result: ResultOf::Target,
    accepted_body: false,
    cancels: false,
};

const MANAGED_CLUSTERS: &str = "Microsoft.ContainerService/managedClusters";
const AGENT_POOLS: &str = "Microsoft.ContainerService/managedClusters/agentPools";

/// The actions whose service does more than change nothing while `Updating`.
pub(crate) static BEHAVIOURS: &[Behaviour] = &[
    // "Stop an AKS cluster": `az aks stop`; `az aks show` then reports `"powerState": {"code": "Stopped"}`, and the
    // cluster is `Stopping` meanwhile (https://learn.microsoft.com/azure/aks/start-stop-cluster).
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "stop",
        running_state: Some("Stopping"),
        effects: &[Effect::Set("properties.powerState", r#"{"code": "Stopped"}"#)],
        ..DEFAULT
    },
    // "Start an AKS cluster": `az aks start`; `powerState.code` back to `Running`, `Starting` meanwhile
    // (https://learn.microsoft.com/azure/aks/start-stop-cluster).
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "start",
        running_state: Some("Starting"),
        effects: &[Effect::Set("properties.powerState", r#"{"code": "Running"}"#)],
        ..DEFAULT
    },
    // "Upgrade AKS node images": `az aks nodepool upgrade --node-image-only`; `az aks nodepool show --query
    // nodeImageVersion` then shows the newer image, and a node image version is never downgraded
    // (https://learn.microsoft.com/azure/aks/node-image-upgrade). The spec's 202 and final result are the AgentPool.
    Behaviour {
        arm_type: AGENT_POOLS,
        action: "upgradeNodeImageVersion",
        running_state: Some("UpgradingNodeImageVersion"),
        effects: &[Effect::Newer("properties.nodeImageVersion")],
        result: ResultOf::Target,
        accepted_body: true,
        ..DEFAULT
    },
    // "Rotate certificates in AKS": `az aks rotate-certs` recreates the nodes with new certificates; nothing of the
    // cluster's GET changes (https://learn.microsoft.com/azure/aks/certificate-rotation). The simulator's action log
    // (`Simulator::actions_run`) records it.
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "rotateClusterCertificates",
        ..DEFAULT
    },
    // "Rotate the OIDC key": `az aks oidc-issuer rotate-signing-keys`; the issuer URL stays the same
    // (https://learn.microsoft.com/azure/aks/use-oidc-issuer#rotate-the-oidc-key). Recorded in the action log.
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "rotateServiceAccountSigningKeys",
        ..DEFAULT
    },
    // "Access a private AKS cluster using the command invoke feature": `az aks command invoke` runs the command in a
    // pod and returns its exit code and logs (`ExitCode`, `Logs`, `StartedAt`, `FinishedAt` of Invoke-AzAksRunCommand,
    // https://learn.microsoft.com/azure/aks/access-private-cluster); the cluster itself does not change state.
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "runCommand",
        running_state: None,
        result: ResultOf::RunCommand,
        ..DEFAULT
    },
    // "Abort a long-running operation on an AKS cluster": "The Managed Cluster will be moved to a Canceling state and
    // eventually to a Canceled state when cancellation finishes" (Invoke-AzAksAbortManagedClusterLatestOperation,
    // https://learn.microsoft.com/powershell/module/az.aks/invoke-azaksabortmanagedclusterlatestoperation;
    // https://learn.microsoft.com/azure/aks/manage-abort-operations). With nothing running: `204` (the spec's).
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "abort",
        running_state: Some("Canceling"),
        cancels: true,
        ..DEFAULT
    },
    // The same for a node pool (`az aks nodepool operation-abort`,
    // https://learn.microsoft.com/azure/aks/manage-abort-operations).
    Behaviour {
        arm_type: AGENT_POOLS,
        action: "abort",
        running_state: Some("Canceling"),
        cancels: true,
        ..DEFAULT
    },
    // "Remove specific VMs in the existing node pool": `az aks nodepool delete-machines --machine-names ...`; the
    // pool's node count goes down by the machines named (https://learn.microsoft.com/azure/aks/manage-node-pools).
    Behaviour {
        arm_type: AGENT_POOLS,
        action: "deleteMachines",
        effects: &[Effect::Decrement {
            path: "properties.count",
            by_items_of: "machineNames",
        }],
        ..DEFAULT
    },
    // "Update or rotate the credentials for an AKS cluster": `az aks update-credentials --reset-service-principal`
    // sets the cluster's service principal (its secret is never returned)
    // (https://learn.microsoft.com/azure/aks/update-credentials).
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "resetServicePrincipalProfile",
        effects: &[Effect::FromBody("properties.servicePrincipalProfile", &["secret"])],
        ..DEFAULT
    },
    // The same page, `--reset-aad` (legacy Azure AD integration): the cluster's `aadProfile` is the one given (its
    // `serverAppSecret` never returned) (https://learn.microsoft.com/azure/aks/update-credentials).
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "resetAADProfile",
        effects: &[Effect::FromBody("properties.aadProfile", &["serverAppSecret"])],
        ..DEFAULT
    },
    // "Resolve Private Link Service Id": "Gets the private link service ID for the specified managed cluster"; the
    // response is the PrivateLinkResource given with its `privateLinkServiceID`
    // (https://learn.microsoft.com/rest/api/aks/resolve-private-link-service-id). Synchronous in the spec.
    Behaviour {
        arm_type: MANAGED_CLUSTERS,
        action: "resolvePrivateLinkServiceId",
        running_state: None,
        result: ResultOf::EchoWith {
            member: "privateLinkServiceID",
            template: "{group}/providers/Microsoft.Network/privateLinkServices/{name}",
        },
        ..DEFAULT
    },
    // "Resource Groups - Export Template": "Captures the specified resource group as a template"; the result is
    // `{"template": ...}` (https://learn.microsoft.com/rest/api/resources/resource-groups/export-template). The
    // group does not change state.
    Behaviour {
        arm_type: "Microsoft.Resources/resourceGroups",
        action: "exportTemplate",
        running_state: None,
        result: ResultOf::Template,
        ..DEFAULT
    },
    // "Subnets - Prepare Network Policies" / "Unprepare Network Policies": prepare a subnet for a service's network
    // intent policies; nothing of the subnet's GET changes
    // (https://learn.microsoft.com/rest/api/virtualnetwork/subnets/prepare-network-policies). Recorded in the log.
    Behaviour {
        arm_type: "Microsoft.Network/virtualNetworks/subnets",
        action: "PrepareNetworkPolicies",
        ..DEFAULT
    },
    Behaviour {
        arm_type: "Microsoft.Network/virtualNetworks/subnets",
        action: "UnprepareNetworkPolicies",
        ..DEFAULT
    },
];

/// The behaviour of `action` on a target of `arm_type`: its row of [`BEHAVIOURS`], else [`DEFAULT`].
pub(crate) fn behaviour(arm_type: &str, action: &str) -> &'static Behaviour {
    BEHAVIOURS
        .iter()
        .find(|b| b.arm_type.eq_ignore_ascii_case(arm_type) && b.action.eq_ignore_ascii_case(action))
        .unwrap_or(&DEFAULT)
}

/// The status of an action answered at once: `200` when it has a result, else `204`, else `200`, each only when
/// the spec declares it; else the first status the spec declares.
pub(crate) fn sync_status(statuses: &[u16], has_result: bool) -> u16 {
    let preferred: &[u16] = if has_result { &[200] } else { &[204, 200] };
    preferred
        .iter()
        .copied()
        .find(|s| statuses.contains(s))
        .or_else(|| statuses.first().copied())
        .unwrap_or(if has_result { 200 } else { 204 })
}

/// The value at a dotted path, creating objects on the way; `None` when a value on the way is not an object.
fn slot<'v>(body: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    let mut cur = body;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        if cur.is_null() {
            *cur = json!({});
        }
        cur = cur.as_object_mut()?.entry(seg).or_insert(Value::Null);
    }
    Some(cur)
}

/// The string with its last number incremented (`AKSUbuntu-2204gen2containerd-202507.21.0` →
/// `...202507.21.1`); `1` appended when it has none.
pub(crate) fn newer(version: &str) -> String {
    let end = version.rfind(|c: char| c.is_ascii_digit()).map(|i| i + 1);
    let Some(end) = end else {
        return format!("{version}1");
    };
    let start = version[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map(|i| i + 1)
        .unwrap_or(0);
    let digits = &version[start..end];
    let next = match digits.parse::<u64>() {
        Ok(n) => (n + 1).to_string(),
        // Too long for a u64: a longer number is still greater.
        Err(_) => format!("{digits}0"),
    };
    format!("{}{next}{}", &version[..start], &version[end..])
}

/// Applies the effects to the target's `body`; `request` is the action's request body.
pub(crate) fn apply(effects: &[Effect], body: &mut Value, request: Option<&Value>) {
    for effect in effects {
        match *effect {
            Effect::Set(path, value) => {
                if let (Some(slot), Ok(value)) = (slot(body, path), serde_json::from_str::<Value>(value)) {
                    *slot = value;
                }
            }
            Effect::Newer(path) => {
                if let Some(slot) = slot(body, path) {
                    *slot = json!(newer(slot.as_str().unwrap_or_default()));
                }
            }
            Effect::FromBody(path, secrets) => {
                let mut value = request.cloned().unwrap_or_else(|| json!({}));
                if let Some(obj) = value.as_object_mut() {
                    for s in secrets {
                        obj.remove(*s);
                    }
                }
                if let Some(slot) = slot(body, path) {
                    *slot = value;
                }
            }
            Effect::Decrement { path, by_items_of } => {
                let by = request
                    .and_then(|r| r.get(by_items_of))
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len) as u64;
                if let Some(slot) = slot(body, path)
                    && let Some(n) = slot.as_u64()
                {
                    *slot = json!(n.saturating_sub(by));
                }
            }
        }
    }
}

/// The exit code and logs of a simulated command: `exit N` (first word `exit`) exits with `N` and no output; `echo
/// TEXT` prints `TEXT`; anything else prints `$ COMMAND`. Exit code 0 unless `exit N`.
pub(crate) fn run_command(command: &str) -> (i64, String) {
    let command = command.trim();
    if let Some(rest) = command.strip_prefix("exit")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace))
    {
        let code = rest
            .split_whitespace()
            .next()
            .and_then(|c| c.trim_end_matches(';').parse::<i64>().ok())
            .unwrap_or(0);
        return (code, String::new());
    }
    if let Some(text) = command.strip_prefix("echo ") {
        return (0, format!("{}\n", text.trim()));
    }
    (0, format!("$ {command}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_versions_are_greater() {
        assert_eq!(
            newer("AKSUbuntu-2204gen2containerd-202507.21.0"),
            "AKSUbuntu-2204gen2containerd-202507.21.1"
        );
        assert_eq!(
            newer("AKSWindows-2022-containerd-20348.3932.250705"),
            "AKSWindows-2022-containerd-20348.3932.250706"
        );
        assert_eq!(newer("v9"), "v10");
        assert_eq!(newer("abc"), "abc1");
        assert_eq!(newer(""), "1");
    }

    #[test]
    fn commands_exit_and_echo() {
        assert_eq!(run_command("exit 3"), (3, String::new()));
        assert_eq!(run_command("exit"), (0, String::new()));
        assert_eq!(run_command("echo hello"), (0, "hello\n".into()));
        assert_eq!(run_command("kubectl get pods"), (0, "$ kubectl get pods\n".into()));
        assert_eq!(run_command("exited 3").0, 0);
    }

    #[test]
    fn effects_change_the_body() {
        let mut body = json!({"properties": {"count": 3, "powerState": {"code": "Running"}}});
        apply(
            &[
                Effect::Set("properties.powerState", r#"{"code": "Stopped"}"#),
                Effect::Decrement {
                    path: "properties.count",
                    by_items_of: "machineNames",
                },
                Effect::FromBody("properties.servicePrincipalProfile", &["secret"]),
                Effect::Newer("properties.nodeImageVersion"),
            ],
            &mut body,
            Some(&json!({"machineNames": ["a", "b"], "clientId": "c", "secret": "s"})),
        );
        assert_eq!(
            body,
            json!({"properties": {"count": 1, "powerState": {"code": "Stopped"}, "nodeImageVersion": "1",
                "servicePrincipalProfile": {"machineNames": ["a", "b"], "clientId": "c"}}})
        );
    }

    #[test]
    fn sync_statuses_are_declared_ones() {
        assert_eq!(sync_status(&[200], true), 200);
        assert_eq!(sync_status(&[202, 204], false), 204);
        assert_eq!(sync_status(&[200, 202], false), 200);
        assert_eq!(sync_status(&[202], false), 202);
    }

    #[test]
    fn every_row_names_an_action_of_the_registry() {
        for b in BEHAVIOURS {
            assert!(
                aks_api::ACTIONS
                    .iter()
                    .any(|a| a.kind.arm.arm_type.eq_ignore_ascii_case(b.arm_type)
                        && a.action.eq_ignore_ascii_case(b.action)),
                "{} {} is not in aks_api::ACTIONS",
                b.arm_type,
                b.action
            );
        }
    }
}
