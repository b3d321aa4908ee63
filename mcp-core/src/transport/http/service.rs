//! [`McpHttpService`]: the MCP endpoint as a hyper `Service`, usable on its
//! own server ([`serve_http`](super::serve_http)) or mounted in yours.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::{Buf, Bytes};
use http_body::Body;
use http_body_util::BodyExt;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue as HttpHeaderValue, ACCEPT, CONTENT_LENGTH, CONTENT_TYPE,
};
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::sync::{mpsc, Notify, Semaphore};

use super::guard;
use super::modern::{self, ToolHeaders};
use super::options::HttpOptions;
use super::sessions::{default_principal, SessionEntry, SessionTable};
use super::sse::{frame, Event, Hold, Linger, McpBody};
use crate::cancel::CancelToken;
use crate::context::{CallContext, CallHeaders, HeaderValue, Headers, Outbound};
use crate::protocol::{ErrorObject, RPC_ERRORS, SUPPORTED_PROTOCOL_VERSIONS};
use crate::server::era::{meta_keys, MODERN_PROTOCOL_VERSIONS};
use crate::server::{is_request, Admission, Incoming, McpServer, Replies, Reply, Step};
use crate::session::Session;
use serde::Serialize;

/// The session header (`Mcp-Session-Id`; header names are case-insensitive).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header clients send after `initialize`.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// [`PROTOCOL_VERSION_HEADER`] as a header name (looked up without parsing).
pub(crate) static PROTOCOL_VERSION_NAME: HeaderName =
    HeaderName::from_static(PROTOCOL_VERSION_HEADER);
/// [`SESSION_HEADER`] as a header name.
static SESSION_NAME: HeaderName = HeaderName::from_static(SESSION_HEADER);

/// The MCP endpoint as a service: guard, authorization, routing, sessions,
/// body limits and Streamable HTTP responses. Cheap to clone.
///
/// [`serve_http`](super::serve_http) runs it on its own listener. To mount
/// it in your own hyper server, build one per server and call
/// [`for_connection`](Self::for_connection) for each accepted connection
/// (it supplies the peer address and the per-connection request limit);
/// then serve it with `hyper::server::conn::http1`. The request path must
/// still equal [`HttpOptions::path`]. With the `tower` feature it is also a
/// `tower::Service`, for axum's `Router::route_service`.
///
/// It spawns the calls it runs on the current Tokio runtime.
#[derive(Clone)]
pub struct McpHttpService {
    shared: Arc<Shared>,
    conn: ConnState,
}

impl std::fmt::Debug for McpHttpService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttpService")
            .field("server", &self.shared.server)
            .field("options", &self.shared.options)
            .field("remote_addr", &self.conn.remote)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Default)]
struct ConnState {
    remote: Option<Arc<str>>,
    limit: Option<Arc<Semaphore>>,
    activity: Option<Arc<Activity>>,
}

pub(crate) struct Shared {
    server: McpServer,
    /// The tools' `x-mcp-header` arguments (2026-07-28 `Mcp-Param-*` checks).
    tool_headers: ToolHeaders,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Option<SessionTable>,
    global: Arc<Semaphore>,
    pub(crate) calls: Tracker,
    /// The server started draining: lingering streams end.
    pub(crate) closing: CancelToken,
    /// Cancels every running call (the drain deadline of `close` passed).
    pub(crate) abort: CancelToken,
}

impl McpHttpService {
    /// The endpoint for `server` with `options` (the bind options `port` and
    /// `host` are ignored here).
    pub fn new(server: McpServer, options: HttpOptions) -> Self {
        let sessions = options.sessions.map(SessionTable::new);
        let global = Arc::new(Semaphore::new(options.max_concurrent_requests.max(1)));
        Self {
            shared: Arc::new(Shared {
                tool_headers: ToolHeaders::new(&server),
                server,
                options,
                sessions,
                global,
                calls: Tracker::default(),
                closing: CancelToken::new(),
                abort: CancelToken::new(),
            }),
            conn: ConnState::default(),
        }
    }

