//! [`CallContext`]: what a transport supplies with each message (headers,
//! the outbound channel, cancellation, session, caller and principal).

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use super::elicit::Elicit;
use super::extensions::Extensions;
use super::outbound::Outbound;
use super::progress::ProgressSink;
use crate::cancel::CancelToken;
use crate::session::Session;

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

impl CallHeaders {
    /// Headers converted on first use by `build`.
    #[cfg(feature = "http")]
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
    /// A legacy request served without a session that remembers its
    /// `initialize` (HTTP with sessions off): what the client declared is
    /// unknown here, and nothing can carry a question to it.
    pub(crate) sessionless_legacy: bool,
    /// Typed values attached to the request (see [`Extensions`]); handlers
    /// and interceptors read them.
    pub extensions: Extensions,
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

    /// Attaches a typed value to the request (replacing one of its type).
    #[must_use]
    pub fn with_extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
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
