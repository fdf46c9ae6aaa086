//! Reading and writing generated types as JSON without serde's derives: [`FromJson`] and [`ToJson`], implemented
//! for every generated struct by [`json_object!`](crate::json_object) (a union by [`json_union!`](crate::json_union))
//! and for the enums by their macros.
//!
//! Why not `#[derive(Deserialize, Serialize)]`: a derived impl is generic over the deserializer or serializer, so
//! the compiler builds every generated type's visitor again for each one it is used with (a `serde_json::Value`,
//! JSON text, serde_path_to_error's tracking wrapper around either, …), and each instantiates serde's and
//! serde_json's generic machinery per field type. That was three quarters of the generated crate's LLVM IR
//! (BENCHMARKS.md, "Building the generated crate"). A [`FromJson`] or [`ToJson`] impl is one plain function per type
//! over a [`serde_json::Value`]: compiled once, whatever reads or writes it. Each generated type's `Deserialize` and
//! `Serialize` are small shims ([`deserialize`], [`serialize`]) with a `Value` in between.
//!
//! The behaviour is serde's for the attributes the generator writes, and the errors read the same
//! (`spec.agentPoolProfiles[0].count: invalid type: string "x", expected i32`, serde_path_to_error's path
//! notation): a field with a default (`#[serde(default)]`, an `Option`, or a container default) takes it when
//! absent, any other field is `missing field`; an `Option` reads `null` as `None`; unknown keys are ignored, or
//! kept in the `#[serde(flatten)]` map; keys are read in the object's order, so the first error is the one
//! serde would report. Written: fields in declaration order, an `Option` that is `None` left out, then the flattened
//! map; floats with their shortest decimal form, as serde_json's writer spells them. One difference, on purpose:
//! serde's derive also reads a struct from a JSON array of its fields in order, which no generated schema allows;
//! here a struct is an object only.

use std::collections::BTreeMap;

use serde::de::{Deserialize, Deserializer, Error as _, Unexpected};
use serde_json::{Map, Value};

use crate::hub::Path;

/// A JSON value that does not read as the generated type: where, and serde's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// serde_path_to_error's notation (`spec.pools[1].count`); empty at the root.
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for Error {}

impl From<serde_json::Error> for Error {
    /// A JSON text that does not parse (serde_json's message names the line and column), or a value that does not
    /// write.
    fn from(e: serde_json::Error) -> Self {
        Error {
            path: String::new(),
            message: e.to_string(),
        }
    }
}

impl Error {
    /// `message` at `at`.
    pub fn at(at: &Path<'_>, message: impl std::fmt::Display) -> Self {
        Error {
            path: render(at),
            message: message.to_string(),
        }
    }
}

/// Reading a type from a borrowed JSON value; `at` is where the value sits, rendered only for an error.
pub trait FromJson: Sized {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error>;

    /// Reads the member `key` (its value `json`) of the object at `at` into `slot`: what [`json_object!`](crate::json_object)'s readers
    /// call for each member. `Option` reads its value in place, so that a struct field of type `Option<T>` costs
    /// one function per `T` rather than three (the option's reader, the mapping into `Some`, the assignment).
    fn read_field(slot: &mut Self, json: &Value, key: &'static str, at: &Path<'_>) -> Result<(), Error> {
        *slot = Self::from_json(json, &at.field(key))?;
        Ok(())
    }
}

/// The root of a value read whole ([`read`]).
pub const ROOT: Path<'static> = Path::Root("");

/// Reads `json` as a `T`.
pub fn read<T: FromJson>(json: &Value) -> Result<T, Error> {
    T::from_json(json, &ROOT)
}

/// Parses `text` and reads it as a `T`.
pub fn from_text<T: FromJson>(text: &str) -> Result<T, Error> {
    read(&serde_json::from_str(text)?)
}

/// The `Deserialize` of a type with [`FromJson`]: the input as a `Value`, then [`FromJson::from_json`]; the error
/// names the path in its message.
pub fn deserialize<'de, D: Deserializer<'de>, T: FromJson>(deserializer: D) -> Result<T, D::Error> {
    let json = Value::deserialize(deserializer)?;
    read(&json).map_err(D::Error::custom)
}

/// serde_path_to_error's rendering of a path: fields and keys joined by `.`, indices in brackets.
pub fn render(at: &Path<'_>) -> String {
    let mut out = String::new();
    render_into(at, &mut out);
    out
}

