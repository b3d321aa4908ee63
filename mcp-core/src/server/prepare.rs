//! The synchronous half of serving a message, in the order a request meets
//! the stages: classify (kind, then era) → answer lifecycle methods →
//! register the id. Admission (stage 3) happens before, in
//! [`entry`](super::entry), where the transport's limit is known.

use std::sync::Arc;

use serde_json::Value;

use super::classify::{classify, era_of, Kind};
use super::decode::{Incoming, RequestParts};
use super::encode::Reply;
use super::inflight::{on_notification, on_response, register};
use super::intercept::Operation;
use super::run::Prepared;
use super::Pipeline;
use crate::context::CallContext;
use crate::protocol::Era;
use crate::session::Session;

/// What [`Pipeline::prepare`] decided. (Not boxed: it lives for one
/// match, and boxing would cost an allocation per request.)
#[allow(clippy::large_enum_variant)]
pub(crate) enum Step {
    /// Answered (or nothing to answer) without running a handler.
    Done(Option<Reply>),
    /// A registered request to run with [`Pipeline::run_prepared`].
    Run(Prepared),
}

impl Pipeline {
    /// Classifies one message (not a batch), answers what needs no handler
    /// (errors, notifications, responses, lifecycle methods) and registers
    /// a request's id in its session.
    #[inline]
    pub(crate) fn prepare(&self, message: Incoming, ctx: &Arc<CallContext>) -> Step {
        let session = self.session_of(ctx);
        match classify(message) {
            Kind::Request(parts) => self.prepare_request(parts, ctx, session),
            Kind::Notification(message) => {
                on_notification(&message, &session);
                Step::Done(None)
            }
            Kind::Response(message, id) => {
                on_response(message, id.as_ref(), &session);
                Step::Done(None)
            }
            Kind::Invalid(reply) => Step::Done(Some(reply)),
        }
    }

    /// [`prepare`](Self::prepare) for a message in JSON form.
    pub(crate) fn prepare_value(&self, message: Value, ctx: &Arc<CallContext>) -> Step {
        self.prepare(Incoming::Json(message), ctx)
    }

    /// The scope a call's id is registered in: the context's session, or
    /// the server's shared one.
    #[inline]
    pub(crate) fn session_of(&self, ctx: &CallContext) -> Session {
        ctx.session
            .clone()
            .unwrap_or_else(|| self.shared_session.clone())
    }

    #[inline]
    fn prepare_request(
        &self,
        mut parts: RequestParts,
        ctx: &Arc<CallContext>,
        session: Session,
    ) -> Step {
        let era = match era_of(&mut parts) {
            Ok(era) => era,
            Err(e) => return Step::Done(Some(Reply::error(Some(parts.id), e))),
        };
        // With interceptors that see them, `initialize` and `server/discover`
        // run through them (see `run::dispatch`); everything else here is
        // answered now.
        let chain = &self.chains.interceptors;
        let intercepted = match (&era, &*parts.method) {
            (Era::Legacy, "initialize") => chain.wants(Operation::Initialize),
            (Era::Modern(_), "server/discover") => chain.wants(Operation::Discover),
            _ => false,
        };
        let answered = if intercepted {
            None
        } else {
            self.lifecycle
                .answer(&era, &parts.method, &parts.params, &session)
        };
        if let Some(result) = answered {
            if result.is_ok() && parts.method == "initialize" {
                self.registry
                    .listen_for_list_changes(&session, ctx.outbound.as_ref());
            }
            return Step::Done(Some(match result {
                Ok(value) => Reply::result(&parts.id, value),
                Err(e) => Reply::error(Some(parts.id), e),
            }));
        }
        let held = std::mem::take(&mut parts.held);
        match register(parts, era, ctx, session) {
            Ok((scope, params)) => Step::Run(Prepared {
                scope,
                params,
                held,
            }),
            Err((id, e)) => Step::Done(Some(Reply::error(Some(id), e))),
        }
    }
}
