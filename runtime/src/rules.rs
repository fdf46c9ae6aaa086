//! What a service does that its spec does not say — AKS's own rules — as data.
//!
//! The generator turns the `rules`, `errors` and `immutable` entries of `azure-arm.yaml` (documented in
//! `docs/config.md`, each with the public source it encodes) into one [`Rules`] document per generated crate
//! (`generated/rules.json`, `aks_api::rules()`). The reconciler's one generic loop reads it, and so does the ARM
//! simulator, which refuses what AKS refuses. Nothing here names a kind or a property: a rule that is not in the
//! document does not exist, which `reconciler/tests/aks_rules.rs` shows by running the loop with a document
//! generated from a config without them.
//!
//! Paths come in two forms, both generated from the same config entry so that they cannot disagree:
//! - **spec paths**, as change detection names differences: `spec.dnsPrefix`,
//!   `spec.agentPoolProfiles[].osType` (`[]` stands for any array item or map value, which change detection
//!   both writes in brackets: `[name=pool1]`, `[0]`, `[env]`);
//! - **ARM paths**, dotted JSON paths in the ARM body with the same `[]`/`{}` wildcards:
//!   `properties.dnsPrefix`, `properties.agentPoolProfiles[].osType`.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The rules of every generated group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rules {
    /// What generated the document (free text).
    #[serde(default, rename = "$comment", skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default)]
    pub groups: Vec<GroupRules>,
}

/// The rules of one API group (`groups.<name>` of the config).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GroupRules {
    /// The group's module name (`containerservice`).
    pub group: String,
    /// How ARM errors of this provider are classified (`kubernetes.errors`).
    #[serde(default)]
    pub errors: ErrorRules,
    /// Per kind and version: only kinds with at least one rule are listed.
    #[serde(default)]
    pub kinds: Vec<KindRules>,
}

/// The rules of one kind at one version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KindRules {
    /// The Kubernetes version (`v2alpha1`).
    pub version: String,
    /// The kind (`ManagedCluster`).
    pub kind: String,
    /// Properties that child resources own once the resource exists.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_owned: Vec<ChildOwned>,
    /// Properties fixed after creation (the spec's `x-ms-mutability` without `update`, and the config's
    /// `immutable: true` overrides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub immutable: Vec<Immutable>,
    /// When a child must wait for its owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_gate: Option<OwnerGate>,
}

/// A property of a resource that a child kind owns after creation (`kubernetes.resources.<Kind>.childOwned`):
/// sent on create; afterwards the desired value is what Azure reports, so it is neither compared nor changed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ChildOwned {
    /// The custom resource field below `spec` (`agentPoolProfiles`).
    pub spec_field: String,
    /// The ARM path of the array (`properties.agentPoolProfiles`).
    pub arm_path: String,
    /// The child kind whose resources the items are (`AgentPool`).
    pub child_kind: String,
    /// The item property that is the child resource's name (`name`).
    pub key: String,
    /// The public source of the rule.
    pub source: String,
}

/// A property fixed after creation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Immutable {
    /// The spec path pattern (`spec.agentPoolProfiles[].osType`).
    pub spec_path: String,
    /// The ARM path pattern (`properties.agentPoolProfiles[].osType`).
    pub arm_path: String,
    /// Where the rule comes from: `x-ms-mutability` (the spec) or the config override's source.
    pub source: String,
}

impl Immutable {
    /// Whether a difference at `path` (as change detection names it, e.g.
    /// `spec.agentPoolProfiles[name=pool1].osType`) changes this property or something inside it.
    pub fn matches(&self, path: &str) -> bool {
        within(&pattern_of(path), &self.spec_path)
    }
}

/// When a child waits for its owner (`kubernetes.resources.<Kind>.ownerGate`): the wait ends when the owner's
/// custom resource changes (its controller watches the owner), never on a timer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OwnerGate {
    /// Wait while the owner is not settled: an operation of the reconciler is in flight on it, Azure reports a
    /// non-terminal `provisioningState`, or its `Ready` condition does not describe its current generation.
    #[serde(default)]
    pub settled: bool,
    /// Version fields of the child that may not exceed a field of the owner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub versions: Vec<VersionGate>,
    /// The public source of the rule.
    pub source: String,
}

/// A child's version field that may not exceed its owner's (compared as dotted versions).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VersionGate {
    /// The child's field below `spec` (`orchestratorVersion`).
    pub spec_field: String,
    /// Its ARM path (`properties.orchestratorVersion`).
    pub arm_path: String,
    /// The owner's field below `status` (`currentKubernetesVersion`).
    pub owner_status_field: String,
    /// Its ARM path in the owner's body (`properties.currentKubernetesVersion`).
    pub owner_arm_path: String,
    /// The ARM error code the service refuses a violating PUT with (`NodePoolMcVersionIncompatible`).
    pub error_code: String,
}

/// ARM error classes of a provider (`kubernetes.errors`). Throttling (429), server errors (5xx) and dropped
/// connections are always retryable; these lists classify the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorRules {
    /// Worth retrying with backoff: the condition ends by itself (a conflicting operation finishes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retryable: Vec<ErrorMatch>,
    /// Fails again until the spec changes: not retried for the same generation (but after a long interval).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terminal: Vec<ErrorMatch>,
}

