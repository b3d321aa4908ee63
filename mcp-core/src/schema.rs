//! JSON Schemas from Rust types, shaped the way MCP clients accept them.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{Map, Value};

/// The JSON Schema of `T` for tool arguments, outputs and elicitation forms:
/// JSON Schema 2020-12 with sub-schemas inlined (no `$ref`/`$defs`), no
/// `$schema` key, no root `title`, and `Option<T>` fields expressed as "not
/// required" rather than as a `null` union.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Args { /// What to say.
///     text: String, loud: Option<bool> }
/// let schema = mcp_core::schema_for::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["required"], serde_json::json!(["text"]));
/// assert_eq!(schema["properties"]["loud"]["type"], "boolean");
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
    strip_null_unions(&mut map);
    map
}

/// Rewrites `type: [T, "null"]` to `type: T` and drops `{"type":"null"}`
/// alternatives of `anyOf`/`oneOf`, everywhere in the schema. Optional
/// fields are already left out of `required`.
fn strip_null_unions(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alternatives)) = map.get_mut(key) {
            let before = alternatives.len();
            alternatives.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
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
    for value in map.values_mut() {
        match value {
            Value::Object(child) => strip_null_unions(child),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(child) = item {
                        strip_null_unions(child);
                    }
                }
            }
            _ => {}
        }
    }
}
