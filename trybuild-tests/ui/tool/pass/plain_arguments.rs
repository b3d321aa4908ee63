//! Plain arguments, async and sync functions, optional arguments, argument
//! descriptions, raw identifiers; the functions stay callable as written.

use mcp_core::{mcp_tool, McpServer};
use serde_json::json;

/// Echo the input back.
#[mcp_tool]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

/// Add two numbers, optionally scaled.
#[mcp_tool]
fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
    scale: Option<i64>,
) -> String {
    (a + b).saturating_mul(scale.unwrap_or(1)).to_string()
}

/// Arguments of every scalar-ish shape, named with a keyword and a `mut`.
#[mcp_tool]
fn shapes(
    r#type: String,
    mut count: u8,
    ratio: f64,
    flags: Vec<bool>,
    pair: (u32, u32),
    tags: std::collections::BTreeMap<String, String>,
    extra: Option<serde_json::Value>,
) -> String {
    count = count.saturating_add(1);
    format!("{type} {count} {ratio} {flags:?} {pair:?} {tags:?} {extra:?}")
}

/// No arguments at all.
#[mcp_tool]
pub(crate) fn ping() -> &'static str {
    "pong"
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // The functions are unchanged.
    assert_eq!(echo("hi".into()).await, "hi");
    assert_eq!(add(2, 3, Some(10)), "50");
    assert_eq!(ping(), "pong");

    let server = McpServer::builder()
        .tool(echo::tool())
        .tool(add::tool())
        .tool(shapes::tool())
        .tool(ping::tool())
        .build()
        .expect("valid server");
    let tools = server.list_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 4);
    let add_tool = server.list_tools().into_iter().find(|t| t.name == "add").expect("listed");
    let schema = serde_json::to_value(&add_tool.input_schema).expect("serializes");
    assert_eq!(schema["required"], json!(["a", "b"]));
    assert_eq!(schema["properties"]["a"]["description"], "The first number.");
    let shapes_tool = server.list_tools().into_iter().find(|t| t.name == "shapes").expect("listed");
    assert!(shapes_tool.input_schema["properties"].get("type").is_some());
    let r = server
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "5");
}
