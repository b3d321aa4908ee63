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
mod methods;
mod mount;
mod mount_chains;
mod offered_extensions;
mod outcome;
mod prepare;
pub(crate) mod registry;
pub(crate) mod request_facts;
mod round_trip;
pub(crate) mod route;
mod run;
mod skills;
mod task_engine;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::context::state_map::StateMap;
use crate::context::CallContext;
use crate::protocol::{
    CacheHint, CallToolResult, Era, ErrorObject, Implementation, RequestId, ServerCapabilities,
    Tool,
};
use crate::request_state::StateKeys;
use crate::session::Session;
use decode::RequestParts;
use features::{Completer, Subscriptions};
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
    pub(crate) info: Implementation,
    pub(crate) instructions: Option<String>,
    /// The tools, fixed or live, with their precomputed listing.
    pub(crate) tools: registry::Tools,
    /// Who hears of changes to a live catalog.
    pub(crate) list_listeners: registry::ListListeners,
    /// The resources and templates, fixed or live, with their listings.
    pub(crate) resources: registry::Resources,
    /// The prompts, fixed or live, with their listing.
    pub(crate) prompts: registry::Prompts,
    pub(crate) capabilities: ServerCapabilities,
    /// The same, as `initialize` and `server/discover` send it.
    pub(crate) capabilities_json: Value,
    pub(crate) shared_session: Session,
    pub(crate) state: Arc<StateMap>,
    pub(crate) state_keys: StateKeys,
    /// The cache hint of `tools/list` (and of the skills listing) when it
    /// is the same for every caller (a per-caller listing is `private`).
    pub(crate) list_cache: CacheHint,
    /// The cache hint of `resources/list` and `resources/templates/list`,
    /// likewise.
    pub(crate) resource_list_cache: CacheHint,
    /// The cache hint of `prompts/list`, likewise.
    pub(crate) prompt_list_cache: CacheHint,
    pub(crate) discover_cache: CacheHint,
    pub(crate) server_info_json: Arc<Value>,
    /// The same, serialized once: written verbatim into typed results.
    pub(crate) server_info_raw: Arc<encode::ServerInfoRaw>,
    pub(crate) logging: bool,
    /// How long a client has to answer a server→client request (legacy).
    pub(crate) client_request_timeout: std::time::Duration,
    pub(crate) completer: Option<Completer>,
    pub(crate) resource_subscriptions: bool,
    pub(crate) subscriptions: Subscriptions,
    /// The server's interceptors, outermost first.
    pub(crate) interceptors: intercept::Chain,
    /// The tools that have interceptors of their own, and theirs.
    pub(crate) tool_chains: std::collections::HashMap<String, intercept::Chain>,
    /// The resources (by URI or template) and prompts (by name) that have
    /// interceptors of their own (a mounted server's), and theirs.
    pub(crate) entry_chains: mount_chains::EntryChains,
    /// The tasks extension, when offered.
    pub(crate) tasks: Option<Arc<task_engine::TaskEngine>>,
    /// The skills extension, when skills are published.
    pub(crate) skills: Option<Arc<skills::SkillCatalog>>,
    /// A `Metrics` interceptor is registered: open sessions are counted.
    #[cfg(feature = "metrics")]
    pub(crate) count_sessions: bool,
    /// The default call time limit of tools (also of tools added live).
    pub(crate) tool_timeout: Option<std::time::Duration>,
    /// The bus to the other replicas, when one was given.
    pub(crate) bus: Option<Arc<dyn crate::bus::NotificationBus>>,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("info", &self.inner.info)
            .field("tools", &self.inner.tools.snapshot().tools.len())
            .field(
                "resources",
                &self.inner.resources.snapshot().resources.len(),
            )
            .field(
                "templates",
                &self.inner.resources.snapshot().templates.len(),
            )
            .field("prompts", &self.inner.prompts.snapshot().prompts.len())
            .finish_non_exhaustive()
    }
}

impl McpServer {
    /// Starts building a server.
    pub fn builder() -> McpServerBuilder {
        McpServerBuilder::default()
    }

    /// The implementation info `initialize` reports.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The capabilities `initialize` and `server/discover` advertise, as
    /// sent: `tools` always, `resources` and `prompts` only when some are
    /// registered.
    pub fn capabilities(&self) -> &Value {
        &self.inner.capabilities_json
    }

    /// The same capabilities, typed.
    pub fn server_capabilities(&self) -> &ServerCapabilities {
        &self.inner.capabilities
    }

    /// Tells every subscriber of `uri` (a legacy `resources/subscribe`, or a
    /// 2026-07-28 listen naming it or a URI above it) that it changed.
    /// Returns how many subscribers of this process were notified; with a
    /// [`notification_bus`](crate::McpServerBuilder::notification_bus) the
    /// other replicas are told too (their subscribers are not counted).
    ///
    /// # Cancel safety
    /// Dropping the future may leave later subscribers, or the other
    /// replicas, unnotified.
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        let sent = self.inner.subscriptions.notify_updated(uri).await;
        if let Some(bus) = &self.inner.bus {
            bus.publish(crate::bus::BusEvent::ResourceUpdated {
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
        self.inner.subscriptions.forget_closed();
        // A closed session's list-change listener held its transport's
        // writer open (a stdio server did not exit at end of input).
        self.inner.list_listeners.forget_closed();
    }

    /// List-change listeners held (legacy sessions of a live catalog, and
    /// 2026-07-28 listens); for tests of the transports' bookkeeping.
    #[doc(hidden)]
    pub fn list_listener_count(&self) -> usize {
        self.inner.list_listeners.len()
    }

    /// Resource subscribers held (sessions with legacy subscriptions, and
    /// listens); for tests of the transports' bookkeeping.
    #[doc(hidden)]
    pub fn subscriber_count(&self) -> usize {
        self.inner.subscriptions.len()
    }

    /// The tool descriptors `tools/list` returns (before `visible`
    /// filtering), as the catalog holds them now.
    pub fn list_tools(&self) -> Vec<Tool> {
        let catalog = self.inner.tools.snapshot();
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
        match self.execute(&scope, params, Default::default()).await {
            Outcome::Answer(Answer::Tool(result)) => Ok(result),
            Outcome::Error(e) => Err(e),
            Outcome::NoReply => Err(ErrorObject::internal("the call was cancelled")),
            Outcome::Answer(_) | Outcome::InputRequired(_) => Err(ErrorObject::internal(
                "tools/call ended without a tool result",
            )),
        }
    }
}

/// What the HTTP transport reads of a server beyond the public entry: the
/// state keys its handlers declared (options a shared deployment cannot
/// serve are refused) and the tools' catalog (a 2026-07-28 request's
/// argument headers are checked against it).
#[cfg(feature = "http")]
impl McpServer {
    /// The state keys the server's handlers declared.
    pub(crate) fn state_keys(&self) -> &StateKeys {
        &self.inner.state_keys
    }

    /// The tools' catalog.
    pub(crate) fn tools(&self) -> &registry::Tools {
        &self.inner.tools
    }
}
