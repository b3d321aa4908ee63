//! Transport-free tests of the dispatcher: `McpServer::handle_message`,
//! `McpServer::dispatch_payload`, `list_tools` / `call_tool` and the builder,
//! one group per row of the guide's method table.

mod common;
use common::{ask, guard, req};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::{
    BuildError, CallContext, CallToolResult, CancelToken, ElicitResponse, ErrorObject,
    InvokeContext, McpPromptDef, McpResourceDef, McpServer, McpServerBuilder, McpToolDef, Outbound,
    ProgressUpdate, PromptArgs, PromptArgument, PromptMessage, ResourceContents, ResourceRequest,
    Session,
};
use mcp_core::{CannotAsk, Confirmation, Elicit, ProgressSink};
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
            mcp_core::GetPromptResult::new(vec![PromptMessage::user(format!(
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

// ---------------------------------------------------------------------------
// initialize
// ---------------------------------------------------------------------------

async fn negotiated(server: &McpServer, requested: Value) -> Value {
    let reply = ask(
        server,
        &CallContext::new(),
        req(
            1,
            "initialize",
            json!({"protocolVersion": requested, "capabilities": {}}),
        ),
    )
    .await;
    result(&reply)["protocolVersion"].clone()
}

#[tokio::test]
async fn initialize_echoes_supported_versions() {
    let server = build(McpServer::builder().tool(echo_tool()));
    for v in ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] {
        assert_eq!(negotiated(&server, json!(v)).await, v, "version {v}");
    }
}

#[tokio::test]
async fn initialize_answers_unsupported_versions_with_latest() {
    let server = build(McpServer::builder().tool(echo_tool()));
    assert_eq!(LATEST_PROTOCOL_VERSION, "2025-11-25");
    for v in [
        json!("1999-01-01"),
        json!("2026-07-28"),
        json!(""),
        json!(20250618),
        Value::Null,
    ] {
        assert_eq!(
            negotiated(&server, v.clone()).await,
            "2025-11-25",
            "for {v}"
        );
    }
    // No params at all.
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize"}),
    )
    .await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn initialize_tools_only_server_advertises_just_tools() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    let res = result(&reply);
    assert_eq!(
        res["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
    assert!(res.get("instructions").is_none(), "no instructions: {res}");
    assert_eq!(server.capabilities(), &res["capabilities"]);

    // An empty server still advertises tools.
    let empty = build(McpServer::builder());
    let reply = ask(&empty, &CallContext::new(), req(1, "initialize", json!({}))).await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({"tools": {"listChanged": false}})
    );
}

#[tokio::test]
async fn initialize_advertises_resources_and_prompts_when_registered() {
    let with_resource = build(McpServer::builder().resource(text_resource("demo://a", "A", "a")));
    let reply = ask(
        &with_resource,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({
            "tools": {"listChanged": false},
            "resources": {"subscribe": false, "listChanged": false},
        })
    );

    let template_only = build(McpServer::builder().resource(McpResourceDef::template(
        "demo://{x}",
        "X",
        |_r: ResourceRequest, _c: InvokeContext| async { "x" },
    )));
    let reply = ask(
        &template_only,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert!(
        result(&reply)["capabilities"].get("resources").is_some(),
        "templates enable resources: {reply}"
    );

    let with_prompt = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &with_prompt,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["capabilities"],
        json!({"tools": {"listChanged": false}, "prompts": {"listChanged": false}})
    );

    let both = build(
        McpServer::builder()
            .resource(text_resource("demo://a", "A", "a"))
            .prompt(greet_prompt()),
    );
    let reply = ask(&both, &CallContext::new(), req(1, "initialize", json!({}))).await;
    let caps = &result(&reply)["capabilities"];
    assert!(
        caps.get("tools").is_some()
            && caps.get("resources").is_some()
            && caps.get("prompts").is_some()
    );
}

#[tokio::test]
async fn initialize_reports_server_info_and_instructions() {
    let server = build(
        McpServer::builder()
            .server_info("demo", "1.2.3")
            .instructions("Call echo to echo.")
            .tool(echo_tool()),
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req("init", "initialize", json!({})),
    )
    .await;
    assert_eq!(reply["id"], "init");
    let res = result(&reply);
    assert_eq!(
        res["serverInfo"],
        json!({"name": "demo", "version": "1.2.3"})
    );
    assert_eq!(res["instructions"], "Call echo to echo.");

    let default = build(McpServer::builder());
    let reply = ask(
        &default,
        &CallContext::new(),
        req(1, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["serverInfo"],
        json!({"name": "mcp-core", "version": env!("CARGO_PKG_VERSION")})
    );
}

#[tokio::test]
async fn initialize_records_the_client_in_the_session() {
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "whoami",
        "Reports the negotiated client",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let name = ctx
                .client_info()
                .and_then(|c| c.implementation.as_ref())
                .map_or("none".to_owned(), |i| i.name.clone());
            format!("{} {}", ctx.protocol_version().unwrap_or("none"), name)
        },
    )));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    assert!(session.client().is_none());
    ask(
        &server,
        &ctx,
        req(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "9"},
            }),
        ),
    )
    .await;
    tell(&server, &ctx, note("notifications/initialized", json!({}))).await;
    assert_eq!(
        call_text(&server, &ctx, "whoami", json!({})).await,
        "2025-03-26 probe"
    );

    // Another session never initialized.
    let other = CallContext::new().with_session(Session::new());
    assert_eq!(
        call_text(&server, &other, "whoami", json!({})).await,
        "none none"
    );
}

#[tokio::test]
async fn initialize_is_never_cancellable() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let signal = CancelToken::new();
    signal.cancel();
    let ctx = CallContext::new().with_signal(signal);
    // initialize and ping are answered even with an already-cancelled signal …
    let reply = ask(&server, &ctx, req(1, "initialize", json!({}))).await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
    let reply = ask(&server, &ctx, req(2, "ping", json!({}))).await;
    assert_eq!(result(&reply), &json!({}));
    // … while any other request is cancelled by it.
    tell(&server, &ctx, req(3, "tools/list", json!({}))).await;
}

// ---------------------------------------------------------------------------
// ping, notifications, responses
// ---------------------------------------------------------------------------

#[tokio::test]
async fn ping_returns_empty_object() {
    let server = build(McpServer::builder());
    let reply = ask(&server, &CallContext::new(), req(42, "ping", json!({}))).await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": 42, "result": {}}));
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": "p", "method": "ping"}),
    )
    .await;
    assert_eq!(reply, json!({"jsonrpc": "2.0", "id": "p", "result": {}}));
}

#[tokio::test]
async fn notifications_get_no_reply() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let ctx = CallContext::new();
    tell(&server, &ctx, note("notifications/initialized", json!({}))).await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!({"requestId": 99})),
    )
    .await;
    tell(&server, &ctx, note("notifications/whatever", json!({}))).await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!("not an object")),
    )
    .await;
}

