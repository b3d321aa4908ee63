//! [`McpHttpService`]: the MCP endpoint as a hyper `Service`, usable on its
//! own server ([`serve_http`](crate::serve_http)) or mounted in yours.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use http_body::Body;
use hyper::header::HeaderValue as HttpHeaderValue;
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};

use super::activity::{Activity, ActivityGuard, Counted, Tracker};
use super::fair::{FairShare, Ledger};
use super::guard;
use super::halfclose::{Handling, StreamPhase};
use super::names::{accepts_sse, check_protocol_version, SESSION_NAME};
use super::options::HttpOptions;
use super::principal::{unshareable, DefaultPrincipal};
use super::queue;
use super::respond::{error_response, not_found, path_mismatch, sse_response};
use super::sessions::{SessionEntry, SessionTable};
use super::sse::{Hold, McpBody};
use crate::cancel::CancelToken;
use crate::protocol::ErrorCode;
use crate::server::{InflightLimit, McpServer};

/// The MCP endpoint as a service: guard, authorization, routing, sessions,
/// body limits and Streamable HTTP responses. Cheap to clone.
///
/// [`serve_http`](crate::serve_http) runs it on its own listener. To mount
/// it in your own hyper server, build one per server and call
/// [`for_connection`](Self::for_connection) for each accepted connection
/// (it supplies the peer address and the per-connection request limit);
/// then serve it with `hyper::server::conn::http1`. The request path must
/// still equal [`HttpOptions::path`] (default `/mcp`): mounted under
/// `/api/mcp`, build it with `HttpOptions::new().path("/api/mcp")`; a
/// request for any other path is answered 404 with a `-32601` error naming
/// both paths and that fix. With the `tower` feature it is also a
/// `tower::Service`, for axum's `Router::route_service`.
///
/// It spawns the calls it runs on the current Tokio runtime.
#[derive(Clone)]
pub struct McpHttpService {
    pub(super) shared: Arc<Shared>,
    pub(super) conn: ConnState,
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
pub(super) struct ConnState {
    /// This connection's anonymous calls, as a holder of the server-wide
    /// slots (none: a service not made per connection).
    pub(super) ledger: Option<Arc<Ledger>>,
    pub(super) remote: Option<Arc<str>>,
    /// The per-connection limit on requests in flight.
    pub(super) limit: Option<InflightLimit>,
    pub(super) activity: Option<Arc<Activity>>,
    /// The `Host`/`Origin` the guard last accepted here.
    pub(super) seen: guard::Seen,
}

pub(crate) struct Shared {
    pub(super) server: McpServer,
    /// The accepted hosts and origins, normalized from `options`.
    pub(super) guard: guard::Guard,
    pub(crate) options: HttpOptions,
    pub(crate) sessions: Option<SessionTable>,
    /// Who a request is without a principal hook (see `principal.rs`).
    default_principal: DefaultPrincipal,
    /// The server-wide call slots, shared fairly between principals and
    /// anonymous connections.
    pub(super) slots: Arc<FairShare>,
    /// Open GET streams (bounded by `HttpOptions::max_event_streams`).
    pub(super) get_streams: Arc<AtomicUsize>,
    pub(crate) calls: Tracker,
    /// The server started draining: lingering streams end.
    pub(crate) closing: CancelToken,
    /// Cancels every running call (the drain deadline of `close` passed).
    pub(crate) abort: CancelToken,
}

impl McpHttpService {
    /// The endpoint for `server` with `options` (the bind options `port` and
    /// `host` are ignored here). Options whose session store no other
    /// replica could share are logged as an error
    /// ([`serve_http`](crate::serve_http) refuses them).
    pub fn new(server: McpServer, options: HttpOptions) -> Self {
        if let Some(why) = unshareable(&options, &server) {
            tracing::error!("{why}");
        }
        let default_principal = DefaultPrincipal::new(server.state_keys());
        let sessions = options.sessions.map(SessionTable::new);
        let slots = FairShare::new(
            options.max_concurrent_requests,
            options.max_requests_per_principal,
        );
        Self {
            shared: Arc::new(Shared {
                guard: guard::Guard::new(&options),
                server,
                options,
                sessions,
                default_principal,
                slots,
                get_streams: Arc::default(),
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
                ledger: Some(self.shared.slots.connection()),
                remote: remote.map(|a| Arc::from(a.to_string())),
                limit: Some(InflightLimit::new(
                    self.shared.options.max_requests_per_connection.max(1),
                )),
                activity: None,
                seen: guard::Seen::default(),
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
    ///
    /// # Cancel safety
    /// Dropping the future cancels the request's call (as a client disconnect does).
    pub async fn handle<B>(&self, req: Request<B>) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        let (parts, body) = req.into_parts();
        self.respond(Box::new(parts), body).await
    }

    /// [`handle`](Self::handle) on a request already split. The head is
    /// boxed so that this future, which hyper boxes for every request,
    /// holds a pointer to it rather than a copy at each level; the paths
    /// few requests take (authorization hooks, a session store) are boxed
    /// where they are awaited, for the same reason.
    async fn respond<B>(&self, mut parts: Box<Parts>, body: B) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        let activity = self.conn.activity.as_ref().map(Activity::begin);
        // The handler's phase ends with this call (see `halfclose`).
        let _handling = self.conn.activity.as_ref().map(|a| Handling(&a.answer));
        let opts = &self.shared.options;
        // User hooks run under a panic guard: a panicking `allow_request`
        // refuses the request as `authorize` does, a panicking `principal`
        // answers 500; neither drops the connection without a response.
        #[cfg(feature = "auth")]
        if let Some(rs) = &opts.resource_server {
            if let Some(response) = self.metadata_route(rs, &parts) {
                return response;
            }
        }
        let allowed = matches!(
            catch_unwind(AssertUnwindSafe(|| self.shared.guard.allows(
                opts,
                &parts,
                &self.conn.seen
            ))),
            Ok(true)
        );
        if !allowed {
            return error_response(
                StatusCode::FORBIDDEN,
                ErrorCode::INVALID_REQUEST,
                "Forbidden: host/origin not allowed",
            );
        }
        #[cfg(feature = "auth")]
        if let Some(rs) = &opts.resource_server {
            if let Some(response) = Box::pin(self.oauth(rs, &mut parts)).await {
                return response;
            }
        }
        if let Some(authorize) = &opts.authorize {
            let check = crate::panic::catch_panic(authorize(&parts)).await;
            if check != Ok(true) {
                return error_response(
                    StatusCode::UNAUTHORIZED,
                    ErrorCode::INVALID_REQUEST,
                    "Unauthorized",
                );
            }
        }
        if parts.uri.path() != opts.path {
            return path_mismatch(&parts, &opts.path);
        }
        // A principal hook is the user's code: asked once per request,
        // under a panic guard, and kept with it (the default principal is
        // ours and asked where needed).
        if opts.principal.is_some() && parts.extensions.get::<Principal>().is_none() {
            match catch_unwind(AssertUnwindSafe(|| self.principal_of(&parts))) {
                Ok(principal) => {
                    parts.extensions.insert(Principal(principal));
                }
                Err(_) => {
                    return error_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        ErrorCode::INTERNAL_ERROR,
                        "Internal error: the principal hook failed",
                    )
                }
            }
        }
        // A POST's version header is judged with its body (a 2026-07-28
        // claim in the body decides, see `post`).
        if parts.method != Method::POST {
            if let Err(response) = check_protocol_version(&parts.headers) {
                return response;
            }
        }
        let sessions_on = self.shared.sessions.is_some();
        // A session another replica created: adopted from the store first.
        if let (Some(table), Some(sharing)) = (&self.shared.sessions, self.sharing()) {
            Box::pin(super::session_store::restore(
                &sharing,
                table,
                &parts,
                || self.principal(&parts),
            ))
            .await;
        }
        // With a session store: the session a request names (its saves
        // settle before the response), and a DELETE's (forgotten by the
        // store once deleted here). Boxed: most servers have no store.
        let stored = self.shared.server.storage().sessions().is_some().then(|| {
            let named = parts.headers.get(&SESSION_NAME).cloned();
            let deleting = (parts.method == Method::DELETE)
                .then(|| named.clone())
                .flatten();
            Box::new((named, deleting))
        });
        let response = match parts.method {
            Method::POST => self.post(parts, body, activity).await,
            Method::GET if sessions_on => self.get(&parts, activity),
            Method::DELETE if sessions_on => self.delete(&parts),
            Method::GET | Method::DELETE => {
                let mut r = error_response(
                    StatusCode::METHOD_NOT_ALLOWED,
                    ErrorCode::INVALID_REQUEST,
                    "Method Not Allowed: this endpoint is stateless; use POST",
                );
                r.headers_mut()
                    .insert(hyper::header::ALLOW, HttpHeaderValue::from_static("POST"));
                r
            }
            _ => not_found(&parts),
        };
        let mut response = match stored {
            Some(ids) => {
                let (named, deleting) = *ids;
                Box::pin(self.settle_store(response, named, deleting)).await
            }
            None => response,
        };
        // A connection holding an event stream counts apart (see `conns`).
        if let Some(activity) = &self.conn.activity {
            if response.body().is_stream() {
                activity.answer.streaming();
                let phase = StreamPhase(Arc::clone(&activity.answer));
                response
                    .body_mut()
                    .watch_phase(Arc::clone(&activity.answer));
                response
                    .body_mut()
                    .hold_while_streaming(Box::new((Activity::stream(activity), phase)));
            }
        }
        response
    }

    /// With a session store: lets the saves of the session `named` (or the
    /// one `response` mints) settle, and has the store forget the session
    /// a successful DELETE ended (`deleting`).
    async fn settle_store(
        &self,
        response: Response<McpBody>,
        named: Option<HttpHeaderValue>,
        deleting: Option<HttpHeaderValue>,
    ) -> Response<McpBody> {
        if let Some(table) = &self.shared.sessions {
            let minted = response.headers().get(&SESSION_NAME);
            super::session_store::settle(table, named.as_ref().or(minted)).await;
        }
        if let (Some(store), Some(id)) = (self.shared.server.storage().sessions(), &deleting) {
            if response.status() == StatusCode::NO_CONTENT {
                super::session_store::forget(store, id.to_str().unwrap_or_default()).await;
            }
        }
        response
    }

    /// hyper hands over a request: from now on a half-closed client is
    /// still answered (see `halfclose`; HTTP/1.1 only, as its probe is a
    /// 1xx response). Called synchronously, before hyper reads on.
    fn dispatched<B>(&self, req: &Request<B>) {
        if let Some(activity) = &self.conn.activity {
            if req.version() == hyper::Version::HTTP_11 {
                activity.answer.dispatched();
            }
        }
    }

    /// The future both service traits return for `req`.
    fn call_boxed<B>(&self, req: Request<B>) -> ResponseFuture
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        respond_owned(self.clone(), req)
    }

