//! An in-process MCP client for testing servers.
//!
//! [`TestClient`] speaks newline-delimited JSON-RPC over any byte stream pair:
//! an in-memory pipe to a server in the same process ([`TestClient::connect`]),
//! or a child process's stdin/stdout ([`TestClient::over`]). It answers
//! `elicitation/create` requests with a handler you choose, records progress
//! and other notifications, and hands back anything it cannot match.
//!
//! ```
//! use mcp_core::{McpServer, McpToolDef, InvokeContext, testing::TestClient};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let server = McpServer::builder()
//!     .tool(McpToolDef::new("echo", "Echo", json!({"type": "object"}),
//!         |args, _ctx: InvokeContext| async move { args["text"].as_str().unwrap_or("").to_owned() }))
//!     .build()
//!     .unwrap();
//! let client = TestClient::connect(server).await.unwrap();
//! let result = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
//! assert_eq!(result.text_content(), "hi");
//! # }
//! ```
//!
//! # Tracing received messages
//!
//! When the environment variable `MCP_TRACE_DIR` is set (it is read once per
//! process), every `TestClient` appends one JSON line per message it
//! receives to `$MCP_TRACE_DIR/trace-<pid>.jsonl` (one file per process,
//! opened in append mode; the directory is created if needed). Each line is
//!
//! ```json
//! {"revision": "2025-11-25", "method": "tools/call", "message": {"jsonrpc": "2.0", "id": 3, "result": {}}}
//! ```
//!
//! - `message` is the message as received, verbatim (each entry of a batch
//!   reply is a line of its own; a line that is not JSON is recorded as a
//!   string);
//! - `method` is the method of the request a response answers (for every
//!   request this client wrote, including raw ones sent with
//!   [`send_raw`](TestClient::send_raw)), the message's own method for a
//!   notification or a server→client request, and `null` for a response
//!   to no request of this client;
//! - `revision` is the protocol revision in force: the
//!   `io.modelcontextprotocol/protocolVersion` in the answered request's
//!   `_meta` when it had one, else the version negotiated by this client's
//!   `initialize`, else `"2025-11-25"`. A notification takes the revision of
//!   the request it belongs to (by `progressToken`, by the
//!   `io.modelcontextprotocol/subscriptionId` of a listen stream, or by
//!   `requestId`), or that of the requests in flight when they all agree.
//!
//! `tests/schema/validate_traces.py` checks such a directory against the
//! official JSON Schemas of each revision. Write errors are ignored; when the
//! variable is unset nothing is recorded and nothing is parsed.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::protocol::{jsonrpc, CallToolResult, ErrorObject, RequestId, LATEST_PROTOCOL_VERSION};
use crate::transport::stdio::{serve_io, StdioHandle, StdioOptions};
use crate::McpServer;

/// Answers the server's `elicitation/create` requests: gets the request
/// params, returns the result object (`{action, content?}`) or an error.
pub type ElicitHandler = Arc<dyn Fn(&Value) -> Result<Value, ErrorObject> + Send + Sync>;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;
type Waiters = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Value>>>>;

/// How a [`TestClient`] behaves.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Announce the elicitation capability and answer with this handler.
    /// Default: accept every form, filling a boolean `confirm` with `true`.
    pub elicit: Option<ElicitHandler>,
    /// How long [`TestClient::request`] waits for a reply (default 30 s).
    pub timeout: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            elicit: Some(Arc::new(|_| {
                Ok(json!({"action": "accept", "content": {"confirm": true}}))
            })),
            timeout: Duration::from_secs(30),
        }
    }
}

impl ClientOptions {
    /// Uses `handler` for elicitation requests.
    #[must_use]
    pub fn elicit(
        mut self,
        handler: impl Fn(&Value) -> Result<Value, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        self.elicit = Some(Arc::new(handler));
        self
    }

    /// Does not announce elicitation.
    #[must_use]
    pub fn without_elicitation(mut self) -> Self {
        self.elicit = None;
        self
    }

