//! [`TestClient`]: an MCP client over newline-delimited JSON-RPC; see the
//! [module docs](super).
//!
//! A thin layer over the client's engine (`client::engine::Peer` on the
//! byte stream link): request ids, the table of requests waiting for
//! their reply, timeouts, and answers to the server's own requests are the
//! client's. What a test needs besides is the engine's observer hook
//! ([`Queues`]): the queue of notifications, the queue of messages no
//! request claims, and the `MCP_TRACE_DIR` recorder.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot};

use crate::client::engine::Peer;
use crate::client::link::lines::Lines;
use crate::client::observer::Observer;
use crate::client::{ClientError, Handlers, RequestOptions};
use crate::protocol::{jsonrpc, CallToolResult, ErrorObject, RequestId, LATEST_PROTOCOL_VERSION};
use crate::transport::stdio::{serve_io, StdioHandle, StdioOptions};
use crate::McpServer;

#[cfg(feature = "trace")]
use super::trace::Tracer;

/// Answers the server's `elicitation/create` requests: gets the request
/// params, returns the result object (`{action, content?}`) or an error.
pub type ElicitHandler = Arc<dyn Fn(&Value) -> Result<Value, ErrorObject> + Send + Sync>;

/// How a [`TestClient`] behaves.
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientOptions {
    /// Announce the elicitation capability and answer with this handler.
    /// Default: accept every form, filling a boolean `confirm` with `true`.
    pub elicit: Option<ElicitHandler>,
    /// How long [`TestClient::request`] waits for a reply (default 30 s).
    pub timeout: Duration,
    /// The longest line the server may send (default 64 MiB); a longer
    /// one ends the connection, found before it is buffered.
    pub max_message_bytes: usize,
    /// With feature `trace`, record this client's messages under
    /// `$MCP_TRACE_DIR` (default `true`). A test whose server sends what
    /// no schema allows on purpose turns it off ([`untraced`](Self::untraced)).
    pub trace: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            elicit: Some(Arc::new(|_| {
                Ok(json!({"action": "accept", "content": {"confirm": true}}))
            })),
            timeout: Duration::from_secs(30),
            max_message_bytes: 64 * 1024 * 1024,
            trace: true,
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

    /// Sets the longest line the server may send.
    #[must_use]
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message_bytes = max;
        self
    }

    /// Records nothing under `$MCP_TRACE_DIR` (see [`trace`](Self::trace)).
    #[must_use]
    pub fn untraced(mut self) -> Self {
        self.trace = false;
        self
    }

    /// The engine's callbacks: the elicitation handler, if any (`ping` is
    /// answered by the engine, anything else is `-32601`).
    fn handlers(&self) -> Handlers {
        match &self.elicit {
            Some(handler) => {
                let handler = Arc::clone(handler);
                Handlers::default().elicitation(move |params| {
                    let answer = handler(&params);
                    async move { answer }
                })
            }
            None => Handlers::default(),
        }
    }
}

/// A request sent but not yet answered; see [`TestClient::start_request`].
#[derive(Debug)]
pub struct PendingRequest {
    /// The id it was sent with.
    pub id: RequestId,
    rx: oneshot::Receiver<Vec<u8>>,
}

impl PendingRequest {
    /// Waits up to `timeout` for the raw response message (`None` on
    /// timeout, or once the connection has closed without it).
    ///
    /// # Cancel safety
    /// Dropping the future gives up on the response; a later one is discarded.
    pub async fn response(self, timeout: Duration) -> Option<Value> {
        let reply = tokio::time::timeout(timeout, self.rx).await.ok()?.ok()?;
        serde_json::from_slice(&reply).ok()
    }
}

/// The engine's observer for a [`TestClient`]: queues what a test reads
/// and records the trace.
struct Queues {
    notifications: mpsc::UnboundedSender<Value>,
    unmatched: mpsc::UnboundedSender<Value>,
    #[cfg(feature = "trace")]
    tracer: Option<Arc<Tracer>>,
}

/// A message as a test sees it: its JSON, or (not JSON) its text.
fn as_value(message: &[u8]) -> Value {
    serde_json::from_slice(message)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(message).into_owned()))
}

impl Observer for Queues {
    #[cfg(feature = "trace")]
    fn sent(&self, message: &[u8]) {
        if let Some(tracer) = &self.tracer {
            tracer.sent(message);
        }
    }

