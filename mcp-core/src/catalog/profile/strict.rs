//! The OpenAI strict-mode rewrite: every object closed
//! (`additionalProperties: false`), every property required, optional ones
//! made nullable — and the way back, so the tool still receives exactly
//! the arguments its own schema describes.
//!
//! A model in strict mode sends `null` for an optional property it leaves
//! out; [`Restore::apply`] removes those nulls again (only where the
//! original schema did not itself allow `null`), so an argument object valid
//! under the original schema reaches the tool unchanged. A schema with an
//! open map (`additionalProperties` `true` or a schema) or a keyword strict
//! mode lacks has no faithful rewrite: [`rewrite`] refuses it, naming the paths.
//!
//! [`StrictTools`] serves the rewrite: an interceptor that rewrites
//! `tools/list` and restores each call's arguments before they are parsed.
//!
//! ```
//! use mcp_core::catalog::profile::strict;
//! use serde_json::json;
//!
//! let schema = json!({"type": "object", "properties": {
//!     "city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]});
//! let strict = strict::rewrite(&schema).expect("a faithful rewrite");
//! assert_eq!(strict.schema["required"], json!(["city", "days"]));
//! assert_eq!(strict.schema["properties"]["days"]["type"], json!(["integer", "null"]));
//! let mut sent = json!({"city": "Oslo", "days": null}); // what a strict model sends
//! strict.restore.apply(&mut sent);
//! assert_eq!(sent, json!({"city": "Oslo"})); // what the tool expects
//! ```

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::{json, Map, Value};

use crate::catalog::change::pointer;
use crate::intercept::Answer;
use crate::intercept::{Hook, Interceptor, Next, Operation, Operations, Outcome, Request};

/// A schema rewritten for strict mode, and how to map arguments back.
#[derive(Debug, Clone)]
pub struct Strict {
    /// The strict-mode schema.
    pub schema: Value,
    /// Undoes what the rewrite asks a model to send.
    pub restore: Restore,
}

/// Where the rewrite made properties nullable: nulls to drop there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restore {
    /// Properties made nullable at this level (a `null` means "left out").
    nulls: Vec<String>,
    /// Restores of nested objects, by property.
    properties: BTreeMap<String, Restore>,
    /// The restore of each array item.
    items: Option<Box<Restore>>,
}

impl Restore {
    fn is_empty(&self) -> bool {
        self.nulls.is_empty() && self.properties.is_empty() && self.items.is_none()
    }

    /// Removes the nulls a strict model sent for left-out properties.
    pub fn apply(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for name in &self.nulls {
                    if map.get(name) == Some(&Value::Null) {
                        map.remove(name);
                    }
                }
                for (name, inner) in &self.properties {
                    if let Some(v) = map.get_mut(name) {
                        inner.apply(v);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(inner) = &self.items {
                    items.iter_mut().for_each(|v| inner.apply(v));
                }
            }
            _ => {}
        }
    }
}

/// Rewrites `schema` for strict mode.
///
/// # Errors
/// The paths where no faithful rewrite exists (an open map, a keyword
/// strict mode does not support).
pub fn rewrite(schema: &Value) -> Result<Strict, Vec<String>> {
    let mut problems = Vec::new();
    let (schema, restore) = object(schema, "", &mut problems);
    if problems.is_empty() {
        Ok(Strict { schema, restore })
    } else {
        Err(problems)
    }
}

const NO_REWRITE: &[&str] = &[
    "allOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "propertyNames",
    "unevaluatedProperties",
    "dependentSchemas",
    "dependentRequired",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "contains",
];

