//! Proxying another MCP server through ours: a [`Remote`] connects to it
//! (a command or a URL) and turns its tools, resources and prompts into
//! descriptors of our own that forward every call, so they mount into an
//! [`McpServer`] like any other (`McpServerBuilder::mount`) and go
//! through its interceptors.
//!
//! What a forwarded call keeps:
//! - its result, intact (no sealing, no rewriting: its content blocks
//!   are forwarded as the JSON they came in, [`Content::Raw`], and only
//!   the backend's own `serverInfo` is left out of its `_meta`), and the
//!   backend's JSON-RPC errors as JSON-RPC errors;
//! - progress, forwarded to our caller when our caller asked for it;
//! - cancellation: our caller's cancel drops the forwarded call, which
//!   cancels it on the backend;
//! - the backend's questions (elicitation, sampling, roots), relayed to
//!   *our* caller in our caller's era: a legacy backend's
//!   `elicitation/create` reaches a 2026-07-28 caller as our own
//!   `input_required` (with our own sealed state; the call runs again on
//!   the retry, and the question is answered from the retry at once), and
//!   a 2026-07-28 backend's `input_required` reaches a legacy caller as an
//!   `elicitation/create` on its session. (A legacy backend over stdio does
//!   not say which request a question belongs to: with several forwarded
//!   calls in flight to it, its questions are refused rather than guessed.)
//!
//! Header policy: `Authorization` is forwarded only when
//! [`ProxyOptions::forward_authorization`] is on and the backend does not
//! authorize with OAuth of its own (a backend reached with an
//! OAuth-configured `ClientBuilder` gets that flow's token, never our
//! caller's, whatever the option says); `Mcp-*`, `Last-Event-ID`
//! and hop-by-hop headers never; our caller's `_meta` is never copied.
//! A backend that is down (or, legacy, no longer knows our session) fails
//! the call with a tool error naming it, and the next call reconnects.
//! The backend's listings and reads go through the client's cache
//! ([`CacheOptions`](crate::client::CacheOptions), set on the
//! `ClientBuilder` given to [`Remote::connect`]): a read the backend marks
//! `cacheScope: "private"` is served again only to the caller with the
//! same principal ([`AuthInfo`](crate::context::AuthInfo)).
//! Listings are cached and refreshed by [`Remote::sync_tools`]; all of a
//! backend's listings together are bounded in bytes
//! ([`ProxyOptions::max_listing_bytes`]). Every forwarded tool is marked
//! in its `_meta` ([`PROXIED_META`]) so interceptors and listings can tell.
//!
//! Ownership: every forwarder a [`Remote`] makes is marked as that
//! backend's, and a refresh changes only the entries it marked. A tool,
//! prompt or resource URI that another mounted backend (or the server
//! itself) serves is refused for as long as that one holds it, however the
//! backend lists, de-lists and lists it again; a forwarder replaced keeps
//! the OAuth scopes and required state of the one it replaces.
//!
//! [`Content::Raw`]: crate::protocol::Content::Raw

mod adapted;
mod apply;
mod listing;
mod prompts_resources;
mod sync;

pub use listing::DEFAULT_MAX_LISTING_BYTES;
pub use sync::DEFAULT_LISTING_TTL;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::handlers::{Handlers, ServerRequestHandler};
use super::options::{ClientBuilder, ProgressEvent, RequestOptions};
use super::{Client, ClientError};
use crate::context::{InputRequest, InvokeContext};
use crate::protocol::{CallToolResult, Tool};
use crate::server::registry::Owner;
use crate::{handler::BoxFuture, McpServer, McpServerBuilder, McpToolDef};

/// The `_meta` key marking a forwarded tool: `{"remote": <label>}`.
pub const PROXIED_META: &str = "mcp-core/proxied";

/// Where the backend is.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Target {
    /// A command started with these arguments (and extra environment
    /// variables, in this working directory), spoken to over stdio; its
    /// stderr goes to ours.
    Command {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the inherited environment.
        env: Vec<(String, String)>,
        /// Its working directory (default: ours).
        cwd: Option<std::path::PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Url(String),
}

/// How a [`Remote`] forwards.
#[derive(Debug, Clone)]
pub struct ProxyOptions {
    forward_authorization: bool,
    max_listing_bytes: usize,
    scopes: Vec<String>,
    transforms: crate::handler::ToolTransforms,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        Self {
            forward_authorization: false,
            max_listing_bytes: DEFAULT_MAX_LISTING_BYTES,
            scopes: Vec::new(),
            transforms: crate::handler::ToolTransforms::new(),
        }
    }
}

