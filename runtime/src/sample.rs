//! The smallest value a structural schema (a CRD's `openAPIV3Schema`) accepts: test data and scaffolding for any
//! kind, with no per-kind code.
//!
//! [`sample`] walks the schema and builds, for `variant` 0, 1, 2…, values that differ wherever the schema leaves
//! a choice (so two variants make an "old" and a "new" value of an immutable property):
//!
//! - objects get their `required` properties only; an object with an `armId` property and nothing required is a
//!   resource reference of `armgen_runtime` (`{armId | group, kind, name}`) and gets `armId` (a reference must
//!   name something); maps (`additionalProperties`) and `x-kubernetes-preserve-unknown-fields` objects are `{}`;
//! - `enum` picks the variant-th value; strings follow `pattern` (the shortest match, preferring `a`…`z`, then
//!   digits, then `A`…`Z`, shifted by the variant), `format` (`date-time`, `uuid`, `arm-id`) or are `sample`,
//!   `sample1`…, kept within `minLength`/`maxLength`;
//! - integers and numbers are `minimum` (or 0) plus the variant, capped by `maximum`; booleans alternate;
//!   `x-kubernetes-int-or-string` is an integer; arrays have `minItems` items.
//!
//! - of a "one of two" rule `has(self.a) != has(self.b)` (a required `fromConfig` value and its ConfigMap
//!   reference), `a` is given.
//!
//! What it does not know: other CEL rules (`x-kubernetes-validations`) and what a service accepts beyond its schema
//! (a name Azure reserves, say). A pattern the regex syntax cannot parse is an error naming the schema location.

use serde_json::{Map, Value, json};

/// Why no sample could be built, with the JSON pointer of the schema node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleError {
    /// JSON pointer into the schema, e.g. `/properties/spec/properties/dnsPrefix`.
    pub pointer: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for SampleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "schema at {}: {}", self.pointer, self.message)
    }
}

impl std::error::Error for SampleError {}

/// Nesting deeper than this is refused (schemas are trees; only a hostile one is this deep).
const MAX_DEPTH: usize = 64;

/// The smallest value `schema` accepts, in its `variant` (see the module docs).
pub fn sample(schema: &Value, variant: u32) -> Result<Value, SampleError> {
    Sampler { variant }.value(schema, &mut String::new(), 0)
}

/// The spec of a custom resource of this CRD version schema (`openAPIV3Schema`): [`sample`] of its
/// `properties.spec`, `{}` when the schema has none.
pub fn sample_spec(open_api_v3_schema: &Value, variant: u32) -> Result<Value, SampleError> {
    match open_api_v3_schema.pointer("/properties/spec") {
        Some(spec) => {
            let mut at = String::from("/properties/spec");
            Sampler { variant }.value(spec, &mut at, 0)
        }
        None => Ok(json!({})),
    }
}

/// [`sample_spec`] of the version `version` of a CustomResourceDefinition; `None` when the CRD has no such version
/// or that version no schema.
pub fn sample_spec_of(
    crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    version: &str,
    variant: u32,
) -> Option<Result<Value, SampleError>> {
    Some(sample_spec(&schema_of(crd, version)?, variant))
}

/// The `openAPIV3Schema` of the version `version` of a CustomResourceDefinition, as JSON; `None` when the CRD has
/// no such version or that version no schema.
pub fn schema_of(
    crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    version: &str,
) -> Option<Value> {
    let v = crd.spec.versions.iter().find(|v| v.name == version)?;
    serde_json::to_value(v.schema.as_ref()?.open_api_v3_schema.as_ref()?).ok()
}

