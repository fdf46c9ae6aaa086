//! `armctl action ACTION --owner NAME`: an action object (a custom resource of an action kind, which the reconciler
//! runs once: one ARM POST on its target, the outcome in its status) printed for `kubectl apply -f -`.
//!
//! Actions come from the generated registry (`aks_api::ACTIONS`), nothing is listed here: ACTION is the ARM action in
//! kebab-case (`rotate-cluster-certificates`), as the spec spells it (`rotateClusterCertificates`), or the action
//! kind (`ManagedClusterRotateClusterCertificates`), all case-insensitive. An action on several target kinds
//! (`abort`: ManagedCluster and AgentPool) needs `--target-kind`. The version is `--version`, else the newest served
//! version that has the action kind (`armgen_runtime::newest`, as `armctl import` picks versions).
//!
//! Parameters (the POST's request body, flattened under `spec`): `-f FILE` (a YAML or JSON object) and then each
//! `--set key=value` (dotted keys for nesting; the value as JSON when it parses, else a string — and taken as it is
//! written where the schema wants a string). The object is checked against the CRD schema of its version (unknown
//! fields, types, enums, required fields: errors name the field and the flag or file it came from), then read into
//! the version's generated type (`aks_api::normalize_custom_resource`), whose output is printed.

use std::path::PathBuf;

use armgen_runtime::{ActionInfo, KindInfo};
use serde_json::{Map, Value, json};

use crate::convert::Output;
use crate::{Failure, display, emit, read_input, registry};

/// What `armctl action` was asked.
pub struct Options {
    pub action: Option<String>,
    pub list: bool,
    pub owner: Option<String>,
    pub target_kind: Option<String>,
    pub group: Option<String>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub set: Vec<String>,
    pub parameters_file: Option<PathBuf>,
    pub output: Output,
}

/// The most a default name or `--name` may have (a DNS-1123 label).
const MAX_NAME: usize = 63;

/// The ARM action in kebab-case: `rotateClusterCertificates` → `rotate-cluster-certificates`, `resetAADProfile` →
/// `reset-aad-profile`, `PrepareNetworkPolicies` → `prepare-network-policies`.
pub fn kebab(action: &str) -> String {
    let chars: Vec<char> = action.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == ' ' {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            continue;
        }
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            let boundary =
                prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower);
            if boundary && !out.ends_with('-') {
                out.push('-');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// How ACTION is compared: lowercase, without `-` and `_`.
fn folded(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// One action kind of the registry, whatever its versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ActionKind {
    kube_group: &'static str,
    kind: &'static str,
    target: &'static str,
    action: &'static str,
    body: bool,
}

/// The target kind of an action entry (the generator always sets it).
fn target_of(info: &ActionInfo) -> &'static str {
    info.kind.owner_kind.unwrap_or(info.kind.arm.kind)
}

/// Every action kind of the registry, each once, in registry order.
fn action_kinds() -> Vec<ActionKind> {
    let mut out: Vec<ActionKind> = Vec::new();
    for a in aks_api::ACTIONS {
        let k = ActionKind {
            kube_group: a.kind.kube_group,
            kind: a.kind.kind,
            target: target_of(a),
            action: a.action,
            body: a.body,
        };
        if !out.iter().any(|o| o.kube_group == k.kube_group && o.kind == k.kind) {
            out.push(k);
        }
    }
    out
}

