//! The mechanics of the generated ARM enums, as two macros: a generated enum is its schema's values and docs,
//! written once, and the conversions to and from the wire are here.
//!
//! - [`open_enum!`](crate::open_enum) (`x-ms-enum.modelAsString`): values the API version does not know are kept
//!   in an `Other(String)` variant, so a newer service value survives a round trip.
//! - [`closed_enum!`](crate::closed_enum): other values are rejected with [`UnknownEnumValue`](crate::UnknownEnumValue).
//!
//! Both compare values ASCII-case-insensitively, as ARM does, and write the schema's spelling. Each invocation is
//! an enum item whose variants carry their wire value (`Variant = "value"`), with its doc comments and its
//! `#[derive]` (which must include serde's `Serialize` and `Deserialize`; the macro adds the `#[serde]` attribute
//! routing them through `String`). The item form keeps generated files readable, and lets `armgen`'s rewrites (docs
//! left out, extra derives) edit the invocation as the enum it is.
//!
//! Each macro implements `as_str` (the wire value), `From<String>` (open) or `TryFrom<String>` (closed),
//! `From<Enum> for String`, [`UnknownFields`](crate::UnknownFields) (an open enum's `Other` is an unknown value),
//! [`Wire`](crate::hub::Wire), `FromJson`/`ToJson`, and [`DiffWith`](crate::diff::DiffWith): a desired value
//! differs from the actual one when their wire values differ other than in ASCII case (ARM echoes an enum in its own
//! spelling). `DiffWith` is here rather than emitted beside each version's spec types so that an enum and its impls
//! are one item of one module, whichever crate the rest of the version is in.

/// An open ARM enum (`modelAsString`): see the [module docs](crate::enums).
///
/// ```
/// use serde::{Deserialize, Serialize};
/// armgen_runtime::open_enum! {
///     /// The power state.
///     #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
///     pub enum Code {
///         /// Running.
///         Running = "Running",
///         Stopped = "Stopped",
///     }
/// }
/// assert_eq!(Code::from("running".to_string()), Code::Running);
/// assert_eq!(Code::from("Paused".to_string()), Code::Other("Paused".into()));
/// assert_eq!(serde_json::to_string(&Code::Stopped).unwrap(), r#""Stopped""#);
/// ```
#[macro_export]
macro_rules! open_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[serde(from = "String", into = "String")]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
            /// A value this API version does not know, kept as received.
            Other(String),
        }
        impl $name {
            /// The value on the wire.
            pub fn as_str(&self) -> &str {
                match self {
                    $( Self::$variant => $value, )*
                    Self::Other(value) => value,
                }
            }
        }
        impl From<String> for $name {
            fn from(value: String) -> Self {
                $( if value.eq_ignore_ascii_case($value) { return Self::$variant; } )*
                Self::Other(value)
            }
        }
        impl From<$name> for String {
            fn from(value: $name) -> Self {
                match value {
                    $name::Other(value) => value,
                    known => known.as_str().to_string(),
                }
            }
        }
        impl $crate::UnknownFields for $name {
            fn unknown_fields(&self, path: &str, out: &mut Vec<String>) {
                if let Self::Other(value) = self {
                    out.push(format!("{path}={value}"));
                }
            }
        }
        impl $crate::hub::Wire for $name {
            fn wire(&self) -> &str {
                self.as_str()
            }
            fn from_wire(wire: &str) -> Option<Self> {
                Some(Self::from(wire.to_string()))
            }
        }
        impl $crate::json::FromJson for $name {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                match json {
                    ::serde_json::Value::String(value) => Ok(Self::from(value.clone())),
                    other => Err($crate::json::invalid_type(other, "a string", at)),
                }
            }
        }
        impl $crate::diff::DiffWith for $name {
            fn diff_with(&self, actual: &Self, path: &$crate::diff::Path<'_>, out: &mut $crate::diff::Differences) {
                $crate::diff::diff_str_ci(self.as_str(), actual.as_str(), (self, actual), path, out);
            }
        }
        impl $crate::json::ToJson for $name {
            fn to_json(&self) -> ::serde_json::Value {
                ::serde_json::Value::String(self.as_str().to_string())
            }
        }
    };
}

