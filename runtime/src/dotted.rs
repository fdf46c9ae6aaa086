//! Dotted paths (`properties.agentPoolProfiles[0].osType`): the one parser of the paths the rules document,
//! the export configuration and the sampler write, and their navigation of `serde_json::Value`s.
//!
//! Grammar: property names separated by `.`; a name is one or more characters other than `.`, `[`, `]`, `{`
//! and `}`; each name may be followed by selectors: `[<index>]` (one array item), `[]` (every array item) and
//! `{}` (every value of a map). A path with `[]` or `{}` is a pattern: [`select`] expands it, while [`get`],
//! [`set`] and [`to_pointer`] take concrete paths only. Errors name the path and the offending segment.
//!
//! Not parsed here: change detection's difference paths (`spec.pools[name=a.b].os`, whose `[…]` hold item
//! identifiers that may contain dots; [`crate::rules::pattern_of`] reads them character by character) and
//! Kubernetes field selectors (the fake API server's own grammar).

use std::fmt;

use serde_json::Value;

/// Why a dotted path does not parse, or is a pattern where a concrete path is needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "value path {:?}: {}", self.path, self.message)
    }
}

impl std::error::Error for PathError {}

/// One step of a dotted path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// `.name` (or the first name).
    Property(&'a str),
    /// `[<index>]`.
    Index(usize),
    /// `[]`: every item of an array.
    Items,
    /// `{}`: every value of a map.
    Values,
}

impl Step<'_> {
    /// Whether this step selects one value.
    pub fn is_concrete(&self) -> bool {
        matches!(self, Step::Property(_) | Step::Index(_))
    }
}

/// The steps of `path`.
pub fn parse(path: &str) -> Result<Vec<Step<'_>>, PathError> {
    let error = |message: String| PathError {
        path: path.to_string(),
        message,
    };
    let mut steps = Vec::new();
    for segment in path.split('.') {
        let end = segment.find(['[', ']', '{', '}']).unwrap_or(segment.len());
        let (name, mut rest) = segment.split_at(end);
        if name.is_empty() {
            return Err(error(format!("segment {segment:?} has no property name")));
        }
        steps.push(Step::Property(name));
        while !rest.is_empty() {
            if let Some(tail) = rest.strip_prefix("[]") {
                steps.push(Step::Items);
                rest = tail;
            } else if let Some(tail) = rest.strip_prefix("{}") {
                steps.push(Step::Values);
                rest = tail;
            } else if let Some((index, tail)) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
                let index = index
                    .parse::<usize>()
                    .map_err(|_| error(format!("{index:?} is not an array index")))?;
                steps.push(Step::Index(index));
                rest = tail;
            } else {
                return Err(error(format!(
                    "segment {segment:?} is not `name` followed by `[<index>]`, `[]` or `{{}}`s"
                )));
            }
        }
    }
    Ok(steps)
}

/// The steps of `path`, which must be concrete (no `[]` or `{}`).
pub fn parse_concrete(path: &str) -> Result<Vec<Step<'_>>, PathError> {
    let steps = parse(path)?;
    if steps.iter().all(Step::is_concrete) {
        Ok(steps)
    } else {
        Err(PathError {
            path: path.to_string(),
            message: "`[]` and `{}` select many values; this path must name one".to_string(),
        })
    }
}

/// The value at the concrete `path` in `document`: `Ok(None)` when some step is absent (or `null`).
pub fn get<'v>(document: &'v Value, path: &str) -> Result<Option<&'v Value>, PathError> {
    let mut at = document;
    for step in parse_concrete(path)? {
        let next = match step {
            Step::Property(name) => at.get(name),
            Step::Index(i) => at.get(i),
            Step::Items | Step::Values => None,
        };
        match next {
            Some(Value::Null) | None => return Ok(None),
            Some(v) => at = v,
        }
    }
    Ok(Some(at))
}

