//! A small server over Streamable HTTP with sessions: tools `echo`, `slow`
//! (progress, honours cancellation) and `confirm` (asks the user through
//! elicitation).
//!
//! Run: `cargo run -p mcp-core --example http_demo -- --port 8080`
//! (`--host ADDR` to bind elsewhere; the default is 127.0.0.1 and port 0,
//! an ephemeral port). The first line on stdout is the endpoint URL.

use std::time::Duration;

use mcp_core::{serve_http, HttpOptions};

use mcp_core::transport::http::SessionOptions;
use mcp_core::{protocol::CallToolResult, InvokeContext, McpServer, McpToolDef};
use serde_json::{json, Map, Value};

fn echo() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echo the input back",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "What to echo" } },
            "required": ["text"],
        }),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            match args.get("text").and_then(Value::as_str) {
                Some(text) => CallToolResult::text(text),
                None => CallToolResult::error("`text` must be a string"),
            }
        },
    )
}

fn slow() -> McpToolDef {
    McpToolDef::new(
        "slow",
        "Work in steps, reporting progress; stops when cancelled",
        json!({
            "type": "object",
            "properties": {
                "steps": { "type": "integer", "minimum": 1, "maximum": 1000, "default": 5 },
                "delay_ms": { "type": "integer", "minimum": 0, "maximum": 60000, "default": 200 },
            },
        }),
        |args: Map<String, Value>, ctx: InvokeContext| async move {
            let steps = args
                .get("steps")
                .and_then(Value::as_u64)
                .unwrap_or(5)
                .clamp(1, 1000);
            let delay = args
                .get("delay_ms")
                .and_then(Value::as_u64)
                .unwrap_or(200)
                .min(60_000);
            for step in 1..=steps {
                tokio::select! {
                    () = ctx.cancelled() => return CallToolResult::error("cancelled"),
                    () = tokio::time::sleep(Duration::from_millis(delay)) => {}
                }
                let message = format!("step {step} of {steps}");
                ctx.report_progress(step as f64, Some(steps as f64), Some(&message))
                    .await;
            }
            CallToolResult::text(format!("done after {steps} steps"))
        },
    )
}

fn confirm() -> McpToolDef {
    McpToolDef::new(
        "confirm",
        "Ask the user to confirm before acting",
        json!({
            "type": "object",
            "properties": { "action": { "type": "string", "default": "proceed" } },
        }),
        |args: Map<String, Value>, ctx: InvokeContext| async move {
            let action = args
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or("proceed")
                .to_owned();
            if ctx
                .confirm(&format!("Really {action}?"))
                .await
                .is_accepted()
            {
                CallToolResult::text(format!("confirmed: {action}"))
            } else {
                CallToolResult::error("not confirmed")
            }
        },
    )
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match arg(&args, "--port") {
        Some(p) => p
            .parse()
            .map_err(|e| std::io::Error::other(format!("--port {p}: {e}")))?,
        None => 0,
    };
    let host = arg(&args, "--host").unwrap_or_else(|| "127.0.0.1".to_owned());
    let server = McpServer::builder()
        .server_info("http-demo", env!("CARGO_PKG_VERSION"))
        .tool(echo())
        .tool(slow())
        .tool(confirm())
        .build()
        .map_err(std::io::Error::other)?;
    let options = HttpOptions::new()
        .host(host)
        .port(port)
        .sessions(SessionOptions::default());
    let handle = serve_http(server, options).await?;
    println!("{}", handle.url());
    // Serve until killed.
    std::future::pending::<()>().await;
    handle.close().await;
    Ok(())
}
