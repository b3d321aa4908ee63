//! Checking tool arguments against their JSON Schema before any tool body
//! runs, with messages a model can act on: the JSON path, what was expected,
//! what was received, and did-you-mean suggestions for unknown keys.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// At most this many problems are reported for one call.
const MAX_PROBLEMS: usize = 8;

/// Validates `args` against `schema` and then deserializes them into `T`.
///
/// # Errors
/// A message listing every problem found (up to eight), suitable as the text
/// of an `isError: true` tool result.
pub fn parse_args<T: DeserializeOwned>(
    args: Map<String, Value>,
    schema: &Map<String, Value>,
) -> Result<T, super::ArgsError> {
    check_and_parse(args, schema).map_err(super::ArgsError)
}

/// [`parse_args`] with the message as text (what generated tools keep).
pub(crate) fn check_and_parse<T: DeserializeOwned>(
    args: Map<String, Value>,
    schema: &Map<String, Value>,
) -> Result<T, String> {
    let mut value = Value::Object(args);
    let mut problems = Vec::new();
    check(&value, schema, Path::Root, true, &mut problems);
    if !problems.is_empty() {
        return Err(format!("Invalid arguments:\n- {}", problems.join("\n- ")));
    }
    if has_null(&value) {
        drop_absent_nulls(&mut value, schema);
    }
    serde_json::from_value(value).map_err(|e| format!("Invalid arguments: {e}"))
}

/// Where a value sits in the arguments, built on the stack as the checker
/// descends and only turned into text when a problem is reported.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Root => f.write_str("arguments"),
            Self::Key(Self::Root, key) => f.write_str(key),
            Self::Key(parent, key) => write!(f, "{parent}.{key}"),
            Self::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// A short description of a JSON value for error messages.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_i64() || n.is_u64() => format!("the integer {n}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) => {
            let mut preview: String = s.chars().take(40).collect();
            if preview.len() < s.len() {
                preview.push('…');
            }
            format!("the string {preview:?}")
        }
        Value::Array(a) => format!("an array of {} item(s)", a.len()),
        Value::Object(_) => "an object".to_owned(),
    }
}

fn type_matches(value: &Value, ty: &str) -> bool {
    match ty {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "number" => value.is_number(),
        "integer" => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        _ => true,
    }
}

fn expected_types(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    match schema.get("type")? {
        Value::String(t) => Some(vec![t.as_str()]),
        Value::Array(ts) => Some(ts.iter().filter_map(Value::as_str).collect()),
        _ => None,
    }
}

/// The keywords of one schema node that the checker reads, gathered in a
/// single pass over its members (a node has a handful; looking each keyword
/// up by name on every call cost more than the checks themselves).
#[derive(Default)]
struct Keywords<'a> {
    ty: Option<&'a Value>,
    format: Option<&'a str>,
    enumeration: Option<&'a Vec<Value>>,
    constant: Option<&'a Value>,
    any_of: Option<&'a Vec<Value>>,
    one_of: Option<&'a Vec<Value>>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    items: Option<&'a Map<String, Value>>,
    properties: Option<&'a Map<String, Value>>,
    required: Option<&'a Vec<Value>>,
    /// `additionalProperties: false`.
    closed: bool,
}

impl<'a> Keywords<'a> {
    fn of(schema: &'a Map<String, Value>) -> Self {
        let mut k = Self::default();
        for (key, value) in schema {
            match key.as_str() {
                "type" => k.ty = Some(value),
                "format" => k.format = value.as_str(),
                "enum" => k.enumeration = value.as_array(),
                "const" => k.constant = Some(value),
                "anyOf" => k.any_of = value.as_array(),
                "oneOf" => k.one_of = value.as_array(),
                "minimum" => k.minimum = value.as_f64(),
                "maximum" => k.maximum = value.as_f64(),
                "items" => k.items = value.as_object(),
                "properties" => k.properties = value.as_object(),
                "required" => k.required = value.as_array(),
                "additionalProperties" => k.closed = *value == Value::Bool(false),
                _ => {}
            }
        }
        k
    }
}

