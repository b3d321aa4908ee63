//! Stage 6, run: a registered request is routed and its handler runs under
//! the cancellation select; the outcome is made into its reply.

use serde_json::{Map, Value};

use super::decode::Held;
use super::encode::{Body, Reply};
use super::intercept::{LocalBoxed, Method, Operation, Request};
use super::methods;
use super::outcome::{Answer, Listing, Outcome, Stop, ToolListing};
use super::request_facts::RequestFacts;
use super::round_trip::Invoke;
use super::route::{route, Route};
use super::Pipeline;
use crate::cancel::CancelToken;
use crate::context::Extensions;
use crate::protocol::{Era, ErrorObject};

/// A request whose id is registered in its session, ready to run.
pub(crate) struct Prepared {
    pub(crate) scope: RequestFacts,
    pub(crate) params: Map<String, Value>,
    /// The members of `params` decoding held apart.
    pub(crate) held: Held,
}

impl Pipeline {
    /// Runs a prepared request to its reply. `None` when it was cancelled
    /// or ended without one (no reply is sent).
    pub(crate) async fn run_prepared(&self, call: Prepared) -> Option<Reply> {
        // Fields used in place, never moved to locals of their own: the
        // future holds `call` once (a boxed call's size decides whether
        // the allocator serves it from its fast per-thread cache).
        let outcome = self.execute(&call.scope, call.params, call.held).await;
        self.conclude(call.scope, outcome)
    }

    /// The reply of a request whose method ran, its id unregistered first.
    pub(crate) fn conclude(&self, scope: RequestFacts, outcome: Outcome) -> Option<Reply> {
        let RequestFacts { id, era, guard, .. } = scope;
        // Unregistered before the reply leaves: a client may reuse the id
        // as soon as it has the answer.
        drop(guard);
        let modern = matches!(era, crate::protocol::Era::Modern(_));
        self.finish(id, modern, outcome)
    }

    /// Runs the request's method under the cancellation select: the call's
    /// own token (`notifications/cancelled`) and the transport's signal
    /// (a client that went away). A cancelled call has no outcome to send.
    pub(crate) async fn execute(
        &self,
        scope: &RequestFacts,
        params: Map<String, Value>,
        held: Held,
    ) -> Outcome {
        let token = scope.token();
        let external = scope.ctx.signal.as_ref();
        if external.is_some_and(CancelToken::is_cancelled) {
            token.cancel();
            return Outcome::NoReply;
        }
        let work = self.dispatch(scope, params, held);
        // The work is polled first: a call that finishes at once never
        // registers a waiter on either cancellation signal. One cancelled
        // by the time it finished still gets no reply.
        let result = tokio::select! {
            biased;
            r = work => (!token.is_cancelled()
                && !external.is_some_and(CancelToken::is_cancelled))
            .then_some(r),
            () = token.cancelled() => None,
            // The token is cancelled inside the waiting future, before the
            // select drops the handler, so cleanup code sees is_cancelled().
            () = async {
                wait_external(external).await;
                token.cancel();
            } => None,
        };
        // A match, not `map_or`: no `NoReply` is made only to be dropped.
        match result {
            Some(result) => Outcome::from(result),
            None => Outcome::NoReply,
        }
    }

