//! [`HttpOptions`] and [`SessionOptions`]: every knob of the HTTP transport.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::http::request::Parts;

/// Default [`HttpOptions::max_body_bytes`]: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Default [`HttpOptions::stream_budget_bytes`]: 4 MiB.
pub const DEFAULT_STREAM_BUDGET_BYTES: usize = 4 * 1024 * 1024;
/// Default [`SessionOptions::ttl`]: 30 minutes idle.
pub const DEFAULT_SESSION_TTL: Duration = Duration::from_secs(30 * 60);
/// Default [`SessionOptions::max`]: 1000 live sessions.
pub const DEFAULT_MAX_SESSIONS: usize = 1000;
/// Default [`SessionOptions::max_per_principal`]: 100 live sessions.
pub const DEFAULT_MAX_SESSIONS_PER_PRINCIPAL: usize = 100;

use crate::boxed::BoxFuture;

/// The `allow_request` override: `(origin, host, request head) -> allowed`.
pub type AllowRequestFn = dyn Fn(Option<&str>, Option<&str>, &Parts) -> bool + Send + Sync;
/// The `authorize` hook: the request head in, a future of "allowed" out.
pub type AuthorizeFn = dyn Fn(&Parts) -> BoxFuture<bool> + Send + Sync;
/// The `principal` hook: who a session is bound to (`None`: anonymous).
pub type PrincipalFn = dyn Fn(&Parts) -> Option<String> + Send + Sync;

/// Streamable-HTTP sessions (`Mcp-Session-Id`): see [`HttpOptions::sessions`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SessionOptions {
    /// A session unused for this long expires (default 30 min).
    pub ttl: Duration,
    /// At most this many sessions live at once (default 1000). Creating one
    /// more evicts the least recently used session of the principal holding
    /// the most (counting the new one), so a principal that creates many
    /// sessions evicts its own, never another's.
    pub max: usize,
    /// At most this many live sessions per principal (default
    /// [`DEFAULT_MAX_SESSIONS_PER_PRINCIPAL`], 100). One more `initialize`
    /// is refused — HTTP 503 with a `-32000` error carrying its id — until
    /// one of them is deleted or expires; nobody else's session is touched.
    /// Applies to identified principals ([`HttpOptions::principal`], by
    /// default the `Authorization` header); anonymous requests share no
    /// identity and are bounded by [`max`](Self::max) alone.
    pub max_per_principal: usize,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_SESSION_TTL,
            max: DEFAULT_MAX_SESSIONS,
            max_per_principal: DEFAULT_MAX_SESSIONS_PER_PRINCIPAL,
        }
    }
}

impl SessionOptions {
    /// Sets the idle time-to-live.
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets the maximum number of live sessions (at least 1).
    #[must_use]
    pub fn max(mut self, max: usize) -> Self {
        self.max = max.max(1);
        self
    }

    /// Sets the maximum number of live sessions of one principal (at least 1).
    #[must_use]
    pub fn max_per_principal(mut self, max: usize) -> Self {
        self.max_per_principal = max.max(1);
        self
    }
}

