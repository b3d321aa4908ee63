//! The transport-neutral server: [`McpServer`], its builder, and the
//! request pipeline, one stage per file in the order a request meets them:
//!
//! | stage | file | what it does |
//! |---|---|---|
//! | 1 decode | `decode.rs` | a frame's bytes → a [`Frame`] (a request taken apart while parsed) |
//! | 2 classify | `classify.rs` | request / notification / response; the request's era |
//! | 3 admit | `entry.rs` | the transport's [`Admit`] check (a concurrency limit) |
//! | – lifecycle | `lifecycle.rs` | what differs between eras: `initialize`, `server/discover`, removed methods, result decoration, the request channel |
//! | 4 register | `inflight.rs` | the id enters its session's in-flight table; responses and cancels are routed |
//! | 5 route | `route.rs` | the method table |
//! | 6 run | `run.rs`, `methods/` | the method runs under the cancellation select |
//! | 7 round trip | `round_trip.rs` | questions for the client (legacy requests, 2026-07-28 `input_required`) |
//! | 8 encode | `encode.rs` | the outcome is written straight to bytes |
//!
//! `prepare.rs` runs stages 2–4 (synchronous, in arrival order), `entry.rs`
//! is the public transport entry ([`McpServer::accept`]), `batch.rs` runs
//! batches and the simple forms ([`McpServer::handle_frame`] …).
//!
//! [`McpServer`] is the handle: it holds the storage and a `Pipeline`, a
//! few parts each owned by the stage that reads it — `Lifecycle`
//! (`lifecycle.rs`), `Registry` (`registry/`), `Features`
//! (`features.rs`), `Chains` (`mount_chains.rs`), `Extensions`
//! (`offered_extensions.rs`), `Handlers` (`round_trip.rs`). Its methods
//! are entry points that hand the pipeline on: the dispatcher
//! (`prepare.rs`, `run.rs`) is a method of `Pipeline`, and every method
//! below it a function of the parts it takes (`tests/layering.rs` checks
//! that none names the whole). `live.rs` holds the live catalog's public
//! edits.
//!
//! A `tools/call` has three named points where interceptors attach: the
//! tool *resolved* before its arguments are parsed, the *handled* typed
//! result, and the *final* outcome before encoding (see `methods/tools.rs`).

mod access;
mod admission;
mod batch;
mod build_error;
mod builder;
mod builder_ext;
mod classify;
mod decode;
mod encode;
mod entry;
mod fanout;
pub(crate) mod features;
mod inflight;
mod info;
pub mod intercept;
mod lifecycle;
mod live;
mod methods;
mod mount;
mod mount_chains;
mod offered_extensions;
mod outcome;
mod prepare;
pub(crate) mod registry;
pub(crate) mod request_facts;
mod result_guard;
mod round_trip;
pub(crate) mod route;
mod run;
mod skills;
mod task_engine;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::CallContext;
use crate::protocol::{
    CallToolResult, Era, ErrorObject, Implementation, RequestId, ServerCapabilities, Tool,
};
use crate::session::Session;
use decode::RequestParts;

use outcome::{Answer, Outcome};

#[cfg(feature = "http")]
pub(crate) use access::Denied as ScopeDenied;
#[cfg(feature = "http")]
pub(crate) use admission::{too_many_in_flight, InflightLimit, LimitGuard};
pub use admission::{Admission, Admit, Permit};
pub use builder::{BuildError, McpServerBuilder, DEFAULT_CLIENT_REQUEST_TIMEOUT};
pub use decode::{parse_payload, Frame, ParseError};
pub use encode::Response;
pub use entry::{Call, PendingCall, Started, Unpolled};
#[cfg(feature = "http")]
pub(crate) use features::SubscriptionsHandle;
pub use features::{CompletionRequest, DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION};

/// A transport-neutral MCP server. Cheap to clone (one `Arc`).
///
/// ```
/// use mcp_core::{McpServer, McpToolDef, InvokeContext};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let server = McpServer::builder()
///     .server_info("demo", "1.0.0")
///     .tool(McpToolDef::new("echo", "Echo the input back",
///         json!({"type": "object", "properties": {"text": {"type": "string"}}}),
///         |args, _ctx: InvokeContext| async move {
///             args.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_owned()
///         }))
///     .build()
///     .expect("valid server");
/// assert_eq!(server.list_tools().len(), 1);
/// let result = server.call_tool("echo", json!({"text": "hi"})).await.unwrap();
/// assert_eq!(result.text_content(), "hi");
/// # }
/// ```
#[derive(Clone)]
pub struct McpServer {
    pub(crate) inner: Arc<Inner>,
}

/// What a built server holds (shared by every clone).
pub(crate) struct Inner {
    /// What the request pipeline reads.
    pub(crate) pipeline: Pipeline,
    /// Where the server keeps its shared state (tasks, notices, sessions).
    pub(crate) storage: crate::storage::Storage,
}

