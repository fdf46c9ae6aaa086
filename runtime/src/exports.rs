//! Where an export's value is in a JSON document: the value paths of Secret exports
//! ([`crate::SecretExport::value_path`], e.g. `kubeconfigs[0].value`) and of ConfigMap exports (dotted, e.g.
//! `properties.oidcIssuerProfile.issuerURL`).
//!
//! Grammar: property names (without `.`, `[`, `]`) separated by `.`, each optionally followed by `[<index>]`s.
//! The generator checks the paths in its config with the same grammar.

use serde_json::Value;

/// Why a value path does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "value path {:?}: {}", self.path, self.message)
    }
}

impl std::error::Error for PathError {}

/// One step of a value path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<'a> {
    Property(&'a str),
    Index(usize),
}

/// The steps of `path`.
pub fn parse(path: &str) -> Result<Vec<Step<'_>>, PathError> {
    let error = |message: String| PathError {
        path: path.to_string(),
        message,
    };
    let mut steps = Vec::new();
    for segment in path.split('.') {
        let (name, mut rest) = match segment.find('[') {
            Some(i) => (&segment[..i], &segment[i..]),
            None => (segment, ""),
        };
        if name.is_empty() || name.contains(']') {
            return Err(error(format!("segment {segment:?} has no property name")));
        }
        steps.push(Step::Property(name));
        while !rest.is_empty() {
            let Some(close) = rest.find(']').filter(|_| rest.starts_with('[')) else {
                return Err(error(format!("segment {segment:?} is not `name` or `name[<index>]`")));
            };
            let index = rest[1..close]
                .parse::<usize>()
                .map_err(|_| error(format!("{:?} is not an array index", &rest[1..close])))?;
            steps.push(Step::Index(index));
            rest = &rest[close + 1..];
        }
    }
    Ok(steps)
}

/// The value at `path` in `document`: `Ok(None)` when some step is absent (or `null`), an error when the path
/// does not parse.
pub fn lookup<'v>(document: &'v Value, path: &str) -> Result<Option<&'v Value>, PathError> {
    let mut at = document;
    for step in parse(path)? {
        let next = match step {
            Step::Property(name) => at.get(name),
            Step::Index(i) => at.get(i),
        };
        match next {
            Some(Value::Null) | None => return Ok(None),
            Some(v) => at = v,
        }
    }
    Ok(Some(at))
}

/// A scalar as the text written to a ConfigMap or Secret: strings as they are, numbers and booleans in JSON
/// form; `None` for arrays, objects and `null`.
pub fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_with_indexes() {
        let doc = json!({"kubeconfigs": [{"name": "a", "value": "eA=="}], "p": {"n": 3, "m": [[1, 2]]}});
        assert_eq!(lookup(&doc, "kubeconfigs[0].value"), Ok(Some(&json!("eA=="))));
        assert_eq!(lookup(&doc, "p.m[0][1]"), Ok(Some(&json!(2))));
        assert_eq!(lookup(&doc, "kubeconfigs[1].value"), Ok(None));
        assert_eq!(lookup(&doc, "p.x"), Ok(None));
        assert_eq!(scalar_text(&json!(3)).as_deref(), Some("3"));
        assert_eq!(scalar_text(&json!({})), None);
    }

    #[test]
    fn malformed_paths_are_errors() {
        for bad in ["", "a..b", "a[", "a[x]", "[0]", "a]b", "a[0]b"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