    /// What sharing sessions through a store needs, when one is set.
    pub(super) fn sharing(&self) -> Option<super::session_store::Sharing<'_>> {
        let opts = &self.shared.options;
        Some(super::session_store::Sharing {
            server: &self.shared.server,
            store: self.shared.server.storage().sessions()?,
            ttl: opts.sessions.as_ref()?.ttl,
        })
    }

    /// Who is calling, as [`handle`](Self::handle) found it.
    pub(super) fn principal(&self, parts: &Parts) -> Option<Arc<str>> {
        match parts.extensions.get::<Principal>() {
            Some(Principal(principal)) => principal.clone(),
            None => self.principal_of(parts),
        }
    }

    /// Asks the principal hook (or the default) who is calling.
    fn principal_of(&self, parts: &Parts) -> Option<Arc<str>> {
        match &self.shared.options.principal {
            Some(f) => f(parts),
            None => self.shared.default_principal.of(parts),
        }
        .map(Arc::from)
    }

    /// The session a request names, or the response refusing it.
    pub(super) fn lookup(
        &self,
        parts: &Parts,
        table: &SessionTable,
    ) -> Result<Arc<SessionEntry>, Response<McpBody>> {
        let Some(id) = parts.headers.get(&SESSION_NAME) else {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                ErrorCode::INVALID_REQUEST,
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
                    ErrorCode::INVALID_REQUEST,
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
                ErrorCode::INVALID_REQUEST,
                "Not Acceptable: the GET stream needs Accept: text/event-stream",
            );
        }
        let entry = match self.lookup(parts, table) {
            Ok(entry) => entry,
            Err(response) => return response,
        };
        let max = self.shared.options.max_event_streams;
        let Some(counted) = Counted::take(&self.shared.get_streams, max) else {
            let mut r = error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                ErrorCode::SERVER_BUSY,
                &format!("Too many open event streams (max {max}); retry later"),
            );
            r.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                HttpHeaderValue::from_static("1"),
            );
            return r;
        };
        let opts = &self.shared.options;
        let (tx, rx) = queue::channel(
            opts.stream_queue,
            opts.stream_budget_bytes,
            None,
            self.conn.activity.clone(),
        );
        entry.open_stream(tx);
        let mut hold: Vec<Hold> = vec![Box::new(counted)];
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
                ErrorCode::INVALID_REQUEST,
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
                ErrorCode::INVALID_REQUEST,
                "Session not found: unknown, expired or ended",
            )
        }
    }
}

