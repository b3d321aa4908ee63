//! `POST`: one JSON-RPC message or batch in, a JSON or event-stream response out.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use http_body::Body;
use hyper::header::{HeaderMap, HeaderValue as HttpHeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use super::activity::ActivityGuard;
use super::body::read_body;
use super::fair::{evicted_error, FairPermit, Holder};
use super::modern::{self};
use super::names::{accepts_sse, check_protocol_version, collect_headers, is_json, SESSION_NAME};
use super::outbound::{DisconnectGuard, EndsWithRequest, SessionOutbound, StreamOutbound};
use super::queue::{self, Event, LazyStream};
use super::respond::{
    busy, error_response, json_response, replies_response, reply_status, sse_response, status_only,
};
use super::service::McpHttpService;
use super::sessions::TooMany;
use super::sse::{Hold, Linger, McpBody};
use crate::cancel::CancelToken;
use crate::context::{CallContext, CallHeaders, Outbound};
use crate::protocol::meta::meta_keys;
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{Admission, Admit, Frame, PendingCall, Response as Replies, Started};
use crate::session::Session;

impl McpHttpService {
    pub(super) async fn post<B>(
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
                ErrorCode::INVALID_REQUEST,
                "Unsupported Media Type: POST a JSON-RPC message as application/json",
            );
        }
        let bytes = match read_body(body, &parts.headers, opts).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        let payload = match Frame::parse(&bytes) {
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
        // A listen only ever delivers notifications before its end, and a
        // JSON response cannot carry them: refused at once, never held open.
        if modern
            && payload.method() == Some("subscriptions/listen")
            && !accepts_sse(&parts.headers)
        {
            return json_response(
                StatusCode::NOT_ACCEPTABLE,
                &crate::protocol::fail(
                    payload.id_value(),
                    &ErrorObject::invalid_request(
                        "Not Acceptable: subscriptions/listen needs Accept: text/event-stream",
                    ),
                ),
            );
        }
        // A call needing a scope its caller lacks: 403, before dispatch.
        if self.shared.server.has_scoped_items() {
            if let Err(response) = self.check_scopes(&parts, &payload) {
                return response;
            }
        }
        let is_init = !modern && payload.method() == Some("initialize") && payload.is_request();
        let (session, entry) = match &self.shared.sessions {
            Some(table) if !is_init && !modern => match self.lookup(&parts, table) {
                Ok(entry) => (entry.session.clone(), Some(entry)),
                Err(response) => return response,
            },
            // An `initialize` makes the session of the exchanges to come,
            // and a batch's entries can name each other's ids.
            _ if is_init || payload.is_batch() => (Session::new(), None),
            _ => (Session::single_request(), None),
        };
        // A session of this request alone ends with it (what it registered,
        // a legacy subscription, is released then).
        let ephemeral = entry.is_none().then(|| EndsWithRequest(session.clone()));
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
        // Values a layer in front of this service attached to the hyper
        // request (an authentication middleware, say) reach interceptors
        // and handlers.
        if let Some(extensions) = parts.extensions.get::<crate::context::Extensions>() {
            ctx.extensions = extensions.clone();
        }
        if let Some(principal) = principal.clone() {
            ctx = ctx.with_principal(principal);
        }
        // Legacy without sessions: `initialize` is forgotten, so a handler's
        // question must fail clearly instead of quietly answering `false`.
        if !modern && self.shared.sessions.is_none() {
            ctx = ctx.sessionless_legacy();
        }

        if !payload.has_request() {
            // Notifications and responses (an elicitation answer, a
            // cancel): cheap, never refused, answered 202.
            // Boxed: this rare path's future would otherwise double the
            // size of every POST's (moved and copied with it).
            let run = Box::pin(self.shared.server.accept(payload, &ctx, None).run());
            return match run.await {
                None => status_only(StatusCode::ACCEPTED),
                Some(reply) => replies_response(reply_status(&reply, modern), &reply),
            };
        }

        let signal = CancelToken::new();
        // Only an event-stream POST carries the call's messages itself (past
        // the stream's byte budget the call is cancelled and the connection
        // closed). Its channel, like a JSON POST's, is made only if the call
        // talks or outlives its first poll (most do neither): see below.
        let answered = wants_sse.then(|| {
            Arc::new(StreamOutbound {
                stream: LazyStream::new(
                    opts.stream_queue,
                    opts.stream_budget_bytes,
                    Some(signal.clone()),
                    self.conn.activity.clone(),
                ),
                answered: tokio::sync::Mutex::new(false),
                session: entry.clone(),
            })
        });
        if let Some(stream) = &answered {
            ctx = ctx.with_outbound(Arc::clone(stream) as Arc<dyn Outbound>);
        } else if let Some(entry) = &entry {
            ctx = ctx.with_outbound(Arc::new(SessionOutbound(Arc::clone(entry))));
        }
        ctx = ctx.with_signal(signal.clone());
        let disconnect = DisconnectGuard(signal.clone());
        // The id a cancelled call's error must carry (null only for a batch).
        let reply_id = payload.id_value();
        // Set when a full server gives a slot of this batch to another
        // client (see `super::fair`); a single request asks its permit.
        let batch_evicted = payload.is_batch().then(|| Arc::new(AtomicBool::new(false)));

        let (work, admission) = if payload.is_batch() {
            // Each entry of a batch is admitted (or refused inline) on its own.
            let this = self.clone();
            let who = principal.clone();
            let flag = batch_evicted.clone();
            let signal = signal.clone();
            let admit: Admit = Arc::new(move || {
                this.admit(who.as_ref(), &signal, flag.as_ref())
                    .map(|admitted| Box::new(admitted) as Admission)
            });
            let call = self.shared.server.accept(payload, &ctx, Some(&admit));
            (Work::Batch(call), None)
        } else {
            // Registered in its session before this POST is answered at all,
            // so a cancel sent right after it always finds the call. Only a
            // call that runs a handler takes a slot: `ping`, `initialize`
            // and the like are never refused as busy.
            let call = self.shared.server.accept(payload, &ctx, None);
            let admission = if call.is_done() {
                None
            } else {
                match self.admit(principal.as_ref(), &signal, None) {
                    Ok(permit) => Some(permit),
                    Err(e) => {
                        // Dropping the call unregisters its id.
                        drop(call);
                        let mut r = json_response(
                            StatusCode::SERVICE_UNAVAILABLE,
                            &crate::protocol::fail(reply_id.clone(), &e),
                        );
                        r.headers_mut().insert(
                            hyper::header::RETRY_AFTER,
                            HttpHeaderValue::from_static("1"),
                        );
                        return r;
                    }
                }
            };
            // Most calls finish on their first poll without a word to the
            // client before their reply: answer those right here, with no
            // task, channel hop or event. The rest go on below.
            // On a multi-threaded runtime, a handler that blocks its
            // thread in this first poll would strand whatever waits in this
            // worker's LIFO slot (tokio never steals it; often the accept
            // loop, so every other connection stalls): yield once first so
            // that task runs before the handler does.
            if tokio::runtime::Handle::try_current()
                .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
            {
                yield_behind_lifo().await;
            }
            match call.start().await {
                Started::Done(Some(reply))
                    if answered.as_ref().is_none_or(|s| s.stream.untouched()) =>
                {
                    // Later messages of this call (a subscription it
                    // made) go to the session stream, never to this POST.
                    let sealed = answered
                        .as_ref()
                        .is_none_or(|s| s.answered.try_lock().map(|mut a| *a = true).is_ok());
                    if sealed {
                        drop(admission);
                        return self.reply_response(reply, is_init, modern, session, principal);
                    }
                    (Work::Done(Some(reply)), admission)
                }
                Started::Done(reply) => (Work::Done(reply), admission),
                Started::Pending(rest) => (Work::One(rest), admission),
            }
        };

        let (tx, mut rx) = match &answered {
            Some(stream) => stream.stream.split(),
            None => queue::replies_only(),
        };
        let this = self.clone();
        let ended = entry.as_ref().map(|e| e.ended.clone());
        let track = self.shared.calls.enter();
        let task = async move {
            let _track = track;
            let _ephemeral = ephemeral;
            let abort = this.shared.abort.clone();
            let work = async {
                match work {
                    Work::Batch(call) => call.run().await,
                    Work::One(call) => call.await,
                    Work::Done(reply) => reply,
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
                    work.await
                        .map_or_else(|| Event::Closed(closed_error(reply_id.clone())), |reply| {
                            Event::Done(Some(reply))
                        })
                }
            };
            // A call stopped because a full server gave its slot to
            // another client ends with the error saying so.
            let evicted = || {
                batch_evicted
                    .as_ref()
                    .is_some_and(|flag| flag.load(Ordering::Acquire))
                    || admission.as_ref().is_some_and(|a| a.fair.was_evicted())
            };
            let event = match event {
                Event::Done(None) if evicted() => Event::Closed(evicted_error(reply_id)),
                event => event,
            };
            drop(admission);
            // From here on the call's messages (a subscription it made
            // outlives it) go to the session's stream, never behind the reply.
            if let Some(answered) = &answered {
                *answered.answered.lock().await = true;
            }
            tx.finish(event).await;
        };
        // Most calls finish on their first poll: run that poll here, on the
        // connection's task, and only hand a call that has to wait to a task
        // of its own. Either way its reply (and any message before it) comes
        // through `rx`, so what follows is the same.
        let mut task: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(task);
        match crate::panic::poll_once(&mut task).await {
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
            Some(Event::Closed(error)) => json_response(StatusCode::SERVICE_UNAVAILABLE, &error),
            Some(Event::Done(Some(reply))) => {
                self.reply_response(reply, is_init, modern, session, principal)
            }
            Some(Event::Message(first)) => {
                // The call talks before it answers: switch to an event stream
                // carrying its messages, then its response.
                let linger = self.linger(entry.as_ref().map(|e| e.ended.clone()));
                sse_response(McpBody::sse(
                    vec![first],
                    rx,
                    opts.sse_keep_alive,
                    Some(linger),
                    hold(),
                ))
            }
            None => error_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::INTERNAL_ERROR,
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
    fn classify(&self, headers: &HeaderMap, payload: &Frame) -> Result<bool, Response<McpBody>> {
        let header_modern = modern::header_is_modern(headers);
        if let Some(items) = payload.batch() {
            if header_modern || items.iter().any(|m| modern::claim(m).is_some()) {
                return Err(error_response(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: 2026-07-28 messages cannot be batched; POST one at a time",
                ));
            }
            check_protocol_version(headers)?;
            return Ok(false);
        }
        let id = || payload.id_value();
        match payload.claimed_version() {
            Some(claimed) => {
                // A claim that is not a string is a malformed envelope: the
                // dispatcher answers it -32602.
                if let (true, Some(version)) = (payload.is_request(), claimed) {
                    if let Err(why) =
                        modern::check(headers, payload, version, &self.shared.tool_headers)
                    {
                        return Err(json_response(
                            StatusCode::BAD_REQUEST,
                            &crate::protocol::fail(
                                id(),
                                &ErrorObject::new(
                                    ErrorCode::HEADER_MISMATCH,
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
        if is_init && !reply.is_batch() && reply.error_code().is_none() {
            // Without a stored session, the one this initialize ran on ends
            // with its POST: closed, so nothing the server kept for it (a
            // live catalog's listener, the sessions gauge) outlives it.
            let throwaway = session.clone();
            let forget = || {
                throwaway.close();
                self.shared.server.release_closed_sessions();
            };
            let Some(table) = &self.shared.sessions else {
                forget();
                return response;
            };
            match table.create(session, principal) {
                Ok((id, entry)) => {
                    // What a live catalog tells this session from now
                    // on goes to its GET stream, not to this POST.
                    let outbound: Arc<dyn Outbound> = Arc::new(SessionOutbound(Arc::clone(&entry)));
                    self.shared
                        .server
                        .listen_for_list_changes(&entry.session, Some(&outbound));
                    if let Some(sharing) = self.sharing() {
                        super::session_store::persist(&sharing, &id, &entry);
                    }
                    if let Ok(v) = HttpHeaderValue::from_str(&id) {
                        response.headers_mut().insert(SESSION_NAME.clone(), v);
                    }
                }
                Err(TooMany(max)) => {
                    forget();
                    return too_many_sessions(reply, max);
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

    /// Takes a per-connection and a fair share of the server-wide slots
    /// for one request (see [`super::fair`]). If a full server later gives
    /// the slot to another client, `signal` (the request's) is cancelled and
    /// `batch` (a batch's flag) set.
    fn admit(
        &self,
        principal: Option<&Arc<str>>,
        signal: &CancelToken,
        batch: Option<&Arc<AtomicBool>>,
    ) -> Result<Admitted, ErrorObject> {
        // The per-connection slot first: it has no side effects, while a
        // full server may evict another client's call to make room.
        let local = match &self.conn.limit {
            Some(limit) => Some(
                Arc::clone(limit)
                    .try_acquire_owned()
                    .map_err(|_| busy(self.shared.options.max_requests_per_connection))?,
            ),
            None => None,
        };
        let holder = match principal {
            Some(principal) => Holder::Principal(Arc::clone(principal)),
            None => Holder::Connection(self.conn.id),
        };
        let fair = self.shared.slots.take(holder, signal, batch)?;
        Ok(Admitted {
            fair,
            _local: local,
        })
    }
}

/// What an admitted request holds while it runs.
struct Admitted {
    fair: FairPermit,
    _local: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// The final response of a call the server stopped (its session ended, the
/// server is closing): answered 503 as JSON, or as the last event of the
/// call's event stream. `id` is the request's (null for a batch).
fn closed_error(id: serde_json::Value) -> serde_json::Value {
    crate::protocol::fail(
        id,
        &ErrorObject::new(
            ErrorCode::SERVER_BUSY,
            "The session ended or the server is closing; the call was cancelled",
        ),
    )
}

/// The answer to an `initialize` whose principal holds its share of sessions.
fn too_many_sessions(reply: Replies, max: usize) -> Response<McpBody> {
    let id = reply.into_value().get("id").cloned().unwrap_or_default();
    json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &crate::protocol::fail(
            id,
            &ErrorObject::new(
                ErrorCode::SERVER_BUSY,
                format!(
                    "Too many sessions for this principal (max {max}); end one with DELETE \
                     or let one expire, then initialize again"
                ),
            ),
        ),
    )
}

/// What a POST's task runs. (Not boxed: it lives for one POST, and a box
/// would cost an allocation per request.)
#[allow(clippy::large_enum_variant)]
pub(super) enum Work {
    /// A single registered request, still running.
    One(PendingCall),
    /// A single request that already finished (`None`: cancelled).
    Done(Option<Replies>),
    /// A batch; each entry is admitted on its own.
    Batch(crate::server::Call),
}

/// Pending once, having woken its own task: tokio queues a task that wakes
/// itself while it runs at the back of its worker's run queue (where another
/// worker may steal it) and runs the LIFO slot's task first. Unlike
/// `tokio::task::yield_now`, which holds the wake-up back until the worker
/// next polls its I/O driver, no trip through the driver (BENCHMARKS.md).
async fn yield_behind_lifo() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if std::mem::replace(&mut yielded, true) {
            Poll::Ready(())
        } else {
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}
