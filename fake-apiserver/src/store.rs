//! The object store: every resource is a JSON object keyed by (group, plural, namespace, name).

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use crate::discovery;
use crate::error::ApiError;
use crate::selector::{FieldSelector, LabelSelector};

/// How many changes are kept for watches that resume from a resource version.
const HISTORY_LIMIT: usize = 10_000;
/// Capacity of the broadcast channel feeding open watches.
const BROADCAST_CAPACITY: usize = 4096;

/// A resource: its API group ("" for core) and plural. The version is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ResourceId {
    pub(crate) group: String,
    pub(crate) plural: String,
}

/// The identity of a stored object; `namespace` is "" for cluster-scoped objects.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ObjectKey {
    pub(crate) resource: ResourceId,
    pub(crate) namespace: String,
    pub(crate) name: String,
}

impl ObjectKey {
    fn not_found(&self) -> ApiError {
        ApiError::not_found(&self.resource.group, &self.resource.plural, &self.name)
    }

    fn conflict(&self, why: &str) -> ApiError {
        ApiError::conflict(&self.resource.group, &self.resource.plural, &self.name, why)
    }
}

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChangeType {
    Added,
    Modified,
    Deleted,
}

/// One change, as sent to watches. `object` is the new state (the last state for a deletion).
#[derive(Debug)]
pub(crate) struct Change {
    pub(crate) resource_version: u64,
    pub(crate) key: ObjectKey,
    pub(crate) change_type: ChangeType,
    pub(crate) old: Option<Value>,
    pub(crate) object: Value,
}

/// Which objects a list, watch or collection delete selects.
#[derive(Debug, Clone)]
pub(crate) struct Filter {
    pub(crate) resource: ResourceId,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) labels: LabelSelector,
    pub(crate) fields: FieldSelector,
}

impl Filter {
    pub(crate) fn matches(&self, key: &ObjectKey, object: &Value) -> bool {
        key.resource == self.resource
            && self.namespace.as_ref().is_none_or(|ns| *ns == key.namespace)
            && self.name.as_ref().is_none_or(|name| *name == key.name)
            && self.labels.matches(object)
            && self.fields.matches(object)
    }
}

/// Options of a delete.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteOptions {
    pub(crate) precondition_uid: Option<String>,
    pub(crate) precondition_resource_version: Option<String>,
    pub(crate) orphan: bool,
}

/// Converts a custom resource (JSON) to an `apiVersion` (`group/version`), as a CRD's conversion webhook does;
/// an error is the webhook's failure message.
pub type Converter = Arc<dyn Fn(Value, &str) -> Result<Value, String> + Send + Sync>;

/// The object as a client that asked for `api_version` sees it: converted by `converter` when it is stored at
/// another version, else only relabelled (the fake's behaviour without a converter).
pub(crate) fn present_with(converter: Option<&Converter>, object: Value, api_version: &str) -> Result<Value, ApiError> {
    match converter {
        Some(convert) if object.get("apiVersion").and_then(Value::as_str) != Some(api_version) => {
            let kind = object
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            convert(object, api_version)
                .map(|converted| with_api_version(converted, api_version))
                .map_err(|e| {
                    ApiError::new(
                        500,
                        format!("conversion webhook for {api_version}, Kind={kind} failed: {e}"),
                    )
                })
        }
        _ => Ok(with_api_version(object, api_version)),
    }
}

/// How an update treats `.status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UpdateMode {
    /// A write to the main resource; `.status` is kept from the stored object when `keep_status`.
    Main { keep_status: bool },
    /// A write to the `/status` subresource: only `.status` changes.
    Status,
    /// A test helper write: everything given is taken, no precondition.
    Direct,
}

