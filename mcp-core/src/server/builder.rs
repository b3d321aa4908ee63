//! [`McpServerBuilder`]: what a server serves (tools, resources, prompts,
//! optional features, state), checked once when it is built.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use super::build_error::BuildError;
use super::features::{completer, Completer, CompletionRequest, Subscriptions};
use super::registry::OrderedMap;
use super::{Inner, McpServer};
use crate::context::state_map::StateMap;
use crate::context::InvokeContext;
use crate::handler::prompt::McpPromptDef;
use crate::handler::resource::McpResourceDef;
use crate::handler::tool::McpToolDef;
use crate::protocol::{
    CacheHint, CacheScope, ErrorObject, Implementation, ListCapability, ResourcesCapability,
    ServerCapabilities,
};
use crate::request_state::StateKeys;
use crate::session::Session;

/// Default of [`McpServerBuilder::client_request_timeout`]: 5 minutes.
pub const DEFAULT_CLIENT_REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// Builds an [`McpServer`]; see [`McpServer::builder`].
#[derive(Default)]
#[must_use]
pub struct McpServerBuilder {
    info: Option<Implementation>,
    instructions: Option<String>,
    pub(super) tools: Vec<McpToolDef>,
    /// Profiles the tools must satisfy (checked by `build`).
    #[cfg(feature = "catalog")]
    profiles: Vec<crate::catalog::profile::Profile>,
    pub(super) resources: Vec<McpResourceDef>,
    pub(super) prompts: Vec<McpPromptDef>,
    pub(super) state: StateMap,
    /// The types in `state`, to check handlers' `required_state`.
    pub(super) state_types: std::collections::HashSet<std::any::TypeId>,
    state_keys: Option<StateKeys>,
    client_request_timeout: Option<std::time::Duration>,
    list_cache: Option<CacheHint>,
    discover_cache: Option<CacheHint>,
    logging: bool,
    completer: Option<Completer>,
    resource_subscriptions: bool,
    pub(super) interceptors: Vec<std::sync::Arc<dyn super::intercept::Interceptor>>,
    pub(super) tool_interceptors: Vec<(String, std::sync::Arc<dyn super::intercept::Interceptor>)>,
    /// A mounted server's interceptors, for its resources and prompts.
    pub(super) entry_interceptors: super::mount_chains::EntryInterceptors,
    /// A `Metrics` interceptor was registered.
    #[cfg(feature = "metrics")]
    count_sessions: bool,
    /// An error found while the builder was being filled, reported by `build`.
    pub(super) deferred: Option<BuildError>,
    /// The prefixes mounted so far, to refuse one that could collide with
    /// another.
    pub(super) mount_prefixes: Vec<String>,
    max_subscriptions_per_session: Option<usize>,
    live_tools: bool,
    /// Resources and prompts are live too.
    live_catalog: bool,
    tool_timeout: Option<std::time::Duration>,
    /// The result size limit (`None`: the default); off when `no_result_limit`.
    result_limit: Option<crate::handler::ResultLimit>,
    no_result_limit: bool,
    /// The extensions (tasks, skills) and their settings.
    pub(super) ext: super::offered_extensions::ExtensionConfig,
    /// Tool search, when on.
    tool_search: Option<crate::tool_search::ToolSearch>,
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("info", &self.info)
            .field("tools", &self.tools.len())
            .field("resources", &self.resources.len())
            .field("prompts", &self.prompts.len())
            .finish_non_exhaustive()
    }
}

impl McpServerBuilder {
    /// Adds an interceptor around every request's method (see
    /// [`intercept`](crate::intercept)). The first one added is the
    /// outermost.
    ///
    /// An `intercept::Metrics` interceptor (feature `metrics`) registered
    /// here also keeps the open sessions gauge.
    pub fn interceptor<I: super::intercept::Interceptor>(mut self, interceptor: I) -> Self {
        #[cfg(feature = "metrics")]
        {
            use std::any::TypeId;
            let metrics = TypeId::of::<super::intercept::Metrics>();
            let arc_metrics = TypeId::of::<Arc<super::intercept::Metrics>>();
            self.count_sessions |= [metrics, arc_metrics].contains(&TypeId::of::<I>());
        }
        self.interceptors.push(std::sync::Arc::new(interceptor));
        self
    }