impl Target {
    /// `program` with `args`, in our environment and directory.
    pub fn command(
        program: impl Into<String>,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self::Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// A command line split at whitespace (no quoting), or an `http://`
    /// URL as it is.
    ///
    /// # Errors
    /// An empty command line.
    pub fn parse(spec: &str) -> Result<Self, ClientError> {
        if spec.starts_with("http://") || spec.starts_with("https://") {
            return Ok(Self::Url(spec.to_owned()));
        }
        let mut words = spec.split_whitespace();
        let program = words
            .next()
            .ok_or_else(|| ClientError::protocol("an empty backend command"))?;
        Ok(Self::command(program, words))
    }
}

impl ProxyOptions {
    /// Default: nothing of the caller's request is forwarded but its
    /// arguments.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forwards our caller's `Authorization` header to an HTTP backend.
    /// Off by default: a token issued for this server must not reach
    /// another one unless that is what the deployment means. Ignored for
    /// a backend whose builder authorizes with OAuth (feature
    /// `client-oauth`, `ClientBuilder::oauth`): that backend gets only
    /// the token its own flow obtained, never our caller's.
    #[must_use]
    pub fn forward_authorization(mut self, on: bool) -> Self {
        self.forward_authorization = on;
        self
    }

    /// The most JSON, in bytes, the backend's listings may take all
    /// together: its tools, resources, resource templates and prompts,
    /// every page of each. Default [`DEFAULT_MAX_LISTING_BYTES`] (8 MiB):
    /// far above a real catalog, and a bound on what one backend can make
    /// the proxy hold. A listing that goes over fails (connecting, or
    /// [`Remote::builder`]) or, on a refresh, is ignored: the entries
    /// served before stay as they were.
    #[must_use]
    pub fn max_listing_bytes(mut self, bytes: usize) -> Self {
        self.max_listing_bytes = bytes;
        self
    }

    /// OAuth scopes a caller needs (all of them) for every tool, resource,
    /// template and prompt of this backend: each forwarder declares them,
    /// the ones [`Remote::builder`] makes and the ones a refresh adds or
    /// replaces. Default: none (the forwarders are open to every caller
    /// the server admits).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        crate::handler::add_scopes(&mut self.scopes, scopes);
        self
    }
}

/// A connection to a backend MCP server, reconnected when it drops; see
/// the [module docs](self).
#[derive(Clone)]
pub struct Remote(Arc<Inner>);

struct Inner {
    label: String,
    target: Target,
    builder: ClientBuilder,
    options: ProxyOptions,
    client: Mutex<Option<Arc<Client>>>,
    connecting: tokio::sync::Mutex<()>,
    /// Signalled when the backend says one of its lists changed.
    tools_changed: Arc<tokio::sync::Notify>,
    /// The mark on every forwarder made here: a refresh changes only
    /// entries that carry it.
    owner: Owner,
    /// The listings, as last fetched.
    listings: Mutex<listing::Listings>,
    /// Bumped whenever a refresh finds those listings changed.
    listings_version: tokio::sync::watch::Sender<u64>,
    /// What [`ProxyOptions::transforms`] could not apply to the last listing.
    transform_problems: Mutex<Vec<crate::handler::TransformProblem>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("label", &self.0.label)
            .field("target", &self.0.target)
            .finish_non_exhaustive()
    }
}

/// The answer to a backend question that no forwarded call relates to.
fn no_caller(method: &'static str) -> ServerRequestHandler {
    Arc::new(move |_| {
        Box::pin(async move {
            Err(crate::protocol::ErrorObject::new(
                crate::protocol::ErrorCode::INTERNAL_ERROR,
                format!("{method}: no caller of this proxy is waiting for it"),
            ))
        })
    })
}

impl Remote {
    /// Connects to `target` with `builder` (its identity, revision and
    /// timeout; its handlers are replaced: the proxy declares elicitation,
    /// sampling and roots and relays each question to the caller of the
    /// forwarded call that asked it).
    ///
    /// # Errors
    /// The first connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the connection.
    pub async fn connect(
        label: impl Into<String>,
        target: Target,
        builder: ClientBuilder,
        options: ProxyOptions,
    ) -> Result<Self, ClientError> {
        let mut handlers = builder.handlers.clone();
        let tools_changed = Arc::new(tokio::sync::Notify::new());
        let signal = Arc::clone(&tools_changed);
        let user = handlers.notification.take();
        handlers.notification = Some(Arc::new(move |method: &str, params: &Value| {
            if sync::LIST_CHANGED.contains(&method) {
                signal.notify_one();
            }
            if let Some(user) = &user {
                user(method, params);
            }
        }));
        handlers.elicitation = Some(no_caller("elicitation/create"));
        handlers.sampling = Some(no_caller("sampling/createMessage"));
        handlers.roots = Some(no_caller("roots/list"));
        let label = label.into();
        let remote = Self(Arc::new(Inner {
            owner: Owner::new(&label),
            label,
            target,
            builder: builder.handlers(handlers),
            options,
            client: Mutex::new(None),
            connecting: tokio::sync::Mutex::new(()),
            tools_changed,
            listings: Mutex::new(listing::Listings::default()),
            listings_version: tokio::sync::watch::Sender::new(0),
            transform_problems: Mutex::new(Vec::new()),
        }));
        remote.client().await?;
        Ok(remote)
    }

