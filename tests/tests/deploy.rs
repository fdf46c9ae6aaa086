//! The deployment manifests (`config/`, kustomize): `kubectl kustomize config/default` builds, and what it
//! builds fits together — every generated CRD converts through the webhook Service of the output, the
//! Deployment's ports, probes and flags match that Service, the RBAC grants what the reconciler does and no more
//! (what it needs on the kinds of every generated API group, from the CRDs and `aks_api::KINDS`; `generated/rbac`),
//! workload identity is wired, and the cert-manager Certificate's Secret is what the reconciler serves TLS with.
//!
//! Needs `kubectl` (its built-in kustomize). Without it on `PATH` the tests are ignored with a reason
//! (`cfg(kubectl_missing)`, set by `tests/build.rs`); with `CI` set they always run and fail when kubectl is missing.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

/// Where the webhook certificate is mounted and what the reconciler's `--tls-*-file` defaults read.
const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// The output of `kubectl kustomize config/default`, one JSON value per document.
fn built() -> &'static [Value] {
    static OUT: OnceLock<Vec<Value>> = OnceLock::new();
    OUT.get_or_init(|| {
        let output = Command::new("kubectl")
            .args(["kustomize", "config/default"])
            .current_dir(common::workspace())
            .output()
            .unwrap_or_else(|e| panic!("kubectl cannot be run ({e}); install it (Debian package `kubectl`)"));
        assert!(
            output.status.success(),
            "kubectl kustomize config/default failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = String::from_utf8(output.stdout).expect("UTF-8 output");
        documents(&text)
    })
}

fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|d| Value::deserialize(d).expect("a parseable YAML document"))
        .filter(|v| !v.is_null())
        .collect()
}

fn of_kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn one<'a>(docs: &'a [Value], kind: &str) -> &'a Value {
    let found = of_kind(docs, kind);
    assert_eq!(found.len(), 1, "exactly one {kind} in the output");
    found[0]
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The committed CRD manifests of `generated/crds`: name → manifest.
fn generated_crds() -> BTreeMap<String, Value> {
    let dir = common::workspace().join("generated/crds");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("generated/crds") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|x| x != "yaml") || path.ends_with("kustomization.yaml") {
            continue;
        }
        let crd: Value = serde_yaml_ng::from_str(&std::fs::read_to_string(&path).expect("read")).expect("yaml");
        out.insert(s(&crd["metadata"]["name"]).to_string(), crd);
    }
    out
}

/// The first JSON pointer where `a` and `b` differ (numbers compared as f64: YAML tools may write `2` as `2.0`).
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| {
                let (l, r) = (x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null));
                first_difference(l, r, &format!("{at}/{k}"))
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (l, r))| first_difference(l, r, &format!("{at}/{i}"))),
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ if a == b => None,
        _ => Some(format!("{at}: {a} != {b}")),
    }
}

/// The reconciled kinds: the CRDs with a status subresource (the template kinds have none).
fn reconciled_plurals(crds: &BTreeMap<String, Value>) -> BTreeSet<(String, String)> {
    crds.values()
        .filter(|c| {
            c["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["subresources"]["status"].is_object())
        })
        .map(|c| {
            (
                s(&c["spec"]["group"]).to_string(),
                s(&c["spec"]["names"]["plural"]).to_string(),
            )
        })
        .collect()
}

/// The Deployment's one container.
fn container(docs: &[Value]) -> &Value {
    let containers = one(docs, "Deployment")["spec"]["template"]["spec"]["containers"]
        .as_array()
        .expect("containers");
    assert_eq!(containers.len(), 1, "one container");
    &containers[0]
}

/// The value of `--name=value` (or `--name value`) in the container's args.
fn flag<'a>(container: &'a Value, name: &str) -> Option<&'a str> {
    let args = strings(&container["args"]);
    let prefix = format!("--{name}=");
    args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix(&prefix)
            .or_else(|| (*a == format!("--{name}")).then(|| args.get(i + 1).copied()).flatten())
    })
}

