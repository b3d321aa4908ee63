//! Contexts: [`CallContext`], what a transport supplies with each message, and
//! [`InvokeContext`], what a tool, resource or prompt handler receives.

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use crate::cancel::CancelToken;
use crate::protocol::{self, ClientCapabilities, ClientInfo, ErrorObject, RequestId};
use crate::session::Session;
use crate::state::StateMap;

/// A header value: most headers arrive once; a repeated header keeps every value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderValue {
    /// Sent once.
    One(String),
    /// Sent more than once, in order.
    Many(Vec<String>),
}

impl HeaderValue {
    /// The value when it was sent exactly once.
    pub fn as_single(&self) -> Option<&str> {
        match self {
            Self::One(v) => Some(v),
            Self::Many(_) => None,
        }
    }

    /// Every value, in order.
    pub fn values(&self) -> Vec<&str> {
        match self {
            Self::One(v) => vec![v.as_str()],
            Self::Many(vs) => vs.iter().map(String::as_str).collect(),
        }
    }
}

/// Per-call metadata: header names in lower case.
pub type Headers = BTreeMap<String, HeaderValue>;

/// The headers of one call, read as [`Headers`] (it derefs to them).
///
/// Given whole ([`CallContext::with_headers`]) or, over HTTP, converted from
/// the request's header map the first time a handler looks: a call that
/// never reads its headers never pays for copying them.
#[derive(Clone, Default)]
pub struct CallHeaders(Option<Arc<dyn HeaderSource>>);

/// Where a call's headers come from (one allocation either way).
trait HeaderSource: Send + Sync {
    fn headers(&self) -> &Headers;
}

struct Ready(Headers);

impl HeaderSource for Ready {
    fn headers(&self) -> &Headers {
        &self.0
    }
}

#[cfg(feature = "http")]
struct Lazy<F> {
    ready: std::sync::OnceLock<Headers>,
    build: F,
}

#[cfg(feature = "http")]
impl<F: Fn() -> Headers + Send + Sync> HeaderSource for Lazy<F> {
    fn headers(&self) -> &Headers {
        self.ready.get_or_init(&self.build)
    }
}

#[cfg(feature = "http")]
impl CallHeaders {
    /// Headers converted on first use by `build`.
    pub(crate) fn lazy(build: impl Fn() -> Headers + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(Lazy {
            ready: std::sync::OnceLock::new(),
            build,
        })))
    }
}

impl From<Headers> for CallHeaders {
    fn from(headers: Headers) -> Self {
        Self(Some(Arc::new(Ready(headers))))
    }
}

impl std::ops::Deref for CallHeaders {
    type Target = Headers;

    fn deref(&self) -> &Headers {
        static EMPTY: Headers = BTreeMap::new();
        match &self.0 {
            None => &EMPTY,
            Some(source) => source.headers(),
        }
    }
}

impl fmt::Debug for CallHeaders {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

/// Where server→client messages go (notifications and requests).
///
/// The stdio transport implements it over its output stream. Sending applies
/// back-pressure: when the client is not reading, `send` waits.
#[async_trait]
pub trait Outbound: Send + Sync {
    /// Sends one JSON-RPC message to the client. Returns false once the
    /// channel is closed.
    async fn send(&self, message: Value) -> bool;
}

/// One progress report.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Work done so far; must increase from report to report.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A human-readable status line.
    pub message: Option<String>,
}

/// An explicit progress sink an embedder can put in a [`CallContext`].
pub type ProgressSink = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// An explicit elicitation hook: receives `elicitation/create` params and
/// returns the client's result object.
#[async_trait]
pub trait Elicit: Send + Sync {
    /// Asks the client; returns its `ElicitResult` (`{action, content?}`).
    async fn elicit(&self, params: Value) -> Result<Value, ErrorObject>;

    /// Like [`elicit`](Self::elicit), under a caller-chosen key (the
    /// `inputRequests` key of a 2026-07-28 round trip). Defaults to `elicit`.
    async fn elicit_keyed(&self, key: &str, params: Value) -> Result<Value, ErrorObject> {
        let _ = key;
        self.elicit(params).await
    }
}