pub(crate) struct State {
    resource_version: u64,
    uid_sequence: u64,
    seed: u64,
    objects: BTreeMap<ObjectKey, Value>,
    kinds: HashMap<ResourceId, String>,
    plurals: HashMap<(String, String), String>,
    history: VecDeque<Arc<Change>>,
    /// Watches may resume from any resource version >= this.
    history_floor: u64,
    orphan_uids: HashSet<String>,
    sender: broadcast::Sender<Arc<Change>>,
    /// Conversion of custom resources, by API group.
    converters: HashMap<String, Converter>,
    /// The version each object of a resource with a CRD was encoded at by its last write: the CRD's storage
    /// version then.
    encoded: HashMap<ObjectKey, String>,
}

/// Splits `v1` into ("", "v1") and `example.com/v1` into ("example.com", "v1").
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

pub(crate) fn join_api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The plural a kind most likely has: `Widget` → `widgets`, `Policy` → `policies`, `Ingress` → `ingresses`.
fn guess_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") || lower.ends_with("sh") {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

/// The kind a plural most likely has, when no object of the resource was seen: `widgets` → `Widget`.
fn guess_kind(plural: &str) -> String {
    let singular = if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if let Some(stem) = plural.strip_suffix("sses") {
        format!("{stem}ss")
    } else if let Some(stem) = plural.strip_suffix('s') {
        stem.to_string()
    } else {
        plural.to_string()
    };
    let mut chars = singular.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => singular,
    }
}

/// The current time as the API server writes it (`2024-05-01T12:00:00Z`).
pub(crate) fn now_timestamp() -> Value {
    let now = k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(k8s_openapi::jiff::Timestamp::now());
    serde_json::to_value(now).unwrap_or_else(|_| Value::String("1970-01-01T00:00:00Z".into()))
}

pub(crate) fn meta(object: &Value) -> Option<&Map<String, Value>> {
    object.get("metadata").and_then(Value::as_object)
}

pub(crate) fn meta_str<'a>(object: &'a Value, field: &str) -> Option<&'a str> {
    meta(object).and_then(|m| m.get(field)).and_then(Value::as_str)
}

/// The metadata map, created when missing. `object` must be a JSON object (callers check).
fn meta_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = Value::Object(Map::new());
    }
    let Value::Object(map) = object else {
        unreachable!("made an object above")
    };
    let metadata = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    match metadata {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

fn finalizers(object: &Value) -> Vec<&str> {
    meta(object)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn owner_uids(object: &Value) -> Vec<String> {
    meta(object)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Drops what the API server never returns: managed fields, nulls, empty lists and maps in metadata.
fn normalize_metadata(object: &mut Value) {
    let metadata = meta_mut(object);
    metadata.remove("managedFields");
    metadata.retain(|_, value| match value {
        Value::Null => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    });
}

/// Whether two objects are the same outside `skip` top-level fields.
fn same_outside(a: &Value, b: &Value, skip: &[&str]) -> bool {
    let empty = Map::new();
    let a = a.as_object().unwrap_or(&empty);
    let b = b.as_object().unwrap_or(&empty);
    let relevant = |m: &Map<String, Value>| m.iter().filter(|(k, _)| !skip.contains(&k.as_str())).count();
    relevant(a) == relevant(b)
        && a.iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .all(|(k, v)| b.get(k) == Some(v))
}

/// Sets `apiVersion` to the version the client asked for.
pub(crate) fn with_api_version(mut object: Value, api_version: &str) -> Value {
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), Value::String(api_version.to_string()));
    }
    object
}

fn set_status(target: &mut Value, status: Option<Value>) {
    if let Some(map) = target.as_object_mut() {
        match status {
            Some(status) => {
                map.insert("status".into(), status);
            }
            None => {
                map.remove("status");
            }
        }
    }
}

impl State {
    pub(crate) fn new(seed: u64) -> Self {
        let (sender, _) = broadcast::channel(BROADCAST_CAPACITY);
        Self {
            resource_version: 0,
            uid_sequence: 0,
            seed,
            objects: BTreeMap::new(),
            kinds: HashMap::new(),
            plurals: HashMap::new(),
            history: VecDeque::new(),
            history_floor: 0,
            orphan_uids: HashSet::new(),
            sender,
            converters: HashMap::new(),
            encoded: HashMap::new(),
        }
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.resource_version
    }

