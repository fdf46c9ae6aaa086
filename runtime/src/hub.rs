//! Lossless conversions between the Kubernetes versions of a kind, through the hub (storage) version.
//!
//! Generated code implements [`Convert`] for every pair of matching types (spoke → hub and hub → spoke), and
//! [`ConvertObject`] for every kind. What one side cannot represent — a property the other version lacks, a
//! value outside the other version's closed enum, a number the other version's narrower type cannot hold, a
//! property whose shape changed — is not dropped: it goes into the **property bag**, and comes back when the
//! object is converted back. Two spokes convert through the hub (`A → hub → B`, in memory, as the webhook does
//! when objects stored at an old version are read at another), and the bag is carried along, so `A → B → A`,
//! `A → hub → B → hub → A` and any other chain give the object back.
//!
//! ## Where the bag lives, and why
//!
//! The bag is the annotation [`PROPERTY_BAG_ANNOTATION`] on the converted object: a JSON object from a
//! JSON pointer into the custom resource (`/spec/enablePodSecurityPolicy`,
//! `/spec/agentPoolProfiles/0/localDNSProfile`) to the value the target version could not hold.
//!
//! - An annotation, not a field: the hub is a served version that users read and write, so a bag field in its
//!   schema would be visible API surface in every type; and the API server only lets a conversion change
//!   `metadata.labels` and `metadata.annotations` (Cluster API keeps its conversion data the same way).
//! - Both directions need it: a `v1beta1` object that sets `enablePodSecurityPolicy` (absent from the hub) is
//!   stored as a hub object with the value in its bag; a hub object read through `v1beta1` carries the ~150
//!   newer properties the older version lacks in the `v1beta1` object's bag, so writing that object back
//!   through `v1beta1` keeps them.
//! - Keys are JSON pointers with the hub's names: a property renamed between a spoke and the hub is keyed by its
//!   hub name, a property the hub lacks by the name of the version that has it, array items by position. So
//!   every version that has a property finds it, whatever it calls the parents: an entry one spoke leaves that
//!   another spoke has (a property both spokes have and the hub lacks) is restored there, and an entry the
//!   target cannot place is carried along unchanged until a version that has the property reads it.
//! - A value the source sets wins over a bag entry for the same place; a bag entry whose parent is gone is
//!   dropped with it.
//! - Restoring is exact ([`fit`]): a bag value is taken into the target as far as the target's type holds it
//!   and writes it back unchanged; the parts of an object it drops or changes (a property it lacks, a double
//!   its float cannot hold) stay in the bag at their own places and are put back into the object when a version
//!   that holds them restores it. The same goes for values converted through JSON (unions, owners,
//!   `operatorSpec`).
//! - Numbers: a `float` and a `double` convert through their shortest decimal representation ([`widen`],
//!   [`narrow`]): `0.1` is `0.1` in both, not `0.10000000149011612`; a double no float has the decimal of is
//!   bagged. Objects are written to JSON by [`ToJson`], which writes a `float` with its own decimal too.
//! - An empty bag leaves no annotation.

use std::collections::BTreeMap;

use crate::json::{FromJson, ToJson};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::kube::ConversionError;
use crate::pointer;

/// The annotation holding the property bag of a converted object.
pub const PROPERTY_BAG_ANNOTATION: &str = "armgen.dev/property-bag";

/// Where a value sits in the custom resource, built on the stack while converting and rendered only when
/// the bag is used. Field segments carry the JSON name on the source side and on the target side (they
/// differ for a renamed property).
#[derive(Debug, Clone, Copy)]
pub enum Path<'a> {
    /// `spec` or `status` (or `spec/template/spec` for a template).
    Root(&'static str),
    Field {
        parent: &'a Path<'a>,
        source: &'static str,
        target: &'static str,
    },
    Index {
        parent: &'a Path<'a>,
        index: usize,
    },
    Key {
        parent: &'a Path<'a>,
        key: &'a str,
    },
}

/// Which side's JSON names a path is rendered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Source,
    Target,
}