#[tokio::test]
async fn request_method_sent_as_notification_is_not_executed() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let ctx = CallContext::new();
    tell(
        &server,
        &ctx,
        note("tools/call", json!({"name": "flip", "arguments": {}})),
    )
    .await;
    tell(&server, &ctx, note("ping", json!({}))).await;
    tell(&server, &ctx, note("tools/list", json!({}))).await;
    // Nothing was spawned in the background either: a real call on the same
    // server afterwards is the first to flip the flag.
    tokio::task::yield_now().await;
    assert!(
        !flag.load(Ordering::SeqCst),
        "notification executed the tool"
    );
    assert_eq!(call_text(&server, &ctx, "flip", json!({})).await, "flipped");
    assert!(flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn responses_sent_to_the_server_are_ignored() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": 5, "result": {}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": "srv-0", "result": {"action": "accept"}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": 6, "error": {"code": -32601, "message": "nope"}}),
    )
    .await;
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": 1, "message": "x"}}),
    )
    .await;
    assert!(!flag.load(Ordering::SeqCst));
    assert_eq!(session.inflight_len(), 0);
    // The server still works.
    assert_eq!(call_text(&server, &ctx, "flip", json!({})).await, "flipped");
}

// ---------------------------------------------------------------------------
// tools/list, tools/call, list_tools, call_tool
// ---------------------------------------------------------------------------

#[tokio::test]
async fn tools_list_returns_descriptors_in_registration_order() {
    let mut output = Map::new();
    output.insert("type".into(), json!("object"));
    let server = build(
        McpServer::builder()
            .tool(echo_tool().with_title("Echo"))
            .tool(failing_tool().with_output_schema(output.clone()))
            .tool(McpToolDef::new(
                "bare",
                "",
                json!("not a schema"),
                |_a, _c: InvokeContext| async {},
            )),
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "tools/list", json!({})),
    )
    .await;
    let tools = result(&reply)["tools"]
        .as_array()
        .expect("tools array")
        .clone();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["echo", "fail", "bare"]);
    assert_eq!(tools[0]["title"], "Echo");
    assert_eq!(tools[0]["description"], "Echo the input back");
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    );
    assert!(tools[0].get("outputSchema").is_none());
    assert_eq!(tools[1]["outputSchema"], Value::Object(output));
    // A non-object schema is replaced by {"type":"object"}; empty description omitted.
    assert_eq!(tools[2]["inputSchema"], json!({"type": "object"}));
    assert!(tools[2].get("description").is_none());

    // Same as list_tools().
    let listed: Vec<Value> = server
        .list_tools()
        .into_iter()
        .map(|t| serde_json::to_value(t).expect("tool serializes"))
        .collect();
    assert_eq!(listed, tools);

    // Params may be omitted entirely.
    let reply = ask(
        &server,
        &CallContext::new(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .await;
    assert_eq!(result(&reply)["tools"].as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn tools_call_returns_the_tool_result() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        call_req(7, "echo", json!({"text": "hi"})),
    )
    .await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "hi"}]}})
    );
    // Missing or null arguments are an empty object.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(8, "tools/call", json!({"name": "echo"})),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "");
    let reply = ask(
        &server,
        &CallContext::new(),
        req(9, "tools/call", json!({"name": "echo", "arguments": null})),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "");
}

#[tokio::test]
async fn tools_call_structured_json_result() {
    #[derive(serde::Serialize, schemars::JsonSchema)]
    struct Sum {
        total: i64,
    }
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "sum",
        "Adds",
        json!({"type": "object"}),
        |args: Map<String, Value>, _c: InvokeContext| async move {
            let total = args.values().filter_map(Value::as_i64).sum();
            mcp_core::Json(Sum { total })
        },
    )));
    let reply = ask(
        &server,
        &CallContext::new(),
        call_req(1, "sum", json!({"a": 2, "b": 40})),
    )
    .await;
    let res = result(&reply);
    assert_eq!(res["structuredContent"], json!({"total": 42}));
    assert_eq!(text_of(res), r#"{"total":42}"#);
}

#[tokio::test]
async fn tool_returning_err_is_an_is_error_result() {
    let server = build(McpServer::builder().tool(failing_tool()));
    let reply = ask(&server, &CallContext::new(), call_req(1, "fail", json!({}))).await;
    let res = result(&reply);
    assert_eq!(res["isError"], true);
    assert_eq!(
        res["content"],
        json!([{"type": "text", "text": "the disk is full"}])
    );
}

#[tokio::test]
async fn tool_panic_is_internal_error_and_server_keeps_serving() {
    let server = build(
        McpServer::builder()
            .tool(panicking_tool())
            .tool(echo_tool()),
    );
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let reply = ask(
        &server,
        &ctx,
        call_req(1, "explode", json!({"what": "purpose"})),
    )
    .await;
    assert_eq!(reply["id"], 1);
    common::assert_panic_error(&reply["error"], "tool exploded");
    assert_eq!(session.inflight_len(), 0, "a panicked call is unregistered");
    // Same id again, and another tool: both served.
    let reply = ask(
        &server,
        &ctx,
        call_req(1, "explode", json!({"what": "again"})),
    )
    .await;
    common::assert_panic_error(&reply["error"], "tool exploded");
    assert_eq!(
        call_text(&server, &ctx, "echo", json!({"text": "still here"})).await,
        "still here"
    );
}

/// A tool whose handler panics before it returns its future (for example an
/// `unwrap` on an argument ahead of the `async move` block).
fn eager_panicking_tool() -> McpToolDef {
    McpToolDef::new(
        "eager",
        "Panics while building its future",
        json!({"type": "object"}),
        |args: Map<String, Value>, _ctx: InvokeContext| {
            let n = args
                .get("n")
                .and_then(Value::as_i64)
                .expect("argument n is required");
            async move { format!("n={n}") }
        },
    )
}

#[tokio::test]
async fn tool_panicking_before_its_future_is_internal_error() {
    let server = build(
        McpServer::builder()
            .tool(eager_panicking_tool())
            .tool(echo_tool()),
    );
    assert_eq!(
        call_text(&server, &CallContext::new(), "eager", json!({"n": 3})).await,
        "n=3"
    );
    // Run in a task so a panic escaping handle_message is observed, not fatal.
    let joined = guard(
        "eager call",
        spawn_message(
            &server,
            &CallContext::new(),
            call_req(1, "eager", json!({})),
        ),
    )
    .await;
    let reply = joined
        .unwrap_or_else(|e| {
            panic!("handle_message itself panicked instead of answering -32603: {e}")
        })
        .expect("a reply");
    common::assert_panic_error(&reply["error"], "argument n is required");
    assert_eq!(
        call_text(&server, &CallContext::new(), "echo", json!({"text": "up"})).await,
        "up"
    );

    let direct = {
        let server = server.clone();
        guard(
            "eager call_tool",
            tokio::spawn(async move { server.call_tool("eager", json!({})).await }),
        )
        .await
    };
    let err = direct
        .unwrap_or_else(|e| panic!("call_tool itself panicked instead of returning -32603: {e}"))
        .expect_err("a panicking tool is an error");
    assert_eq!(err.code, -32603);
}

