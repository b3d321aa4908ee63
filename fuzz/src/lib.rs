//! The fixture the fuzz targets share: one server with a few tools,
//! resources (a template among them) and a prompt, covering both protocol
//! eras, progress, logging, elicitation, multi round-trip `input` and
//! completion; a current-thread runtime with a paused clock (timers fire as
//! soon as the runtime is idle, so the targets' time bounds cost no real
//! time); and the JSON checks the targets assert.
//!
//! No handler panics on purpose: libFuzzer aborts on any panic (even one
//! mcp-core catches), so a panic reported by a target is one in mcp-core or
//! in the target's own assertion.

use std::sync::OnceLock;

use mcp_core::{
    context::InputRequest,
    handler::{CompletionRequest, PromptArgs, ResourceRequest},
    protocol::{CallToolResult, GetPromptResult, LoggingLevel, PromptArgument, PromptMessage},
    transport::{StateKey, StateKeys},
    InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpToolDef,
};
use serde_json::{json, Map, Value};

/// Echoes its text (declared with the macro: typed, schema-checked arguments).
#[mcp_core::mcp_tool(name = "echo")]
async fn echo(text: String) -> String {
    text
}

/// Adds two integers (typed numeric arguments).
#[mcp_core::mcp_tool(name = "add")]
async fn add(a: i64, b: i64) -> String {
    a.wrapping_add(b).to_string()
}

/// Most progress steps a call may ask for (keeps one input cheap).
const MAX_STEPS: u64 = 8;

/// Builds the server the targets drive. Deterministic: the `requestState`
/// key is fixed, so a reproducer replays the same way.
///
/// # Panics
/// If the fixture is invalid (a bug in this file, caught at the first run).
#[must_use]
pub fn build_server() -> McpServer {
    let any = json!({"type": "object"});
    let key = StateKey::new("fuzz", [7u8; 32]).unwrap_or_else(|e| panic!("state key: {e}"));
    McpServer::builder()
        .server_info("fuzz", "0.0.0")
        .instructions("A server for fuzzing.")
        .request_state_keys(StateKeys::new(key, vec![]))
        .logging()
        .resource_subscriptions()
        .completion(|req: CompletionRequest, _ctx: InvokeContext| async move {
            Ok((0..3).map(|i| format!("{}{i}", req.value)).collect())
        })
        .tool(echo::tool())
        .tool(add::tool())
        .tool(McpToolDef::new(
            "progress",
            "reports progress and logs, then answers",
            any.clone(),
            |args: Map<String, Value>, ctx: InvokeContext| async move {
                let steps = args
                    .get("steps")
                    .and_then(Value::as_u64)
                    .unwrap_or(2)
                    .min(MAX_STEPS);
                for i in 1..=steps {
                    ctx.report_progress(i as f64, Some(steps as f64), Some("step"))
                        .await;
                    ctx.log(LoggingLevel::Info, Some("fuzz"), json!({"step": i}))
                        .await;
                }
                CallToolResult::text(format!("done {steps}"))
            },
        ))
        .tool(McpToolDef::new(
            "confirm",
            "asks the user to confirm (legacy elicitation)",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                let yes = ctx.confirm("Proceed?").await.is_accepted();
                CallToolResult::text(if yes { "confirmed" } else { "declined" })
            },
        ))
        .tool(McpToolDef::new(
            "ask",
            "asks a question through input (multi round-trip on 2026-07-28)",
            any.clone(),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                let schema = json!({"type": "object",
                    "properties": {"name": {"type": "string"}}, "required": ["name"]});
                let asked = ctx
                    .input(vec![InputRequest::elicit(
                        "name",
                        json!({"message": "Your name?", "requestedSchema": schema}),
                    )])
                    .await;
                match asked {
                    Ok(answers) => CallToolResult::text(Value::Object(answers).to_string()),
                    Err(e) => CallToolResult::error(e.message),
                }
            },
        ))
        .tool(McpToolDef::new(
            "fail",
            "always a tool error",
            any,
            |_args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::error("failed on purpose")
            },
        ))
        .resource(
            McpResourceDef::new(
                "demo://text",
                "Text",
                |_r: ResourceRequest, _c: InvokeContext| async { "hello" },
            )
            .with_mime_type("text/plain")
            .with_description("Some text"),
        )
        .resource(McpResourceDef::new(
            "demo://blob",
            "Blob",
            |_r: ResourceRequest, _c: InvokeContext| async { vec![0u8, 1, 2, 255] },
        ))
        .resource(McpResourceDef::template(
            "demo://item/{id}",
            "Item",
            |r: ResourceRequest, _c: InvokeContext| async move {
                format!("item {}", r.vars.get("id").map_or("", String::as_str))
            },
        ))
        .prompt(
            McpPromptDef::new(
                "greet",
                |args: PromptArgs, _ctx: InvokeContext| async move {
                    let who = args.get("who").map_or("nobody", String::as_str);
                    let tone = args.get("tone").map_or("plain", String::as_str);
                    GetPromptResult::new(vec![PromptMessage::user(format!("Hi {who} ({tone})"))])
                },
            )
            .with_description("A greeting")
            .with_arguments(vec![
                PromptArgument::required("who", "Name to greet"),
                PromptArgument::optional("tone", "How to greet"),
            ]),
        )
        .build()
        .unwrap_or_else(|e| panic!("fixture server: {e}"))
}

/// A current-thread runtime with a paused clock: when every task waits,
/// time jumps to the next timer, so drain deadlines and the targets' own
/// time bounds pass at once (a busy loop is caught by libFuzzer's
/// `-timeout` instead).
///
/// # Panics
/// If the runtime cannot be built.
#[must_use]
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// The runtime and server built once per fuzzing process.
pub fn shared() -> &'static (tokio::runtime::Runtime, McpServer) {
    static SHARED: OnceLock<(tokio::runtime::Runtime, McpServer)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let rt = runtime();
        // Built inside the runtime: the server may spawn or use timers.
        let server = rt.block_on(async { build_server() });
        (rt, server)
    })
}

/// Panics unless `bytes` is one JSON value (the reply of `what`).
///
/// # Panics
/// When `bytes` is not valid JSON: that is the finding.
pub fn assert_json(what: &str, input: &[u8], bytes: &[u8]) -> Value {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => v,
        Err(e) => panic!(
            "{what}: reply is not JSON ({e})\n  input: {}\n  reply: {}",
            String::from_utf8_lossy(input),
            String::from_utf8_lossy(bytes)
        ),
    }
}

/// Panics unless `reply` is a JSON-RPC message or a batch of them (an object
/// with `"jsonrpc": "2.0"`, or a non-empty array of such objects).
///
/// # Panics
/// When the reply is JSON but no JSON-RPC message.
pub fn assert_jsonrpc(what: &str, input: &[u8], reply: &Value) {
    let one = |m: &Value| m.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    let ok = match reply {
        Value::Array(items) => !items.is_empty() && items.iter().all(one),
        other => one(other),
    };
    assert!(
        ok,
        "{what}: reply is not a JSON-RPC message\n  input: {}\n  reply: {reply}",
        String::from_utf8_lossy(input)
    );
}