    pub(crate) fn history_floor(&self) -> u64 {
        self.history_floor
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.sender.subscribe()
    }

    /// Changes after `resource_version`, oldest first.
    pub(crate) fn changes_since(&self, resource_version: u64) -> impl Iterator<Item = &Arc<Change>> {
        self.history
            .iter()
            .filter(move |c| c.resource_version > resource_version)
    }

    pub(crate) fn set_converter(&mut self, group: &str, converter: Converter) {
        self.converters.insert(group.to_string(), converter);
    }

    /// The converter of a group, if any.
    pub(crate) fn converter(&self, group: &str) -> Option<Converter> {
        self.converters.get(group).cloned()
    }

    /// The object as a client that asked for `api_version` sees it (see [`present_with`]).
    pub(crate) fn present(&self, object: &Value, api_version: &str) -> Result<Value, ApiError> {
        let (group, _) = split_api_version(api_version);
        present_with(self.converters.get(group), object.clone(), api_version)
    }

    /// The storage version of a resource, from its stored CRD.
    pub(crate) fn storage_version_of(&self, resource: &ResourceId) -> Option<String> {
        let key = ObjectKey {
            resource: ResourceId {
                group: discovery::CRD_GROUP.to_string(),
                plural: discovery::CRD_PLURAL.to_string(),
            },
            namespace: String::new(),
            name: format!("{}.{}", resource.plural, resource.group),
        };
        self.objects
            .get(&key)
            .and_then(discovery::storage_version)
            .map(str::to_string)
    }

    /// The version an object was encoded at by its last write (objects of resources with a CRD only).
    pub(crate) fn encoded_version(&self, key: &ObjectKey) -> Option<&str> {
        self.encoded.get(key).map(String::as_str)
    }

    /// An object as it is stored: converted to the storage version when the resource has a CRD and its group a
    /// converter. Also returns the storage version (when the resource has a CRD).
    fn encode(&self, resource: &ResourceId, object: Value) -> Result<(Value, Option<String>), ApiError> {
        let storage = self.storage_version_of(resource);
        let object = match (&storage, self.converters.get(&resource.group)) {
            (Some(version), Some(convert)) => {
                let target = join_api_version(&resource.group, version);
                if object.get("apiVersion").and_then(Value::as_str) == Some(target.as_str()) {
                    object
                } else {
                    let kind = object
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let converted = convert(object, &target).map_err(|e| {
                        ApiError::new(500, format!("conversion webhook for {target}, Kind={kind} failed: {e}"))
                    })?;
                    with_api_version(converted, &target)
                }
            }
            _ => object,
        };
        Ok((object, storage))
    }

    fn record_encoding(&mut self, key: &ObjectKey, storage: Option<String>) {
        match storage {
            Some(version) => self.encoded.insert(key.clone(), version),
            None => self.encoded.remove(key),
        };
    }

    pub(crate) fn register_kind(&mut self, resource: &ResourceId, kind: &str) {
        if kind.is_empty() {
            return;
        }
        self.kinds.insert(resource.clone(), kind.to_string());
        self.plurals
            .insert((resource.group.clone(), kind.to_string()), resource.plural.clone());
    }

    /// The kind of a resource: registered or seen, well known, or guessed from the plural.
    pub(crate) fn kind_of(&self, resource: &ResourceId) -> String {
        if let Some(kind) = self.kinds.get(resource) {
            return kind.clone();
        }
        discovery::built_in_kind(&resource.group, &resource.plural)
            .map(str::to_string)
            .unwrap_or_else(|| guess_kind(&resource.plural))
    }

    /// The plural of a kind: registered or seen, well known, or guessed.
    pub(crate) fn plural_of(&self, group: &str, kind: &str) -> String {
        if let Some(plural) = self.plurals.get(&(group.to_string(), kind.to_string())) {
            return plural.clone();
        }
        discovery::built_in_plural(group, kind)
            .map(str::to_string)
            .unwrap_or_else(|| guess_plural(kind))
    }

