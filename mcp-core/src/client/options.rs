//! How a client connects ([`ClientBuilder`], [`Protocol`]) and how one
//! request behaves ([`RequestOptions`]).

use std::sync::Arc;
use std::time::Duration;

use crate::cancel::CancelToken;
use crate::protocol::Implementation;

use super::handlers::Handlers;

/// Which protocol revision a client speaks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Protocol {
    /// Probe with `server/discover` and speak 2026-07-28 if the server
    /// does; otherwise (any other answer, or none within the probe
    /// timeout) fall back to the `initialize` handshake.
    #[default]
    Auto,
    /// The `initialize` handshake, asking for this revision (the server
    /// may answer with another one it supports).
    Legacy(String),
    /// A stateless revision (`2026-07-28`): no handshake, per-request `_meta`.
    Modern(String),
}

impl Protocol {
    /// The revision named by `version`: stateless revisions are
    /// [`Protocol::Modern`], the others [`Protocol::Legacy`].
    pub fn pinned(version: &str) -> Self {
        if crate::protocol::MODERN_PROTOCOL_VERSIONS.contains(&version) {
            Self::Modern(version.to_owned())
        } else {
            Self::Legacy(version.to_owned())
        }
    }
}

/// A progress notification for one request.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressEvent {
    /// How far along (grows with each notification).
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// A human-readable message, if any.
    pub message: Option<String>,
}

/// How one request behaves. The default: the client's timeout, no
/// progress, no cancel token.
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) no_timeout: bool,
    pub(crate) progress: Option<Arc<dyn Fn(ProgressEvent) + Send + Sync>>,
    pub(crate) cancel: Option<CancelToken>,
    pub(crate) param_headers: Vec<(String, String)>,
    pub(crate) handlers: Option<Handlers>,
    pub(crate) headers: Vec<(String, String)>,
    /// Whose private cache entries this request may use.
    pub(crate) cache_principal: Option<Arc<str>>,
}

impl RequestOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Gives up (and cancels the request) after `timeout`.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self.no_timeout = false;
        self
    }

    /// Waits as long as the server takes, whatever the client's default
    /// timeout (a listen, a proxied call).
    #[must_use]
    pub fn no_timeout(mut self) -> Self {
        self.timeout = None;
        self.no_timeout = true;
        self
    }

    /// Asks for progress (a `progressToken`) and calls `f` with each
    /// notification.
    #[must_use]
    pub fn progress(mut self, f: impl Fn(ProgressEvent) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Answers the server's questions *about this request* with `handlers`
    /// instead of the client's: the entries of its 2026-07-28
    /// `input_required` results, and the legacy server→client requests
    /// that arrive on its own HTTP response stream (or, over a byte
    /// stream, while it is the only request with handlers of its own).
    /// A proxy relays each question to its own caller this way.
    #[must_use]
    pub fn answer_with(mut self, handlers: Handlers) -> Self {
        self.handlers = Some(handlers);
        self
    }

    /// An HTTP header for this request only (an `Authorization` a proxy
    /// forwards, say). `Mcp-*`, `Last-Event-ID` and hop-by-hop headers
    /// are never sent this way; over a byte stream headers are ignored.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Cancels the request when `token` fires.
    #[must_use]
    pub fn cancel(mut self, token: CancelToken) -> Self {
        self.cancel = Some(token);
        self
    }
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("cancel", &self.cancel)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Client`](super::Client): who it is, which revision it
/// speaks, what it answers, then one of the `connect_*` methods.
///
/// ```no_run
/// # async fn run() -> Result<(), mcp_core::client::ClientError> {
/// use mcp_core::client::{ClientBuilder, Protocol};
///
/// let client = ClientBuilder::new("my-agent", "1.0.0")
///     .protocol(Protocol::Auto)
///     .connect_http("http://127.0.0.1:8080/mcp")
///     .await?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// client.close().await;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) info: Implementation,
    pub(crate) protocol: Protocol,
    pub(crate) handlers: Handlers,
    pub(crate) timeout: Option<Duration>,
    pub(crate) probe_timeout: Duration,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) max_message: usize,
    #[cfg(feature = "client")]
    pub(crate) cache: CacheOptions,
    #[cfg(feature = "client-oauth")]
    pub(crate) oauth: Option<super::oauth::OAuth>,
}

impl ClientBuilder {
    /// A client named `name` at `version` (its `clientInfo`), speaking
    /// [`Protocol::Auto`], answering nothing, with a 60 s request timeout.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            protocol: Protocol::Auto,
            handlers: Handlers::default(),
            timeout: Some(Duration::from_secs(60)),
            probe_timeout: Duration::from_secs(5),
            headers: Vec::new(),
            max_message: 16 * 1024 * 1024,
            #[cfg(feature = "client")]
            cache: CacheOptions::new(),
            #[cfg(feature = "client-oauth")]
            oauth: None,
        }
    }

    /// Which revision to speak.
    #[must_use]
    pub fn protocol(mut self, protocol: Protocol) -> Self {
        self.protocol = protocol;
        self
    }

    /// What to answer the server's requests with (and so which
    /// capabilities to declare).
    #[must_use]
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// The timeout of every request without its own (`None`: wait forever).
    #[must_use]
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long [`Protocol::Auto`] waits for the `server/discover` probe
    /// before falling back to `initialize` (default 5 s).
    #[must_use]
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// An HTTP header sent with every request (`Authorization`, say).
    /// `Mcp-*` headers are the client's own and cannot be set here.
    #[must_use]
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The largest message the server may send (default 16 MiB): a line,
    /// a JSON body or one event. A larger one closes the connection or
    /// fails its request.
    #[must_use]
    pub fn max_message_bytes(mut self, max: usize) -> Self {
        self.max_message = max;
        self
    }
}

/// Default of [`CacheOptions::max_bytes`]: 8 MiB of result JSON per client,
/// room for the listings of a large catalog and a few hundred small reads.
pub const DEFAULT_CACHE_BYTES: usize = 8 * 1024 * 1024;

/// Whether and how much a client caches; see [`ClientBuilder::cache`].
///
/// ```
/// use mcp_core::client::{CacheOptions, ClientBuilder};
///
/// let small = ClientBuilder::new("agent", "1.0.0").cache(CacheOptions::new().max_bytes(1 << 20));
/// let none = ClientBuilder::new("agent", "1.0.0").cache(CacheOptions::disabled());
/// # drop((small, none));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheOptions {
    pub(crate) enabled: bool,
    pub(crate) max_bytes: usize,
}

impl Default for CacheOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl CacheOptions {
    /// On, holding at most [`DEFAULT_CACHE_BYTES`].
    pub fn new() -> Self {
        Self {
            enabled: true,
            max_bytes: DEFAULT_CACHE_BYTES,
        }
    }

    /// Off: every listing and read goes to the server.
    pub fn disabled() -> Self {
        Self {
            enabled: false,
            max_bytes: 0,
        }
    }

    /// The most result JSON, in bytes (plus a small overhead per entry),
    /// the cache holds; a result larger than this is not kept.
    #[must_use]
    pub fn max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }
}
