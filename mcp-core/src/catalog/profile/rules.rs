//! The rules of each profile.

use serde_json::{Map, Value};

use super::{Issue, Profile};
use crate::catalog::change::pointer;

pub(super) fn check(profile: Profile, tools: &[Value], server: &str, out: &mut Vec<Issue>) {
    match profile {
        Profile::OpenAiStrict => {
            cap(
                tools,
                128,
                "openai.tools",
                "OpenAI accepts at most 128 tools in one request",
                out,
            );
            for tool in tools {
                let t = Tool::of(tool);
                name(&t, 64, false, "openai.name", out);
                if t.description.chars().count() > 1024 {
                    t.issue(
                        out,
                        "/description",
                        "openai.description",
                        format!(
                            "{} characters; OpenAI refuses a function description over 1024",
                            t.description.chars().count()
                        ),
                    );
                }
                strict_schema(&t, out);
            }
        }
        Profile::Gemini => {
            for tool in tools {
                let t = Tool::of(tool);
                gemini_name(&t, out);
                root_object(&t, "gemini.root", out);
                walk(t.schema, "/inputSchema", &mut |s, at| {
                    gemini_schema(&t, s, at, out)
                });
            }
        }
        Profile::Anthropic => {
            for tool in tools {
                let t = Tool::of(tool);
                name(&t, 64, false, "anthropic.name", out);
                root_object(&t, "anthropic.root", out);
                for key in ["oneOf", "allOf", "anyOf"] {
                    if t.schema.get(key).is_some() {
                        t.issue(out, &format!("/inputSchema/{key}"), "anthropic.top-level-combinator",
                            format!("`input_schema` may not use `{key}` at its top level; describe one object"));
                    }
                }
            }
        }
        Profile::Mcp => {
            for tool in tools {
                name(&Tool::of(tool), 128, true, "mcp.name", out);
            }
        }
        Profile::Cursor => {
            cap(
                tools,
                40,
                "cursor.tools",
                "Cursor uses at most 40 tools over all its servers",
                out,
            );
            for tool in tools {
                let t = Tool::of(tool);
                let len = server.chars().count() + t.name.chars().count();
                if len > 60 {
                    t.issue(out, "/name", "cursor.name-length",
                        format!("server and tool name are {len} characters together; Cursor keeps them within 60"));
                }
            }
        }
        Profile::VsCode => cap(
            tools,
            128,
            "vscode.tools",
            "VS Code sends at most 128 tools in one request",
            out,
        ),
    }
}

/// A listing item's parts.
struct Tool<'a> {
    name: &'a str,
    description: &'a str,
    schema: &'a Value,
}

impl<'a> Tool<'a> {
    fn of(tool: &'a Value) -> Self {
        Self {
            name: tool.get("name").and_then(Value::as_str).unwrap_or(""),
            description: tool
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or(""),
            schema: tool.get("inputSchema").unwrap_or(&Value::Null),
        }
    }

    fn issue(&self, out: &mut Vec<Issue>, path: &str, rule: &'static str, message: String) {
        out.push(Issue {
            tool: self.name.to_owned(),
            path: path.to_owned(),
            rule,
            message,
        });
    }
}

fn cap(tools: &[Value], max: usize, rule: &'static str, why: &str, out: &mut Vec<Issue>) {
    if tools.len() > max {
        out.push(Issue {
            tool: String::new(),
            path: String::new(),
            rule,
            message: format!("{} tools listed; {why}", tools.len()),
        });
    }
}

/// `^[a-zA-Z0-9_-]{1,max}$`, plus `.` when `dots`.
fn name(t: &Tool<'_>, max: usize, dots: bool, rule: &'static str, out: &mut Vec<Issue>) {
    let len = t.name.chars().count();
    let bad = t
        .name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-' || (dots && *c == '.')));
    if len == 0 || len > max {
        t.issue(
            out,
            "/name",
            rule,
            format!("a name of {len} characters; 1 to {max} allowed"),
        );
    }
    if let Some(c) = bad {
        let allowed = if dots {
            "letters, digits, `_`, `-` and `.`"
        } else {
            "letters, digits, `_` and `-`"
        };
        t.issue(
            out,
            "/name",
            rule,
            format!("character {c:?} in the name; only {allowed}"),
        );
    }
}

/// Gemini: starts with a letter or `_`; letters, digits, `_ . : -`; at most 64.
fn gemini_name(t: &Tool<'_>, out: &mut Vec<Issue>) {
    let first_ok = t
        .name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = t
        .name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.:-".contains(c));
    if !first_ok || !rest_ok || t.name.chars().count() > 64 {
        t.issue(out, "/name", "gemini.name",
            "a name must start with a letter or `_`, use only letters, digits, `_ . : -`, and have at most 64 characters".into());
    }
}

fn root_object(t: &Tool<'_>, rule: &'static str, out: &mut Vec<Issue>) {
    if t.schema.get("type").and_then(Value::as_str) != Some("object") {
        t.issue(
            out,
            "/inputSchema/type",
            rule,
            "the input schema's root must be `\"type\": \"object\"`".into(),
        );
    }
}