fn render_into(at: &Path<'_>, out: &mut String) {
    let segment = |parent: &Path<'_>, out: &mut String, name: &str| {
        render_into(parent, out);
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(name);
    };
    match at {
        Path::Root(root) => out.push_str(root),
        Path::Field { parent, source, .. } => segment(parent, out, source),
        Path::Key { parent, key } => segment(parent, out, key),
        Path::Index { parent, index } => {
            render_into(parent, out);
            out.push('[');
            out.push_str(&index.to_string());
            out.push(']');
        }
    }
}

/// What serde_json calls a value in an `invalid type` message.
fn unexpected(json: &Value) -> Unexpected<'_> {
    match json {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                Unexpected::Unsigned(u)
            } else if let Some(i) = n.as_i64() {
                Unexpected::Signed(i)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// serde_json's `invalid type: <what json is>, expected <expected>` at `at`.
pub fn invalid_type(json: &Value, expected: &str, at: &Path<'_>) -> Error {
    Error::at(at, serde_json::Error::invalid_type(unexpected(json), &expected))
}

/// serde's `missing field` error for `field` of the object at `at`.
pub fn missing(field: &'static str, at: &Path<'_>) -> Error {
    Error::at(at, serde_json::Error::missing_field(field))
}

/// [`FromJson::read_field`] into an `Option` that is `None` until read: a required member read into a local, or a
/// nullable one (`Option<Nullable<T>>`, where `null` is `Some(Null)`).
pub fn field_some<T: FromJson>(
    slot: &mut Option<T>,
    json: &Value,
    key: &'static str,
    at: &Path<'_>,
) -> Result<(), Error> {
    *slot = Some(T::from_json(json, &at.field(key))?);
    Ok(())
}

/// Reads a member the struct does not name into its flattened map (`..rest` of [`json_object!`](crate::json_object)).
pub fn member<T: FromJson>(
    rest: &mut BTreeMap<String, T>,
    key: &str,
    json: &Value,
    at: &Path<'_>,
) -> Result<(), Error> {
    rest.insert(key.to_string(), T::from_json(json, &at.key(key))?);
    Ok(())
}

/// The value of a required member, or serde's `missing field` error.
pub fn required<T>(slot: Option<T>, key: &'static str, at: &Path<'_>) -> Result<T, Error> {
    match slot {
        Some(value) => Ok(value),
        None => Err(missing(key, at)),
    }
}

/// The object at `at`, or serde's error for `expected` (`struct Name`).
pub fn object<'v>(json: &'v Value, expected: &str, at: &Path<'_>) -> Result<&'v Map<String, Value>, Error> {
    match json {
        Value::Object(map) => Ok(map),
        other => Err(invalid_type(other, expected, at)),
    }
}

/// A value read by its own `Deserialize` over the borrowed value, with serde_path_to_error for the path inside
/// it: for primitives, `serde_json::Value` and the few hand-written types generated code holds (one instance per
/// type, in this crate or the generated one).
pub fn via_serde<T: serde::de::DeserializeOwned>(json: &Value, at: &Path<'_>) -> Result<T, Error> {
    serde_path_to_error::deserialize(json).map_err(|e| {
        let inner = e.path().to_string();
        let mut path = render(at);
        if !inner.is_empty() && inner != "." {
            if !path.is_empty() && !inner.starts_with('[') {
                path.push('.');
            }
            path.push_str(&inner);
        }
        Error {
            path,
            message: e.into_inner().to_string(),
        }
    })
}

/// [`FromJson`] through the type's own `Deserialize` ([`via_serde`]), and [`ToJson`] through its `Serialize`.
#[macro_export]
macro_rules! from_json_via_serde {
    ($($ty:ty),* $(,)?) => {
        $(
            impl $crate::json::FromJson for $ty {
                fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                    $crate::json::via_serde(json, at)
                }
            }
            impl $crate::json::ToJson for $ty {
                fn to_json(&self) -> ::serde_json::Value {
                    // (These hold no floats, and serializing them cannot fail: string keys only.)
                    ::serde_json::to_value(self).unwrap_or(::serde_json::Value::Null)
                }
            }
        )*
    };
}

/// A primitive: serde's own impl over `&Value` gives serde_json's checks and messages exactly.
macro_rules! primitive {
    ($($ty:ty),*) => {
        $(
            impl FromJson for $ty {
                fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
                    <$ty>::deserialize(json).map_err(|e| Error::at(at, e))
                }
            }
        )*
    };
}

primitive!(bool, i32, i64, u32, u64, f32, f64, String);

