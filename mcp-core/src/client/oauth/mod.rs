//! OAuth for protected MCP servers (feature `client-oauth`): the client
//! side of the spec's authorization chapter, for Streamable HTTP.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use mcp_core::client::oauth::{LoopbackRedirect, OAuth};
//! use mcp_core::client::ClientBuilder;
//!
//! let step = LoopbackRedirect::bind(0).await?; // prints the URL to open
//! let oauth = OAuth::new(step)
//!     .client_metadata_url("https://example.com/my-agent/client.json");
//! let client = ClientBuilder::new("my-agent", "1.0.0")
//!     .oauth(oauth)
//!     .connect_http("http://127.0.0.1:8080/mcp")
//!     .await?;
//! client.list_tools().await?;
//! # Ok(()) }
//! ```
//!
//! What happens on a `401`: the `WWW-Authenticate` challenge's
//! `resource_metadata` (else the well-known locations, path-suffixed
//! first) gives the Protected Resource Metadata (RFC 9728), whose
//! `resource` must cover the server's URL; its first authorization server
//! is looked up (RFC 8414, then OpenID Connect discovery, with the
//! issuer's path inserted, then appended), its `issuer` must match
//! exactly and it must offer PKCE S256. The client identifies itself with
//! credentials registered for that issuer ([`PreRegistered`]), else its
//! client ID metadata document ([`OAuth::client_metadata_url`]) where the
//! server supports them, else dynamic registration (deprecated; on by
//! default), which the [`TokenStore`] keeps per issuer ([`Registration`])
//! so later runs reuse it; one the server refuses (`invalid_client` at
//! the token endpoint) or whose secret has expired is replaced by a new
//! one. Scopes: the challenge's `scope`, else the metadata's
//! `scopes_supported`, else none, plus `offline_access` when the
//! authorization server lists it. The [`AuthorizationStep`] takes the
//! user to the authorization URL (PKCE S256, `state`, the `resource`
//! exactly as published) and brings back the redirect, whose `state` and
//! RFC 9207 `iss` are checked before the code is exchanged.
//!
//! After that the HTTP link sends the token on every request (POSTs, the
//! legacy GET stream, the closing DELETE), refreshes it when it has
//! expired, answers a `403 insufficient_scope` by asking again for the
//! scopes held plus the challenged ones (step-up), and a `401` by
//! discovering again (a resource that moved to another authorization
//! server gets a registration there; credentials never cross issuers).
//! A request is re-authorized at most twice
//! ([`OAuth::max_reauthorizations`]); then it fails with
//! [`ClientError::Authorization`]. Over stdio there is no OAuth: the
//! spec has stdio servers take credentials from the environment.
//!
//! A user may take longer than a request's timeout (60 s by default) or
//! the [`Protocol::Auto`](super::Protocol::Auto) probe's (5 s): the flow
//! runs on a task of its own and completes anyway (the next request gets
//! its token), but with an interactive step pin the protocol and raise
//! [`ClientBuilder::timeout`] so the first request waits for the user.
//!
//! Clients without a user skip the redirect: [`OAuth::client_credentials`]
//! (the client credentials grant), [`OAuth::jwt_bearer`] (a workload's
//! identity assertion, RFC 7523) and [`OAuth::enterprise`] (an ID token
//! exchanged at the enterprise identity provider for an ID-JAG). With
//! feature `client-oauth-jwt`, pre-registered clients may authenticate
//! with `private_key_jwt` (ES256) instead of a secret, and `OAuth::dpop`
//! asks for DPoP-bound tokens (RFC 9449) where they are offered.
//!
//! Every document fetched is bounded ([`OAuth::max_document_bytes`], 64
//! KiB by default) and every exchange timed out. Like the rest of the
//! client, this speaks `https://` with the `tls` feature (see
//! `mcp_core::tls` for the trusted roots), else `http://` only.

#[cfg(feature = "client-oauth-jwt")]
mod assertion;
mod challenge;
mod discovery;
#[cfg(feature = "client-oauth-jwt")]
mod dpop;
mod enterprise;
mod fetch;
mod flow;
pub(crate) mod link;
mod pkce;
mod redirect;
mod registration;
mod store;
mod token;
mod urls;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

pub use enterprise::IdentityProvider;
pub use redirect::{AuthorizationStep, HeadlessRedirect, LoopbackRedirect};
pub use registration::PreRegistered;
pub use store::{MemoryTokenStore, Registration, TokenStore, Tokens};

use super::{ClientBuilder, ClientError};
use discovery::Discovered;
#[cfg(feature = "client-oauth-jwt")]
use dpop::Dpop;
use registration::ClientId;

