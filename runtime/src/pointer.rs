//! JSON pointers (RFC 6901): the one place that escapes and unescapes their segments.
//!
//! Every crate of the workspace that writes a pointer (change detection, the hub's property bag, the sampler,
//! the simulator, armctl) builds it here. No crate is used for it: the `jsonptr` crate offers the same in a
//! typed API, but the workspace keeps pointers as `String`s (they are map keys, error fields and
//! `serde_json::Value::pointer` arguments), and the escaping is two replacements.
//!
//! Unescaping is lenient as [`serde_json::Value::pointer`] is: a `~` not followed by `0` or `1` stays as it
//! is, so a segment unescapes to the key `Value::pointer` would look up.

use std::borrow::Cow;

/// Escapes one segment (`~` → `~0`, then `/` → `~1`).
pub fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Unescapes one segment (`~1` → `/`, then `~0` → `~`); borrowed when there is nothing to unescape.
pub fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

/// Appends `segment`, escaped, to `pointer`.
pub fn push(pointer: &mut String, segment: &str) {
    pointer.push('/');
    pointer.push_str(&escape(segment));
}

/// `pointer` with `segment` appended.
pub fn child(pointer: &str, segment: &str) -> String {
    let mut out = String::with_capacity(pointer.len() + segment.len() + 1);
    out.push_str(pointer);
    push(&mut out, segment);
    out
}

/// The pointer of `segments` (unescaped) from the root: `""` for none.
pub fn join<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> String {
    let mut out = String::new();
    for segment in segments {
        push(&mut out, segment.as_ref());
    }
    out
}

/// The unescaped segments of `pointer`; `None` when it is neither empty (the root) nor starts with `/`.
pub fn split(pointer: &str) -> Option<Vec<Cow<'_, str>>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    Some(pointer.strip_prefix('/')?.split('/').map(unescape).collect())
}

/// The parent of `pointer` (as a pointer) and its last segment (unescaped); `None` for the root or a string
/// that does not start with `/`.
pub fn split_last(pointer: &str) -> Option<(&str, Cow<'_, str>)> {
    if !pointer.starts_with('/') {
        return None;
    }
    let (parent, last) = pointer.rsplit_once('/')?;
    Some((parent, unescape(last)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn segments_escape_and_unescape() {
        assert_eq!(escape("a/b~c"), "a~1b~0c");
        assert_eq!(escape("plain"), "plain");
        // `~` first: `~1` in a key is not a slash.
        assert_eq!(escape("~1"), "~01");
        assert_eq!(unescape("~01"), "~1");
        assert_eq!(unescape("a~1b~0c"), "a/b~c");
        assert!(matches!(unescape("plain"), Cow::Borrowed("plain")));
        // Lenient, as serde_json is.
        assert_eq!(unescape("a~2"), "a~2");
    }

    #[test]
    fn pointers_join_split_and_resolve() {
        let p = join(["spec", "a/b", "3", "~"]);
        assert_eq!(p, "/spec/a~1b/3/~0");
        assert_eq!(
            split(&p),
            Some(vec!["spec".into(), "a/b".into(), "3".into(), "~".into()])
        );
        assert_eq!(split(""), Some(Vec::new()));
        assert_eq!(split("/"), Some(vec![Cow::Borrowed("")]));
        assert_eq!(split("spec"), None);
        assert_eq!(join(Vec::<&str>::new()), "");
        assert_eq!(child("/spec", "x/y"), "/spec/x~1y");
        assert_eq!(split_last("/spec/a~1b"), Some(("/spec", "a/b".into())));
        assert_eq!(split_last("/top"), Some(("", "top".into())));
        assert_eq!(split_last(""), None);
        assert_eq!(split_last("spec/a"), None);
        let doc = json!({"spec": {"a/b": [0, 1, 2, {"~": true}]}});
        assert_eq!(doc.pointer(&p), Some(&json!(true)));
    }

    proptest! {
        #[test]
        fn segments_round_trip(segments in proptest::collection::vec("[a-z~/01]{0,6}", 0..5)) {
            let pointer = join(&segments);
            let back: Vec<String> = split(&pointer).expect("a pointer").into_iter().map(Cow::into_owned).collect();
            prop_assert_eq!(&back, &segments);
            for s in &segments {
                let escaped = escape(s);
                prop_assert_eq!(unescape(&escaped), s.as_str());
            }
            if let Some(last) = segments.last() {
                let (parent, tail) = split_last(&pointer).expect("a pointer with a last segment");
                prop_assert_eq!(tail, last.as_str());
                prop_assert_eq!(parent, join(&segments[..segments.len() - 1]));
            }
        }

        #[test]
        fn pointers_resolve_what_they_name(key in "[a-z~/01]{0,6}") {
            let doc = json!({ "outer": { key.clone(): 7 } });
            prop_assert_eq!(doc.pointer(&join(["outer", key.as_str()])), Some(&json!(7)));
        }
    }
}