/// What a transport supplies with each message it hands to
/// [`McpServer::handle_message`](crate::McpServer::handle_message).
///
/// Every field is optional; `CallContext::default()` is a valid context for
/// embedding the dispatcher with no transport at all.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct CallContext {
    /// Request metadata forwarded to handlers (stdio: static options; HTTP: request headers).
    pub headers: CallHeaders,
    /// An explicit progress sink; takes precedence over `progressToken` + `outbound`.
    pub progress: Option<ProgressSink>,
    /// An explicit elicitation hook; takes precedence over `outbound`.
    pub elicit: Option<Arc<dyn Elicit>>,
    /// Where server→client notifications and requests go.
    pub outbound: Option<Arc<dyn Outbound>>,
    /// An external cancellation signal linked into every call (HTTP: client disconnect).
    pub signal: Option<CancelToken>,
    /// The cancellation and routing scope; `None` means the server's shared scope.
    pub session: Option<Session>,
    /// An opaque caller identity, handed to tools' `visible` hooks.
    pub caller: Option<Arc<dyn Any + Send + Sync>>,
    /// The transport peer's address, when known.
    pub remote_addr: Option<Arc<str>>,
    /// Who is calling (an authenticated principal); binds `requestState`.
    pub principal: Option<Arc<str>>,
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("headers", &self.headers)
            .field("progress", &self.progress.is_some())
            .field("elicit", &self.elicit.is_some())
            .field("outbound", &self.outbound.is_some())
            .field("signal", &self.signal)
            .field("session", &self.session)
            .field("remote_addr", &self.remote_addr)
            .finish_non_exhaustive()
    }
}

impl CallContext {
    /// An empty context (same as `Default`).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the headers.
    #[must_use]
    pub fn with_headers(mut self, headers: impl Into<CallHeaders>) -> Self {
        self.headers = headers.into();
        self
    }

    /// Sets the session scope.
    #[must_use]
    pub fn with_session(mut self, session: Session) -> Self {
        self.session = Some(session);
        self
    }

    /// Sets the outbound channel.
    #[must_use]
    pub fn with_outbound(mut self, outbound: Arc<dyn Outbound>) -> Self {
        self.outbound = Some(outbound);
        self
    }

    /// Sets an explicit progress sink.
    #[must_use]
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Sets an explicit elicitation hook.
    #[must_use]
    pub fn with_elicit(mut self, elicit: Arc<dyn Elicit>) -> Self {
        self.elicit = Some(elicit);
        self
    }

    /// Links an external cancellation signal.
    #[must_use]
    pub fn with_signal(mut self, signal: CancelToken) -> Self {
        self.signal = Some(signal);
        self
    }

    /// Sets the opaque caller.
    #[must_use]
    pub fn with_caller(mut self, caller: Arc<dyn Any + Send + Sync>) -> Self {
        self.caller = Some(caller);
        self
    }

    /// Sets the peer address.
    #[must_use]
    pub fn with_remote_addr(mut self, addr: impl Into<Arc<str>>) -> Self {
        self.remote_addr = Some(addr.into());
        self
    }

    /// Sets the principal (who is calling).
    #[must_use]
    pub fn with_principal(mut self, principal: impl Into<Arc<str>>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// The caller, downcast to `T`.
    pub fn caller<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.caller.as_deref().and_then(|c| c.downcast_ref())
    }
}

/// Reports progress for one request.
#[derive(Clone)]
pub struct Progress {
    target: ProgressTarget,
}

#[derive(Clone)]
enum ProgressTarget {
    Sink(ProgressSink),
    Notify {
        token: Value,
        outbound: Arc<dyn Outbound>,
    },
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            ProgressTarget::Sink(_) => f.write_str("Progress(sink)"),
            ProgressTarget::Notify { token, .. } => write!(f, "Progress({token})"),
        }
    }
}

impl Progress {
    pub(crate) fn sink(sink: ProgressSink) -> Self {
        Self {
            target: ProgressTarget::Sink(sink),
        }
    }

    pub(crate) fn notify(token: Value, outbound: Arc<dyn Outbound>) -> Self {
        Self {
            target: ProgressTarget::Notify { token, outbound },
        }
    }

    /// Sends one report (`notifications/progress`). Waits while the client is
    /// not reading; a closed channel is ignored.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        match &self.target {
            ProgressTarget::Sink(sink) => sink(ProgressUpdate {
                progress,
                total,
                message: message.map(str::to_owned),
            }),
            ProgressTarget::Notify { token, outbound } => {
                let mut params = Map::with_capacity(4);
                params.insert("progressToken".into(), token.clone());
                params.insert("progress".into(), json!(progress));
                if let Some(total) = total {
                    params.insert("total".into(), json!(total));
                }
                if let Some(message) = message {
                    params.insert("message".into(), Value::String(message.to_owned()));
                }
                let note = protocol::notification("notifications/progress", Value::Object(params));
                outbound.send(note).await;
            }
        }
    }
}

