//! [`TestClient`]: an MCP client over newline-delimited JSON-RPC; see the
//! [module docs](super).

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::protocol::{jsonrpc, CallToolResult, ErrorObject, RequestId, LATEST_PROTOCOL_VERSION};
use crate::transport::stdio::{serve_io, StdioHandle, StdioOptions};
use crate::McpServer;

#[cfg(feature = "trace")]
use super::trace::Tracer;

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
    ///
    /// # Cancel safety
    /// Dropping the future gives up on the response; a later one is discarded.
    pub async fn response(self, timeout: Duration) -> Option<Value> {
        tokio::time::timeout(timeout, self.rx).await.ok()?.ok()
    }
}

/// An MCP client for tests; see the [module docs](super).
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
    #[cfg(feature = "trace")]
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
    ///
    /// # Cancel safety
    /// Dropping the future may leave a server task running until its input ends.
    pub async fn connect(server: McpServer) -> Result<Self, ErrorObject> {
        Self::connect_with(server, StdioOptions::default(), ClientOptions::default()).await
    }

    /// Like [`connect`](Self::connect) with explicit transport and client options.
    ///
    /// # Errors
    /// The server's error answer to `initialize`.
    ///
    /// # Cancel safety
    /// As for [`connect`](Self::connect).
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
        #[cfg(feature = "trace")]
        let tracer = Tracer::new();
        let reader = tokio::spawn(read_loop(
            reader,
            Arc::clone(&writer),
            Arc::clone(&waiters),
            note_tx,
            other_tx,
            options.elicit.clone(),
            #[cfg(feature = "trace")]
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
            #[cfg(feature = "trace")]
            tracer,
        }
    }

    /// Sends `initialize` for `protocol_version` (announcing elicitation when
    /// a handler is set) and then `notifications/initialized`.
    ///
    /// # Errors
    /// The server's error answer.
    ///
    /// # Cancel safety
    /// Dropping the future leaves the handshake half done: start a new client.
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
    ///
    /// # Cancel safety
    /// Dropping the future may lose the line, never half of it.
    pub async fn send_raw(&self, line: &[u8]) -> bool {
        #[cfg(feature = "trace")]
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
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn send_json(&self, message: &Value) -> bool {
        self.send_raw(message.to_string().as_bytes()).await
    }

    /// Sends a notification.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn notify(&self, method: &str, params: Value) -> bool {
        self.send_json(&jsonrpc::notification(method, params)).await
    }

    fn fresh_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a request and returns without waiting for the answer.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn start_request(&self, method: &str, params: Value) -> PendingRequest {
        let id = self.fresh_id();
        self.start_request_with_id(id, method, params).await
    }

    /// Sends a request with a chosen id and returns without waiting.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
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
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request; its response is discarded.
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
    ///
    /// # Cancel safety
    /// As for [`request`](Self::request).
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
    ///
    /// # Cancel safety
    /// As for [`request`](Self::request).
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
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn cancel(&self, id: &RequestId) -> bool {
        self.notify(
            "notifications/cancelled",
            json!({"requestId": id, "reason": "test"}),
        )
        .await
    }

    /// Every notification received so far (and not yet drained).
    ///
    /// # Cancel safety
    /// Cancel-safe: notifications not yet returned stay queued.
    pub async fn drain_notifications(&self) -> Vec<Value> {
        let mut rx = self.notifications.lock().await;
        let mut out = Vec::new();
        while let Ok(n) = rx.try_recv() {
            out.push(n);
        }
        out
    }

    /// The next server notification, waiting up to `timeout`.
    ///
    /// # Cancel safety
    /// Cancel-safe: a notification not yet returned stays queued.
    pub async fn next_notification(&self, timeout: Duration) -> Option<Value> {
        let mut rx = self.notifications.lock().await;
        tokio::time::timeout(timeout, rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next message that matched no pending request (e.g. an error with
    /// id `null`), waiting up to `timeout`.
    ///
    /// # Cancel safety
    /// Cancel-safe: a message not yet returned stays queued.
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
    ///
    /// # Cancel safety
    /// Dropping the future leaves the server task to end when its input does.
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
    #[cfg(feature = "trace")] tracer: Option<Arc<Tracer>>,
) {
    let mut lines = BufReader::new(reader).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            let line = Value::String(line);
            #[cfg(feature = "trace")]
            if let Some(tracer) = &tracer {
                tracer.received(&line, None);
            }
            let _ = unmatched.send(line);
            continue;
        };
        #[cfg(feature = "trace")]
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