impl<'a> Path<'a> {
    /// A field with the same JSON name on both sides.
    pub fn field(&'a self, name: &'static str) -> Path<'a> {
        Path::Field {
            parent: self,
            source: name,
            target: name,
        }
    }

    /// A field renamed between the versions.
    pub fn renamed(&'a self, source: &'static str, target: &'static str) -> Path<'a> {
        Path::Field {
            parent: self,
            source,
            target,
        }
    }

    pub fn index(&'a self, index: usize) -> Path<'a> {
        Path::Index { parent: self, index }
    }

    pub fn key(&'a self, key: &'a str) -> Path<'a> {
        Path::Key { parent: self, key }
    }

    /// This place as the dotted path that errors of spec → ARM conversions name (`spec.agentPoolProfiles[0].name`,
    /// map keys in brackets too): the root as given, then `.field`, `[index]` and `[key]`, with the source's names.
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        self.write_dotted(&mut out);
        out
    }

    fn write_dotted(&self, out: &mut String) {
        match self {
            Path::Root(root) => out.push_str(root),
            Path::Field { parent, source, .. } => {
                parent.write_dotted(out);
                out.push('.');
                out.push_str(source);
            }
            Path::Index { parent, index } => {
                parent.write_dotted(out);
                out.push_str(&format!("[{index}]"));
            }
            Path::Key { parent, key } => {
                parent.write_dotted(out);
                out.push('[');
                out.push_str(key);
                out.push(']');
            }
        }
    }

    /// The JSON pointer of this place, with `side`'s names.
    pub fn pointer(&self, side: Side) -> String {
        let mut out = String::new();
        self.write(side, &mut out);
        out
    }

    fn write(&self, side: Side, out: &mut String) {
        match self {
            Path::Root(root) => {
                out.push('/');
                out.push_str(root);
            }
            Path::Field { parent, source, target } => {
                parent.write(side, out);
                pointer::push(out, if side == Side::Source { source } else { target });
            }
            Path::Index { parent, index } => {
                parent.write(side, out);
                out.push('/');
                out.push_str(&index.to_string());
            }
            Path::Key { parent, key } => {
                parent.write(side, out);
                pointer::push(out, key);
            }
        }
    }
}

/// Which way an object is converted. Bag keys name places with the hub's JSON names (a property renamed
/// between a spoke and the hub is keyed by its hub name, a property the hub lacks by its own name), so that an
/// entry one spoke leaves is found by every other version that has the property, whatever it calls the
/// parents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// From a spoke to the hub: the hub's names are the target's.
    ToHub,
    /// From the hub to a spoke: the hub's names are the source's.
    FromHub,
}

/// The state of one object's conversion: the bag read from the source object and the bag being written for
/// the target.
#[derive(Debug)]
pub struct Conversion {
    input: BTreeMap<String, Value>,
    output: BTreeMap<String, Value>,
    /// The side whose names bag keys use (the hub's).
    names: Side,
}

impl Default for Conversion {
    fn default() -> Self {
        Conversion {
            input: BTreeMap::new(),
            output: BTreeMap::new(),
            names: Side::Target,
        }
    }
}

impl Conversion {
    /// Starts converting an object in `direction`: reads (and removes) its bag annotation. A malformed bag is
    /// an error naming the annotation.
    pub fn begin(metadata: &ObjectMeta, direction: Direction) -> Result<(Conversion, ObjectMeta), ConversionError> {
        let mut metadata = metadata.clone();
        let mut input = BTreeMap::new();
        if let Some(annotations) = metadata.annotations.as_mut()
            && let Some(text) = annotations.remove(PROPERTY_BAG_ANNOTATION)
        {
            input = serde_json::from_str(&text).map_err(|e| ConversionError {
                path: format!("metadata.annotations[{PROPERTY_BAG_ANNOTATION}]"),
                message: format!("not a property bag (a JSON object of JSON pointer → value): {e}"),
            })?;
            if annotations.is_empty() {
                metadata.annotations = None;
            }
        }
        let names = match direction {
            Direction::ToHub => Side::Target,
            Direction::FromHub => Side::Source,
        };
        Ok((
            Conversion {
                input,
                output: BTreeMap::new(),
                names,
            },
            metadata,
        ))
    }

    /// The bag key of `path`.
    fn key(&self, path: &Path<'_>) -> String {
        path.pointer(self.names)
    }

    /// Keeps `value`, which the target version cannot hold, at `path`.
    pub fn stash<T: ToJson + ?Sized>(&mut self, path: &Path<'_>, value: &T) {
        let key = self.key(path);
        self.output.insert(key, value.to_json());
    }

    /// The bag's value for `path`, when the source has nothing there, and taken out of the bag only as far as
    /// the target type holds it exactly ([`fit`]): an entry that does not fit stays in the bag whole, and the
    /// parts of an object that the target type drops or changes stay in the bag at their own places. Entries
    /// below `path` that earlier conversions left (parts cut from the value) are put back into the value first;
    /// those whose value is gone are dropped.
    pub fn restore<T: ToJson + FromJson>(&mut self, path: &Path<'_>) -> Option<T> {
        if self.input.is_empty() {
            return None;
        }
        let key = self.key(path);
        let Some(mut value) = self.input.get(&key).cloned() else {
            let below = self.below(&key);
            for k in below {
                self.input.remove(&k);
            }
            return None;
        };
        let below = self.merge_below(&key, &mut value);
        let (restored, rest) = fit::<T>(value)?;
        self.input.remove(&key);
        for k in below {
            self.input.remove(&k);
        }
        for (pointer, part) in rest {
            self.output.insert(format!("{key}{pointer}"), part);
        }
        Some(restored)
    }