    /// The backend's tools as last listed (by [`builder`](Self::builder)
    /// or a [`sync_tools`](Self::sync_tools) refresh), under their own names.
    pub fn listed_tools(&self) -> Vec<Tool> {
        self.0
            .listings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tools
            .clone()
    }

    /// The label calls and errors name this backend by.
    pub fn label(&self) -> &str {
        &self.0.label
    }

    /// The live client, connecting (again) if there is none.
    ///
    /// # Errors
    /// The connection fails.
    ///
    /// # Cancel safety
    /// Dropping the future abandons a connection attempt.
    pub async fn client(&self) -> Result<Arc<Client>, ClientError> {
        if let Some(c) = self.current() {
            return Ok(c);
        }
        let _one_at_a_time = self.0.connecting.lock().await;
        if let Some(c) = self.current() {
            return Ok(c);
        }
        let builder = self.0.builder.clone();
        let client = match &self.0.target {
            Target::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
                if let Some(cwd) = cwd {
                    command.current_dir(cwd);
                }
                builder.connect_stdio(command).await?
            }
            Target::Url(url) => builder.connect_http(url).await?,
        };
        let client = Arc::new(client);
        *self.0.client.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&client));
        Ok(client)
    }

    fn current(&self) -> Option<Arc<Client>> {
        let mut slot = self.0.client.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|c| c.is_closed()) {
            *slot = None;
        }
        slot.clone()
    }

    /// Forgets `client` (after a transport failure): the next call reconnects.
    fn drop_client(&self, client: &Arc<Client>) {
        let mut slot = self.0.client.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, client)) {
            *slot = None;
        }
    }

    /// A server builder holding a forwarder for every tool (as
    /// [`ProxyOptions::transforms`] adapt them), resource, resource
    /// template and prompt the backend lists now, with the backend's name
    /// and version: hand it to
    /// [`McpServerBuilder::mount`](crate::McpServerBuilder::mount) under a
    /// prefix (or build it and serve it as it is).
    ///
    /// # Errors
    /// A listing fails, or the listings exceed
    /// [`ProxyOptions::max_listing_bytes`].
    ///
    /// # Cancel safety
    /// Dropping the future abandons the listings.
    pub async fn builder(&self) -> Result<McpServerBuilder, ClientError> {
        let client = self.client().await?;
        let mut builder = McpServer::builder();
        if let Some(info) = client.server_info() {
            let field = |k: &str| {
                info.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            builder = builder.server_info(field("name"), field("version"));
        }
        let listings = listing::Listings::fetch(&client, self.0.options.max_listing_bytes).await?;
        for (_, tool) in self.forwarders(&listings.tools) {
            builder = builder.tool(tool);
        }
        for resource in &listings.resources {
            builder = builder.resource(self.forward_resource(resource.clone()));
        }
        for template in &listings.templates {
            builder = builder.resource(self.forward_template(template.clone()));
        }
        for prompt in &listings.prompts {
            builder = builder.prompt(self.forward_prompt(prompt.clone()));
        }
        *self
            .0
            .listings
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = listings;
        Ok(builder)
    }

    /// A forwarder for the backend's `tool`: same name, description,
    /// schemas and annotations, marked with [`PROXIED_META`], requiring
    /// the [`ProxyOptions::scopes`].
    pub fn forward_tool(&self, tool: Tool) -> McpToolDef {
        let remote = self.clone();
        let name: Arc<str> = Arc::from(tool.name.as_str());
        let mut meta = tool.meta.clone().unwrap_or_default();
        meta.insert(PROXIED_META.into(), json!({ "remote": self.0.label }));
        let mut def = McpToolDef::new(
            tool.name.clone(),
            tool.description.clone().unwrap_or_default(),
            Value::Object(tool.input_schema.clone()),
            move |args: Map<String, Value>, ctx: InvokeContext| {
                let remote = remote.clone();
                let name = Arc::clone(&name);
                async move { remote.call_tool(&name, args, ctx).await }
            },
        )
        .with_meta(meta);
        if let Some(title) = tool.title {
            def = def.with_title(title);
        }
        if let Some(schema) = tool.output_schema {
            def = def.with_output_schema(schema);
        }
        if let Some(annotations) = tool.annotations {
            def = def.with_annotations(annotations);
        }
        if let Some(icons) = tool.icons {
            def = def.with_icons(icons);
        }
        def = def.with_scopes(self.0.options.scopes.iter().cloned());
        def.owner = Some(self.0.owner.clone());
        def
    }

    /// Forwards one call of tool `name` for our caller `ctx`.
    async fn call_tool(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: InvokeContext,
    ) -> CallToolResult {
        let client = match self.client().await {
            Ok(c) => c,
            Err(e) => return self.unavailable(&e),
        };
        let mut options = self.options_for(&ctx);
        let outcome = if ctx.progress().is_some() {
            let (progress_tx, mut progress_rx) = mpsc::channel::<ProgressEvent>(32);
            // Lossy by design: a caller that reads slowly skips steps.
            options = options.progress(move |p| {
                let _ = progress_tx.try_send(p);
            });
            let call = client.forward_tool_call(name, args, &options);
            tokio::pin!(call);
            loop {
                tokio::select! {
                    outcome = &mut call => break outcome,
                    Some(p) = progress_rx.recv() => {
                        ctx.report_progress(p.progress, p.total, p.message.as_deref()).await;
                    }
                }
            }
        } else {
            client.forward_tool_call(name, args, &options).await
        };
        match outcome {
            Ok(result) => result,
            Err(e) if backend_lost(&client, &e) => {
                self.drop_client(&client);
                self.unavailable(&e)
            }
            Err(ClientError::Rpc(e)) => {
                let e = ctx.fail(e).await;
                CallToolResult::error(e.message)
            }
            Err(e) => CallToolResult::error(format!("{} ({}): {e}", name, self.0.label)),
        }
    }

    /// True when the backend's credentials come from OAuth: our caller's
    /// token is then never forwarded to it.
    fn oauth_backend(&self) -> bool {
        #[cfg(feature = "client-oauth")]
        return self.0.builder.has_oauth();
        #[cfg(not(feature = "client-oauth"))]
        false
    }

    fn unavailable(&self, e: &ClientError) -> CallToolResult {
        CallToolResult::error(format!("backend {} is unavailable: {e}", self.0.label))
    }

    /// What a forwarded request carries for our caller `ctx`: its
    /// questions relayed back to it, its `Authorization` if configured,
    /// and its principal, so that the backend's private cache entries
    /// ([`CacheOptions`](crate::client::CacheOptions)) serve it alone.
    fn options_for(&self, ctx: &InvokeContext) -> RequestOptions {
        let mut options = RequestOptions::new().answer_with(relay(ctx));
        if let Some(who) = ctx.extensions().get::<crate::context::AuthInfo>() {
            options = options.cache_principal(Arc::clone(&who.principal));
        }
        if self.0.options.forward_authorization && !self.oauth_backend() {
            if let Some(v) = ctx.header("authorization").and_then(|v| v.as_single()) {
                options = options.header("authorization", v);
            }
        }
        options.cancel(ctx.cancel_token().clone())
    }
}

