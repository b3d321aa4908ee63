//! The invoke context by value or by reference, in any position, and
//! `State<T>`: none of them is part of the schema.

use std::sync::Arc;

use mcp_core::{mcp_tool, InvokeContext, McpServer, State};
use serde_json::json;

#[derive(Clone)]
struct Greeting(String);

struct Db {
    rows: Vec<String>,
}

/// Context first, by value.
#[mcp_tool]
async fn first(ctx: InvokeContext, text: String) -> String {
    format!("{text}:{}", ctx.is_cancelled())
}

/// Context in the middle, by reference.
#[mcp_tool]
async fn middle(a: i32, ctx: &InvokeContext, b: i32) -> String {
    format!("{}:{}", a + b, ctx.is_cancelled())
}

/// Context last, unused.
#[mcp_tool]
fn last(text: String, _ctx: &InvokeContext) -> String {
    text
}

/// Only the context, ignored with `_`.
#[mcp_tool]
fn only(_: InvokeContext) {}

/// Application state, destructured and not.
#[mcp_tool]
async fn greet(
    State(greeting): State<Greeting>,
    who: String,
    db: State<Arc<Db>>,
    ctx: &InvokeContext,
) -> String {
    let _ = ctx;
    format!("{} {who} ({} rows)", greeting.0, db.0.rows.len())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = McpServer::builder()
        .tool(first::tool())
        .tool(middle::tool())
        .tool(last::tool())
        .tool(only::tool())
        .tool(greet::tool())
        .state(Greeting("Hello".into()))
        .state(Arc::new(Db { rows: vec!["a".into()] }))
        .build()
        .expect("valid server");
    for tool in server.list_tools() {
        for key in ["ctx", "_ctx", "greeting", "db"] {
            assert!(tool.input_schema["properties"].get(key).is_none(), "{key}");
        }
    }
    let r = server
        .call_tool("middle", json!({"a": 1, "b": 2}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "3:false");
    let r = server
        .call_tool("greet", json!({"who": "Ada"}))
        .await
        .expect("call");
    assert_eq!(r.text_content(), "Hello Ada (1 rows)");
}