/// [`sample`] of the schema of the property at `path` of an `openAPIV3Schema`, a dotted path as the rules document
/// writes it (`spec.agentPoolProfiles[].vnetSubnetID`: `[]` goes into the array's items); an error when the schema
/// has no such property.
pub fn sample_at(open_api_v3_schema: &Value, path: &str, variant: u32) -> Result<Value, SampleError> {
    let mut node = open_api_v3_schema;
    let mut at = String::new();
    let steps = crate::dotted::parse(path).map_err(|e| SampleError {
        pointer: String::new(),
        message: e.to_string(),
    })?;
    let mut name = "";
    for step in steps {
        let (key, next) = match step {
            crate::dotted::Step::Property(property) => {
                name = property;
                at.push_str("/properties");
                crate::pointer::push(&mut at, property);
                let next = node.get("properties").and_then(|p| p.get(property));
                (format!("no property `{property}` (path `{path}`)"), next)
            }
            crate::dotted::Step::Items | crate::dotted::Step::Index(_) => {
                at.push_str("/items");
                (format!("`{name}` is not an array (path `{path}`)"), node.get("items"))
            }
            crate::dotted::Step::Values => {
                at.push_str("/additionalProperties");
                let next = node.get("additionalProperties").filter(|v| v.is_object());
                (format!("`{name}` is not a map (path `{path}`)"), next)
            }
        };
        node = next.ok_or_else(|| SampleError {
            pointer: at.clone(),
            message: key,
        })?;
    }
    Sampler { variant }.value(node, &mut at, 0)
}

struct Sampler {
    variant: u32,
}

impl Sampler {
    fn err(&self, at: &str, message: impl Into<String>) -> SampleError {
        SampleError {
            pointer: at.to_string(),
            message: message.into(),
        }
    }

