//! Turning a custom resource into its ARM PUT body: secret and resource references resolved against the cluster.
//!
//! The generated `export_custom_resource` is synchronous and calls a [`Resolver`] for each reference it meets.
//! Reading Secrets and other custom resources is asynchronous, so the export runs twice: first with a resolver
//! that only records what the spec references ([`references`]), then — once the reconciler has read those
//! Secrets and resources — with one that answers from what was read ([`export`]). The custom resource with its
//! references replaced by `armId`s ([`Resolved::custom_resource`]) is what change detection compares, so a
//! reference to another custom resource compares by the ARM ID it stands for, and a value read from a ConfigMap
//! (`<property>FromConfig`) by the value.

use std::cell::RefCell;
use std::collections::BTreeMap;

use armgen_runtime::KindInfo;
use armgen_runtime::kube::{ConfigMapReference, ConversionError, Resolver, ResourceReference, SecretReference};
use serde_json::Value;

/// What a spec references: `(field path, reference)` in the order the export met them.
#[derive(Debug, Default, Clone)]
pub struct References {
    pub secrets: Vec<(String, SecretReference)>,
    pub resources: Vec<(String, ResourceReference)>,
    /// `(path of the value's field, ConfigMap reference)`.
    pub config_maps: Vec<(String, ConfigMapReference)>,
}

#[derive(Default)]
struct Recorder {
    found: RefCell<References>,
}

impl Resolver for Recorder {
    fn secret(&self, path: &str, reference: &SecretReference) -> Result<String, ConversionError> {
        self.found
            .borrow_mut()
            .secrets
            .push((path.to_string(), reference.clone()));
        Ok(String::new())
    }

    fn resource(&self, path: &str, reference: &ResourceReference) -> Result<String, ConversionError> {
        self.found
            .borrow_mut()
            .resources
            .push((path.to_string(), reference.clone()));
        Ok(reference.arm_id.clone().unwrap_or_default())
    }

    fn config_map(&self, path: &str, reference: &ConfigMapReference) -> Result<String, ConversionError> {
        self.found
            .borrow_mut()
            .config_maps
            .push((path.to_string(), reference.clone()));
        Ok(String::new())
    }
}

/// The references of `custom_resource` (a custom resource of `info`'s kind, as JSON).
pub fn references(info: &KindInfo, custom_resource: &Value) -> Result<References, ConversionError> {
    let recorder = Recorder::default();
    run_export(info, custom_resource, &recorder)?;
    Ok(recorder.found.into_inner())
}

/// Values read for the references: secret values by `(name, key)`, ARM IDs by field path, ConfigMap values by the
/// path of the field they stand for.
#[derive(Default)]
pub struct Values {
    pub secrets: BTreeMap<(String, String), String>,
    pub resources: BTreeMap<String, String>,
    pub config_maps: BTreeMap<String, String>,
}

impl Resolver for Values {
    fn secret(&self, path: &str, reference: &SecretReference) -> Result<String, ConversionError> {
        self.secrets
            .get(&(reference.name.clone(), reference.key.clone()))
            .cloned()
            .ok_or_else(|| ConversionError {
                path: path.to_string(),
                message: format!("Secret {:?} key {:?} was not read", reference.name, reference.key),
            })
    }

    fn resource(&self, path: &str, reference: &ResourceReference) -> Result<String, ConversionError> {
        match self.resources.get(path) {
            Some(id) => Ok(id.clone()),
            None => reference.arm_id.clone().ok_or_else(|| ConversionError {
                path: path.to_string(),
                message: "the referenced resource was not resolved".into(),
            }),
        }
    }

    fn config_map(&self, path: &str, reference: &ConfigMapReference) -> Result<String, ConversionError> {
        self.config_maps.get(path).cloned().ok_or_else(|| ConversionError {
            path: path.to_string(),
            message: format!("ConfigMap {:?} key {:?} was not read", reference.name, reference.key),
        })
    }
}

/// The ARM body, and the custom resource as change detection should see it.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub body: Value,
    pub custom_resource: Value,
}

/// The ARM PUT body of `custom_resource`, references answered by `values`.
pub fn export(info: &KindInfo, custom_resource: &Value, values: &Values) -> Result<Resolved, ConversionError> {
    let body = run_export(info, custom_resource, values)?;
    let mut resolved = custom_resource.clone();
    substitute(&mut resolved, values);
    Ok(Resolved {
        body,
        custom_resource: resolved,
    })
}

/// Puts what `values` resolved in place of the references in `custom_resource`: `{armId}` for a reference to
/// another custom resource, and the value for a `<field>FromConfig` (read for `….<field>`).
fn substitute(custom_resource: &mut Value, values: &Values) {
    for (path, id) in &values.resources {
        if let Some(slot) = at_path(custom_resource, path) {
            *slot = serde_json::json!({ "armId": id });
        }
    }
    for (path, value) in &values.config_maps {
        let Some((parent, field)) = path.rsplit_once('.') else {
            continue;
        };
        if let Some(Value::Object(map)) = at_path(custom_resource, parent) {
            map.remove(&format!("{field}FromConfig"));
            map.insert(field.to_string(), Value::String(value.clone()));
        }
    }
}

fn run_export(info: &KindInfo, custom_resource: &Value, resolver: &dyn Resolver) -> Result<Value, ConversionError> {
    aks_api::export_custom_resource(info.group, info.version, info.kind, custom_resource, resolver).unwrap_or_else(
        || {
            Err(ConversionError {
                path: "apiVersion".into(),
                message: format!(
                    "{}/{} {} is not compiled into this reconciler",
                    info.kube_group, info.version, info.kind
                ),
            })
        },
    )
}

/// The value at a field path as the generated conversions write them (`spec.a.b[0].c`, `spec.tags[key]`).
fn at_path<'v>(value: &'v mut Value, path: &str) -> Option<&'v mut Value> {
    let mut current = value;
    let mut rest = path;
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let key = &after[..end];
            current = match current {
                Value::Array(items) => items.get_mut(key.parse::<usize>().ok()?)?,
                Value::Object(map) => map.get_mut(key)?,
                _ => return None,
            };
            rest = &after[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            current = current.as_object_mut()?.get_mut(&rest[..end])?;
            rest = &rest[end..];
        }
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_fields_items_and_keys() {
        let mut v = json!({"spec": {"a": [{"b": 1}, {"b": {"armId": "x"}}], "m": {"k.1": 2}}});
        assert_eq!(at_path(&mut v, "spec.a[1].b").cloned(), Some(json!({"armId": "x"})));
        assert_eq!(at_path(&mut v, "spec.m[k.1]").cloned(), Some(json!(2)));
        assert_eq!(at_path(&mut v, "spec.a[7].b"), None);
        assert_eq!(at_path(&mut v, "spec.a[x]"), None);
        assert_eq!(at_path(&mut v, "spec.missing"), None);
    }

    #[test]
    fn config_map_values_take_their_references_place() {
        let mut cr = json!({"spec": {
            "issuerFromConfig": {"name": "c", "key": "k"},
            "subject": "s",
            "ids": [{"kind": "UserAssignedIdentity", "name": "cp"}],
        }});
        let mut values = Values::default();
        values.config_maps.insert("spec.issuer".into(), "https://issuer".into());
        values
            .resources
            .insert("spec.ids[0]".into(), "/subscriptions/s/x".into());
        substitute(&mut cr, &values);
        assert_eq!(
            cr,
            json!({"spec": {"issuer": "https://issuer", "subject": "s", "ids": [{"armId": "/subscriptions/s/x"}]}})
        );
    }
}
