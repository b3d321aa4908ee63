//! `x-mcp-header` on the client side (2026-07-28 HTTP): which tools'
//! annotations are valid (a tool with an invalid one is dropped from the
//! listing), and the `Mcp-Param-{Name}` headers a call must carry.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// The annotated arguments of one tool: property path, header name.
pub(crate) type Annotated = Vec<(Vec<String>, String)>;

/// The annotated arguments of `schema`, or why the annotations are
/// invalid: an empty name, a byte that is not an RFC 9110 `tchar`, a
/// property that is not a string, integer or boolean, or two names equal
/// ignoring case.
pub(crate) fn annotated(schema: &Map<String, Value>) -> Result<Annotated, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), &mut found)?;
    let mut seen: HashMap<String, ()> = HashMap::new();
    for (_, name) in &found {
        if seen.insert(name.to_ascii_lowercase(), ()).is_some() {
            return Err(format!("x-mcp-header {name:?} is used twice"));
        }
    }
    Ok(found)
}

fn walk(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Annotated,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, property) in properties {
        let Value::Object(property) = property else {
            continue;
        };
        path.push(key.clone());
        if let Some(header) = property.get("x-mcp-header") {
            let Value::String(name) = header else {
                return Err(format!("x-mcp-header of {key:?} is not a string"));
            };
            if name.is_empty() || !name.bytes().all(is_tchar) {
                return Err(format!("x-mcp-header {name:?} is not a valid header name"));
            }
            let primitive = matches!(
                property.get("type").and_then(Value::as_str),
                Some("string" | "integer" | "boolean")
            );
            if !primitive {
                return Err(format!(
                    "x-mcp-header {name:?} is on {key:?}, which is not a string, integer or boolean"
                ));
            }
            out.push((path.clone(), name.clone()));
        }
        walk(property, path, out)?;
        path.pop();
    }
    Ok(())
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The `(Name, value)` pairs a call with `arguments` carries: one per
/// annotated argument present and not `null` (the link encodes values
/// that cannot travel as they are).
pub(crate) fn headers_for(
    annotated: &Annotated,
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, name) in annotated {
        let mut value = None;
        let mut here = arguments;
        for (i, key) in path.iter().enumerate() {
            match here.get(key) {
                Some(Value::Object(next)) if i + 1 < path.len() => here = next,
                Some(v) if i + 1 == path.len() => value = Some(v),
                _ => break,
            }
        }
        let text = match value {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        out.push((name.clone(), text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn invalid_annotations_are_refused() {
        let bad = [
            json!({"properties": {"v": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"v": {"type": "object", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "number", "x-mcp-header": "V"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "A:B"}}}),
            json!({"properties": {"v": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"},
                                  "b": {"type": "string", "x-mcp-header": "x"}}}),
        ];
        for s in bad {
            assert!(annotated(&schema(s.clone())).is_err(), "{s}");
        }
        let good = json!({"properties": {"region": {"type": "string", "x-mcp-header": "Region"},
                                         "n": {"type": "integer", "x-mcp-header": "N"}}});
        assert_eq!(annotated(&schema(good)).map(|a| a.len()), Ok(2));
    }

    #[test]
    fn headers_skip_null_and_absent_arguments() {
        let a = annotated(&schema(json!({"properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "q": {"type": "string"}}})))
        .unwrap_or_default();
        let args = schema(json!({"region": "eu", "verbose": null, "n": 3, "q": "x"}));
        let mut got = headers_for(&a, &args);
        got.sort();
        assert_eq!(
            got,
            vec![("N".into(), "3".into()), ("Region".into(), "eu".into())]
        );
    }
}