/// The answer to a form elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitResponse<T> {
    /// The user submitted the form; here is its typed content.
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

/// Asks the client's user for input (`elicitation/create`, form mode).
#[derive(Clone)]
pub struct Elicitor {
    inner: Arc<dyn Elicit>,
}

impl fmt::Debug for Elicitor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Elicitor")
    }
}

impl Elicitor {
    pub(crate) fn new(inner: Arc<dyn Elicit>) -> Self {
        Self { inner }
    }

    /// Sends raw `elicitation/create` params and returns the raw result.
    ///
    /// # Errors
    /// The client's error, or an internal error when the connection closed.
    pub async fn raw(&self, params: Value) -> Result<Value, ErrorObject> {
        self.inner.elicit(params).await
    }

    /// Like [`raw`](Self::raw) under a key you choose: on a 2026-07-28
    /// request it is the `inputRequests` key the client answers under.
    ///
    /// # Errors
    /// The client's error, or an internal error when the connection closed.
    pub async fn raw_keyed(&self, key: &str, params: Value) -> Result<Value, ErrorObject> {
        self.inner.elicit_keyed(key, params).await
    }

    /// Asks a yes/no question (a form with one required boolean `confirm`).
    /// True only when the user accepted with `confirm: true`.
    ///
    /// # Errors
    /// The client's error, or an internal error when the connection closed.
    pub async fn confirm(&self, prompt: &str) -> Result<bool, ErrorObject> {
        let params = json!({
            "message": prompt,
            "requestedSchema": {
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "title": "Confirm" } },
                "required": ["confirm"],
            },
        });
        let result = self.raw(params).await?;
        Ok(
            result.get("action").and_then(Value::as_str) == Some("accept")
                && result.pointer("/content/confirm").and_then(Value::as_bool) == Some(true),
        )
    }

    /// Asks for a form whose schema comes from `T` and returns the typed answer.
    ///
    /// `T` should be a flat struct of strings, numbers, booleans and enums, as
    /// elicitation forms allow.
    ///
    /// # Errors
    /// The client's error; `-32602` when accepted content does not fit `T`.
    pub async fn form<T: DeserializeOwned + JsonSchema>(
        &self,
        message: &str,
    ) -> Result<ElicitResponse<T>, ErrorObject> {
        let schema = crate::schema::schema_for::<T>();
        let params = json!({ "message": message, "requestedSchema": schema });
        let result = self.raw(params).await?;
        match result.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = result
                    .get("content")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                serde_json::from_value(content)
                    .map(ElicitResponse::Accept)
                    .map_err(|e| {
                        ErrorObject::invalid_params(format!(
                            "elicitation content does not fit: {e}"
                        ))
                    })
            }
            Some("decline") => Ok(ElicitResponse::Decline),
            Some("cancel") => Ok(ElicitResponse::Cancel),
            _ => Err(ErrorObject::invalid_params(
                "elicitation result has no valid action",
            )),
        }
    }
}

/// What a tool, resource or prompt handler receives with each call.
///
/// The cancellation signal is always there; progress and elicitation are
/// there only when the client and transport can carry them, so reach them
/// through `Option`s (or the no-op conveniences).
#[derive(Clone)]
pub struct InvokeContext {
    pub(crate) cancel: CancelToken,
    pub(crate) progress: Option<Progress>,
    /// Built on first use from `channel` (or the call's explicit hook).
    pub(crate) elicitor: std::sync::OnceLock<Option<Elicitor>>,
    /// The client announced form elicitation.
    pub(crate) can_elicit: bool,
    pub(crate) request_id: Option<RequestId>,
    pub(crate) client: Option<Arc<ClientInfo>>,
    pub(crate) call: CallContext,
    pub(crate) state: Option<Arc<StateMap>>,
    pub(crate) interrupt: Option<Arc<crate::interrupt::Interrupt>>,
    pub(crate) channel: crate::interrupt::Channel,
    pub(crate) modern: bool,
    /// The lowest level rank to send; `None`: send no log messages.
    pub(crate) log_threshold: Option<u8>,
}

/// One question for the client: an `elicitation/create`,
/// `sampling/createMessage` or `roots/list` request under a key.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// The key the answer comes back under.
    pub key: String,
    /// The client method.
    pub method: String,
    /// Its params (`Value::Null` for none).
    pub params: Value,
}