    /// The keys of the input bag strictly below `key`, in order.
    fn below(&self, key: &str) -> Vec<String> {
        let prefix = format!("{key}/");
        self.input
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// Puts the input entries below `key` into `value` where `value` has nothing (a value already there
    /// wins), and returns their keys: all of them are used up (merged, overridden, or orphaned because their
    /// parent is gone).
    fn merge_below(&self, key: &str, value: &mut Value) -> Vec<String> {
        let below = self.below(key);
        for k in &below {
            if let Some(part) = self.input.get(k) {
                insert_absent(value, &k[key.len()..], part);
            }
        }
        below
    }

    /// Drops the bag's entry for `path`: the source set the value, which wins.
    pub fn consumed(&mut self, path: &Path<'_>) {
        if !self.input.is_empty() {
            let key = self.key(path);
            self.input.remove(&key);
        }
    }

    /// A property both versions have, whose values always convert: `convert(value, self, path)` when the
    /// source sets it, else the bag's value.
    pub fn convert<S: ?Sized, T: ToJson + FromJson>(
        &mut self,
        value: Option<&S>,
        path: &Path<'_>,
        convert: impl FnOnce(&S, &mut Conversion, &Path<'_>) -> T,
    ) -> Option<T> {
        match value {
            Some(value) => {
                self.consumed(path);
                Some(convert(value, self, path))
            }
            None => self.restore(path),
        }
    }

    /// A property both versions have with the same type.
    pub fn copy<T: Clone + ToJson + FromJson>(&mut self, value: &Option<T>, path: &Path<'_>) -> Option<T> {
        self.convert(value.as_ref(), path, |value, _, _| value.clone())
    }

    /// A property whose types convert by [`Convert`]: objects, and arrays, maps and boxes of them (the impls
    /// for `Vec`, `BTreeMap` and `Box` below extend the path by index and key).
    pub fn object<S: Convert<T>, T: ToJson + FromJson>(&mut self, value: &Option<S>, path: &Path<'_>) -> Option<T> {
        self.convert(value.as_ref(), path, |value, cx, path| value.convert(cx, path))
    }

    /// A property both versions have, whose values convert when they fit (`convert` returns `None` when not):
    /// a value that does not fit goes to the bag.
    pub fn try_convert<S: ToJson + ?Sized, T: ToJson + FromJson>(
        &mut self,
        value: Option<&S>,
        path: &Path<'_>,
        convert: impl FnOnce(&S) -> Option<T>,
    ) -> Option<T> {
        match value {
            Some(value) => match convert(value) {
                Some(converted) => {
                    self.consumed(path);
                    Some(converted)
                }
                None => {
                    self.stash(path, value);
                    None
                }
            },
            None => self.restore(path),
        }
    }

    /// A property both versions have whose types the versions model differently but whose JSON may still fit
    /// (discriminated unions, free-form JSON, owners, `operatorSpec`): the source's JSON, with the parts earlier
    /// conversions cut from it put back, read as the target type as far as it holds it exactly ([`fit`]); the
    /// parts it drops or changes go to the bag at their own places, and a value that does not fit at all goes
    /// to the bag whole.
    pub fn via_json<S: ToJson, T: ToJson + FromJson>(&mut self, value: &Option<S>, path: &Path<'_>) -> Option<T> {
        let Some(value) = value else { return self.restore(path) };
        let key = self.key(path);
        self.input.remove(&key);
        let mut json = value.to_json();
        for k in self.merge_below(&key, &mut json) {
            self.input.remove(&k);
        }
        match fit::<T>(json.clone()) {
            Some((converted, rest)) => {
                for (pointer, part) in rest {
                    self.output.insert(format!("{key}{pointer}"), part);
                }
                Some(converted)
            }
            None => {
                self.output.insert(key, json);
                None
            }
        }
    }

    /// A string-valued property (an enum or a plain string on either side) converted by its wire value: what
    /// [`Conversion::spelled_with`] does, through the types' [`Wire`] impls.
    pub fn spelled<S: Wire, T: Wire + ToJson + FromJson>(&mut self, value: &Option<S>, path: &Path<'_>) -> Option<T> {
        self.spelled_with(value.as_ref().map(Wire::wire), path, T::from_wire, T::wire)
    }

    /// A string-valued property (an enum or a plain string on either side), converted by its wire value.
    /// `convert` returns `None` when the target cannot hold the value (a closed enum without it): the value is
    /// bagged. ARM compares enum values case-insensitively, so the target may write the value with another
    /// spelling (`None` → `none`): then the spelling is bagged too. An earlier trip's spelling of the same value
    /// is taken back from the bag and is the one kept, so the value reads back exactly as written in every
    /// version that can write it, however many versions that cannot lie between.
    pub fn spelled_with<T: ToJson + FromJson>(
        &mut self,
        value: Option<&str>,
        path: &Path<'_>,
        convert: impl Fn(&str) -> Option<T>,
        spelling: impl Fn(&T) -> &str,
    ) -> Option<T> {
        let Some(value) = value else { return self.restore(path) };
        let key = self.key(path);
        let earlier = match self.input.remove(&key) {
            Some(Value::String(earlier)) if earlier.eq_ignore_ascii_case(value) => Some(earlier),
            _ => None,
        };
        let truth = earlier.as_deref().unwrap_or(value);
        let Some(converted) = convert(truth) else {
            self.output.insert(key, Value::String(truth.to_string()));
            return None;
        };
        if spelling(&converted) != truth {
            self.output.insert(key, Value::String(truth.to_string()));
        }
        Some(converted)
    }

    /// A property the target version cannot hold: its value (when set) goes to the bag.
    pub fn keep<S: ToJson>(&mut self, value: &Option<S>, path: &Path<'_>) {
        if let Some(value) = value {
            self.stash(path, value);
        }
    }

    /// Whether nothing was stashed and nothing is left over.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.output.is_empty()
    }

    /// Finishes the conversion: entries left in the input bag are carried along (a version further on may
    /// have the property), and the bag (if not empty) is written to the target's `metadata`.
    pub fn finish(self, mut metadata: ObjectMeta) -> Result<ObjectMeta, ConversionError> {
        let mut bag = self.input;
        bag.extend(self.output);
        if bag.is_empty() {
            return Ok(metadata);
        }
        let text = serde_json::to_string(&bag).map_err(|e| ConversionError {
            path: format!("metadata.annotations[{PROPERTY_BAG_ANNOTATION}]"),
            message: e.to_string(),
        })?;
        metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(PROPERTY_BAG_ANNOTATION.to_string(), text);
        Ok(metadata)
    }
}

/// Inserts `part` into `value` at the relative JSON pointer `pointer` when its parent exists and nothing is
/// there yet; otherwise leaves `value` as it is.
fn insert_absent(value: &mut Value, pointer: &str, part: &Value) {
    let Some((parent, last)) = crate::pointer::split_last(pointer) else {
        return;
    };
    let Some(Value::Object(map)) = value.pointer_mut(parent) else {
        return;
    };
    map.entry(last.into_owned()).or_insert_with(|| part.clone());
}

/// Reads `value` as a `T`, exactly: what `T` writes back must be `value`. The parts of objects that `T` drops
/// (properties it lacks) or writes differently (a number it cannot hold, a spelling it changes, a shape it
/// lacks) are cut out and returned with their relative JSON pointers, and the rest is read again; an array is
/// cut whole when an item does not fit (items keep their positions). `None` when `value` as a whole does not
/// fit (a scalar that differs, a required property cut, a property `T` adds).
pub fn fit<T: ToJson + FromJson>(mut value: Value) -> Option<(T, Vec<(String, Value)>)> {
    let mut cut_out = Vec::new();
    // Every round cuts at least one part out of a finite value, so this ends; the bound keeps a pathological
    // value from costing more than a few rounds of reading.
    for _ in 0..32 {
        let parsed: T = crate::json::read(&value).ok()?;
        let written = parsed.to_json();
        let mut cuts = Vec::new();
        if !compare(&value, &written, String::new(), &mut cuts) {
            return None;
        }
        if cuts.is_empty() {
            return Some((parsed, cut_out));
        }
        for pointer in cuts {
            let part = {
                let (parent, last) = crate::pointer::split_last(&pointer)?;
                match value.pointer_mut(parent) {
                    Some(Value::Object(map)) => map.remove(last.as_ref()),
                    _ => None,
                }
            };
            if let Some(part) = part {
                cut_out.push((pointer, part));
            }
        }
    }
    None
}

/// Compares what was read (`read`) with what a type wrote back (`written`): `false` when `read` itself must
/// go; otherwise the pointers of the object properties that must be cut are pushed to `cuts`.
fn compare(read: &Value, written: &Value, at: String, cuts: &mut Vec<String>) -> bool {
    match (read, written) {
        (Value::Object(r), Value::Object(w)) => {
            if w.keys().any(|k| !r.contains_key(k)) {
                return false;
            }
            for (k, v) in r {
                let pointer = crate::pointer::child(&at, k);
                let kept = w.get(k).is_some_and(|w| compare(v, w, pointer.clone(), cuts));
                if !kept {
                    cuts.push(pointer);
                }
            }
            true
        }
        (Value::Array(r), Value::Array(w)) if r.len() == w.len() => {
            let mut inner = Vec::new();
            for (i, (r, w)) in r.iter().zip(w).enumerate() {
                if !compare(r, w, format!("{at}/{i}"), &mut inner) {
                    return false;
                }
            }
            cuts.extend(inner);
            true
        }
        (Value::Number(r), Value::Number(w)) => same_number(r, w),
        _ => read == written,
    }
}

/// Whether two JSON numbers are the same number (`1` and `1.0` are; an integer a double cannot hold exactly is
/// not the double).
fn same_number(a: &serde_json::Number, b: &serde_json::Number) -> bool {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return x == y;
    }
    let exact = |n: &serde_json::Number, f: f64| match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i as f64 == f && f as i64 == i,
        (_, Some(u)) => u as f64 == f && f as u64 == u,
        _ => true,
    };
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y && exact(a, x) && exact(b, y),
        _ => false,
    }
}

