//! What the simulator refuses beyond the spec: the service's rules, read from a rules document
//! ([`armgen_runtime::rules::Rules`]; by default the generated [`aks_api::rules()`], made from `azure-arm.yaml`;
//! [`crate::SimulatorConfig::rules`] replaces it). Nothing here names a kind or a property: with an empty document
//! (`Rules::default()`) the simulator accepts everything its types accept.
//!
//! Every refusal is an ARM error (`{"error": {"code", "message", "target"?}}`, the specs' `CloudError`) and is
//! recorded in the traffic like any other response. The rules, with the public sources their behaviour comes
//! from (the document names each rule's own source in its `source` field):
//!
//! 1. **Child-owned arrays** (`childOwned`: an array of a resource whose items are child resources, e.g.
//!    `properties.agentPoolProfiles` ↔ `agentPools`, matched by the item's `key`, e.g. `name`; source of the rule:
//!    microsoft/tyger#121). The items and the child resources are one set of objects, seen two ways: an item is
//!    the child's `properties` plus the key, which is the child's name.
//!    - A resource created with items creates a child resource per item, in the same operation (the children's
//!      `provisioningState` follows the parent's).
//!    - A child PUT or DELETE adds, updates or removes the item: the parent's GET shows it, with the child's
//!      `provisioningState`.
//!    - After creation, a parent PUT whose array names an item that has no child resource is refused: `400
//!      BadRequest` "A new … was introduced …", target the array's name (AKS: "A new agent pool was
//!      introduced. Adding agent pools to an existing cluster is not allowed through managed cluster
//!      operations", target `agentPoolProfiles`: microsoft/tyger#121, pulumi/pulumi-azure-nextgen#168).
//!    - Items the PUT leaves out are not removed: their child resources stay, and so do the items (AKS
//!      accepts such a PUT and deletes no pool: pulumi/pulumi-azure-native#579, #1686). A PUT without the array
//!      changes no child.
//!    - Items the PUT sends for existing children change them: the sent item's fields replace the child's (the
//!      fields it leaves out keep their values), checked against the child kind's immutable properties (rule
//!      2). AKS refuses some such changes for reasons of its own; the simulator refuses only what the rules
//!      document says. (The reconciler sends the items as the GET reports them, which changes nothing.)
//!    - Every parent PUT runs every child resource with the parent's operation: their `provisioningState`
//!      follows the parent's until it ends (AKS sets every pool of the cluster busy when an inline pool changes:
//!      pulumi/pulumi-azure-native#4264); a parent DELETE deletes them in its operation.
//! 2. **Immutable properties** (`immutable`: ARM paths with `[]`/`{}` wildcards; the spec's `x-ms-mutability`
//!    and the config's overrides, each with its source): a PUT on an existing resource that sends such a property
//!    with a value other than the stored one (the stored value lacking counts as other) is refused: `400
//!    PropertyChangeNotAllowed` "Changing property '`<name>`' is not allowed.", target `<name>` (the shape AKS
//!    answers: Azure/terraform-azurerm-avm-res-containerservice-managedcluster#166). Only what the PUT sent is
//!    compared, and of an object only the members it sent, so server-filled members are no change. Array items
//!    are paired by index.
//! 3. **Owner gate, settled** (`ownerGate.settled`; Azure/azure-service-operator#5517): a PUT or DELETE of a
//!    child while its parent's operation runs (the parent's `provisioningState` not terminal) is refused: `409
//!    OperationNotAllowed` "Operation is not allowed: Another operation (Updating) is in progress, please wait
//!    for it to finish before starting a new operation." (Azure/terraform-azurerm-avm-ptn-aks-production#25).
//!    The other way round, a PUT of the parent while one of those children's operation runs is refused the
//!    same way, naming the child: "Another operation (nodepool1 - Creating) is in progress"
//!    (Azure/azure-workload-identity#417, cilium/cilium#25944).
//! 4. **Owner gate, versions** (`ownerGate.versions`; Azure/azure-service-operator#5517): a child PUT whose
//!    version field (`armPath`) is greater than the parent's (`ownerArmPath`, compared by
//!    [`armgen_runtime::rules::compare_versions`]) is refused: `400` with the rule's `errorCode` (AKS:
//!    `NodePoolMcVersionIncompatible` "Node pool version 1.20.5 and control plane version 1.19.9 are
//!    incompatible", rancher/rancher#33426; the spec: "The node pool version cannot be greater than the control
//!    plane version"). The parent's field is the version that runs, which the simulator keeps as the service
//!    does (see [`crate::defaults`], reported versions): it follows the requested version when an operation
//!    succeeds, so a pool may follow its cluster's upgrade once the upgrade is done.
//!
//! Children created through the parent (rule 1) are not checked by rules 3 and 4: they are created and
//! upgraded with it. A parent DELETE is not gated: it deletes the children with it.
//!
//! When the generated document does not parse (a build defect `aks_api`'s own tests catch), every PUT and DELETE
//! answers `500` naming the problem rather than serving without rules.

