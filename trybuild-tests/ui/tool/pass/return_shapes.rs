//! Every return shape a tool may have.

use mcp_core::{mcp_tool, Json, McpServer, protocol::{CallToolResult, Content}, handler::IntoToolResult};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

#[derive(Serialize, JsonSchema)]
struct Sum {
    total: i64,
}

/// Owned text.
#[mcp_tool]
fn owned() -> String {
    "owned".to_owned()
}

/// Static text.
#[mcp_tool]
fn borrowed() -> &'static str {
    "static"
}

/// Nothing.
#[mcp_tool]
async fn nothing() {}

/// Unit, spelled out.
#[mcp_tool]
fn unit() -> () {}

/// One content block.
#[mcp_tool]
fn block() -> Content {
    Content::text("block")
}

/// Several content blocks.
#[mcp_tool]
fn blocks() -> Vec<Content> {
    vec![Content::text("a"), Content::text("b")]
}

/// A full result.
#[mcp_tool]
fn full() -> CallToolResult {
    CallToolResult::text("full")
}

/// Structured output.
#[mcp_tool]
async fn sum(values: Vec<i64>) -> Json<Sum> {
    Json(Sum {
        total: values.iter().sum(),
    })
}

/// A fallible tool with a string error.
#[mcp_tool]
fn fallible(fail: bool) -> Result<String, String> {
    if fail {
        Err("failed".into())
    } else {
        Ok("fine".into())
    }
}

/// A fallible tool with structured output and an `std::error::Error`.
#[mcp_tool]
async fn parse(text: String) -> Result<Json<Sum>, std::num::ParseIntError> {
    Ok(Json(Sum {
        total: text.parse()?,
    }))
}

/// A fallible tool returning nothing on success.
#[mcp_tool]
fn check(ok: bool) -> Result<(), std::fmt::Error> {
    if ok {
        Ok(())
    } else {
        Err(std::fmt::Error)
    }
}

/// An opaque return type.
#[mcp_tool]
fn opaque() -> impl IntoToolResult {
    "opaque"
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpServer::builder()
        .tools([
            owned::tool(),
            borrowed::tool(),
            nothing::tool(),
            unit::tool(),
            block::tool(),
            blocks::tool(),
            full::tool(),
            sum::tool(),
            fallible::tool(),
            parse::tool(),
            check::tool(),
            opaque::tool(),
        ])
        .build()
        .expect("valid server");
    let sum_tool = server.list_tools().into_iter().find(|t| t.name == "parse").expect("listed");
    assert!(sum_tool.output_schema.is_some(), "Result<Json<T>, E> has an output schema");
    let r = server
        .call_tool("fallible", json!({"fail": true}))
        .await
        .expect("call");
    assert!(r.is_error());
    let r = server
        .call_tool("sum", json!({"values": [1, 2]}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), r#"{"total":3}"#);
}
