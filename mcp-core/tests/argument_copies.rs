//! How many copies of a large argument a `tools/call` holds at its peak,
//! bytes in to bytes out (`McpServer::handle_frame`, as the transports
//! call it), in both eras, for a tool that may ask the client something
//! (its 2026-07-28 first round keeps what a `requestState` binds) and for
//! a macro tool (its arguments checked, then moved into its typed
//! arguments). One test: the allocator's counters are process-wide.

#[path = "../benches/support/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::Ordering;

use counting_alloc::{reset_peak, PEAK};
use mcp_core::{
    mcp_tool, protocol::CallToolResult, transport::CallContext, InvokeContext, McpServer,
    McpToolDef,
};
use serde_json::{json, Map, Value};

const MIB: usize = 1 << 20;
/// The envelope, ids and allocator rounding around the copies.
const ALLOWANCE: usize = 64 * 1024;

/// Echoes `text` back, from the arguments object (a tool that may ask).
fn echo_map() -> McpToolDef {
    McpToolDef::new(
        "echo_map",
        "Echo the text",
        json!({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            match args.get("text").and_then(Value::as_str) {
                Some(text) => CallToolResult::text(text),
                None => CallToolResult::error("`text` must be a string"),
            }
        },
    )
}

/// The length of `text` (a macro tool: no context).
#[mcp_tool]
async fn len(text: String) -> String {
    text.len().to_string()
}

/// Echoes `text` back (a macro tool: no context).
#[mcp_tool]
async fn echo(text: String) -> String {
    text
}

#[test]
fn a_large_argument_is_held_at_most_twice() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let server = McpServer::builder()
        .server_info("copies", "0")
        // Counts the copies of an echoed argument: the answer is sent whole.
        .no_result_limit()
        .tool(echo_map())
        .tool(len::tool())
        .tool(echo::tool())
        .build()
        .expect("server");
    let ctx = CallContext::new();
    let big = "x".repeat(MIB);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {"form": {}}, "roots": {}, "sampling": {}}});
    // (tool, copies of the argument it may hold at its peak)
    for (tool, copies) in [("echo_map", 2), ("len", 1), ("echo", 2)] {
        for modern in [false, true] {
            let mut message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": tool, "arguments": {"text": big}}});
            if modern {
                message["params"]["_meta"] = meta.clone();
            }
            let bytes = message.to_string().into_bytes();
            // Warm-up: one-time allocations are not counted.
            let warm = rt.block_on(server.handle_frame(&bytes, &ctx));
            assert!(warm.is_some_and(|out| !out.is_empty()));
            let base = reset_peak();
            let out = rt.block_on(server.handle_frame(&bytes, &ctx));
            let peak = PEAK.load(Ordering::Relaxed) - base;
            let reply: Value = serde_json::from_slice(&out.unwrap_or_default()).unwrap_or_default();
            assert_eq!(reply["result"]["isError"], Value::Null, "{tool}: {reply}");
            assert!(
                peak <= copies * MIB + ALLOWANCE,
                "{tool} (modern: {modern}) held {peak} bytes beyond its input: more than {copies} copies"
            );
        }
    }
}