/// The future of one request, as hyper and tower are handed it.
type ResponseFuture = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

/// The principal of one request, computed once by [`McpHttpService::handle`]
/// (or by the resource server, from the token).
#[derive(Clone)]
pub(super) struct Principal(pub(super) Option<Arc<str>>);

/// What a response future owns to reach its service: a clone of it, or a
/// connection's shared handle.
trait ServiceOwner: Send + Sync + 'static {
    fn service(&self) -> &McpHttpService;
}

impl ServiceOwner for McpHttpService {
    fn service(&self) -> &McpHttpService {
        self
    }
}

impl ServiceOwner for Arc<McpHttpService> {
    fn service(&self) -> &McpHttpService {
        self
    }
}

/// The response future for `req`, holding `owner`.
fn respond_owned<O, B>(owner: O, req: Request<B>) -> ResponseFuture
where
    O: ServiceOwner,
    B: Body + Send + 'static,
    B::Data: Send,
{
    owner.service().dispatched(&req);
    let (parts, body) = req.into_parts();
    let parts = Box::new(parts);
    Box::pin(async move { Ok(owner.service().respond(parts, body).await) })
}

/// One accepted connection's service, as [`serve_http`](crate::serve_http)
/// hands it to hyper. Each request's future holds one more reference to
/// this connection's handle, where a clone of [`McpHttpService`] would
/// count one more on the server-wide state that every connection's
/// requests share (a cache line bounced between cores on every request)
/// and one on each per-connection part.
#[derive(Clone)]
pub(super) struct ConnService(pub(super) Arc<McpHttpService>);

impl<B> hyper::service::Service<Request<B>> for ConnService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: Request<B>) -> Self::Future {
        respond_owned(Arc::clone(&self.0), req)
    }
}

impl<B> hyper::service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn call(&self, req: Request<B>) -> Self::Future {
        self.call_boxed(req)
    }
}

#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
impl<B> tower_service::Service<Request<B>> for McpHttpService
where
    B: Body + Send + 'static,
    B::Data: Send,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = ResponseFuture;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        self.call_boxed(req)
    }
}