    /// For a CustomResourceDefinition: refuses an invalid one (`422`), gives it the status the API server's CRD
    /// controllers would (established at once), and registers the kind and plural of its custom resources.
    fn admit_crd(&mut self, resource: &ResourceId, crd: &mut Value, previous: Option<&Value>) -> Result<(), ApiError> {
        if resource.group != discovery::CRD_GROUP || resource.plural != discovery::CRD_PLURAL {
            return Ok(());
        }
        let name = meta_str(crd, "name").unwrap_or_default().to_string();
        discovery::validate_crd(crd)
            .map_err(|why| ApiError::invalid(&resource.group, &resource.plural, &name, &why))?;
        let status = discovery::crd_status(crd, previous);
        set_status(crd, Some(status));
        discovery::validate_stored_versions(crd, false)
            .map_err(|why| ApiError::invalid(&resource.group, &resource.plural, &name, &why))?;
        let field = |pointer: &str| {
            crd.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let custom = ResourceId {
            group: field("/spec/group"),
            plural: field("/spec/names/plural"),
        };
        let kind = field("/spec/names/kind");
        self.register_kind(&custom, &kind);
        Ok(())
    }

    fn next_resource_version(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    fn next_uid(&mut self) -> String {
        self.uid_sequence += 1;
        let mixed = self.seed ^ self.uid_sequence.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            (mixed >> 32) as u32,
            (mixed >> 16) as u16,
            mixed & 0xfff,
            (mixed >> 12) & 0xfff,
            self.uid_sequence & 0xffff_ffff_ffff
        )
    }

    fn generated_name(&mut self, prefix: &str) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        self.uid_sequence += 1;
        let mut n = (self.seed ^ self.uid_sequence.wrapping_mul(0x2545_f491_4f6c_dd1d)).rotate_left(17);
        let mut suffix = String::with_capacity(5);
        for _ in 0..5 {
            suffix.push(ALPHABET[(n % ALPHABET.len() as u64) as usize] as char);
            n /= ALPHABET.len() as u64;
        }
        format!("{prefix}{suffix}")
    }

    fn emit(&mut self, key: &ObjectKey, change_type: ChangeType, old: Option<Value>, object: &Value) {
        let change = Arc::new(Change {
            resource_version: self.resource_version,
            key: key.clone(),
            change_type,
            old,
            object: object.clone(),
        });
        if self.history.len() >= HISTORY_LIMIT
            && let Some(evicted) = self.history.pop_front()
        {
            self.history_floor = evicted.resource_version;
        }
        self.history.push_back(Arc::clone(&change));
        // No open watch is not an error.
        let _ = self.sender.send(change);
    }