use armgen_runtime::KindInfo;
use armgen_runtime::rules::{ChildOwned, Immutable, Rules, VersionGate, compare_versions, values_at};
use serde_json::{Map, Value, json};

use crate::registry::parent_id;
use crate::service::terminal;
use crate::util::ArmError;
use crate::{Simulator, State, Stored};

/// A child resource a parent PUT creates or changes (rule 1).
pub(crate) struct ChildWrite {
    /// The lower-case ID (the key in the store).
    pub key: String,
    pub id: String,
    pub name: String,
    pub kind: &'static KindInfo,
    /// The child's body before the service's defaults.
    pub body: Value,
    /// The stored child it replaces.
    pub existing: bool,
}

/// A child-owned array of a parent kind, resolved against the registry.
struct OwnedArray<'r> {
    rule: &'r ChildOwned,
    child: &'static KindInfo,
    /// The literal path segment of the children's collection (`agentPools`).
    collection: &'static str,
}

/// The name of the property an ARM path ends with (`properties.agentPoolProfiles[].osType` → `osType`).
fn property_name(arm_path: &str) -> &str {
    let last = arm_path.rsplit('.').next().unwrap_or(arm_path);
    last.find(['[', '{']).map(|i| &last[..i]).unwrap_or(last)
}

/// Whether what a PUT sent (`sent`) is what is stored: of objects only the members sent are compared (`null`
/// is not sending), arrays item by item.
fn sent_matches(sent: &Value, stored: Option<&Value>) -> bool {
    match (sent, stored) {
        (Value::Null, _) => true,
        (_, None) => false,
        (Value::Object(s), Some(Value::Object(t))) => s.iter().all(|(k, v)| sent_matches(v, t.get(k))),
        (Value::Array(s), Some(Value::Array(t))) => {
            s.len() == t.len() && s.iter().zip(t).all(|(a, b)| sent_matches(a, Some(b)))
        }
        (s, Some(t)) => s == t,
    }
}

/// Rule 2: the first immutable property `sent` changes in `stored`.
fn check_immutable(rules: &[Immutable], stored: &Value, sent: &Value) -> Result<(), ArmError> {
    for rule in rules {
        let sent_values = armgen_runtime::dotted::select(sent, &rule.arm_path).map_err(|e| {
            ArmError::new(
                500,
                "InternalServerError",
                format!("The simulator's immutability rule: {e}."),
            )
        })?;
        for (at, value) in sent_values {
            if !sent_matches(value, stored.pointer(&at.pointer())) {
                let name = property_name(&rule.arm_path);
                return Err(ArmError::new(
                    400,
                    "PropertyChangeNotAllowed",
                    format!("Changing property '{name}' is not allowed."),
                )
                .with_target(name));
            }
        }
    }
    Ok(())
}

