//! Label and field selectors.

use serde_json::Value;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

/// A parsed `labelSelector`: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`, joined by commas.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LabelSelector(Vec<LabelRequirement>);

/// Splits at commas outside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn valid_key(key: &str) -> bool {
    !key.is_empty() && !key.contains(|c: char| c.is_whitespace() || "=!(),".contains(c))
}

fn set_values(term: &str, open: usize) -> Result<Vec<String>, String> {
    let rest = term[open + 1..].trim_end();
    let inner = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("unterminated set in label selector term {term:?}"))?;
    Ok(inner
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect())
}

impl LabelSelector {
    pub(crate) fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in split_top_level(selector) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let requirement = if let Some(key) = term.strip_prefix('!') {
                LabelRequirement::NotExists(key.trim().to_string())
            } else if let Some(open) = term.find('(') {
                let head: Vec<&str> = term[..open].split_whitespace().collect();
                let values = set_values(term, open)?;
                match head.as_slice() {
                    [key, "in"] => LabelRequirement::In(key.to_string(), values),
                    [key, "notin"] => LabelRequirement::NotIn(key.to_string(), values),
                    _ => return Err(format!("invalid label selector term {term:?}")),
                }
            } else if let Some((key, value)) = term.split_once("!=") {
                LabelRequirement::NotEquals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, value)) = term.split_once("==") {
                LabelRequirement::Equals(key.trim().to_string(), value.trim().to_string())
            } else if let Some((key, value)) = term.split_once('=') {
                LabelRequirement::Equals(key.trim().to_string(), value.trim().to_string())
            } else {
                LabelRequirement::Exists(term.to_string())
            };
            let key = match &requirement {
                LabelRequirement::Equals(k, _)
                | LabelRequirement::NotEquals(k, _)
                | LabelRequirement::In(k, _)
                | LabelRequirement::NotIn(k, _)
                | LabelRequirement::Exists(k)
                | LabelRequirement::NotExists(k) => k,
            };
            if !valid_key(key) {
                return Err(format!("invalid label key in label selector term {term:?}"));
            }
            requirements.push(requirement);
        }
        Ok(Self(requirements))
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels").and_then(Value::as_object);
        let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
        self.0.iter().all(|requirement| match requirement {
            LabelRequirement::Equals(k, v) => label(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => label(k) != Some(v.as_str()),
            LabelRequirement::In(k, vs) => label(k).is_some_and(|l| vs.iter().any(|v| v == l)),
            LabelRequirement::NotIn(k, vs) => label(k).is_none_or(|l| vs.iter().all(|v| v != l)),
            LabelRequirement::Exists(k) => label(k).is_some(),
            LabelRequirement::NotExists(k) => label(k).is_none(),
        })
    }
}

/// A parsed `fieldSelector`: `path=v`, `path==v`, `path!=v` joined by commas, where `path` is any dotted field path
/// (`metadata.name`, `metadata.namespace`, `spec.nodeName`, `involvedObject.uid`, ...). A missing field compares as "".
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct FieldSelector(Vec<(Vec<String>, bool, String)>);

impl FieldSelector {
    pub(crate) fn parse(selector: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        for term in selector.split(',') {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            let (path, equal, value) = if let Some((p, v)) = term.split_once("!=") {
                (p, false, v)
            } else if let Some((p, v)) = term.split_once("==") {
                (p, true, v)
            } else if let Some((p, v)) = term.split_once('=') {
                (p, true, v)
            } else {
                return Err(format!(
                    "invalid field selector term {term:?}: expected field=value or field!=value"
                ));
            };
            let path: Vec<String> = path.trim().split('.').map(str::to_string).collect();
            if path.iter().any(String::is_empty) {
                return Err(format!("invalid field path in field selector term {term:?}"));
            }
            requirements.push((path, equal, value.trim().to_string()));
        }
        Ok(Self(requirements))
    }

    pub(crate) fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, expected)| {
            let mut current = Some(object);
            for segment in path {
                current = current.and_then(|v| v.get(segment));
            }
            let actual = match current {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
            };
            (actual == *expected) == *equal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labelled(labels: Value) -> Value {
        json!({ "metadata": { "name": "a", "namespace": "ns", "labels": labels }, "spec": { "n": 3 } })
    }

    #[test]
    fn label_selector_operators() {
        let obj = labelled(json!({ "app": "web", "tier": "front" }));
        let ok = |s: &str| LabelSelector::parse(s).map(|sel| sel.matches(&obj));
        assert_eq!(ok("app=web"), Ok(true));
        assert_eq!(ok("app==web,tier=front"), Ok(true));
        assert_eq!(ok("app=web,tier=back"), Ok(false));
        assert_eq!(ok("app!=db"), Ok(true));
        assert_eq!(ok("missing!=x"), Ok(true));
        assert_eq!(ok("app"), Ok(true));
        assert_eq!(ok("!app"), Ok(false));
        assert_eq!(ok("!missing"), Ok(true));
        assert_eq!(ok("app in (db, web)"), Ok(true));
        assert_eq!(ok("app in (db),tier"), Ok(false));
        assert_eq!(ok("app notin (db,cache),tier in (front)"), Ok(true));
        assert_eq!(ok("missing notin (x)"), Ok(true));
        assert_eq!(ok(""), Ok(true));
        assert!(LabelSelector::parse("app in (web").is_err());
        assert!(LabelSelector::parse("=web").is_err());
        assert!(LabelSelector::parse("a b c (x)").is_err());
    }

    #[test]
    fn field_selector_paths() {
        let obj = labelled(json!({}));
        let ok = |s: &str| FieldSelector::parse(s).map(|sel| sel.matches(&obj));
        assert_eq!(ok("metadata.name=a"), Ok(true));
        assert_eq!(ok("metadata.name==a,metadata.namespace=ns"), Ok(true));
        assert_eq!(ok("metadata.name!=a"), Ok(false));
        assert_eq!(ok("spec.n=3"), Ok(true));
        assert_eq!(ok("spec.missing="), Ok(true));
        assert!(FieldSelector::parse("metadata.name").is_err());
        assert!(FieldSelector::parse("metadata..name=a").is_err());
    }
}
