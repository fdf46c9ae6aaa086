//! Change detection: compares a desired spec with the actual state of the Azure resource (the ARM GET body
//! converted to spec shape with `KindSpec::from_arm`) and lists the differences, so that a resource already in
//! sync costs one GET and no PUT (DESIGN §4).
//!
//! Every generated spec type implements [`DiffWith`]. The semantics:
//!
//! - a property left unset in the desired spec is not compared: the service may default it ([`Option`]);
//! - read-only properties are not in the spec and so never compared; secrets cannot be read back and are never
//!   compared ([`SecretReference`] compares as equal; the generated code skips secret fields altogether);
//! - enums compare case-insensitively by their wire value, as ARM does ([`diff_str_ci`]); ARM resource IDs
//!   ([`ResourceReference::arm_id`]) too; other strings exactly;
//! - arrays of objects with identifiers (`x-ms-identifiers`, or the config's `identifiers` override) are matched
//!   by those keys, whatever their order ([`diff_identified`], path segment `[name=pool1]`); other arrays by
//!   position (`[0]`);
//! - maps are compared per key present in the desired map (`[key]`), the key matched exactly, else
//!   case-insensitively (ARM treats tag names case-insensitively);
//! - floating-point values compare exactly as serialized: equal bits (JSON numbers from the wire carry no NaN);
//! - an empty desired collection (`[]`, `{}`) equals an absent actual one: ARM leaves empty collections out of
//!   GET bodies.
//!
//! A path ([`Path`]) is a chain of stack frames, rendered to a string only when a difference is recorded, and
//! values are rendered as JSON text only then too: comparing two equal specs allocates nothing.
//!
//! References to other custom resources (`ResourceReference {group, kind, name}` without `armId`) cannot be
//! compared with the ARM ID of the actual state: resolve them first. The reconciler compares
//! `KindSpec::from_arm(&spec.to_arm(&resolver)?)` — every reference an `armId`, empty collections the config
//! omits left out, as on the wire — with the actual state. An unresolved reference always differs (its desired
//! value is shown as the reference), so forgetting to resolve costs a PUT, never a missed change.
//!
//! [`needs_put`] and [`update_known_differences`] keep `status.operatorStatus.knownDifferences`: the
//! differences that remain right after a successful PUT (values the service normalizes or ignores) do not cause
//! another PUT, while any other difference — a new user change, or drift in Azure — does.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::json::ToJson;
use crate::kube::{KnownDifference, OperatorStatus, ResourceReference, SecretReference};
use serde_json::Value;

/// The value of an identifier key of an array item, borrowed from the item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// A string or enum value; matched case-insensitively (ARM names are).
    Str(&'a str),
    Int(i64),
    Bool(bool),
    /// The item does not set the key: it is matched by position instead.
    Absent,
}

impl<'a> Key<'a> {
    /// The key of an optional string (or enum wire value).
    pub fn of_str(value: Option<&'a str>) -> Self {
        value.map_or(Key::Absent, Key::Str)
    }

    /// The key of an optional integer.
    pub fn of_int(value: Option<i64>) -> Self {
        value.map_or(Key::Absent, Key::Int)
    }

    /// The key of an optional boolean.
    pub fn of_bool(value: Option<bool>) -> Self {
        value.map_or(Key::Absent, Key::Bool)
    }