/// Rule 3: the parent runs an operation.
fn owner_busy(state: &str) -> ArmError {
    ArmError::new(
        409,
        "OperationNotAllowed",
        format!(
            "Operation is not allowed: Another operation ({state}) is in progress, please wait for it to finish before starting a new operation."
        ),
    )
}

/// Rule 3, the other way round: a child runs an operation.
fn child_busy(child: &Stored) -> ArmError {
    let name = child.body.get("name").and_then(Value::as_str).unwrap_or_default();
    ArmError::new(
        409,
        "OperationNotAllowed",
        format!(
            "Operation is not allowed: Another operation ({name} - {}) is in progress, please wait for it to finish before starting a new operation.",
            child.state
        ),
    )
}

/// Rule 4 for one version field.
fn check_version(kind: &KindInfo, owner: &Stored, gate: &VersionGate, body: &Value) -> Result<(), ArmError> {
    let Some(running) = values_at(&owner.body, &gate.owner_arm_path)
        .into_iter()
        .find_map(|(_, v)| v.as_str())
    else {
        return Ok(());
    };
    for (_, value) in values_at(body, &gate.arm_path) {
        let Some(asked) = value.as_str() else { continue };
        if compare_versions(asked, running) == Some(std::cmp::Ordering::Greater) {
            let owner_kind = owner.kind.kind;
            return Err(ArmError::new(
                400,
                &gate.error_code,
                format!(
                    "{} version {asked} and {owner_kind} version {running} are incompatible: the {}'s {} may not be greater than the {owner_kind}'s {}.",
                    kind.kind, kind.kind, gate.arm_path, gate.owner_arm_path
                ),
            ));
        }
    }
    Ok(())
}

/// The stored direct children of `owner_key` of one ARM type.
fn children<'s>(st: &'s State, owner_key: &str, arm_type: &'s str) -> impl Iterator<Item = (&'s String, &'s Stored)> {
    let prefix = format!("{owner_key}/");
    st.resources
        .range(prefix.clone()..)
        .take_while(move |(k, _)| k.starts_with(&prefix))
        .filter(move |(_, s)| s.arm_type == arm_type)
}

/// Sets the value at a dotted path without wildcards, creating objects on the way; the owned arrays' paths
/// have no selectors (`owned_arrays`), so this cannot fail on them.
fn set_path(body: &mut Value, path: &str, value: Value) {
    if let Err(e) = armgen_runtime::dotted::set(body, path, value) {
        tracing::warn!(error = %e, "child-owned array not written");
    }
}

impl Simulator {
    /// The rules, or the 500 every write answers when the generated document does not parse.
    pub(crate) fn write_rules(&self) -> Result<&Rules, ArmError> {
        self.inner.rules.as_ref().map_err(|e| {
            ArmError::new(
                500,
                "InternalServerError",
                format!("The simulator has no service rules: {e}."),
            )
        })
    }

