//! A demo server with the tools the interop harness expects:
//!
//! - `echo {"text": string}` returns the text;
//! - `slow {"steps"?: integer, "delay_ms"?: integer}` reports progress after
//!   each step and stops when cancelled;
//! - `confirm {"message"?: string}` asks the user through elicitation and
//!   fails closed when it cannot ask;
//! - `big {"kb": integer}` returns that many KiB of text (at most 10,240):
//!   over the server's result limit (100 KiB by default) it is cut, with a
//!   note and a `resource_link` to the whole, readable page by page.
//!
//! Run: `cargo run --example demo`
//! Add `--http 127.0.0.1:8080` to serve over Streamable HTTP instead of stdio.
//! Add `--tool-search` to list `search_tools` and `call_tool` (and the
//! pinned `echo`) instead of every tool (see `mcp_core::tool_search`).
//! Set `MCP_REQUEST_STATE_KEY` (64 hex digits) to the same value on every
//! replica behind a load balancer (see `examples/common`).

mod common;

use std::time::Duration;

use mcp_core::{mcp_tool, protocol::CallToolResult, Confirmation, InvokeContext, McpServer};

/// Echo the input back.
#[mcp_tool(read_only, idempotent)]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

/// Work through a few steps, reporting progress after each; honours cancellation.
#[mcp_tool(read_only)]
async fn slow(
    #[arg(description = "How many steps (default 5, at most 100)")] steps: Option<u32>,
    #[arg(description = "Milliseconds per step (default 200, at most 10000)")] delay_ms: Option<
        u64,
    >,
    ctx: InvokeContext,
) -> CallToolResult {
    let steps = steps.unwrap_or(5).clamp(1, 100);
    let delay = Duration::from_millis(delay_ms.unwrap_or(200).min(10_000));
    for step in 1..=steps {
        tokio::select! {
            () = ctx.cancelled() => return CallToolResult::error("cancelled"),
            () = tokio::time::sleep(delay) => {}
        }
        let message = format!("step {step} of {steps}");
        ctx.report_progress(f64::from(step), Some(f64::from(steps)), Some(&message))
            .await;
    }
    CallToolResult::text(format!("done after {steps} steps"))
}

/// Ask the user to confirm before doing something.
#[mcp_tool]
async fn confirm(
    #[arg(description = "The question to ask")] message: Option<String>,
    ctx: InvokeContext,
) -> Result<&'static str, String> {
    let question = message.unwrap_or_else(|| "Proceed with the demo action?".to_owned());
    // Fail closed: only an explicit yes is consent. A client that cannot be
    // asked has not consented either, and the answer says why.
    match ctx.confirm(&question).await {
        Confirmation::Accepted => Ok("confirmed"),
        Confirmation::Declined => Err("not confirmed: the user declined".to_owned()),
        Confirmation::Cancelled => Err("not confirmed: the user cancelled".to_owned()),
        Confirmation::CannotAsk(why) => Err(format!("not confirmed: cannot ask ({why})")),
    }
}

/// Return that many KiB of numbered lines of text, to try the result size guard.
#[mcp_tool(read_only, idempotent)]
async fn big(#[arg(description = "How many KiB of text (at most 10240)")] kb: u32) -> String {
    let lines = kb.min(10_240) as usize * 16;
    let mut text = String::with_capacity(lines * 64);
    for i in 0..lines {
        // 64 bytes a line: 16 lines a KiB.
        text.push_str(&format!("{i:>10} {:<52}\n", "of the demo's big text"));
    }
    text
}

// Current-thread runtime for stdio, multi-threaded for HTTP (`common::run`).
fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let tool_search = args.iter().any(|a| a == "--tool-search");
    args.retain(|a| a != "--tool-search");
    let builder = McpServer::builder()
        .server_info("demo", env!("CARGO_PKG_VERSION"))
        .instructions("A demo server: echo text, watch progress on `slow`, try `confirm`.")
        .tool(echo::tool())
        .tool(slow::tool())
        .tool(confirm::tool())
        .tool(big::tool());
    let builder = if tool_search {
        builder.tool_search(mcp_core::tool_search::ToolSearch::new().pin(["echo"]))
    } else {
        builder
    };
    // Replicas share one `requestState` key through MCP_REQUEST_STATE_KEY.
    let server = common::with_env_state_key(common::with_telemetry(builder))
        .build()
        .map_err(std::io::Error::other)?;
    common::run_args(server, mcp_core::StdioOptions::default(), args, |o| o)
}