    /// A handle for one accepted connection: requests through it report
    /// `remote` as `ctx.remote_addr()` and share one per-connection limit
    /// ([`HttpOptions::max_requests_per_connection`]).
    #[must_use]
    pub fn for_connection(&self, remote: Option<SocketAddr>) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            conn: ConnState {
                remote: remote.map(|a| Arc::from(a.to_string())),
                limit: Some(Arc::new(Semaphore::new(
                    self.shared.options.max_requests_per_connection.max(1),
                ))),
                activity: None,
            },
        }
    }

    pub(crate) fn with_activity(mut self, activity: Arc<Activity>) -> Self {
        self.conn.activity = Some(activity);
        self
    }

    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Number of live sessions (0 when sessions are off).
    pub fn session_count(&self) -> usize {
        self.shared.sessions.as_ref().map_or(0, SessionTable::len)
    }

    /// Answers one HTTP request. Never fails: every problem is an HTTP
    /// status with a JSON-RPC error body.
    pub async fn handle<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        let activity = self.conn.activity.as_ref().map(Activity::begin);
        let (parts, body) = req.into_parts();
        let opts = &self.shared.options;
        if !guard::allowed(opts, &parts) {
            return error_response(
                StatusCode::FORBIDDEN,
                RPC_ERRORS::INVALID_REQUEST,
                "Forbidden: host/origin not allowed",
            );
        }
        if let Some(authorize) = &opts.authorize {
            let check = crate::panic::catch_panic(authorize(&parts)).await;
            if check != Ok(true) {
                return error_response(
                    StatusCode::UNAUTHORIZED,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Unauthorized",
                );
            }
        }
        if parts.uri.path() != opts.path {
            return not_found(&parts);
        }
        // A POST's version header is judged with its body (a 2026-07-28
        // claim in the body decides, see `post`).
        if parts.method != Method::POST {
            if let Err(response) = check_protocol_version(&parts.headers) {
                return response;
            }
        }
        let sessions_on = self.shared.sessions.is_some();
        match parts.method {
            Method::POST => self.post(parts, body, activity).await,
            Method::GET if sessions_on => self.get(&parts, activity),
            Method::DELETE if sessions_on => self.delete(&parts),
            Method::GET | Method::DELETE => {
                let mut r = error_response(
                    StatusCode::METHOD_NOT_ALLOWED,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Method Not Allowed: this endpoint is stateless; use POST",
                );
                r.headers_mut()
                    .insert(hyper::header::ALLOW, HttpHeaderValue::from_static("POST"));
                r
            }
            _ => not_found(&parts),
        }
    }

    fn principal(&self, parts: &Parts) -> Option<Arc<str>> {
        match &self.shared.options.principal {
            Some(f) => f(parts),
            None => default_principal(parts),
        }
        .map(Arc::from)
    }

    /// The session a request names, or the response refusing it.
    fn lookup(
        &self,
        parts: &Parts,
        table: &SessionTable,
    ) -> Result<Arc<SessionEntry>, Response<McpBody>> {
        let Some(id) = parts.headers.get(&SESSION_NAME) else {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                RPC_ERRORS::INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header required (send initialize first)",
            ));
        };
        let principal = self.principal(parts);
        id.to_str()
            .ok()
            .and_then(|id| table.get(id, principal.as_deref()).ok())
            .ok_or_else(|| {
                error_response(
                    StatusCode::NOT_FOUND,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Session not found: unknown, expired or ended; initialize a new session",
                )
            })
    }

    fn get(&self, parts: &Parts, activity: Option<ActivityGuard>) -> Response<McpBody> {
        let Some(table) = &self.shared.sessions else {
            return not_found(parts);
        };
        if !accepts_sse(&parts.headers) {
            return error_response(
                StatusCode::NOT_ACCEPTABLE,
                RPC_ERRORS::INVALID_REQUEST,
                "Not Acceptable: the GET stream needs Accept: text/event-stream",
            );
        }
        let entry = match self.lookup(parts, table) {
            Ok(entry) => entry,
            Err(response) => return response,
        };
        let (tx, rx) = mpsc::channel(self.shared.options.stream_queue.max(1));
        entry.open_stream(tx);
        let mut hold: Vec<Hold> = Vec::new();
        if let Some(a) = activity {
            hold.push(Box::new(a));
        }
        sse_response(McpBody::sse(
            Vec::new(),
            rx,
            self.shared.options.sse_keep_alive,
            None,
            hold,
        ))
    }

    fn delete(&self, parts: &Parts) -> Response<McpBody> {
        let Some(table) = &self.shared.sessions else {
            return not_found(parts);
        };
        let Some(id) = parts.headers.get(&SESSION_NAME) else {
            return error_response(
                StatusCode::BAD_REQUEST,
                RPC_ERRORS::INVALID_REQUEST,
                "Bad Request: Mcp-Session-Id header required",
            );
        };
        let principal = self.principal(parts);
        let deleted = id
            .to_str()
            .ok()
            .is_some_and(|id| table.delete(id, principal.as_deref()).is_ok());
        if deleted {
            let mut r = Response::new(McpBody::empty());
            *r.status_mut() = StatusCode::NO_CONTENT;
            r
        } else {
            error_response(
                StatusCode::NOT_FOUND,
                RPC_ERRORS::INVALID_REQUEST,
                "Session not found: unknown, expired or ended",
            )
        }
    }

    async fn post<B>(
        &self,
        mut parts: Parts,
        body: B,
        activity: Option<ActivityGuard>,
    ) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        let opts = &self.shared.options;
        if !is_json(&parts.headers) {
            return error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                RPC_ERRORS::INVALID_REQUEST,
                "Unsupported Media Type: POST a JSON-RPC message as application/json",
            );
        }
        let bytes = match read_body(body, &parts.headers, opts).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        let payload = match Incoming::parse(&bytes) {
            Ok(payload) => payload,
            Err(parse_error) => return json_response(StatusCode::BAD_REQUEST, &parse_error),
        };
        drop(bytes);

        // A stateless 2026-07-28 request never belongs to a session: its
        // `Mcp-Session-Id` is ignored, and it never gets one.
        let modern = match self.classify(&parts.headers, &payload) {
            Ok(modern) => modern,
            Err(response) => return response,
        };
        let is_init = !modern && payload.method() == Some("initialize") && payload.is_request();
        let (session, entry) = match &self.shared.sessions {
            Some(table) if !is_init && !modern => match self.lookup(&parts, table) {
                Ok(entry) => (entry.session.clone(), Some(entry)),
                Err(response) => return response,
            },
            _ => (Session::new(), None),
        };
        // Who is calling: binds sessions here and `requestState` in the dispatcher.
        let principal: Option<Arc<str>> = self.principal(&parts);
        let wants_sse = accepts_sse(&parts.headers);
        // Handlers see the headers converted on first use; nothing below
        // reads them from `parts` any more.
        let headers = std::mem::take(&mut parts.headers);
        let mut ctx = CallContext::new()
            .with_headers(CallHeaders::lazy(move || collect_headers(&headers)))
            .with_session(session.clone());
        if let Some(remote) = &self.conn.remote {
            ctx = ctx.with_remote_addr(Arc::clone(remote));
        }
        // Who is calling: binds sessions here and `requestState` in the dispatcher.
        if let Some(principal) = principal.clone() {
            ctx = ctx.with_principal(principal);
        }

        let payload = match payload {
            Incoming::Json(payload) if !has_request(&payload) => {
                // Notifications and responses (an elicitation answer, a
                // cancel): cheap, never refused, answered 202.
                let no_limit = &mut || Ok(Box::new(()) as crate::server::Admission);
                return match self
                    .shared
                    .server
                    .dispatch_payload_admitted(payload, &ctx, no_limit)
                    .await
                {
                    None => status_only(StatusCode::ACCEPTED),
                    Some(reply) => replies_response(reply_status(&reply, modern), &reply),
                };
            }
            payload => payload,
        };

        let (tx, mut rx) = mpsc::channel(opts.stream_queue.max(1));
        // Only an event-stream POST carries the call's messages itself.
        let answered = wants_sse.then(|| {
            Arc::new(StreamOutbound {
                stream: tx.clone(),
                answered: tokio::sync::Mutex::new(false),
                session: entry.clone(),
            })
        });
        if let Some(stream) = &answered {
            ctx = ctx.with_outbound(Arc::clone(stream) as Arc<dyn Outbound>);
        } else if let Some(entry) = &entry {
            ctx = ctx.with_outbound(Arc::new(SessionOutbound(Arc::clone(entry))));
        }
        let signal = CancelToken::new();
        ctx = ctx.with_signal(signal.clone());
        let disconnect = DisconnectGuard(signal.clone());
        // The id a cancelled call's error must carry (null only for a batch).
        let reply_id = payload.id_value();

        let (work, admission) = if let Incoming::Json(batch @ Value::Array(_)) = payload {
            // Each entry of a batch is admitted (or refused inline) on its own.
            (Work::Batch(batch), None)
        } else {
            let admission = match self.admit() {
                Ok(permit) => permit,
                Err(e) => {
                    let id = payload.id_value();
                    let mut r = json_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &crate::protocol::fail(id, &e),
                    );
                    r.headers_mut().insert(
                        hyper::header::RETRY_AFTER,
                        HttpHeaderValue::from_static("1"),
                    );
                    return r;
                }
            };
            // Registered in its session before this POST is answered at all,
            // so a cancel sent right after it always finds the call.
            match self.shared.server.prepare_incoming(payload, &ctx) {
                Step::Done(reply) => {
                    drop(admission);
                    return match reply {
                        Some(reply) => self.reply_response(
                            Replies::One(reply),
                            is_init,
                            modern,
                            session,
                            principal,
                        ),
                        None => status_only(StatusCode::ACCEPTED),
                    };
                }
                Step::Run(call) => {
                    let server = self.shared.server.clone();
                    let call: Pin<Box<dyn Future<Output = Option<Reply>> + Send>> =
                        Box::pin(async move { server.run_prepared(call).await });
                    (Work::One(call), Some(admission))
                }
            }
        };

        // Most calls finish on their first poll without a word to the
        // client before their reply: answer those right here, with no task,
        // channel hop or event. The rest go on below.
        let work = match work {
            Work::One(mut call) => {
                let first = std::future::poll_fn(|cx| {
                    Poll::Ready(catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))))
                })
                .await;
                match first {
                    Ok(Poll::Ready(Some(reply))) if rx.is_empty() => {
                        // Later messages of this call (a subscription it
                        // made) go to the session stream, never to this POST.
                        let sealed = answered
                            .as_ref()
                            .is_none_or(|s| s.answered.try_lock().map(|mut a| *a = true).is_ok());
                        if sealed {
                            drop(admission);
                            return self.reply_response(
                                Replies::One(reply),
                                is_init,
                                modern,
                                session,
                                principal,
                            );
                        }
                        Work::Done(Some(reply))
                    }
                    Ok(Poll::Ready(reply)) => Work::Done(reply),
                    Ok(Poll::Pending) => Work::One(call),
                    // Handler panics are caught in the dispatcher; this is a
                    // dispatcher bug, contained to the one request.
                    Err(_) => {
                        return error_response(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            RPC_ERRORS::INTERNAL_ERROR,
                            "Internal error: the call ended without a reply",
                        )
                    }
                }
            }
            other => other,
        };

        let this = self.clone();
        let ended = entry.as_ref().map(|e| e.ended.clone());
        let track = self.shared.calls.enter();
        let task = async move {
            let _track = track;
            let server = this.shared.server.clone();
            let abort = this.shared.abort.clone();
            let work = async {
                match work {
                    Work::Batch(payload) => {
                        let mut admit = || this.admit();
                        server
                            .dispatch_payload_admitted(payload, &ctx, &mut admit)
                            .await
                    }
                    Work::One(call) => call.await.map(Replies::One),
                    Work::Done(reply) => reply.map(Replies::One),
                }
            };
            tokio::pin!(work);
            let stop = async {
                match &ended {
                    Some(ended) => tokio::select! {
                        () = ended.cancelled() => {}
                        () = abort.cancelled() => {}
                    },
                    None => abort.cancelled().await,
                }
            };
            let event = tokio::select! {
                biased;
                reply = &mut work => Event::Done(reply),
                () = stop => {
                    // Session ended or server closing: cancel through the
                    // dispatcher so the tool sees its token fire.
                    signal.cancel();
                    work.await.map_or(Event::Closed, |reply| Event::Done(Some(reply)))
                }
            };
            drop(admission);
            // From here on the call's messages (a subscription it made
            // outlives it) go to the session's stream, never behind the reply.
            if let Some(answered) = &answered {
                *answered.answered.lock().await = true;
            }
            let _ = tx.send(event).await;
        };
        // Most calls finish on their first poll: run that poll here, on the
        // connection's task, and only hand a call that has to wait to a task
        // of its own. Either way its reply (and any message before it) comes
        // through `rx`, so what follows is the same.
        let mut task: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(task);
        let first = std::future::poll_fn(|cx| {
            Poll::Ready(catch_unwind(AssertUnwindSafe(|| task.as_mut().poll(cx))))
        })
        .await;
        match first {
            Ok(Poll::Ready(())) => {}
            Ok(Poll::Pending) => {
                tokio::spawn(task);
            }
            // As a spawned task that panics: dropped, and `rx` reports that
            // the call ended without a reply.
            Err(_) => drop(task),
        }

        // What an event-stream response keeps alive (built only for one).
        let hold = move || {
            let mut hold: Vec<Hold> = vec![Box::new(disconnect)];
            if let Some(a) = activity {
                hold.push(Box::new(a));
            }
            hold
        };
        match rx.recv().await {
            Some(Event::Done(None)) => {
                // The client cancelled the call: no response, ever. Keep the
                // exchange open (see `HttpOptions::cancelled_linger`).
                let linger = self.linger(entry.as_ref().map(|e| e.ended.clone()));
                if wants_sse {
                    sse_response(McpBody::lingering(opts.sse_keep_alive, linger, hold()))
                } else {
                    linger.await;
                    status_only(StatusCode::ACCEPTED)
                }
            }
            Some(Event::Closed) => json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                &crate::protocol::fail(
                    reply_id,
                    &ErrorObject::new(
                        RPC_ERRORS::SERVER_BUSY,
                        "The session ended or the server is closing; the call was cancelled",
                    ),
                ),
            ),
            Some(Event::Done(Some(reply))) => {
                self.reply_response(reply, is_init, modern, session, principal)
            }
            Some(Event::Message(first)) => {
                // The call talks before it answers: switch to an event stream
                // carrying its messages, then its response.
                let linger = self.linger(entry.as_ref().map(|e| e.ended.clone()));
                sse_response(McpBody::sse(
                    vec![frame(&first)],
                    rx,
                    opts.sse_keep_alive,
                    Some(linger),
                    hold(),
                ))
            }
            None => error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                RPC_ERRORS::INTERNAL_ERROR,
                "Internal error: the call ended without a reply",
            ),
        }
    }

    /// Decides the era of a POSTed payload (true: 2026-07-28) and checks
    /// its headers, or returns the refusal:
    ///
    /// - a body with the modern `_meta` claim is modern; a request's routing
    ///   headers must mirror its body (`-32020`, 400, see [`modern::check`]);
    /// - `MCP-Protocol-Version` naming a modern revision over a request
    ///   without the claim is `-32602` (400): the header never stands in
    ///   for the body; over a notification or response it is merely sessionless;
    /// - 2026-07-28 messages are never batched (`-32600`, 400);
    /// - anything else is legacy, and an unsupported version header is 400.
    fn classify(&self, headers: &HeaderMap, payload: &Incoming) -> Result<bool, Response<McpBody>> {
        let header_modern = modern::header_is_modern(headers);
        if let Incoming::Json(Value::Array(items)) = payload {
            if header_modern || items.iter().any(|m| modern::claim(m).is_some()) {
                return Err(error_response(
                    StatusCode::BAD_REQUEST,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Invalid Request: 2026-07-28 messages cannot be batched; POST one at a time",
                ));
            }
            check_protocol_version(headers)?;
            return Ok(false);
        }
        let id = || payload.id_value();
        match modern::claim_in(payload.params()) {
            Some(claimed) => {
                // A claim that is not a string is a malformed envelope: the
                // dispatcher answers it -32602.
                if let (true, Some(version)) = (payload.is_request(), claimed.as_str()) {
                    if let Err(why) = modern::check(
                        headers,
                        payload.method(),
                        payload.params(),
                        version,
                        &self.shared.tool_headers,
                    ) {
                        return Err(json_response(
                            StatusCode::BAD_REQUEST,
                            &crate::protocol::fail(
                                id(),
                                &ErrorObject::new(
                                    RPC_ERRORS::HEADER_MISMATCH,
                                    format!("Header mismatch: {why}"),
                                ),
                            ),
                        ));
                    }
                }
                Ok(true)
            }
            None if header_modern => {
                if payload.is_request() {
                    return Err(json_response(
                        StatusCode::BAD_REQUEST,
                        &crate::protocol::fail(
                            id(),
                            &ErrorObject::invalid_params(format!(
                                "MCP-Protocol-Version names a 2026-07-28 revision but the \
                                 request lacks `_meta[\"{}\"]`",
                                meta_keys::PROTOCOL_VERSION
                            )),
                        ),
                    ));
                }
                Ok(true)
            }
            None => {
                check_protocol_version(headers)?;
                Ok(false)
            }
        }
    }

    /// A plain JSON response to a request; a successful `initialize` opens
    /// a session when sessions are on.
    fn reply_response(
        &self,
        reply: Replies,
        is_init: bool,
        modern: bool,
        session: Session,
        principal: Option<Arc<str>>,
    ) -> Response<McpBody> {
        let mut response = replies_response(reply_status(&reply, modern), &reply);
        if is_init && matches!(&reply, Replies::One(r) if r.error_code().is_none()) {
            if let Some(table) = &self.shared.sessions {
                let (id, _) = table.create(session, principal);
                if let Ok(v) = HttpHeaderValue::from_str(&id) {
                    response.headers_mut().insert(SESSION_NAME.clone(), v);
                }
            }
        }
        response
    }

    /// Completes when a cancelled call's response may end: its session
    /// ended, the server is closing, or [`HttpOptions::cancelled_linger`] passed.
    fn linger(&self, ended: Option<CancelToken>) -> Linger {
        let closing = self.shared.closing.clone();
        let max = self.shared.options.cancelled_linger;
        Box::pin(async move {
            let ended = async {
                match ended {
                    Some(ended) => ended.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = ended => {}
                () = closing.cancelled() => {}
                () = tokio::time::sleep(max) => {}
            }
        })
    }

    /// Takes a server-wide and a per-connection slot for one request.
    fn admit(&self) -> Result<Admission, ErrorObject> {
        let global = Arc::clone(&self.shared.global)
            .try_acquire_owned()
            .map_err(|_| busy(self.shared.options.max_concurrent_requests))?;
        let local = match &self.conn.limit {
            Some(limit) => Some(
                Arc::clone(limit)
                    .try_acquire_owned()
                    .map_err(|_| busy(self.shared.options.max_requests_per_connection))?,
            ),
            None => None,
        };
        Ok(Box::new((global, local)))
    }
}