/// Options for [`serve_http`](crate::serve_http) and
/// [`McpHttpService`](super::McpHttpService).
///
/// The defaults are a loopback development surface: bound to `127.0.0.1`
/// on an ephemeral port, `Host`/`Origin` restricted to loopback names,
/// 1 MiB bodies, and legacy sessions on ([`SessionOptions::default`]).
///
/// **Sessions and eras.** By default a 2025-era (legacy) client gets an
/// `Mcp-Session-Id` from `initialize`, so what it declared there reaches its
/// later calls and the server can talk back: elicitation (`ctx.confirm`,
/// `ctx.elicitation()`), progress, log messages and the GET stream all work.
/// 2026-07-28 requests are stateless whatever these options say (they never
/// get or need a session). Serving legacy clients statelessly too — every
/// request its own session, nothing kept between requests, which is what
/// lets several replicas share one endpoint without sticky routing — is an
/// explicit choice: [`HttpOptions::stateless`] (or
/// [`without_sessions`](Self::without_sessions), or `sessions = None`). There
/// a legacy call cannot ask the client anything:
/// [`InvokeContext::confirm`](crate::InvokeContext::confirm) returns
/// [`CannotAsk::SessionlessHttp`](crate::context::CannotAsk::SessionlessHttp) for the
/// tool to answer, and the other questions answer a `-32603` error saying so.
///
/// ```
/// use std::time::Duration;
/// use mcp_core::transport::http::SessionOptions;
/// use mcp_core::HttpOptions;
///
/// let options = HttpOptions::new()
///     .port(8080)
///     .sessions(SessionOptions::default().ttl(Duration::from_secs(600)))
///     .authorize(|req| {
///         req.headers.get("authorization").and_then(|v| v.to_str().ok()) == Some("Bearer s3cret")
///     });
/// assert_eq!(options.path, "/mcp");
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// TCP port; 0 (the default) picks an ephemeral port, read it back from
    /// [`HttpHandle::port`](super::HttpHandle::port).
    pub port: u16,
    /// Bind address (default `127.0.0.1`). An IPv6 address works bare or
    /// bracketed (`::1`, `[::1]`). A non-loopback address is refused unless
    /// [`authorize`](Self::authorize) or [`allow_request`](Self::allow_request) is set.
    pub host: String,
    /// The MCP endpoint (default `/mcp`); any other path answers 404 with a
    /// `-32601` error naming both paths. An [`McpHttpService`](super::McpHttpService)
    /// mounted under another path needs it set to that path.
    pub path: String,
    /// Extra `Host` names accepted besides loopback names (case-insensitive,
    /// port ignored).
    pub allowed_hosts: Vec<String>,
    /// Extra `Origin` values accepted besides loopback origins (full
    /// `scheme://host[:port]`, case-insensitive).
    pub allowed_origins: Vec<String>,
    /// Replaces the whole `Host`/`Origin` guard when set.
    pub allow_request: Option<Arc<AllowRequestFn>>,
    /// Authenticates a request that passed the guard; `false` answers 401.
    pub authorize: Option<Arc<AuthorizeFn>>,
    /// This server as an OAuth resource server (feature `auth`): bearer
    /// tokens required and verified, Protected Resource Metadata served,
    /// the token's principal bound to sessions (see [`crate::auth`]).
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    pub resource_server: Option<Arc<crate::auth::ResourceServer>>,
    /// Largest accepted request body (default 1 MiB); larger ones answer 413
    /// without being buffered. Before that answer, the rest of the body is
    /// read and discarded, up to 4× this limit and for at most 2 s, so that a
    /// client that reads only once it has sent everything (Node's `fetch`)
    /// gets the 413 rather than a reset connection.
    pub max_body_bytes: usize,
    /// Legacy `Mcp-Session-Id` sessions (default:
    /// `Some(SessionOptions::default())`); `None` serves legacy requests
    /// statelessly (see [`HttpOptions::stateless`]). 2026-07-28 requests
    /// are stateless either way.
    pub sessions: Option<SessionOptions>,
    /// Who a session is bound to; default: `auth:` and a keyed hash
    /// (HMAC-SHA256, 128 bits) of the `Authorization` header, keyed from
    /// the server's [`request_state_keys`](crate::McpServerBuilder::request_state_keys),
    /// so replicas given the same keys agree (no header: anonymous). A
    /// resource server's verified token decides instead.
    pub principal: Option<Arc<PrincipalFn>>,
    /// How long a client may take to send a request's headers (default 10 s).
    /// The clock runs whenever the connection has no request in flight (from
    /// its accept, and from each response handed over); when it runs out the
    /// connection is dropped, unless a response is still going out to a
    /// slow reader (this limit does not bound how long a response takes to
    /// be read). It therefore also bounds how long a connection may idle,
    /// even one already shutting down.
    pub header_read_timeout: Duration,
    /// How long a client may take to send a request body (default 30 s);
    /// past it the request is answered 408 and the connection closed.
    pub body_read_timeout: Duration,
    /// A connection with no request in flight is closed after this long
    /// (default 5 s).
    pub keep_alive_timeout: Duration,
    /// JSON-RPC requests running at once over the whole server (default 256).
    /// The slots are shared fairly between *holders* (a principal, or for
    /// an anonymous request its connection): at the cap, a request takes
    /// the slot of the oldest call of the holder running the most calls, if
    /// that holder runs at least two more than the newcomer's; the evicted
    /// call (for a batch, the whole POST) ends with a `-32000` error with its
    /// id. Otherwise the request is answered 503 with a `-32000` error.
    /// Notifications and responses are never refused.
    pub max_concurrent_requests: usize,
    /// JSON-RPC requests running at once on one connection (batches count
    /// each entry; default 16).
    pub max_requests_per_connection: usize,
    /// JSON-RPC requests running at once for one principal, over all its
    /// connections and sessions (default 64, a quarter of the server-wide
    /// limit), so no principal can take every slot from the others.
    /// Requests without a principal are bounded by the other limits only.
    pub max_requests_per_principal: usize,
    /// Open connections at once, not counting those holding an event
    /// stream (default 256). At the cap a new connection takes the place of
    /// the one idle the longest (no request in flight, no open response
    /// stream: idle keep-alive connections, clients still sending their
    /// request head), which is closed; when none is idle, one whose event
    /// stream only lingers after its call was cancelled (owed no response,
    /// see [`cancelled_linger`](Self::cancelled_linger)) is closed instead;
    /// with neither, the new one is closed at once.
    pub max_connections: usize,
    /// Connections holding an event stream (a session's GET stream, a POST
    /// answered as a stream), counted apart from
    /// [`max_connections`](Self::max_connections) so that held streams never
    /// lock new connections out (default 1024). At most this many GET
    /// streams are open at once; one more GET is answered 503 (`-32000`).
    /// All connections together stay within the sum of both caps.
    pub max_event_streams: usize,
    /// Server→client messages of one stream that may wait for the client to
    /// read them (default 64); a slow reader stalls its own call, no more.
    pub stream_queue: usize,
    /// Bytes of server→client messages one event stream (a POST's, or a
    /// session's GET stream) may hold for a client that does not read them
    /// (default [`DEFAULT_STREAM_BUDGET_BYTES`], 4 MiB), counted from when
    /// a message is queued until hyper takes it for writing. A message that
    /// would pass it disconnects the consumer: the stream ends, the call it
    /// carries is cancelled and the connection is closed (never buffered
    /// without bound). One message larger than the budget still goes when
    /// nothing else waits.
    pub stream_budget_bytes: usize,
    /// SSE comment sent on an idle stream this often (default 15 s), so a
    /// vanished client is noticed; `None` disables it.
    pub sse_keep_alive: Option<Duration>,
    /// How long the response of a call the client cancelled stays open,
    /// sending nothing, unless the client leaves first (default 60 s). The
    /// protocol forbids a response to a cancelled request, and some clients
    /// read a stream that simply ends as a failure of that request.
    pub cancelled_linger: Duration,
    /// How long [`HttpHandle::close`](super::HttpHandle::close) lets
    /// in-flight calls finish before cancelling them (default 10 s).
    pub drain_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            port: 0,
            host: "127.0.0.1".to_owned(),
            path: "/mcp".to_owned(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            allow_request: None,
            authorize: None,
            #[cfg(feature = "auth")]
            resource_server: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            sessions: Some(SessionOptions::default()),
            principal: None,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            keep_alive_timeout: Duration::from_secs(5),
            max_concurrent_requests: 256,
            max_requests_per_connection: 16,
            max_requests_per_principal: 64,
            max_connections: 256,
            max_event_streams: 1024,
            stream_queue: 64,
            stream_budget_bytes: DEFAULT_STREAM_BUDGET_BYTES,
            sse_keep_alive: Some(Duration::from_secs(15)),
            cancelled_linger: Duration::from_secs(60),
            drain_timeout: Duration::from_secs(10),
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("HttpOptions");
        #[cfg(feature = "auth")]
        f.field("resource_server", &self.resource_server);
        f.field("port", &self.port)
            .field("host", &self.host)
            .field("path", &self.path)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("allowed_origins", &self.allowed_origins)
            .field("allow_request", &self.allow_request.is_some())
            .field("authorize", &self.authorize.is_some())
            .field("max_body_bytes", &self.max_body_bytes)
            .field("sessions", &self.sessions)
            .field("principal", &self.principal.is_some())
            .field("header_read_timeout", &self.header_read_timeout)
            .field("body_read_timeout", &self.body_read_timeout)
            .field("keep_alive_timeout", &self.keep_alive_timeout)
            .field("max_concurrent_requests", &self.max_concurrent_requests)
            .field(
                "max_requests_per_connection",
                &self.max_requests_per_connection,
            )
            .field(
                "max_requests_per_principal",
                &self.max_requests_per_principal,
            )
            .field("max_connections", &self.max_connections)
            .field("max_event_streams", &self.max_event_streams)
            .field("stream_queue", &self.stream_queue)
            .field("stream_budget_bytes", &self.stream_budget_bytes)
            .field("sse_keep_alive", &self.sse_keep_alive)
            .field("cancelled_linger", &self.cancelled_linger)
            .field("drain_timeout", &self.drain_timeout)
            .finish()
    }
}