    /// The largest tool result sent as it is, unless a tool has its own
    /// ([`McpToolDef::with_result_limit`]); default
    /// [`ResultLimit::DEFAULT`](crate::handler::ResultLimit::DEFAULT),
    /// 102,400 bytes. A result over it is cut (the whole kept for the
    /// caller to read back) or refused; see
    /// [`ResultLimit`](crate::handler::ResultLimit). Results of tools run
    /// as tasks are not guarded.
    pub fn result_limit(mut self, limit: crate::handler::ResultLimit) -> Self {
        self.result_limit = Some(limit);
        self.no_result_limit = false;
        self
    }

    /// Sends every tool result whole, whatever its size, except for tools
    /// with their own [`McpToolDef::with_result_limit`].
    pub fn no_result_limit(mut self) -> Self {
        self.no_result_limit = true;
        self
    }

    /// Fails [`build`](Self::build) with [`BuildError::ProfileIssues`] when
    /// a tool breaks `profile` (every issue listed, with its path and rule):
    /// the build-time form of
    /// [`assert_profile`](crate::catalog::profile::assert_profile).
    #[cfg(feature = "catalog")]
    #[cfg_attr(docsrs, doc(cfg(feature = "catalog")))]
    pub fn require_profile(mut self, profile: crate::catalog::profile::Profile) -> Self {
        self.profiles.push(profile);
        self
    }

    /// Lists the tools as `search_tools` and `call_tool` (and the tools
    /// `search` pins) instead of the whole catalog; every tool stays
    /// callable by name (see [`crate::tool_search`]).
    ///
    /// [`build`](Self::build) fails with
    /// [`BuildError::ToolSearchNameTaken`] when a tool is named
    /// `search_tools` or `call_tool`, and with
    /// [`BuildError::ToolSearchPinUnknown`] when a pinned name is no tool
    /// of a fixed catalog (a [live](Self::live_tools) one lists a pinned
    /// tool once it is added).
    pub fn tool_search(mut self, search: crate::tool_search::ToolSearch) -> Self {
        self.tool_search = Some(search);
        self
    }

    /// A time limit for every tool call, unless the tool has its own
    /// ([`McpToolDef::with_timeout`], `#[mcp_tool(timeout = "…")]`): past it
    /// the call ends with a tool error and its work is dropped. Tools added
    /// to a live catalog get it too.
    pub fn tool_timeout(mut self, limit: std::time::Duration) -> Self {
        self.tool_timeout = Some(limit);
        self
    }

    /// Makes the tool catalog live: tools can be added and removed while
    /// serving ([`McpServer::add_tool`], [`McpServer::remove_tool`]). The
    /// `tools` capability then advertises `listChanged: true`, legacy
    /// sessions get `notifications/tools/list_changed` after each change
    /// (as do 2026-07-28 `subscriptions/listen` requests that ask for
    /// `toolsListChanged`), and the 2026-07-28 `tools/list` cache hint
    /// defaults to `ttlMs: 0`. The listing is still serialized once per
    /// change, never per request. Tools with HTTP header parameters
    /// (`x-mcp-header`) are checked as they were when the HTTP service
    /// was created.
    pub fn live_tools(mut self) -> Self {
        self.live_tools = true;
        self
    }

    /// Makes the whole catalog live: tools as with
    /// [`live_tools`](Self::live_tools), and resources, resource templates
    /// and prompts ([`McpServer::add_resource`],
    /// [`McpServer::remove_resource`],
    /// [`McpServer::remove_resource_template`], [`McpServer::add_prompt`],
    /// [`McpServer::remove_prompt`]). The `resources` and `prompts`
    /// capabilities are then advertised (even while empty) with
    /// `listChanged: true`; legacy sessions get
    /// `notifications/resources/list_changed` and
    /// `notifications/prompts/list_changed` after each change (as do
    /// 2026-07-28 listens asking for `resourcesListChanged` or
    /// `promptsListChanged`); the 2026-07-28 listing cache hints default to
    /// `ttlMs: 0`. Each listing is serialized once per change.
    ///
    /// ```
    /// use mcp_core::McpServer;
    ///
    /// let server = McpServer::builder().live_catalog().build().expect("builds");
    /// let caps = server.capabilities();
    /// assert_eq!(caps["resources"]["listChanged"], true);
    /// assert_eq!(caps["prompts"]["listChanged"], true);
    /// assert_eq!(caps["tools"]["listChanged"], true);
    /// ```
    pub fn live_catalog(mut self) -> Self {
        self.live_tools = true;
        self.live_catalog = true;
        self
    }

