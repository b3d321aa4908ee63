//! `POST`: one JSON-RPC message or batch in, a JSON or event-stream response out.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bytes::Bytes;
use http_body::Body;
use hyper::header::{HeaderMap, HeaderValue as HttpHeaderValue};
use hyper::http::request::Parts;
use hyper::{Response, StatusCode};

use super::activity::ActivityGuard;
use super::body::read_body;
use super::call_messages::{DisconnectGuard, EndsWithRequest, SessionOutbound, StreamOutbound};
use super::fair::Holder;
use super::modern::{self};
use super::names::{accepts_sse, check_protocol_version, collect_headers, is_json, SESSION_NAME};
use super::post_rest::{Admitted, Posted, Rest, Work};
use super::queue::LazyStream;
use super::respond::{error_response, json_response, replies_response, reply_status, status_only};
use super::service::McpHttpService;
use super::sessions::TooMany;
use super::sse::McpBody;
use crate::cancel::CancelToken;
use crate::context::{CallContext, CallHeaders, Outbound};
use crate::protocol::meta::meta_keys;
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{Admission, Admit, Frame, Response as Replies, Started, Unpolled};
use crate::session::Session;

impl McpHttpService {
    pub(super) async fn post<B>(
        &self,
        parts: Box<Parts>,
        body: B,
        activity: Option<ActivityGuard>,
    ) -> Response<McpBody>
    where
        B: Body + Send + 'static,
        B::Data: Send,
    {
        if !is_json(&parts.headers) {
            return error_response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::INVALID_REQUEST,
                "Unsupported Media Type: POST a JSON-RPC message as application/json",
            );
        }
        let bytes = match read_body(body, &parts.headers, &self.shared.options).await {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        // Everything up to the call's first poll is synchronous, in a
        // function of its own: its locals (the parsed payload, the context,
        // the call) never take room in this future, which every POST boxes.
        // The awaits come after the match, so that what `begin` returned is
        // not kept in this future past it.
        let (pending, admission, posted) = match self.begin(parts, bytes) {
            Err(response) => return response,
            Ok(Next::One(pending, admission, posted)) => (pending, admission, posted),
            // One await for both: what `begin` returned is then held in one
            // state of this future only.
            Ok(Next::Other(other)) => return self.elsewhere(other, activity).await,
        };
        // Most calls finish on their first poll without a word to the client
        // before their reply: answer those right here, with no task, channel
        // hop or event. The rest go on below.
        let started = match pending {
            Unpolled::Answered(reply) => Started::Done(reply),
            Unpolled::Run(pending) => pending.first_poll().await,
        };
        let work = match started {
            Started::Done(Some(reply))
                if posted
                    .answered
                    .as_ref()
                    .is_none_or(|s| s.stream.untouched()) =>
            {
                // Later messages of this call (a subscription it
                // made) go to the session stream, never to this POST.
                let sealed = posted
                    .answered
                    .as_ref()
                    .is_none_or(|s| s.answered.try_lock().map(|mut a| *a = true).is_ok());
                if sealed {
                    drop(admission);
                    let Posted {
                        is_init,
                        modern,
                        session,
                        principal,
                        ..
                    } = posted;
                    return self.reply_response(reply, is_init, modern, session, principal);
                }
                Work::Done(Some(reply))
            }
            Started::Done(reply) => Work::Done(reply),
            Started::Pending(rest) => Work::One(rest),
        };
        // The rest (a call still running, one that talked) is boxed: its
        // future would otherwise weigh on every POST's.
        Box::pin(self.post_rest(Rest {
            work,
            admission,
            posted,
            activity,
        }))
        .await
    }