    /// Routes the request and runs its method, through the interceptors
    /// when any of them sees its operation.
    async fn dispatch(
        &self,
        scope: &RequestFacts,
        mut params: Map<String, Value>,
        mut held: Held,
    ) -> Result<Answer, Stop> {
        let chain = &self.chains.interceptors;
        let extensions = scope.ctx.extensions.clone();
        let route = match (&scope.era, &*scope.method) {
            // Answered before registration unless interceptors see them.
            (Era::Legacy, "initialize") => Route::Initialize,
            (Era::Modern(_), "server/discover") => Route::Discover,
            (era, method) => match route(
                &self.registry,
                &self.lifecycle,
                &self.features,
                &self.extensions,
                method,
                era,
            ) {
                Ok(route) => route,
                // A kept tool result is readable on a server with no
                // resources (`server/result_guard`); nothing else is.
                Err(e) => super::result_guard::kept::route(method, &params).ok_or(e)?,
            },
        };
        // Tool search: a `call_tool` becomes the `tools/call` it names,
        // here, where every `tools/call` enters, before any interceptor.
        if self.registry.tool_search.is_some() && route == Route::ToolsCall {
            methods::search::unwrap_call(&self.registry, &mut params, &mut held)?;
        }
        if !chain.wants(Operation::of(route)) {
            // Only a tool reads what decoding held apart, and only where no
            // interceptor can read or change it as JSON.
            // Each method's future boxed, so that the call's own future
            // (boxed whole by a transport) stays small.
            if route == Route::ToolsCall {
                return Box::pin(self.tools_call(scope, params, held, extensions, false)).await;
            }
            held.restore(&mut params);
            return Box::pin(self.run_method(scope, route, params, extensions)).await;
        }
        held.restore(&mut params);
        let req = Request {
            scope,
            route,
            params,
            extensions,
        };
        Box::pin(chain.run(req, &ServerMethod(self))).await.into()
    }

    /// Runs a routed method (the end of the interceptor chain).
    pub(crate) async fn run_method(
        &self,
        scope: &RequestFacts,
        route: Route,
        params: Map<String, Value>,
        ext: Extensions,
    ) -> Result<Answer, Stop> {
        // Every method that names a tool, resource or prompt passes here,
        // after the interceptors (which may have changed what it names);
        // `tools_call` checks a tool's itself.
        if route != Route::ToolsCall {
            self.registry
                .check_named_scopes(route, Some(&params), None, Some(&ext))
                .map_err(ErrorObject::from)?;
        }
        let json = match route {
            Route::ToolsCall => {
                return self
                    .tools_call(scope, params, Held::default(), ext, false)
                    .await;
            }
            Route::ToolsList => match &self.registry.tools.snapshot().listing {
                Some(listing) if self.registry.tool_search.is_none() => {
                    methods::check_cursor(&params)?;
                    return Ok(Answer::ToolListing(ToolListing(std::sync::Arc::clone(
                        listing,
                    ))));
                }
                // Per caller, or the search tools' listing.
                _ => methods::tools::list(&self.registry, scope, &params, &ext)?,
            },
            Route::ResourcesList | Route::ResourceTemplatesList | Route::PromptsList => {
                if let Some(listing) = self.prebuilt_listing(route) {
                    methods::check_cursor(&params)?;
                    return Ok(Answer::Listing(listing));
                }
                match route {
                    Route::ResourcesList => {
                        methods::resources::list(&self.registry, scope, &params, &ext)?
                    }
                    Route::PromptsList => {
                        methods::prompts::list(&self.registry, scope, &params, &ext)?
                    }
                    _ => methods::resources::templates(&self.registry, scope, &params, &ext)?,
                }
            }
            Route::ResourcesRead | Route::PromptsGet => {
                // A mounted server's own interceptors for the entry, if any
                // (boxed: their state stays out of every other request's
                // future).
                let chains = &self.chains.entry_chains;
                let (params, ext) = if chains.is_empty() {
                    (params, ext)
                } else {
                    match Box::pin(super::mount_chains::run_entry_chain(
                        chains,
                        &self.registry,
                        self.invoke(),
                        scope,
                        route,
                        params,
                        ext,
                    ))
                    .await
                    {
                        Ok(answer) => return answer,
                        Err(unchanged) => unchanged,
                    }
                };
                if route == Route::ResourcesRead {
                    methods::resources::read(&self.registry, self.invoke(), scope, params, ext)
                        .await?
                } else {
                    methods::prompts::get(&self.registry, self.invoke(), scope, params, ext).await?
                }
            }
            Route::LoggingSetLevel => methods::features::set_level(scope, &params)?,
            Route::CompletionComplete => {
                methods::features::complete(&self.features, self.invoke(), scope, &params, ext)
                    .await?
            }
            Route::ResourcesSubscribe => {
                methods::features::subscribe(&self.features, scope, &params, true)?
            }
            Route::ResourcesUnsubscribe => {
                methods::features::subscribe(&self.features, scope, &params, false)?
            }
            Route::SubscriptionsListen => {
                methods::listen::listen(
                    &self.features,
                    &self.registry,
                    self.extensions.tasks.as_ref(),
                    scope,
                    &params,
                )
                .await?
            }
            Route::SkillsList => super::skills::list(
                self.extensions.skills.as_deref(),
                &self.registry,
                scope,
                &params,
            )?,
            Route::SkillsGet => super::skills::get(
                self.extensions.skills.as_deref(),
                &self.registry,
                scope,
                &params,
            )?,
            Route::DirectoryRead => super::skills::directory_read(
                self.extensions.skills.as_deref(),
                &self.registry,
                scope,
                &params,
            )?,
            Route::TasksGet | Route::TasksUpdate | Route::TasksCancel => {
                let Some(engine) = &self.extensions.tasks else {
                    return Err(ErrorObject::method_not_found(&scope.method).into());
                };
                // Boxed: their state stays out of every other request's future.
                let work: std::pin::Pin<
                    Box<dyn std::future::Future<Output = Result<Value, ErrorObject>> + Send + '_>,
                > = match route {
                    Route::TasksGet => {
                        Box::pin(super::task_engine::methods::get(engine, scope, &params))
                    }
                    Route::TasksUpdate => {
                        Box::pin(super::task_engine::methods::update(engine, scope, &params))
                    }
                    _ => Box::pin(super::task_engine::methods::cancel(engine, scope, &params)),
                };
                work.await?
            }
            Route::Initialize | Route::Discover => {
                let answer =
                    self.lifecycle
                        .answer(&scope.era, &scope.method, &params, &scope.session);
                if route == Route::Initialize && answer.as_ref().is_some_and(Result::is_ok) {
                    self.registry
                        .listen_for_list_changes(&scope.session, scope.ctx.outbound.as_ref());
                }
                return match answer {
                    Some(result) => Ok(Answer::Json(result?)),
                    None => Err(ErrorObject::method_not_found(&scope.method).into()),
                };
            }
        };
        self.lifecycle.json_answer(scope, Ok(json))
    }