    /// Sets the request timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// A request sent but not yet answered; see [`TestClient::start_request`].
#[derive(Debug)]
pub struct PendingRequest {
    /// The id it was sent with.
    pub id: RequestId,
    rx: oneshot::Receiver<Value>,
}

impl PendingRequest {
    /// Waits up to `timeout` for the raw response message.
    pub async fn response(self, timeout: Duration) -> Option<Value> {
        tokio::time::timeout(timeout, self.rx).await.ok()?.ok()
    }
}

/// An MCP client for tests; see the [module docs](self).
pub struct TestClient {
    writer: Arc<tokio::sync::Mutex<Option<Writer>>>,
    waiters: Waiters,
    next_id: AtomicI64,
    notifications: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    unmatched: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    reader: JoinHandle<()>,
    server: Option<StdioHandle>,
    options: ClientOptions,
    init: Option<Value>,
    tracer: Option<Arc<Tracer>>,
}

impl std::fmt::Debug for TestClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestClient")
            .field("init", &self.init)
            .finish_non_exhaustive()
    }
}

impl TestClient {
    /// Serves `server` over an in-memory pipe and initializes with default options.
    ///
    /// # Errors
    /// The server's error answer to `initialize`.
    pub async fn connect(server: McpServer) -> Result<Self, ErrorObject> {
        Self::connect_with(server, StdioOptions::default(), ClientOptions::default()).await
    }

    /// Like [`connect`](Self::connect) with explicit transport and client options.
    ///
    /// # Errors
    /// The server's error answer to `initialize`.
    pub async fn connect_with(
        server: McpServer,
        stdio: StdioOptions,
        options: ClientOptions,
    ) -> Result<Self, ErrorObject> {
        let mut client = Self::start(server, stdio, options);
        client.initialize(LATEST_PROTOCOL_VERSION).await?;
        Ok(client)
    }