    /// The POSTs [`begin`](Self::begin) does not leave to `post`'s fast
    /// path: notifications and responses (answered 202 or with the replies
    /// they produced), and batches.
    fn elsewhere(
        &self,
        other: Other,
        activity: Option<ActivityGuard>,
    ) -> Pin<Box<dyn Future<Output = Response<McpBody>> + Send + '_>> {
        match other {
            Other::Notice(run, modern) => Box::pin(async move {
                match run.await {
                    None => status_only(StatusCode::ACCEPTED),
                    Some(reply) => replies_response(reply_status(&reply, modern), &reply),
                }
            }),
            Other::Later(mut rest) => {
                rest.activity = activity;
                Box::pin(self.post_rest(*rest))
            }
        }
    }

    /// A POST's body read: parses and checks it, sets up its session and
    /// context, accepts its call and takes its slot. What comes next, or
    /// the response refusing it.
    fn begin(&self, mut parts: Box<Parts>, bytes: Bytes) -> Result<Next, Response<McpBody>> {
        let opts = &self.shared.options;
        let payload = match Frame::parse(&bytes) {
            Ok(payload) => payload,
            Err(parse_error) => return Err(json_response(StatusCode::BAD_REQUEST, &parse_error)),
        };
        drop(bytes);

        // A stateless 2026-07-28 request never belongs to a session: its
        // `Mcp-Session-Id` is ignored, and it never gets one.
        let modern = self.classify(&parts.headers, &payload)?;
        // A listen only ever delivers notifications before its end, and a
        // JSON response cannot carry them: refused at once, never held open.
        if modern
            && payload.method() == Some("subscriptions/listen")
            && !accepts_sse(&parts.headers)
        {
            return Err(json_response(
                StatusCode::NOT_ACCEPTABLE,
                &crate::protocol::fail(
                    payload.id_value(),
                    &ErrorObject::invalid_request(
                        "Not Acceptable: subscriptions/listen needs Accept: text/event-stream",
                    ),
                ),
            ));
        }
        // A call needing a scope its caller lacks: 403, before dispatch.
        if self.shared.server.has_scoped_items() {
            self.check_scopes(&parts, &payload)?;
        }
        let is_init = !modern && payload.method() == Some("initialize") && payload.is_request();
        let (session, entry) = match &self.shared.sessions {
            Some(table) if !is_init && !modern => match self.lookup(&parts, table) {
                Ok(entry) => (entry.session.clone(), Some(entry)),
                Err(response) => return Err(response),
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
        // Set field by field: the builder methods would move the whole
        // context at each step.
        let mut ctx = CallContext::new();
        ctx.headers = CallHeaders::lazy(move || collect_headers(&headers));
        ctx.session = Some(session.clone());
        if let Some(remote) = &self.conn.remote {
            ctx.remote_addr = Some(Arc::clone(remote));
        }
        // Values a layer in front of this service attached to the hyper
        // request (an authentication middleware, say) reach interceptors
        // and handlers.
        if let Some(extensions) = parts.extensions.get::<crate::context::Extensions>() {
            ctx.extensions = extensions.clone();
        }
        drop(parts);
        if let Some(principal) = principal.clone() {
            ctx.principal = Some(principal);
        }
        // Legacy without sessions: `initialize` is forgotten, so a handler's
        // question must fail clearly instead of quietly answering `false`.
        if !modern && self.shared.sessions.is_none() {
            ctx.sessionless_legacy = true;
        }

        if !payload.has_request() {
            // Notifications and responses (an elicitation answer, a
            // cancel): cheap, never refused, answered 202.
            // Boxed: this rare path's future would otherwise double the
            // size of every POST's (moved and copied with it).
            let call = self.shared.server.accept(payload, &Arc::new(ctx), None);
            let run: Notice = Box::pin(call.run());
            return Ok(Next::Other(Other::Notice(run, modern)));
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
            ctx.outbound = Some(Arc::clone(stream) as Arc<dyn Outbound>);
        } else if let Some(entry) = &entry {
            ctx.outbound = Some(Arc::new(SessionOutbound(Arc::clone(entry))));
        }
        ctx.signal = Some(signal.clone());
        // Moved, not copied, into the request it arrived with.
        let ctx = Arc::new(ctx);
        let disconnect = DisconnectGuard(signal.clone());
        // The id a cancelled call's error must carry (null only for a batch).
        let reply_id = payload.id_value();
        // Set when a full server gives a slot of this batch to another
        // client (see `super::fair`); a single request asks its permit.
        let batch_evicted = payload.is_batch().then(|| Arc::new(AtomicBool::new(false)));

        // The token and the principal move into `Posted`; admission borrows
        // them from there, so a single request counts no extra references.
        let posted = Posted {
            answered,
            entry,
            ephemeral,
            signal,
            disconnect,
            reply_id,
            batch_evicted: batch_evicted.clone(),
            wants_sse,
            is_init,
            modern,
            session,
            principal,
        };
        if payload.is_batch() {
            // Each entry of a batch is admitted (or refused inline) on its own.
            let this = self.clone();
            let who = posted.principal.clone();
            let signal = posted.signal.clone();
            let flag = batch_evicted;
            let admit = Admit::new(move || {
                this.admit(who.as_ref(), &signal, flag.as_ref())
                    .map(|admitted| Box::new(admitted) as Admission)
            });
            let call = self.shared.server.accept(payload, &ctx, Some(&admit));
            return Ok(Next::Other(Other::Later(Box::new(Rest {
                work: Work::Batch(call),
                admission: None,
                posted,
                activity: None,
            }))));
        }
        // Registered in its session before this POST is answered at all,
        // so a cancel sent right after it always finds the call. Only a
        // call that runs a handler takes a slot: `ping`, `initialize`
        // and the like are never refused as busy.
        let call = self
            .shared
            .server
            .accept(payload, &ctx, None)
            .into_pending();
        let admission = if matches!(call, Unpolled::Answered(_)) {
            None
        } else {
            match self.admit(posted.principal.as_ref(), &posted.signal, None) {
                Ok(permit) => Some(permit),
                Err(e) => {
                    // Dropping the call unregisters its id.
                    drop(call);
                    let mut r = json_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &crate::protocol::fail(posted.reply_id.clone(), &e),
                    );
                    r.headers_mut().insert(
                        hyper::header::RETRY_AFTER,
                        HttpHeaderValue::from_static("1"),
                    );
                    return Err(r);
                }
            }
        };
        Ok(Next::One(call, admission, posted))
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
        // Read where it decides: a modern claim in the body checks the
        // version header itself (`modern::check`).
        let header_modern = || modern::header_is_modern(headers);
        if let Some(items) = payload.batch() {
            if header_modern() || items.iter().any(|m| modern::claim(m).is_some()) {
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
                    if let Err(why) = modern::check(headers, payload, version, &self.shared.server)
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
            None if header_modern() => {
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
    pub(super) fn reply_response(
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
            Some(limit) => Some(limit.admit()?),
            None => None,
        };
        let slots = &self.shared.slots;
        let holder = match (principal, &self.conn.ledger) {
            (Some(principal), _) => Holder::Principal(principal),
            (None, Some(ledger)) => Holder::Connection(ledger),
            (None, None) => Holder::Connection(slots.unattributed()),
        };
        let fair = slots.take(holder, signal, batch)?;
        Ok(Admitted {
            fair,
            _local: local,
        })
    }
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

/// A notification's or response's run (see [`McpHttpService::begin`]).
type Notice = Pin<Box<dyn Future<Output = Option<Replies>> + Send>>;

/// What follows [`McpHttpService::begin`]. (Built once per POST and taken
/// apart at once; boxing the common variant would cost an allocation.)
#[allow(clippy::large_enum_variant)]
enum Next {
    /// A single request: its unpolled call (or its answer, when no handler
    /// runs) and its slot.
    One(Unpolled, Option<Admitted>, Posted),
    /// Anything else: see [`McpHttpService::elsewhere`].
    Other(Other),
}

/// The POSTs that leave `post`'s fast path.
enum Other {
    /// Notifications and responses: run, then answered 202 or with the
    /// replies they produced (`true`: 2026-07-28).
    Notice(Notice, bool),
    /// A batch: run in [`McpHttpService::post_rest`].
    Later(Box<Rest>),
}
