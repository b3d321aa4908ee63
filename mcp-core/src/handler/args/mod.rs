//! Checking tool arguments against their JSON Schema before any tool body
//! runs, with messages a model can act on: the JSON path, what was expected,
//! what was received, and did-you-mean suggestions for unknown keys.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

mod compiled;

use compiled::{Node, Ty};

/// At most this many problems are reported for one call.
const MAX_PROBLEMS: usize = 8;

/// Validates `args` against `schema` and then deserializes them into `T`.
///
/// The schema is compiled for the checker on each call; a tool defined with
/// `#[mcp_tool]` compiles its schema once, when it is registered.
///
/// # Errors
/// A message listing every problem found (up to eight), suitable as the text
/// of an `isError: true` tool result.
pub fn parse_args<T: DeserializeOwned>(
    args: Map<String, Value>,
    schema: &Map<String, Value>,
) -> Result<T, super::ArgsError> {
    check_and_parse(args, &CheckedSchema::new(schema)).map_err(super::ArgsError)
}

/// A tool's input schema compiled for the argument checker, once, when the
/// tool is registered.
#[derive(Debug, Clone)]
pub(crate) struct CheckedSchema(Node);

impl CheckedSchema {
    /// Compiles `schema`.
    pub(crate) fn new(schema: &Map<String, Value>) -> Self {
        Self(Node::compile(schema))
    }
}

/// Every problem the checker finds in `args` against `schema` (none:
/// they fit), compiling the schema for this one check.
pub(crate) fn problems(args: &Map<String, Value>, schema: &Map<String, Value>) -> Vec<String> {
    let mut found = Vec::new();
    let value = Value::Object(args.clone());
    check(&value, &Node::compile(schema), Path::Root, true, &mut found);
    found
}

/// [`parse_args`] with the message as text (what generated tools keep).
pub(crate) fn check_and_parse<T: DeserializeOwned>(
    args: Map<String, Value>,
    schema: &CheckedSchema,
) -> Result<T, String> {
    let schema = &schema.0;
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

fn type_matches(value: &Value, ty: Ty) -> bool {
    match ty {
        Ty::Object => value.is_object(),
        Ty::Array => value.is_array(),
        Ty::String => value.is_string(),
        Ty::Boolean => value.is_boolean(),
        Ty::Null => value.is_null(),
        Ty::Number => value.is_number(),
        Ty::Integer => match value {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        Ty::Other => true,
    }
}

fn check(value: &Value, schema: &Node, path: Path<'_>, root: bool, problems: &mut Vec<String>) {
    if problems.len() >= MAX_PROBLEMS {
        return;
    }
    let type_ok = schema
        .types
        .as_ref()
        .is_none_or(|ts| ts.iter().any(|(t, _)| type_matches(value, *t)));
    if !type_ok {
        if let Some(types) = schema.expected_types() {
            let mut expected = types.join(" or ");
            if let Some(fmt) = &schema.format {
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
    if let Some(allowed) = &schema.enumeration {
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
    if let Some(expected) = &schema.constant {
        if expected != value {
            problems.push(format!(
                "`{}`: expected {expected}, received {}",
                path,
                describe(value)
            ));
            return;
        }
    }
    // An enumeration written as alternatives (a Rust enum of names whose
    // variants are documented): the allowed values are listed.
    if let Some(listing) = &schema.listing {
        if !listing.contains(value) {
            let list: Vec<String> = listing.iter().map(Value::to_string).collect();
            problems.push(format!(
                "`{}`: expected one of {}, received {}",
                path,
                list.join(", "),
                describe(value)
            ));
            return;
        }
    }
    for alternatives in [&schema.any_of, &schema.one_of].into_iter().flatten() {
        let fits = alternatives.shapes.iter().any(|alt| {
            let mut scratch = Vec::new();
            check(value, alt, path, false, &mut scratch);
            scratch.is_empty()
        });
        if !fits {
            problems.push(format!(
                "`{}`: {} does not match any of the {} allowed shapes",
                path,
                describe(value),
                alternatives.count
            ));
            return;
        }
    }
    if let Value::Number(n) = value {
        if let Some(f) = n.as_f64() {
            if let Some(min) = schema.minimum {
                if f < min {
                    problems.push(format!("`{}`: must be at least {min}, received {n}", path));
                }
            }
            if let Some(max) = schema.maximum {
                if f > max {
                    problems.push(format!("`{}`: must be at most {max}, received {n}", path));
                }
            }
        }
    }
    if let (Value::String(text), Some(max)) = (value, schema.max_length) {
        // Counted no further than the limit: the text is the client's.
        let limit = usize::try_from(max).unwrap_or(usize::MAX);
        if text.chars().nth(limit).is_some() {
            problems.push(format!(
                "`{}`: must be at most {max} characters, received {} characters",
                path,
                text.chars().count()
            ));
        }
    }
    match value {
        Value::Object(obj) => check_object(obj, schema, path, root, problems),
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
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
    schema: &Node,
    path: Path<'_>,
    root: bool,
    problems: &mut Vec<String>,
) {
    let properties = schema.properties.as_ref();
    if let Some(required) = &schema.required {
        for key in required {
            if !obj.contains_key(key) {
                let ty = properties
                    .and_then(|p| p.get(key))
                    .and_then(|p| p.node.as_ref())
                    .and_then(Node::expected_types)
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
    let closed = root || schema.closed;
    for (key, value) in obj {
        let property = properties.get(key);
        match property.and_then(|p| p.node.as_ref().map(|node| (p, node))) {
            Some((p, _)) if p.null_is_absent && value.is_null() => {}
            Some((_, sub)) => check(value, sub, Path::Key(&path, key), false, problems),
            None if closed => {
                let valid = properties.names();
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

/// True when the checker finds no problem in `value` against `schema`.
fn fits(value: &Value, schema: &Node) -> bool {
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

/// Removes from checked arguments every `null` given for a property that
/// is optional (not in `required`) and whose schema does not take `null`
/// itself: models often send `null` for an optional parameter they mean to
/// leave out, so the key is checked and deserialized as if it were not
/// there (a `#[serde(default)]` field gets its default, not a type error).
/// A `null` for a required property is still checked (and refused unless
/// its schema takes `null`). Under `anyOf`/`oneOf` the first alternative
/// that fits decides.
fn drop_absent_nulls(value: &mut Value, schema: &Node) {
    for alternatives in [&schema.any_of, &schema.one_of].into_iter().flatten() {
        let chosen = alternatives.shapes.iter().find(|alt| fits(value, alt));
        if let Some(alt) = chosen {
            drop_absent_nulls(value, alt);
        }
    }
    match value {
        Value::Object(obj) => {
            let Some(properties) = &schema.properties else {
                return;
            };
            obj.retain(|key, v| {
                !(v.is_null()
                    && properties
                        .get(key)
                        .is_some_and(|p| p.node.is_some() && p.null_is_absent))
            });
            for (key, v) in obj.iter_mut() {
                if let Some(sub) = properties.get(key).and_then(|p| p.node.as_ref()) {
                    drop_absent_nulls(v, sub);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = &schema.items {
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
mod tests;