/// A conversion of one value between matching types of two versions (generated for every pair).
pub trait Convert<T> {
    fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> T;
}

/// Arrays convert item by item, each at its index.
impl<S: Convert<T>, T> Convert<Vec<T>> for Vec<S> {
    fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> Vec<T> {
        self.iter()
            .enumerate()
            .map(|(i, item)| item.convert(cx, &path.index(i)))
            .collect()
    }
}

/// Maps convert value by value, each at its key.
impl<S: Convert<T>, T> Convert<BTreeMap<String, T>> for BTreeMap<String, S> {
    fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> BTreeMap<String, T> {
        self.iter()
            .map(|(key, item)| (key.clone(), item.convert(cx, &path.key(key))))
            .collect()
    }
}

/// A boxed value (a recursive type) converts as the value.
impl<S: Convert<T>, T> Convert<Box<T>> for Box<S> {
    fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> Box<T> {
        Box::new(<S as Convert<T>>::convert(self, cx, path))
    }
}

/// A value written as a string on the wire: plain strings and the generated enums (`open_enum!` and
/// `closed_enum!` implement it), so that a string-valued property converts between any two of them by its wire
/// value ([`Conversion::spelled`]).
pub trait Wire: Sized {
    /// The value on the wire.
    fn wire(&self) -> &str;
    /// The value for `wire`, when this type can hold it (a closed enum holds only its values).
    fn from_wire(wire: &str) -> Option<Self>;
}