fn object(schema: &Value, at: &str, problems: &mut Vec<String>) -> (Value, Restore) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{at}: a boolean schema has no strict form"));
        return (schema.clone(), Restore::default());
    };
    let mut out = map.clone();
    let mut restore = Restore::default();
    for key in NO_REWRITE.iter().filter(|k| map.contains_key(**k)) {
        problems.push(format!("{at}/{key}: not supported in strict mode"));
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut new_props = Map::new();
        for (name, sub) in props {
            let (mut sub_schema, sub_restore) =
                object(sub, &format!("{at}/properties/{}", pointer(name)), problems);
            if !sub_restore.is_empty() {
                restore.properties.insert(name.clone(), sub_restore);
            }
            if !required.contains(&name.as_str()) && !allows_null(&sub_schema) {
                sub_schema = nullable(sub_schema);
                restore.nulls.push(name.clone());
            }
            new_props.insert(name.clone(), sub_schema);
        }
        out.insert(
            "required".into(),
            Value::Array(props.keys().map(|k| Value::String(k.clone())).collect()),
        );
        out.insert("properties".into(), Value::Object(new_props));
    }
    if is_object(map) {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {
                out.insert("additionalProperties".into(), Value::Bool(false));
            }
            Some(_) => problems.push(format!(
                "{at}/additionalProperties: an open map has no strict form"
            )),
        }
        if !map.contains_key("properties") {
            out.insert("properties".into(), json!({}));
            out.insert("required".into(), json!([]));
        }
    }
    if let Some(items) = map.get("items") {
        let (items, item_restore) = object(items, &format!("{at}/items"), problems);
        out.insert("items".into(), items);
        if !item_restore.is_empty() {
            restore.items = Some(Box::new(item_restore));
        }
    }
    if let Some(alts) = map.get("anyOf").and_then(Value::as_array) {
        let alts = alts
            .iter()
            .enumerate()
            .map(|(i, alt)| object(alt, &format!("{at}/anyOf/{i}"), problems).0)
            .collect();
        out.insert("anyOf".into(), Value::Array(alts));
    }
    (Value::Object(out), restore)
}

fn is_object(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties")
}

fn allows_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|alts| alts.iter().any(allows_null)),
    }
}

/// `schema` or `null`.
fn nullable(mut schema: Value) -> Value {
    let Some(map) = schema.as_object_mut() else {
        return schema;
    };
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            map.insert("type".into(), json!([t, "null"]));
        }
        Some(Value::Array(ts)) => ts.push(json!("null")),
        _ => return json!({"anyOf": [schema, {"type": "null"}]}),
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.push(Value::Null);
    }
    schema
}

/// An interceptor serving strict-mode schemas: `tools/list` answers with
/// each tool's [`rewrite`] (tools without a faithful one are listed as they
/// are), and `tools/call` arguments are [restored](Restore::apply) before
/// the tool's own checks run. Cheap to clone; [`learn`](Self::learn) the
/// server once built so calls are restored even before any listing.
///
/// ```
/// use mcp_core::catalog::profile::strict::StrictTools;
/// let strict = StrictTools::new();
/// let server = mcp_core::McpServer::builder()
///     .interceptor(strict.clone())
///     .build()
///     .expect("builds");
/// strict.learn(&server);
/// ```
#[derive(Debug, Clone, Default)]
pub struct StrictTools {
    restores: Arc<RwLock<HashMap<String, Restore>>>,
}

impl StrictTools {
    /// An interceptor that knows no tool yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Learns the restore of every tool of `server`.
    pub fn learn(&self, server: &crate::McpServer) {
        let tools: Vec<Value> = server
            .list_tools()
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        self.rewrite_listing(tools);
    }

    fn rewrite_listing(&self, tools: Vec<Value>) -> Vec<Value> {
        let mut restores = self
            .restores
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        tools
            .into_iter()
            .map(|mut tool| {
                let name = tool
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                if let Some(Ok(strict)) = tool.get("inputSchema").map(rewrite) {
                    tool["inputSchema"] = strict.schema;
                    restores.insert(name, strict.restore);
                }
                tool
            })
            .collect()
    }
}

impl Interceptor for StrictTools {
    fn operations(&self) -> Operations {
        Operation::ListTools | Operation::CallTool
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        if req.operation() == Operation::ListTools {
            self.list_tools(req, next)
        } else {
            self.call_tool(req, next)
        }
    }
}

impl StrictTools {
    /// Rewrites the listing's schemas to the strict form.
    fn list_tools<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        Hook::wrap(async move {
            match next.run(req).await {
                Outcome::Answer(answer) => {
                    let mut result = match answer {
                        Answer::ToolListing(listing) => json!({ "tools": listing.to_json() }),
                        Answer::Json(json) => json,
                        other => return Outcome::Answer(other),
                    };
                    if let Some(Value::Array(tools)) = result.get_mut("tools") {
                        *tools = self.rewrite_listing(std::mem::take(tools));
                    }
                    Outcome::Answer(Answer::Json(result))
                }
                other => other,
            }
        })
    }

    /// Puts back what the strict form of the call's schema changed.
    fn call_tool<'a>(&'a self, mut req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let restore = req.tool_name().and_then(|name| {
            self.restores
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .get(name)
                .cloned()
        });
        if let (Some(restore), Some(args)) = (restore, req.arguments_mut()) {
            let mut value = Value::Object(std::mem::take(args));
            restore.apply(&mut value);
            if let Value::Object(map) = value {
                *args = map;
            }
        }
        next.pass(req)
    }
}