/// The parts the request pipeline reads, each owned by the stage that
/// reads it. The dispatcher (`prepare.rs`, `run.rs`) is a method of the
/// whole, since it routes to every method; each method is a function of
/// the parts it takes.
pub(crate) struct Pipeline {
    /// Who the server is and what it offers (stage: lifecycle).
    pub(crate) lifecycle: lifecycle::Lifecycle,
    /// The tools, resources and prompts (stage: registry).
    pub(crate) registry: registry::Registry,
    /// Completion and resource subscriptions.
    pub(crate) features: features::Features,
    /// The interceptor chains (stage: run).
    pub(crate) chains: mount_chains::Chains,
    /// The tasks and skills extensions.
    pub(crate) extensions: offered_extensions::Extensions,
    /// What a handler's context is made from (stage: round trip).
    pub(crate) handlers: round_trip::Handlers,
    /// The session a call without one of its own is registered in.
    pub(crate) shared_session: Session,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("info", &self.inner.pipeline.lifecycle.info)
            .field(
                "tools",
                &self.inner.pipeline.registry.tools.snapshot().tools.len(),
            )
            .field(
                "resources",
                &self
                    .inner
                    .pipeline
                    .registry
                    .resources
                    .snapshot()
                    .resources
                    .len(),
            )
            .field(
                "templates",
                &self
                    .inner
                    .pipeline
                    .registry
                    .resources
                    .snapshot()
                    .templates
                    .len(),
            )
            .field(
                "prompts",
                &self
                    .inner
                    .pipeline
                    .registry
                    .prompts
                    .snapshot()
                    .prompts
                    .len(),
            )
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// What the request pipeline reads (every part but storage).
    #[inline]
    pub(crate) fn pipeline(&self) -> &Pipeline {
        &self.inner.pipeline
    }

    /// Starts building a server.
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder::default()
    }

    /// The implementation info `initialize` reports.
    pub fn info(&self) -> &Implementation {
        &self.inner.pipeline.lifecycle.info
    }

    /// The capabilities `initialize` and `server/discover` advertise, as
    /// sent: `tools` always, `resources` and `prompts` only when some are
    /// registered.
    pub fn capabilities(&self) -> &Value {
        &self.inner.pipeline.lifecycle.capabilities_json
    }

    /// The same capabilities, typed.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.pipeline.lifecycle.capabilities
    }

    /// Tells every subscriber of `uri` (a legacy `resources/subscribe`, or a
    /// 2026-07-28 listen naming it or a URI above it) that it changed.
    /// Returns how many subscribers of this process were notified; with a
    /// notification bus in its [`Storage`](crate::storage::Storage) the
    /// other replicas are told too (their subscribers are not counted).
    ///
    /// # Cancel safety
    /// Dropping the future may leave later subscribers, or the other
    /// replicas, unnotified.
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        let sent = self
            .inner
            .pipeline
            .features
            .subscriptions
            .notify_updated(uri)
            .await;
        if let Some(bus) = self.inner.storage.notices() {
            bus.publish(crate::storage::BusEvent::ResourceUpdated {
                uri: uri.to_owned(),
            })
            .await;
        }
        sent
    }

    /// Call after closing a [`Session`](crate::transport::Session) (a custom
    /// transport's connection ended): releases what the server kept for
    /// closed sessions (resource subscriptions hold their output channel).
    pub fn release_closed_sessions(&self) {
        self.inner.pipeline.features.subscriptions.forget_closed();
        // A closed session's list-change listener held its transport's
        // writer open (a stdio server did not exit at end of input).
        self.inner.pipeline.registry.list_listeners.forget_closed();
    }

    /// List-change listeners held (legacy sessions of a live catalog, and
    /// 2026-07-28 listens); for tests of the transports' bookkeeping.
    #[doc(hidden)]
    pub fn list_listener_count(&self) -> usize {
        self.inner.pipeline.registry.list_listeners.len()
    }

    /// Resource subscribers held (sessions with legacy subscriptions, and
    /// listens); for tests of the transports' bookkeeping.
    #[doc(hidden)]
    pub fn subscriber_count(&self) -> usize {
        self.inner.pipeline.features.subscriptions.len()
    }

    /// Every scope a tool, resource or prompt of this server declares,
    /// sorted, without repeats (what a resource server publishes as
    /// `scopes_supported`). A live catalog's tools count as they are now.
    pub fn declared_scopes(&self) -> Vec<String> {
        self.inner.pipeline.registry.declared_scopes()
    }

    /// Tells the listeners here, and the other replicas through the bus,
    /// that `kind`'s part changed; how many listeners here took it.
    pub(crate) async fn list_changed(&self, kind: registry::ListKind) -> usize {
        let bus = self.inner.storage.notices();
        self.inner.pipeline.registry.list_changed(kind, bus).await
    }

    /// The tool descriptors `tools/list` returns (before `visible`
    /// filtering), as the catalog holds them now.
    pub fn list_tools(&self) -> Vec<Tool> {
        let catalog = self.inner.pipeline.registry.tools.snapshot();
        catalog.tools.iter().map(|t| t.tool().clone()).collect()
    }

    /// Calls a tool without a transport, through the same pipeline as a
    /// `tools/call` on the wire (a legacy request with an empty
    /// [`CallContext`]): a tool that stops its call — a missing client
    /// capability, [`InvokeContext::fail`](crate::InvokeContext::fail) — returns the error the wire
    /// would carry.
    ///
    /// `args` must be a JSON object (or `null` for no arguments).
    ///
    /// # Errors
    /// `-32602 Unknown tool: <name>` for an unregistered name or non-object
    /// arguments; `-32603` with the panic message when the tool panics; the
    /// JSON-RPC error the tool ended its call with.
    ///
    /// # Cancel safety
    /// Dropping the future drops the call.
    pub async fn call_tool(&self, name: &str, args: Value) -> Result<CallToolResult, ErrorObject> {
        if !(args.is_object() || args.is_null()) {
            return Err(ErrorObject::invalid_params(
                "tools/call `arguments` must be an object",
            ));
        }
        let mut params = Map::with_capacity(2);
        params.insert("name".into(), Value::String(name.to_owned()));
        params.insert("arguments".into(), args);
        let parts = RequestParts {
            id: RequestId::Number(0),
            method: "tools/call".into(),
            params,
            claim: None,
            held: Default::default(),
        };
        let ctx = std::sync::Arc::new(CallContext::new());
        let (scope, params) =
            inflight::register(parts, Era::Legacy, &ctx, Session::new()).map_err(|(_, e)| e)?;
        match self
            .pipeline()
            .execute(&scope, params, Default::default())
            .await
        {
            Outcome::Answer(Answer::Tool(result)) => Ok(result),
            Outcome::Error(e) => Err(e),
            Outcome::NoReply => Err(ErrorObject::internal("the call was cancelled")),
            Outcome::Answer(_) | Outcome::InputRequired(_) => Err(ErrorObject::internal(
                "tools/call ended without a tool result",
            )),
        }
    }
}

