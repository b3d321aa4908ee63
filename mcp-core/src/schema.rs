//! JSON Schemas from Rust types, shaped the way MCP clients accept them.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The JSON Schema of `T` for tool arguments, outputs and elicitation forms:
/// JSON Schema 2020-12 with sub-schemas inlined (no `$ref`/`$defs`), no
/// `$schema` key, no root `title`, and `Option<T>` fields expressed as "not
/// required" rather than as a `null` union.
///
/// Two more rewrites keep the schema within what clients validate and show:
///
/// - Only the `format`s JSON Schema defines are kept (`date-time`, `email`,
///   `uri`, `uuid`, …). The ones schemars adds for Rust number types
///   (`uint32`, `int64`, `double`, …) are dropped, after their range is
///   written as `minimum`/`maximum` (a `u32` is `minimum: 0, maximum:
///   4294967295`), so the bound is still stated and still checked.
/// - An enum of names whose variants carry doc comments (which schemars
///   writes as a `oneOf` of `const`s) is listed as `type: "string"` with
///   an `enum` of every name — the form every client and model reads as a
///   closed list, and form-based clients show as a choice — and keeps each
///   name's description in a `oneOf` of `{"const", "description"}` beside
///   it. An enum without any doc comment is a plain `enum`.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Args { /// What to say.
///     text: String, loud: Option<bool>, times: u8 }
/// let schema = mcp_core::handler::schema_for::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["text", "times"]));
/// assert_eq!(schema["properties"]["loud"]["type"], "boolean");
/// assert_eq!(
///     schema["properties"]["times"],
///     serde_json::json!({"type": "integer", "minimum": 0, "maximum": 255})
/// );
/// ```
pub fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    schema_with::<T>(true)
}

/// Like [`schema_for`], but with `inline = false` recursive and shared
/// sub-schemas stay in `$defs` and are referenced with `$ref` (for clients
/// that accept references and tools with large or recursive types).
pub fn schema_with<T: JsonSchema>(inline: bool) -> Map<String, Value> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = inline;
        s.meta_schema = None;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.remove("title");
    map.remove("$schema");
    normalize(&mut map);
    map
}

/// Rewrites one schema node and, first, every sub-schema in it: null
/// unions, formats and enumerations (see [`schema_for`]).
fn normalize(map: &mut Map<String, Value>) {
    for_each_subschema(map, &mut normalize);
    strip_null_unions(map);
    standard_format(map);
    unit_enum(map);
}

/// Calls `f` on every schema directly inside `map`: the values of
/// `properties` and the other keywords that hold schemas. Values that are
/// data (`const`, `enum`, `default`, `examples`) are never visited.
fn for_each_subschema(map: &mut Map<String, Value>, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    for (key, value) in map.iter_mut() {
        match key.as_str() {
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties"
            | "additionalItems" => {
                if let Value::Object(child) = value {
                    f(child);
                } else if let Value::Array(children) = value {
                    children
                        .iter_mut()
                        .filter_map(Value::as_object_mut)
                        .for_each(&mut *f);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = value {
                    children
                        .iter_mut()
                        .filter_map(Value::as_object_mut)
                        .for_each(&mut *f);
                }
            }
            "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
                if let Value::Object(children) = value {
                    children
                        .values_mut()
                        .filter_map(Value::as_object_mut)
                        .for_each(&mut *f);
                }
            }
            _ => {}
        }
    }
}

/// Rewrites `type: [T, "null"]` to `type: T`, drops `null` from `enum`
/// lists and drops `{"type":"null"}` (or `{"const":null}`) alternatives of
/// `anyOf`/`oneOf`. Optional fields are already left out of `required`.
fn strip_null_unions(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        if values.len() > 1 {
            values.retain(|v| !v.is_null());
        }
    }
    let is_null = |a: &Value| {
        a.get("type").and_then(Value::as_str) == Some("null")
            || a.get("const").is_some_and(Value::is_null)
    };
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = map.get_mut(key) {
            let before = alternatives.len();
            alternatives.retain(|a| !is_null(a));
            if before != alternatives.len() && alternatives.len() == 1 {
                if let Some(Value::Object(only)) = alternatives.pop() {
                    map.remove(key);
                    for (k, v) in only {
                        map.entry(k).or_insert(v);
                    }
                }
            }
        }
    }
}

/// The formats JSON Schema 2020-12 defines (its "format" vocabulary). Any
/// other format is dropped from listed schemas: clients warn about or
/// refuse formats they do not know.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The range of an integer `format` schemars writes for a Rust type.
/// `int`/`uint` (`isize`/`usize`) take the 64-bit range, so a listed
/// schema is the same on every platform (a 32-bit server still refuses a
/// larger value when it deserializes it). 128-bit integers are past what a
/// JSON number states exactly: only their sign is bounded.
fn integer_range(format: &str) -> Option<(Option<Value>, Option<Value>)> {
    let range = |min: i64, max: u64| Some((Some(Value::from(min)), Some(Value::from(max))));
    match format {
        "int8" => range(i8::MIN.into(), 127),
        "int16" => range(i16::MIN.into(), 32_767),
        "int32" => range(i32::MIN.into(), 2_147_483_647),
        "int64" | "int" => range(i64::MIN, 9_223_372_036_854_775_807),
        "uint8" => range(0, u8::MAX.into()),
        "uint16" => range(0, u16::MAX.into()),
        "uint32" => range(0, u32::MAX.into()),
        "uint64" | "uint" => range(0, u64::MAX),
        "uint128" => Some((Some(Value::from(0)), None)),
        _ => None,
    }
}