impl<B> hyper::service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn call(&self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

#[cfg(feature = "tower")]
impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let this = self.clone();
        Box::pin(async move { Ok(this.handle(req).await) })
    }
}

fn busy(max: usize) -> ErrorObject {
    ErrorObject::new(
        RPC_ERRORS::SERVER_BUSY,
        format!("Too many requests in flight (max {max}); retry later"),
    )
}

/// What a POST's task runs.
enum Work {
    /// A single registered request, running.
    One(Pin<Box<dyn Future<Output = Option<Reply>> + Send>>),
    /// A single request that already finished (`None`: cancelled).
    Done(Option<Reply>),
    /// A batch; each entry is admitted on its own.
    Batch(Value),
}

/// Server→client messages of one call: onto its POST's event stream until
/// the call is answered; after that (a legacy `resources/subscribe` keeps
/// the call's outbound for its updates) onto the session's GET stream, when
/// one is open, as messages unrelated to a live request belong there.
struct StreamOutbound {
    stream: mpsc::Sender<Event>,
    /// Set by the call's task, under this lock, before its reply goes onto
    /// `stream`: nothing is queued behind the reply (the stream ends there).
    answered: tokio::sync::Mutex<bool>,
    session: Option<Arc<SessionEntry>>,
}

#[async_trait]
impl Outbound for StreamOutbound {
    async fn send(&self, message: Value) -> bool {
        {
            let answered = self.answered.lock().await;
            if !*answered {
                return self.stream.send(Event::Message(message)).await.is_ok();
            }
        }
        match &self.session {
            Some(entry) => to_session_stream(entry, message).await,
            None => false,
        }
    }
}