/// `kebab-action (Target)` for every action kind, sorted: what an unknown action lists.
fn known_actions(kinds: &[ActionKind]) -> String {
    let mut actions: Vec<(String, Vec<&str>)> = Vec::new();
    for k in kinds {
        let name = kebab(k.action);
        match actions.iter_mut().find(|(n, _)| *n == name) {
            Some((_, targets)) => {
                if !targets.contains(&k.target) {
                    targets.push(k.target);
                }
            }
            None => actions.push((name, vec![k.target])),
        }
    }
    actions.sort();
    actions
        .iter()
        .map(|(name, targets)| format!("{name} ({})", targets.join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The action kind ACTION names (with `--target-kind` and `--group` when given).
fn find_action(action: &str, target_kind: Option<&str>, group: Option<&str>) -> Result<ActionKind, Failure> {
    let kinds = action_kinds();
    let group = match group {
        Some(g) => Some(registry::group(g)?.kube),
        None => None,
    };
    let wanted = folded(action);
    let named: Vec<ActionKind> = kinds
        .iter()
        .filter(|k| folded(k.action) == wanted || k.kind.eq_ignore_ascii_case(action))
        .filter(|k| group.is_none_or(|g| g == k.kube_group))
        .copied()
        .collect();
    if named.is_empty() {
        let scope = group.map(|g| format!(" in {g}")).unwrap_or_default();
        return Err(format!(
            "unknown action `{action}`{scope}; known actions (target kinds): {}",
            known_actions(&kinds)
        )
        .into());
    }
    let describe = |ks: &[ActionKind]| {
        ks.iter()
            .map(|k| format!("{} ({}, {})", k.target, k.kind, k.kube_group))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen: Vec<ActionKind> = match target_kind {
        Some(t) => {
            let on: Vec<ActionKind> = named
                .iter()
                .filter(|k| k.target.eq_ignore_ascii_case(t))
                .copied()
                .collect();
            if on.is_empty() {
                return Err(format!(
                    "--target-kind {t}: action `{action}` does not run on {t}; it runs on: {}",
                    describe(&named)
                )
                .into());
            }
            on
        }
        None => named.clone(),
    };
    match chosen.as_slice() {
        [one] => Ok(*one),
        several => {
            let mut targets: Vec<&str> = several.iter().map(|k| k.target).collect();
            targets.dedup();
            let flag = if targets.len() > 1 {
                "--target-kind KIND"
            } else {
                "--group GROUP"
            };
            Err(format!(
                "action `{action}` runs on several kinds: {}; choose one with {flag}",
                describe(several)
            )
            .into())
        }
    }
}

/// The registry entry of `kind` at `version`, or at the newest served version that has it.
fn action_version(kind: &ActionKind, version: Option<&str>) -> Result<&'static ActionInfo, Failure> {
    let entries: Vec<&'static ActionInfo> = aks_api::ACTIONS
        .iter()
        .filter(|a| a.kind.kube_group == kind.kube_group && a.kind.kind == kind.kind)
        .collect();
    let served: Vec<&str> = entries
        .iter()
        .filter(|a| a.kind.served)
        .map(|a| a.kind.version)
        .collect();
    match version {
        Some(v) => match entries.iter().find(|a| a.kind.version == v) {
            Some(a) if a.kind.served => Ok(a),
            Some(_) => Err(format!(
                "--version {v}: {} is not served at {v}; served versions: {}",
                kind.kind,
                served.join(", ")
            )
            .into()),
            None => Err(format!(
                "--version {v}: {} has no version {v} in {}; its versions: {}",
                kind.kind,
                kind.kube_group,
                served.join(", ")
            )
            .into()),
        },
        None => {
            let kinds: Vec<KindInfo> = entries.iter().map(|a| a.kind).collect();
            let newest = armgen_runtime::newest(&kinds, |k| k.served)
                .ok_or_else(|| format!("{} has no served version; give one with --version", kind.kind))?;
            entries
                .iter()
                .find(|a| a.kind.version == newest.version)
                .copied()
                .ok_or_else(|| Failure(format!("{} has no served version", kind.kind)))
        }
    }
}

/// Whether `s` is a DNS-1123 label: lowercase letters, digits and `-`, starting and ending with a letter or digit,
/// at most 63 characters.
fn is_label(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= MAX_NAME
        && s.chars().all(|c| alnum(c) || c == '-')
        && s.starts_with(alnum)
        && s.ends_with(alnum)
}

/// Whether `s` is a DNS-1123 subdomain (a Kubernetes object name): dot-separated labels, at most 253 characters.
fn is_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.')
            .all(|l| !l.is_empty() && l.len() <= MAX_NAME && is_label(l))
}

const LABEL_RULE: &str = "a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters";

/// The default `metadata.name`: `<owner>-<kebab action>-<yyyymmddhhmmss>` (UTC), lowercased, other characters
/// than letters, digits and `-` made `-`, the prefix cut so that the whole is at most 63 characters.
pub fn default_name(owner: &str, action: &str, timestamp: &str) -> String {
    let raw = format!("{owner}-{}", kebab(action)).to_ascii_lowercase();
    let mut prefix: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let room = MAX_NAME.saturating_sub(timestamp.len() + 1);
    prefix.truncate(room);
    let prefix = prefix.trim_matches('-');
    if prefix.is_empty() {
        timestamp.to_string()
    } else {
        format!("{prefix}-{timestamp}")
    }
}

/// Where a part of the spec came from: a `--set`, or the parameters file.
struct Origin {
    /// The dotted path under `spec` (`clusterToken.name`).
    path: String,
    /// How to name it in an error (`--set clusterToken.name=s`).
    shown: String,
}

/// The schema of the property at the dotted `path` under `schema`, if the schema has one.
fn schema_at<'s>(schema: &'s Value, path: &str) -> Option<&'s Value> {
    use armgen_runtime::dotted::Step;
    let mut at = schema;
    for step in armgen_runtime::dotted::parse_concrete(path).ok()? {
        at = match step {
            Step::Property(name) => match at.pointer(&format!("/properties/{}", pointer_token(name))) {
                Some(s) => s,
                None => at.get("additionalProperties").filter(|a| a.is_object())?,
            },
            Step::Index(_) => at.get("items")?,
            Step::Items | Step::Values => return None,
        };
    }
    Some(at)
}

