//! Where an export's value is in a JSON document: the value paths of Secret exports
//! ([`crate::SecretExport::value_path`], e.g. `kubeconfigs[0].value`) and of ConfigMap exports (dotted, e.g.
//! `properties.oidcIssuerProfile.issuerURL`).
//!
//! Grammar: [`crate::dotted`]'s concrete paths: property names separated by `.`, each optionally followed by
//! `[<index>]`s. The generator checks the paths in its config with the same grammar.

use serde_json::Value;

/// Value paths are dotted paths ([`crate::dotted`]), concrete: `[<index>]`s, no `[]` or `{}`.
pub use crate::dotted::{PathError, Step, parse_concrete as parse};

/// The value at `path` in `document`: `Ok(None)` when some step is absent (or `null`), an error when the path
/// does not parse or is a pattern.
pub fn lookup<'v>(document: &'v Value, path: &str) -> Result<Option<&'v Value>, PathError> {
    crate::dotted::get(document, path)
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
        for bad in ["", "a..b", "a[", "a[x]", "[0]", "a]b", "a[0]b", "a[]"] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