impl FromJson for Value {
    fn from_json(json: &Value, _: &Path<'_>) -> Result<Self, Error> {
        Ok(json.clone())
    }
}

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
        match json {
            Value::Null => Ok(None),
            json => Ok(Some(T::from_json(json, at)?)),
        }
    }

    fn read_field(slot: &mut Self, json: &Value, key: &'static str, at: &Path<'_>) -> Result<(), Error> {
        *slot = match json {
            Value::Null => None,
            json => Some(T::from_json(json, &at.field(key))?),
        };
        Ok(())
    }
}

impl<T: FromJson> FromJson for Box<T> {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
        T::from_json(json, at).map(Box::new)
    }
}

impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
        // (Plain loops rather than iterator adapters collected into a `Result`: this is instantiated for every
        // item type, and the adapters cost several times the code.)
        let Value::Array(items) = json else {
            return Err(invalid_type(json, "a sequence", at));
        };
        let mut out = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            out.push(T::from_json(item, &at.index(index))?);
        }
        Ok(out)
    }
}

impl<T: FromJson> FromJson for BTreeMap<String, T> {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
        let Value::Object(map) = json else {
            return Err(invalid_type(json, "a map", at));
        };
        let mut out = BTreeMap::new();
        for (key, value) in map {
            out.insert(key.clone(), T::from_json(value, &at.key(key))?);
        }
        Ok(out)
    }
}

/// `x-nullable`: `null` is [`Nullable::Null`](crate::Nullable), not an absent value. A field of type
/// `Option<Nullable<T>>` is read with `Some(Nullable::from_json(..)?)` when its key is present.
impl<T: FromJson> FromJson for crate::Nullable<T> {
    fn from_json(json: &Value, at: &Path<'_>) -> Result<Self, Error> {
        match json {
            Value::Null => Ok(crate::Nullable::Null),
            json => T::from_json(json, at).map(crate::Nullable::Value),
        }
    }
}

crate::from_json_via_serde!(
    k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    crate::kube::ResourceReference,
    crate::kube::SecretReference,
    crate::kube::ConfigMapReference,
    crate::kube::ConfigMapDestination,
    crate::kube::SecretDestination,
    crate::kube::ExportExpression,
    crate::kube::OperatorStatus,
    crate::kube::Condition,
    crate::kube::KnownOwner,
    crate::kube::ResourceGroupOwner,
    crate::capi::TemplateMetadata,
    crate::capi::Initialization,
    crate::capi::ApiEndpoint,
);

/// Writing a generated type as a JSON value: one plain function per type, for the reason [`FromJson`] is (a derived
/// `Serialize` is compiled again per serializer and instantiates serde's machinery per field type). Floats are
/// written with their own shortest decimal form, as serde_json's writer does (`0.1f32` is `0.1`).
pub trait ToJson {
    fn to_json(&self) -> Value;

    /// Writes this as the member `key` of `map`; an `Option` that is `None` writes nothing.
    fn write_field(&self, key: &str, map: &mut Map<String, Value>) {
        put(map, key, self.to_json());
    }
}

/// Sets the member `key` of `map` (one function, called by every type's [`ToJson::write_field`]).
pub fn put(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.insert(key.to_string(), value);
}

/// The `Serialize` of a type with [`ToJson`]: its JSON value, serialized.
pub fn serialize<S: serde::Serializer, T: ToJson + ?Sized>(value: &T, serializer: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&value.to_json(), serializer)
}

impl<T: ToJson + ?Sized> ToJson for &T {
    fn to_json(&self) -> Value {
        (**self).to_json()
    }

    fn write_field(&self, key: &str, map: &mut Map<String, Value>) {
        (**self).write_field(key, map);
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}

macro_rules! integer {
    ($($ty:ty),*) => {
        $(
            impl ToJson for $ty {
                fn to_json(&self) -> Value {
                    Value::Number((*self).into())
                }
            }
        )*
    };
}

integer!(i32, i64, u32, u64);

impl ToJson for f64 {
    fn to_json(&self) -> Value {
        serde_json::Number::from_f64(*self).map_or(Value::Null, Value::Number)
    }
}

impl ToJson for f32 {
    fn to_json(&self) -> Value {
        crate::hub::widen(*self).to_json()
    }
}

impl ToJson for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
}