/// A closed ARM enum: see the [module docs](crate::enums).
///
/// ```
/// use serde::{Deserialize, Serialize};
/// armgen_runtime::closed_enum! {
///     #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
///     pub enum Tier {
///         Free = "Free",
///         Standard = "Standard",
///     }
/// }
/// assert_eq!(Tier::try_from("FREE".to_string()).unwrap(), Tier::Free);
/// assert!(serde_json::from_str::<Tier>(r#""Gold""#).is_err());
/// ```
#[macro_export]
macro_rules! closed_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[serde(try_from = "String", into = "String")]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )*
        }
        impl $name {
            /// The value on the wire.
            pub fn as_str(&self) -> &'static str {
                // (`*self`: an enum without values is uninhabited, and a match on its place may be empty.)
                match *self {
                    $( Self::$variant => $value, )*
                }
            }
        }
        impl TryFrom<String> for $name {
            type Error = $crate::UnknownEnumValue;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                $( if value.eq_ignore_ascii_case($value) { return Ok(Self::$variant); } )*
                Err($crate::UnknownEnumValue { type_name: stringify!($name), value })
            }
        }
        impl From<$name> for String {
            fn from(value: $name) -> Self {
                value.as_str().to_string()
            }
        }
        impl $crate::UnknownFields for $name {
            const LEAF: bool = true;
            fn unknown_fields(&self, _path: &str, _out: &mut Vec<String>) {}
        }
        impl $crate::hub::Wire for $name {
            fn wire(&self) -> &str {
                self.as_str()
            }
            fn from_wire(wire: &str) -> Option<Self> {
                Self::try_from(wire.to_string()).ok()
            }
        }
        impl $crate::json::FromJson for $name {
            fn from_json(json: &::serde_json::Value, at: &$crate::hub::Path<'_>) -> Result<Self, $crate::json::Error> {
                match json {
                    ::serde_json::Value::String(value) => {
                        Self::try_from(value.clone()).map_err(|e| $crate::json::Error::at(at, e))
                    }
                    other => Err($crate::json::invalid_type(other, "a string", at)),
                }
            }
        }
        impl $crate::diff::DiffWith for $name {
            fn diff_with(&self, actual: &Self, path: &$crate::diff::Path<'_>, out: &mut $crate::diff::Differences) {
                $crate::diff::diff_str_ci(self.as_str(), actual.as_str(), (self, actual), path, out);
            }
        }
        impl $crate::json::ToJson for $name {
            fn to_json(&self) -> ::serde_json::Value {
                ::serde_json::Value::String(self.as_str().to_string())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use crate::UnknownFields;
    use crate::hub::Wire;
    use serde::{Deserialize, Serialize};

    crate::open_enum! {
        /// An open enum.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Open {
            /// The first.
            First = "First",
            Second = "secondValue",
        }
    }

    crate::closed_enum! {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum Closed {
            A = "A",
            B = "b",
        }
    }

    #[test]
    fn open_enums_compare_case_insensitively_and_keep_unknown_values() {
        assert_eq!(Open::from("first".to_string()), Open::First);
        assert_eq!(Open::from("SECONDVALUE".to_string()), Open::Second);
        assert_eq!(Open::Second.as_str(), "secondValue");
        let other: Open = serde_json::from_str(r#""Third""#).unwrap();
        assert_eq!(other, Open::Other("Third".into()));
        assert_eq!(serde_json::to_string(&other).unwrap(), r#""Third""#);
        assert_eq!(serde_json::to_string(&Open::First).unwrap(), r#""First""#);
        let mut out = Vec::new();
        other.unknown_fields("/p", &mut out);
        Open::First.unknown_fields("/q", &mut out);
        assert_eq!(out, ["/p=Third"]);
    }

    #[test]
    fn closed_enums_reject_unknown_values() {
        assert_eq!(serde_json::from_str::<Closed>(r#""B""#).unwrap(), Closed::B);
        assert_eq!(serde_json::to_string(&Closed::B).unwrap(), r#""b""#);
        let err = Closed::try_from("C".to_string()).unwrap_err();
        assert_eq!(err.to_string(), r#"unknown Closed value "C""#);
        assert!(serde_json::from_str::<Closed>(r#""C""#).is_err());
    }

    #[test]
    fn wire_converts_between_enums_and_strings() {
        assert_eq!(Open::from_wire("x"), Some(Open::Other("x".into())));
        assert_eq!(Closed::from_wire("a"), Some(Closed::A));
        assert_eq!(Closed::from_wire("x"), None);
        assert_eq!(Closed::A.wire(), "A");
        assert_eq!(String::from_wire("v").as_deref(), Some("v"));
    }

    /// `DiffWith` from the macros: values equal but for ASCII case do not differ; others do, written in their
    /// wire spelling, for open and closed enums alike.
    #[test]
    fn enums_differ_by_wire_value_ignoring_case() {
        use crate::diff::diff;
        assert!(diff(&Open::Other("FIRST".into()), &Open::First).is_empty());
        assert!(diff(&Open::Other("third".into()), &Open::Other("Third".into())).is_empty());
        let d = diff(&Open::First, &Open::Second);
        assert_eq!(d.len(), 1, "{d:?}");
        let text = format!("{d:?}");
        assert!(text.contains("First") && text.contains("secondValue"), "{text}");
        assert!(diff(&Closed::A, &Closed::A).is_empty());
        assert_eq!(diff(&Closed::A, &Closed::B).len(), 1);
    }

    #[test]
    fn empty_closed_enums_compile() {
        crate::closed_enum! {
            #[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
            pub enum Empty {}
        }
        assert!(Empty::try_from("x".to_string()).is_err());
    }
}