fn check(
    value: &Value,
    schema: &Map<String, Value>,
    path: Path<'_>,
    root: bool,
    problems: &mut Vec<String>,
) {
    if problems.len() >= MAX_PROBLEMS {
        return;
    }
    let kw = Keywords::of(schema);
    let type_ok = match kw.ty {
        Some(Value::String(t)) => type_matches(value, t),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| type_matches(value, t)),
        _ => true,
    };
    if !type_ok {
        if let Some(types) = expected_types(schema) {
            let mut expected = types.join(" or ");
            if let Some(fmt) = kw.format {
                expected.push_str(&format!(" ({fmt})"));
            }
            problems.push(format!(
                "`{}`: expected {expected}, received {}",
                path,
                describe(value)
            ));
            return;
        }
    }
    if let Some(allowed) = kw.enumeration {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            problems.push(format!(
                "`{}`: expected one of {}, received {}",
                path,
                list.join(", "),
                describe(value)
            ));
            return;
        }
    }
    if let Some(expected) = kw.constant {
        if expected != value {
            problems.push(format!(
                "`{}`: expected {expected}, received {}",
                path,
                describe(value)
            ));
            return;
        }
    }
    if kw.any_of.is_some() || kw.one_of.is_some() {
        // An enumeration written as alternatives (a Rust enum of names
        // whose variants are documented): the allowed values are listed.
        if let Some(listing) = crate::schema::alternatives_listing(schema) {
            let mut allowed = listing.iter().flat_map(|(values, _)| values.iter());
            if !allowed.any(|v| *v == value) {
                let list: Vec<String> = listing
                    .iter()
                    .flat_map(|(values, _)| values.iter().map(|v| v.to_string()))
                    .collect();
                problems.push(format!(
                    "`{}`: expected one of {}, received {}",
                    path,
                    list.join(", "),
                    describe(value)
                ));
                return;
            }
        }
    }
    for alternatives in [kw.any_of, kw.one_of].into_iter().flatten() {
        let fits = alternatives.iter().filter_map(Value::as_object).any(|alt| {
            let mut scratch = Vec::new();
            check(value, alt, path, false, &mut scratch);
            scratch.is_empty()
        });
        if !fits {
            problems.push(format!(
                "`{}`: {} does not match any of the {} allowed shapes",
                path,
                describe(value),
                alternatives.len()
            ));
            return;
        }
    }
    if let Value::Number(n) = value {
        if let Some(f) = n.as_f64() {
            if let Some(min) = kw.minimum {
                if f < min {
                    problems.push(format!("`{}`: must be at least {min}, received {n}", path));
                }
            }
            if let Some(max) = kw.maximum {
                if f > max {
                    problems.push(format!("`{}`: must be at most {max}, received {n}", path));
                }
            }
        }
    }
    match value {
        Value::Object(obj) => check_object(obj, &kw, path, root, problems),
        Value::Array(items) => {
            if let Some(item_schema) = kw.items {
                for (i, item) in items.iter().enumerate() {
                    check(item, item_schema, Path::Index(&path, i), false, problems);
                }
            }
        }
        _ => {}
    }
}

fn check_object(
    obj: &Map<String, Value>,
    kw: &Keywords<'_>,
    path: Path<'_>,
    root: bool,
    problems: &mut Vec<String>,
) {
    let properties = kw.properties;
    if let Some(required) = kw.required {
        for key in required.iter().filter_map(Value::as_str) {
            if !obj.contains_key(key) {
                let ty = properties
                    .and_then(|p| p.get(key))
                    .and_then(Value::as_object)
                    .and_then(expected_types)
                    .map(|t| format!(" ({})", t.join(" or ")))
                    .unwrap_or_default();
                problems.push(format!(
                    "`{}`: missing required field{ty}",
                    Path::Key(&path, key)
                ));
            }
        }
    }
    let Some(properties) = properties else { return };
    let closed = root || kw.closed;
    for (key, value) in obj {
        match properties.get(key).and_then(Value::as_object) {
            Some(sub) if absent_null(key, value, sub, kw.required) => {}
            Some(sub) => check(value, sub, Path::Key(&path, key), false, problems),
            None if closed => {
                let valid: Vec<&str> = properties.keys().map(String::as_str).collect();
                let hint = suggest(key, &valid)
                    .map_or_else(|| ".".to_owned(), |s| format!("; did you mean `{s}`?"));
                problems.push(format!(
                    "`{}`: unknown field{hint} Valid fields: {}",
                    Path::Key(&path, key),
                    if valid.is_empty() {
                        "(none)".to_owned()
                    } else {
                        valid.join(", ")
                    }
                ));
            }
            None => {}
        }
    }
}

/// True when `value`, given for the property `key` whose schema is `sub`,
/// is a `null` that stands for "absent": the property is optional (not in
/// `required`) and its schema does not take `null` itself. Models often
/// send `null` for an optional parameter they mean to leave out; such a
/// key is checked and deserialized as if it were not there. A `null` for a
/// required property is still checked (and refused unless its schema
/// takes `null`).
fn absent_null(
    key: &str,
    value: &Value,
    sub: &Map<String, Value>,
    required: Option<&Vec<Value>>,
) -> bool {
    value.is_null()
        && !required.is_some_and(|r| r.iter().any(|name| name == key))
        && !fits(&Value::Null, sub)
}

/// True when the checker finds no problem in `value` against `schema`.
fn fits(value: &Value, schema: &Map<String, Value>) -> bool {
    let mut scratch = Vec::new();
    check(value, schema, Path::Root, false, &mut scratch);
    scratch.is_empty()
}

/// True when `value` holds a `null` anywhere: only then can
/// [`drop_absent_nulls`] remove something (a walk of the values alone is
/// cheaper than one that reads the schema beside them).
fn has_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(has_null),
        Value::Object(obj) => obj.values().any(has_null),
        _ => false,
    }
}