    /// Serves `server` over an in-memory pipe without initializing.
    pub fn start(server: McpServer, stdio: StdioOptions, options: ClientOptions) -> Self {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_end);
        let handle = serve_io(server, server_read, server_write, stdio);
        let (read, write) = tokio::io::split(client_end);
        let mut client = Self::over(read, write, options);
        client.server = Some(handle);
        client
    }

    /// A client over any stream pair (for example a child process's stdout
    /// and stdin), not yet initialized.
    pub fn over<R, W>(reader: R, writer: W, options: ClientOptions) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let writer: Arc<tokio::sync::Mutex<Option<Writer>>> =
            Arc::new(tokio::sync::Mutex::new(Some(Box::new(writer))));
        let waiters: Waiters = Arc::default();
        let (note_tx, note_rx) = mpsc::unbounded_channel();
        let (other_tx, other_rx) = mpsc::unbounded_channel();
        let tracer = Tracer::new();
        let reader = tokio::spawn(read_loop(
            reader,
            Arc::clone(&writer),
            Arc::clone(&waiters),
            note_tx,
            other_tx,
            options.elicit.clone(),
            tracer.clone(),
        ));
        Self {
            writer,
            waiters,
            next_id: AtomicI64::new(1),
            notifications: tokio::sync::Mutex::new(note_rx),
            unmatched: tokio::sync::Mutex::new(other_rx),
            reader,
            server: None,
            options,
            init: None,
            tracer,
        }
    }

    /// Sends `initialize` for `protocol_version` (announcing elicitation when
    /// a handler is set) and then `notifications/initialized`.
    ///
    /// # Errors
    /// The server's error answer.
    pub async fn initialize(&mut self, protocol_version: &str) -> Result<Value, ErrorObject> {
        let capabilities = if self.options.elicit.is_some() {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": protocol_version,
                    "capabilities": capabilities,
                    "clientInfo": {"name": "mcp-core-test-client", "version": env!("CARGO_PKG_VERSION")},
                }),
            )
            .await?;
        self.notify("notifications/initialized", json!({})).await;
        self.init = Some(result.clone());
        Ok(result)
    }

    /// The `initialize` result, once initialized.
    pub fn initialize_result(&self) -> Option<&Value> {
        self.init.as_ref()
    }

    /// Writes one raw line (a newline is appended).
    pub async fn send_raw(&self, line: &[u8]) -> bool {
        if let Some(tracer) = &self.tracer {
            tracer.sent(line);
        }
        let mut guard = self.writer.lock().await;
        let Some(w) = guard.as_mut() else {
            return false;
        };
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        w.write_all(&buf).await.is_ok() && w.flush().await.is_ok()
    }

    /// Sends a JSON value as one line.
    pub async fn send_json(&self, message: &Value) -> bool {
        self.send_raw(message.to_string().as_bytes()).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> bool {
        self.send_json(&jsonrpc::notification(method, params)).await
    }

    fn fresh_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request and returns without waiting for the answer.
    pub async fn start_request(&self, method: &str, params: Value) -> PendingRequest {
        let id = self.fresh_id();
        self.start_request_with_id(id, method, params).await
    }

    /// Sends a request with a chosen id and returns without waiting.
    pub async fn start_request_with_id(
        &self,
        id: RequestId,
        method: &str,
        params: Value,
    ) -> PendingRequest {
        let (tx, rx) = oneshot::channel();
        self.waiters
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        self.send_json(&jsonrpc::request(&id, method, params)).await;
        PendingRequest { id, rx }
    }

    /// Sends a request and waits for its result.
    ///
    /// # Errors
    /// The server's error object; an internal error on timeout or closed connection.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let pending = self.start_request(method, params).await;
        let message = pending
            .response(self.options.timeout)
            .await
            .ok_or_else(|| ErrorObject::internal(format!("no response to {method}")))?;
        result_of(message)
    }

    /// Calls a tool.
    ///
    /// # Errors
    /// A protocol error (unknown tool, internal error …).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ErrorObject> {
        let result = self
            .request("tools/call", json!({"name": name, "arguments": arguments}))
            .await?;
        serde_json::from_value(result)
            .map_err(|e| ErrorObject::internal(format!("malformed tool result: {e}")))
    }

    /// Calls a tool with a progress token and returns the result together
    /// with every progress notification received for that token.
    ///
    /// # Errors
    /// A protocol error.
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<(CallToolResult, Vec<Value>), ErrorObject> {
        let token = format!("progress-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let result = self
            .request(
                "tools/call",
                json!({"name": name, "arguments": arguments, "_meta": {"progressToken": token}}),
            )
            .await?;
        let result: CallToolResult = serde_json::from_value(result)
            .map_err(|e| ErrorObject::internal(format!("malformed tool result: {e}")))?;
        let progress = self
            .drain_notifications()
            .await
            .into_iter()
            .filter(|n| {
                n["method"] == "notifications/progress"
                    && n["params"]["progressToken"] == token.as_str()
            })
            .map(|n| n["params"].clone())
            .collect();
        Ok((result, progress))
    }

    /// Sends `notifications/cancelled` for `id`.
    pub async fn cancel(&self, id: &RequestId) -> bool {
        self.notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "test"}),
        )
        .await
    }

    /// Every notification received so far (and not yet drained).
    pub async fn drain_notifications(&self) -> Vec<Value> {
        let mut rx = self.notifications.lock().await;
        let mut out = Vec::new();
        while let Ok(n) = rx.try_recv() {
            out.push(n);
        }
        out
    }

    /// The next server notification, waiting up to `timeout`.
    pub async fn next_notification(&self, timeout: Duration) -> Option<Value> {
        let mut rx = self.notifications.lock().await;
        tokio::time::timeout(timeout, rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next message that matched no pending request (e.g. an error with
    /// id `null`), waiting up to `timeout`.
    pub async fn next_unmatched(&self, timeout: Duration) -> Option<Value> {
        let mut rx = self.unmatched.lock().await;
        tokio::time::timeout(timeout, rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// Closes the client's output (the server sees end of input) and, for an
    /// in-process server, waits for it to stop.
    ///
    /// # Errors
    /// The server's I/O error.
    pub async fn close(mut self) -> std::io::Result<()> {
        if let Some(mut w) = self.writer.lock().await.take() {
            let _ = w.shutdown().await;
        }
        let result = match self.server.take() {
            Some(handle) => handle.wait().await,
            None => Ok(()),
        };
        self.reader.abort();
        result
    }
}

impl Drop for TestClient {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

fn result_of(message: Value) -> Result<Value, ErrorObject> {
    let Value::Object(mut obj) = message else {
        return Err(ErrorObject::internal("response is not an object"));
    };
    if let Some(err) = obj.remove("error") {
        return Err(serde_json::from_value(err)
            .unwrap_or_else(|_| ErrorObject::internal("malformed error object")));
    }
    obj.remove("result")
        .ok_or_else(|| ErrorObject::internal("response has neither result nor error"))
}

async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    writer: Arc<tokio::sync::Mutex<Option<Writer>>>,
    waiters: Waiters,
    notes: mpsc::UnboundedSender<Value>,
    unmatched: mpsc::UnboundedSender<Value>,
    elicit: Option<ElicitHandler>,
    tracer: Option<Arc<Tracer>>,
) {
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            let line = Value::String(line);
            if let Some(tracer) = &tracer {
                tracer.received(&line, None);
            }
            let _ = unmatched.send(line);
            continue;
        };
        if let Some(tracer) = &tracer {
            tracer.received(&message, Some(&line));
        }
        let has_method = message.get("method").is_some();
        let id = message.get("id").and_then(RequestId::from_value);
        match (has_method, id) {
            (true, Some(id)) => {
                // A server→client request.
                let method = message["method"].as_str().unwrap_or_default();
                let reply = match (method, &elicit) {
                    ("elicitation/create", Some(handler)) => match handler(&message["params"]) {
                        Ok(result) => jsonrpc::ok(id.to_value(), result),
                        Err(e) => jsonrpc::fail(id.to_value(), &e),
                    },
                    ("ping", _) => jsonrpc::ok(id.to_value(), json!({})),
                    _ => jsonrpc::fail(id.to_value(), &ErrorObject::method_not_found(method)),
                };
                let mut line = reply.to_string().into_bytes();
                line.push(b'\n');
                if let Some(w) = writer.lock().await.as_mut() {
                    let _ = w.write_all(&line).await;
                    let _ = w.flush().await;
                }
            }
            (true, None) => {
                let _ = notes.send(message);
            }
            (false, Some(id)) => {
                let waiter = waiters
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&id);
                match waiter {
                    Some(tx) => {
                        let _ = tx.send(message);
                    }
                    None => {
                        let _ = unmatched.send(message);
                    }
                }
            }
            (false, None) => {
                let _ = unmatched.send(message);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Tracing (MCP_TRACE_DIR); see the module docs.
// ---------------------------------------------------------------------------

const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
const SUBSCRIPTION_ID_META: &str = "io.modelcontextprotocol/subscriptionId";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This process's trace file: `None` unless `MCP_TRACE_DIR` is set (read once).
fn trace_file() -> Option<&'static Mutex<std::fs::File>> {
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::var_os("MCP_TRACE_DIR").filter(|dir| !dir.is_empty())?;
        let _ = std::fs::create_dir_all(&dir);
        let path = std::path::Path::new(&dir).join(format!("trace-{}.jsonl", std::process::id()));
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    })
    .as_ref()
}

/// Records one exchange made without a [`TestClient`] (for example through
/// [`McpServer::handle_message`] directly): `reply` answers `request`, under
/// the revision of the request's `_meta` claim or, without one, `revision`.
/// Does nothing unless `MCP_TRACE_DIR` is set. Batches are recorded entry
/// by entry when the request is a batch of the same length.
pub fn trace_exchange(request: &Value, reply: &Value, revision: &str) {
    let Some(file) = trace_file() else { return };
    let pairs: Vec<(&Value, &Value)> = match (request, reply) {
        (Value::Array(reqs), Value::Array(replies)) => {
            // Replies come in request order, one per request with an id.
            let with_ids = reqs
                .iter()
                .filter(|r| r.get("id").is_some() && r.get("method").is_some());
            with_ids.zip(replies.iter()).collect()
        }
        _ => vec![(request, reply)],
    };
    for (req, rep) in pairs {
        let method = req
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rev = req
            .pointer("/params/_meta")
            .and_then(|m| m.get(PROTOCOL_VERSION_META))
            .and_then(Value::as_str)
            .unwrap_or(revision);
        let line = json!({"revision": rev, "method": method, "message": rep});
        let mut f = lock(file);
        let _ = writeln!(f, "{line}");
    }
}

/// A request this client wrote, remembered until its response arrives.
struct SentRequest {
    method: String,
    /// The `_meta` protocol version it carried, if any.
    revision: Option<String>,
    progress_token: Option<Value>,
}

/// One client's trace state.
struct Tracer {
    file: &'static Mutex<std::fs::File>,
    sent: Mutex<HashMap<RequestId, SentRequest>>,
    negotiated: Mutex<Option<String>>,
}

impl Tracer {
    fn new() -> Option<Arc<Self>> {
        trace_file().map(|file| {
            Arc::new(Self {
                file,
                sent: Mutex::default(),
                negotiated: Mutex::default(),
            })
        })
    }

    /// Remembers the requests in an outgoing line (a message or a batch).
    fn sent(&self, line: &[u8]) {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(items)) => items.iter().for_each(|m| self.sent_one(m)),
            Ok(message) => self.sent_one(&message),
            Err(_) => {}
        }
    }

    fn sent_one(&self, message: &Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").and_then(RequestId::from_value);
        let (Some(method), Some(id)) = (method, id) else {
            return;
        };
        let meta = message.get("params").and_then(|p| p.get("_meta"));
        let revision = meta
            .and_then(|m| m.get(PROTOCOL_VERSION_META))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        let progress_token = meta.and_then(|m| m.get("progressToken")).cloned();
        lock(&self.sent).insert(
            id,
            SentRequest {
                method: method.to_owned(),
                revision,
                progress_token,
            },
        );
    }

    /// Appends the trace line(s) of a received message; `raw` is its text
    /// when it is valid JSON.
    fn received(&self, message: &Value, raw: Option<&str>) {
        match message {
            Value::Array(items) => items.iter().for_each(|m| self.received_one(m, None)),
            message => self.received_one(message, raw),
        }
    }

    fn received_one(&self, message: &Value, raw: Option<&str>) {
        let own_method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").and_then(RequestId::from_value);
        let (method, revision) = match (own_method, id) {
            (Some(method), Some(_)) => (Some(method.to_owned()), None),
            (Some(method), None) => (Some(method.to_owned()), self.notification_revision(message)),
            (None, Some(id)) => {
                let request = lock(&self.sent).remove(&id);
                match request {
                    Some(request) => {
                        if request.method == "initialize" && request.revision.is_none() {
                            let version = message
                                .get("result")
                                .and_then(|r| r.get("protocolVersion"))
                                .and_then(Value::as_str);
                            if let Some(version) = version {
                                *lock(&self.negotiated) = Some(version.to_owned());
                            }
                        }
                        (Some(request.method), request.revision)
                    }
                    None => (None, None),
                }
            }
            (None, None) => (None, None),
        };
        let revision = revision
            .or_else(|| lock(&self.negotiated).clone())
            .unwrap_or_else(|| LATEST_PROTOCOL_VERSION.to_owned());
        let raw = raw.map_or_else(|| message.to_string(), |raw| raw.trim().to_owned());
        let line = format!(
            "{{\"revision\":{},\"method\":{},\"message\":{raw}}}\n",
            Value::String(revision),
            json!(method),
        );
        let _ = lock(self.file).write_all(line.as_bytes());
    }

    /// The `_meta` revision of the request a notification belongs to.
    fn notification_revision(&self, message: &Value) -> Option<String> {
        let params = message.get("params");
        let sent = lock(&self.sent);
        let by_token = params
            .and_then(|p| p.get("progressToken"))
            .and_then(|token| {
                sent.values()
                    .find(|r| r.progress_token.as_ref() == Some(token))
            });
        let by_id = || {
            let subscription = params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(SUBSCRIPTION_ID_META));
            let request_id = params.and_then(|p| p.get("requestId"));
            subscription
                .or(request_id)
                .and_then(RequestId::from_value)
                .and_then(|id| sent.get(&id))
        };
        if let Some(request) = by_token.or_else(by_id) {
            return request.revision.clone();
        }
        // Uncorrelated (a log message, say): the requests in flight, when they agree.
        let mut revisions = sent.values().map(|r| &r.revision);
        let first = revisions.next()?;
        if revisions.all(|r| r == first) {
            first.clone()
        } else {
            None
        }
    }
}
