//! The server and helpers the client and proxy tests share.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use mcp_core::client::Handlers;
use mcp_core::{protocol::CallToolResult, InvokeContext, McpServer, McpToolDef};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

/// Fails the test instead of hanging it.
pub async fn guard<F: std::future::Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within 20 s"))
}

/// Reports `cancelled` when the `wait` tool's future ends.
pub struct Ended(Arc<mpsc::UnboundedSender<&'static str>>);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.send("cancelled");
    }
}

/// A server whose `wait` tool reports how it ended on `events`.
pub fn server(events: mpsc::UnboundedSender<&'static str>) -> McpServer {
    let any = json!({"type": "object"});
    let events = Arc::new(events);
    McpServer::builder()
        .server_info("client-test", "1.2.3")
        .tool(McpToolDef::new(
            "echo",
            "echoes text",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text(args.get("text").and_then(Value::as_str).unwrap_or_default())
            },
        ))
        .tool(McpToolDef::new(
            "slow",
            "reports progress",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                for i in 1..=3 {
                    ctx.report_progress(f64::from(i), Some(3.0), Some("step")).await;
                }
                CallToolResult::text("done")
            },
        ))
        .tool(McpToolDef::new(
            "confirm",
            "asks the user",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                let yes = ctx.confirm("Proceed?").await.is_accepted();
                CallToolResult::text(if yes { "confirmed" } else { "declined" })
            },
        ))
        .tool(McpToolDef::new(
            "sum",
            "adds a and b into structuredContent; fails on negative numbers",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
            |args: Map<String, Value>, _ctx: InvokeContext| async move {
                let n = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(0);
                let (a, b) = (n("a"), n("b"));
                if a < 0 || b < 0 {
                    return CallToolResult::error("negative numbers are not summed");
                }
                let mut total = Map::new();
                total.insert("total".into(), json!(a + b));
                CallToolResult::text((a + b).to_string()).with_structured(total)
            },
        ))
        .tool(McpToolDef::new(
            "wait",
            "waits until cancelled",
            any,
            move |_args: Map<String, Value>, ctx: InvokeContext| {
                let events = Arc::clone(&events);
                async move {
                    let _ = events.send("started");
                    // The server drops a cancelled call's future (or the
                    // call sees its token): either way this guard reports it.
                    let _ended = Ended(events);
                    ctx.cancelled().await;
                    CallToolResult::text("cancelled")
                }
            },
        ))
        .build()
        .expect("valid server")
}

/// Answers every confirmation with `confirm: true`.
pub fn handlers() -> Handlers {
    Handlers::default().elicitation(|request| async move {
        assert!(
            request.get("message").is_some(),
            "an elicitation message: {request}"
        );
        Ok(json!({"action": "accept", "content": {"confirm": true}}))
    })
}

/// The first text block of a result (a proxied result called in
/// process keeps its blocks raw: they are parsed here).
pub fn text(result: &CallToolResult) -> String {
    let first = match result.content.first() {
        Some(mcp_core::protocol::Content::Raw(raw)) => raw.parse().ok(),
        other => other.cloned(),
    };
    match &first {
        Some(mcp_core::protocol::Content::Text { text, .. }) => text.clone(),
        other => panic!("a text block, got {other:?}"),
    }
}
