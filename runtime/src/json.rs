//! Reading generated types from JSON without serde's derived `Deserialize`: [`FromJson`], implemented for every
//! generated struct by [`json_object!`](crate::json_object) and for the enums by their macros.
//!
//! Why not `#[derive(Deserialize)]`: a derived impl is generic over the deserializer, so the compiler builds
//! every generated type's visitor again for each deserializer it is used with (a `serde_json::Value`, JSON
//! text, serde_path_to_error's tracking wrapper around either, …), and each visitor instantiates serde's and
//! serde_json's generic machinery per field type. That was three quarters of the generated crate's LLVM IR
//! (BENCHMARKS.md, "Building the generated crate"). A [`FromJson`] impl is one plain function per type over a
//! borrowed [`serde_json::Value`]: compiled once, whatever reads it. Each generated type's `Deserialize` is a
//! small shim ([`deserialize`]) that reads a `Value` and calls it.
//!
//! The behaviour is serde's for the attributes the generator writes, and the errors read the same
//! (`spec.agentPoolProfiles[0].count: invalid type: string "x", expected i32`, serde_path_to_error's path
//! notation): a field with a default (`#[serde(default)]`, an `Option`, or a container default) takes it when
//! absent, any other field is `missing field`; an `Option` reads `null` as `None`; unknown keys are ignored, or
//! kept in the `#[serde(flatten)]` map; keys are read in the object's order, so the first error is the one
//! serde would report. One difference, on purpose: serde's derive also reads a struct from a JSON array of its
//! fields in order, which no generated schema allows; here a struct is an object only.

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

/// `value` as a JSON value ([`crate::hub::to_json`]: floats keep their shortest decimal form).
pub fn write<T: serde::Serialize + ?Sized>(value: &T) -> Result<Value, Error> {
    Ok(crate::hub::to_json(value)?)
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

/// [`FromJson`] through the type's own `Deserialize` ([`via_serde`]).
#[macro_export]
macro_rules! from_json_via_serde {
    ($($ty:ty),* $(,)?) => {
        $(
            impl $crate::json::FromJson for $ty {
                fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                    $crate::json::via_serde(json, at)
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
            json => T::from_json(json, at).map(Some),
        }
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

/// [`FromJson`] and the `Deserialize` shim for a generated struct, from its fields' JSON names: what serde's derive
/// would read, for the attributes the generator writes (the generator turns a struct's `#[derive(Deserialize)]`
/// and `#[serde]` attributes into this invocation).
///
/// - `"json" => field`: a field with a default (an `Option`, `#[serde(default)]`, or a container default): the
///   field type's `Default` when absent.
/// - `required { "json" => field }`: `missing field` when absent.
/// - `nullable { "json" => field }`: an `Option<Nullable<T>>`: absent is `None`, `null` is `Some(Null)`.
/// - `rest => field`: the `#[serde(flatten)]` map, which takes every other key (typed by the map's values).
///
/// ```
/// use serde::Serialize;
/// #[derive(Debug, Default, PartialEq, Serialize)]
/// pub struct Pool {
///     pub name: String,
///     pub count: Option<i32>,
/// }
/// armgen_runtime::json_object!(Pool { "count" => count } required { "name" => name });
/// let pool: Pool = serde_json::from_str(r#"{"name": "a", "count": 3, "other": true}"#).unwrap();
/// assert_eq!(pool, Pool { name: "a".into(), count: Some(3) });
/// let error = serde_json::from_str::<Pool>(r#"{"count": "x"}"#).unwrap_err();
/// assert_eq!(error.to_string(), r#"count: invalid type: string "x", expected i32"#);
/// ```
#[macro_export]
macro_rules! json_object {
    (
        $ty:ident { $($key:literal => $field:ident),* $(,)? }
        $(required { $($rkey:literal => $rfield:ident),* $(,)? })?
        $(nullable { $($nkey:literal => $nfield:ident),* $(,)? })?
        $(rest => $rest:ident)?
    ) => {
        impl $crate::json::FromJson for $ty {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                #[allow(unused_imports)]
                use $crate::json::FromJson as _;
                let map = $crate::json::object(json, concat!("struct ", stringify!($ty)), at)?;
                $(let mut $field = ::core::default::Default::default();)*
                $($(let mut $rfield = None;)*)?
                $($(let mut $nfield = None;)*)?
                $(let mut $rest = ::std::collections::BTreeMap::new();)?
                for (key, value) in map {
                    match key.as_str() {
                        $($key => $field = $crate::json::FromJson::from_json(value, &at.field($key))?,)*
                        $($($rkey => $rfield = Some($crate::json::FromJson::from_json(value, &at.field($rkey))?),)*)?
                        $($($nkey => $nfield = Some($crate::json::FromJson::from_json(value, &at.field($nkey))?),)*)?
                        _ => {
                            $($rest.insert(key.clone(), $crate::json::FromJson::from_json(value, &at.key(key))?);)?
                        }
                    }
                }
                Ok(Self {
                    $($field,)*
                    $($($rfield: $rfield.ok_or_else(|| $crate::json::missing($rkey, at))?,)*)?
                    $($($nfield,)*)?
                    $($rest,)?
                })
            }
        }
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::json::deserialize(deserializer)
            }
        }
    };
}

/// [`FromJson`] and the `Deserialize` shim for a generated discriminated union (`#[serde(tag = "…")]`): the tag's
/// value picks the variant, which reads the object without the tag.
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
        impl<'de> ::serde::Deserialize<'de> for $ty {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::json::deserialize(deserializer)
            }
        }
    };
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
        count: Option<i32>,
        zones: Vec<String>,
        tags: BTreeMap<String, String>,
    }

    #[derive(Debug, Clone, PartialEq, Default, Serialize)]
    struct Pool {
        count: Option<i32>,
        zones: Vec<String>,
        tags: BTreeMap<String, String>,
    }
    crate::json_object!(Pool { "count" => count, "zones" => zones, "tags" => tags });

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct SerdeArm {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<Box<SerdePool>>,
        #[serde(default, deserialize_with = "crate::nullable::deserialize")]
        gone: Option<crate::Nullable<i64>>,
        #[serde(flatten)]
        unknown_fields: BTreeMap<String, Value>,
    }

    #[derive(Debug, Clone, PartialEq, Serialize)]
    struct Arm {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<Box<Pool>>,
        #[serde(default, deserialize_with = "crate::nullable::deserialize")]
        gone: Option<crate::Nullable<i64>>,
        #[serde(flatten)]
        unknown_fields: BTreeMap<String, Value>,
    }
    crate::json_object!(Arm { "size" => size } required { "name" => name } nullable { "gone" => gone } rest => unknown_fields);

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    #[serde(tag = "kind")]
    enum SerdeShape {
        #[serde(rename = "pool")]
        Pool(SerdePool),
    }

    #[derive(Debug, Clone, PartialEq, Serialize)]
    #[serde(tag = "kind")]
    enum Shape {
        #[serde(rename = "pool")]
        Pool(Pool),
    }
    crate::json_union!(Shape, "kind" { "pool" => Pool });

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
            (Ok(s), Ok(t)) => assert_eq!(
                serde_json::to_value(s).unwrap(),
                serde_json::to_value(t).unwrap(),
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
            r#"{"name": "n", "gone": null}"#,
            r#"{"name": "n", "gone": 5}"#,
            r#"{"name": "n", "size": null}"#,
            r#"{"size": {"count": 2}}"#,
            r#"{"name": 1}"#,
            r#"{"name": "n", "size": {"zones": [1]}}"#,
        ] {
            same::<SerdeArm, Arm>(json);
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