    /// Whether two keys identify the same item (`Absent` matches nothing).
    pub fn matches(&self, other: &Key<'_>) -> bool {
        match (self, other) {
            (Key::Str(a), Key::Str(b)) => a.eq_ignore_ascii_case(b),
            (Key::Int(a), Key::Int(b)) => a == b,
            (Key::Bool(a), Key::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Key::Str(s) => f.write_str(s),
            Key::Int(i) => write!(f, "{i}"),
            Key::Bool(b) => write!(f, "{b}"),
            Key::Absent => Ok(()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Segment<'a> {
    Root(&'a str),
    Field(&'a str),
    Index(usize),
    Key(&'a str),
    Identified { names: &'a [&'a str], keys: &'a [Key<'a>] },
}

/// A field path, built on the stack while comparing (each frame borrows its parent) and rendered only when a
/// difference is recorded: `spec.agentPoolProfiles[name=nodepool1].count`, `spec.tags[env]`,
/// `spec.networkProfile.podCidrs[0]`.
#[derive(Debug, Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

impl<'a> Path<'a> {
    /// The root, e.g. `spec`.
    pub const fn root(name: &'a str) -> Self {
        Path {
            parent: None,
            segment: Segment::Root(name),
        }
    }

    /// A field (JSON name) of the object at this path.
    pub fn field<'b>(&'b self, name: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Field(name),
        }
    }

    /// An item of the array at this path, by position.
    pub fn index(&self, index: usize) -> Path<'_> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    /// A value of the map at this path.
    pub fn key<'b>(&'b self, key: &'b str) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }

    /// An item of the array at this path, by its identifiers (`names[i]` = `keys[i]`).
    pub fn identified<'b>(&'b self, names: &'b [&'b str], keys: &'b [Key<'b>]) -> Path<'b> {
        Path {
            parent: Some(self),
            segment: Segment::Identified { names, keys },
        }
    }

    fn write(&self, out: &mut impl fmt::Write) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.write(out)?;
        }
        match self.segment {
            Segment::Root(name) => out.write_str(name),
            Segment::Field(name) if self.parent.is_none() => out.write_str(name),
            Segment::Field(name) => write!(out, ".{name}"),
            Segment::Index(i) => write!(out, "[{i}]"),
            Segment::Key(k) => write!(out, "[{k}]"),
            Segment::Identified { names, keys } => {
                out.write_char('[')?;
                for (i, (n, k)) in names.iter().zip(keys).enumerate() {
                    if i > 0 {
                        out.write_char(',')?;
                    }
                    write!(out, "{n}={k}")?;
                }
                out.write_char(']')
            }
        }
    }
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}

/// One difference: where, and the desired and actual values as JSON text (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Difference {
    /// The field path, e.g. `spec.agentPoolProfiles[name=nodepool1].count`.
    pub path: String,
    /// The desired value as JSON, `None` when the desired state lacks it (an extra item in Azure).
    pub desired: Option<String>,
    /// The actual value as JSON, `None` when Azure does not return it.
    pub actual: Option<String>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(absent)".into());
        write!(
            f,
            "{}: desired {}, actual {}",
            self.path,
            show(&self.desired),
            show(&self.actual)
        )
    }
}

impl From<&Difference> for KnownDifference {
    fn from(d: &Difference) -> Self {
        KnownDifference {
            path: d.path.clone(),
            desired: d.desired.clone(),
            actual: d.actual.clone(),
        }
    }
}

/// The differences found, in the order of the fields compared. Empty (and unallocated) when there is none.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Differences {
    items: Vec<Difference>,
}

impl Differences {
    pub const fn new() -> Self {
        Differences { items: Vec::new() }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Difference> {
        self.items.iter()
    }

    pub fn as_slice(&self) -> &[Difference] {
        &self.items
    }

    pub fn into_vec(self) -> Vec<Difference> {
        self.items
    }

    /// Records a difference at `path`; values are rendered as JSON text (`None`: absent).
    pub fn record<D: ToJson + ?Sized, A: ToJson + ?Sized>(
        &mut self,
        path: &Path<'_>,
        desired: Option<&D>,
        actual: Option<&A>,
    ) {
        self.record_json(path, desired.map(ToJson::to_json), actual.map(ToJson::to_json));
    }

    /// [`Differences::record`] with the values written already (one function for every type).
    fn record_json(&mut self, path: &Path<'_>, desired: Option<Value>, actual: Option<Value>) {
        self.items.push(Difference {
            path: path.to_string(),
            desired: desired.map(|value| value.to_string()),
            actual: actual.map(|value| value.to_string()),
        });
    }
}

impl<'a> IntoIterator for &'a Differences {
    type Item = &'a Difference;
    type IntoIter = std::slice::Iter<'a, Difference>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl IntoIterator for Differences {
    type Item = Difference;
    type IntoIter = std::vec::IntoIter<Difference>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// Compares a desired value with the actual one, recording each difference into `out`.
pub trait DiffWith: ToJson {
    /// Compares `self` (desired) with `actual`; `path` names `self`.
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences);

