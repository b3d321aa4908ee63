// The imports, constants and helpers shared by the dispatcher test files
// (dispatcher.rs, dispatcher_resources_prompts.rs, dispatcher_in_flight.rs),
// brought into each with `include!`: they were one file, split by what the
// tests exercise.

use common::{ask, guard, req};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::{BuildError, CancelToken, InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpServerBuilder, McpToolDef, transport::{CallContext, Session}, protocol::{CallToolResult, ErrorObject, PromptArgument, PromptMessage, ResourceContents}, context::{ElicitResponse, Outbound, ProgressUpdate}, handler::{PromptArgs, ResourceRequest}};
use mcp_core::{Confirmation, Elicit, context::{CannotAsk, ProgressSink}};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

fn note(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

fn call_req(id: impl Into<Value>, name: &str, args: Value) -> Value {
    req(id, "tools/call", json!({"name": name, "arguments": args}))
}

/// Sends one message and expects no reply.
async fn tell(server: &McpServer, ctx: &CallContext, message: Value) {
    let shown = message.to_string();
    let reply = guard(&shown, server.handle_message(message, ctx)).await;
    assert_eq!(reply, None, "expected no reply to {shown}");
}

/// The `result` of a successful response (panics on an error response).
fn result(reply: &Value) -> &Value {
    assert_eq!(reply["jsonrpc"], "2.0", "not a JSON-RPC response: {reply}");
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    reply.get("result").expect("response has a result")
}

/// `(code, message)` of an error response (panics on a success).
fn error(reply: &Value) -> (i64, String) {
    assert_eq!(reply["jsonrpc"], "2.0", "not a JSON-RPC response: {reply}");
    assert!(reply.get("result").is_none(), "expected an error: {reply}");
    let err = reply.get("error").expect("response has an error");
    (
        err["code"].as_i64().expect("numeric error code"),
        err["message"]
            .as_str()
            .expect("string error message")
            .to_owned(),
    )
}

/// The concatenated text blocks of a `tools/call` result value.
fn text_of(result: &Value) -> String {
    let parsed: CallToolResult =
        serde_json::from_value(result.clone()).expect("a well-formed CallToolResult");
    parsed.text_content()
}

/// Calls a tool over `handle_message` and returns the text of a successful result.
async fn call_text(server: &McpServer, ctx: &CallContext, name: &str, args: Value) -> String {
    let reply = ask(server, ctx, call_req(1, name, args)).await;
    let res = result(&reply);
    assert_ne!(res["isError"], true, "tool reported an error: {reply}");
    text_of(res)
}

fn build(builder: McpServerBuilder) -> McpServer {
    builder.build().expect("server builds")
}

fn echo_tool() -> McpToolDef {
    McpToolDef::new(
        "echo",
        "Echo the input back",
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            args.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        },
    )
}

/// A tool that sets `flag` when it runs.
fn flip_tool(name: &str, flag: &Arc<AtomicBool>) -> McpToolDef {
    let flag = Arc::clone(flag);
    McpToolDef::new(
        name,
        "Flips a flag",
        json!({"type": "object"}),
        move |_args, _ctx: InvokeContext| {
            let flag = Arc::clone(&flag);
            async move {
                flag.store(true, Ordering::SeqCst);
                "flipped"
            }
        },
    )
}

fn failing_tool() -> McpToolDef {
    McpToolDef::new(
        "fail",
        "Fails at tool level",
        json!({"type": "object"}),
        |_args, _ctx: InvokeContext| async move { Err::<String, String>("the disk is full".to_owned()) },
    )
}

fn panicking_tool() -> McpToolDef {
    McpToolDef::new(
        "explode",
        "Panics",
        json!({"type": "object"}),
        |args: Map<String, Value>, _ctx: InvokeContext| async move {
            let what = args
                .get("what")
                .and_then(Value::as_str)
                .unwrap_or("nothing")
                .to_owned();
            if what != "never" {
                panic!("tool exploded on {what}");
            }
            "unreachable"
        },
    )
}