#[tokio::test]
async fn visible_hook_filters_tools_list_but_not_tools_call() {
    let secret = McpToolDef::new(
        "secret",
        "Admins only",
        json!({"type": "object"}),
        |_a, _c: InvokeContext| async { "secret ran" },
    )
    .with_visible(|ctx: &CallContext| ctx.caller::<String>().is_some_and(|c| c == "admin"));
    let server = build(McpServer::builder().tool(echo_tool()).tool(secret));
    let admin = CallContext::new().with_caller(Arc::new("admin".to_owned()));
    let guest = CallContext::new().with_caller(Arc::new("guest".to_owned()));
    let anonymous = CallContext::new();

    let names = |reply: &Value| -> Vec<String> {
        result(reply)["tools"]
            .as_array()
            .expect("tools array")
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let reply = ask(&server, &admin, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo", "secret"]);
    let reply = ask(&server, &guest, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo"]);
    let reply = ask(&server, &anonymous, req(1, "tools/list", json!({}))).await;
    assert_eq!(names(&reply), ["echo"]);
    // list_tools() is before filtering.
    assert_eq!(server.list_tools().len(), 2);
    // tools/call never consults the hook.
    assert_eq!(
        call_text(&server, &guest, "secret", json!({})).await,
        "secret ran"
    );
}

#[tokio::test]
async fn panicking_visible_hook_hides_the_tool() {
    let touchy = echo_tool().with_visible(|_ctx: &CallContext| panic!("visible hook blew up"));
    let server = build(McpServer::builder().tool(touchy).tool(failing_tool()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "tools/list", json!({})),
    )
    .await;
    let tools = result(&reply)["tools"]
        .as_array()
        .expect("tools array")
        .clone();
    assert_eq!(tools.len(), 1, "{reply}");
    assert_eq!(tools[0]["name"], "fail");
    // The hidden tool still runs.
    assert_eq!(
        call_text(&server, &CallContext::new(), "echo", json!({"text": "ok"})).await,
        "ok"
    );
}

#[tokio::test]
async fn list_tools_and_call_tool_without_json_rpc() {
    let server = build(
        McpServer::builder()
            .tool(echo_tool())
            .tool(failing_tool())
            .tool(panicking_tool()),
    );
    let tools = server.list_tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "fail", "explode"]);

    let ok = server
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("echo succeeds");
    assert_eq!(ok.text_content(), "hi");
    assert!(!ok.is_error());
    let ok = server
        .call_tool("echo", Value::Null)
        .await
        .expect("null args");
    assert_eq!(ok.text_content(), "");

    let failed = server
        .call_tool("fail", json!({}))
        .await
        .expect("tool-level failure is Ok");
    assert!(failed.is_error());
    assert_eq!(failed.text_content(), "the disk is full");

    let err = server
        .call_tool("x", json!({}))
        .await
        .expect_err("unknown tool");
    assert_eq!(
        (err.code, err.message.as_str()),
        (-32602, "Unknown tool: x")
    );

    let err = server
        .call_tool("echo", json!(["not", "an", "object"]))
        .await
        .expect_err("array args");
    assert_eq!(err.code, -32602);

    let err = server
        .call_tool("explode", json!({"what": "direct"}))
        .await
        .expect_err("panic");
    common::assert_panic_error(&err.to_value(), "tool exploded");
}

// ---------------------------------------------------------------------------
// Resources
// ---------------------------------------------------------------------------

fn resource_server() -> McpServer {
    build(
        McpServer::builder()
            .resource(
                text_resource("demo://text", "Text", "hello")
                    .with_mime_type("text/plain")
                    .with_description("Some text")
                    .with_title("The text"),
            )
            .resource(
                McpResourceDef::new(
                    "demo://blob",
                    "Blob",
                    |_r: ResourceRequest, _c: InvokeContext| async { vec![0u8, 1, 2, 255] },
                )
                .with_mime_type("application/octet-stream"),
            )
            .resource(McpResourceDef::new(
                "demo://explicit",
                "Explicit",
                |_r: ResourceRequest, _c: InvokeContext| async {
                    ResourceContents::text("demo://elsewhere", "# md")
                        .with_mime_type("text/markdown")
                },
            ))
            .resource(text_resource("demo://plain", "No mime", "plain"))
            .resource(text_resource(
                "file:///logs/special.txt",
                "Special log",
                "fixed wins",
            ))
            .resource(
                McpResourceDef::template(
                    "file:///logs/{date}.txt",
                    "Logs",
                    |r: ResourceRequest, _c: InvokeContext| async move {
                        format!("log of {} at {}", r.vars["date"], r.uri)
                    },
                )
                .with_mime_type("text/plain")
                .with_description("Daily logs"),
            )
            .resource(McpResourceDef::template(
                "repo://{owner}/{+path}",
                "Repo file",
                |r: ResourceRequest, _c: InvokeContext| async move {
                    format!("{}|{}", r.vars["owner"], r.vars["path"])
                },
            ))
            .resource(McpResourceDef::new(
                "demo://gone",
                "Gone",
                |_r: ResourceRequest, _c: InvokeContext| async {
                    Err::<String, ErrorObject>(ErrorObject::new(-32002, "Resource is gone"))
                },
            )),
    )
}

async fn read(server: &McpServer, uri: &str) -> Value {
    let reply = ask(
        server,
        &CallContext::new(),
        req(1, "resources/read", json!({"uri": uri})),
    )
    .await;
    result(&reply)["contents"].clone()
}

#[tokio::test]
async fn resources_list_returns_fixed_resources() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/list", json!({})),
    )
    .await;
    let list = result(&reply)["resources"]
        .as_array()
        .expect("resources")
        .clone();
    let uris: Vec<&str> = list
        .iter()
        .map(|r| r["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "demo://text",
            "demo://blob",
            "demo://explicit",
            "demo://plain",
            "file:///logs/special.txt",
            "demo://gone"
        ]
    );
    assert_eq!(
        list[0],
        json!({
            "uri": "demo://text",
            "name": "Text",
            "title": "The text",
            "description": "Some text",
            "mimeType": "text/plain",
        })
    );
    assert!(list[3].get("mimeType").is_none());
}

#[tokio::test]
async fn resources_templates_list_returns_templates() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/templates/list", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["resourceTemplates"],
        json!([
            {
                "uriTemplate": "file:///logs/{date}.txt",
                "name": "Logs",
                "description": "Daily logs",
                "mimeType": "text/plain",
            },
            {"uriTemplate": "repo://{owner}/{+path}", "name": "Repo file"},
        ])
    );
}

#[tokio::test]
async fn resources_read_text_defaults_uri_and_mime_type() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://text").await,
        json!([{"uri": "demo://text", "mimeType": "text/plain", "text": "hello"}])
    );
    assert_eq!(
        read(&server, "demo://plain").await,
        json!([{"uri": "demo://plain", "text": "plain"}])
    );
}

#[tokio::test]
async fn resources_read_blob_is_base64() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://blob").await,
        json!([{"uri": "demo://blob", "mimeType": "application/octet-stream", "blob": "AAEC/w=="}])
    );
}

#[tokio::test]
async fn resources_read_keeps_explicit_uri_and_mime_type() {
    let server = resource_server();
    assert_eq!(
        read(&server, "demo://explicit").await,
        json!([{"uri": "demo://elsewhere", "mimeType": "text/markdown", "text": "# md"}])
    );
}