/// Without feature `client-oauth-jwt` there is no DPoP key.
#[cfg(not(feature = "client-oauth-jwt"))]
enum Dpop {}

#[cfg(not(feature = "client-oauth-jwt"))]
impl Dpop {
    fn proof(
        &self,
        _method: &str,
        _url: &str,
        _access_token: Option<&str>,
        _nonce: Option<&str>,
    ) -> Result<String, ClientError> {
        match *self {}
    }
}

/// How a client authorizes with protected servers; see the
/// [module docs](self). Clones share their tokens and registrations (a
/// proxy's reconnections reuse them).
#[derive(Clone)]
pub struct OAuth {
    config: Config,
    shared: Arc<Shared>,
}

#[derive(Clone)]
struct Config {
    step: Arc<dyn AuthorizationStep>,
    /// Set for the client credentials grant (no user involved).
    machine: Option<Machine>,
    store: Arc<dyn TokenStore>,
    client_name: String,
    metadata_url: Option<String>,
    pre_registered: Vec<PreRegistered>,
    dynamic_registration: bool,
    offline_access: bool,
    max_document: usize,
    max_reauthorizations: u32,
    timeout: Duration,
    /// Asks for DPoP-bound tokens where the authorization server offers them.
    dpop: bool,
}

/// A grant without a user, used instead of the code flow.
#[derive(Clone)]
enum Machine {
    /// `client_credentials`.
    ClientCredentials,
    /// RFC 7523 `jwt-bearer`, with a fresh assertion each time.
    JwtBearer(Assertion),
    /// `jwt-bearer` with an ID-JAG from the enterprise identity provider.
    Enterprise(IdentityProvider),
}

type Assertion = Arc<dyn Fn() -> Result<String, ClientError> + Send + Sync>;

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    /// The DPoP key, made on first use.
    dpop_key: Mutex<Option<Arc<Dpop>>>,
    /// The last `DPoP-Nonce` of the authorization server and of the resource.
    as_nonce: Mutex<Option<String>>,
    rs_nonce: Mutex<Option<String>>,
    /// One authorization or refresh at a time.
    flow: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// The client's identity per issuer.
    clients: HashMap<String, ClientId>,
    /// Per MCP endpoint: what discovery found and the scopes asked for.
    servers: HashMap<String, Known>,
}

#[derive(Clone)]
struct Known {
    discovered: Discovered,
    requested: Vec<String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl OAuth {
    /// Authorizes through `step`, keeps tokens in memory, registers
    /// dynamically when nothing else identifies the client, asks for
    /// `offline_access` where offered.
    pub fn new(step: impl AuthorizationStep) -> Self {
        Self {
            config: Config {
                step: Arc::new(step),
                machine: None,
                store: Arc::new(MemoryTokenStore::new()),
                client_name: "mcp-core client".to_owned(),
                metadata_url: None,
                pre_registered: Vec::new(),
                dynamic_registration: true,
                offline_access: true,
                max_document: 64 * 1024,
                max_reauthorizations: 2,
                timeout: Duration::from_secs(30),
                dpop: false,
            },
            shared: Arc::default(),
        }
    }

    /// A client acting for itself, not for a user: the OAuth client
    /// credentials grant (the `io.modelcontextprotocol/oauth-client-credentials`
    /// extension) with `credentials` (their secret sent by
    /// `client_secret_basic` or `client_secret_post`, as the authorization
    /// server lists), after the same discovery as the code flow. No
    /// redirect, no refresh token: a `401` asks for a new token.
    pub fn client_credentials(credentials: PreRegistered) -> Self {
        let mut oauth = Self::new(HeadlessRedirect::new("urn:ietf:wg:oauth:2.0:oob"))
            .pre_registered(credentials)
            .dynamic_registration(false);
        oauth.config.machine = Some(Machine::ClientCredentials);
        oauth
    }

    /// A workload authorizing with an identity its platform issued (the
    /// `io.modelcontextprotocol/auth/wif` extension): the RFC 7523
    /// `jwt-bearer` grant with the JWT `assertion` returns (called for
    /// each grant, so it can hand out a fresh one), as the client
    /// `credentials` name (usually public: no secret). A refused grant is
    /// an error, never retried with another grant type.
    pub fn jwt_bearer(
        credentials: PreRegistered,
        assertion: impl Fn() -> Result<String, ClientError> + Send + Sync + 'static,
    ) -> Self {
        let mut oauth = Self::client_credentials(credentials);
        oauth.config.machine = Some(Machine::JwtBearer(Arc::new(assertion)));
        oauth
    }

    /// Enterprise-managed authorization (the
    /// `io.modelcontextprotocol/enterprise-managed-authorization`
    /// extension): the user's ID token at `idp` is exchanged (RFC 8693)
    /// for an ID-JAG naming the MCP server's authorization server and
    /// resource, presented there with the `jwt-bearer` grant as the client
    /// `credentials` name. No browser, no redirect.
    pub fn enterprise(credentials: PreRegistered, idp: IdentityProvider) -> Self {
        let mut oauth = Self::client_credentials(credentials);
        oauth.config.machine = Some(Machine::Enterprise(idp));
        oauth
    }

    /// Asks for DPoP-bound tokens (RFC 9449; the
    /// `io.modelcontextprotocol/auth/dpop` extension) where the
    /// authorization server lists ES256 in `dpop_signing_alg_values_supported`:
    /// every token request and every request to the MCP server then
    /// carries a fresh proof from a P-256 key made for this `OAuth` (a
    /// server's `DPoP-Nonce` is used from then on, and a `use_dpop_nonce`
    /// refusal retried once with it). Off by default.
    #[cfg(feature = "client-oauth-jwt")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-oauth-jwt")))]
    #[must_use]
    pub fn dpop(mut self, on: bool) -> Self {
        self.config.dpop = on;
        self
    }

    /// Keeps tokens and dynamic registrations in `store` instead of
    /// memory (an `Arc` of a store can be shared by several `OAuth`s).
    #[must_use]
    pub fn token_store(mut self, store: impl TokenStore) -> Self {
        self.config.store = Arc::new(store);
        self
    }

    /// The `client_name` sent with dynamic registration.
    #[must_use]
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.config.client_name = name.into();
        self
    }