    /// `tools/call`, entered here only: from the dispatcher's short way
    /// (no server interceptor for `tools/call`: `held` may hold the name and arguments
    /// decoding kept apart), from the end of the server's interceptors, and
    /// (`chained`) from the end of the tool's own interceptors. Checks the
    /// scopes the call names and runs the tool's own interceptors when it
    /// has any (both done once, before `chained`), then the tool.
    pub(crate) async fn tools_call(
        &self,
        facts: &RequestFacts,
        mut params: Map<String, Value>,
        held: Held,
        ext: Extensions,
        chained: bool,
    ) -> Result<Answer, Stop> {
        if !chained {
            let route = Route::ToolsCall;
            self.registry
                .check_named_scopes(route, Some(&params), held.name.as_deref(), Some(&ext))
                .map_err(ErrorObject::from)?;
            let chains = &self.chains.tool_chains;
            let name = held
                .name
                .as_deref()
                .or_else(|| params.get("name").and_then(Value::as_str));
            let chain = name.and_then(|name| chains.get(name));
            if let Some(chain) = chain.filter(|chain| chain.wants(Operation::CallTool)) {
                // The tool's interceptors read and may change its params as JSON.
                held.restore(&mut params);
                let req = Request {
                    scope: facts,
                    route,
                    params,
                    extensions: ext,
                };
                // Boxed: a chain's state stays out of every other call's future.
                return Box::pin(chain.run(req, &ToolMethod(self))).await.into();
            }
        }
        let tasks = self.extensions.tasks.as_ref();
        methods::tools::call(
            &self.registry,
            tasks,
            self.invoke(),
            facts,
            params,
            held,
            ext,
        )
        .await
    }