impl ToJson for Value {
    fn to_json(&self) -> Value {
        self.clone()
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Value {
        match self {
            Some(value) => value.to_json(),
            None => Value::Null,
        }
    }

    fn write_field(&self, key: &str, map: &mut Map<String, Value>) {
        if let Some(value) = self {
            put(map, key, value.to_json());
        }
    }
}

impl<T: ToJson> ToJson for Box<T> {
    fn to_json(&self) -> Value {
        (**self).to_json()
    }

    fn write_field(&self, key: &str, map: &mut Map<String, Value>) {
        (**self).write_field(key, map);
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Value {
        let mut out = Vec::with_capacity(self.len());
        for item in self {
            out.push(item.to_json());
        }
        Value::Array(out)
    }
}

impl<T: ToJson> ToJson for BTreeMap<String, T> {
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        for (key, value) in self {
            out.insert(key.clone(), value.to_json());
        }
        Value::Object(out)
    }
}

impl<T: ToJson> ToJson for crate::Nullable<T> {
    fn to_json(&self) -> Value {
        match self {
            crate::Nullable::Null => Value::Null,
            crate::Nullable::Value(value) => value.to_json(),
        }
    }
}

/// [`FromJson`] and [`ToJson`], with `Deserialize` and `Serialize` shims over them, for a generated struct: what
/// serde's derives would do with the attributes the generator writes (the generator turns a struct's derives and
/// `#[serde]` attributes into this invocation). The fields in declaration order, each `"json" => field`:
///
/// - unmarked: the field type's `Default` when absent (an `Option`, `#[serde(default)]`, or a container default);
/// - `(required)`: `missing field` when absent;
/// - `(nullable)`: an `Option<Nullable<T>>`: absent is `None`, `null` is `Some(Null)`;
/// - `..field` after the braces: the `#[serde(flatten)]` map (the last field), which takes every other key (typed by
///   the map's values). Such a type (an ARM payload type, which keeps what it does not model) also gets
///   [`UnknownFields`](crate::UnknownFields): each field through [`unknown::field`](crate::unknown::field), then
///   the map through [`unknown::rest`](crate::unknown::rest); every field type must implement it.
///
/// Written, an `Option` field that is `None` is left out (`skip_serializing_if = "Option::is_none"`, which the
/// generator checks every `Option` field has) and every other field is written, in declaration order, then the
/// flattened map's entries.
///
/// The type must implement `Default` (the reader starts from it), unless `no_default` comes before its name: then
/// the fields are read into locals first. `read` before the name: [`FromJson`] and `Deserialize` only, into locals
/// (a kind, whose `ToJson` and `Serialize` add `apiVersion` and `kind`: [`resource_json!`](crate::resource_json)).
///
/// ```
/// #[derive(Debug, Default, PartialEq)]
/// pub struct Pool {
///     pub name: String,
///     pub count: Option<i32>,
/// }
/// armgen_runtime::json_object! { Pool { "name" => name (required), "count" => count } }
/// let pool: Pool = serde_json::from_str(r#"{"name": "a", "count": 3, "other": true}"#).unwrap();
/// assert_eq!(pool, Pool { name: "a".into(), count: Some(3) });
/// let error = serde_json::from_str::<Pool>(r#"{"count": "x"}"#).unwrap_err();
/// assert_eq!(error.to_string(), r#"count: invalid type: string "x", expected i32"#);
/// assert_eq!(serde_json::to_string(&Pool { name: "b".into(), count: None }).unwrap(), r#"{"name":"b"}"#);
/// ```
#[macro_export]
macro_rules! json_object {
    (read $ty:ident { $($key:literal => $field:ident $(($kind:ident))?),* $(,)? } $(..$rest:ident)?) => {
        $crate::json_object!(@read_locals $ty { $($key => $field $(($kind))?),* } $(..$rest)?);
    };
    (no_default $ty:ident { $($key:literal => $field:ident $(($kind:ident))?),* $(,)? } $(..$rest:ident)?) => {
        $crate::json_object!(@read_locals $ty { $($key => $field $(($kind))?),* } $(..$rest)?);
        $crate::json_object!(@write $ty { $($key => $field),* } $(..$rest)?);
        $crate::json_object!(@unknown $ty { $($key => $field),* } $(..$rest)?);
    };
    ($ty:ident { $($key:literal => $field:ident $(($kind:ident))?),* $(,)? } $(..$rest:ident)?) => {
        $crate::json_object!(@read_default $ty { $($key => $field $(($kind))?),* } $(..$rest)?);
        $crate::json_object!(@write $ty { $($key => $field),* } $(..$rest)?);
        $crate::json_object!(@unknown $ty { $($key => $field),* } $(..$rest)?);
    };
    // An object that keeps what it does not model (`..rest`, an ARM payload type) lists it: `UnknownFields`.
    (@unknown $ty:ident { $($key:literal => $field:ident),* }) => {};
    (@unknown $ty:ident { $($key:literal => $field:ident),* } ..$rest:ident) => {
        impl $crate::UnknownFields for $ty {
            fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
                $($crate::unknown::field(&self.$field, path, $key, out);)*
                $crate::unknown::rest(&self.$rest, path, out);
            }
        }
    };
    (@write $ty:ident { $($key:literal => $field:ident),* } $(..$rest:ident)?) => {
        impl $crate::json::ToJson for $ty {
            fn to_json(&self) -> ::serde_json::Value {
                let mut map = ::serde_json::Map::new();
                $($crate::json::ToJson::write_field(&self.$field, $key, &mut map);)*
                $(for (key, value) in &self.$rest {
                    map.insert(key.clone(), $crate::json::ToJson::to_json(value));
                })?
                ::serde_json::Value::Object(map)
            }
        }
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::json::serialize(self, serializer)
            }
        }
    };
    // Into the type's `Default`, field by field: the one value to drop when a member does not read is `out`.
    (@read_default $ty:ident { $($key:literal => $field:ident $(($kind:ident))?),* } $(..$rest:ident)?) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                let map = $crate::json::object(json, concat!("struct ", stringify!($ty)), at)?;
                let mut out = <Self as ::core::default::Default>::default();
                $($crate::json_object!(@seen $field $($kind)?);)*
                for (key, value) in map {
                    match key.as_str() {
                        $($key => $crate::json_object!(@read_into out $field value at $key $($kind)?),)*
                        _ => {
                            $($crate::json::member(&mut out.$rest, key, value, at)?;)?
                        }
                    }
                }
                $($crate::json_object!(@check $field at $key $($kind)?);)*
                Ok(out)
            }
        }
        $crate::json_object!(@deserialize $ty);
    };
    // Into locals, then the struct: for a type without `Default`.
    (@read_locals $ty:ident { $($key:literal => $field:ident $(($kind:ident))?),* } $(..$rest:ident)?) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                let map = $crate::json::object(json, concat!("struct ", stringify!($ty)), at)?;
                $($crate::json_object!(@init $field $($kind)?);)*
                $(let mut $rest = ::std::collections::BTreeMap::new();)?
                for (key, value) in map {
                    match key.as_str() {
                        $($key => $crate::json_object!(@read_field $field value at $key $($kind)?),)*
                        _ => {
                            $($crate::json::member(&mut $rest, key, value, at)?;)?
                        }
                    }
                }
                Ok(Self {
                    $($field: $crate::json_object!(@take $field at $key $($kind)?),)*
                    $($rest,)?
                })
            }
        }
        $crate::json_object!(@deserialize $ty);
    };
    (@deserialize $ty:ident) => {
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::json::deserialize(deserializer)
            }
        }
    };
    (@seen $field:ident) => {};
    (@seen $field:ident nullable) => {};
    (@seen $field:ident required) => { let mut $field = false; };
    (@read_into $out:ident $field:ident $value:ident $at:ident $key:literal) => {
        $crate::json::FromJson::read_field(&mut $out.$field, $value, $key, $at)?
    };
    (@read_into $out:ident $field:ident $value:ident $at:ident $key:literal nullable) => {
        $crate::json::field_some(&mut $out.$field, $value, $key, $at)?
    };
    (@read_into $out:ident $field:ident $value:ident $at:ident $key:literal required) => {{
        $crate::json::FromJson::read_field(&mut $out.$field, $value, $key, $at)?;
        $field = true;
    }};
    (@check $field:ident $at:ident $key:literal) => {};
    (@check $field:ident $at:ident $key:literal nullable) => {};
    (@check $field:ident $at:ident $key:literal required) => {
        if !$field {
            return Err($crate::json::missing($key, $at));
        }
    };
    (@init $field:ident) => { let mut $field = ::core::default::Default::default(); };
    (@init $field:ident required) => { let mut $field = None; };
    (@init $field:ident nullable) => { let mut $field = None; };
    (@read_field $field:ident $value:ident $at:ident $key:literal) => {
        $crate::json::FromJson::read_field(&mut $field, $value, $key, $at)?
    };
    (@read_field $field:ident $value:ident $at:ident $key:literal $kind:ident) => {
        $crate::json::field_some(&mut $field, $value, $key, $at)?
    };
    (@take $field:ident $at:ident $key:literal) => { $field };
    (@take $field:ident $at:ident $key:literal required) => {
        $crate::json::required($field, $key, $at)?
    };
    (@take $field:ident $at:ident $key:literal nullable) => { $field };
}