impl InputRequest {
    /// An `elicitation/create` request (form or URL mode, by `params.mode`).
    pub fn elicit(key: impl Into<String>, params: Value) -> Self {
        Self {
            key: key.into(),
            method: "elicitation/create".into(),
            params,
        }
    }

    /// A `sampling/createMessage` request.
    pub fn sample(key: impl Into<String>, params: Value) -> Self {
        Self {
            key: key.into(),
            method: "sampling/createMessage".into(),
            params,
        }
    }

    /// A `roots/list` request.
    pub fn list_roots(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            method: "roots/list".into(),
            params: Value::Null,
        }
    }

    /// The client capability this request needs, as a capabilities object.
    fn required_capability(&self) -> Value {
        match self.method.as_str() {
            "sampling/createMessage" => json!({ "sampling": {} }),
            "roots/list" => json!({ "roots": {} }),
            _ if self.params.get("mode").and_then(Value::as_str) == Some("url") => {
                json!({ "elicitation": { "url": {} } })
            }
            _ => json!({ "elicitation": {} }),
        }
    }
}

/// True when `caps` (the client's) cover every member of `required`: each
/// required member is present; for `elicitation`, a `url` or `form` mode
/// the client announced (an empty object means form only).
fn covers(caps: &ClientCapabilities, required: &Value) -> bool {
    let Some(required) = required.as_object() else {
        return true;
    };
    required.iter().all(|(name, want)| match name.as_str() {
        "elicitation" => match &caps.elicitation {
            Some(Value::Object(have)) => {
                let wants_url = want.get("url").is_some();
                if wants_url {
                    have.contains_key("url")
                } else {
                    have.is_empty() || have.contains_key("form")
                }
            }
            _ => false,
        },
        "sampling" => caps.sampling.is_some(),
        "roots" => caps.roots.is_some(),
        other => caps.extra.contains_key(other),
    })
}

impl fmt::Debug for InvokeContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InvokeContext")
            .field("request_id", &self.request_id)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("progress", &self.progress.is_some())
            .field("elicitation", &self.can_elicit)
            .field("stateless", &self.modern)
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

// `require_elicitation` never reaches this: `fail` does not return.
fn unreachable_elicitor() -> Elicitor {
    struct Never;
    #[async_trait]
    impl Elicit for Never {
        async fn elicit(&self, _params: Value) -> Result<Value, ErrorObject> {
            Err(ErrorObject::internal("elicitation is unavailable"))
        }
    }
    Elicitor::new(Arc::new(Never))
}

impl InvokeContext {
    /// A context for calling a handler directly (tests, `McpServer::call_tool`):
    /// a fresh cancellation token and nothing else.
    pub fn detached() -> Self {
        Self {
            cancel: CancelToken::new(),
            progress: None,
            elicitor: std::sync::OnceLock::new(),
            can_elicit: false,
            request_id: None,
            client: None,
            call: CallContext::default(),
            state: None,
            interrupt: None,
            channel: crate::interrupt::Channel::None,
            modern: false,
            log_threshold: None,
        }
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
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await;
    }