    /// The parts a method that runs a handler reads to set its call up.
    #[inline]
    pub(crate) fn invoke(&self) -> Invoke<'_> {
        Invoke {
            lifecycle: &self.lifecycle,
            handlers: &self.handlers,
        }
    }

    /// The listing of a resources or prompts listing route serialized for
    /// the current catalog version, when it does not depend on the caller.
    fn prebuilt_listing(&self, route: Route) -> Option<Listing> {
        let inner = self;
        let (key, items, cache) = match route {
            Route::PromptsList => (
                "prompts",
                inner.registry.prompts.snapshot().listing.clone(),
                inner.registry.prompt_list_cache,
            ),
            Route::ResourcesList => (
                "resources",
                inner.registry.resources.snapshot().listing.clone(),
                inner.registry.resource_list_cache,
            ),
            _ => (
                "resourceTemplates",
                inner
                    .registry
                    .resources
                    .snapshot()
                    .templates_listing
                    .clone(),
                inner.registry.resource_list_cache,
            ),
        };
        Some(Listing {
            key,
            items: items?,
            cache,
        })
    }

    /// The last point a request's outcome can be seen before it is written:
    /// the outcome becomes the reply (2026-07-28 results carry the
    /// server's info and cache hints, written while encoding).
    #[inline]
    pub(crate) fn finish(
        &self,
        id: crate::protocol::RequestId,
        modern: bool,
        outcome: Outcome,
    ) -> Option<Reply> {
        let inner = self;
        let body = match outcome {
            Outcome::Answer(Answer::Json(value)) => Body::Json(value),
            Outcome::Answer(Answer::ToolListing(ToolListing(items))) => Body::Listing {
                key: "tools",
                items,
                modern: modern.then(|| {
                    (
                        std::sync::Arc::clone(&inner.lifecycle.server_info_raw),
                        inner.registry.list_cache,
                    )
                }),
            },
            Outcome::Answer(Answer::Listing(Listing { key, items, cache })) => Body::Listing {
                key,
                items,
                modern: modern.then(|| {
                    (
                        std::sync::Arc::clone(&inner.lifecycle.server_info_raw),
                        cache,
                    )
                }),
            },
            Outcome::Answer(Answer::Tool(result)) => Body::Tool {
                result,
                modern: modern.then(|| std::sync::Arc::clone(&inner.lifecycle.server_info_raw)),
            },
            Outcome::InputRequired(result) => Body::Json(Value::Object(result)),
            Outcome::Error(e) => Body::Error(e),
            Outcome::NoReply => return None,
        };
        Some(Reply { id: Some(id), body })
    }
}

/// The server's methods as the end of its interceptor chain.
struct ServerMethod<'s>(&'s Pipeline);

impl Method for ServerMethod<'_> {
    fn call<'a>(&'a self, req: Request<'a>) -> LocalBoxed<'a> {
        Box::pin(async move {
            let Request {
                scope,
                route,
                params,
                extensions,
            } = req;
            self.0
                .run_method(scope, route, params, extensions)
                .await
                .into()
        })
    }
}

/// A tool's call as the end of that tool's own interceptors.
struct ToolMethod<'s>(&'s Pipeline);

impl Method for ToolMethod<'_> {
    fn call<'a>(&'a self, req: Request<'a>) -> LocalBoxed<'a> {
        Box::pin(async move {
            let Request {
                scope,
                params,
                extensions,
                ..
            } = req;
            self.0
                .tools_call(scope, params, Held::default(), extensions, true)
                .await
                .into()
        })
    }
}

impl From<Outcome> for Result<Answer, Stop> {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Answer(answer) => Ok(answer),
            Outcome::InputRequired(result) => Err(Stop::InputRequired(result)),
            Outcome::Error(e) => Err(Stop::Error(e)),
            Outcome::NoReply => Err(Stop::NoReply),
        }
    }
}

async fn wait_external(signal: Option<&CancelToken>) {
    match signal {
        Some(s) => s.cancelled().await,
        None => std::future::pending().await,
    }
}