    fn value(&self, schema: &Value, at: &mut String, depth: usize) -> Result<Value, SampleError> {
        if depth > MAX_DEPTH {
            return Err(self.err(at, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        let Some(s) = schema.as_object() else {
            return Err(self.err(at, "not an object"));
        };
        if let Some(values) = s.get("enum").and_then(Value::as_array).filter(|v| !v.is_empty()) {
            return Ok(values[self.variant as usize % values.len()].clone());
        }
        if s.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
            return Ok(json!(self.variant));
        }
        match s.get("type").and_then(Value::as_str) {
            Some("object") | None => self.object(s, at, depth),
            Some("string") => self.string(s, at),
            Some("integer") => Ok(json!(self.number(s) as i64)),
            Some("number") => Ok(json!(self.number(s))),
            Some("boolean") => Ok(json!(self.variant % 2 == 1)),
            Some("array") => {
                let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                let Some(items) = s.get("items") else {
                    return Ok(json!([]));
                };
                let len = at.len();
                at.push_str("/items");
                let item = self.value(items, at, depth + 1);
                at.truncate(len);
                let item = item?;
                Ok(Value::Array((0..n.min(16)).map(|_| item.clone()).collect()))
            }
            Some(other) => Err(self.err(at, format!("unknown type `{other}`"))),
        }
    }

    fn object(&self, s: &Map<String, Value>, at: &mut String, depth: usize) -> Result<Value, SampleError> {
        let mut out = Map::new();
        let Some(properties) = s.get("properties").and_then(Value::as_object) else {
            return Ok(Value::Object(out));
        };
        let mut names: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if names.is_empty() && properties.contains_key("armId") {
            names.push("armId");
        }
        // `has(self.a) != has(self.b)`: exactly one of the two, `a`.
        let rules = s.get("x-kubernetes-validations").and_then(Value::as_array);
        for rule in rules
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("rule").and_then(Value::as_str))
        {
            let one_of = rule
                .strip_prefix("has(self.")
                .and_then(|r| r.split_once(") != has(self."))
                .filter(|(_, b)| b.ends_with(')'));
            if let Some((a, _)) = one_of
                && properties.contains_key(a)
                && !names.contains(&a)
            {
                names.push(a);
            }
        }
        for name in names {
            let Some(p) = properties.get(name) else {
                return Err(self.err(at, format!("`{name}` is required but has no schema")));
            };
            let len = at.len();
            at.push_str("/properties");
            crate::pointer::push(at, name);
            let v = if name == "armId" && p.get("pattern").is_none() {
                Ok(json!(self.arm_id()))
            } else {
                self.value(p, at, depth + 1)
            };
            at.truncate(len);
            out.insert(name.to_string(), v?);
        }
        Ok(Value::Object(out))
    }

    fn arm_id(&self) -> String {
        format!(
            "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Example/samples/{}",
            self.plain()
        )
    }

    fn plain(&self) -> String {
        match self.variant {
            0 => "sample".to_string(),
            n => format!("sample{n}"),
        }
    }

    fn number(&self, s: &Map<String, Value>) -> f64 {
        let min = s.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
        let mut v = min + f64::from(self.variant);
        if s.get("exclusiveMinimum").and_then(Value::as_bool) == Some(true) {
            v += 1.0;
        }
        match s.get("maximum").and_then(Value::as_f64) {
            Some(max) if v > max => max,
            _ => v,
        }
    }

    fn string(&self, s: &Map<String, Value>, at: &str) -> Result<Value, SampleError> {
        let mut text = if let Some(pattern) = s.get("pattern").and_then(Value::as_str) {
            let hir = regex_syntax::ParserBuilder::new()
                .build()
                .parse(pattern)
                .map_err(|e| self.err(at, format!("pattern {pattern:?}: {e}")))?;
            let mut out = String::new();
            self.shortest(&hir, &mut out);
            out
        } else {
            match s.get("format").and_then(Value::as_str) {
                Some("date-time") => format!("2026-01-01T00:00:{:02}Z", self.variant % 60),
                Some("uuid") => format!("00000000-0000-0000-0000-{:012}", self.variant),
                Some("arm-id") => self.arm_id(),
                _ => self.plain(),
            }
        };
        let count = text.chars().count();
        if let Some(min) = s.get("minLength").and_then(Value::as_u64)
            && (count as u64) < min
        {
            let pad = self.pick_char(&[('a', 'z')]);
            text.extend(std::iter::repeat_n(pad, (min as usize).saturating_sub(count)));
        }
        if let Some(max) = s.get("maxLength").and_then(Value::as_u64)
            && (text.chars().count() as u64) > max
        {
            text = text.chars().take(max as usize).collect();
        }
        Ok(Value::String(text))
    }

    /// The shortest string `hir` matches, each class choosing its variant-th preferred character.
    fn shortest(&self, hir: &regex_syntax::hir::Hir, out: &mut String) {
        use regex_syntax::hir::{Class, HirKind};
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(l) => out.push_str(&String::from_utf8_lossy(&l.0)),
            HirKind::Class(Class::Unicode(c)) => {
                let ranges: Vec<(char, char)> = c.ranges().iter().map(|r| (r.start(), r.end())).collect();
                out.push(self.pick_char(&ranges));
            }
            HirKind::Class(Class::Bytes(c)) => {
                let ranges: Vec<(char, char)> = c
                    .ranges()
                    .iter()
                    .filter(|r| r.start().is_ascii())
                    .map(|r| (char::from(r.start()), char::from(r.end().min(0x7f))))
                    .collect();
                out.push(self.pick_char(&ranges));
            }
            HirKind::Repetition(r) => {
                for _ in 0..r.min.min(256) {
                    self.shortest(&r.sub, out);
                }
            }
            HirKind::Capture(c) => self.shortest(&c.sub, out),
            HirKind::Concat(parts) => parts.iter().for_each(|p| self.shortest(p, out)),
            HirKind::Alternation(alts) => {
                if let Some(first) = alts.first() {
                    self.shortest(first, out);
                }
            }
        }
    }

