//! [`InvokeContext`]: what a tool, resource or prompt handler receives.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::call::{CallContext, HeaderValue, Headers};
use super::elicit::{covers, CannotAsk, Confirmation, Elicitor, InputRequest};
use super::interrupt::{Channel, Interrupt, Interruption, RequesterElicit};
use super::progress::Progress;
use crate::cancel::CancelToken;
use crate::context::state_map::StateMap;
use crate::protocol::{self, ClientCapabilities, ClientInfo, ErrorObject, LoggingLevel, RequestId};

/// What a tool, resource or prompt handler receives with each call.
///
/// The cancellation signal is always there; progress and elicitation are
/// there only when the client and transport can carry them, so reach them
/// through `Option`s (or the no-op conveniences).
#[derive(Clone)]
pub struct InvokeContext {
    pub(crate) cancel: CancelToken,
    /// Everything else; `None` for a call whose handler never reads its
    /// context and for a detached one (all of it empty). Boxed so the
    /// context a handler receives, moved through every layer of a call by
    /// value, is two words.
    pub(crate) parts: Option<Box<Parts>>,
}

/// The parts of an [`InvokeContext`] beyond its cancellation signal.
#[derive(Clone, Default)]
pub(crate) struct Parts {
    pub(crate) progress: Option<Progress>,
    /// Built on first use from `channel` (or the call's explicit hook).
    pub(crate) elicitor: std::sync::OnceLock<Option<Elicitor>>,
    /// The client announced form elicitation.
    pub(crate) can_elicit: bool,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) client: Option<Arc<ClientInfo>>,
    pub(crate) call: CallContext,
    pub(crate) state: Option<Arc<StateMap>>,
    pub(crate) interrupt: Option<Arc<Interrupt>>,
    pub(crate) channel: Channel,
    pub(crate) modern: bool,
    /// A 2026-07-28 call whose questions cannot end in `input_required`
    /// (the handler declared it never asks, or the request has no round
    /// trips): [`InvokeContext::confirm`] says so instead of asking.
    pub(crate) no_round_trip: bool,
    /// The lowest level to send; `None`: send no log messages.
    pub(crate) log_threshold: Option<LoggingLevel>,
}

impl Parts {
    /// The parts of a context that has none: nothing to report progress,
    /// ask or log through, no client, no headers.
    fn empty() -> &'static Self {
        static EMPTY: std::sync::OnceLock<Parts> = std::sync::OnceLock::new();
        EMPTY.get_or_init(Self::default)
    }
}

impl fmt::Debug for InvokeContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = self.parts();
        f.debug_struct("InvokeContext")
            .field("request_id", &parts.request_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &parts.progress.is_some())
            .field("elicitation", &parts.can_elicit)
            .field("stateless", &parts.modern)
            .finish_non_exhaustive()
    }
}

impl Default for InvokeContext {
    fn default() -> Self {
        Self::detached()
    }
}

fn no_channel() -> ErrorObject {
    ErrorObject::internal("this transport cannot carry requests to the client")
}

impl InvokeContext {
    /// A context for calling a handler directly (tests, `McpServer::call_tool`):
    /// a fresh cancellation token and nothing else.
    pub fn detached() -> Self {
        Self::unreachable(CancelToken::new())
    }

    /// The context of a handler that never reads it (see
    /// `McpToolDef::is_context_free`): only its call's cancellation.
    pub(crate) fn unreachable(cancel: CancelToken) -> Self {
        Self {
            cancel,
            parts: None,
        }
    }

    /// A context with all of its parts.
    pub(crate) fn with_parts(cancel: CancelToken, parts: Parts) -> Self {
        Self {
            cancel,
            parts: Some(Box::new(parts)),
        }
    }

    /// What the context holds beyond its cancellation signal.
    fn parts(&self) -> &Parts {
        self.parts.as_deref().unwrap_or_else(|| Parts::empty())
    }

    /// The parts, to change them (made, empty, when there were none).
    pub(crate) fn parts_mut(&mut self) -> &mut Parts {
        self.parts.get_or_insert_with(Box::default)
    }

    /// The cancellation signal of this call.
    pub fn cancel_token(&self) -> &CancelToken {
        &self.cancel
    }

