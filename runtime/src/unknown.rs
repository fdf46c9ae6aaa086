//! [`UnknownFields`]: what a payload carried that the generated types do not model.
//!
//! Generated types keep properties they do not define (in `unknown_fields`) and enum values they do not know
//! (in an open enum's `Other`), so nothing is lost in a round trip. This trait lists them, as JSON pointers,
//! so that tests and the reconciler can tell when the service speaks a newer API than the types.

use std::collections::BTreeMap;

/// Lists unknown properties and enum values, as JSON pointers (`/properties/newThing`, or
/// `/properties/osSKU=NewValue` for an unknown enum value).
///
/// A generated ARM object gets its impl from [`json_object!`](crate::json_object) (the form with `..rest`): each
/// field visited through [`field`], then the `rest` map through [`rest`].
pub trait UnknownFields {
    /// Whether a value of the type never holds anything unknown (a primitive, a closed enum, or a collection of
    /// them): its `unknown_fields` does nothing, and [`field`] does not even build the field's path.
    const LEAF: bool = false;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>);

    /// Every unknown property and enum value, from the root.
    fn all_unknown_fields(&self) -> Vec<String> {
        let mut out = Vec::new();
        self.unknown_fields("", &mut out);
        out
    }
}

macro_rules! leaf {
    ($($t:ty),*) => {
        $(impl UnknownFields for $t {
            const LEAF: bool = true;
            fn unknown_fields(&self, _path: &str, _out: &mut Vec<String>) {}
        })*
    };
}

leaf!(bool, i32, i64, f32, f64, String, serde_json::Value);

impl<T: UnknownFields> UnknownFields for Option<T> {
    const LEAF: bool = T::LEAF;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
        if let Some(v) = self {
            v.unknown_fields(path, out);
        }
    }
}

impl<T: UnknownFields> UnknownFields for Box<T> {
    const LEAF: bool = T::LEAF;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
        (**self).unknown_fields(path, out);
    }
}

impl<T: UnknownFields> UnknownFields for Vec<T> {
    const LEAF: bool = T::LEAF;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
        if T::LEAF {
            return;
        }
        for (i, v) in self.iter().enumerate() {
            v.unknown_fields(&format!("{path}/{i}"), out);
        }
    }
}

impl<T: UnknownFields> UnknownFields for BTreeMap<String, T> {
    const LEAF: bool = T::LEAF;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
        if T::LEAF {
            return;
        }
        for (k, v) in self {
            v.unknown_fields(&crate::pointer::child(path, k), out);
        }
    }
}

impl<T: UnknownFields> UnknownFields for crate::Nullable<T> {
    const LEAF: bool = T::LEAF;

    fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
        if let crate::Nullable::Value(v) = self {
            v.unknown_fields(path, out);
        }
    }
}

/// Visits field `key` of an object at `path` (the field's path built only for a type that can hold something
/// unknown).
pub fn field<T: UnknownFields + ?Sized>(value: &T, path: &str, key: &str, out: &mut Vec<String>) {
    if !T::LEAF {
        value.unknown_fields(&crate::pointer::child(path, key), out);
    }
}

/// The `rest` map of an object at `path` (`#[serde(flatten)]`, the member after `..` in
/// [`json_object!`](crate::json_object)): properties this API version does not define, each of them unknown, when it
/// holds JSON values; for a schema with typed `additionalProperties`, entries of that type, visited like fields.
pub fn rest<V: UnknownFields + 'static>(map: &BTreeMap<String, V>, path: &str, out: &mut Vec<String>) {
    // (A type test rather than a second trait: `serde_json::Value` is also a field type, a leaf.)
    if std::any::TypeId::of::<V>() == std::any::TypeId::of::<serde_json::Value>() {
        record_keys(map, path, out);
    } else {
        map.unknown_fields(path, out);
    }
}

/// Records the keys of an `unknown_fields` map.
pub fn record_keys<V>(map: &BTreeMap<String, V>, path: &str, out: &mut Vec<String>) {
    for k in map.keys() {
        out.push(crate::pointer::child(path, k));
    }
}

/// The result of reading a payload into the generated types and writing it back.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundTrip {
    /// The payload as the generated types write it.
    pub json: String,
    /// What the types did not model (see [`UnknownFields`]).
    pub unknown: Vec<String>,
}

/// Reads `json` as `T` and writes it back, listing what `T` did not model.
pub fn round_trip<T>(json: &str) -> Result<RoundTrip, crate::json::Error>
where
    T: crate::json::FromJson + serde::Serialize + UnknownFields,
{
    let value: T = crate::json::from_text(json)?;
    Ok(RoundTrip {
        json: serde_json::to_string(&value)?,
        unknown: value.all_unknown_fields(),
    })
}