    pub(crate) fn get(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key)
    }

    /// Objects matching the filter, ordered by namespace and name.
    pub(crate) fn list<'a>(&'a self, filter: &'a Filter) -> impl Iterator<Item = (&'a ObjectKey, &'a Value)> + 'a {
        self.objects
            .iter()
            .filter(move |(key, object)| filter.matches(key, object))
    }

    /// Creates an object. `namespace` is the request's ("" for cluster-scoped); the name comes from the body
    /// (`metadata.name` or `metadata.generateName`). Returns the stored object.
    pub(crate) fn create(
        &mut self,
        resource: &ResourceId,
        api_version: &str,
        namespace: &str,
        mut object: Value,
        drop_status: bool,
    ) -> Result<(ObjectKey, Value), ApiError> {
        let (group, plural) = (resource.group.as_str(), resource.plural.as_str());
        if !object.is_object() {
            return Err(ApiError::bad_request("the request body must be a JSON object"));
        }
        let body_namespace = meta_str(&object, "namespace").unwrap_or_default();
        if !namespace.is_empty() && !body_namespace.is_empty() && body_namespace != namespace {
            return Err(ApiError::bad_request(format!(
                "the namespace of the provided object ({body_namespace}) does not match the namespace sent on the \
                 request ({namespace})"
            )));
        }
        let name = match meta_str(&object, "name").filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => {
                let Some(prefix) = meta_str(&object, "generateName").filter(|n| !n.is_empty()) else {
                    return Err(ApiError::invalid(
                        group,
                        plural,
                        "",
                        "metadata.name: Required value: name or generateName is required",
                    ));
                };
                let prefix = prefix.to_string();
                let mut candidate = self.generated_name(&prefix);
                let mut attempts = 0;
                while self.objects.contains_key(&ObjectKey {
                    resource: resource.clone(),
                    namespace: namespace.to_string(),
                    name: candidate.clone(),
                }) {
                    attempts += 1;
                    if attempts > 16 {
                        return Err(ApiError::already_exists(group, plural, &candidate));
                    }
                    candidate = self.generated_name(&prefix);
                }
                candidate
            }
        };
        let key = ObjectKey {
            resource: resource.clone(),
            namespace: namespace.to_string(),
            name: name.clone(),
        };
        if self.objects.contains_key(&key) {
            return Err(ApiError::already_exists(group, plural, &name));
        }
        let kind = match object.get("kind").and_then(Value::as_str).filter(|k| !k.is_empty()) {
            Some(kind) => kind.to_string(),
            None => self.kind_of(resource),
        };
        self.register_kind(resource, &kind);
        if drop_status {
            set_status(&mut object, None);
        }
        if let Some(map) = object.as_object_mut() {
            map.insert("kind".into(), Value::String(kind.clone()));
        }
        meta_mut(&mut object).insert("name".into(), Value::String(name.clone()));
        self.admit_crd(resource, &mut object, None)?;
        if let Some(map) = object.as_object_mut() {
            map.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        let (mut object, storage) = self.encode(resource, object)?;
        let uid = self.next_uid();
        let resource_version = self.next_resource_version();
        if let Some(map) = object.as_object_mut() {
            map.insert("kind".into(), Value::String(kind));
        }
        let metadata = meta_mut(&mut object);
        metadata.insert("name".into(), Value::String(name));
        if namespace.is_empty() {
            metadata.remove("namespace");
        } else {
            metadata.insert("namespace".into(), Value::String(namespace.to_string()));
        }
        metadata.insert("uid".into(), Value::String(uid));
        metadata.insert("creationTimestamp".into(), now_timestamp());
        metadata.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
        metadata.insert("generation".into(), json!(1));
        metadata.remove("deletionTimestamp");
        metadata.remove("deletionGracePeriodSeconds");
        normalize_metadata(&mut object);
        self.objects.insert(key.clone(), object.clone());
        self.record_encoding(&key, storage);
        self.emit(&key, ChangeType::Added, None, &object);
        Ok((key, object))
    }

    /// Replaces an object (a PUT, or the result of a patch; `new` is at `api_version`). Returns the stored
    /// object.
    ///
    /// A write that changes nothing keeps the resource version and sends no watch event, as the API server does —
    /// unless the object is encoded at another version than its CRD's storage version now: then the write
    /// re-encodes it (the API server compares the newly encoded bytes with the stored ones). Removing the last
    /// finalizer of an object being deleted removes it.
    pub(crate) fn update(
        &mut self,
        key: &ObjectKey,
        api_version: &str,
        new: Value,
        mode: UpdateMode,
    ) -> Result<Value, ApiError> {
        let Some(stored) = self.objects.get(key).cloned() else {
            return Err(key.not_found());
        };
        // The stored object as this client sees it; the write is worked out at its version, then encoded.
        let old = self.present(&stored, api_version)?;
        if !new.is_object() {
            return Err(ApiError::bad_request("the request body must be a JSON object"));
        }
        if let Some(name) = meta_str(&new, "name").filter(|n| !n.is_empty())
            && name != key.name
        {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                key.name
            )));
        }
        if let Some(namespace) = meta_str(&new, "namespace").filter(|n| !n.is_empty())
            && namespace != key.namespace
            && !key.namespace.is_empty()
        {
            return Err(ApiError::bad_request(format!(
                "the namespace of the provided object ({namespace}) does not match the namespace sent on the \
                 request ({})",
                key.namespace
            )));
        }
        let old_resource_version = meta_str(&old, "resourceVersion").unwrap_or_default().to_string();
        if mode != UpdateMode::Direct
            && let Some(given) = meta_str(&new, "resourceVersion").filter(|rv| !rv.is_empty())
            && given != old_resource_version
        {
            return Err(key.conflict(
                "the object has been modified; please apply your changes to the latest version and try again",
            ));
        }

        let mut result = match mode {
            UpdateMode::Status => {
                let mut result = old.clone();
                set_status(&mut result, new.get("status").cloned());
                result
            }
            UpdateMode::Main { keep_status } => {
                let mut result = new;
                if keep_status {
                    set_status(&mut result, old.get("status").cloned());
                }
                result
            }
            UpdateMode::Direct => new,
        };
        if mode != UpdateMode::Status {
            meta_mut(&mut result).insert("name".into(), Value::String(key.name.clone()));
            self.admit_crd(&key.resource, &mut result, old.get("status"))?;
        } else if key.resource.group == discovery::CRD_GROUP && key.resource.plural == discovery::CRD_PLURAL {
            discovery::validate_stored_versions(&result, true)
                .map_err(|why| ApiError::invalid(&key.resource.group, &key.resource.plural, &key.name, &why))?;
        }
        if let Some(map) = result.as_object_mut() {
            map.insert("apiVersion".into(), Value::String(api_version.to_string()));
            if map.get("kind").and_then(Value::as_str).is_none_or(str::is_empty) {
                map.insert("kind".into(), old.get("kind").cloned().unwrap_or(Value::Null));
            }
        }
        let old_meta = meta(&old).cloned().unwrap_or_default();
        let metadata = meta_mut(&mut result);
        for field in [
            "name",
            "namespace",
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "resourceVersion",
        ] {
            match old_meta.get(field) {
                Some(value) => metadata.insert(field.into(), value.clone()),
                None => metadata.remove(field),
            };
        }
        normalize_metadata(&mut result);

        let spec_changed = !same_outside(&old, &result, &["apiVersion", "kind", "metadata", "status"]);
        let (mut result, storage) = self.encode(&key.resource, result)?;
        let unchanged = same_outside(&stored, &result, &["apiVersion"]) && self.encoded.get(key).cloned() == storage;
        if unchanged {
            return Ok(stored);
        }
        if spec_changed {
            let generation = old_meta.get("generation").and_then(Value::as_i64).unwrap_or(0) + 1;
            meta_mut(&mut result).insert("generation".into(), json!(generation));
        }
        if let Some(kind) = result.get("kind").and_then(Value::as_str) {
            let kind = kind.to_string();
            self.register_kind(&key.resource, &kind);
        }
        if meta(&result).is_some_and(|m| m.contains_key("deletionTimestamp")) && finalizers(&result).is_empty() {
            return Ok(self.remove(key, Some(result)));
        }
        let resource_version = self.next_resource_version();
        meta_mut(&mut result).insert("resourceVersion".into(), Value::String(resource_version.to_string()));
        self.objects.insert(key.clone(), result.clone());
        self.record_encoding(key, storage);
        self.emit(key, ChangeType::Modified, Some(stored), &result);
        Ok(result)
    }

    /// Deletes an object: marks it (`deletionTimestamp`) while it has finalizers, removes it otherwise.
    /// Returns the object's last state.
    pub(crate) fn delete(&mut self, key: &ObjectKey, options: &DeleteOptions) -> Result<Value, ApiError> {
        let Some(old) = self.objects.get(key).cloned() else {
            return Err(key.not_found());
        };
        if let Some(uid) = &options.precondition_uid
            && meta_str(&old, "uid") != Some(uid.as_str())
        {
            return Err(key.conflict(&format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta_str(&old, "uid").unwrap_or_default()
            )));
        }
        if let Some(rv) = &options.precondition_resource_version
            && meta_str(&old, "resourceVersion") != Some(rv.as_str())
        {
            return Err(key.conflict(&format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                meta_str(&old, "resourceVersion").unwrap_or_default()
            )));
        }
        if options.orphan
            && let Some(uid) = meta_str(&old, "uid")
        {
            self.orphan_uids.insert(uid.to_string());
        }
        if finalizers(&old).is_empty() {
            return Ok(self.remove(key, None));
        }
        if meta(&old).is_some_and(|m| m.contains_key("deletionTimestamp")) {
            return Ok(old);
        }
        let mut marked = old.clone();
        let generation = meta(&old)
            .and_then(|m| m.get("generation"))
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        let resource_version = self.next_resource_version();
        let metadata = meta_mut(&mut marked);
        metadata.insert("deletionTimestamp".into(), now_timestamp());
        metadata.insert("deletionGracePeriodSeconds".into(), json!(0));
        metadata.insert("generation".into(), json!(generation));
        metadata.insert("resourceVersion".into(), Value::String(resource_version.to_string()));
        self.objects.insert(key.clone(), marked.clone());
        self.emit(key, ChangeType::Modified, Some(old), &marked);
        Ok(marked)
    }

    /// Removes an object at once (its last state is `last`, or the stored one), then collects its dependents.
    fn remove(&mut self, key: &ObjectKey, last: Option<Value>) -> Value {
        let Some(stored) = self.objects.remove(key) else {
            return last.unwrap_or(Value::Null);
        };
        self.encoded.remove(key);
        let mut last = last.unwrap_or_else(|| stored.clone());
        let resource_version = self.next_resource_version();
        meta_mut(&mut last).insert("resourceVersion".into(), Value::String(resource_version.to_string()));
        self.emit(key, ChangeType::Deleted, Some(stored), &last);
        if let Some(uid) = meta_str(&last, "uid") {
            let uid = uid.to_string();
            self.collect_dependents(&uid);
        }
        last
    }

    /// Background cascading deletion: dependents of a removed owner are deleted once none of their owners
    /// exists; with the orphan policy the owner reference is removed from them instead.
    fn collect_dependents(&mut self, owner_uid: &str) {
        let orphan = self.orphan_uids.remove(owner_uid);
        let dependents: Vec<ObjectKey> = self
            .objects
            .iter()
            .filter(|(_, object)| owner_uids(object).iter().any(|uid| uid == owner_uid))
            .map(|(key, _)| key.clone())
            .collect();
        for key in dependents {
            let Some(object) = self.objects.get(&key).cloned() else {
                continue;
            };
            if orphan {
                let mut updated = object.clone();
                if let Some(refs) = meta_mut(&mut updated)
                    .get_mut("ownerReferences")
                    .and_then(Value::as_array_mut)
                {
                    refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
                }
                normalize_metadata(&mut updated);
                let resource_version = self.next_resource_version();
                meta_mut(&mut updated).insert("resourceVersion".into(), Value::String(resource_version.to_string()));
                self.objects.insert(key.clone(), updated.clone());
                self.emit(&key, ChangeType::Modified, Some(object), &updated);
                continue;
            }
            let live_uids: HashSet<&str> = self.objects.values().filter_map(|o| meta_str(o, "uid")).collect();
            if owner_uids(&object).iter().any(|uid| live_uids.contains(uid.as_str())) {
                continue;
            }
            // The dependent exists (checked above) and has no preconditions, so this cannot fail.
            let _ = self.delete(&key, &DeleteOptions::default());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plural_and_kind_guesses() {
        assert_eq!(guess_plural("Widget"), "widgets");
        assert_eq!(guess_plural("Policy"), "policies");
        assert_eq!(guess_plural("Gateway"), "gateways");
        assert_eq!(guess_plural("Ingress"), "ingresses");
        assert_eq!(guess_kind("widgets"), "Widget");
        assert_eq!(guess_kind("policies"), "Policy");
        assert_eq!(guess_kind("ingresses"), "Ingress");
        assert_eq!(guess_kind("classes"), "Class");
    }

    #[test]
    fn uids_are_distinct_and_uuid_shaped() {
        let mut state = State::new(42);
        let a = state.next_uid();
        let b = state.next_uid();
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(a.matches('-').count(), 4);
    }
}