/// [`ToJson`] and `Serialize` (a shim over it) for a generated custom resource struct: `apiVersion` and `kind`
/// from its `API_VERSION` and `KIND` constants first, then `metadata`, `spec` and, when named, `status` (left out
/// when `None`). Its [`FromJson`] is `json_object!`'s `read` form, which ignores `apiVersion` and `kind`.
#[macro_export]
macro_rules! resource_json {
    ($ty:ident $(, $status:ident)?) => {
        impl $crate::json::ToJson for $ty {
            fn to_json(&self) -> ::serde_json::Value {
                $crate::json::resource(
                    Self::API_VERSION,
                    Self::KIND,
                    &self.metadata,
                    &self.spec,
                    &[$(&self.$status as &dyn $crate::json::ToJson)?],
                )
            }
        }
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::json::serialize(self, serializer)
            }
        }
    };
}

/// A custom resource as JSON ([`resource_json!`](crate::resource_json)): `status` holds the status field when the kind has one.
pub fn resource(
    api_version: &str,
    kind: &str,
    metadata: &dyn ToJson,
    spec: &dyn ToJson,
    status: &[&dyn ToJson],
) -> Value {
    let mut map = Map::new();
    map.insert("apiVersion".into(), Value::String(api_version.into()));
    map.insert("kind".into(), Value::String(kind.into()));
    metadata.write_field("metadata", &mut map);
    spec.write_field("spec", &mut map);
    for status in status {
        status.write_field("status", &mut map);
    }
    Value::Object(map)
}