    /// The variant-th character of the class, lowercase letters first, then digits, then uppercase, then the rest.
    fn pick_char(&self, ranges: &[(char, char)]) -> char {
        let preferred = [('a', 'z'), ('0', '9'), ('A', 'Z')];
        let mut candidates: Vec<char> = Vec::new();
        for (lo, hi) in preferred {
            for (a, b) in ranges {
                let (from, to) = (lo.max(*a), hi.min(*b));
                if from <= to {
                    candidates.extend((from..=to).take(32));
                }
            }
        }
        if candidates.is_empty() {
            for (a, b) in ranges {
                candidates.extend((*a..=*b).filter(|c| !c.is_control()).take(32));
                if candidates.len() >= 32 {
                    break;
                }
            }
        }
        candidates
            .get(self.variant as usize % candidates.len().max(1))
            .copied()
            .or_else(|| ranges.first().map(|r| r.0))
            .unwrap_or('a')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_properties_only_and_references_name_something() {
        let schema = json!({
            "type": "object",
            "required": ["name", "count", "ref"],
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z][a-z0-9]{0,11}$"},
                "count": {"type": "integer", "minimum": 1, "maximum": 2},
                "ref": {"type": "object", "properties": {"armId": {"type": "string"}, "name": {"type": "string"}}},
                "optional": {"type": "string"}
            }
        });
        let v0 = sample(&schema, 0).expect("sample");
        assert_eq!(
            v0,
            json!({"name": "a", "count": 1, "ref": {"armId": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.Example/samples/sample"}})
        );
        let v1 = sample(&schema, 1).expect("sample");
        assert_eq!(v1["name"], "b");
        assert_eq!(v1["count"], 2);
        assert_eq!(sample(&schema, 5).expect("sample")["count"], 2, "capped by maximum");
    }

    #[test]
    fn one_of_two_rules_give_the_first() {
        let schema = json!({
            "type": "object",
            "properties": {"principalId": {"type": "string"}, "principalIdFromConfig": {"type": "object"}},
            "x-kubernetes-validations": [
                {"rule": "has(self.principalId) != has(self.principalIdFromConfig)"},
                {"rule": "!(has(self.note) && has(self.noteFromConfig))"},
            ],
        });
        assert_eq!(sample(&schema, 0).expect("sample"), json!({"principalId": "sample"}));
    }

    #[test]
    fn patterns_lengths_enums_and_formats() {
        let guid = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";
        let s = |schema: Value, variant| sample(&schema, variant).expect("sample");
        assert_eq!(
            s(json!({"type": "string", "pattern": guid}), 0),
            "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
        );
        assert_eq!(
            s(json!({"type": "string", "pattern": guid}), 1),
            "bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"
        );
        assert_eq!(
            s(
                json!({"type": "string", "pattern": "^/subscriptions/[a-zA-Z0-9-]+/x$"}),
                0
            ),
            "/subscriptions/a/x"
        );
        assert_eq!(s(json!({"type": "string", "minLength": 8}), 0), "sampleaa");
        assert_eq!(s(json!({"type": "string", "maxLength": 3}), 0), "sam");
        assert_eq!(s(json!({"enum": ["Free", "Paid"]}), 1), "Paid");
        assert_eq!(
            s(json!({"type": "string", "format": "date-time"}), 0),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            s(json!({"type": "array", "minItems": 2, "items": {"type": "boolean"}}), 1),
            json!([true, true])
        );
        assert_eq!(
            s(json!({"type": "object", "additionalProperties": {"type": "string"}}), 0),
            json!({})
        );
    }

    #[test]
    fn at_a_path_through_arrays() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "pools": {"type": "array", "items": {"type": "object", "properties": {"size": {"enum": ["S", "M"]}}}}
        }}}});
        assert_eq!(sample_at(&schema, "spec.pools[].size", 1).expect("sample"), "M");
        let e = sample_at(&schema, "spec.pools[].colour", 0).expect_err("no such property");
        assert_eq!(e.pointer, "/properties/spec/properties/pools/items/properties/colour");
        assert!(
            sample_at(&schema, "spec.pools[][]", 0).is_err(),
            "not an array of arrays"
        );
    }

    #[test]
    fn bad_schemas_are_errors_naming_the_place() {
        let schema =
            json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "pattern": "(?<=x)"}}});
        let e = sample(&schema, 0).expect_err("unparsable pattern");
        assert_eq!(e.pointer, "/properties/a");
        let e = sample(&json!({"type": "object", "required": ["b"], "properties": {}}), 0).expect_err("no schema");
        assert!(e.to_string().contains("`b` is required"), "{e}");
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"type": "object", "required": ["x"], "properties": {"x": deep}});
        }
        assert!(sample(&deep, 0).is_err(), "too deep");
    }
}