#[tokio::test]
async fn resources_read_matches_templates_with_vars() {
    let server = resource_server();
    assert_eq!(
        read(&server, "file:///logs/2026-01-02.txt").await,
        json!([{
            "uri": "file:///logs/2026-01-02.txt",
            "mimeType": "text/plain",
            "text": "log of 2026-01-02 at file:///logs/2026-01-02.txt",
        }])
    );
    assert_eq!(
        read(&server, "repo://me/src/lib%20x.rs").await,
        json!([{"uri": "repo://me/src/lib%20x.rs", "text": "me|src/lib x.rs"}])
    );
    // A fixed resource is preferred over a matching template.
    assert_eq!(
        read(&server, "file:///logs/special.txt").await[0]["text"],
        "fixed wins"
    );
    // A simple variable does not match across `/`.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "resources/read", json!({"uri": "file:///logs/a/b.txt"})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "Unknown resource: file:///logs/a/b.txt".to_owned())
    );
}

#[tokio::test]
async fn resources_read_template_value_may_contain_the_following_literal() {
    // `file:///logs/{date}.txt` expands date = "v1.txt" to
    // `file:///logs/v1.txt.txt` ("." is unreserved, so nothing is encoded);
    // reading that URI must match the template back.
    let server = resource_server();
    let contents = read(&server, "file:///logs/v1.txt.txt").await;
    assert_eq!(
        contents[0]["text"],
        "log of v1.txt at file:///logs/v1.txt.txt"
    );
}

#[tokio::test]
async fn resources_read_handler_error_is_the_reply() {
    let server = resource_server();
    let reply = ask(
        &server,
        &CallContext::new(),
        req(3, "resources/read", json!({"uri": "demo://gone"})),
    )
    .await;
    assert_eq!(reply["id"], 3);
    assert_eq!(error(&reply), (-32002, "Resource is gone".to_owned()));
}

#[tokio::test]
async fn resources_and_prompts_methods_not_found_without_registrations() {
    let server = build(McpServer::builder().tool(echo_tool()));
    for method in [
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    ] {
        let reply = ask(
            &server,
            &CallContext::new(),
            req(1, method, json!({"uri": "demo://x", "name": "x"})),
        )
        .await;
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}"))
        );
    }
    // Prompts only: resources are still absent, and vice versa.
    let prompts_only = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &prompts_only,
        &CallContext::new(),
        req(1, "resources/list", json!({})),
    )
    .await;
    assert_eq!(error(&reply).0, -32601);
    let resources_only = build(McpServer::builder().resource(text_resource("demo://a", "A", "a")));
    let reply = ask(
        &resources_only,
        &CallContext::new(),
        req(1, "prompts/list", json!({})),
    )
    .await;
    assert_eq!(error(&reply).0, -32601);
}

#[tokio::test]
async fn unknown_methods_are_not_found() {
    let server = resource_server();
    for method in [
        "tools/destroy",
        "",
        "resources/subscribe",
        "sampling/createMessage",
        "Ping",
    ] {
        let reply = ask(&server, &CallContext::new(), req("m", method, json!({}))).await;
        assert_eq!(reply["id"], "m");
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}"))
        );
    }
}

// ---------------------------------------------------------------------------
// Prompts
// ---------------------------------------------------------------------------

#[tokio::test]
async fn prompts_list_and_get() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "prompts/list", json!({})),
    )
    .await;
    assert_eq!(
        result(&reply)["prompts"],
        json!([{
            "name": "greet",
            "description": "A greeting template",
            "arguments": [
                {"name": "who", "description": "Name to greet", "required": true},
                {"name": "tone", "description": "How to greet", "required": false},
            ],
        }])
    );

    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            2,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "Ada", "tone": "warm"}}),
        ),
    )
    .await;
    assert_eq!(
        result(&reply),
        &json!({
            "description": "Greet Ada",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Hi Ada (warm)"}}],
        })
    );
    // Optional argument omitted.
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            3,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": "Bo"}}),
        ),
    )
    .await;
    assert_eq!(
        result(&reply)["messages"][0]["content"]["text"],
        "Hi Bo (plain)"
    );
}

#[tokio::test]
async fn prompts_get_enforces_required_arguments() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    for params in [
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {}}),
        json!({"name": "greet", "arguments": null}),
        json!({"name": "greet", "arguments": {"tone": "warm"}}),
    ] {
        let reply = ask(
            &server,
            &CallContext::new(),
            req(1, "prompts/get", params.clone()),
        )
        .await;
        let (code, message) = error(&reply);
        assert_eq!(code, -32602, "for {params}");
        assert!(
            message.contains("`who`"),
            "message names the argument: {message}"
        );
        assert_eq!(message, "Missing required argument `who` for prompt greet");
    }
}

#[tokio::test]
async fn prompts_get_rejects_non_string_arguments() {
    let server = build(McpServer::builder().prompt(greet_prompt()));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            1,
            "prompts/get",
            json!({"name": "greet", "arguments": {"who": 5}}),
        ),
    )
    .await;
    assert_eq!(
        error(&reply),
        (
            -32602,
            "prompts/get argument `who` must be a string".to_owned()
        )
    );
    let reply = ask(
        &server,
        &CallContext::new(),
        req(
            1,
            "prompts/get",
            json!({"name": "greet", "arguments": ["Ada"]}),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32602);
}

#[tokio::test]
async fn prompts_get_handler_error_is_the_reply() {
    let server = build(McpServer::builder().prompt(McpPromptDef::new(
        "broken",
        |_a: PromptArgs, _c: InvokeContext| async {
            Err::<String, ErrorObject>(ErrorObject::invalid_params("no such template variant"))
        },
    )));
    let reply = ask(
        &server,
        &CallContext::new(),
        req(1, "prompts/get", json!({"name": "broken"})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "no such template variant".to_owned())
    );
}

// ---------------------------------------------------------------------------
// Builder
// ---------------------------------------------------------------------------

#[test]
fn duplicate_tool_names_fail_the_build() {
    let err = McpServer::builder()
        .tool(echo_tool())
        .tool(failing_tool())
        .tool(echo_tool())
        .build()
        .expect_err("duplicate tool");
    assert_eq!(err, BuildError::DuplicateTool("echo".to_owned()));
    assert!(err.to_string().contains("`echo`"), "{err}");
}

#[test]
fn duplicate_prompt_names_fail_the_build() {
    let err = McpServer::builder()
        .prompt(greet_prompt())
        .prompt(greet_prompt())
        .build()
        .expect_err("duplicate prompt");
    assert_eq!(err, BuildError::DuplicatePrompt("greet".to_owned()));
    assert!(err.to_string().contains("`greet`"), "{err}");
}

#[test]
fn duplicate_resource_uris_fail_the_build() {
    let err = McpServer::builder()
        .resource(text_resource("demo://a", "A", "a"))
        .resource(text_resource("demo://a", "Other A", "b"))
        .build()
        .expect_err("duplicate resource");
    assert_eq!(err, BuildError::DuplicateResource("demo://a".to_owned()));
    assert!(err.to_string().contains("`demo://a`"), "{err}");

    let template = || {
        McpResourceDef::template(
            "demo://{x}",
            "X",
            |_r: ResourceRequest, _c: InvokeContext| async { "x" },
        )
    };
    let err = McpServer::builder()
        .resource(template())
        .resource(template())
        .build()
        .expect_err("duplicate template");
    assert_eq!(err, BuildError::DuplicateResource("demo://{x}".to_owned()));
}

