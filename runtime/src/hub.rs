//! Lossless conversions between the Kubernetes versions of a kind, through the hub (storage) version.
//!
//! Generated code implements [`Convert`] for every pair of matching types (spoke → hub and hub → spoke), and
//! [`ConvertObject`] for every kind. What one side cannot represent — a property the other version lacks, a
//! value outside the other version's closed enum, a number the other version's narrower type cannot hold, a
//! property whose shape changed — is not dropped: it goes into the **property bag**, and comes back when the
//! object is converted back.
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
//! - Keys use the JSON names of the version that owns the value, and array items by position; an entry the
//!   target cannot place (a third version's property) is carried along unchanged until a version that has the
//!   property reads it. A value the source sets wins over a bag entry for the same place.
//! - An empty bag leaves no annotation.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::escape_pointer;
use crate::kube::ConversionError;

/// The annotation holding the property bag of a converted object.
pub const PROPERTY_BAG_ANNOTATION: &str = "armgen.azure.com/property-bag";

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
                out.push('/');
                out.push_str(&escape_pointer(if side == Side::Source { source } else { target }));
            }
            Path::Index { parent, index } => {
                parent.write(side, out);
                out.push('/');
                out.push_str(&index.to_string());
            }
            Path::Key { parent, key } => {
                parent.write(side, out);
                out.push('/');
                out.push_str(&escape_pointer(key));
            }
        }
    }
}

/// The state of one object's conversion: the bag read from the source object and the bag being written for
/// the target.
#[derive(Debug, Default)]
pub struct Conversion {
    input: BTreeMap<String, serde_json::Value>,
    output: BTreeMap<String, serde_json::Value>,
}

impl Conversion {
    /// Starts converting an object: reads (and removes) its bag annotation. A malformed bag is an error
    /// naming the annotation.
    pub fn begin(metadata: &ObjectMeta) -> Result<(Conversion, ObjectMeta), ConversionError> {
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
        Ok((
            Conversion {
                input,
                output: BTreeMap::new(),
            },
            metadata,
        ))
    }

    /// Keeps `value`, which the target version cannot hold, at `path` (source names).
    pub fn stash<T: Serialize + ?Sized>(&mut self, path: &Path<'_>, value: &T) {
        let pointer = path.pointer(Side::Source);
        // Serializing the generated types cannot fail (string keys, no non-finite floats from JSON); if it
        // ever did, `null` keeps the entry visible rather than dropping it silently.
        let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        self.output.insert(pointer, value);
    }

    /// The bag's value for `path` (target names), consumed, when the source has nothing there. An entry that
    /// does not fit the target type stays in the bag.
    pub fn restore<T: DeserializeOwned>(&mut self, path: &Path<'_>) -> Option<T> {
        if self.input.is_empty() {
            return None;
        }
        let pointer = path.pointer(Side::Target);
        let value = self.input.get(&pointer)?;
        let parsed = serde_json::from_value(value.clone()).ok()?;
        self.input.remove(&pointer);
        Some(parsed)
    }

    /// Drops the bag's entry for `path` (target names): the source set the value, which wins.
    pub fn consumed(&mut self, path: &Path<'_>) {
        if !self.input.is_empty() {
            self.input.remove(&path.pointer(Side::Target));
        }
    }