fn pointer_token(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The value of `--set key=value`: JSON when it parses as JSON, else the text; where `schema` wants a string, a
/// value that is not a JSON string is taken as the text (`--set clientId=12345`).
fn set_value(text: &str, schema: Option<&Value>) -> Value {
    let wants_string = schema
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t == "string");
    match serde_json::from_str::<Value>(text) {
        Ok(Value::String(s)) => Value::String(s),
        Ok(_) if wants_string => Value::String(text.to_string()),
        Ok(v) => v,
        Err(_) => Value::String(text.to_string()),
    }
}

/// Merges `from` into `into`: objects key by key, anything else replaced.
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        (into, from) => *into = from,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks `value` against a structural schema of a CRD: types, enums, bounds, required and unknown fields (what
/// the API server would reject or prune); the first problem, with the dotted path of the field.
pub fn check(value: &Value, schema: &Value, path: &str) -> Result<(), (String, String)> {
    let fail = |message: String| Err((path.to_string(), message));
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let int_or_string = schema
        .get("x-kubernetes-int-or-string")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let got = type_name(value);
    if int_or_string {
        if !matches!(got, "integer" | "string") {
            return fail(format!("expected an integer or a string, got {got} {value}"));
        }
    } else if let Some(want) = schema.get("type").and_then(Value::as_str) {
        let ok = match want {
            "number" => value.is_number(),
            other => other == got,
        };
        if !ok {
            return fail(format!("expected {want}, got {got} {value}"));
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return fail(format!("{value} is not one of {}", allowed.join(", ")));
    }
    if let Some(n) = value.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return fail(format!("{value} is less than the minimum {min}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return fail(format!("{value} is more than the maximum {max}"));
        }
    }
    match value {
        Value::Object(members) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties");
            for (key, v) in members {
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (properties.and_then(|p| p.get(key)), additional) {
                    (Some(s), _) => check(v, s, &child)?,
                    (None, Some(s)) if s.is_object() => check(v, s, &child)?,
                    (None, Some(Value::Bool(true))) => {}
                    _ if preserve => {}
                    _ => {
                        let known: Vec<&str> = properties
                            .map(|p| p.keys().map(String::as_str).collect())
                            .unwrap_or_default();
                        let known = if known.is_empty() {
                            "it has none".to_string()
                        } else {
                            format!("known fields: {}", known.join(", "))
                        };
                        return Err((child, format!("unknown field; {known}")));
                    }
                }
            }
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for r in required.iter().filter_map(Value::as_str) {
                    if !members.contains_key(r) {
                        let child = if path.is_empty() {
                            r.to_string()
                        } else {
                            format!("{path}.{r}")
                        };
                        return Err((child, "required, and missing".to_string()));
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                return fail(format!("{} item(s), fewer than the minimum {min}", items.len()));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && (items.len() as u64) > max
            {
                return fail(format!("{} item(s), more than the maximum {max}", items.len()));
            }
            if let Some(s) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    check(v, s, &format!("{path}[{i}]"))?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `spec` schema of `info`'s version in its CRD.
fn spec_schema(info: &KindInfo) -> Result<Value, Failure> {
    let crd = aks_api::custom_resource_definition(info.kube_group, info.kind)
        .ok_or_else(|| format!("{} has no CRD in {}", info.kind, info.kube_group))?
        .map_err(|e| format!("the CRD of {} does not parse: {e}", info.kind))?;
    let version = crd
        .spec
        .versions
        .iter()
        .find(|v| v.name == info.version)
        .ok_or_else(|| format!("the CRD of {} has no version {}", info.kind, info.version))?;
    let schema = version
        .schema
        .as_ref()
        .and_then(|s| s.open_api_v3_schema.as_ref())
        .ok_or_else(|| format!("the CRD of {} has no schema at {}", info.kind, info.version))?;
    let schema = serde_json::to_value(schema).map_err(|e| format!("the CRD schema of {}: {e}", info.kind))?;
    schema
        .pointer("/properties/spec")
        .cloned()
        .ok_or_else(|| Failure(format!("the CRD of {} has no spec at {}", info.kind, info.version)))
}

/// The parameters (`spec` minus `owner`): the file's object, then each `--set`; with where each part came from.
fn parameters(options: &Options, schema: &Value) -> Result<(Map<String, Value>, Vec<Origin>), Failure> {
    let mut spec = Value::Object(Map::new());
    let mut origins = Vec::new();
    if let Some(file) = &options.parameters_file {
        let shown = display(file);
        let text = read_input(file)?;
        let value: Value = serde_yaml_ng::from_str(&text)
            .map_err(|e| format!("--parameters-file {shown}: not a valid YAML or JSON document: {e}"))?;
        let Value::Object(members) = value else {
            return Err(format!(
                "--parameters-file {shown}: the parameters must be an object (the spec's fields), not {}",
                type_name(&value)
            )
            .into());
        };
        for key in members.keys() {
            origins.push(Origin {
                path: key.clone(),
                shown: format!("--parameters-file {shown}"),
            });
        }
        merge(&mut spec, Value::Object(members));
    }
    for item in &options.set {
        let Some((key, text)) = item.split_once('=') else {
            return Err(format!("--set {item}: not KEY=VALUE (e.g. --set command=\"kubectl get pods\")").into());
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("--set {item}: the key is empty").into());
        }
        let value = set_value(text, schema_at(schema, key));
        armgen_runtime::dotted::set(&mut spec, key, value).map_err(|e| format!("--set {item}: {e}"))?;
        origins.push(Origin {
            path: key.to_string(),
            shown: format!("--set {item}"),
        });
    }
    let Value::Object(spec) = spec else {
        return Err("the parameters are not an object".into());
    };
    if spec.contains_key("owner") {
        let from = origins
            .iter()
            .find(|o| o.path == "owner" || o.path.starts_with("owner.") || o.path.starts_with("owner["))
            .map(|o| o.shown.clone())
            .unwrap_or_default();
        return Err(format!("{from}: spec.owner is set by --owner, not a parameter").into());
    }
    Ok((spec, origins))
}

/// The flag or file a problem at `path` (dotted, under `spec`) came from: the last `--set` whose key is it or
/// contains it (or is in it), else the file.
fn origin_of<'o>(origins: &'o [Origin], path: &str) -> Option<&'o Origin> {
    let within = |outer: &str, inner: &str| {
        inner == outer
            || inner
                .strip_prefix(outer)
                .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
    };
    origins
        .iter()
        .rev()
        .find(|o| within(&o.path, path) || within(path, &o.path))
}

/// The one-line description of each action `--list` prints, as JSON.
fn listing() -> Vec<Value> {
    let mut rows = Vec::new();
    for k in action_kinds() {
        let versions: Vec<&str> = aks_api::ACTIONS
            .iter()
            .filter(|a| a.kind.kube_group == k.kube_group && a.kind.kind == k.kind && a.kind.served)
            .map(|a| a.kind.version)
            .collect();
        rows.push(json!({
            "action": kebab(k.action),
            "armAction": k.action,
            "targetKind": k.target,
            "kind": k.kind,
            "group": k.kube_group,
            "parameters": k.body,
            "versions": versions,
        }));
    }
    rows
}

fn list(output: Output) -> Result<(), Failure> {
    let rows = listing();
    let text = match output {
        Output::Json => {
            let mut s =
                serde_json::to_string_pretty(&rows).map_err(|e| format!("cannot write the list as JSON: {e}"))?;
            s.push('\n');
            s
        }
        Output::Yaml => {
            let header = ["ACTION", "TARGET KIND", "KIND", "PARAMETERS", "GROUP", "VERSIONS"];
            let mut table: Vec<Vec<String>> = vec![header.iter().map(|h| h.to_string()).collect()];
            for r in &rows {
                let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
                let parameters = if r.get("parameters").and_then(Value::as_bool).unwrap_or(false) {
                    "yes"
                } else {
                    "no"
                };
                let versions: Vec<&str> = r
                    .get("versions")
                    .and_then(Value::as_array)
                    .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                table.push(vec![
                    field("action"),
                    field("targetKind"),
                    field("kind"),
                    parameters.to_string(),
                    field("group"),
                    versions.join(","),
                ]);
            }
            let widths: Vec<usize> = (0..header.len())
                .map(|i| table.iter().map(|row| row[i].len()).max().unwrap_or(0))
                .collect();
            let mut s = String::new();
            for row in &table {
                let mut line = String::new();
                for (i, cell) in row.iter().enumerate() {
                    if i + 1 == row.len() {
                        line.push_str(cell);
                    } else {
                        line.push_str(&format!("{cell:<width$}   ", width = widths[i]));
                    }
                }
                s.push_str(line.trim_end());
                s.push('\n');
            }
            s
        }
    };
    emit(&text)
}

pub fn run(options: &Options) -> Result<(), Failure> {
    let action = options.action.as_deref();
    let listing_asked = options.list
        || action.is_some_and(|a| {
            a.eq_ignore_ascii_case("list") && !action_kinds().iter().any(|k| folded(k.action) == "list")
        });
    if listing_asked {
        if options.owner.is_some() || !options.set.is_empty() || options.parameters_file.is_some() {
            return Err("--list prints the actions; it takes no --owner, --set or --parameters-file".into());
        }
        return list(options.output);
    }
    let Some(action) = action else {
        return Err("give an ACTION (e.g. rotate-cluster-certificates), or --list to see them".into());
    };
    let kind = find_action(action, options.target_kind.as_deref(), options.group.as_deref())?;
    let info = action_version(&kind, options.version.as_deref())?;
    let Some(owner) = options.owner.as_deref() else {
        return Err(format!(
            "{action}: give the {} custom resource it runs on with --owner NAME (--cluster NAME)",
            kind.target
        )
        .into());
    };
    if !is_subdomain(owner) {
        return Err(format!(
            "--owner {owner}: not a Kubernetes object name (lowercase letters, digits, '-' and '.', starting and \
             ending with a letter or digit, at most 253 characters)"
        )
        .into());
    }
    if let Some(ns) = options.namespace.as_deref()
        && !is_label(ns)
    {
        return Err(format!("--namespace {ns}: not a namespace name ({LABEL_RULE})").into());
    }
    let name = match options.name.as_deref() {
        Some(n) if is_label(n) => n.to_string(),
        Some(n) => return Err(format!("--name {n}: not a valid name ({LABEL_RULE})").into()),
        None => {
            let now = k8s_openapi::jiff::Timestamp::now().strftime("%Y%m%d%H%M%S").to_string();
            let n = default_name(owner, info.action, &now);
            if !is_label(&n) {
                return Err(format!("the default name `{n}` is not valid ({LABEL_RULE}); give one with --name").into());
            }
            n
        }
    };
    let schema = spec_schema(&info.kind)?;
    let (params, origins) = parameters(options, &schema)?;
    if !info.body && !params.is_empty() {
        let from: Vec<&str> = origins.iter().map(|o| o.shown.as_str()).collect();
        return Err(format!(
            "{}: action `{}` takes no parameters ({} has only spec.owner); remove {}",
            kind.kind,
            kebab(info.action),
            kind.kind,
            from.join(", ")
        )
        .into());
    }
    let mut spec = Map::new();
    spec.insert("owner".into(), json!({ "name": owner }));
    spec.extend(params);
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(name));
    if let Some(ns) = &options.namespace {
        metadata.insert("namespace".into(), Value::String(ns.clone()));
    }
    let api_version = info.kind.api_version();
    let object = json!({
        "apiVersion": api_version,
        "kind": info.kind.kind,
        "metadata": metadata,
        "spec": spec,
    });
    let Some(spec_value) = object.get("spec") else {
        return Err("the action object has no spec".into());
    };
    if let Err((path, message)) = check(spec_value, &schema, "") {
        let from = origin_of(&origins, &path)
            .map(|o| format!(" (from {})", o.shown))
            .unwrap_or_default();
        return Err(format!("{} ({api_version}): spec.{path}: {message}{from}", kind.kind).into());
    }
    let object = aks_api::normalize_custom_resource(object).map_err(|e| {
        let from = origin_of(&origins, e.path.strip_prefix("spec.").unwrap_or(&e.path))
            .map(|o| format!(" (from {})", o.shown))
            .unwrap_or_default();
        format!(
            "not a valid {} ({api_version}): {}: {}{from}",
            kind.kind, e.path, e.message
        )
    })?;
    let text = match options.output {
        Output::Yaml => {
            serde_yaml_ng::to_string(&object).map_err(|e| format!("cannot write the object as YAML: {e}"))?
        }
        Output::Json => {
            let mut s =
                serde_json::to_string_pretty(&object).map_err(|e| format!("cannot write the object as JSON: {e}"))?;
            s.push('\n');
            s
        }
    };
    emit(&text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab_case_of_the_spec_spellings() {
        assert_eq!(kebab("rotateClusterCertificates"), "rotate-cluster-certificates");
        assert_eq!(kebab("resetAADProfile"), "reset-aad-profile");
        assert_eq!(kebab("resolvePrivateLinkServiceId"), "resolve-private-link-service-id");
        assert_eq!(kebab("PrepareNetworkPolicies"), "prepare-network-policies");
        assert_eq!(kebab("abort"), "abort");
        assert_eq!(kebab("upgradeNodeImageVersion"), "upgrade-node-image-version");
    }

    #[test]
    fn every_action_is_found_by_each_spelling() {
        for a in aks_api::ACTIONS {
            let target = target_of(a);
            for spelling in [kebab(a.action), a.action.to_string(), a.kind.kind.to_string()] {
                let found = find_action(&spelling, Some(target), Some(a.kind.kube_group))
                    .unwrap_or_else(|Failure(m)| panic!("{spelling}: {m}"));
                assert_eq!((found.kube_group, found.kind), (a.kind.kube_group, a.kind.kind));
            }
        }
    }

    #[test]
    fn default_names_are_labels_that_keep_the_timestamp() {
        let ts = "20261204231500";
        assert_eq!(
            default_name("prod", "rotateClusterCertificates", ts),
            "prod-rotate-cluster-certificates-20261204231500"
        );
        let long = "a".repeat(80);
        let n = default_name(&long, "runCommand", ts);
        assert!(is_label(&n), "{n}");
        assert!(n.ends_with("-20261204231500"), "{n}");
        assert_eq!(n.len(), 63);
        let n = default_name("Prod.EU", "stop", ts);
        assert_eq!(n, "prod-eu-stop-20261204231500");
        // A cut that ends in `-` is trimmed.
        let owner = format!("{}-x", "b".repeat(46));
        let n = default_name(&owner, "stop", ts);
        assert!(is_label(&n), "{n}");
    }

    #[test]
    fn the_schema_check_names_the_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "count": {"type": "integer", "minimum": 1},
                "mode": {"type": "string", "enum": ["A", "B"]},
                "token": {"type": "object", "properties": {"name": {"type": "string"}, "key": {"type": "string"}},
                          "required": ["name", "key"]},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                "names": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["command"],
        });
        assert_eq!(check(&json!({"command": "x"}), &schema, ""), Ok(()));
        let err = |v: Value| check(&v, &schema, "").err().map(|(p, _)| p);
        assert_eq!(err(json!({"comand": "x"})), Some("comand".into()));
        assert_eq!(err(json!({})), Some("command".into()));
        assert_eq!(err(json!({"command": 1})), Some("command".into()));
        assert_eq!(err(json!({"command": "x", "count": 0})), Some("count".into()));
        assert_eq!(err(json!({"command": "x", "mode": "C"})), Some("mode".into()));
        assert_eq!(
            err(json!({"command": "x", "token": {"name": "s"}})),
            Some("token.key".into())
        );
        assert_eq!(err(json!({"command": "x", "tags": {"a": 1}})), Some("tags.a".into()));
        assert_eq!(err(json!({"command": "x", "names": ["a", 2]})), Some("names[1]".into()));
        assert_eq!(check(&json!({"command": "x", "tags": {"a": "b"}}), &schema, ""), Ok(()));
    }

    #[test]
    fn set_values_are_json_or_text() {
        let string = json!({"type": "string"});
        assert_eq!(set_value("true", None), json!(true));
        assert_eq!(set_value("[\"a\"]", None), json!(["a"]));
        assert_eq!(set_value("kubectl get pods", None), json!("kubectl get pods"));
        assert_eq!(set_value("12345", Some(&string)), json!("12345"));
        assert_eq!(set_value("\"quoted\"", Some(&string)), json!("quoted"));
    }
}
