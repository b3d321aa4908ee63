//! A demo server with the tools the interop harness expects:
//!
//! - `echo {"text": string}` returns the text;
//! - `slow {"steps"?: integer, "delay_ms"?: integer}` reports progress on
//!   each step and stops when cancelled;
//! - `confirm {"message"?: string}` asks the user through elicitation and
//!   fails closed when it cannot ask.
//!
//! ```sh
//! cargo run --example demo
//! ```

use std::time::Duration;

use mcp_core::{serve_stdio, CallToolResult, InvokeContext, McpServer, McpToolDef};
use serde_json::{json, Map, Value};

fn echo() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echo the input back",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "description": "The text to echo" } },
            "required": ["text"],
        }),
        |args, _ctx: InvokeContext| async move {
            match args.get("text").and_then(Value::as_str) {
                Some(text) => Ok(text.to_owned()),
                None => Err("`text` must be a string"),
            }
        },
    )
}

fn int_arg(args: &Map<String, Value>, key: &str, default: u64, max: u64) -> u64 {
    args.get(key)
        .and_then(Value::as_u64)
        .unwrap_or(default)
        .min(max)
}

fn slow() -> McpToolDef {
    McpToolDef::new(
        "slow",
        "Work through a few steps, reporting progress after each; honours cancellation",
        json!({
            "type": "object",
            "properties": {
                "steps": { "type": "integer", "minimum": 1, "maximum": 100, "description": "How many steps (default 5)" },
                "delay_ms": { "type": "integer", "minimum": 0, "maximum": 10000, "description": "Time per step in milliseconds (default 200)" },
            },
        }),
        |args, ctx: InvokeContext| async move {
            let steps = int_arg(&args, "steps", 5, 100).max(1);
            let delay = Duration::from_millis(int_arg(&args, "delay_ms", 200, 10_000));
            for step in 1..=steps {
                tokio::select! {
                    () = ctx.cancelled() => return CallToolResult::error("cancelled"),
                    () = tokio::time::sleep(delay) => {}
                }
                #[allow(clippy::cast_precision_loss)]
                let (done, total) = (step as f64, steps as f64);
                ctx.report_progress(done, Some(total), Some(&format!("step {step} of {steps}")))
                    .await;
            }
            CallToolResult::text(format!("done after {steps} steps"))
        },
    )
}

fn confirm() -> McpToolDef {
    McpToolDef::new(
        "confirm",
        "Ask the user to confirm before doing something",
        json!({
            "type": "object",
            "properties": { "message": { "type": "string", "description": "The question to ask" } },
        }),
        |args, ctx: InvokeContext| async move {
            let question = args
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("Proceed with the demo action?")
                .to_owned();
            // Fail closed: no elicitation capability means no consent.
            if ctx.confirm(&question).await {
                CallToolResult::text("confirmed")
            } else {
                CallToolResult::error("not confirmed")
            }
        },
    )
}

/// The demo server (also used by the integration tests).
fn server() -> McpServer {
    McpServer::builder()
        .server_info("demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demo server: echo text, watch progress on `slow`, try `confirm`.")
        .tools([echo(), slow(), confirm()])
        .build()
        .unwrap_or_else(|e| panic!("demo server is valid: {e}"))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    serve_stdio(server(), Default::default()).wait().await
}