/// Server→client messages of a call whose POST cannot stream: onto the
/// session's GET stream, when one is open.
struct SessionOutbound(Arc<SessionEntry>);

#[async_trait]
impl Outbound for SessionOutbound {
    async fn send(&self, message: Value) -> bool {
        to_session_stream(&self.0, message).await
    }
}

async fn to_session_stream(entry: &SessionEntry, message: Value) -> bool {
    match entry.stream() {
        Some(tx) => tx.send(Event::Message(message)).await.is_ok(),
        None => false,
    }
}

/// Cancels a call's external signal when its response (future or stream)
/// is dropped: the client went away.
struct DisconnectGuard(CancelToken);

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Counts running calls so `close` can wait for them.
#[derive(Default, Clone)]
pub(crate) struct Tracker(Arc<TrackerInner>);

#[derive(Default)]
pub(crate) struct TrackerInner {
    count: AtomicUsize,
    idle: Notify,
}

/// One running call; leaves the tracker when dropped.
pub(crate) struct TrackGuard(Arc<TrackerInner>);

impl Tracker {
    fn enter(&self) -> TrackGuard {
        self.0.count.fetch_add(1, Ordering::AcqRel);
        TrackGuard(Arc::clone(&self.0))
    }

    /// Completes once no call is running.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.0.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for TrackGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// A connection's activity: requests in flight and when the last one ended.
pub(crate) struct Activity {
    busy: AtomicUsize,
    last: Mutex<Instant>,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            busy: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        })
    }

    fn begin(this: &Arc<Self>) -> ActivityGuard {
        this.busy.fetch_add(1, Ordering::AcqRel);
        ActivityGuard(Arc::clone(this))
    }

    /// How long the connection has been idle; `None` while a request runs.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        if self.busy.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(
            self.last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed(),
        )
    }
}