    /// Whether this desired value differs from an absent actual value. `true` but for empty collections, which
    /// ARM leaves out of GET bodies.
    fn differs_from_absent(&self) -> bool {
        true
    }
}

/// The differences between a desired spec and the actual one (both in spec shape), paths starting at `spec`.
pub fn diff<T: DiffWith + ?Sized>(desired: &T, actual: &T) -> Differences {
    let mut out = Differences::new();
    desired.diff_with(actual, &Path::root("spec"), &mut out);
    out
}

/// Compares two strings case-insensitively (ASCII, as ARM does for enum values and IDs).
pub fn diff_str_ci<T: ToJson + ?Sized>(
    desired: &str,
    actual: &str,
    values: (&T, &T),
    path: &Path<'_>,
    out: &mut Differences,
) {
    if !desired.eq_ignore_ascii_case(actual) {
        out.record(path, Some(values.0), Some(values.1));
    }
}

/// Compares by `==`; for values whose equality is exact (integers, booleans, discriminated unions).
pub fn diff_eq<T: PartialEq + ToJson + ?Sized>(desired: &T, actual: &T, path: &Path<'_>, out: &mut Differences) {
    if desired != actual {
        out.record(path, Some(desired), Some(actual));
    }
}

/// The value a sibling property will have once the desired state is applied: the desired one when set, else
/// the actual one. The generated ignore rules (`diffIgnoredWhen` in `azure-arm.yaml`) test it.
pub fn effective<'a, T>(desired: &'a Option<T>, actual: &'a Option<T>) -> Option<&'a T> {
    desired.as_ref().or(actual.as_ref())
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl DiffWith for $t {
            fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
                diff_eq(self, actual, path, out);
            }
        }
    )*};
}

exact!(bool, i32, i64, u32, u64, String);

impl DiffWith for f32 {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        if self.to_bits() != actual.to_bits() {
            out.record(path, Some(self), Some(actual));
        }
    }
}

impl DiffWith for f64 {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        if self.to_bits() != actual.to_bits() {
            out.record(path, Some(self), Some(actual));
        }
    }
}

impl<T: DiffWith> DiffWith for Option<T> {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        match (self, actual) {
            (None, _) => {}
            (Some(d), Some(a)) => d.diff_with(a, path, out),
            (Some(d), None) => {
                if d.differs_from_absent() {
                    out.record::<T, T>(path, Some(d), None);
                }
            }
        }
    }

    fn differs_from_absent(&self) -> bool {
        self.as_ref().is_some_and(T::differs_from_absent)
    }
}

impl<T: DiffWith> DiffWith for Box<T> {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        (**self).diff_with(actual, path, out);
    }

    fn differs_from_absent(&self) -> bool {
        (**self).differs_from_absent()
    }
}

/// By position: item `i` with item `i`; an item only one side has is a difference.
impl<T: DiffWith> DiffWith for Vec<T> {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        for i in 0..self.len().max(actual.len()) {
            match (self.get(i), actual.get(i)) {
                (Some(d), Some(a)) => d.diff_with(a, &path.index(i), out),
                (d, a) => out.record(&path.index(i), d, a),
            }
        }
    }

    fn differs_from_absent(&self) -> bool {
        !self.is_empty()
    }
}