    /// True once the client cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Completes when the client cancels the call.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// The progress reporter, present when the request carried a
    /// `progressToken` and the transport can notify.
    pub fn progress(&self) -> Option<&Progress> {
        self.parts().progress.as_ref()
    }

    /// Reports progress if a reporter is present; otherwise does nothing.
    ///
    /// # Cancel safety
    /// Dropping the future may drop this report; nothing else is affected.
    pub async fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(p) = &self.parts().progress {
            p.report(progress, total, message).await;
        }
    }

    /// The elicitation handle, present when the client announced the
    /// `elicitation` capability and the transport can carry requests.
    pub fn elicitation(&self) -> Option<&Elicitor> {
        let parts = self.parts();
        parts
            .elicitor
            .get_or_init(|| match &parts.call.elicit {
                Some(hook) => Some(Elicitor::new(Arc::clone(hook))),
                None if parts.can_elicit => parts
                    .channel
                    .requester()
                    .map(|r| Elicitor::new(Arc::new(RequesterElicit(r)))),
                None => None,
            })
            .as_ref()
    }

    /// The elicitation handle, or — when the client cannot be asked — the
    /// error the wire gives: on a 2026-07-28 request `-32021` with
    /// `data.requiredCapabilities = {"elicitation": {}}`, on a legacy request
    /// `-32603`. In a served call that error also ends the call (see
    /// [`fail`](Self::fail)); on a [`detached`](Self::detached) context it
    /// is returned. Use it when the work cannot go on without an answer.
    ///
    /// # Errors
    /// The error above, on a detached context.
    ///
    /// # Cancel safety
    /// Dropping the future has no effect.
    pub async fn require_elicitation(&self) -> Result<Elicitor, ErrorObject> {
        if let Some(e) = self.elicitation() {
            return Ok(e.clone());
        }
        Err(self.fail(self.missing(json!({ "elicitation": {} }))).await)
    }

    /// Checks that the client declared every capability in `required`
    /// (e.g. `json!({"sampling": {}})`). When it did not, the call is
    /// answered with the error the wire gives (on a 2026-07-28 request
    /// `-32021` with `data.requiredCapabilities`, on a legacy request
    /// `-32603`): a served call ends there (see [`fail`](Self::fail)); a
    /// [`detached`](Self::detached) context returns the error.
    ///
    /// # Errors
    /// The error above, on a detached context.
    ///
    /// # Cancel safety
    /// Dropping the future has no effect.
    pub async fn require_capability(&self, required: Value) -> Result<(), ErrorObject> {
        let have = self.parts().client.as_deref().map(|c| &c.capabilities);
        if have.is_some_and(|caps| covers(caps, &required)) {
            return Ok(());
        }
        Err(self.fail(self.missing(required)).await)
    }

    fn missing(&self, required: Value) -> ErrorObject {
        if self.parts().modern {
            protocol::meta::missing_capability(required)
        } else if let Some(why) = self.sessionless_unknown() {
            why
        } else {
            ErrorObject::internal(format!(
                "this call needs client capabilities the client did not announce: {required}"
            ))
        }
    }

    /// Ends this call with `error` as its JSON-RPC error (not a tool
    /// result). Use it for protocol-level failures only.
    ///
    /// In a call the server is serving (over a transport, or through
    /// [`McpServer::call_tool`](crate::McpServer::call_tool)) the pipeline
    /// answers `error` and drops the handler right here, as it would on a
    /// cancellation: the returned future never completes. A
    /// [`detached`](Self::detached) context has no pipeline to end, so it
    /// returns `error` at once for the handler to return.
    ///
    /// # Cancel safety
    /// Dropping the future has no effect beyond what it already recorded.
    pub async fn fail(&self, error: ErrorObject) -> ErrorObject {
        match &self.parts().interrupt {
            Some(interrupt) => match interrupt.raise(Interruption::Error(error)).await {},
            None => error,
        }
    }

    /// Asks the client every request in `requests` and returns the answers
    /// by key. Legacy clients get real requests (one after the other) on
    /// the connection; on a 2026-07-28 request, unanswered questions end
    /// this round with `input_required` and the call runs again on the
    /// retry, where the answers are returned (see the crate docs on
    /// write-once tools).
    ///
    /// # Errors
    /// `-32021` (modern) / `-32603` (legacy) when the client did not declare
    /// a needed capability (on a legacy request served over HTTP without
    /// sessions the client's declaration is unknown, and the `-32603` says
    /// so and names the fix); the client's error; `-32603` when nothing can
    /// carry requests to the client.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the questions not yet answered; late answers are ignored.
    pub async fn input(
        &self,
        requests: Vec<InputRequest>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let caps = self.parts().client.as_deref().map(|c| &c.capabilities);
        for r in &requests {
            let needed = r.required_capability();
            if !caps.is_some_and(|c| covers(c, &needed)) {
                return Err(self.missing(needed));
            }
        }
        let requester = self.parts().channel.requester().ok_or_else(no_channel)?;
        requester
            .request_all(
                requests
                    .into_iter()
                    .map(|r| (r.key, r.method, r.params))
                    .collect(),
            )
            .await
    }

    /// Asks the client's model for a completion (`sampling/createMessage`
    /// params) and returns its `CreateMessageResult`.
    ///
    /// # Errors
    /// As for [`input`](Self::input).
    ///
    /// # Cancel safety
    /// As for [`input`](Self::input).
    pub async fn sample(&self, params: Value) -> Result<Value, ErrorObject> {
        let key = self.auto_key("sample")?;
        let mut answers = self
            .input(vec![InputRequest::sample(key.clone(), params)])
            .await?;
        Ok(answers.remove(&key).unwrap_or(Value::Null))
    }

    /// Asks the client for its roots and returns its `ListRootsResult`.
    ///
    /// # Errors
    /// As for [`input`](Self::input).
    ///
    /// # Cancel safety
    /// As for [`input`](Self::input).
    pub async fn list_roots(&self) -> Result<Value, ErrorObject> {
        let key = self.auto_key("roots")?;
        let mut answers = self
            .input(vec![InputRequest::list_roots(key.clone())])
            .await?;
        Ok(answers.remove(&key).unwrap_or(Value::Null))
    }

    fn auto_key(&self, prefix: &str) -> Result<String, ErrorObject> {
        self.parts()
            .channel
            .requester()
            .map(|r| r.auto_key(prefix))
            .ok_or_else(no_channel)
    }

    /// Sends a log message (`notifications/message`) at `level` when the
    /// server offers logging and the level is at or above the session's
    /// (legacy) or the request's (2026-07-28 `_meta`) minimum; otherwise
    /// does nothing. A 2026-07-28 request without a log level gets no log
    /// messages.
    ///
    /// # Cancel safety
    /// Dropping the future may drop the message; nothing else is affected.
    pub async fn log(&self, level: LoggingLevel, logger: Option<&str>, data: Value) {
        let (Some(threshold), Some(outbound)) =
            (self.parts().log_threshold, &self.parts().call.outbound)
        else {
            return;
        };
        if level < threshold {
            return;
        }
        let mut params = Map::new();
        params.insert("level".into(), Value::String(level.as_str().to_owned()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::String(logger.to_owned()));
        }
        params.insert("data".into(), data);
        outbound
            .send(protocol::notification(
                "notifications/message",
                Value::Object(params),
            ))
            .await;
    }

    /// True when this request is served under the stateless 2026-07-28 revision.
    pub fn is_stateless(&self) -> bool {
        self.parts().modern
    }

    /// Asks the user to confirm (a form elicitation with one boolean) and
    /// says what came of it. Only [`Confirmation::Accepted`] is consent.
    ///
    /// - **Asked** when the client declared form elicitation and the
    ///   request can carry a question: a legacy request with a channel to
    ///   the client (stdio; HTTP with sessions, the default) waits for the
    ///   answer; a 2026-07-28 request ends this round with `input_required`
    ///   (this future never completes) and the call runs again on the
    ///   retry, where the recorded answer is returned — so keep the work
    ///   before `confirm` free of side effects.
    /// - [`Accepted`](Confirmation::Accepted),
    ///   [`Declined`](Confirmation::Declined) or
    ///   [`Cancelled`](Confirmation::Cancelled): what the user chose.
    /// - [`CannotAsk`](Confirmation::CannotAsk) with the reason when the user
    ///   was not asked or no answer came back (see [`CannotAsk`]): the
    ///   client did not declare elicitation, a legacy HTTP request served
    ///   without sessions, no channel to the client, a call that cannot
    ///   round-trip, no client at all (a [`detached`](Self::detached)
    ///   context), or the client's error.
    ///
    /// It never ends the call by itself: the tool decides what each outcome
    /// means (and [`require_elicitation`](Self::require_elicitation) is there
    /// for work that should end with a protocol error instead).
    ///
    /// # Cancel safety
    /// As for [`input`](Self::input).
    pub async fn confirm(&self, prompt: &str) -> Confirmation {
        match self.elicitation() {
            Some(e) if !self.cannot_round_trip() => e.confirm(prompt).await,
            _ => Confirmation::CannotAsk(self.why_cannot_ask()),
        }
    }

    /// True for a 2026-07-28 call whose questions could not end in
    /// `input_required` (there is no round to bind a `requestState` to).
    fn cannot_round_trip(&self) -> bool {
        let parts = self.parts();
        parts.no_round_trip
            && parts.call.elicit.is_none()
            && matches!(parts.channel, Channel::RoundTrip(_))
    }

    /// Why [`confirm`](Self::confirm) cannot put its question to the user.
    fn why_cannot_ask(&self) -> CannotAsk {
        let parts = self.parts();
        if parts.modern {
            if parts.can_elicit && self.cannot_round_trip() {
                CannotAsk::NoRoundTrip
            } else {
                CannotAsk::NotDeclared
            }
        } else if self.sessionless_unknown().is_some() {
            CannotAsk::SessionlessHttp
        } else if parts.client.is_none() {
            CannotAsk::NoClient
        } else if !parts.can_elicit {
            CannotAsk::NotDeclared
        } else {
            CannotAsk::NoChannel
        }
    }

    /// The error for a legacy request whose client is unknown because the
    /// transport keeps no sessions (stateless legacy HTTP).
    fn sessionless_unknown(&self) -> Option<ErrorObject> {
        (self.parts().call.sessionless_legacy && self.parts().client.is_none()).then(|| {
            ErrorObject::internal(
                "cannot ask the client: this server serves legacy (2025-era) HTTP requests \
                 without sessions (`HttpOptions::stateless()` / `sessions: None`), so it does \
                 not know what the client declared in `initialize` and cannot route an \
                 answer back; serve with sessions (the default `HttpOptions::new()`) or \
                 send 2026-07-28 requests",
            )
        })
    }

    /// Request headers (lower-case names).
    pub fn headers(&self) -> &Headers {
        &self.parts().call.headers
    }

    /// One header by lower-case name.
    pub fn header(&self, name: &str) -> Option<&HeaderValue> {
        self.parts().call.headers.get(name)
    }

    /// The transport peer's address, when known.
    pub fn remote_addr(&self) -> Option<&str> {
        self.parts().call.remote_addr.as_deref()
    }

    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.parts().request_id.as_ref()
    }

    /// What the client announced in `initialize`.
    pub fn client_info(&self) -> Option<&ClientInfo> {
        self.parts().client.as_deref()
    }

    /// The client's capabilities, when it initialized.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.parts().client.as_deref().map(|c| &c.capabilities)
    }

    /// The negotiated protocol revision, when the client initialized.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.parts().client.as_deref().map(|c| c.protocol_version)
    }

    /// The opaque caller the transport supplied, downcast to `T`.
    pub fn caller<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.parts().call.caller()
    }

    /// The request's typed extensions: attached by the transport or its
    /// caller ([`CallContext::with_extension`]) and by
    /// [interceptors](crate::intercept).
    pub fn extensions(&self) -> &super::Extensions {
        &self.parts().call.extensions
    }

    /// The request's extension of type `T`, if one is attached.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.parts().call.extensions.get()
    }

    /// Application state registered with
    /// [`McpServerBuilder::state`](crate::McpServerBuilder::state).
    pub fn state<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.parts().state.as_deref().and_then(StateMap::get)
    }

    /// The transport context this call arrived with.
    pub fn call_context(&self) -> &CallContext {
        &self.parts().call
    }
}