/// [`FromJson`], [`ToJson`] and the serde shims for a generated discriminated union (`#[serde(tag = "…")]`): the
/// tag's value picks the variant, which reads the object without the tag; written, the tag comes first.
#[macro_export]
macro_rules! json_union {
    ($ty:ident, $tag:literal { $($value:literal => $variant:ident),* $(,)? }) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                let (tag, rest) = $crate::json::untag(json, $tag, concat!("internally tagged enum ", stringify!($ty)), at)?;
                match tag.as_str() {
                    $($value => Ok(Self::$variant($crate::json::FromJson::from_json(&rest, at)?)),)*
                    other => Err($crate::json::unknown_variant(other, &[$($value),*], &at.field($tag))),
                }
            }
        }
        impl $crate::json::ToJson for $ty {
            fn to_json(&self) -> ::serde_json::Value {
                match self {
                    $(Self::$variant(variant) => $crate::json::tagged($tag, $value, variant),)*
                }
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::json::deserialize(deserializer)
            }
        }
        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $crate::json::serialize(self, serializer)
            }
        }
    };
}

/// A union variant written with its tag first, as serde writes an internally tagged enum.
pub fn tagged(tag: &str, value: &str, variant: &dyn ToJson) -> Value {
    let mut map = Map::new();
    map.insert(tag.to_string(), Value::String(value.to_string()));
    if let Value::Object(fields) = variant.to_json() {
        map.extend(fields);
    }
    Value::Object(map)
}

/// A tagged union's tag value and the object without it (serde's internally tagged enums).
pub fn untag(json: &Value, tag: &'static str, expected: &str, at: &Path<'_>) -> Result<(String, Value), Error> {
    let map = object(json, expected, at)?;
    let mut rest = map.clone();
    match rest.remove(tag) {
        Some(Value::String(value)) => Ok((value, Value::Object(rest))),
        Some(other) => Err(invalid_type(&other, "variant identifier", &at.field(tag))),
        None => Err(missing(tag, at)),
    }
}