impl McpServer {
    /// Where this server keeps the state it shares across calls and
    /// replicas (given to [`McpServerBuilder::storage`](crate::McpServerBuilder::storage)).
    /// A transport reads its legacy session store here.
    pub fn storage(&self) -> &crate::storage::Storage {
        &self.inner.storage
    }
}

/// What the HTTP transport reads of a server beyond the public entry: the
/// state keys its handlers declared (options a shared deployment cannot
/// serve are refused) and the tools' catalog (a 2026-07-28 request's
/// argument headers are checked against it).
#[cfg(feature = "http")]
impl McpServer {
    /// A legacy session initialized: it hears of changes to the live
    /// parts of the catalog (see `Registry::listen_for_list_changes`).
    pub(crate) fn listen_for_list_changes(
        &self,
        session: &Session,
        outbound: Option<&Arc<dyn crate::context::Outbound>>,
    ) {
        self.inner
            .pipeline
            .registry
            .listen_for_list_changes(session, outbound);
    }

    /// The state keys the server's handlers declared.
    pub(crate) fn state_keys(&self) -> &crate::request_state::StateKeys {
        &self.inner.pipeline.handlers.state_keys
    }

    /// The handle to this server's subscriptions a saved session keeps.
    pub(crate) fn subscriptions_handle(&self) -> SubscriptionsHandle {
        SubscriptionsHandle(Arc::downgrade(&self.inner))
    }

    /// Puts back a restored session's legacy subscriptions (past the
    /// per-session cap, the rest are dropped as a client's would be).
    pub(crate) fn restore_subscriptions(
        &self,
        session: &Session,
        outbound: &Arc<dyn crate::context::Outbound>,
        uris: &[String],
    ) {
        self.inner
            .pipeline
            .features
            .subscriptions
            .restore_legacy(session, outbound, uris);
    }

    /// The tools' catalog.
    pub(crate) fn tools(&self) -> &registry::Tools {
        &self.inner.pipeline.registry.tools
    }

    /// True when a tool, resource or prompt declares scopes (a transport
    /// checks requests only then).
    #[inline]
    pub(crate) fn has_scoped_items(&self) -> bool {
        self.inner.pipeline.registry.has_scoped_items()
    }

    /// The registry's scope check (`access.rs`) for a transport that
    /// refuses before dispatch (HTTP's 403), by method name; a method
    /// this server does not know names nothing.
    pub(crate) fn check_scopes_of(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
        name: Option<&str>,
        ext: Option<&crate::context::Extensions>,
    ) -> Result<(), ScopeDenied> {
        match route::by_name(method) {
            Some(route) => self
                .inner
                .pipeline
                .registry
                .check_named_scopes(route, params, name, ext),
            None => Ok(()),
        }
    }
}