/// Sets the value at the concrete `path` in `document`, making objects of what is on the way and is not one;
/// an index must name an existing array item (an error otherwise: there is nothing to fill the array with).
pub fn set(document: &mut Value, path: &str, value: Value) -> Result<(), PathError> {
    let error = |message: String| PathError {
        path: path.to_string(),
        message,
    };
    let mut at = document;
    for step in parse_concrete(path)? {
        at = match step {
            Step::Property(name) => {
                if !at.is_object() {
                    *at = Value::Object(serde_json::Map::new());
                }
                at.as_object_mut()
                    .ok_or_else(|| error(format!("`{name}` is not in an object")))?
                    .entry(name)
                    .or_insert(Value::Null)
            }
            Step::Index(i) => at
                .get_mut(i)
                .ok_or_else(|| error(format!("there is no array item {i}")))?,
            Step::Items | Step::Values => return Err(error("a pattern names no one place".to_string())),
        };
    }
    *at = value;
    Ok(())
}

/// The JSON pointer of the concrete `path` (`properties.pools[1].os` → `/properties/pools/1/os`).
pub fn to_pointer(path: &str) -> Result<String, PathError> {
    let mut out = String::new();
    for step in parse_concrete(path)? {
        match step {
            Step::Property(name) => crate::pointer::push(&mut out, name),
            Step::Index(i) => {
                out.push('/');
                out.push_str(&i.to_string());
            }
            Step::Items | Step::Values => {}
        }
    }
    Ok(out)
}

/// Where [`select`] found a value: the concrete keys from the document's root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Location(Vec<Key>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Key {
    Property(String),
    Index(usize),
}

impl Location {
    /// As a dotted path: `properties.pools[1].os`; a map's key is a property (`properties.m.a`), so a key with
    /// a `.` does not read back as one step; [`Location::pointer`] is exact.
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        for key in &self.0 {
            match key {
                Key::Property(name) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                }
                Key::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }

    /// As a JSON pointer: `/properties/pools/1/os`.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for key in &self.0 {
            match key {
                Key::Property(name) => crate::pointer::push(&mut out, name),
                Key::Index(i) => {
                    out.push('/');
                    out.push_str(&i.to_string());
                }
            }
        }
        out
    }

    fn with(&self, key: Key) -> Self {
        let mut keys = self.0.clone();
        keys.push(key);
        Self(keys)
    }
}

