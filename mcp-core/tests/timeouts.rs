//! Limits a client cannot exceed: a legacy client that never answers a
//! server→client request does not hold the asking call (and its slot) for
//! ever — after `client_request_timeout` the call gets a clear error — and a
//! `progressToken` is bounded in size.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_core::{
    context::{InputRequest, Outbound},
    transport::{CallContext, Session},
    InvokeContext, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// Takes every server→client message and never answers.
struct Silent;

#[async_trait]
impl Outbound for Silent {
    async fn send(&self, _message: Value) -> bool {
        true
    }
}

fn server(timeout: Duration) -> McpServer {
    McpServer::builder()
        .client_request_timeout(timeout)
        .tool(McpToolDef::new(
            "ask",
            "asks the user",
            json!({"type": "object"}),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                let question = InputRequest::elicit(
                    "q",
                    json!({"message": "ok?", "requestedSchema": {"type": "object", "properties": {}}}),
                );
                match ctx.input(vec![question]).await {
                    Ok(answers) => format!("answered: {answers:?}"),
                    Err(e) => format!("error {}: {}", e.code, e.message),
                }
            },
        ))
        .build()
        .expect("valid server")
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_elicitation_ends_with_a_clear_error() {
    let server = server(Duration::from_secs(30));
    let ctx = CallContext::new()
        .with_session(Session::new())
        .with_outbound(Arc::new(Silent));
    let init = server
        .handle_message(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "silent", "version": "0"}}}),
            &ctx,
        )
        .await
        .expect("initialize answered");
    assert!(init.get("result").is_some(), "{init}");
    // The paused clock jumps to the timeout once nothing else can run.
    let reply = server
        .handle_message(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "ask"}}),
            &ctx,
        )
        .await
        .expect("the call is answered");
    assert_eq!(
        reply["result"]["content"][0]["text"],
        "error -32603: the client did not answer `elicitation/create` within 30 s",
        "{reply}"
    );
    assert_eq!(ctx.session.as_ref().map(Session::inflight_len), Some(0));
}

/// Every progress notification repeats the request's `progressToken`, so a
/// huge one is refused before the call runs rather than multiplied.
#[tokio::test]
async fn an_oversized_progress_token_is_refused() {
    let server = server(Duration::from_secs(30));
    let ctx = CallContext::new()
        .with_session(Session::new())
        .with_outbound(Arc::new(Silent));
    let call = |id: i64, token: String| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "ask", "_meta": {"progressToken": token}}})
    };
    let reply = server
        .handle_message(call(1, "t".repeat(257)), &ctx)
        .await
        .expect("answered");
    assert_eq!(
        reply["error"],
        json!({"code": -32602, "message": "`progressToken` is longer than 256 bytes"}),
        "{reply}"
    );
    // At the limit the call runs (it cannot ask: no elicitation declared).
    let reply = server
        .handle_message(call(2, "t".repeat(256)), &ctx)
        .await
        .expect("answered");
    assert!(reply.get("result").is_some(), "{reply}");
}
