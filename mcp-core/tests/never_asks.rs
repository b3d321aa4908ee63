//! Tools that never ask the client anything skip the `requestState`
//! binding of a 2026-07-28 call (issue 19), and nothing else changes:
//! `#[mcp_tool]` functions that can reach the invoke context (directly, by
//! an alias, or through a pattern) keep their round trips, and a handler
//! that declared it never asks but asks anyway is told it cannot, never a
//! wrong answer. Every request goes in as bytes, the way transports
//! decode it.

mod common;

use common::guard;
use mcp_core::{
    mcp_tool, transport::CallContext, Confirmation, InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Value};

/// Takes no context: can never ask.
#[mcp_tool(description = "Echoes its text")]
async fn plain(text: String) -> String {
    text
}

/// Takes the context: asks.
#[mcp_tool(description = "Asks before deleting")]
async fn careful(ctx: InvokeContext) -> String {
    if ctx.confirm("Delete?").await.is_accepted() {
        "deleted".into()
    } else {
        "kept".into()
    }
}

type Ctx = InvokeContext;

/// Takes the context under another name (the macro cannot tell from the
/// spelling; the compiler can).
#[mcp_tool(description = "Asks through an alias")]
async fn aliased(what: String, c: Ctx) -> String {
    if c.confirm(&format!("Delete {what}?")).await.is_accepted() {
        "deleted".into()
    } else {
        "kept".into()
    }
}

fn server() -> McpServer {
    McpServer::builder()
        .tool(plain::tool())
        .tool(careful::tool())
        .tool(aliased::tool())
        .tool(
            McpToolDef::new(
                "liar",
                "Declares it never asks, then asks",
                json!({"type": "object"}),
                |_args, ctx: InvokeContext| async move {
                    match ctx.confirm("Sure?").await {
                        Confirmation::CannotAsk(why) => format!("not asked: {why}"),
                        other => format!("{other:?}"),
                    }
                },
            )
            .never_asks(),
        )
        .build()
        .expect("server builds")
}

/// A 2026-07-28 `tools/call` from a client that can answer elicitations,
/// sent as bytes; the reply parsed.
async fn call(server: &McpServer, name: &str, arguments: Value) -> Value {
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
    "name": name, "arguments": arguments,
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    }}})
    .to_string();
    let reply = guard(
        name,
        server.handle_frame(request.as_bytes(), &CallContext::new()),
    )
    .await
    .unwrap_or_else(|| panic!("no reply to {request}"));
    serde_json::from_slice(&reply).expect("the reply is JSON")
}

#[tokio::test]
async fn a_tool_without_context_answers_and_one_with_it_still_asks() {
    let server = server();
    let reply = call(&server, "plain", json!({"text": "hi"})).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "hi", "{reply}");

    for (name, args) in [("careful", json!({})), ("aliased", json!({"what": "x"}))] {
        let reply = call(&server, name, args).await;
        assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
        assert!(
            reply["result"]["requestState"].is_string(),
            "{name}: a sealed state for the retry: {reply}"
        );
    }
}

/// A handler that declared it never asks and asks anyway cannot end in
/// `input_required` (there is no `requestState` binding for it). Its
/// `confirm` once ended the call with a `-32603` behind its back; now it
/// learns it could not ask (`CannotAsk(NoRoundTrip)`) and answers itself,
/// never with a consent nobody gave.
#[tokio::test]
async fn a_handler_that_declared_it_never_asks_and_asks_is_told_it_cannot() {
    let reply = call(&server(), "liar", json!({})).await;
    assert_eq!(reply["result"]["resultType"], "complete", "{reply}");
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "not asked: this call cannot ask for input by round trip",
        "{reply}"
    );
}