#[test]
fn invalid_templates_and_distinct_keys() {
    let err = McpServer::builder()
        .resource(McpResourceDef::template(
            "demo://{x",
            "X",
            |_r: ResourceRequest, _c: InvokeContext| async { "x" },
        ))
        .build()
        .expect_err("unclosed brace");
    assert!(
        matches!(&err, BuildError::InvalidUriTemplate { template, .. } if template == "demo://{x"),
        "{err:?}"
    );
    // The same name across kinds is fine.
    let server = McpServer::builder()
        .tool(McpToolDef::new(
            "greet",
            "tool",
            json!({}),
            |_a, _c: InvokeContext| async {},
        ))
        .prompt(greet_prompt())
        .resource(text_resource("greet", "greet", "x"))
        .build()
        .expect("distinct kinds may share a key");
    assert_eq!(server.list_tools().len(), 1);
}

// ---------------------------------------------------------------------------
// Cancellation and in-flight ids
// ---------------------------------------------------------------------------

#[tokio::test]
async fn cancel_reaches_only_the_same_session() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let a = Session::new();
    let b = Session::new();
    let ctx_a = CallContext::new().with_session(a.clone());
    let ctx_b = CallContext::new().with_session(b.clone());

    // A cancel from session B for A's id does nothing.
    let call = spawn_message(&server, &ctx_a, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    assert_eq!(a.inflight_len(), 1);
    assert!(!b.cancel(&1.into()), "B has nothing in flight");
    tell(
        &server,
        &ctx_b,
        note("notifications/cancelled", json!({"requestId": 1})),
    )
    .await;
    // Nor does a cancel for another id in A's session.
    tell(
        &server,
        &ctx_a,
        note("notifications/cancelled", json!({"requestId": "1"})),
    )
    .await;
    assert_eq!(a.inflight_len(), 1);
    gate.release.notify_one();
    let reply = join(call).await.expect("uncancelled call is answered");
    assert_eq!(reply["id"], 1);
    assert_eq!(text_of(result(&reply)), "released");
    assert_eq!(a.inflight_len(), 0);

    // The same cancel from session A aborts it: no response at all.
    let call = spawn_message(&server, &ctx_a, call_req(2, "wait", json!({})));
    gate.wait_started().await;
    tell(
        &server,
        &ctx_a,
        note(
            "notifications/cancelled",
            json!({"requestId": 2, "reason": "user"}),
        ),
    )
    .await;
    assert_eq!(join(call).await, None, "a cancelled call gets no response");
    gate.wait_cancelled().await;
    assert_eq!(a.inflight_len(), 0, "the cancelled id is unregistered");
    // And the id can be reused.
    gate.release.notify_one();
    let reply = ask(&server, &ctx_a, call_req(2, "wait", json!({}))).await;
    assert_eq!(text_of(result(&reply)), "released");
}

#[tokio::test]
async fn sessionless_calls_share_one_cancellation_scope() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let call = spawn_message(
        &server,
        &CallContext::new(),
        call_req("job", "wait", json!({})),
    );
    gate.wait_started().await;
    // A different (session-less) context reaches it.
    tell(
        &server,
        &CallContext::new(),
        note("notifications/cancelled", json!({"requestId": "job"})),
    )
    .await;
    assert_eq!(join(call).await, None);
    gate.wait_cancelled().await;
}

#[tokio::test]
async fn same_id_in_flight_in_same_session_is_refused() {
    let (tool, mut gate) = gated_tool("wait");
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(
        McpServer::builder()
            .tool(tool)
            .tool(flip_tool("flip", &flag)),
    );
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(7, "wait", json!({})));
    gate.wait_started().await;

    let reply = ask(&server, &ctx, call_req(7, "flip", json!({}))).await;
    assert_eq!(reply["id"], 7);
    assert_eq!(
        error(&reply),
        (-32600, "Request id 7 is already in flight".to_owned())
    );
    assert!(
        !flag.load(Ordering::SeqCst),
        "the refused request did not run"
    );
    // Other methods with the same id are refused too; ping is not tracked.
    let reply = ask(&server, &ctx, req(7, "tools/list", json!({}))).await;
    assert_eq!(error(&reply).0, -32600);

    // The string id "7" is a different id.
    let reply = ask(&server, &ctx, call_req("7", "flip", json!({}))).await;
    assert_eq!(reply["id"], "7");
    assert_eq!(text_of(result(&reply)), "flipped");
    flag.store(false, Ordering::SeqCst);

    // The same id in another session is fine.
    let other = CallContext::new().with_session(Session::new());
    assert_eq!(
        call_text_with_id(&server, &other, 7, "flip").await,
        "flipped"
    );

    // The original call is unaffected and, once done, the id is free again.
    gate.release.notify_one();
    let reply = join(call).await.expect("original call answered");
    assert_eq!(text_of(result(&reply)), "released");
    assert_eq!(call_text_with_id(&server, &ctx, 7, "flip").await, "flipped");
}

async fn call_text_with_id(server: &McpServer, ctx: &CallContext, id: i64, name: &str) -> String {
    let reply = ask(server, ctx, call_req(id, name, json!({}))).await;
    text_of(result(&reply))
}

#[tokio::test]
async fn already_cancelled_external_signal_means_no_response() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let signal = CancelToken::new();
    signal.cancel();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_signal(signal)
        .with_session(session.clone());
    tell(&server, &ctx, call_req(1, "flip", json!({}))).await;
    assert!(!flag.load(Ordering::SeqCst), "cancelled call must not run");
    assert_eq!(session.inflight_len(), 0);
}

#[tokio::test]
async fn external_signal_cancels_a_running_call() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let signal = CancelToken::new();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_signal(signal.clone())
        .with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    signal.cancel();
    assert_eq!(join(call).await, None);
    // The external signal is linked into the call's own token.
    gate.wait_cancelled().await;
    assert_eq!(session.inflight_len(), 0);
}

#[tokio::test]
async fn dropping_the_future_unregisters_the_id() {
    let (tool, mut gate) = gated_tool("wait");
    let server = build(McpServer::builder().tool(tool));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(1, "wait", json!({})));
    gate.wait_started().await;
    assert_eq!(session.inflight_len(), 1);
    call.abort();
    let joined = guard("aborted call", call).await;
    assert!(joined.expect_err("aborted").is_cancelled());
    assert_eq!(session.inflight_len(), 0);
    gate.release.notify_one();
    let reply = ask(&server, &ctx, call_req(1, "wait", json!({}))).await;
    assert_eq!(text_of(result(&reply)), "released");
}

// ---------------------------------------------------------------------------
// Batches
// ---------------------------------------------------------------------------

async fn dispatch(server: &McpServer, ctx: &CallContext, payload: Value) -> Option<Value> {
    let shown = payload.to_string();
    guard(&shown, server.dispatch_payload(payload, ctx)).await
}