/// Matches an ARM error by HTTP status, by error code, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// ARM's `error.code`, compared case-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// The public source of the entry.
    pub source: String,
}

impl ErrorMatch {
    /// How specifically this entry matches (`None`: not at all): a code match outranks a status-only match.
    fn rank(&self, status: Option<u16>, code: &str) -> Option<u8> {
        if self.status.is_some_and(|s| Some(s) != status) {
            return None;
        }
        match &self.code {
            Some(c) if c.eq_ignore_ascii_case(code) => Some(2 + u8::from(self.status.is_some())),
            Some(_) => None,
            None if self.status.is_some() => Some(1),
            None => None,
        }
    }
}

/// What to do about an ARM error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// Retry with backoff.
    Retryable,
    /// Do not retry until the spec changes.
    Terminal,
    /// No rule matches: the caller's default.
    Unclassified,
}

impl ErrorRules {
    /// Classifies an ARM error answer (HTTP `status`, `error.code`; no status for the error of a failed
    /// long-running operation, which only entries without `status` match). The most specific entry wins (status
    /// and code, then code, then status alone); between equally specific entries, `retryable` wins.
    pub fn classify(&self, status: Option<u16>, code: &str) -> ErrorClass {
        let best = |list: &[ErrorMatch]| list.iter().filter_map(|m| m.rank(status, code)).max();
        match (best(&self.retryable), best(&self.terminal)) {
            (None, None) => ErrorClass::Unclassified,
            (Some(_), None) => ErrorClass::Retryable,
            (None, Some(_)) => ErrorClass::Terminal,
            (Some(r), Some(t)) if r >= t => ErrorClass::Retryable,
            _ => ErrorClass::Terminal,
        }
    }
}

impl Rules {
    /// Parses a rules document (`generated/rules.json`, or an operator's replacement).
    pub fn from_json(text: &str) -> Result<Rules, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| format!("at {}: {}", e.path(), e.inner()))
    }

    /// The group's rules.
    pub fn group(&self, group: &str) -> Option<&GroupRules> {
        self.groups.iter().find(|g| g.group == group)
    }

    /// The rules of a kind at a version (`None`: it has none).
    pub fn kind(&self, group: &str, version: &str, kind: &str) -> Option<&KindRules> {
        self.group(group)?
            .kinds
            .iter()
            .find(|k| k.version == version && k.kind == kind)
    }

    /// The error classes of a group (empty when it has none).
    pub fn errors(&self, group: &str) -> &ErrorRules {
        static NONE: ErrorRules = ErrorRules {
            retryable: Vec::new(),
            terminal: Vec::new(),
        };
        self.group(group).map(|g| &g.errors).unwrap_or(&NONE)
    }

    /// The child-owned properties of any kind of `group` at `version` whose child kind is `child_kind`, with the
    /// owning kind.
    pub fn owned_by<'a>(
        &'a self,
        group: &str,
        version: &'a str,
        child_kind: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a ChildOwned)> + 'a {
        self.group(group).into_iter().flat_map(move |g| {
            g.kinds.iter().filter(move |k| k.version == version).flat_map(move |k| {
                k.child_owned
                    .iter()
                    .filter(move |c| c.child_kind == child_kind)
                    .map(move |c| (k.kind.as_str(), c))
            })
        })
    }
}