/// True when `e` means the connection to the backend is gone: the
/// transport failed or closed, or a legacy backend no longer knows our
/// session (after a restart). A server answering HTTP 404 for an unknown
/// session with a JSON-RPC error body reaches the client as that error
/// (`-32600` from this crate's server, `-32001` from the TypeScript
/// SDK's), so that is recognised here by code and wording.
fn backend_lost(client: &Client, e: &ClientError) -> bool {
    match e {
        ClientError::Closed | ClientError::Transport(_) => true,
        ClientError::Rpc(e) => {
            !client.is_modern()
                && matches!(e.code, -32600 | -32001)
                && e.message.to_ascii_lowercase().contains("session")
        }
        _ => false,
    }
}

/// Handlers that put each backend question to our caller `ctx` (in its
/// era), under keys numbered in asking order so a re-run asks the same.
fn relay(ctx: &InvokeContext) -> Handlers {
    let ctx = ctx.clone();
    let asked = AtomicUsize::new(0);
    Handlers::relaying(Arc::new(
        move |method: &'static str,
              params: Value|
              -> BoxFuture<Result<Value, crate::protocol::ErrorObject>> {
            let ctx = ctx.clone();
            let key = format!("relay-{}", asked.fetch_add(1, Ordering::Relaxed));
            Box::pin(async move {
                let mut answers = ctx
                    .input(vec![InputRequest {
                        key: key.clone(),
                        method: method.to_owned(),
                        params,
                    }])
                    .await?;
                Ok(answers.remove(&key).unwrap_or(Value::Null))
            })
        },
    ))
}