#[tokio::test]
async fn batch_answers_each_request_in_order() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(
        McpServer::builder()
            .tool(echo_tool())
            .tool(flip_tool("flip", &flag)),
    );
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([
            req("a", "ping", json!({})),
            note("notifications/initialized", json!({})),
            call_req(2, "echo", json!({"text": "two"})),
            {"jsonrpc": "2.0", "id": 99, "result": {}},
            req(3, "nope", json!({})),
            call_req("four", "flip", json!({})),
        ]),
    )
    .await
    .expect("a batch with requests gets a reply");
    let replies = reply.as_array().expect("batch reply is an array");
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("a"), &json!(2), &json!(3), &json!("four")]);
    assert_eq!(result(&replies[0]), &json!({}));
    assert_eq!(text_of(result(&replies[1])), "two");
    assert_eq!(error(&replies[2]).0, -32601);
    assert_eq!(text_of(result(&replies[3])), "flipped");
    assert!(flag.load(Ordering::SeqCst));
}

#[tokio::test]
async fn batch_of_notifications_gets_no_reply() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([
            note("notifications/initialized", json!({})),
            note("tools/call", json!({"name": "flip"})),
            note("notifications/cancelled", json!({"requestId": 1})),
            {"jsonrpc": "2.0", "id": 5, "result": {}},
        ]),
    )
    .await;
    assert_eq!(reply, None);
    assert!(
        !flag.load(Ordering::SeqCst),
        "notification in a batch executed a tool"
    );
}

#[tokio::test]
async fn empty_batch_is_invalid_request() {
    let server = build(McpServer::builder());
    let reply = dispatch(&server, &CallContext::new(), json!([]))
        .await
        .expect("empty batch is answered");
    assert_eq!(reply["id"], Value::Null);
    assert_eq!(
        error(&reply),
        (-32600, "Invalid JSON-RPC request: empty batch".to_owned())
    );
}

#[tokio::test]
async fn batched_initialize_is_refused_in_its_slot_while_others_run() {
    let flag = Arc::new(AtomicBool::new(false));
    let server = build(McpServer::builder().tool(flip_tool("flip", &flag)));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let reply = dispatch(
        &server,
        &ctx,
        json!([
            req(1, "ping", json!({})),
            req(2, "initialize", json!({"protocolVersion": "2025-06-18"})),
            call_req(3, "flip", json!({})),
        ]),
    )
    .await
    .expect("batch reply");
    let replies = reply.as_array().expect("array");
    assert_eq!(replies.len(), 3);
    assert_eq!(result(&replies[0]), &json!({}));
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(
        error(&replies[1]),
        (
            -32600,
            "Invalid JSON-RPC request: initialize cannot be batched".to_owned()
        )
    );
    assert_eq!(text_of(result(&replies[2])), "flipped");
    assert!(flag.load(Ordering::SeqCst));
    assert!(
        session.client().is_none(),
        "the batched initialize did not run"
    );
}

#[tokio::test]
async fn batch_answers_invalid_entries_in_their_slots() {
    let server = build(McpServer::builder());
    let reply = dispatch(
        &server,
        &CallContext::new(),
        json!([1, req(2, "ping", json!({})), {"foo": "bar"}, {"jsonrpc": "2.0", "id": null, "method": "ping"}]),
    )
    .await
    .expect("batch reply");
    let replies = reply.as_array().expect("array");
    assert_eq!(replies.len(), 4);
    assert_eq!(error(&replies[0]).0, -32600);
    assert_eq!(replies[0]["id"], Value::Null);
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(result(&replies[1]), &json!({}));
    assert_eq!(error(&replies[2]).0, -32600);
    assert_eq!(error(&replies[3]).0, -32600);
    assert_eq!(replies[3]["id"], Value::Null);
}

#[tokio::test]
async fn dispatch_payload_single_message_is_handle_message() {
    let server = build(McpServer::builder().tool(echo_tool()));
    let ctx = CallContext::new();
    let reply = dispatch(&server, &ctx, call_req(1, "echo", json!({"text": "x"})))
        .await
        .expect("reply");
    assert_eq!(text_of(result(&reply)), "x");
    assert_eq!(
        dispatch(&server, &ctx, note("notifications/initialized", json!({}))).await,
        None
    );
    // A single initialize is fine outside a batch.
    let reply = dispatch(&server, &ctx, req(2, "initialize", json!({})))
        .await
        .expect("reply");
    assert_eq!(result(&reply)["protocolVersion"], "2025-11-25");
}

// ---------------------------------------------------------------------------
// Progress
// ---------------------------------------------------------------------------

/// Reports three steps and says whether progress was available.
fn progress_tool() -> McpToolDef {
    McpToolDef::new(
        "build",
        "Reports progress",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            for i in 1..=3 {
                ctx.report_progress(f64::from(i), Some(3.0), Some(&format!("step {i}")))
                    .await;
            }
            format!("progress={}", ctx.progress().is_some())
        },
    )
}

type Updates = Arc<Mutex<Vec<ProgressUpdate>>>;

fn sink() -> (ProgressSink, Updates) {
    let updates: Updates = Arc::default();
    let into = Arc::clone(&updates);
    let sink: ProgressSink = Arc::new(move |u: ProgressUpdate| {
        into.lock().unwrap_or_else(PoisonError::into_inner).push(u);
    });
    (sink, updates)
}

fn taken(updates: &Updates) -> Vec<ProgressUpdate> {
    std::mem::take(&mut *updates.lock().unwrap_or_else(PoisonError::into_inner))
}

fn progress_call(meta: Option<Value>) -> Value {
    let mut params = json!({"name": "build", "arguments": {}});
    if let Some(meta) = meta {
        params["_meta"] = meta;
    }
    req(1, "tools/call", params)
}

#[tokio::test]
async fn explicit_progress_sink_receives_updates() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (sink, updates) = sink();
    let ctx = CallContext::new().with_progress(sink);
    // An explicit sink needs no progressToken.
    let reply = ask(&server, &ctx, progress_call(None)).await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let got = taken(&updates);
    assert_eq!(
        got,
        (1..=3)
            .map(|i| ProgressUpdate {
                progress: f64::from(i),
                total: Some(3.0),
                message: Some(format!("step {i}")),
            })
            .collect::<Vec<_>>()
    );
    // With a token too.
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "t"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    assert_eq!(taken(&updates).len(), 3);
}

#[tokio::test]
async fn progress_token_with_outbound_sends_notifications() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let ctx = CallContext::new().with_outbound(outbound);
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let sent = drain(&mut rx);
    assert_eq!(sent.len(), 3, "{sent:?}");
    assert_eq!(
        sent[0],
        json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "tok", "progress": 1.0, "total": 3.0, "message": "step 1"},
        })
    );
    assert_eq!(sent[2]["params"]["progress"], 3.0);

    // An integer token is echoed as an integer.
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": 42}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    let sent = drain(&mut rx);
    assert_eq!(sent.len(), 3);
    assert!(sent.iter().all(|n| n["params"]["progressToken"] == 42));
}

#[tokio::test]
async fn progress_needs_both_token_and_outbound() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let with_outbound = CallContext::new().with_outbound(outbound);
    // Outbound but no token.
    let reply = ask(&server, &with_outbound, progress_call(None)).await;
    assert_eq!(text_of(result(&reply)), "progress=false");
    // Outbound but a token of the wrong type.
    for bad in [
        json!({"progressToken": 1.5}),
        json!({"progressToken": {"a": 1}}),
        json!({"progressToken": null}),
    ] {
        let reply = ask(&server, &with_outbound, progress_call(Some(bad.clone()))).await;
        assert_eq!(text_of(result(&reply)), "progress=false", "for {bad}");
    }
    assert!(drain(&mut rx).is_empty());
    // Token but no outbound.
    let reply = ask(
        &server,
        &CallContext::new(),
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=false");
}