/// Observes a gated tool: when it starts, when its cancellation token fires,
/// and lets the test release it.
struct Gate {
    started: mpsc::UnboundedReceiver<()>,
    cancelled: mpsc::UnboundedReceiver<()>,
    release: Arc<Notify>,
}

impl Gate {
    async fn wait_started(&mut self) {
        guard("gated tool start", self.started.recv())
            .await
            .expect("gated tool signals its start");
    }

    async fn wait_cancelled(&mut self) {
        guard("gated tool cancellation", self.cancelled.recv())
            .await
            .expect("gated tool's token is cancelled");
    }
}

/// A tool that signals its start, then waits until released (returning
/// "released"). A detached watcher reports when the call's token is cancelled.
fn gated_tool(name: &str) -> (McpToolDef, Gate) {
    let (started_tx, started) = mpsc::unbounded_channel();
    let (cancelled_tx, cancelled) = mpsc::unbounded_channel();
    let release = Arc::new(Notify::new());
    let release_in = Arc::clone(&release);
    let tool = McpToolDef::new(
        name,
        "Waits until released",
        json!({"type": "object"}),
        move |_args, ctx: InvokeContext| {
            let started_tx = started_tx.clone();
            let cancelled_tx = cancelled_tx.clone();
            let release = Arc::clone(&release_in);
            async move {
                let token = ctx.cancel_token().clone();
                tokio::spawn(async move {
                    token.cancelled().await;
                    let _ = cancelled_tx.send(());
                });
                let _ = started_tx.send(());
                release.notified().await;
                "released"
            }
        },
    );
    (
        tool,
        Gate {
            started,
            cancelled,
            release,
        },
    )
}

fn spawn_message(
    server: &McpServer,
    ctx: &CallContext,
    message: Value,
) -> JoinHandle<Option<Value>> {
    let server = server.clone();
    let ctx = ctx.clone();
    tokio::spawn(async move { server.handle_message(message, &ctx).await })
}

async fn join(handle: JoinHandle<Option<Value>>) -> Option<Value> {
    guard("spawned call", handle)
        .await
        .expect("spawned call did not panic")
}

fn text_resource(uri: &str, name: &str, text: &'static str) -> McpResourceDef {
    McpResourceDef::new(
        uri,
        name,
        move |_req: ResourceRequest, _ctx: InvokeContext| async move { text },
    )
}

fn greet_prompt() -> McpPromptDef {
    McpPromptDef::new(
        "greet",
        |args: PromptArgs, _ctx: InvokeContext| async move {
            let tone = args.get("tone").map_or("plain", String::as_str).to_owned();
            mcp_core::protocol::GetPromptResult::new(vec![PromptMessage::user(format!(
                "Hi {} ({tone})",
                args["who"]
            ))])
            .with_description(format!("Greet {}", args["who"]))
        },
    )
    .with_description("A greeting template")
    .with_arguments(vec![
        PromptArgument::required("who", "Name to greet"),
        PromptArgument::optional("tone", "How to greet"),
    ])
}

/// Records every message the server pushes to the client.
struct Recorder {
    tx: mpsc::UnboundedSender<Value>,
}

#[async_trait]
impl Outbound for Recorder {
    async fn send(&self, message: Value) -> bool {
        self.tx.send(message).is_ok()
    }
}

fn recorder() -> (Arc<dyn Outbound>, mpsc::UnboundedReceiver<Value>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (Arc::new(Recorder { tx }), rx)
}

fn drain(rx: &mut mpsc::UnboundedReceiver<Value>) -> Vec<Value> {
    let mut out = Vec::new();
    while let Ok(m) = rx.try_recv() {
        out.push(m);
    }
    out
}

/// An explicit elicitation hook answering every request with `reply`.
struct ScriptedElicit {
    reply: Result<Value, ErrorObject>,
    seen: Mutex<Vec<Value>>,
}

impl ScriptedElicit {
    fn new(reply: Result<Value, ErrorObject>) -> Arc<Self> {
        Arc::new(Self {
            reply,
            seen: Mutex::new(Vec::new()),
        })
    }

    fn seen(&self) -> Vec<Value> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait]
impl Elicit for ScriptedElicit {
    async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(params);
        self.reply.clone()
    }
}