/// Per key of the desired map; keys only the actual map has are not compared.
impl<T: DiffWith> DiffWith for BTreeMap<String, T> {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        for (key, d) in self {
            let found = actual
                .get(key)
                .or_else(|| actual.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v));
            match found {
                Some(a) => d.diff_with(a, &path.key(key), out),
                None if d.differs_from_absent() => out.record::<T, T>(&path.key(key), Some(d), None),
                None => {}
            }
        }
    }

    fn differs_from_absent(&self) -> bool {
        !self.is_empty()
    }
}

/// Free-form JSON: objects per desired member, arrays by position, scalars exactly (numbers as serialized).
impl DiffWith for serde_json::Value {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        use serde_json::Value;
        match (self, actual) {
            (Value::Object(d), Value::Object(a)) => {
                for (key, dv) in d {
                    match a.get(key) {
                        Some(av) => dv.diff_with(av, &path.field(key), out),
                        None if dv.differs_from_absent() => {
                            out.record::<Value, Value>(&path.field(key), Some(dv), None)
                        }
                        None => {}
                    }
                }
            }
            (Value::Array(d), Value::Array(a)) => {
                for i in 0..d.len().max(a.len()) {
                    match (d.get(i), a.get(i)) {
                        (Some(dv), Some(av)) => dv.diff_with(av, &path.index(i), out),
                        (dv, av) => out.record(&path.index(i), dv, av),
                    }
                }
            }
            (d, a) => diff_eq(d, a, path, out),
        }
    }

    fn differs_from_absent(&self) -> bool {
        match self {
            serde_json::Value::Array(a) => !a.is_empty(),
            serde_json::Value::Object(o) => !o.is_empty(),
            _ => true,
        }
    }
}