    /// The progress reporter, present when the request carried a
    /// `progressToken` and the transport can notify.
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }

    /// Reports progress if a reporter is present; otherwise does nothing.
    pub async fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(p) = &self.progress {
            p.report(progress, total, message).await;
        }
    }

    /// The elicitation handle, present when the client announced the
    /// `elicitation` capability and the transport can carry requests.
    pub fn elicitation(&self) -> Option<&Elicitor> {
        self.elicitor
            .get_or_init(|| match &self.call.elicit {
                Some(hook) => Some(Elicitor::new(Arc::clone(hook))),
                None if self.can_elicit => self
                    .channel
                    .requester()
                    .map(|r| Elicitor::new(Arc::new(crate::interrupt::RequesterElicit(r)))),
                None => None,
            })
            .as_ref()
    }

    /// The elicitation handle, or — when the client cannot be asked — stops
    /// this call with an error saying so: on a 2026-07-28 request `-32021`
    /// with `data.requiredCapabilities = {"elicitation": {}}`, on a legacy
    /// request `-32603`. Use it when the work cannot go on without an answer.
    pub async fn require_elicitation(&self) -> Elicitor {
        if let Some(e) = self.elicitation() {
            return e.clone();
        }
        self.fail(self.missing(json!({ "elicitation": {} }))).await;
        unreachable_elicitor()
    }

    /// Stops this call unless the client declared every capability in
    /// `required` (e.g. `json!({"sampling": {}})`): on a 2026-07-28 request
    /// the call is answered `-32021` with `data.requiredCapabilities`, on a
    /// legacy request `-32603`.
    pub async fn require_capability(&self, required: Value) {
        let have = self.client.as_deref().map(|c| &c.capabilities);
        if have.is_some_and(|caps| covers(caps, &required)) {
            return;
        }
        self.fail(self.missing(required)).await;
    }

    fn missing(&self, required: Value) -> ErrorObject {
        if self.modern {
            crate::server::era::missing_capability(required)
        } else {
            ErrorObject::internal(format!(
                "this call needs client capabilities the client did not announce: {required}"
            ))
        }
    }

    /// Stops this call and answers it with `error` (a JSON-RPC error, not a
    /// tool result). Use it for protocol-level failures only; it never returns.
    pub async fn fail(&self, error: ErrorObject) {
        match &self.interrupt {
            Some(interrupt) => match interrupt
                .raise(crate::interrupt::Interruption::Error(error))
                .await {},
            None => std::future::pending().await,
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
    /// a needed capability; the client's error; `-32603` when nothing can
    /// carry requests to the client.
    pub async fn input(
        &self,
        requests: Vec<InputRequest>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let caps = self.client.as_deref().map(|c| &c.capabilities);
        for r in &requests {
            let needed = r.required_capability();
            if !caps.is_some_and(|c| covers(c, &needed)) {
                return Err(self.missing(needed));
            }
        }
        let requester = self.channel.requester().ok_or_else(no_channel)?;
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
    pub async fn list_roots(&self) -> Result<Value, ErrorObject> {
        let key = self.auto_key("roots")?;
        let mut answers = self
            .input(vec![InputRequest::list_roots(key.clone())])
            .await?;
        Ok(answers.remove(&key).unwrap_or(Value::Null))
    }

    fn auto_key(&self, prefix: &str) -> Result<String, ErrorObject> {
        self.channel
            .requester()
            .map(|r| r.auto_key(prefix))
            .ok_or_else(no_channel)
    }

    /// Sends a log message (`notifications/message`) at `level` (`"debug"`,
    /// `"info"`, … `"emergency"`) when the server offers logging and the
    /// level is at or above the session's (legacy) or the request's
    /// (2026-07-28 `_meta`) minimum; otherwise does nothing. A 2026-07-28
    /// request without a log level gets no log messages.
    pub async fn log(&self, level: &str, logger: Option<&str>, data: Value) {
        let (Some(threshold), Some(rank), Some(outbound)) = (
            self.log_threshold,
            crate::server::extras::level_rank(level),
            &self.call.outbound,
        ) else {
            return;
        };
        if rank < threshold {
            return;
        }
        let mut params = Map::new();
        params.insert("level".into(), Value::String(level.to_owned()));
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
        self.modern
    }

    /// Asks the user to confirm. Fails closed: false when elicitation is
    /// unavailable, the user declined or cancelled, or the request failed.
    pub async fn confirm(&self, prompt: &str) -> bool {
        match self.elicitation() {
            Some(e) => e.confirm(prompt).await.unwrap_or(false),
            None => false,
        }
    }

    /// Request headers (lower-case names).
    pub fn headers(&self) -> &Headers {
        &self.call.headers
    }

    /// One header by lower-case name.
    pub fn header(&self, name: &str) -> Option<&HeaderValue> {
        self.call.headers.get(name)
    }

    /// The transport peer's address, when known.
    pub fn remote_addr(&self) -> Option<&str> {
        self.call.remote_addr.as_deref()
    }

    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> Option<&RequestId> {
        self.request_id.as_ref()
    }

    /// What the client announced in `initialize`.
    pub fn client_info(&self) -> Option<&ClientInfo> {
        self.client.as_deref()
    }

    /// The client's capabilities, when it initialized.
    pub fn client_capabilities(&self) -> Option<&ClientCapabilities> {
        self.client.as_deref().map(|c| &c.capabilities)
    }

    /// The negotiated protocol revision, when the client initialized.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.client.as_deref().map(|c| c.protocol_version)
    }

    /// The opaque caller the transport supplied, downcast to `T`.
    pub fn caller<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.call.caller()
    }

    /// Application state registered with
    /// [`McpServerBuilder::state`](crate::McpServerBuilder::state).
    pub fn state<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.state.as_deref().and_then(StateMap::get)
    }

    /// The transport context this call arrived with.
    pub fn call_context(&self) -> &CallContext {
        &self.call
    }
}
