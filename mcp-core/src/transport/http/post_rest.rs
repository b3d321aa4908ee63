//! The rest of a POST whose call did not answer on its first poll, talked
//! before its reply, or is a batch: run on (here, or on a task of its own
//! once it has to wait) and answered with JSON or an event stream.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use hyper::{Response, StatusCode};

use super::activity::ActivityGuard;
use super::call_messages::{DisconnectGuard, EndsWithRequest, StreamOutbound};
use super::fair::{evicted_error, FairPermit};
use super::queue::{self, Event};
use super::respond::{error_response, json_response, sse_response, status_only};
use super::service::McpHttpService;
use super::sessions::SessionEntry;
use super::sse::{Hold, Linger, McpBody};
use crate::cancel::CancelToken;
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{LimitGuard, PendingCall, Response as Replies};
use crate::session::Session;

impl McpHttpService {
    /// A POST whose call did not answer on its first poll, talked before
    /// its reply, or is a batch: run on (here or on a task of its own) and
    /// answered with JSON or an event stream.
    pub(super) async fn post_rest(&self, rest: Rest) -> Response<McpBody> {
        let Rest {
            work,
            admission,
            posted:
                Posted {
                    answered,
                    entry,
                    ephemeral,
                    signal,
                    disconnect,
                    reply_id,
                    batch_evicted,
                    wants_sse,
                    is_init,
                    modern,
                    session,
                    principal,
                },
            activity,
        } = rest;
        let opts = &self.shared.options;
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
            let evicted = batch_evicted
                .as_ref()
                .is_some_and(|flag| flag.load(Ordering::Acquire))
                || admission.as_ref().is_some_and(|a| a.fair.was_evicted());
            let event = match event {
                Event::Done(None) if evicted => Event::Closed(evicted_error(reply_id)),
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
}

/// What [`McpHttpService::post_rest`] carries on with.
pub(super) struct Rest {
    pub(super) work: Work,
    pub(super) admission: Option<Admitted>,
    pub(super) posted: Posted,
    pub(super) activity: Option<ActivityGuard>,
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

/// What an admitted request holds while it runs.
pub(super) struct Admitted {
    pub(super) fair: FairPermit,
    pub(super) _local: Option<LimitGuard>,
}

/// What a POST needs after [`McpHttpService::begin`]: to answer at once,
/// or to carry on in [`McpHttpService::post_rest`].
pub(super) struct Posted {
    pub(super) answered: Option<Arc<StreamOutbound>>,
    pub(super) entry: Option<Arc<SessionEntry>>,
    pub(super) ephemeral: Option<EndsWithRequest>,
    pub(super) signal: CancelToken,
    pub(super) disconnect: DisconnectGuard,
    pub(super) reply_id: serde_json::Value,
    pub(super) batch_evicted: Option<Arc<AtomicBool>>,
    pub(super) wants_sse: bool,
    pub(super) is_init: bool,
    pub(super) modern: bool,
    pub(super) session: Session,
    pub(super) principal: Option<Arc<str>>,
}
