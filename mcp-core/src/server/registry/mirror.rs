//! The tool arguments a 2026-07-28 HTTP request mirrors into
//! `Mcp-Param-{Name}` headers: each tool's input-schema properties
//! annotated `"x-mcp-header": "Name"`, found once per version of the tools
//! (so a tool added to a live catalog is checked like one built in, and a
//! request pays only for looking its tool up).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::handler::tool::McpToolDef;
use crate::server::registry::OrderedMap;

/// One `x-mcp-header` annotated argument of a tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// Property names from the root of `arguments` down to the argument.
    pub(crate) path: Vec<String>,
    /// `Mcp-Param-{Name}` as the schema spells it (for messages).
    pub(crate) display: String,
    /// The same, lowercase (header names are case-insensitive).
    pub(crate) name: String,
}

/// The `x-mcp-header` annotated arguments of every tool of one version of
/// the tools (tools without any are not there).
#[derive(Debug, Clone, Default)]
pub(crate) struct ParamHeaders(HashMap<String, Vec<ParamHeader>>);

impl ParamHeaders {
    /// The annotated arguments of `tools`, read from their input schemas.
    pub(crate) fn new(tools: &OrderedMap<McpToolDef>) -> Self {
        let mut map = HashMap::new();
        for tool in tools.iter() {
            let tool = tool.tool();
            let mut found = Vec::new();
            collect(&tool.input_schema, &mut Vec::new(), &mut found);
            if !found.is_empty() {
                map.insert(tool.name.clone(), found);
            }
        }
        Self(map)
    }

    /// The annotated arguments of the tool named `tool` (none for a tool
    /// that is not there).
    pub(crate) fn of(&self, tool: &str) -> &[ParamHeader] {
        self.0.get(tool).map_or(&[], Vec::as_slice)
    }
}

/// Walks `properties` (and only `properties`) from `schema` down, recording
/// each property annotated with a usable `x-mcp-header` name.
pub(crate) fn collect(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (key, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(key.clone());
        if let Some(Value::String(header)) = property.get("x-mcp-header") {
            if !header.is_empty() && header.bytes().all(is_token_byte) {
                let display = format!("Mcp-Param-{header}");
                out.push(ParamHeader {
                    path: path.clone(),
                    name: display.to_ascii_lowercase(),
                    display,
                });
            }
        }
        collect(property, path, out);
        path.pop();
    }
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotated_properties_are_found_through_properties_only() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "plain": {"type": "string"},
                "bad": {"type": "string", "x-mcp-header": "Has Space"},
                "empty": {"type": "string", "x-mcp-header": ""},
                "nested": {"type": "object", "properties": {
                    "zone": {"type": "string", "x-mcp-header": "Zone"}
                }},
                "list": {"type": "array", "items": {"type": "object", "properties": {
                    "hidden": {"type": "string", "x-mcp-header": "Hidden"}
                }}}
            }
        });
        let mut found = Vec::new();
        collect(
            schema.as_object().expect("object"),
            &mut Vec::new(),
            &mut found,
        );
        let mut got: Vec<(String, String)> = found
            .iter()
            .map(|p| (p.path.join("."), p.name.clone()))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("nested.zone".to_owned(), "mcp-param-zone".to_owned()),
                ("region".to_owned(), "mcp-param-region".to_owned()),
            ]
        );
    }
}