/// A difference path as a pattern: every `[…]` (an index or an item's identifiers) becomes `[]`.
pub fn pattern_of(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => {
                if depth == 0 {
                    out.push_str("[]");
                }
                depth += 1;
            }
            ']' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// Whether `path` is `pattern` or below it.
fn within(path: &str, pattern: &str) -> bool {
    path.strip_prefix(pattern)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// Compares two dotted versions (`1.30.5`, `v1.31`) by their numeric components; components only one side has
/// are not compared (`1.30` and `1.30.5` are equal: AKS reads `1.30` as "the latest patch of 1.30"). `None`
/// when either is not a version.
pub fn compare_versions(a: &str, b: &str) -> Option<Ordering> {
    let parse = |v: &str| -> Option<Vec<u64>> {
        let v = v.trim();
        let v = v.strip_prefix(['v', 'V']).unwrap_or(v);
        if v.is_empty() {
            return None;
        }
        v.split('.').map(|c| c.parse::<u64>().ok()).collect()
    };
    let (a, b) = (parse(a)?, parse(b)?);
    Some(
        a.iter()
            .zip(&b)
            .map(|(x, y)| x.cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal),
    )
}

/// The values at an ARM path with `[]`/`{}` wildcards, each with its concrete location
/// (`properties.agentPoolProfiles[1].osType`).
pub fn values_at<'v>(document: &'v Value, arm_path: &str) -> Vec<(String, &'v Value)> {
    // The generator writes the rules' paths with `crate::dotted`'s grammar; one that does not parse selects
    // nothing, as a path that matches nothing.
    crate::dotted::select(document, arm_path)
        .map(|found| found.into_iter().map(|(at, v)| (at.dotted(), v)).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(status: Option<u16>, code: Option<&str>) -> ErrorMatch {
        ErrorMatch {
            status,
            code: code.map(str::to_string),
            source: "test".into(),
        }
    }

    #[test]
    fn patterns_replace_items() {
        assert_eq!(
            pattern_of("spec.agentPoolProfiles[name=a.b].osType"),
            "spec.agentPoolProfiles[].osType"
        );
        assert_eq!(pattern_of("spec.x[0][1].y"), "spec.x[][].y");
        assert_eq!(pattern_of("spec.dnsPrefix"), "spec.dnsPrefix");
    }

    #[test]
    fn immutable_matches_the_property_and_below_only() {
        let rule = Immutable {
            spec_path: "spec.agentPoolProfiles[].availabilityZones".into(),
            arm_path: String::new(),
            source: String::new(),
        };
        assert!(rule.matches("spec.agentPoolProfiles[name=p].availabilityZones"));
        assert!(rule.matches("spec.agentPoolProfiles[name=p].availabilityZones[0]"));
        assert!(!rule.matches("spec.agentPoolProfiles[name=p].availabilityZonesX"));
        assert!(!rule.matches("spec.agentPoolProfiles[name=p].count"));
        let map = Immutable {
            spec_path: "spec.addonProfiles[].enabled".into(),
            ..rule
        };
        assert!(map.matches("spec.addonProfiles[azurepolicy].enabled"));
        assert!(!map.matches("spec.addonProfiles[azurepolicy].config"));
    }

    #[test]
    fn versions_compare_numerically_on_common_components() {
        assert_eq!(compare_versions("1.30.10", "1.30.9"), Some(Ordering::Greater));
        assert_eq!(compare_versions("1.31", "1.30.9"), Some(Ordering::Greater));
        assert_eq!(compare_versions("1.30", "1.30.9"), Some(Ordering::Equal));
        assert_eq!(compare_versions("v1.29.2", "1.30"), Some(Ordering::Less));
        assert_eq!(compare_versions("latest", "1.30"), None);
        assert_eq!(compare_versions("", "1.30"), None);
    }

    #[test]
    fn error_classes_prefer_the_specific_match() {
        let rules = ErrorRules {
            retryable: vec![m(Some(409), None), m(None, Some("OperationNotAllowed"))],
            terminal: vec![m(Some(400), None), m(None, Some("PropertyChangeNotAllowed"))],
        };
        assert_eq!(rules.classify(Some(409), "Conflict"), ErrorClass::Retryable);
        assert_eq!(rules.classify(Some(400), "InvalidParameter"), ErrorClass::Terminal);
        assert_eq!(rules.classify(Some(400), "operationnotallowed"), ErrorClass::Retryable);
        assert_eq!(
            rules.classify(Some(409), "PropertyChangeNotAllowed"),
            ErrorClass::Terminal
        );
        assert_eq!(rules.classify(Some(404), "NotFound"), ErrorClass::Unclassified);
        // A failed operation's error has no HTTP status: only code entries match.
        assert_eq!(rules.classify(None, "PropertyChangeNotAllowed"), ErrorClass::Terminal);
        assert_eq!(rules.classify(None, "InvalidParameter"), ErrorClass::Unclassified);
        assert_eq!(ErrorRules::default().classify(Some(400), "X"), ErrorClass::Unclassified);
    }

    #[test]
    fn values_at_expands_wildcards() {
        let doc = json!({"properties": {"pools": [{"os": "Linux"}, {"os": "Windows"}, {}], "m": {"a": {"on": true}}}});
        let found: Vec<(String, Value)> = values_at(&doc, "properties.pools[].os")
            .into_iter()
            .map(|(p, v)| (p, v.clone()))
            .collect();
        assert_eq!(
            found,
            vec![
                ("properties.pools[0].os".to_string(), json!("Linux")),
                ("properties.pools[1].os".to_string(), json!("Windows"))
            ]
        );
        assert_eq!(values_at(&doc, "properties.m{}.on").len(), 1);
        assert!(values_at(&doc, "properties.missing").is_empty());
    }

    #[test]
    fn documents_round_trip_and_errors_name_the_place() {
        let rules = Rules {
            comment: None,
            groups: vec![GroupRules {
                group: "g".into(),
                errors: ErrorRules::default(),
                kinds: vec![KindRules {
                    version: "v1".into(),
                    kind: "K".into(),
                    ..KindRules::default()
                }],
            }],
        };
        let text = serde_json::to_string(&rules).unwrap();
        assert_eq!(Rules::from_json(&text).unwrap(), rules);
        assert!(rules.kind("g", "v1", "K").is_some());
        assert!(rules.kind("g", "v2", "K").is_none());
        let e =
            Rules::from_json(r#"{"groups": [{"group": "g", "kinds": [{"version": "v1", "kind": "K", "bogus": 1}]}]}"#)
                .unwrap_err();
        assert!(e.contains("groups[0].kinds[0]"), "{e}");
    }
}