    /// Adds an interceptor for the calls of one tool only. A tool's
    /// interceptors run inside the server's, the first added outermost;
    /// they too see the raw arguments before they are parsed. Naming a
    /// tool the server does not have is a [`BuildError::UnknownTool`].
    pub fn tool_interceptor(
        mut self,
        tool: impl Into<String>,
        interceptor: impl super::intercept::Interceptor,
    ) -> Self {
        self.tool_interceptors
            .push((tool.into(), std::sync::Arc::new(interceptor)));
        self
    }

    /// Registers application state of type `T` (one value per type; a later
    /// call replaces an earlier one). Handlers reach it with a `State<T>`
    /// argument or [`InvokeContext::state`].
    pub fn state<T: std::any::Any + Send + Sync>(mut self, value: T) -> Self {
        self.state.insert(value);
        self.state_types.insert(std::any::TypeId::of::<T>());
        self
    }

    /// Sets the name and version `initialize` reports. Without this (or
    /// [`implementation`](Self::implementation)) the server reports
    /// `mcp-core <version>` and [`build`](Self::build) warns once on stderr;
    /// [`server_info!`](crate::server_info) gives your crate's name and version.
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Some(Implementation::new(name, version));
        self
    }

    /// Sets the full implementation info (title, description, icons …).
    pub fn implementation(mut self, info: Implementation) -> Self {
        self.info = Some(info);
        self
    }

    /// Sets the instructions `initialize` returns to the client.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the keys that seal `requestState` of multi round-trip requests
    /// (2026-07-28). Default: a random key per process, which is right for
    /// one stdio process but not for several replicas behind one endpoint:
    /// give those the same configured keys. The first key seals; all open.
    pub fn request_state_keys(mut self, keys: StateKeys) -> Self {
        self.state_keys = Some(keys);
        self
    }

    /// Sets how long a legacy client has to answer each server→client
    /// request (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`) before the asking call gets a `-32603` error saying
    /// so (default: [`DEFAULT_CLIENT_REQUEST_TIMEOUT`], 5 minutes, long
    /// enough for a person to fill a form). A client that never answers
    /// then never holds a call, and its concurrency slot, for ever.
    pub fn client_request_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.client_request_timeout = Some(timeout);
        self
    }

    /// Sets the caching hint of `tools/list`, `prompts/list`,
    /// `resources/list` and `resources/templates/list` results (2026-07-28).
    /// Default: 60 s, `public`; `ttlMs: 0` for a listing that is live
    /// ([`live_tools`](Self::live_tools), [`live_catalog`](Self::live_catalog)).
    ///
    /// A listing that differs per caller — its part of the catalog, as it
    /// is when the request is served, has an entry that declares scopes or
    /// (tools) a tool with a `visible` hook — is always sent `private`
    /// whatever `scope` says here, so a shared cache never hands one
    /// caller's listing to another. A live catalog that gains such an
    /// entry turns its listing `private` from then on.
    pub fn list_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.list_cache = Some(CacheHint::new(ttl_ms, scope));
        self
    }

    /// Sets the caching hint of `server/discover` (default: 1 h, `public`).
    pub fn discover_cache(mut self, ttl_ms: u64, scope: CacheScope) -> Self {
        self.discover_cache = Some(CacheHint::new(ttl_ms, scope));
        self
    }

    /// Offers logging: advertises the `logging` capability, accepts
    /// `logging/setLevel` (legacy) and lets handlers send
    /// `notifications/message` with [`InvokeContext::log`] (filtered by the
    /// session's level, or by a 2026-07-28 request's `_meta` log level).
    pub fn logging(mut self) -> Self {
        self.logging = true;
        self
    }

    /// Offers argument completion (`completion/complete`, the `completions`
    /// capability) through `complete`, which returns candidate values (at
    /// most 100 are sent).
    pub fn completion<F, Fut>(mut self, complete: F) -> Self
    where
        F: Fn(CompletionRequest, InvokeContext) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Vec<String>, ErrorObject>> + Send + 'static,
    {
        self.completer = Some(completer(complete));
        self
    }

    /// Offers resource subscriptions (`resources.subscribe: true`):
    /// `resources/subscribe` / `resources/unsubscribe` on legacy sessions and
    /// `resourceSubscriptions` on 2026-07-28 `subscriptions/listen`. Send
    /// updates with [`McpServer::notify_resource_updated`].
    pub fn resource_subscriptions(mut self) -> Self {
        self.resource_subscriptions = true;
        self
    }

    /// Caps the URIs one session may subscribe to through
    /// `resources/subscribe` (default
    /// [`DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION`](crate::transport::DEFAULT_MAX_SUBSCRIPTIONS_PER_SESSION),
    /// 1,000; at least 1). One more is answered with a `-32600` error
    /// naming the cap; unsubscribing makes room.
    pub fn max_subscriptions_per_session(mut self, max: usize) -> Self {
        self.max_subscriptions_per_session = Some(max);
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: impl Into<McpToolDef>) -> Self {
        self.tools.push(tool.into());
        self
    }

    /// Adds several tools.
    pub fn tools(mut self, tools: impl IntoIterator<Item = McpToolDef>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a resource or resource template.
    pub fn resource(mut self, resource: impl Into<McpResourceDef>) -> Self {
        self.resources.push(resource.into());
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: impl Into<McpPromptDef>) -> Self {
        self.prompts.push(prompt.into());
        self
    }

    /// Builds the server. A server given no name
    /// ([`server_info`](Self::server_info), [`implementation`](Self::implementation))
    /// reports `mcp-core <version>`, and the first such build in a process
    /// writes one warning line on stderr naming the fix.
    ///
    /// # Errors
    /// A [`BuildError`] naming the first duplicate tool name, prompt name,
    /// resource URI or URI template, an unparsable URI template, a tool
    /// whose input schema is not an object, or a handler whose `State<T>`
    /// was never registered ([`BuildError::MissingState`]).
    pub fn build(mut self) -> Result<McpServer, BuildError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let missing = |handler: &dyn Fn() -> String, needs: &[(std::any::TypeId, &'static str)]| {
            needs
                .iter()
                .find(|(id, _)| !self.state_types.contains(id))
                .map_or(Ok(()), |(_, type_name)| {
                    Err(BuildError::MissingState {
                        handler: handler(),
                        type_name,
                    })
                })
        };
        for t in &mut self.tools {
            t.default_timeout(self.tool_timeout);
        }
        #[cfg(feature = "catalog")]
        for profile in &self.profiles {
            let tools: Vec<serde_json::Value> = self
                .tools
                .iter()
                .filter_map(|t| serde_json::to_value(t.tool()).ok())
                .collect();
            let server = self.info.as_ref().map_or("", |i| i.name.as_str());
            let issues = profile.check(&tools, server);
            if !issues.is_empty() {
                return Err(BuildError::ProfileIssues {
                    profile: profile.name().to_owned(),
                    issues: issues.iter().map(ToString::to_string).collect(),
                });
            }
        }
        for t in &self.tools {
            missing(&|| format!("tool `{}`", t.name()), &t.required_state)?;
            if let Some(found) = t.tool().input_schema.get("type") {
                if found != "object" {
                    return Err(BuildError::InputSchemaNotAnObject {
                        tool: t.name().to_owned(),
                        found: found.to_string(),
                    });
                }
            }
        }
        for r in &self.resources {
            missing(&|| format!("resource `{}`", r.key()), &r.required_state)?;
        }
        for p in &self.prompts {
            missing(&|| format!("prompt `{}`", p.name()), &p.required_state)?;
        }
        let tool_search = match self.tool_search.take() {
            Some(options) => Some(Box::new(super::methods::search::setup(
                options,
                &self.tools,
                self.live_tools,
            )?)),
            None => None,
        };
        let ext = std::mem::take(&mut self.ext).build(&self.tools, &self.resources)?;
        self.resources.extend(ext.resources);
        let mut tools = OrderedMap::default();
        for t in self.tools {
            let name = t.name().to_owned();
            if !tools.insert(name.clone(), t) {
                return Err(BuildError::DuplicateTool(name));
            }
        }
        let prompts = super::registry::PromptRegistry::build(self.prompts)?;
        let resources = super::registry::ResourceRegistry::build(self.resources)?;
        let live_catalog = self.live_catalog;
        let has_resources = live_catalog || !resources.is_empty();
        let has_prompts = live_catalog || !prompts.prompts.is_empty();
        let mut tool_chains: std::collections::HashMap<String, super::intercept::Chain> =
            std::collections::HashMap::new();
        for (name, interceptor) in self.tool_interceptors {
            if tools.get(&name).is_none() {
                return Err(BuildError::UnknownTool(name));
            }
            tool_chains.entry(name).or_default().push(interceptor);
        }
        let capabilities = ServerCapabilities {
            tools: Some(ListCapability {
                list_changed: self.live_tools,
            }),
            resources: has_resources.then_some(ResourcesCapability {
                subscribe: self.resource_subscriptions,
                list_changed: live_catalog,
            }),
            prompts: has_prompts.then_some(ListCapability {
                list_changed: live_catalog,
            }),
            logging: self.logging.then(Map::new),
            completions: self.completer.is_some().then(Map::new),
            extra: ext.capabilities,
        };
        // Our own type always serializes; `null` keeps this total.
        let capabilities_json = serde_json::to_value(&capabilities).unwrap_or(Value::Null);
        let catalog = super::registry::ToolRegistry::new(tools);
        // A live listing may change at any time: by default clients are
        // told not to cache it (they hear of changes instead). A listing
        // that depends on the caller is made `private` where it is built
        // per caller, from the catalog version of the request.
        let hint = |live: bool| {
            self.list_cache.unwrap_or(CacheHint::new(
                if live { 0 } else { 60_000 },
                CacheScope::Public,
            ))
        };
        let list_cache = hint(self.live_tools);
        let resource_list_cache = hint(live_catalog);
        let prompt_list_cache = hint(live_catalog);
        let tools = super::registry::Tools::new(catalog, self.live_tools);
        let resources = super::registry::Resources::new(resources, live_catalog);
        let prompts = super::registry::Prompts::new(prompts, live_catalog);
        let entry_chains = self.entry_interceptors.chains();
        // None set: the framework's name, and a warning naming the fix.
        let info = self.info.unwrap_or_else(super::info::unnamed);
        let server_info_json = Arc::new(serde_json::to_value(&info).unwrap_or(Value::Null));
        let server_info_raw = Arc::new(super::encode::ServerInfoRaw::new(&server_info_json));
        // Per-principal state (`crate::state`): the store (the storage's,
        // else this server's own memory), the handle key, the bounds.
        let state_keys = self.state_keys.unwrap_or_default();
        let mut state = self.state;
        state.insert(crate::state::service::StateService::new(
            &ext.storage,
            &state_keys,
            ext.state_limits,
        ));
        let server = McpServer {
            inner: Arc::new(Inner {
                pipeline: super::Pipeline {
                    lifecycle: super::lifecycle::Lifecycle {
                        info,
                        instructions: self.instructions,
                        capabilities,
                        capabilities_json,
                        server_info_json,
                        server_info_raw,
                        discover_cache: self
                            .discover_cache
                            .unwrap_or(CacheHint::new(3_600_000, CacheScope::Public)),
                        logging: self.logging,
                        client_request_timeout: self
                            .client_request_timeout
                            .unwrap_or(DEFAULT_CLIENT_REQUEST_TIMEOUT),
                    },
                    registry: super::registry::Registry {
                        tools,
                        list_listeners: super::registry::ListListeners::default(),
                        resources,
                        prompts,
                        list_cache,
                        resource_list_cache,
                        prompt_list_cache,
                        tool_timeout: self.tool_timeout,
                        tool_search,
                        result_limit: (!self.no_result_limit)
                            .then(|| self.result_limit.unwrap_or_default()),
                        #[cfg(feature = "metrics")]
                        count_sessions: self.count_sessions,
                    },
                    features: super::features::Features {
                        completer: self.completer,
                        resource_subscriptions: self.resource_subscriptions && has_resources,
                        subscriptions: self
                            .max_subscriptions_per_session
                            .map_or_else(Subscriptions::default, Subscriptions::new),
                    },
                    chains: super::mount_chains::Chains {
                        interceptors: super::intercept::Chain::new(self.interceptors),
                        tool_chains,
                        entry_chains,
                    },
                    extensions: super::offered_extensions::Extensions {
                        tasks: ext.tasks,
                        skills: ext.skills,
                    },
                    handlers: super::round_trip::Handlers {
                        state: Arc::new(state),
                        state_keys,
                    },
                    shared_session: Session::new(),
                },
                storage: ext.storage,
            }),
        };
        super::fanout::attach(&server);
        Ok(server)
    }
}