impl Wire for String {
    fn wire(&self) -> &str {
        self
    }
    fn from_wire(wire: &str) -> Option<Self> {
        Some(wire.to_string())
    }
}

/// A conversion of a whole custom resource between two versions of its kind (generated for every kind).
pub trait ConvertObject<T> {
    fn convert_object(&self) -> Result<T, ConversionError>;
}

/// `value` through JSON into `T`, exactly ([`fit`] with nothing cut): for items of arrays and maps whose types
/// the versions model differently but whose JSON may still fit. `None` when it does not fit.
pub fn via_json<S: ToJson + ?Sized, T: ToJson + FromJson>(value: &S) -> Option<T> {
    let (converted, rest) = fit(value.to_json())?;
    rest.is_empty().then_some(converted)
}

/// A `float` as the `double` with the same shortest decimal representation: `0.1f32` is `0.1`, not
/// `0.10000000149011612` (the nearest double to the float's binary value), so the JSON stays the same.
pub fn widen(value: f32) -> f64 {
    value.to_string().parse().unwrap_or(f64::from(value))
}

/// A `double` as a `float` when one has the same shortest decimal representation ([`widen`] gives `value`
/// back): `0.1` is `0.1f32`; `0.123456789` is `None`.
pub fn narrow(value: f64) -> Option<f32> {
    let nearest = value as f32;
    if widen(nearest) == value {
        return Some(nearest);
    }
    let shortest: f32 = value.to_string().parse().ok()?;
    (widen(shortest) == value).then_some(shortest)
}

/// Reads a custom resource of one served version (JSON) into its Rust type; errors name the field.
pub fn decode<T: FromJson>(object: serde_json::Value) -> Result<T, ConversionError> {
    crate::json::read(&object).map_err(|e| ConversionError {
        path: e.path,
        message: e.message,
    })
}

/// Writes a converted custom resource as JSON (a `Result`, as the conversion functions that end in it are).
pub fn encode<T: ToJson>(object: &T) -> Result<serde_json::Value, ConversionError> {
    Ok(object.to_json())
}