/// Calls `f` on every subschema of `schema` (itself included) with its path.
pub(super) fn walk(schema: &Value, path: &str, f: &mut dyn FnMut(&Map<String, Value>, &str)) {
    let Some(map) = schema.as_object() else {
        return;
    };
    f(map, path);
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (name, sub) in props {
            walk(sub, &format!("{path}/properties/{}", pointer(name)), f);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub) = map.get(key) {
            walk(sub, &format!("{path}/{key}"), f);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(list) = map.get(key).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                walk(sub, &format!("{path}/{key}/{i}"), f);
            }
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(defs) = map.get(key).and_then(Value::as_object) {
            for (name, sub) in defs {
                walk(sub, &format!("{path}/{key}/{}", pointer(name)), f);
            }
        }
    }
}

fn is_object(s: &Map<String, Value>) -> bool {
    match s.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => s.contains_key("properties"),
    }
}

/// Keywords strict mode refuses (the guide's "not supported" lists).
const STRICT_UNSUPPORTED: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "prefixItems",
];

fn strict_schema(t: &Tool<'_>, out: &mut Vec<Issue>) {
    root_object(t, "openai.strict.root-object", out);
    if t.schema.get("anyOf").is_some() {
        t.issue(
            out,
            "/inputSchema/anyOf",
            "openai.strict.root-object",
            "the root may not be `anyOf`".into(),
        );
    }
    let (mut properties, mut enum_values, mut text) = (0usize, 0usize, 0usize);
    walk(t.schema, "/inputSchema", &mut |s, at| {
        let depth = at.matches("/properties/").count() + at.matches("/items").count();
        if depth > 10 {
            t.issue(
                out,
                at,
                "openai.strict.nesting",
                format!("nested {depth} levels deep; strict mode allows 10"),
            );
        }
        for key in STRICT_UNSUPPORTED {
            if s.contains_key(*key) {
                t.issue(
                    out,
                    &format!("{at}/{key}"),
                    "openai.strict.keyword",
                    format!("`{key}` is not supported in strict mode"),
                );
            }
        }
        if let Some(values) = s.get("enum").and_then(Value::as_array) {
            enum_values += values.len();
            text += values
                .iter()
                .filter_map(Value::as_str)
                .map(str::len)
                .sum::<usize>();
        }
        if let Some(Value::String(c)) = s.get("const") {
            text += c.len();
        }
        if !is_object(s) {
            return;
        }
        if s.get("additionalProperties") != Some(&Value::Bool(false)) {
            t.issue(out, &format!("{at}/additionalProperties"), "openai.strict.additional-properties",
                "every object needs `\"additionalProperties\": false` (see catalog::profile::strict::rewrite)".into());
        }
        let props = s.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for name in props.into_iter().flat_map(|p| p.keys()) {
            properties += 1;
            text += name.len();
            if !required.contains(&name.as_str()) {
                t.issue(out, &format!("{at}/properties/{}", pointer(name)), "openai.strict.required",
                    format!("`{name}` must be listed in `required`; make it nullable for \"optional\" (see catalog::profile::strict::rewrite)"));
            }
        }
    });
    if properties > 5000 {
        t.issue(
            out,
            "/inputSchema",
            "openai.strict.properties",
            format!("{properties} object properties; strict mode allows 5000"),
        );
    }
    if enum_values > 1000 {
        t.issue(
            out,
            "/inputSchema",
            "openai.strict.enum-values",
            format!("{enum_values} enum values; strict mode allows 1000"),
        );
    }
    if text > 120_000 {
        t.issue(
            out,
            "/inputSchema",
            "openai.strict.string-size",
            format!(
                "{text} characters of names, enum and const values; strict mode allows 120,000"
            ),
        );
    }
}

/// The `Schema` fields of the Gemini API (an OpenAPI 3.0 subset).
const GEMINI_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "items",
    "minimum",
    "maximum",
];

fn gemini_schema(t: &Tool<'_>, s: &Map<String, Value>, at: &str, out: &mut Vec<Issue>) {
    for key in s.keys().filter(|k| !GEMINI_FIELDS.contains(&k.as_str())) {
        t.issue(
            out,
            &format!("{at}/{}", pointer(key)),
            "gemini.keyword",
            format!("`{key}` is not a field of Gemini's Schema object"),
        );
    }
    match s.get("type") {
        Some(Value::Array(_)) => t.issue(
            out,
            &format!("{at}/type"),
            "gemini.type",
            "`type` must be one type; use `nullable: true` instead of a null member".into(),
        ),
        Some(Value::String(ty)) if s.contains_key("enum") && ty != "string" => t.issue(
            out,
            &format!("{at}/enum"),
            "gemini.enum",
            format!("`enum` applies to strings only, not `{ty}`"),
        ),
        _ => {}
    }
}