#[tokio::test]
async fn explicit_progress_sink_takes_precedence_over_outbound() {
    let server = build(McpServer::builder().tool(progress_tool()));
    let (outbound, mut rx) = recorder();
    let (sink, updates) = sink();
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_progress(sink);
    let reply = ask(
        &server,
        &ctx,
        progress_call(Some(json!({"progressToken": "tok"}))),
    )
    .await;
    assert_eq!(text_of(result(&reply)), "progress=true");
    assert_eq!(taken(&updates).len(), 3);
    assert!(drain(&mut rx).is_empty(), "outbound must not be used");
}

// ---------------------------------------------------------------------------
// Elicitation
// ---------------------------------------------------------------------------

fn confirm_tool() -> McpToolDef {
    McpToolDef::new(
        "write",
        "Asks before writing",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let available = ctx.elicitation().is_some();
            let confirmed = match ctx.confirm("Write the output?").await {
                Confirmation::CannotAsk(CannotAsk::NoAnswer(e)) => format!("no answer {}", e.code),
                other => format!("{other:?}"),
            };
            format!("available={available} confirmed={confirmed}")
        },
    )
}

#[tokio::test]
async fn elicit_hook_confirm_accept() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let hook = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    let ctx = CallContext::new().with_elicit(hook.clone());
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=true confirmed=Accepted"
    );
    let seen = hook.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["message"], "Write the output?");
    assert_eq!(seen[0]["requestedSchema"]["required"], json!(["confirm"]));
    assert_eq!(
        seen[0]["requestedSchema"]["properties"]["confirm"]["type"],
        "boolean"
    );
}

#[tokio::test]
async fn elicit_hook_confirm_fails_closed() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    for (reply, outcome) in [
        (
            Ok(json!({"action": "accept", "content": {"confirm": false}})),
            "Declined",
        ),
        (Ok(json!({"action": "accept"})), "no answer -32602"),
        (Ok(json!({"action": "decline"})), "Declined"),
        (Ok(json!({"action": "cancel"})), "Cancelled"),
        (Ok(json!({"confirm": true})), "no answer -32602"),
        (
            Err(ErrorObject::internal("the client connection closed")),
            "no answer -32603",
        ),
    ] {
        let shown = format!("{reply:?}");
        let ctx = CallContext::new().with_elicit(ScriptedElicit::new(reply));
        assert_eq!(
            call_text(&server, &ctx, "write", json!({})).await,
            format!("available=true confirmed={outcome}"),
            "for {shown}"
        );
    }
    // No hook, no outbound, no initialized client: nobody to ask.
    assert_eq!(
        call_text(&server, &CallContext::new(), "write", json!({})).await,
        "available=false confirmed=CannotAsk(NoClient)"
    );
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Booking {
    name: String,
    seats: u32,
    vip: bool,
}

fn booking_tool() -> McpToolDef {
    McpToolDef::new(
        "book",
        "Asks for booking details",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let Some(elicitor) = ctx.elicitation() else {
                return "unavailable".to_owned();
            };
            match elicitor.form::<Booking>("Booking details?").await {
                Ok(ElicitResponse::Accept(b)) => format!("accept {} {} {}", b.name, b.seats, b.vip),
                Ok(ElicitResponse::Decline) => "decline".to_owned(),
                Ok(ElicitResponse::Cancel) => "cancel".to_owned(),
                Err(e) => format!("error {}", e.code),
            }
        },
    )
}

#[tokio::test]
async fn typed_form_accept_decline_cancel() {
    let server = build(McpServer::builder().tool(booking_tool()));
    let accept = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"name": "Ada", "seats": 2, "vip": true}}),
    ));
    let ctx = CallContext::new().with_elicit(accept.clone());
    assert_eq!(
        call_text(&server, &ctx, "book", json!({})).await,
        "accept Ada 2 true"
    );
    let seen = accept.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["message"], "Booking details?");
    let schema = &seen[0]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["vip"]["type"], "boolean");
    let mut required: Vec<&str> = schema["required"]
        .as_array()
        .expect("required list")
        .iter()
        .map(|v| v.as_str().expect("string"))
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["name", "seats", "vip"]);

    for (reply, expected) in [
        (json!({"action": "decline"}), "decline"),
        (json!({"action": "cancel"}), "cancel"),
        // Accepted content that does not fit the type is -32602.
        (
            json!({"action": "accept", "content": {"name": "Ada"}}),
            "error -32602",
        ),
        (
            json!({"action": "accept", "content": {"name": "Ada", "seats": "two", "vip": true}}),
            "error -32602",
        ),
        // An unknown action is -32602 too.
        (json!({"action": "maybe"}), "error -32602"),
    ] {
        let ctx = CallContext::new().with_elicit(ScriptedElicit::new(Ok(reply.clone())));
        assert_eq!(
            call_text(&server, &ctx, "book", json!({})).await,
            expected,
            "for {reply}"
        );
    }
}

async fn initialize_with(server: &McpServer, ctx: &CallContext, capabilities: Value) {
    let reply = ask(
        server,
        ctx,
        req(
            "init",
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities}),
        ),
    )
    .await;
    result(&reply);
}

#[tokio::test]
async fn elicitation_over_outbound_routes_the_client_response() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    let session = Session::new();
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_session(session.clone());
    initialize_with(&server, &ctx, json!({"elicitation": {}})).await;

    let call = spawn_message(&server, &ctx, call_req(1, "write", json!({})));
    let request = guard("elicitation/create", rx.recv())
        .await
        .expect("server sends elicitation/create");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Write the output?");
    let id = request["id"].clone();
    assert!(
        id.is_string() || id.is_i64(),
        "server request has an id: {request}"
    );
    // The client's response is routed to the waiting tool, and not answered.
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"confirm": true}}}),
    )
    .await;
    let reply = join(call).await.expect("call answered");
    assert_eq!(text_of(result(&reply)), "available=true confirmed=Accepted");

    // An error response from the client fails closed, and is told apart
    // from a user who declined.
    let call = spawn_message(&server, &ctx, call_req(2, "write", json!({})));
    let request = guard("elicitation/create", rx.recv())
        .await
        .expect("second elicitation/create");
    tell(
        &server,
        &ctx,
        json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user away"}}),
    )
    .await;
    let reply = join(call).await.expect("call answered");
    assert_eq!(
        text_of(result(&reply)),
        "available=true confirmed=no answer -1"
    );
}