pub(crate) struct ActivityGuard(Arc<Activity>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

fn collect_headers(map: &HeaderMap) -> Headers {
    let mut out = Headers::new();
    for name in map.keys() {
        let mut values: Vec<String> = map
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        let value = if values.len() == 1 {
            HeaderValue::One(values.remove(0))
        } else {
            HeaderValue::Many(values)
        };
        out.insert(name.as_str().to_owned(), value);
    }
    out
}

fn header_str(map: &HeaderMap, name: impl hyper::header::AsHeaderName) -> Option<&str> {
    map.get(name).and_then(|v| v.to_str().ok())
}

fn is_json(map: &HeaderMap) -> bool {
    map.get(CONTENT_TYPE)
        .is_some_and(|ct| is_media_type(ct.as_bytes(), b"application/json"))
}

fn accepts_sse(map: &HeaderMap) -> bool {
    map.get_all(ACCEPT).iter().any(|v| {
        v.as_bytes()
            .split(|&b| b == b',')
            .any(|item| is_media_type(item, b"text/event-stream"))
    })
}

/// Whether `value` (one media type, parameters allowed) names `wanted`,
/// ignoring case and surrounding whitespace. Byte-wise: a header is
/// checked on every request, and this costs no UTF-8 pass or allocation.
fn is_media_type(value: &[u8], wanted: &[u8]) -> bool {
    let essence = value.split(|&b| b == b';').next().unwrap_or_default();
    essence.trim_ascii().eq_ignore_ascii_case(wanted)
}

/// 400 for an `MCP-Protocol-Version` this server does not speak.
fn check_protocol_version(map: &HeaderMap) -> Result<(), Response<McpBody>> {
    let Some(value) = map.get(&PROTOCOL_VERSION_NAME) else {
        return Ok(());
    };
    let value = String::from_utf8_lossy(value.as_bytes());
    let value = value.trim();
    if SUPPORTED_PROTOCOL_VERSIONS.contains(&value) || MODERN_PROTOCOL_VERSIONS.contains(&value) {
        return Ok(());
    }
    Err(error_response(
        StatusCode::BAD_REQUEST,
        RPC_ERRORS::INVALID_REQUEST,
        &format!(
            "Bad Request: unsupported MCP-Protocol-Version {:?} (supported: {})",
            value.chars().take(64).collect::<String>(),
            SUPPORTED_PROTOCOL_VERSIONS
                .iter()
                .chain(MODERN_PROTOCOL_VERSIONS)
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// Reads the body up to the limit: a declared length over it is refused
/// before reading, a streamed body is cut off at the limit, a body slower
/// than the read timeout is abandoned. The connection closes after either.
async fn read_body<B>(
    body: B,
    headers: &HeaderMap,
    opts: &HttpOptions,
) -> Result<Bytes, Response<McpBody>>
where
    B: Body + Send + 'static,
{
    let max = opts.max_body_bytes;
    let too_large = || {
        let mut r = error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            RPC_ERRORS::INVALID_REQUEST,
            &format!("Request body exceeds {max} bytes"),
        );
        close_after(&mut r);
        r
    };
    let declared = header_str(headers, CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    let mut buf: Vec<u8> = Vec::with_capacity(declared.map_or(0, |n| n as usize).min(max));
    // Armed at the first frame that is not already buffered: a small body
    // usually arrives with its head, and then no timer is built at all.
    let mut deadline = None;
    loop {
        // (The body's own error type need not be `Send`: it is dropped here.)
        let buffered = {
            let mut next = body.frame();
            std::future::poll_fn(|cx| {
                Poll::Ready(
                    Pin::new(&mut next)
                        .poll(cx)
                        .map(|frame| frame.map(|r| r.map_err(drop))),
                )
            })
            .await
        };
        let next = match buffered {
            Poll::Ready(frame) => Ok(frame),
            Poll::Pending => {
                let deadline = *deadline
                    .get_or_insert_with(|| tokio::time::Instant::now() + opts.body_read_timeout);
                tokio::time::timeout_at(deadline, body.frame())
                    .await
                    .map(|frame| frame.map(|r| r.map_err(drop)))
            }
        };
        match next {
            Err(_) => {
                let mut r = error_response(
                    StatusCode::REQUEST_TIMEOUT,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Request Timeout: the body did not arrive in time",
                );
                close_after(&mut r);
                return Err(r);
            }
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                let mut r = error_response(
                    StatusCode::BAD_REQUEST,
                    RPC_ERRORS::INVALID_REQUEST,
                    "Bad Request: the body could not be read",
                );
                close_after(&mut r);
                return Err(r);
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(mut data) = frame.into_data() {
                    if buf.len() + data.remaining() > max {
                        return Err(too_large());
                    }
                    while data.has_remaining() {
                        let chunk = data.chunk();
                        let n = chunk.len();
                        buf.extend_from_slice(chunk);
                        data.advance(n);
                    }
                }
            }
        }
    }
    Ok(Bytes::from(buf))
}

fn close_after(response: &mut Response<McpBody>) {
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        HttpHeaderValue::from_static("close"),
    );
}

/// True when the payload holds at least one request (something with `id`
/// and `method`).
fn has_request(payload: &Value) -> bool {
    match payload {
        Value::Array(items) => items.iter().any(is_request),
        other => is_request(other),
    }
}

/// 400 for an id-less error (the message could not be read as JSON-RPC at
/// all), 200 for everything else. A 2026-07-28 request also gets 404 for an
/// unknown or removed method (`-32601`) and 400 for invalid params
/// (`-32602`) and its header, capability and version errors
/// (`-32020`…`-32022`), as that revision's HTTP binding asks.
fn reply_status(reply: &Replies, modern: bool) -> StatusCode {
    let Replies::One(reply) = reply else {
        return StatusCode::OK;
    };
    let Some(code) = reply.error_code() else {
        return StatusCode::OK;
    };
    if reply.id.is_none() {
        return StatusCode::BAD_REQUEST;
    }
    match Some(code) {
        Some(RPC_ERRORS::METHOD_NOT_FOUND) if modern => StatusCode::NOT_FOUND,
        Some(RPC_ERRORS::INVALID_PARAMS | -32022..=-32020) if modern => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

fn not_found(parts: &Parts) -> Response<McpBody> {
    error_response(
        StatusCode::NOT_FOUND,
        RPC_ERRORS::METHOD_NOT_FOUND,
        &format!("Not found: {} {}", parts.method, parts.uri),
    )
}

fn status_only(status: StatusCode) -> Response<McpBody> {
    let mut r = Response::new(McpBody::empty());
    *r.status_mut() = status;
    r
}

fn json_response<T: Serialize + ?Sized>(status: StatusCode, body: &T) -> Response<McpBody> {
    let mut bytes = Vec::with_capacity(256);
    if serde_json::to_writer(&mut bytes, body).is_err() {
        bytes = b"null".to_vec();
    }
    json_bytes_response(status, bytes)
}

/// The response to a request: its replies written straight from their parts.
fn replies_response(status: StatusCode, replies: &Replies) -> Response<McpBody> {
    let mut bytes = Vec::new();
    replies.write_to(&mut bytes);
    json_bytes_response(status, bytes)
}

fn json_bytes_response(status: StatusCode, bytes: Vec<u8>) -> Response<McpBody> {
    let mut r = Response::new(McpBody::full(bytes));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HttpHeaderValue::from_static("application/json"),
    );
    r
}

fn error_response(status: StatusCode, code: i64, message: &str) -> Response<McpBody> {
    json_response(
        status,
        &json!({ "jsonrpc": "2.0", "id": null, "error": { "code": code, "message": message } }),
    )
}

fn sse_response(body: McpBody) -> Response<McpBody> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(
        CONTENT_TYPE,
        HttpHeaderValue::from_static("text/event-stream"),
    );
    h.insert(
        hyper::header::CACHE_CONTROL,
        HttpHeaderValue::from_static("no-cache, no-transform"),
    );
    // Tells nginx-style proxies not to hold events back.
    h.insert("x-accel-buffering", HttpHeaderValue::from_static("no"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(name: hyper::header::HeaderName, values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(
                &name,
                HttpHeaderValue::from_str(v).expect("valid header value"),
            );
        }
        map
    }

    #[test]
    fn media_types_match_without_case_space_or_parameters() {
        assert!(is_json(&headers(CONTENT_TYPE, &["application/json"])));
        assert!(is_json(&headers(
            CONTENT_TYPE,
            &[" Application/JSON ; charset=utf-8"]
        )));
        assert!(!is_json(&headers(CONTENT_TYPE, &["application/jsonx"])));
        assert!(!is_json(&headers(
            CONTENT_TYPE,
            &["text/plain; application/json"]
        )));
        assert!(!is_json(&HeaderMap::new()));

        assert!(accepts_sse(&headers(
            ACCEPT,
            &["application/json, text/event-stream"]
        )));
        assert!(accepts_sse(&headers(
            ACCEPT,
            &["application/json", "TEXT/Event-Stream;q=0.5"]
        )));
        assert!(!accepts_sse(&headers(ACCEPT, &["application/json"])));
        assert!(!accepts_sse(&headers(
            ACCEPT,
            &["text/event-streamer, */*"]
        )));
        assert!(!accepts_sse(&HeaderMap::new()));
    }
}
