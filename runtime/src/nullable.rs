//! `x-nullable` properties: `null` is a value of its own, distinct from an absent property.
//!
//! A generated field for such a property has the type `Option<Nullable<T>>`: `None` is absent,
//! `Some(Nullable::Null)` is an explicit `null`, `Some(Nullable::Value(v))` a value. Generated code
//! deserializes it with [`deserialize`], because serde would otherwise read `null` as `None`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Nullable<T> {
    Null,
    Value(T),
}

impl<T> Nullable<T> {
    /// The value, if not `null`.
    pub fn as_value(&self) -> Option<&T> {
        match self {
            Nullable::Null => None,
            Nullable::Value(v) => Some(v),
        }
    }
}

impl<T> From<T> for Nullable<T> {
    fn from(v: T) -> Self {
        Nullable::Value(v)
    }
}

impl<T: Serialize> Serialize for Nullable<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Nullable::Null => s.serialize_none(),
            Nullable::Value(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Nullable<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match Option::<T>::deserialize(d)? {
            None => Nullable::Null,
            Some(v) => Nullable::Value(v),
        })
    }
}

/// `deserialize_with` for `Option<Nullable<T>>` fields: a present `null` becomes `Some(Nullable::Null)`.
pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Nullable<T>>, D::Error> {
    Nullable::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "deserialize")]
        x: Option<Nullable<i32>>,
    }

    #[test]
    fn null_absent_and_value_round_trip() {
        for text in [r#"{}"#, r#"{"x":null}"#, r#"{"x":3}"#] {
            let h: Holder = serde_json::from_str(text).expect("valid");
            assert_eq!(serde_json::to_string(&h).expect("serializes"), text);
        }
        let h: Holder = serde_json::from_str(r#"{"x":null}"#).expect("valid");
        assert_eq!(h.x, Some(Nullable::Null));
    }
}