#[tokio::test]
async fn elicitation_responses_route_within_their_own_session() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (out_a, mut rx_a) = recorder();
    let (out_b, mut rx_b) = recorder();
    let ctx_a = CallContext::new()
        .with_outbound(out_a)
        .with_session(Session::new());
    let ctx_b = CallContext::new()
        .with_outbound(out_b)
        .with_session(Session::new());
    initialize_with(&server, &ctx_a, json!({"elicitation": {}})).await;
    initialize_with(&server, &ctx_b, json!({"elicitation": {}})).await;

    let call_a = spawn_message(&server, &ctx_a, call_req(1, "write", json!({})));
    let call_b = spawn_message(&server, &ctx_b, call_req(1, "write", json!({})));
    let req_a = guard("A's elicitation", rx_a.recv()).await.expect("A asks");
    let req_b = guard("B's elicitation", rx_b.recv()).await.expect("B asks");
    assert_eq!(req_a["method"], "elicitation/create");
    assert_eq!(req_b["method"], "elicitation/create");

    // B declines first, then A accepts; each answer reaches only its own session.
    tell(
        &server,
        &ctx_b,
        json!({"jsonrpc": "2.0", "id": req_b["id"], "result": {"action": "decline"}}),
    )
    .await;
    tell(
        &server,
        &ctx_a,
        json!({"jsonrpc": "2.0", "id": req_a["id"], "result": {"action": "accept", "content": {"confirm": true}}}),
    )
    .await;
    let reply_a = join(call_a).await.expect("A answered");
    let reply_b = join(call_b).await.expect("B answered");
    assert_eq!(
        text_of(result(&reply_a)),
        "available=true confirmed=Accepted"
    );
    assert_eq!(
        text_of(result(&reply_b)),
        "available=true confirmed=Declined"
    );
}

#[tokio::test]
async fn elicitation_over_outbound_needs_the_client_capability() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    // Never initialized.
    let ctx = CallContext::new()
        .with_outbound(Arc::clone(&outbound))
        .with_session(Session::new());
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=false confirmed=CannotAsk(NoClient)"
    );
    // Initialized without elicitation: the tool is told the client cannot
    // be asked, not that the user said no.
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_session(Session::new());
    initialize_with(&server, &ctx, json!({"sampling": {}})).await;
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=false confirmed=CannotAsk(NotDeclared)"
    );
    assert!(drain(&mut rx).is_empty());
}

#[tokio::test]
async fn explicit_elicit_hook_takes_precedence_over_outbound() {
    let server = build(McpServer::builder().tool(confirm_tool()));
    let (outbound, mut rx) = recorder();
    let hook = ScriptedElicit::new(Ok(
        json!({"action": "accept", "content": {"confirm": true}}),
    ));
    let ctx = CallContext::new()
        .with_outbound(outbound)
        .with_elicit(hook.clone())
        .with_session(Session::new());
    initialize_with(&server, &ctx, json!({"elicitation": {}})).await;
    assert_eq!(
        call_text(&server, &ctx, "write", json!({})).await,
        "available=true confirmed=Accepted"
    );
    assert_eq!(hook.seen().len(), 1);
    assert!(drain(&mut rx).is_empty(), "outbound must not be used");
}

// ---------------------------------------------------------------------------
// Context plumbing
// ---------------------------------------------------------------------------

#[tokio::test]
async fn invoke_context_carries_headers_peer_and_request_id() {
    let server = build(McpServer::builder().tool(McpToolDef::new(
        "ctx",
        "Reports its context",
        json!({"type": "object"}),
        |_args, ctx: InvokeContext| async move {
            let tenant = ctx
                .header("x-tenant")
                .and_then(|h| h.as_single())
                .unwrap_or("-")
                .to_owned();
            format!(
                "{tenant} {} {} cancelled={}",
                ctx.remote_addr().unwrap_or("-"),
                ctx.request_id().map_or("-".to_owned(), ToString::to_string),
                ctx.is_cancelled()
            )
        },
    )));
    let mut headers = mcp_core::Headers::new();
    headers.insert("x-tenant".into(), mcp_core::HeaderValue::One("acme".into()));
    let ctx = CallContext::new()
        .with_headers(headers)
        .with_remote_addr("127.0.0.1:9");
    let reply = ask(&server, &ctx, call_req(31, "ctx", json!({}))).await;
    assert_eq!(
        text_of(result(&reply)),
        "acme 127.0.0.1:9 31 cancelled=false"
    );
    assert_eq!(
        call_text(&server, &CallContext::new(), "ctx", json!({})).await,
        "- - 1 cancelled=false"
    );
}

// ---------------------------------------------------------------------------
// tools/list served from the listing serialized at build time
// ---------------------------------------------------------------------------

fn listed(i: usize) -> McpToolDef {
    McpToolDef::new(
        format!("tool_{i}"),
        format!("Tool number {i}"),
        json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
        |_args, _ctx: InvokeContext| async { "ok" },
    )
}

/// The listing written once at build time is the same JSON the per-call
/// path builds (forced here by a visibility hook that shows every tool), in
/// both eras, through the bytes API and the `Value` API.
#[tokio::test]
async fn prebuilt_tools_listing_matches_the_per_call_listing() {
    let cached = McpServer::builder()
        .tools((0..5).map(listed))
        .list_cache(1000, mcp_core::CacheScope::Private)
        .build()
        .expect("server");
    let per_call = McpServer::builder()
        .tools((0..5).map(|i| listed(i).with_visible(|_| true)))
        .list_cache(1000, mcp_core::CacheScope::Private)
        .build()
        .expect("server");
    let legacy = req(1, "tools/list", json!({}));
    let modern = req(
        2,
        "tools/list",
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}),
    );
    for message in [legacy, modern] {
        let ctx = CallContext::new().with_session(Session::new());
        let a = ask(&cached, &ctx, message.clone()).await;
        let b = ask(&per_call, &ctx, message.clone()).await;
        assert_eq!(a, b, "listing differs for {message}");
        assert_eq!(a["result"]["tools"].as_array().map(Vec::len), Some(5));
        let bytes = guard(
            "frame",
            cached.handle_frame(message.to_string().as_bytes(), &ctx),
        )
        .await
        .expect("a reply");
        let parsed: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert_eq!(parsed, b, "bytes API differs for {message}");
    }
}

/// A cursor is still refused on the prebuilt path (one page only).
#[tokio::test]
async fn prebuilt_tools_listing_refuses_a_cursor() {
    let server = McpServer::builder()
        .tool(listed(0))
        .build()
        .expect("server");
    let ctx = CallContext::new().with_session(Session::new());
    let reply = ask(&server, &ctx, req(1, "tools/list", json!({"cursor": "x"}))).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

/// A handler that notices its cancellation and returns a value at once
/// still gets no response: the call was cancelled before it finished.
#[tokio::test]
async fn a_call_that_returns_on_cancellation_gets_no_response() {
    let started = Arc::new(Notify::new());
    let tool = {
        let started = Arc::clone(&started);
        McpToolDef::new(
            "stoppable",
            "Returns as soon as it is cancelled",
            json!({"type": "object"}),
            move |_args, ctx: InvokeContext| {
                let started = Arc::clone(&started);
                async move {
                    started.notify_one();
                    ctx.cancelled().await;
                    "stopped"
                }
            },
        )
    };
    let server = build(McpServer::builder().tool(tool));
    let session = Session::new();
    let ctx = CallContext::new().with_session(session.clone());
    let call = spawn_message(&server, &ctx, call_req(7, "stoppable", json!({})));
    guard("tool start", started.notified()).await;
    tell(
        &server,
        &ctx,
        note("notifications/cancelled", json!({"requestId": 7})),
    )
    .await;
    assert_eq!(join(call).await, None, "a cancelled call gets no response");
    assert_eq!(session.inflight_len(), 0);
}