/// serde's `unknown variant` error.
pub fn unknown_variant(value: &str, expected: &'static [&'static str], at: &Path<'_>) -> Error {
    Error::at(at, serde_json::Error::unknown_variant(value, expected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;

    #[derive(Debug, Clone, PartialEq, Default, Serialize, serde::Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    struct SerdePool {
        #[serde(skip_serializing_if = "Option::is_none")]
        count: Option<i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ratio: Option<f32>,
        zones: Vec<String>,
        tags: BTreeMap<String, String>,
    }

    #[derive(Debug, Clone, PartialEq, Default)]
    struct Pool {
        count: Option<i32>,
        ratio: Option<f32>,
        zones: Vec<String>,
        tags: BTreeMap<String, String>,
    }
    crate::json_object! { Pool { "count" => count, "ratio" => ratio, "zones" => zones, "tags" => tags } }

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct SerdeArm {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<Box<SerdePool>>,
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::nullable::deserialize"
        )]
        gone: Option<crate::Nullable<i64>>,
        #[serde(flatten)]
        unknown_fields: BTreeMap<String, Value>,
    }

    #[derive(Debug, Clone, PartialEq)]
    struct Arm {
        name: String,
        size: Option<Box<Pool>>,
        gone: Option<crate::Nullable<i64>>,
        unknown_fields: BTreeMap<String, Value>,
    }
    /// `Arm` with `Default`: read by the other form of the macro (into the default, field by field).
    #[derive(Debug, Clone, PartialEq, Default)]
    struct DefaultArm {
        name: String,
        size: Option<Box<Pool>>,
        gone: Option<crate::Nullable<i64>>,
        unknown_fields: BTreeMap<String, Value>,
    }
    crate::json_object! {
        DefaultArm { "name" => name (required), "size" => size, "gone" => gone (nullable) } ..unknown_fields
    }

    crate::json_object! {
        no_default Arm { "name" => name (required), "size" => size, "gone" => gone (nullable) } ..unknown_fields
    }
    // (`Pool` keeps nothing unknown: no `..rest`, so no generated impl; a field of an ARM type must have one.)
    impl crate::UnknownFields for Pool {
        fn unknown_fields(&self, _path: &str, _out: &mut Vec<String>) {}
    }

    /// The `UnknownFields` of the `..rest` form: the keys of the flattened map, escaped as JSON-pointer segments,
    /// under the object's path; nothing for the modelled fields.
    #[test]
    fn an_object_with_a_rest_map_lists_its_unknown_keys() {
        use crate::UnknownFields;
        let arm: DefaultArm =
            serde_json::from_str(r#"{"name": "a", "size": {"count": 1}, "new/thing": 1, "other": {"x": 1}}"#).unwrap();
        let mut out = Vec::new();
        arm.unknown_fields("/properties", &mut out);
        assert_eq!(out, ["/properties/new~1thing", "/properties/other"]);
        let arm: Arm = serde_json::from_str(r#"{"name": "a", "extra": true}"#).unwrap();
        assert_eq!(arm.all_unknown_fields(), ["/extra"]);
    }

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    #[serde(tag = "kind")]
    enum SerdeShape {
        #[serde(rename = "pool")]
        Pool(SerdePool),
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Shape {
        Pool(Pool),
    }
    crate::json_union!(Shape, "kind" { "pool" => Pool });

    #[derive(Debug, Clone, PartialEq)]
    struct Widget {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        spec: Pool,
        status: Option<Pool>,
    }
    impl Widget {
        const API_VERSION: &'static str = "fixture.armgen.dev/v1";
        const KIND: &'static str = "Widget";
    }
    crate::json_object! { read Widget { "metadata" => metadata (required), "spec" => spec (required), "status" => status } }
    crate::resource_json!(Widget, status);

    #[test]
    fn a_custom_resource_writes_api_version_and_kind_first_and_no_status_when_none() {
        let mut widget = Widget {
            metadata: Default::default(),
            spec: Pool {
                count: Some(2),
                ..Default::default()
            },
            status: None,
        };
        let text = serde_json::to_string(&widget).unwrap();
        assert_eq!(
            text,
            r#"{"apiVersion":"fixture.armgen.dev/v1","kind":"Widget","metadata":{},"spec":{"count":2,"zones":[],"tags":{}}}"#
        );
        widget.status = Some(Pool::default());
        let written = widget.to_json();
        assert_eq!(written["status"], serde_json::json!({"zones": [], "tags": {}}));
        assert_eq!(
            read::<Widget>(&written).unwrap(),
            widget,
            "reads back, apiVersion and kind ignored"
        );
        // Through a reference or a box, an absent `Option` is still left out.
        let mut map = Map::new();
        (&&None::<i32>).write_field("a", &mut map);
        Box::new(None::<i32>).write_field("b", &mut map);
        assert!(map.is_empty(), "{map:?}");
    }

    /// The same JSON read by serde's derive (with serde_path_to_error) and by the macros: the same value, or the
    /// same error text.
    fn same<S, T>(json: &str)
    where
        S: serde::de::DeserializeOwned + Serialize,
        T: FromJson + Serialize,
    {
        let value: Value = serde_json::from_str(json).unwrap();
        let serde: Result<S, _> = serde_path_to_error::deserialize(&value);
        let ours: Result<T, _> = read(&value);
        match (serde, ours) {
            // Written back: the same text (members in the same order, floats spelled the same).
            (Ok(s), Ok(t)) => assert_eq!(
                serde_json::to_string(&s).unwrap(),
                serde_json::to_string(&t).unwrap(),
                "{json}"
            ),
            (Err(s), Err(t)) => {
                let path = s.path().to_string();
                let expected = if path == "." {
                    s.inner().to_string()
                } else {
                    format!("{path}: {}", s.inner())
                };
                // (The serde-derived twins are named `Serde…`.) serde reads a tagged union's variant from a
                // buffer and loses the path inside it; ours keeps it, with the same message.
                let expected = expected.replace(" Serde", " ");
                let lost_path = path == "." && t.message == expected;
                assert!(
                    lost_path || expected == t.to_string(),
                    "{json}: serde {expected:?}, ours {:?}",
                    t.to_string()
                );
            }
            (s, t) => panic!("{json}: serde {:?}, ours {:?}", s.map(|_| ()), t.map(|_| ())),
        }
    }

    #[test]
    fn reads_as_serde_derive_does() {
        for json in [
            r#"{}"#,
            r#"{"count": 3, "zones": ["1"], "tags": {"a": "b"}, "other": 1}"#,
            r#"{"tags": {"b": "1", "a": "2"}, "ratio": 0.1, "count": 1}"#,
            r#"{"ratio": 1e-7}"#,
            r#"{"ratio": 3.4028235e38}"#,
            r#"{"count": null}"#,
            r#"{"count": "x"}"#,
            r#"{"count": 1.5}"#,
            r#"{"count": 3000000000}"#,
            r#"{"zones": "notalist"}"#,
            r#"{"zones": ["1", 2]}"#,
            r#"{"tags": {"a": 1}}"#,
            r#"{"tags": []}"#,
            r#""pool""#,
            r#"null"#,
        ] {
            same::<SerdePool, Pool>(json);
        }
        for json in [
            r#"{"name": "n"}"#,
            r#"{"name": "n", "x": {"y": 1}, "size": {"count": 2}}"#,
            r#"{"z": 1, "gone": 2, "name": "n", "a": [1.5]}"#,
            r#"{"name": "n", "gone": null}"#,
            r#"{"name": "n", "gone": 5}"#,
            r#"{"name": "n", "size": null}"#,
            r#"{"size": {"count": 2}}"#,
            r#"{"name": 1}"#,
            r#"{"name": "n", "size": {"zones": [1]}}"#,
        ] {
            same::<SerdeArm, Arm>(json);
            same::<SerdeArm, DefaultArm>(json);
        }
        for json in [
            r#"{"kind": "pool", "count": 1}"#,
            r#"{"kind": "pool", "count": "x"}"#,
            r#"{"kind": "other"}"#,
            r#"{"count": 1}"#,
        ] {
            same::<SerdeShape, Shape>(json);
        }
    }

    /// serde's derive also reads a struct from an array of its fields in order; no generated type's schema allows
    /// that (the API server refuses it before we see it), and it would make a list typo a valid object.
    #[test]
    fn a_struct_is_an_object_only() {
        let error = read::<Pool>(&serde_json::json!([1, ["a"]])).unwrap_err();
        assert_eq!(error.to_string(), "invalid type: sequence, expected struct Pool");
    }

    #[test]
    fn a_nullable_field_tells_null_from_absent() {
        let arm: Arm = read(&serde_json::json!({"name": "n", "gone": null})).unwrap();
        assert_eq!(arm.gone, Some(crate::Nullable::Null));
        let arm: Arm = read(&serde_json::json!({"name": "n"})).unwrap();
        assert_eq!(arm.gone, None);
    }

    #[test]
    fn errors_inside_hand_written_types_name_the_whole_path() {
        let at = ROOT;
        let at = at.field("spec");
        let at = at.field("owner");
        let error =
            <crate::kube::ResourceReference as FromJson>::from_json(&serde_json::json!({"name": 1}), &at).unwrap_err();
        assert_eq!(error.path, "spec.owner.name");
    }

    #[test]
    fn deserialize_shim_reports_the_path_in_its_message() {
        let error = serde_json::from_str::<Pool>(r#"{"zones": [1]}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "zones[0]: invalid type: integer `1`, expected a string"
        );
    }
}