    #[cfg(feature = "trace")]
    fn received(&self, message: &[u8]) {
        if let Some(tracer) = &self.tracer {
            match serde_json::from_slice::<Value>(message) {
                Ok(value) => tracer.received(&value, std::str::from_utf8(message).ok()),
                Err(_) => tracer.received(&as_value(message), None),
            }
        }
    }

    fn notification(&self, message: &[u8]) {
        let _ = self.notifications.send(as_value(message));
    }

    fn unmatched(&self, message: &[u8]) {
        let _ = self.unmatched.send(as_value(message));
    }

    /// A batch reply is a test's to read whole ([`TestClient::next_unmatched`]).
    fn whole_batches(&self) -> bool {
        true
    }
}

/// An MCP client for tests; see the [module docs](super).
pub struct TestClient {
    peer: Arc<Peer>,
    notifications: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    unmatched: tokio::sync::Mutex<mpsc::UnboundedReceiver<Value>>,
    server: Option<StdioHandle>,
    options: ClientOptions,
    init: Option<Value>,
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
        let (note_tx, note_rx) = mpsc::unbounded_channel();
        let (other_tx, other_rx) = mpsc::unbounded_channel();
        let queues = Queues {
            notifications: note_tx,
            unmatched: other_tx,
            #[cfg(feature = "trace")]
            tracer: Tracer::new().filter(|_| options.trace),
        };
        let peer = Peer::unlinked(
            false,
            options.handlers(),
            Some(options.timeout),
            Some(Arc::new(queues)),
        );
        let link = Lines::over(reader, writer, peer.inbox(), options.max_message_bytes);
        peer.attach(Box::new(link));
        Self {
            peer,
            notifications: tokio::sync::Mutex::new(note_rx),
            unmatched: tokio::sync::Mutex::new(other_rx),
            server: None,
            options,
            init: None,
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

    /// Writes one raw line (a newline is appended): any bytes, JSON or not.
    /// `false` once the connection is closed.
    ///
    /// # Cancel safety
    /// Dropping the future may lose the line, never half of it.
    pub async fn send_raw(&self, line: &[u8]) -> bool {
        self.peer.send_raw(line.to_vec()).await.is_ok()
    }

    /// Sends a JSON value as one line.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn send_json(&self, message: &Value) -> bool {
        match serde_json::to_vec(message) {
            Ok(line) => self.peer.send_raw(line).await.is_ok(),
            Err(_) => false,
        }
    }

    /// Sends a notification.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn notify(&self, method: &str, params: Value) -> bool {
        self.send_json(&jsonrpc::notification(method, params)).await
    }

    /// Sends a request and returns without waiting for the answer.
    ///
    /// # Cancel safety
    /// As for [`send_raw`](Self::send_raw).
    pub async fn start_request(&self, method: &str, params: Value) -> PendingRequest {
        let id = RequestId::Number(self.peer.fresh_id());
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
        let rx = self.peer.expect(id.clone());
        self.send_json(&jsonrpc::request(&id, method, params)).await;
        PendingRequest { id, rx }
    }

    /// Sends a request and waits for its result, as the client does: on
    /// timeout (or when the future is dropped) the server gets
    /// `notifications/cancelled`.
    ///
    /// # Errors
    /// The server's error object; an internal error on timeout or closed connection.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the request; its response is discarded.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ErrorObject> {
        let Value::Object(params) = params else {
            // Params that are not an object are a test input: sent as they are.
            let pending = self.start_request(method, params).await;
            let message = pending
                .response(self.options.timeout)
                .await
                .ok_or_else(|| ErrorObject::internal(format!("no response to {method}")))?;
            return result_of(message);
        };
        let options = RequestOptions::new().timeout(self.options.timeout);
        match self.peer.request(method, &params, &options).await {
            Ok(result) => serde_json::from_str(result.get())
                .map_err(|e| ErrorObject::internal(format!("malformed result: {e}"))),
            Err(ClientError::Rpc(e)) => Err(e),
            Err(ClientError::Protocol(what)) => Err(ErrorObject::internal(what)),
            Err(_) => Err(ErrorObject::internal(format!("no response to {method}"))),
        }
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
    /// with every progress notification received for that token (the
    /// notifications received until then are drained).
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
        // The test's own token: the notifications stay whole in the
        // queue (the engine's progress callback would keep only the numbers).
        let token = format!("progress-{}", self.peer.fresh_id());
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
    /// id `null`, a batch reply, a line that is not JSON, as a string),
    /// waiting up to `timeout`.
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
        self.peer.link().close().await;
        match self.server.take() {
            Some(handle) => handle.wait().await,
            None => Ok(()),
        }
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