impl HttpOptions {
    /// The defaults (same as `Default`): legacy sessions on, see the
    /// type's docs.
    pub fn new() -> Self {
        Self::default()
    }

    /// The defaults, but legacy requests are served statelessly too (no
    /// `Mcp-Session-Id`, no GET stream, no DELETE): the scale-out setting,
    /// where any replica may answer any request. Same as
    /// `HttpOptions::new().without_sessions()`.
    ///
    /// What a legacy client loses: its `initialize` is forgotten, so its
    /// calls cannot be asked anything (`ctx.confirm` says
    /// `CannotAsk::SessionlessHttp`; the other questions answer a clear
    /// `-32603` error), cancelled
    /// through `notifications/cancelled`, or sent messages once their POST is
    /// answered. 2026-07-28 clients lose nothing.
    ///
    /// ```
    /// use mcp_core::HttpOptions;
    ///
    /// assert!(HttpOptions::new().sessions.is_some());
    /// assert!(HttpOptions::stateless().sessions.is_none());
    /// ```
    pub fn stateless() -> Self {
        Self::default().without_sessions()
    }

    /// Sets the port (0: ephemeral).
    #[must_use]
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Sets the bind address.
    #[must_use]
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = host.into();
        self
    }

    /// Sets the endpoint path (a leading `/` is added when missing).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// Adds `Host` names to accept besides loopback names.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts.extend(hosts.into_iter().map(Into::into));
        self
    }

    /// Adds `Origin` values to accept besides loopback origins.
    #[must_use]
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins
            .extend(origins.into_iter().map(Into::into));
        self
    }

    /// Replaces the `Host`/`Origin` guard: `check(origin, host, request)`
    /// decides alone. Returning `true` unconditionally disables the guard.
    #[must_use]
    pub fn allow_request<F>(mut self, check: F) -> Self
    where
        F: Fn(Option<&str>, Option<&str>, &Parts) -> bool + Send + Sync + 'static,
    {
        self.allow_request = Some(Arc::new(check));
        self
    }

    /// Authenticates requests with a synchronous check (a bearer token
    /// comparison, say); `false` answers 401. Runs after the guard, before
    /// anything is dispatched. For a check that must await, use
    /// [`authorize_async`](Self::authorize_async).
    #[must_use]
    pub fn authorize<F>(mut self, check: F) -> Self
    where
        F: Fn(&Parts) -> bool + Send + Sync + 'static,
    {
        self.authorize = Some(Arc::new(move |parts: &Parts| {
            let allowed = check(parts);
            Box::pin(std::future::ready(allowed)) as BoxFuture<bool>
        }));
        self
    }

    /// Authenticates requests with an asynchronous check. The closure sees
    /// the request head and returns a `'static` future: copy what it needs
    /// (a header value) out of the head before the `async move` block.
    /// A panicking check counts as `false`.
    #[must_use]
    pub fn authorize_async<F, Fut>(mut self, check: F) -> Self
    where
        F: Fn(&Parts) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = bool> + Send + 'static,
    {
        self.authorize = Some(Arc::new(move |parts: &Parts| {
            Box::pin(check(parts)) as BoxFuture<bool>
        }));
        self
    }

    /// Protects the endpoint as an OAuth resource server (see
    /// [`crate::auth`]): every request needs a bearer token `server`
    /// accepts, and its metadata is served at the well-known paths. It
    /// counts as protection for binding a non-loopback host; a principal
    /// hook is not asked for a request it authenticated.
    #[cfg(feature = "auth")]
    #[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
    #[must_use]
    pub fn resource_server(mut self, server: crate::auth::ResourceServer) -> Self {
        self.resource_server = Some(Arc::new(server));
        self
    }

    /// Sets the body size limit in bytes.
    #[must_use]
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Turns on legacy `Mcp-Session-Id` sessions with these settings (on by
    /// default with [`SessionOptions::default`]).
    #[must_use]
    pub fn sessions(mut self, sessions: SessionOptions) -> Self {
        self.sessions = Some(sessions);
        self
    }

    /// Turns legacy sessions off: legacy requests are served statelessly
    /// (see [`HttpOptions::stateless`]).
    #[must_use]
    pub fn without_sessions(mut self) -> Self {
        self.sessions = None;
        self
    }

    /// Sets who a session is bound to. A request whose principal differs
    /// from the session's is answered like an unknown session (404).
    #[must_use]
    pub fn principal<F>(mut self, principal: F) -> Self
    where
        F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// Sets the header read timeout.
    #[must_use]
    pub fn header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// Sets the body read timeout.
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// Sets the keep-alive idle timeout.
    #[must_use]
    pub fn keep_alive_timeout(mut self, timeout: Duration) -> Self {
        self.keep_alive_timeout = timeout;
        self
    }

    /// Sets the server-wide concurrency limit (at least 1).
    #[must_use]
    pub fn max_concurrent_requests(mut self, n: usize) -> Self {
        self.max_concurrent_requests = n.max(1);
        self
    }

    /// Sets the per-principal concurrency limit (at least 1).
    #[must_use]
    pub fn max_requests_per_principal(mut self, n: usize) -> Self {
        self.max_requests_per_principal = n.max(1);
        self
    }

    /// Sets the per-connection concurrency limit (at least 1).
    #[must_use]
    pub fn max_requests_per_connection(mut self, n: usize) -> Self {
        self.max_requests_per_connection = n.max(1);
        self
    }

    /// Sets the open-connection limit (at least 1).
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Sets the cap of connections holding event streams (see
    /// [`max_event_streams`](Self::max_event_streams)).
    #[must_use]
    pub fn max_event_streams(mut self, n: usize) -> Self {
        self.max_event_streams = n;
        self
    }

    /// Sets the per-stream queue of server→client messages (at least 1).
    #[must_use]
    pub fn stream_queue(mut self, n: usize) -> Self {
        self.stream_queue = n.max(1);
        self
    }

    /// Sets the byte budget of each event stream (see
    /// [`stream_budget_bytes`](Self::stream_budget_bytes)).
    #[must_use]
    pub fn stream_budget_bytes(mut self, bytes: usize) -> Self {
        self.stream_budget_bytes = bytes;
        self
    }

    /// Sets (or disables) the SSE keep-alive comment interval.
    #[must_use]
    pub fn sse_keep_alive(mut self, every: Option<Duration>) -> Self {
        self.sse_keep_alive = every;
        self
    }

    /// Sets how long a cancelled call's response stays open.
    #[must_use]
    pub fn cancelled_linger(mut self, linger: Duration) -> Self {
        self.cancelled_linger = linger;
        self
    }

    /// Sets the drain deadline of [`HttpHandle::close`](super::HttpHandle::close).
    #[must_use]
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }
}