    /// A property both versions have, whose values always convert: `convert(value, self, path)` when the
    /// source sets it, else the bag's value.
    pub fn convert<S: ?Sized, T: DeserializeOwned>(
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
    pub fn copy<T: Clone + DeserializeOwned>(&mut self, value: Option<&T>, path: &Path<'_>) -> Option<T> {
        self.convert(value, path, |value, _, _| value.clone())
    }

    /// A property both versions have, whose values convert when they fit (`convert` returns `None` when not):
    /// a value that does not fit goes to the bag.
    pub fn try_convert<S: Serialize + ?Sized, T: DeserializeOwned>(
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

    /// A string-valued property (an enum or a plain string on either side), converted by its wire value.
    /// `convert` returns `None` when the target cannot hold the value (a closed enum without it): the value is
    /// bagged. ARM compares enum values case-insensitively, so the target may write the value with another
    /// spelling (`None` → `none`): then the source's spelling is bagged too, and an earlier trip's spelling is
    /// taken back from the bag, so the value reads back exactly as written.
    pub fn spelled<T: DeserializeOwned>(
        &mut self,
        value: Option<&str>,
        path: &Path<'_>,
        convert: impl Fn(&str) -> Option<T>,
        spelling: impl Fn(&T) -> &str,
    ) -> Option<T> {
        let Some(value) = value else { return self.restore(path) };
        let Some(converted) = convert(value) else {
            self.stash(path, value);
            return None;
        };
        if !self.input.is_empty() {
            let pointer = path.pointer(Side::Target);
            if let Some(serde_json::Value::String(earlier)) = self.input.get(&pointer)
                && earlier.eq_ignore_ascii_case(value)
                && let Some(respelled) = convert(earlier)
            {
                self.input.remove(&pointer);
                return Some(respelled);
            }
            self.input.remove(&pointer);
        }
        if spelling(&converted) != value {
            self.stash(path, value);
        }
        Some(converted)
    }

    /// A property the target version cannot hold: its value (when set) goes to the bag.
    pub fn keep<S: Serialize + ?Sized>(&mut self, value: Option<&S>, path: &Path<'_>) {
        if let Some(value) = value {
            self.stash(path, value);
        }
    }

    /// Whether nothing was stashed and nothing is left over.
    pub fn is_empty(&self) -> bool {
        self.input.is_empty() && self.output.is_empty()
    }

    /// Finishes the conversion: entries left in the input bag are carried along, and the bag (if not empty)
    /// is written to the target's `metadata`.
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

/// A conversion of one value between matching types of two versions (generated for every pair).
pub trait Convert<T> {
    fn convert(&self, cx: &mut Conversion, path: &Path<'_>) -> T;
}

/// A conversion of a whole custom resource between two versions of its kind (generated for every kind).
pub trait ConvertObject<T> {
    fn convert_object(&self) -> Result<T, ConversionError>;
}

/// `value` through JSON into `T`: for values whose types the versions model differently but whose JSON may
/// still fit (discriminated unions, free-form JSON). `None` when it does not fit.
pub fn via_json<S: Serialize + ?Sized, T: DeserializeOwned>(value: &S) -> Option<T> {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| serde_json::from_value(v).ok())
}

/// Reads a custom resource of one served version (JSON) into its Rust type; errors name the field.
pub fn decode<T: DeserializeOwned>(object: serde_json::Value) -> Result<T, ConversionError> {
    serde_path_to_error::deserialize(object).map_err(|e| ConversionError {
        path: e.path().to_string(),
        message: e.inner().to_string(),
    })
}

/// Writes a converted custom resource as JSON.
pub fn encode<T: Serialize>(object: &T) -> Result<serde_json::Value, ConversionError> {
    serde_json::to_value(object).map_err(|e| ConversionError {
        path: String::new(),
        message: e.to_string(),
    })
}

/// The error for a version a kind is not served in.
pub fn not_served(kind: &str, version: &str) -> ConversionError {
    ConversionError {
        path: "apiVersion".into(),
        message: format!("{kind} is not served in version {version}"),
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
        let (mut cx, m) = Conversion::begin(&meta(None)).unwrap();
        let root = Path::Root("spec");
        cx.stash(&root.field("gone"), &true);
        let m = cx.finish(m).unwrap();
        let ann = m.annotations.as_ref().unwrap();
        assert_eq!(ann[PROPERTY_BAG_ANNOTATION], r#"{"/spec/gone":true}"#);

        let (mut cx, m) = Conversion::begin(&m).unwrap();
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
        let (mut cx, m) = Conversion::begin(&meta(Some(r#"{"/spec/a":"text","/spec/other":1}"#))).unwrap();
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
        let (mut cx, m) = Conversion::begin(&meta(Some(r#"{"/spec/a":1}"#))).unwrap();
        cx.consumed(&Path::Root("spec").field("a"));
        assert!(cx.finish(m).unwrap().annotations.is_none());
    }

    #[test]
    fn a_spelling_the_target_changes_comes_back() {
        // The target knows the value as `none`; the source wrote `None`.
        let lower = |v: &str| Some(v.to_ascii_lowercase());
        let root = Path::Root("spec");
        let (mut cx, m) = Conversion::begin(&meta(None)).unwrap();
        assert_eq!(
            cx.spelled(Some("None"), &root.field("o"), lower, String::as_str),
            Some("none".into())
        );
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.as_ref().unwrap()[PROPERTY_BAG_ANNOTATION],
            r#"{"/spec/o":"None"}"#
        );
        // Back: the earlier spelling wins over the target's own, and is not bagged again.
        let keep = |v: &str| Some(v.to_string());
        let (mut cx, m) = Conversion::begin(&m).unwrap();
        assert_eq!(
            cx.spelled(Some("none"), &root.field("o"), keep, String::as_str),
            Some("None".into())
        );
        assert!(cx.finish(m).unwrap().annotations.is_none());
        // A value the target cannot hold is bagged as written.
        let (mut cx, m) = Conversion::begin(&meta(None)).unwrap();
        assert_eq!(
            cx.spelled(Some("x"), &root.field("o"), |_| None::<String>, String::as_str),
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
        let (cx, m) = Conversion::begin(&m).unwrap();
        let m = cx.finish(m).unwrap();
        assert_eq!(
            m.annotations.unwrap().into_iter().collect::<Vec<_>>(),
            vec![("keep".into(), "me".into())]
        );
    }

    #[test]
    fn a_malformed_bag_is_an_error_naming_the_annotation() {
        let e = Conversion::begin(&meta(Some("[1]"))).unwrap_err();
        assert!(e.path.contains(PROPERTY_BAG_ANNOTATION), "{e}");
    }
}