    /// The child-owned arrays of a kind, with their child kinds.
    fn owned_arrays<'r>(&self, rules: &'r Rules, kind: &KindInfo) -> Vec<OwnedArray<'r>> {
        let Some(k) = rules.kind(kind.group, kind.version, kind.kind) else {
            return Vec::new();
        };
        k.child_owned
            .iter()
            .filter(|rule| !rule.arm_path.contains(['[', '{']))
            .filter_map(|rule| {
                let child = self
                    .inner
                    .registry
                    .kind(kind.group, kind.version, &rule.child_kind)
                    .filter(|c| c.owner_kind == Some(kind.kind))?;
                let collection = self.inner.registry.type_of(child)?.collection()?;
                Some(OwnedArray {
                    rule,
                    child,
                    collection,
                })
            })
            .collect()
    }

    /// The child kinds that wait for a parent of `kind` to settle (rule 3).
    fn gated_children(&self, rules: &Rules, kind: &KindInfo) -> Vec<&'static KindInfo> {
        let Some(group) = rules.group(kind.group) else {
            return Vec::new();
        };
        group
            .kinds
            .iter()
            .filter(|k| k.version == kind.version && k.owner_gate.as_ref().is_some_and(|g| g.settled))
            .filter_map(|k| self.inner.registry.kind(kind.group, kind.version, &k.kind))
            .filter(|c| c.owner_kind == Some(kind.kind))
            .collect()
    }

    /// Checks a PUT of `kind` at `key` (`id`) with `body` against the rules; returns the child resources it
    /// creates or changes (rule 1).
    pub(crate) fn check_put(
        &self,
        st: &State,
        rules: &Rules,
        kind: &'static KindInfo,
        key: &str,
        id: &str,
        body: &Value,
    ) -> Result<Vec<ChildWrite>, ArmError> {
        let own = rules.kind(kind.group, kind.version, kind.kind);
        let existing = st.resources.get(key);
        if let Some(gate) = own.and_then(|k| k.owner_gate.as_ref())
            && let Some(owner) = parent_id(key).and_then(|p| st.resources.get(p))
        {
            if gate.settled && !terminal(&owner.state) {
                return Err(owner_busy(&owner.state));
            }
            for version in &gate.versions {
                check_version(kind, owner, version, body)?;
            }
        }
        if existing.is_some() {
            for child in self.gated_children(rules, kind) {
                if let Some((_, busy)) = children(st, key, child.arm.arm_type).find(|(_, c)| !terminal(&c.state)) {
                    return Err(child_busy(busy));
                }
            }
        }
        if let (Some(own), Some(old)) = (own, existing) {
            check_immutable(&own.immutable, &old.body, body)?;
        }
        let mut writes = Vec::new();
        for array in self.owned_arrays(rules, kind) {
            let Some(items) = values_at(body, &array.rule.arm_path)
                .into_iter()
                .find_map(|(_, v)| v.as_array())
            else {
                continue;
            };
            let child_rules = rules.kind(kind.group, kind.version, array.child.kind);
            for (i, item) in items.iter().enumerate() {
                let Some(item) = item.as_object() else { continue };
                let key_field = array.rule.key.as_str();
                let Some(name) = item.get(key_field).and_then(Value::as_str).filter(|n| !n.is_empty()) else {
                    return Err(ArmError::new(
                        400,
                        "InvalidParameter",
                        format!(
                            "The item {}[{i}] has no '{key_field}': it is the name of its {} resource.",
                            array.rule.arm_path, array.child.kind
                        ),
                    )
                    .with_target(format!("{}[{i}].{key_field}", array.rule.arm_path)));
                };
                // A sub-resource item (`{id, name, type, properties}`: subnets) sends its `properties`; a flattened
                // one (pools) is its properties beside the key.
                let sent = match item.get("properties") {
                    Some(Value::Object(p)) => p.clone(),
                    _ => {
                        let mut sent = item.clone();
                        sent.remove(key_field);
                        sent
                    }
                };
                let child_key = format!("{key}/{}/{}", array.collection.to_lowercase(), name.to_lowercase());
                let child_id = format!("{id}/{}/{name}", array.collection);
                let write = match (existing, st.resources.get(&child_key)) {
                    (None, _) => ChildWrite {
                        key: child_key,
                        id: child_id,
                        name: name.to_string(),
                        kind: array.child,
                        body: json!({ "properties": sent }),
                        existing: false,
                    },
                    (Some(_), None) => {
                        let parent = property_name(&array.rule.arm_path);
                        let (child, owner) = (array.child.kind, kind.kind);
                        return Err(ArmError::new(
                            400,
                            "BadRequest",
                            format!(
                                "A new {child} ('{name}') was introduced in {parent}. Adding {child} resources to an existing {owner} is not allowed through {owner} operations. For {child} specific changes, please use per-{child} operations."
                            ),
                        )
                        .with_target(parent));
                    }
                    (Some(_), Some(stored)) => {
                        let sent = json!({ "properties": sent });
                        if let Some(child_rules) = child_rules {
                            check_immutable(&child_rules.immutable, &stored.body, &sent)?;
                        }
                        let mut merged: Map<String, Value> = stored
                            .body
                            .get("properties")
                            .and_then(Value::as_object)
                            .cloned()
                            .unwrap_or_default();
                        if let Value::Object(fields) = &sent["properties"] {
                            merged.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
                        }
                        ChildWrite {
                            key: child_key,
                            id: stored
                                .body
                                .get("id")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                                .unwrap_or(child_id),
                            name: stored
                                .body
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or(name)
                                .to_string(),
                            kind: array.child,
                            body: json!({ "properties": merged }),
                            existing: true,
                        }
                    }
                };
                writes.push(write);
            }
        }
        Ok(writes)
    }

    /// Checks a DELETE of `kind` at `key` against the rules (rule 3).
    pub(crate) fn check_delete(&self, st: &State, rules: &Rules, kind: &KindInfo, key: &str) -> Result<(), ArmError> {
        let gate = rules
            .kind(kind.group, kind.version, kind.kind)
            .and_then(|k| k.owner_gate.as_ref());
        if gate.is_some_and(|g| g.settled)
            && let Some(owner) = parent_id(key).and_then(|p| st.resources.get(p))
            && !terminal(&owner.state)
        {
            return Err(owner_busy(&owner.state));
        }
        Ok(())
    }

    /// Checks an action (`POST <id>/<action>`) on the resource of `kind` at `key` against rule 3, as a write: refused
    /// while its owner runs an operation (child kinds gated on their owner) or while one of its gated children does.
    pub(crate) fn check_action(&self, st: &State, rules: &Rules, kind: &KindInfo, key: &str) -> Result<(), ArmError> {
        self.check_delete(st, rules, kind, key)?;
        for child in self.gated_children(rules, kind) {
            if let Some((_, busy)) = children(st, key, child.arm.arm_type).find(|(_, c)| !terminal(&c.state)) {
                return Err(child_busy(busy));
            }
        }
        Ok(())
    }

    /// The keys of the stored children in the child-owned arrays of the resource at `owner_key` (rule 1).
    pub(crate) fn owned_children(&self, st: &State, owner_key: &str) -> Vec<String> {
        let (Ok(rules), Some(owner)) = (&self.inner.rules, st.resources.get(owner_key)) else {
            return Vec::new();
        };
        self.owned_arrays(rules, owner.kind)
            .iter()
            .flat_map(|a| children(st, owner_key, a.child.arm.arm_type).map(|(k, _)| k.clone()))
            .collect()
    }

    /// Rewrites the child-owned arrays of the resource at `owner_key` from its stored children (rule 1): an item
    /// per child, its key the child's name and the rest the child's `properties`, in the array's order (new
    /// children last, by name). Does nothing for a resource without child-owned arrays.
    pub(crate) fn refresh_owned(&self, st: &mut State, owner_key: &str) {
        let (Ok(rules), Some(owner)) = (&self.inner.rules, st.resources.get(owner_key)) else {
            return;
        };
        let mut updates = Vec::new();
        for array in self.owned_arrays(rules, owner.kind) {
            let current = values_at(&owner.body, &array.rule.arm_path)
                .into_iter()
                .find_map(|(_, v)| v.as_array());
            let position = |name: &str| {
                current
                    .and_then(|items| {
                        items.iter().position(|i| {
                            i.get(&array.rule.key)
                                .and_then(Value::as_str)
                                .is_some_and(|n| n.eq_ignore_ascii_case(name))
                        })
                    })
                    .unwrap_or(usize::MAX)
            };
            // Each child as an item in both shapes ARM uses: flattened (AKS lists a cluster's pools as
            // `{name, count, …}`) and as a sub-resource (a virtual network lists its subnets as
            // `{id, name, type, properties}`); the owner's generated type tells which one it models.
            let mut items: Vec<(usize, String, Value, Value)> = children(st, owner_key, array.child.arm.arm_type)
                .map(|(_, child)| {
                    let name = child.body.get("name").and_then(Value::as_str).unwrap_or_default();
                    let mut flat = Map::new();
                    flat.insert(array.rule.key.clone(), json!(name));
                    if let Some(Value::Object(p)) = child.body.get("properties") {
                        flat.extend(p.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                    let mut nested = Map::new();
                    for k in ["id", "name", "type", "properties"] {
                        if let Some(v) = child.body.get(k) {
                            nested.insert(k.to_string(), v.clone());
                        }
                    }
                    nested.insert(array.rule.key.clone(), json!(name));
                    (
                        position(name),
                        name.to_lowercase(),
                        Value::Object(flat),
                        Value::Object(nested),
                    )
                })
                .collect();
            if items.is_empty() && current.is_none() {
                continue;
            }
            items.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            let (flat, nested): (Vec<Value>, Vec<Value>) =
                items.into_iter().map(|(_, _, flat, nested)| (flat, nested)).unzip();
            let unknown_with = |items: &[Value]| {
                let mut body = owner.body.clone();
                set_path(&mut body, &array.rule.arm_path, Value::Array(items.to_vec()));
                crate::validate::round_trip(self.inner.round_trip, owner.kind, &body)
                    .map_or(usize::MAX, |rt| rt.unknown.len())
            };
            let items = if !flat.is_empty() && unknown_with(&nested) < unknown_with(&flat) {
                nested
            } else {
                flat
            };
            updates.push((array.rule.arm_path.clone(), Value::Array(items)));
        }
        if let Some(owner) = st.resources.get_mut(owner_key) {
            for (path, items) in updates {
                set_path(&mut owner.body, &path, items);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_was_sent_is_compared() {
        let stored = json!({"a": 1, "b": {"c": "x", "server": true}, "l": [1, 2]});
        assert!(sent_matches(&json!({"b": {"c": "x"}}), Some(&stored)));
        assert!(!sent_matches(&json!({"b": {"c": "y"}}), Some(&stored)));
        assert!(
            !sent_matches(&json!({"d": 1}), Some(&stored)),
            "a member the store lacks"
        );
        assert!(sent_matches(&json!({"d": null}), Some(&stored)), "null is not sending");
        assert!(!sent_matches(&json!({"l": [1]}), Some(&stored)));
        assert!(sent_matches(&json!({"l": [1, 2]}), Some(&stored)));
        assert_eq!(property_name("properties.agentPoolProfiles[].osType"), "osType");
        assert_eq!(property_name("properties.addons{}"), "addons");
        assert_eq!(property_name("location"), "location");
    }

    #[test]
    fn immutable_refusal_names_the_property() {
        let rules = [Immutable {
            spec_path: "spec.dnsPrefix".into(),
            arm_path: "properties.dnsPrefix".into(),
            source: "test".into(),
        }];
        let stored = json!({"properties": {"dnsPrefix": "a"}});
        assert!(check_immutable(&rules, &stored, &json!({"properties": {"dnsPrefix": "a"}})).is_ok());
        assert!(check_immutable(&rules, &stored, &json!({"properties": {}})).is_ok());
        let e = check_immutable(&rules, &stored, &json!({"properties": {"dnsPrefix": "b"}})).unwrap_err();
        assert_eq!((e.status, e.code.as_str()), (400, "PropertyChangeNotAllowed"));
        assert_eq!(
            e.body(),
            json!({"error": {"code": "PropertyChangeNotAllowed", "message": "Changing property 'dnsPrefix' is not allowed.", "target": "dnsPrefix"}})
        );
        let unset = check_immutable(&rules, &json!({}), &json!({"properties": {"dnsPrefix": "b"}}));
        assert!(unset.is_err(), "setting a property the resource lacks changes it");
    }

    #[test]
    fn set_path_creates_objects() {
        let mut v = json!({"properties": {"x": 1}});
        set_path(&mut v, "properties.items", json!([1]));
        set_path(&mut v, "other.deep", json!(true));
        assert_eq!(
            v,
            json!({"properties": {"x": 1, "items": [1]}, "other": {"deep": true}})
        );
    }
}