/// A container port given by number or name.
fn port_number(container: &Value, port: &Value) -> u64 {
    if let Some(n) = port.as_u64() {
        return n;
    }
    container["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == *port)
        .and_then(|p| p["containerPort"].as_u64())
        .unwrap_or_else(|| panic!("no container port named {port}"))
}

/// The port of a listen address `HOST:PORT`.
fn listen_port(address: &str) -> u64 {
    address
        .rsplit_once(':')
        .and_then(|(_, p)| p.parse().ok())
        .unwrap_or_else(|| panic!("{address:?} is not HOST:PORT"))
}

#[test]
#[cfg_attr(kubectl_missing, ignore = "needs kubectl on PATH (its built-in kustomize)")]
fn every_generated_crd_converts_through_the_webhook_service() {
    let docs = built();
    let generated = generated_crds();
    assert!(generated.len() >= 9, "{:?}", generated.keys());
    let crds: BTreeMap<&str, &Value> = of_kind(docs, "CustomResourceDefinition")
        .into_iter()
        .map(|c| (s(&c["metadata"]["name"]), c))
        .collect();
    assert_eq!(
        crds.keys().copied().collect::<BTreeSet<_>>(),
        generated.keys().map(String::as_str).collect::<BTreeSet<_>>(),
        "the output has exactly the CRDs of generated/crds"
    );

    let service = one(docs, "Service");
    let certificate = one(docs, "Certificate");
    let inject = format!(
        "{}/{}",
        s(&certificate["metadata"]["namespace"]),
        s(&certificate["metadata"]["name"])
    );
    for (name, crd) in &crds {
        let group = s(&crd["spec"]["group"]);
        assert!(
            aks_api::KINDS.iter().any(|k| k.kube_group == group),
            "{name}: {group} is the API group of a generated kind"
        );
        assert!(name.ends_with(&format!(".{group}")), "{name}");
        let conversion = &crd["spec"]["conversion"];
        assert_eq!(conversion["strategy"], "Webhook", "{name}");
        let webhook = &conversion["webhook"];
        assert_eq!(strings(&webhook["conversionReviewVersions"]), ["v1"], "{name}");
        let target = &webhook["clientConfig"]["service"];
        assert_eq!(
            target["name"], service["metadata"]["name"],
            "{name}: the Service of the output"
        );
        assert_eq!(target["namespace"], service["metadata"]["namespace"], "{name}");
        assert_eq!(target["path"], "/convert", "{name}");
        let port = target["port"].as_u64().unwrap_or(443);
        assert!(
            service["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|p| p["port"] == port),
            "{name}: the Service has port {port}"
        );
        assert!(webhook["clientConfig"]["url"].is_null(), "{name}");
        assert_eq!(
            s(&crd["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]),
            inject,
            "{name}: cert-manager injects the CA of the webhook's Certificate"
        );
        // Nothing else of the generated manifest is changed.
        let original = &generated[*name];
        for key in ["versions", "names", "scope", "group"] {
            if let Some(at) = first_difference(&crd["spec"][key], &original["spec"][key], &format!("/spec/{key}")) {
                panic!("{name}: the output's CRD differs from generated/crds at {at}");
            }
        }
        assert!(
            crd["metadata"]["namespace"].is_null(),
            "{name}: CRDs are cluster-scoped"
        );
    }
}

#[test]
#[cfg_attr(kubectl_missing, ignore = "needs kubectl on PATH (its built-in kustomize)")]
fn the_deployment_serves_what_the_service_probes_and_flags_say() {
    let docs = built();
    let deployment = one(docs, "Deployment");
    let service = one(docs, "Service");
    let namespace = &deployment["metadata"]["namespace"];
    assert!(namespace.is_string(), "the Deployment is namespaced");
    assert_eq!(service["metadata"]["namespace"], *namespace);
    let ns = one(docs, "Namespace");
    assert_eq!(ns["metadata"]["name"], *namespace, "the output creates its namespace");

    let spec = &deployment["spec"];
    assert!(spec["replicas"].as_u64().unwrap_or(1) >= 2, "replicas for availability");
    let pod = &spec["template"];
    let labels = pod["metadata"]["labels"].as_object().expect("pod labels");
    for (k, v) in service["spec"]["selector"].as_object().expect("selector") {
        assert_eq!(labels.get(k), Some(v), "the Service selects the pods ({k})");
    }
    for (k, v) in spec["selector"]["matchLabels"].as_object().expect("matchLabels") {
        assert_eq!(labels.get(k), Some(v), "the Deployment selects its pods ({k})");
    }

    let c = container(docs);
    assert_eq!(c["image"], "aks-reconciler:latest", "the one image placeholder");
    assert!(
        strings(&c["args"]).contains(&"--leader-elect"),
        "two replicas need leader election"
    );
    assert_eq!(flag(c, "log-format"), Some("json"));

    // Webhook: Service 443 → targetPort → the container port the reconciler listens on.
    let webhook_port = listen_port(flag(c, "webhook-listen").expect("--webhook-listen"));
    let https = service["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["port"] == 443)
        .expect("the Service listens on 443");
    assert_eq!(port_number(c, &https["targetPort"]), webhook_port);
    assert!(
        c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["containerPort"] == webhook_port),
        "the container declares the webhook port"
    );

    // Probes: /healthz and /readyz on the metrics listener.
    let metrics_port = listen_port(flag(c, "metrics-listen").expect("--metrics-listen"));
    for (probe, path) in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")] {
        let get = &c[probe]["httpGet"];
        assert_eq!(get["path"], path, "{probe}");
        assert_eq!(
            port_number(c, &get["port"]),
            metrics_port,
            "{probe} on --metrics-listen"
        );
        assert!(
            get["scheme"].is_null() || get["scheme"] == "HTTP",
            "{probe}: plain HTTP"
        );
    }

    // Resources and the restricted security context.
    for k in ["requests", "limits"] {
        for r in ["cpu", "memory"] {
            assert!(c["resources"][k][r].is_string(), "resources.{k}.{r}");
        }
    }
    let sc = &c["securityContext"];
    let pod_sc = &pod["spec"]["securityContext"];
    assert!(sc["runAsNonRoot"] == true || pod_sc["runAsNonRoot"] == true, "non-root");
    assert_eq!(sc["readOnlyRootFilesystem"], true);
    assert_eq!(sc["allowPrivilegeEscalation"], false);
    assert_eq!(strings(&sc["capabilities"]["drop"]), ["ALL"]);
    assert!(sc["capabilities"]["add"].is_null());
    assert_eq!(pod_sc["seccompProfile"]["type"], "RuntimeDefault");
    assert!(pod["spec"]["hostNetwork"].is_null() && sc["privileged"].is_null());
}

#[test]
#[cfg_attr(kubectl_missing, ignore = "needs kubectl on PATH (its built-in kustomize)")]
fn the_certificate_secret_is_mounted_where_the_tls_flags_read() {
    let docs = built();
    let certificate = one(docs, "Certificate");
    let service = one(docs, "Service");
    let secret = s(&certificate["spec"]["secretName"]);
    assert!(!secret.is_empty());
    let dns = format!(
        "{}.{}.svc",
        s(&service["metadata"]["name"]),
        s(&service["metadata"]["namespace"])
    );
    assert!(
        strings(&certificate["spec"]["dnsNames"]).contains(&dns.as_str()),
        "the certificate names {dns}"
    );
    let issuer = one(docs, "Issuer");
    assert_eq!(certificate["spec"]["issuerRef"]["name"], issuer["metadata"]["name"]);
    assert_eq!(certificate["spec"]["issuerRef"]["kind"], "Issuer");
    assert!(issuer["spec"]["selfSigned"].is_object(), "a self-signed issuer");
    assert_eq!(issuer["metadata"]["namespace"], certificate["metadata"]["namespace"]);

    let deployment = one(docs, "Deployment");
    let volume = deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["secret"]["secretName"] == secret)
        .expect("a volume of the Certificate's Secret");
    let c = container(docs);
    let mount = c["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["name"] == volume["name"])
        .expect("the certificate volume is mounted");
    assert_eq!(mount["readOnly"], true);
    let dir = s(&mount["mountPath"]);
    assert_eq!(
        dir, CERT_DIR,
        "the reconciler's default --tls-cert-file/--tls-key-file folder"
    );
    for (flag_name, file) in [("tls-cert-file", "tls.crt"), ("tls-key-file", "tls.key")] {
        let path = flag(c, flag_name).unwrap_or_default();
        let path = if path.is_empty() {
            format!("{CERT_DIR}/{file}")
        } else {
            path.to_string()
        };
        assert_eq!(Path::new(&path), Path::new(dir).join(file), "--{flag_name}");
    }
}

#[test]
#[cfg_attr(kubectl_missing, ignore = "needs kubectl on PATH (its built-in kustomize)")]
fn workload_identity_is_wired() {
    let docs = built();
    let sa = one(docs, "ServiceAccount");
    let deployment = one(docs, "Deployment");
    let pod = &deployment["spec"]["template"];
    assert_eq!(pod["spec"]["serviceAccountName"], sa["metadata"]["name"]);
    assert_eq!(sa["metadata"]["namespace"], deployment["metadata"]["namespace"]);
    let client_id = s(&sa["metadata"]["annotations"]["azure.workload.identity/client-id"]);
    assert_eq!(
        client_id.len(),
        36,
        "a client ID (placeholder) for users to patch: {client_id:?}"
    );
    assert_eq!(pod["metadata"]["labels"]["azure.workload.identity/use"], "true");
    let env: BTreeSet<&str> = container(docs)["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| s(&e["name"]))
        .collect();
    assert!(env.contains("AZURE_SUBSCRIPTION_ID"), "{env:?}");
    for injected in ["AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_FEDERATED_TOKEN_FILE"] {
        assert!(
            !env.contains(injected),
            "{injected} is injected by the workload identity webhook"
        );
    }
}

/// (apiGroup, resource, verb) of every rule; panics on wildcards, resource names and non-resource URLs.
fn grants(role: &Value) -> BTreeSet<(String, String, String)> {
    let name = s(&role["metadata"]["name"]);
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_array().expect("rules") {
        assert!(rule["nonResourceURLs"].is_null(), "{name}: no non-resource URLs");
        assert!(rule["resourceNames"].is_null(), "{name}: no resource names");
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    for x in [group, resource, verb] {
                        assert!(!x.contains('*'), "{name}: no wildcards ({group}/{resource}: {verb})");
                    }
                    out.insert((group.to_string(), resource.to_string(), verb.to_string()));
                }
            }
        }
    }
    out
}

fn expand(group: &str, resource: &str, verbs: &[&str]) -> Vec<(String, String, String)> {
    verbs
        .iter()
        .map(|v| (group.to_string(), resource.to_string(), v.to_string()))
        .collect()
}

#[test]
#[cfg_attr(kubectl_missing, ignore = "needs kubectl on PATH (its built-in kustomize)")]
fn rbac_grants_exactly_what_the_reconciler_does() {
    let docs = built();
    let plurals = reconciled_plurals(&generated_crds());
    let aks = common::aks_group().kube_group;
    assert!(
        plurals.contains(&(aks.clone(), "managedclusters".to_string()))
            && !plurals.contains(&(aks, "managedclustertemplates".to_string()))
    );
    // (API group, plural) of every kind of every group in the registry, the action kinds included.
    let registry: BTreeSet<(String, String)> = aks_api::every_kind()
        .map(|k| (k.kube_group.to_string(), k.plural.to_string()))
        .collect();
    assert_eq!(plurals, registry, "the reconciled CRDs are the registry's kinds");
    assert_eq!(
        registry.iter().map(|(g, _)| g.as_str()).collect::<BTreeSet<_>>(),
        aks_api::VERSIONS.iter().map(|v| v.kube_group).collect::<BTreeSet<_>>(),
        "kinds of every generated group"
    );

    let mut on_kinds = BTreeSet::new();
    for (group, p) in &plurals {
        on_kinds.extend(expand(group, p, &["get", "list", "watch", "patch", "update"]));
        on_kinds.extend(expand(group, &format!("{p}/status"), &["get", "patch", "update"]));
        on_kinds.extend(expand(group, &format!("{p}/finalizers"), &["update"]));
    }
    let mut needed = on_kinds.clone();
    needed.extend(expand("", "secrets", &["get", "create", "update", "patch"]));
    needed.extend(expand(
        "",
        "configmaps",
        &["get", "list", "watch", "create", "update", "patch"],
    ));
    needed.extend(expand("events.k8s.io", "events", &["create", "patch"]));

    // The generated role (generated/rbac) grants exactly what the kinds need.
    let generated: Value = serde_yaml_ng::from_str(
        &std::fs::read_to_string(common::workspace().join("generated/rbac/role.yaml")).expect("generated/rbac"),
    )
    .expect("yaml");
    let cluster_roles = of_kind(docs, "ClusterRole");
    let from_generator = cluster_roles
        .iter()
        .find(|r| r["metadata"]["name"] == generated["metadata"]["name"])
        .expect("the output has the generated ClusterRole");
    assert_eq!(grants(from_generator), on_kinds, "the generated ClusterRole");
    assert_eq!(**from_generator, generated, "the output has it as generated");

    // The users' runner roles of the action kinds (generated/rbac/actions.yaml) are in the output for
    // administrators to bind in tenants' namespaces; nothing binds them here, and the reconciler does not have them.
    let runners: BTreeSet<String> = cluster_roles
        .iter()
        .filter_map(|r| r["metadata"]["name"].as_str())
        .filter(|n| n.ends_with("-runner"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        runners.len(),
        aks_api::ACTIONS
            .iter()
            .map(|a| (a.kind.kube_group, a.kind.kind))
            .collect::<BTreeSet<_>>()
            .len(),
        "a runner role per action kind"
    );
    for binding in of_kind(docs, "ClusterRoleBinding")
        .iter()
        .chain(of_kind(docs, "RoleBinding").iter())
    {
        let name = binding["roleRef"]["name"].as_str().unwrap_or_default();
        assert!(!runners.contains(name), "{name} is bound in the deployment");
    }
    let mut granted = BTreeSet::new();
    for role in cluster_roles
        .iter()
        .filter(|r| !r["metadata"]["name"].as_str().is_some_and(|n| runners.contains(n)))
    {
        granted.extend(grants(role));
    }
    let missing: Vec<_> = needed.difference(&granted).collect();
    let extra: Vec<_> = granted.difference(&needed).collect();
    assert!(missing.is_empty(), "the ClusterRoles lack {missing:?}");
    assert!(extra.is_empty(), "the ClusterRoles grant more than needed: {extra:?}");

    let sa = one(docs, "ServiceAccount");
    let subject_is_sa = |binding: &Value| {
        let subjects = binding["subjects"].as_array().expect("subjects");
        subjects.len() == 1
            && subjects[0]["kind"] == "ServiceAccount"
            && subjects[0]["name"] == sa["metadata"]["name"]
            && subjects[0]["namespace"] == sa["metadata"]["namespace"]
    };
    let bindings = of_kind(docs, "ClusterRoleBinding");
    let reconciler_roles: Vec<&&Value> = cluster_roles
        .iter()
        .filter(|r| !r["metadata"]["name"].as_str().is_some_and(|n| runners.contains(n)))
        .collect();
    assert_eq!(
        bindings.len(),
        reconciler_roles.len(),
        "one ClusterRoleBinding per ClusterRole of the reconciler"
    );
    for role in reconciler_roles {
        let name = &role["metadata"]["name"];
        let bound: Vec<_> = bindings.iter().filter(|b| b["roleRef"]["name"] == *name).collect();
        assert_eq!(bound.len(), 1, "{name}: bound once");
        assert_eq!(bound[0]["roleRef"]["kind"], "ClusterRole");
        assert!(
            subject_is_sa(bound[0]),
            "{name}: the ClusterRoleBinding binds the ServiceAccount"
        );
    }

    // Leader election and claims: leases in the reconciler's own namespace only.
    let role = one(docs, "Role");
    assert_eq!(role["metadata"]["namespace"], sa["metadata"]["namespace"]);
    let leases: BTreeSet<_> = expand("coordination.k8s.io", "leases", &["get", "create", "update", "delete"])
        .into_iter()
        .collect();
    assert_eq!(grants(role), leases);
    let rb = one(docs, "RoleBinding");
    assert_eq!(rb["metadata"]["namespace"], role["metadata"]["namespace"]);
    assert_eq!(rb["roleRef"]["kind"], "Role");
    assert_eq!(rb["roleRef"]["name"], role["metadata"]["name"]);
    assert!(subject_is_sa(rb), "the RoleBinding binds the ServiceAccount");
}

#[test]
fn the_rbac_kustomization_composes_the_generated_role() {
    // Without kubectl too: generated/rbac is what config/rbac composes, and no hand-written file lists kinds.
    let root = common::workspace();
    let text = std::fs::read_to_string(root.join("generated/rbac/kustomization.yaml")).expect("kustomization");
    let k: Value = serde_yaml_ng::from_str(&text).expect("yaml");
    // The reconciler's role, and the users' runner roles of the action kinds.
    assert_eq!(strings(&k["resources"]), ["role.yaml", "actions.yaml"]);
    let rbac = std::fs::read_to_string(root.join("config/rbac/kustomization.yaml")).expect("config/rbac");
    assert!(
        rbac.contains("../../generated/rbac"),
        "config/rbac composes generated/rbac"
    );
    for entry in std::fs::read_dir(root.join("config/rbac")).expect("config/rbac") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("read");
        for kind in aks_api::KINDS {
            assert!(
                !text.contains(kind.plural),
                "{}: names {} (kinds are granted by generated/rbac)",
                path.display(),
                kind.plural
            );
        }
    }
}

#[test]
fn the_crd_kustomization_lists_every_generated_manifest() {
    // Without kubectl too: generated/crds/kustomization.yaml is what config/crd composes.
    let root = common::workspace();
    let text = std::fs::read_to_string(root.join("generated/crds/kustomization.yaml")).expect("kustomization");
    let k: Value = serde_yaml_ng::from_str(&text).expect("yaml");
    let listed: BTreeSet<&str> = strings(&k["resources"]).into_iter().collect();
    let files: BTreeSet<String> = generated_crds()
        .values()
        .map(|c| format!("{}.yaml", s(&c["metadata"]["name"])))
        .collect();
    assert_eq!(listed, files.iter().map(String::as_str).collect::<BTreeSet<_>>());
    let crd_dir = std::fs::read_to_string(root.join("config/crd/kustomization.yaml")).expect("config/crd");
    assert!(
        crd_dir.contains("../../generated/crds"),
        "config/crd composes generated/crds"
    );
}
