// The imports, constants and helpers shared by the features test files
// (features.rs, features_subscriptions.rs, features_client_input.rs), brought
// into each with `include!`: they were one file, split by what the tests
// exercise.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_core::testing::TestClient;
use mcp_core::handler::CompletionRequest;
use mcp_core::{InvokeContext, McpResourceDef, McpServer, McpServerBuilder, McpToolDef, transport::{CallContext, Session}, protocol::ErrorObject, context::{InputRequest, Outbound}};
use serde_json::{json, Map, Value};
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Generous guard against hangs; never a timing assertion.
const HANG_GUARD: Duration = Duration::from_secs(10);

/// How long to wait before concluding that nothing more is coming.
const QUIET: Duration = Duration::from_millis(200);

async fn guard<F: Future>(what: &str, fut: F) -> F::Output {
    tokio::time::timeout(HANG_GUARD, fut)
        .await
        .unwrap_or_else(|_| panic!("hung for 10 s: {what}"))
}

fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

fn notification(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "method": method, "params": params})
}

/// The required 2026-07-28 `_meta` with these client capabilities.
fn meta(caps: Value) -> Value {
    json!({ PV: MODERN, CAPS: caps })
}

/// `params` with the 2026-07-28 `_meta` added.
fn modern(mut params: Value, caps: Value) -> Value {
    params["_meta"] = meta(caps);
    params
}

/// The `result` of a success response (panics on an error response).
fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    reply
        .get("result")
        .unwrap_or_else(|| panic!("no result in {reply}"))
}

/// `(code, message, data)` of an error response (panics on a success).
fn error(reply: &Value) -> (i64, String, Value) {
    assert!(reply.get("result").is_none(), "expected an error: {reply}");
    let err = &reply["error"];
    (
        err["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no code: {reply}")),
        err["message"].as_str().unwrap_or_default().to_owned(),
        err.get("data").cloned().unwrap_or(Value::Null),
    )
}

/// The concatenated text blocks of a `tools/call` result.
fn tool_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content array: {result}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

/// A tool result's text parsed as JSON (the probe tools answer with JSON).
fn tool_json(result: &Value) -> Value {
    let text = tool_text(result);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Records everything the server sends to the client.
struct Recorder(mpsc::UnboundedSender<Value>);

#[async_trait]
impl Outbound for Recorder {
    async fn send(&self, message: Value) -> bool {
        self.0.send(message).is_ok()
    }
}

/// One client connection driven through `McpServer::handle_message`: its
/// own session, a recording outbound channel, and the client's answers
/// routed back as JSON-RPC responses.
struct Peer {
    server: McpServer,
    ctx: CallContext,
    session: Session,
    out: Mutex<mpsc::UnboundedReceiver<Value>>,
}

impl Peer {
    /// A connection that has not initialized (2026-07-28 requests need none).
    fn new(server: &McpServer) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let session = Session::new();
        let ctx = CallContext::new()
            .with_session(session.clone())
            .with_outbound(Arc::new(Recorder(tx)));
        Self {
            server: server.clone(),
            ctx,
            session,
            out: Mutex::new(rx),
        }
    }

    /// A legacy session initialized with these client capabilities.
    async fn legacy(server: &McpServer, caps: Value) -> Self {
        let peer = Self::new(server);
        let init = peer
            .ask(req(
                0,
                "initialize",
                json!({
                    "protocolVersion": LEGACY,
                    "capabilities": caps,
                    "clientInfo": {"name": "features-test", "version": "1"},
                }),
            ))
            .await;
        assert_eq!(result(&init)["protocolVersion"], LEGACY);
        peer.tell(notification("notifications/initialized", json!({})))
            .await;
        peer
    }

    /// Sends a request and waits for its reply.
    async fn ask(&self, message: Value) -> Value {
        let shown = message.to_string();
        guard(&shown, self.server.handle_message(message, &self.ctx))
            .await
            .unwrap_or_else(|| panic!("expected a reply to {shown}"))
    }

    /// Starts a request that will wait on the client; returns its task.
    fn start(&self, message: Value) -> JoinHandle<Option<Value>> {
        let server = self.server.clone();
        let ctx = self.ctx.clone();
        tokio::spawn(async move { server.handle_message(message, &ctx).await })
    }

    /// Sends a notification or a response (no reply expected).
    async fn tell(&self, message: Value) {
        let shown = message.to_string();
        let reply = guard(&shown, self.server.handle_message(message, &self.ctx)).await;
        assert!(reply.is_none(), "no reply expected to {shown}: {reply:?}");
    }

    /// The next message the server sent to the client.
    async fn next_out(&self) -> Value {
        let mut rx = self.out.lock().await;
        guard("a server→client message", rx.recv())
            .await
            .expect("outbound channel open")
    }

    /// Everything sent within [`QUIET`] from now.
    async fn quiet_out(&self) -> Vec<Value> {
        let mut rx = self.out.lock().await;
        let mut got = Vec::new();
        while let Ok(Some(m)) = tokio::time::timeout(QUIET, rx.recv()).await {
            got.push(m);
        }
        got
    }

    /// Answers a server→client request with a result.
    async fn answer(&self, request: &Value, result: Value) {
        self.tell(json!({"jsonrpc": "2.0", "id": request["id"].clone(), "result": result}))
            .await;
    }

    /// Answers a server→client request with an error.
    async fn answer_error(&self, request: &Value, error: Value) {
        self.tell(json!({"jsonrpc": "2.0", "id": request["id"].clone(), "error": error}))
            .await;
    }
}