/// Never compared: a secret cannot be read back from Azure.
impl DiffWith for SecretReference {
    fn diff_with(&self, _actual: &Self, _path: &Path<'_>, _out: &mut Differences) {}

    fn differs_from_absent(&self) -> bool {
        false
    }
}

/// ARM IDs compare case-insensitively. A desired reference without `armId` (another custom resource, not
/// resolved) always differs: resolve references before comparing (see the module documentation).
impl DiffWith for ResourceReference {
    fn diff_with(&self, actual: &Self, path: &Path<'_>, out: &mut Differences) {
        match (&self.arm_id, &actual.arm_id) {
            (Some(d), Some(a)) if d.eq_ignore_ascii_case(a) => {}
            (Some(d), a) => out.record(path, Some(d), a.as_ref()),
            (None, a) => out.record(path, Some(self), a.as_ref()),
        }
    }
}

/// Arrays whose items are identified by keys (`x-ms-identifiers`): each desired item is compared with the
/// actual item whose keys match (`key` returns them, in the order of `names`), wherever it is; a desired item
/// without all its keys set is compared by position. A desired item Azure lacks, or an actual item the desired
/// array lacks, is a difference at `[name=value]`. An empty desired array equals an absent actual one.
pub fn diff_identified<T: DiffWith, const N: usize>(
    desired: &Option<Vec<T>>,
    actual: &Option<Vec<T>>,
    names: &[&str; N],
    key: impl for<'x> Fn(&'x T) -> [Key<'x>; N],
    path: &Path<'_>,
    out: &mut Differences,
) {
    let Some(desired) = desired else { return };
    let Some(actual) = actual else {
        if !desired.is_empty() {
            out.record::<Vec<T>, Vec<T>>(path, Some(desired), None);
        }
        return;
    };
    let keyed = |keys: &[Key<'_>; N]| keys.iter().all(|k| *k != Key::Absent);
    let same = |a: &[Key<'_>; N], b: &[Key<'_>; N]| a.iter().zip(b).all(|(x, y)| x.matches(y));
    for (i, d) in desired.iter().enumerate() {
        let dk = key(d);
        if !keyed(&dk) {
            match actual.get(i) {
                Some(a) => d.diff_with(a, &path.index(i), out),
                None => out.record::<T, T>(&path.index(i), Some(d), None),
            }
            continue;
        }
        let item_path = path.identified(names, &dk);
        match actual.iter().find(|a| same(&dk, &key(a))) {
            Some(a) => d.diff_with(a, &item_path, out),
            None => out.record::<T, T>(&item_path, Some(d), None),
        }
    }
    for (j, a) in actual.iter().enumerate() {
        let ak = key(a);
        let positional = desired.get(j).is_some_and(|d| !keyed(&key(d)));
        let matched = positional || desired.iter().any(|d| same(&key(d), &ak));
        if !matched {
            if keyed(&ak) {
                out.record::<T, T>(&path.identified(names, &ak), None, Some(a));
            } else {
                out.record::<T, T>(&path.index(j), None, Some(a));
            }
        }
    }
}

/// Whether the current differences call for a PUT: any difference not recorded in `known` (same path, same
/// desired and actual values). A known difference whose desired value the user changed is new, and so is one
/// whose actual value drifted.
pub fn needs_put(current: &Differences, known: &[KnownDifference]) -> bool {
    current.iter().any(|d| !is_known(d, known))
}

/// Whether `d` is recorded in `known` (same path, same desired and actual values).
pub fn is_known(d: &Difference, known: &[KnownDifference]) -> bool {
    known
        .iter()
        .any(|k| k.path == d.path && k.desired == d.desired && k.actual == d.actual)
}

/// After a successful PUT: `before` are the differences that caused it, `after` those between the desired spec
/// and the GET that followed it. A difference still there at a path the PUT tried to fix is one the service
/// refuses to apply (it normalizes the value, or ignores the field): it becomes a known difference, and
/// [`needs_put`] skips it from then on. A difference that only appeared after the PUT (the resource changed
/// meanwhile) is not known: the next resync PUTs. Known differences are replaced, not accumulated.
pub fn update_known_differences(status: &mut OperatorStatus, before: &Differences, after: &Differences) {
    status.known_differences = after
        .iter()
        .filter(|d| before.iter().any(|b| b.path == d.path))
        .map(KnownDifference::from)
        .collect();
}

/// On a resync without a PUT: forgets the known differences that no longer occur (Azure now matches, or the
/// user changed that field), so that they cannot hide a later change. Returns whether anything was forgotten.
pub fn forget_resolved(status: &mut OperatorStatus, current: &Differences) -> bool {
    let before = status.known_differences.len();
    status.known_differences.retain(|k| {
        current
            .iter()
            .any(|d| k.path == d.path && k.desired == d.desired && k.actual == d.actual)
    });
    status.known_differences.len() != before
}

/// Why [`diff_documents`] could not compare: which input (`custom resource` or `ARM body`) is not of the kind's
/// shape, and the parser's message (with line and column for the ARM body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffInputError {
    pub input: &'static str,
    pub message: String,
}

impl fmt::Display for DiffInputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.input, self.message)
    }
}

impl std::error::Error for DiffInputError {}

/// Compares the `spec` of a custom resource (JSON, read as `C`) with an ARM GET body (JSON text, read as `A` and
/// converted to spec shape by `from_arm`). What `armctl diff` and the generated `diff_custom_resource` run.
pub fn diff_documents<C, A, S>(
    custom_resource: &serde_json::Value,
    arm_json: &str,
    spec: impl for<'c> FnOnce(&'c C) -> &'c S,
    from_arm: impl FnOnce(&A) -> S,
) -> Result<Differences, DiffInputError>
where
    C: serde::de::DeserializeOwned,
    A: serde::de::DeserializeOwned,
    S: DiffWith,
{
    let cr = C::deserialize(custom_resource).map_err(|e| DiffInputError {
        input: "custom resource",
        message: e.to_string(),
    })?;
    let body: A = serde_json::from_str(arm_json).map_err(|e| DiffInputError {
        input: "ARM body",
        message: e.to_string(),
    })?;
    Ok(diff(spec(&cr), &from_arm(&body)))
}