    /// The URL of this client's metadata document (`https://` with a
    /// path; another URL is never used), sent as its `client_id` where
    /// the authorization server advertises
    /// `client_id_metadata_document_supported`.
    #[must_use]
    pub fn client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.config.metadata_url = Some(url.into());
        self
    }

    /// Credentials registered ahead of time (tried first; one per issuer,
    /// plus at most one for any issuer).
    #[must_use]
    pub fn pre_registered(mut self, credentials: PreRegistered) -> Self {
        self.config.pre_registered.push(credentials);
        self
    }

    /// Whether to fall back on dynamic client registration (default on;
    /// the spec keeps it only for compatibility).
    #[must_use]
    pub fn dynamic_registration(mut self, on: bool) -> Self {
        self.config.dynamic_registration = on;
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the
    /// authorization server lists it (default on; never otherwise).
    #[must_use]
    pub fn offline_access(mut self, on: bool) -> Self {
        self.config.offline_access = on;
        self
    }

    /// The largest metadata document, registration or token answer read
    /// (default 64 KiB); a larger one fails the flow.
    #[must_use]
    pub fn max_document_bytes(mut self, max: usize) -> Self {
        self.config.max_document = max;
        self
    }

    /// How many times one request may be re-authorized (`401` or
    /// `403 insufficient_scope`) before it fails (default 2).
    #[must_use]
    pub fn max_reauthorizations(mut self, max: u32) -> Self {
        self.config.max_reauthorizations = max;
        self
    }

    /// The timeout of each request to an authorization or resource
    /// metadata server (default 30 s; the user's step has its own).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.config.timeout = timeout;
        self
    }

    /// The tokens held for the MCP endpoint `url`, if any.
    ///
    /// # Cancel safety
    /// Reading only; dropping the future changes nothing.
    pub async fn tokens(&self, url: &str) -> Option<Tokens> {
        let key = url.parse::<hyper::Uri>().ok()?.to_string();
        self.config.store.load(&key).await
    }

    fn fetcher(&self) -> fetch::Fetcher {
        fetch::Fetcher::new(self.config.max_document, self.config.timeout)
    }
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("client_name", &self.config.client_name)
            .field("metadata_url", &self.config.metadata_url)
            .field("pre_registered", &self.config.pre_registered)
            .field("dynamic_registration", &self.config.dynamic_registration)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// Authorizes with OAuth when the HTTP server asks ([module
    /// docs](self)); the token it gets replaces any `Authorization` set
    /// with [`ClientBuilder::header`] or per request. Ignored over stdio
    /// and byte streams.
    #[must_use]
    pub fn oauth(mut self, oauth: OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// True when this builder authorizes with OAuth.
    pub fn has_oauth(&self) -> bool {
        self.oauth.is_some()
    }
}