/// Drops a `format` JSON Schema does not define, first writing the range
/// of an integer format as `minimum`/`maximum` (the tighter of the format's
/// and any bound already there).
fn standard_format(map: &mut Map<String, Value>) {
    let Some(format) = map.get("format").and_then(Value::as_str) else {
        return;
    };
    if STANDARD_FORMATS.contains(&format) {
        return;
    }
    if let Some((min, max)) = integer_range(format) {
        tighten(map, "minimum", min, |new, old| new > old);
        tighten(map, "maximum", max, |new, old| new < old);
    }
    map.remove("format");
}

/// Sets `key` to `bound` unless a tighter bound is already there.
fn tighten(
    map: &mut Map<String, Value>,
    key: &str,
    bound: Option<Value>,
    tighter: fn(f64, f64) -> bool,
) {
    let Some(bound) = bound else { return };
    let replace = match (map.get(key).and_then(Value::as_f64), bound.as_f64()) {
        (Some(old), Some(new)) => tighter(new, old),
        _ => true,
    };
    if replace {
        map.insert(key.to_owned(), bound);
    }
}

/// Keywords of an alternative that only annotate it.
const ANNOTATIONS: &[&str] = &["description", "title", "deprecated", "$comment"];

/// The strings a schema node lists, when every value it admits is one of
/// them: an `enum` or `const` of strings, or an `anyOf`/`oneOf` whose
/// alternatives each list strings that way (with nothing besides
/// `type: "string"` and annotations). This is how a Rust enum of names
/// appears, whether its variants are documented (one `const` each) or not
/// (one `enum`). `None` for anything else.
#[cfg(feature = "catalog")]
pub(crate) fn listed_strings(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .all(Value::is_string)
            .then(|| values.iter().collect());
    }
    if let Some(value) = schema.get("const") {
        return value.is_string().then(|| vec![value]);
    }
    let alternatives = alternatives_listing(schema)?;
    Some(
        alternatives
            .into_iter()
            .flat_map(|(values, _)| values)
            .collect(),
    )
}

/// One alternative of an enumeration: the strings it lists and the
/// annotations (`description`, `title`, …) it carries.
pub(crate) type Listed<'a> = (Vec<&'a Value>, Vec<(&'a String, &'a Value)>);

/// The alternatives of `schema` (its `oneOf`, else its `anyOf`; `None` when
/// it has both), each with the strings it lists and the annotations it
/// carries, when every one is a plain listing of strings (see
/// `listed_strings`). A value fits such alternatives exactly when it is
/// one of their strings.
pub(crate) fn alternatives_listing(schema: &Map<String, Value>) -> Option<Vec<Listed<'_>>> {
    let alternatives = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))?
        .as_array()?;
    if alternatives.is_empty() || (schema.contains_key("oneOf") && schema.contains_key("anyOf")) {
        return None;
    }
    alternatives
        .iter()
        .map(|alt| {
            let alt = alt.as_object()?;
            let mut annotations = Vec::new();
            for (key, value) in alt {
                match key.as_str() {
                    "enum" | "const" => {}
                    "type" if value == "string" => {}
                    k if ANNOTATIONS.contains(&k) => annotations.push((key, value)),
                    _ => return None,
                }
            }
            let values = match (alt.get("enum"), alt.get("const")) {
                (Some(Value::Array(values)), None) => values.iter().collect::<Vec<_>>(),
                (None, Some(value)) => vec![value],
                _ => return None,
            };
            values
                .iter()
                .all(|v| v.is_string())
                .then_some((values, annotations))
        })
        .collect()
}

/// Lists an enum of names written as alternatives as `type: "string"` and
/// one `enum`; when an alternative carries a description (a documented
/// variant), keeps a `oneOf` of one `const` per name with its annotations
/// (see [`schema_for`]).
fn unit_enum(map: &mut Map<String, Value>) {
    if map.contains_key("enum") || map.contains_key("const") {
        return;
    }
    if map.get("type").is_some_and(|t| t != "string") {
        return;
    }
    let Some(listing) = alternatives_listing(map) else {
        return;
    };
    let mut values = Vec::new();
    let mut described = Vec::new();
    let mut annotated = false;
    for (alt_values, annotations) in listing {
        annotated |= !annotations.is_empty();
        for value in alt_values {
            if values.contains(value) {
                continue;
            }
            let mut one = Map::new();
            one.insert("const".into(), value.clone());
            for (key, note) in &annotations {
                one.insert((*key).clone(), (*note).clone());
            }
            described.push(Value::Object(one));
            values.push(value.clone());
        }
    }
    map.remove("anyOf");
    map.remove("oneOf");
    map.insert("type".into(), Value::String("string".into()));
    map.insert("enum".into(), Value::Array(values));
    if annotated {
        map.insert("oneOf".into(), Value::Array(described));
    }
}