/// The values the pattern `path` selects in `document`, each with its location, in document order; absent
/// and `null` values are not selected, nor the items of what is not an array (`[]`) or the values of what is
/// not a map (`{}`).
pub fn select<'v>(document: &'v Value, path: &str) -> Result<Vec<(Location, &'v Value)>, PathError> {
    let mut found = vec![(Location::default(), document)];
    for step in parse(path)? {
        found = found
            .into_iter()
            .flat_map(|(at, value)| -> Vec<(Location, &'v Value)> {
                match (step, value) {
                    (Step::Property(name), Value::Object(map)) => map
                        .get(name)
                        .filter(|v| !v.is_null())
                        .map(|v| (at.with(Key::Property(name.to_string())), v))
                        .into_iter()
                        .collect(),
                    (Step::Index(i), Value::Array(items)) => items
                        .get(i)
                        .filter(|v| !v.is_null())
                        .map(|v| (at.with(Key::Index(i)), v))
                        .into_iter()
                        .collect(),
                    (Step::Items, Value::Array(items)) => items
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (at.with(Key::Index(i)), v))
                        .collect(),
                    (Step::Values, Value::Object(map)) => map
                        .iter()
                        .map(|(k, v)| (at.with(Key::Property(k.clone())), v))
                        .collect(),
                    _ => Vec::new(),
                }
            })
            .collect();
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_parse_into_steps() {
        assert_eq!(
            parse("a.b[2][]{}.c"),
            Ok(vec![
                Step::Property("a"),
                Step::Property("b"),
                Step::Index(2),
                Step::Items,
                Step::Values,
                Step::Property("c"),
            ])
        );
        assert_eq!(parse("location"), Ok(vec![Step::Property("location")]));
    }

    #[test]
    fn malformed_paths_are_errors_naming_the_path() {
        for bad in [
            "", "a..b", "a.", "a[", "a[x]", "[0]", "a]b", "a[0]b", "a{", "a{x}", "{}", "a[-1]",
        ] {
            let e = parse(bad).expect_err(bad);
            assert_eq!(e.path, bad);
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
        let e = parse_concrete("a[].b").expect_err("a pattern");
        assert!(e.message.contains("must name one"), "{e}");
        assert!(get(&json!({}), "a{}").is_err());
        assert!(to_pointer("a[]").is_err());
    }

    #[test]
    fn get_reads_concrete_paths() {
        let doc = json!({"kubeconfigs": [{"value": "eA=="}], "p": {"m": [[1, 2]], "n": null}});
        assert_eq!(get(&doc, "kubeconfigs[0].value"), Ok(Some(&json!("eA=="))));
        assert_eq!(get(&doc, "p.m[0][1]"), Ok(Some(&json!(2))));
        assert_eq!(get(&doc, "kubeconfigs[1].value"), Ok(None));
        assert_eq!(get(&doc, "p.n"), Ok(None));
        assert_eq!(get(&doc, "p.m.x"), Ok(None));
    }

    #[test]
    fn set_makes_objects_and_needs_existing_items() {
        let mut v = json!({"properties": {"x": 1, "pools": [{}]}, "other": 3});
        set(&mut v, "properties.items", json!([1])).expect("set");
        set(&mut v, "other.deep", json!(true)).expect("set");
        set(&mut v, "properties.pools[0].os", json!("Linux")).expect("set");
        assert_eq!(
            v,
            json!({"properties": {"x": 1, "pools": [{"os": "Linux"}], "items": [1]}, "other": {"deep": true}})
        );
        let e = set(&mut v, "properties.pools[3].os", json!(1)).expect_err("no item 3");
        assert!(e.to_string().contains("properties.pools[3].os"), "{e}");
        assert!(set(&mut v, "properties.pools[].os", json!(1)).is_err());
    }

    #[test]
    fn pointers_of_concrete_paths() {
        assert_eq!(
            to_pointer("properties.pools[1].os"),
            Ok("/properties/pools/1/os".to_string())
        );
        assert_eq!(to_pointer("location"), Ok("/location".to_string()));
        assert_eq!(to_pointer("a/b.c~d"), Ok("/a~1b/c~0d".to_string()));
    }

    #[test]
    fn select_expands_patterns() {
        let doc = json!({"properties": {
            "pools": [{"os": "Linux"}, {"os": "Windows"}, {}, {"os": null}],
            "m": {"a.b": {"on": true}, "c": {"on": false}, "d": 1},
        }});
        let found: Vec<(String, String, Value)> = select(&doc, "properties.pools[].os")
            .expect("parses")
            .into_iter()
            .map(|(at, v)| (at.dotted(), at.pointer(), v.clone()))
            .collect();
        assert_eq!(
            found,
            vec![
                (
                    "properties.pools[0].os".into(),
                    "/properties/pools/0/os".into(),
                    json!("Linux")
                ),
                (
                    "properties.pools[1].os".into(),
                    "/properties/pools/1/os".into(),
                    json!("Windows")
                ),
            ]
        );
        let on: Vec<(String, Value)> = select(&doc, "properties.m{}.on")
            .expect("parses")
            .into_iter()
            .map(|(at, v)| (at.pointer(), v.clone()))
            .collect();
        assert_eq!(
            on,
            vec![
                ("/properties/m/a.b/on".to_string(), json!(true)),
                ("/properties/m/c/on".to_string(), json!(false))
            ]
        );
        assert_eq!(select(&doc, "properties.pools[1]").expect("parses").len(), 1);
        assert!(select(&doc, "properties.missing").expect("parses").is_empty());
        assert!(select(&doc, "properties.m[]").expect("parses").is_empty());
        assert!(select(&doc, "properties..m").is_err());
    }
}