/// The error for a version a kind is not served in.
pub fn not_served(kind: &str, version: &str) -> ConversionError {
    ConversionError {
        path: "apiVersion".into(),
        message: format!("{kind} is not served in version {version}"),
    }
}

/// The error for converting a kind that the hub (storage) version lacks: conversions go through the hub, so
/// the kind's versions (`served`) have none between them.
pub fn not_in_hub(kind: &str, hub: &str, served: &[&str]) -> ConversionError {
    ConversionError {
        path: "kind".into(),
        message: format!(
            "{kind} has no conversions between its versions ({}): conversions go through the hub (storage) version \
             {hub}, which does not have {kind}",
            served.join(", ")
        ),
    }
}

/// The `apiVersion` and `kind` of a custom resource, checked against the API group expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeMeta {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl TypeMeta {
    /// Reads `apiVersion` and `kind` of `object`; an error when they are missing or the group is not `group`.
    pub fn of(object: &serde_json::Value, group: &str) -> Result<TypeMeta, ConversionError> {
        let field = |name: &str| {
            object
                .get(name)
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| ConversionError {
                    path: name.to_string(),
                    message: "missing (a custom resource needs apiVersion and kind)".into(),
                })
        };
        let mut meta = TypeMeta::of_api_version(field("apiVersion")?, group)?;
        meta.kind = field("kind")?.to_string();
        Ok(meta)
    }

    /// Splits `group/version`; an error when the group is not `group`.
    pub fn of_api_version(api_version: &str, group: &str) -> Result<TypeMeta, ConversionError> {
        match api_version.split_once('/') {
            Some((g, v)) if g == group && !v.is_empty() => Ok(TypeMeta {
                group: g.to_string(),
                version: v.to_string(),
                kind: String::new(),
            }),
            _ => Err(ConversionError {
                path: "apiVersion".into(),
                message: format!("{api_version:?} is not a version of {group} (expected {group}/<version>)"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(bag: Option<&str>) -> ObjectMeta {
        ObjectMeta {
            name: Some("x".into()),
            annotations: bag.map(|b| [(PROPERTY_BAG_ANNOTATION.to_string(), b.to_string())].into()),
            ..Default::default()
        }
    }

    #[test]
    fn paths_render_as_json_pointers_with_each_sides_names() {
        let root = Path::Root("spec");
        let f = root.renamed("oldName", "newName");
        let i = f.index(3);
        let k = i.key("a/b~c");
        assert_eq!(k.pointer(Side::Source), "/spec/oldName/3/a~1b~0c");
        assert_eq!(k.pointer(Side::Target), "/spec/newName/3/a~1b~0c");
    }

    #[test]
    fn stash_then_restore_round_trips_through_the_annotation() {
        let (mut cx, m) = Conversion::begin(&meta(None), Direction::ToHub).unwrap();
        let root = Path::Root("spec");
        cx.stash(&root.field("gone"), &true);
        let m = cx.finish(m).unwrap();
        let ann = m.annotations.as_ref().unwrap();
        assert_eq!(ann[PROPERTY_BAG_ANNOTATION], r#"{"/spec/gone":true}"#);

        let (mut cx, m) = Conversion::begin(&m, Direction::ToHub).unwrap();
        assert_eq!(
            m.annotations, None,
            "the bag annotation is removed, and an emptied map with it"
        );
        assert_eq!(cx.restore::<bool>(&root.field("gone")), Some(true));
        assert_eq!(cx.restore::<bool>(&root.field("gone")), None, "consumed");
        assert!(cx.is_empty());
        assert_eq!(cx.finish(m.clone()).unwrap(), m);
    }

    #[test]
    fn entries_that_do_not_fit_or_are_not_placed_are_carried_along() {
        let (mut cx, m) =
            Conversion::begin(&meta(Some(r#"{"/spec/a":"text","/spec/other":1}"#)), Direction::ToHub).unwrap();
        let root = Path::Root("spec");
        assert_eq!(
            cx.restore::<i64>(&root.field("a")),
            None,
            "a string does not fit an integer"
        );
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/a":"text","/spec/other":1}"#
        );
    }

    #[test]
    fn a_value_the_source_sets_wins_over_the_bag() {
        let (mut cx, m) = Conversion::begin(&meta(Some(r#"{"/spec/a":1}"#)), Direction::ToHub).unwrap();
        cx.consumed(&Path::Root("spec").field("a"));
        assert!(cx.finish(m).unwrap().annotations.is_none());
    }

    #[test]
    fn a_spelling_the_target_changes_comes_back() {
        // The target knows the value as `none`; the source wrote `None`.
        let lower = |v: &str| Some(v.to_ascii_lowercase());
        let root = Path::Root("spec");
        let (mut cx, m) = Conversion::begin(&meta(None), Direction::ToHub).unwrap();
        assert_eq!(
            cx.spelled_with(Some("None"), &root.field("o"), lower, String::as_str),
            Some("none".into())
        );
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.as_ref().unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/o":"None"}"#
        );
        // Back: the earlier spelling wins over the target's own, and is not bagged again.
        let keep = |v: &str| Some(v.to_string());
        let (mut cx, m) = Conversion::begin(&m, Direction::ToHub).unwrap();
        assert_eq!(
            cx.spelled_with(Some("none"), &root.field("o"), keep, String::as_str),
            Some("None".into())
        );
        assert!(cx.finish(m).unwrap().annotations.is_none());
        // A value the target cannot hold is bagged as written.
        let (mut cx, m) = Conversion::begin(&meta(None), Direction::ToHub).unwrap();
        assert_eq!(
            cx.spelled_with(Some("x"), &root.field("o"), |_| None::<String>, String::as_str),
            None
        );
        assert_eq!(
            cx.finish(m).unwrap().annotations.unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/o":"x"}"#
        );
    }

    #[test]
    fn other_annotations_are_kept() {
        let mut m = meta(Some("{}"));
        m.annotations.as_mut().unwrap().insert("keep".into(), "me".into());
        let (cx, m) = Conversion::begin(&m, Direction::ToHub).unwrap();
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.unwrap().into_iter().collect::<Vec<_>>(),
            vec![("keep".into(), "me".into())]
        );
    }

    #[test]
    fn a_malformed_bag_is_an_error_naming_the_annotation() {
        let e = Conversion::begin(&meta(Some("[1]")), Direction::ToHub).unwrap_err();
        assert!(e.path.contains(PROPERTY_BAG_ANNOTATION), "{e}");
    }

    #[derive(Debug, PartialEq, Default)]
    struct Small {
        text: Option<String>,
        price: Option<f32>,
        items: Option<Vec<Small>>,
    }
    crate::json_object! { Small { "text" => text, "price" => price, "items" => items } }

    #[test]
    fn floats_and_doubles_convert_through_their_shortest_decimal() {
        assert_eq!(widen(0.1), 0.1);
        assert_eq!(widen(-1.0), -1.0);
        assert_eq!(narrow(0.1), Some(0.1f32));
        assert_eq!(narrow(-0.0).map(f32::to_bits), Some((-0.0f32).to_bits()));
        assert_eq!(narrow(0.123456789012), None, "no float has this decimal");
        assert_eq!(narrow(1e300), None, "beyond the float range");
        assert_eq!(narrow(f64::from(0.1f32)), None, "0.10000000149011612 is not 0.1");
        assert_eq!(0.1f32.to_json(), serde_json::json!(0.1));
        assert_eq!(encode(&0.1f32).unwrap(), serde_json::json!(0.1));
    }

    proptest::proptest! {
        #[test]
        fn every_float_narrows_back_from_its_widening(f in proptest::num::f32::ANY) {
            proptest::prop_assume!(f.is_finite());
            proptest::prop_assert_eq!(narrow(widen(f)).map(f32::to_bits), Some(f.to_bits()));
        }

        #[test]
        fn a_narrowed_double_widens_back_to_itself(d in proptest::num::f64::ANY) {
            if let Some(f) = narrow(d) {
                proptest::prop_assert_eq!(widen(f).to_bits(), d.to_bits());
            }
        }
    }

    #[test]
    fn fit_keeps_what_the_type_holds_and_cuts_out_the_rest() {
        use serde_json::json;
        let value = json!({"text": "a", "author": "b", "price": 0.1, "items": [{"text": "c", "x": 1}]});
        let (small, rest) = fit::<Small>(value).unwrap();
        assert_eq!(small.text.as_deref(), Some("a"));
        assert_eq!(small.price, Some(0.1));
        assert_eq!(small.items.unwrap()[0].text.as_deref(), Some("c"));
        assert_eq!(
            rest,
            vec![
                ("/author".to_string(), json!("b")),
                ("/items/0/x".to_string(), json!(1))
            ],
            "dropped properties, also inside array items"
        );
        let (small, rest) = fit::<Small>(json!({"text": "a", "price": 0.123456789012})).unwrap();
        assert_eq!(
            (small.price, rest),
            (None, vec![("/price".to_string(), json!(0.123456789012))])
        );
        assert!(fit::<Small>(json!("text")).is_none(), "a shape the type lacks");
        assert!(fit::<f32>(json!(0.123456789012)).is_none(), "a scalar the type changes");
        assert_eq!(
            fit::<f64>(json!(1)).map(|(f, _)| f),
            Some(1.0),
            "1 and 1.0 are the same number"
        );
        assert!(
            fit::<f64>(json!(9007199254740993u64)).is_none(),
            "an integer no double holds"
        );
    }

    #[test]
    fn restoring_takes_what_fits_and_leaves_the_rest_at_its_place() {
        use serde_json::json;
        let bag = r#"{"/spec/notes":{"text":"a","author":"b"},"/spec/gone/x":1}"#;
        let (mut cx, m) = Conversion::begin(&meta(Some(bag)), Direction::ToHub).unwrap();
        let root = Path::Root("spec");
        let notes: Option<Small> = cx.restore(&root.field("notes"));
        assert_eq!(notes.unwrap().text.as_deref(), Some("a"));
        assert_eq!(
            cx.restore::<Small>(&root.field("gone")),
            None,
            "no value there: its parts go"
        );
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.as_ref().unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/notes/author":"b"}"#
        );
        // Back in a version that has the whole value: the part comes back into it.
        let (mut cx, m) = Conversion::begin(&m, Direction::FromHub).unwrap();
        cx.stash(&root.field("notes"), &json!({"text": "a"}));
        let m = cx.finish(m).unwrap();
        let (mut cx, _) = Conversion::begin(&m, Direction::ToHub).unwrap();
        let notes: Option<serde_json::Value> = cx.restore(&root.field("notes"));
        assert_eq!(notes, Some(json!({"text": "a", "author": "b"})));
        assert!(cx.is_empty());
    }

    #[test]
    fn a_value_the_source_sets_wins_over_parts_in_the_bag() {
        use serde_json::json;
        let bag = r#"{"/spec/notes":{"text":"old"},"/spec/notes/text":"older","/spec/notes/author":"b"}"#;
        let (mut cx, _) = Conversion::begin(&meta(Some(bag)), Direction::ToHub).unwrap();
        let notes: Option<serde_json::Value> = cx.restore(&Path::Root("spec").field("notes"));
        assert_eq!(notes, Some(json!({"text": "old", "author": "b"})));
        assert!(cx.is_empty());
    }

    #[test]
    fn keys_use_the_hubs_names_in_both_directions() {
        // The spoke calls `irrigation` `watering`: its own property below it is keyed under the hub's name.
        let root = Path::Root("spec");
        let (mut cx, m) = Conversion::begin(&meta(None), Direction::ToHub).unwrap();
        let spoke_to_hub = root.renamed("watering", "irrigation");
        cx.keep(&Some(true), &spoke_to_hub.field("nightOnly"));
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.as_ref().unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/irrigation/nightOnly":true}"#
        );
        let (mut cx, _) = Conversion::begin(&m, Direction::FromHub).unwrap();
        let hub_to_spoke = root.renamed("irrigation", "watering");
        assert_eq!(cx.restore::<bool>(&hub_to_spoke.field("nightOnly")), Some(true));
    }

    #[test]
    fn a_spelling_survives_a_version_that_cannot_write_it() {
        // A writes `None`; B (through the hub) and the hub only know `none`; A gets `None` back.
        let lower = |v: &str| Some(v.to_ascii_lowercase());
        let keep = |v: &str| Some(v.to_string());
        let path = Path::Root("spec");
        let path = path.field("o");
        let (mut cx, m) = Conversion::begin(&meta(None), Direction::ToHub).unwrap();
        assert_eq!(
            cx.spelled_with(Some("None"), &path, lower, String::as_str).as_deref(),
            Some("none")
        );
        let m = cx.finish(m).unwrap();
        for direction in [Direction::FromHub, Direction::ToHub] {
            let (mut cx, next) = Conversion::begin(&m, direction).unwrap();
            assert_eq!(
                cx.spelled_with(Some("none"), &path, lower, String::as_str).as_deref(),
                Some("none")
            );
            let next = cx.finish(next).unwrap();
            assert_eq!(
                next.annotations.as_ref().unwrap()[PROPERTY_BAG_ANNOTATION],
                r#"{"/spec/o":"None"}"#
            );
        }
        let (mut cx, m) = Conversion::begin(&m, Direction::FromHub).unwrap();
        assert_eq!(
            cx.spelled_with(Some("none"), &path, keep, String::as_str).as_deref(),
            Some("None")
        );
        assert!(cx.finish(m).unwrap().annotations.is_none());
    }

    #[test]
    fn a_kind_the_hub_lacks_is_named_with_where_it_is_served() {
        let e = not_in_hub("Gadget", "v2", &["v1", "v3alpha1"]);
        assert_eq!(e.path, "kind");
        assert_eq!(
            e.message,
            "Gadget has no conversions between its versions (v1, v3alpha1): conversions go through the hub (storage) \
             version v2, which does not have Gadget"
        );
    }
}