/// Waits for a started request's reply.
async fn finish(task: JoinHandle<Option<Value>>) -> Value {
    guard("the call to finish", task)
        .await
        .expect("call task")
        .expect("a reply")
}

/// A probe tool: no declared arguments, answers with the text its body returns.
fn tool<F, Fut>(name: &str, body: F) -> McpToolDef
where
    F: Fn(Map<String, Value>, InvokeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = String> + Send + 'static,
{
    McpToolDef::new(name, name, json!({"type": "object"}), body)
}

/// An `ErrorObject` as the JSON a probe tool reports.
fn error_json(e: &ErrorObject) -> Value {
    json!({"error": {"code": e.code, "message": e.message, "data": e.data}})
}

/// The `notifications/resources/updated` among `messages`.
fn updates(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/resources/updated")
        .map(|m| m["params"].clone())
        .collect()
}

/// A modern `subscriptions/listen` request.
fn listen(id: &str, notifications: Value) -> Value {
    req(
        id,
        "subscriptions/listen",
        modern(json!({"notifications": notifications}), json!({})),
    )
}

/// Counts how often each probe tool body ran (and finished).
#[derive(Default)]
struct Runs {
    started: AtomicUsize,
    finished: AtomicUsize,
}

/// Probe tools that report what the context gave them, as JSON text:
/// `sample`, `roots`, `sample_then_roots`, `ask_three` (`ctx.input` with
/// keys `name`, `greeting`, `roots`), `input` (the requests come in the
/// arguments), `needs_sampling` (`require_capability`) and `fail`.
fn input_server(runs: &Arc<Runs>) -> McpServer {
    let r = Arc::clone(runs);
    McpServer::builder()
        .tool(tool("sample", |args, ctx| async move {
            let text = args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("hi")
                .to_owned();
            match ctx.sample(sampling_params(&text)).await {
                Ok(answer) => json!({"answer": answer}).to_string(),
                Err(e) => error_json(&e).to_string(),
            }
        }))
        .tool(tool("roots", |_args, ctx| async move {
            match ctx.list_roots().await {
                Ok(answer) => json!({"answer": answer}).to_string(),
                Err(e) => error_json(&e).to_string(),
            }
        }))
        .tool(tool("sample_then_roots", |_args, ctx| async move {
            let model = ctx.sample(sampling_params("first")).await;
            let roots = ctx.list_roots().await;
            match (model, roots) {
                (Ok(m), Ok(r)) => json!({"model": m, "roots": r}).to_string(),
                (Err(e), _) | (_, Err(e)) => error_json(&e).to_string(),
            }
        }))
        .tool(tool("ask_three", |_args, ctx| async move {
            let asked = ctx
                .input(vec![
                    InputRequest::elicit("name", name_form()),
                    InputRequest::sample("greeting", sampling_params("Greet me")),
                    InputRequest::list_roots("roots"),
                ])
                .await;
            match asked {
                Ok(answers) => json!({"answers": answers}).to_string(),
                Err(e) => error_json(&e).to_string(),
            }
        }))
        .tool(tool("input", |args, ctx| async move {
            let requests = args
                .get("requests")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|r| InputRequest {
                    key: r["key"].as_str().unwrap_or_default().to_owned(),
                    method: r["method"].as_str().unwrap_or_default().to_owned(),
                    params: r.get("params").cloned().unwrap_or(Value::Null),
                })
                .collect();
            match ctx.input(requests).await {
                Ok(answers) => json!({"answers": answers}).to_string(),
                Err(e) => error_json(&e).to_string(),
            }
        }))
        .tool(tool("needs_sampling", move |_args, ctx| {
            let r = Arc::clone(&r);
            async move {
                r.started.fetch_add(1, Ordering::SeqCst);
                if let Err(e) = ctx.require_capability(json!({"sampling": {}})).await {
                    return e.to_string();
                }
                r.finished.fetch_add(1, Ordering::SeqCst);
                "had sampling".to_owned()
            }
        }))
        .tool(tool("needs_url_elicitation", |_args, ctx| async move {
            if let Err(e) = ctx
                .require_capability(json!({"elicitation": {"url": {}}}))
                .await
            {
                return e.to_string();
            }
            "had url elicitation".to_owned()
        }))
        .tool(tool("fail", |_args, ctx| async move {
            ctx.fail(ErrorObject::new(-32050, "custom failure").with_data(json!({"why": "test"})))
                .await;
            "unreachable".to_owned()
        }))
        .build()
        .expect("valid server")
}

fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    req(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
}

fn mcall(id: impl Into<Value>, name: &str, arguments: Value, caps: Value) -> Value {
    req(
        id,
        "tools/call",
        modern(json!({"name": name, "arguments": arguments}), caps),
    )
}

/// The `input_required` result of a modern call: `(inputRequests, requestState)`.
fn input_required(reply: &Value) -> (Value, Value) {
    let r = result(reply);
    assert_eq!(r["resultType"], "input_required", "{reply}");
    (r["inputRequests"].clone(), r["requestState"].clone())
}

fn sampling_params(text: &str) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": 20,
    })
}

fn name_form() -> Value {
    json!({
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    })
}