/// Removes from checked arguments every `null` that [`absent_null`] reads
/// as absent, so deserialization sees the key missing (a `#[serde(default)]`
/// field gets its default, not a type error). Under `anyOf`/`oneOf` the
/// first alternative that fits decides.
fn drop_absent_nulls(value: &mut Value, schema: &Map<String, Value>) {
    let kw = Keywords::of(schema);
    for alternatives in [kw.any_of, kw.one_of].into_iter().flatten() {
        let chosen = alternatives
            .iter()
            .filter_map(Value::as_object)
            .find(|alt| fits(value, alt));
        if let Some(alt) = chosen {
            drop_absent_nulls(value, alt);
        }
    }
    match value {
        Value::Object(obj) => {
            let Some(properties) = kw.properties else {
                return;
            };
            obj.retain(|key, v| {
                !properties
                    .get(key)
                    .and_then(Value::as_object)
                    .is_some_and(|sub| absent_null(key, v, sub, kw.required))
            });
            for (key, v) in obj.iter_mut() {
                if let Some(sub) = properties.get(key).and_then(Value::as_object) {
                    drop_absent_nulls(v, sub);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = kw.items {
                for item in items {
                    drop_absent_nulls(item, item_schema);
                }
            }
        }
        _ => {}
    }
}

/// The closest valid key to `key`: same letters ignoring case, `_` and `-`
/// (so `startsAt` ↔ `starts_at`), or within a small edit distance.
pub(crate) fn suggest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = norm(key);
    if let Some(exact) = valid.iter().find(|v| norm(v) == wanted) {
        return Some(exact);
    }
    let limit = (key.chars().count() / 3).max(1);
    valid
        .iter()
        .map(|v| (levenshtein(&wanted, &norm(v)), *v))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

/// Edit distance counting an adjacent transposition as one edit
/// (optimal string alignment), so `titel` is one edit from `title`.
fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
                "starts_at": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["text"],
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    #[test]
    fn reports_path_expected_and_received() {
        let err = check_and_parse::<Value>(
            json!({"text": 5}).as_object().cloned().unwrap_or_default(),
            &schema(),
        )
        .expect_err("wrong type");
        assert!(
            err.contains("`text`: expected string, received the integer 5"),
            "{err}"
        );
        let err = check_and_parse::<Value>(
            json!({"text": "x", "tags": ["a", 3]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            &schema(),
        )
        .expect_err("bad item");
        assert!(
            err.contains("`tags[1]`: expected string, received the integer 3"),
            "{err}"
        );
    }

    #[test]
    fn unknown_keys_get_suggestions() {
        let err = check_and_parse::<Value>(
            json!({"text": "x", "startsAt": "now", "cuont": 1})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            &schema(),
        )
        .expect_err("unknown keys");
        assert!(
            err.contains("`startsAt`: unknown field; did you mean `starts_at`?"),
            "{err}"
        );
        assert!(
            err.contains("`cuont`: unknown field; did you mean `count`?"),
            "{err}"
        );
        assert!(
            err.contains("Valid fields: text, count, starts_at, tags")
                || err.contains("Valid fields:"),
            "{err}"
        );
    }

    #[test]
    fn missing_required_and_bounds() {
        let err = check_and_parse::<Value>(
            json!({"count": -1})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            &schema(),
        )
        .expect_err("missing");
        assert!(
            err.contains("`text`: missing required field (string)"),
            "{err}"
        );
        assert!(
            err.contains("`count`: must be at least 0, received -1"),
            "{err}"
        );
    }

    /// Every keyword the checker reads, each with a value that breaks it.
    #[test]
    fn every_keyword_is_checked() {
        let schema = json!({
            "type": "object",
            "properties": {
                "mode": {"enum": ["fast", "slow"]},
                "version": {"const": 2},
                "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "shape": {"oneOf": [{"type": "object"}, {"type": "null"}]},
                "ratio": {"type": "number", "maximum": 1},
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "inner": {
                    "type": "object",
                    "properties": {"a": {"type": "boolean"}},
                    "additionalProperties": false
                },
                "open": {"type": "object", "properties": {"a": {"type": "boolean"}}}
            }
        });
        let schema = schema.as_object().cloned().unwrap_or_default();
        let args = json!({
            "mode": "medium",
            "version": 3,
            "id": true,
            "shape": 1,
            "ratio": 1.5,
            "when": 7,
            "tags": ["ok", 4],
            "inner": {"b": 1},
            "open": {"b": 1}
        });
        let err = check_and_parse::<Value>(args.as_object().cloned().unwrap_or_default(), &schema)
            .expect_err("every field is wrong");
        for expected in [
            "`mode`: expected one of \"fast\", \"slow\", received the string \"medium\"",
            "`version`: expected 2, received the integer 3",
            "`id`: the boolean true does not match any of the 2 allowed shapes",
            "`shape`: the integer 1 does not match any of the 2 allowed shapes",
            "`ratio`: must be at most 1, received 1.5",
            "`when`: expected string (date-time), received the integer 7",
            "`tags[1]`: expected string, received the integer 4",
            "`inner.b`: unknown field",
        ] {
            assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
        }
        assert!(
            !err.contains("`open.b`"),
            "an open object takes any key: {err}"
        );
        assert_eq!(err.matches("\n- ").count(), 8, "{err}");
    }
}
