//! `tools/list` and `tools/call`.
//!
//! A `tools/call` passes three points where the interceptors of a later
//! release attach, named here so they stay put:
//! 1. **resolved** — the tool is known by name, its arguments not yet
//!    parsed or checked ([`resolve`]);
//! 2. **handled** — the handler returned its typed [`CallToolResult`]
//!    (the end of [`call`]);
//! 3. **final** — the outcome is settled, just before it is encoded
//!    (`Pipeline::finish`, in `server/run.rs`).

use serde_json::{Map, Value};

use super::{listing, to_json, visible};
use crate::context::{scopes_allowed, Extensions, InvokeContext};
use crate::handler::tool::McpToolDef;
use crate::panic::{catch_panic, panic_error};
use crate::protocol::CallToolResult;
use crate::protocol::ErrorObject;
use crate::server::access::insufficient;
use crate::server::decode::Held;
use crate::server::outcome::{Answer, Stop};
use crate::server::registry::Registry;
use crate::server::registry::ToolRegistry;
use crate::server::request_facts::RequestFacts;
use crate::server::result_guard;
use crate::server::round_trip::progress_token;
use crate::server::round_trip::Invoke;
use crate::server::task_engine;
use crate::server::task_engine::TaskEngine;
use crate::state::service::{StateService, ANONYMOUS};
use crate::tasks::TaskSupport;

/// `tools/list` for a server whose listing depends on the caller (a tool
/// with a `visible` hook); otherwise the listing serialized at build time
/// is sent as it is.
pub(crate) fn list(
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    ext: &Extensions,
) -> Result<Value, ErrorObject> {
    let catalog = registry.tools.snapshot();
    let kind = ("tools", registry.list_cache);
    if let Some(searcher) = &registry.tool_search {
        let tools = super::search::listed(searcher, &catalog, facts, ext);
        return listing(facts, params, kind, tools);
    }
    let tools = visible(&catalog, facts, ext);
    listing(facts, params, kind, tools.map(|t| to_json(t.tool())))
}

/// Why `tools/call` names no tool of the catalog.
pub(crate) enum Unresolved {
    /// No tool has this name.
    Unknown(String),
    /// A malformed call.
    Invalid(ErrorObject),
}

impl From<ErrorObject> for Unresolved {
    fn from(e: ErrorObject) -> Self {
        Self::Invalid(e)
    }
}

/// Point 1: the tool named by `tools/call`, and its arguments object (not
/// parsed into the tool's types yet).
#[inline]
pub(crate) fn resolve<'a>(
    catalog: &'a ToolRegistry,
    params: &mut Map<String, Value>,
    held: Option<String>,
) -> Result<(String, &'a McpToolDef, Map<String, Value>), Unresolved> {
    let name = match held.map(Value::String).or_else(|| params.remove("name")) {
        Some(Value::String(name)) => name,
        _ => return Err(ErrorObject::invalid_params("tools/call requires a string `name`").into()),
    };
    let Some(tool) = catalog.tools.get(&name) else {
        return Err(Unresolved::Unknown(name));
    };
    let args = arguments(params)?;
    Ok((name, tool, args))
}

/// The call's `arguments` object, taken out of `params`.
fn arguments(params: &mut Map<String, Value>) -> Result<Map<String, Value>, ErrorObject> {
    match params.remove("arguments") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(args)) => Ok(args),
        Some(_) => Err(ErrorObject::invalid_params(
            "tools/call `arguments` must be an object",
        )),
    }
}

/// Under tool search, a call of `search_tools`: answered by the search,
/// in `catalog` (the version the call started with), before any tool of
/// the catalog is looked up, so no tool can stand in for it. `None` for
/// any other call.
fn searched(
    registry: &Registry,
    catalog: &ToolRegistry,
    facts: &RequestFacts,
    params: &mut Map<String, Value>,
    held: &Held,
    ext: &Extensions,
) -> Option<Result<Answer, Stop>> {
    let searcher = registry.tool_search.as_deref()?;
    let name = held
        .name
        .as_deref()
        .or_else(|| params.get("name").and_then(Value::as_str));
    if name != Some(crate::tool_search::SEARCH_TOOLS) {
        return None;
    }
    Some(
        arguments(params)
            .map_err(Stop::from)
            .map(|args| Answer::Tool(super::search::search(searcher, catalog, facts, args, ext))),
    )
}

/// `tools/call`: the result stays typed until it is written. A tool with
/// task support may be run as a task instead (see `server/task_engine`).
///
/// `held`: what decoding held apart from `params` (then not in it).
pub(crate) async fn call(
    registry: &Registry,
    tasks: Option<&std::sync::Arc<TaskEngine>>,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    mut params: Map<String, Value>,
    held: Held,
    ext: Extensions,
) -> Result<Answer, Stop> {
    // The catalog version this call started with, even if a live
    // catalog changes while it runs.
    let catalog = registry.tools.snapshot();
    if let Some(answer) = searched(registry, &catalog, facts, &mut params, &held, &ext) {
        return answer;
    }
    let (name, tool, args) = match resolve(&catalog, &mut params, held.name) {
        Ok(found) => found,
        Err(Unresolved::Invalid(e)) => return Err(e.into()),
        Err(Unresolved::Unknown(name)) => {
            return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")).into());
        }
    };
    if !scopes_allowed(&ext, tool.scopes()) {
        return Err(insufficient(&format!("tool `{name}`"), tool.scopes()).into());
    }
    // Handle arguments (`crate::state::Handle`): checked before the tool
    // runs, for the caller's principal; a refused one is the result.
    if !tool.handle_args().is_empty() {
        if let Some(service) = invoke
            .handlers
            .state
            .get::<crate::state::service::StateService>()
        {
            let principal = facts.ctx.principal.as_deref();
            let principal = principal.unwrap_or(crate::state::service::ANONYMOUS);
            // Boxed: the lookup's state stays out of every other call's future.
            let check = Box::pin(service.check_args(principal, tool.handle_args(), &args));
            if let Err(e) = check.await {
                return Ok(Answer::Tool(e.into_result()));
            }
        }
    }
    // A retry of a call that asked the client something.
    let resumed = params.contains_key("requestState") || params.contains_key("inputResponses");
    if tool.task_support() != TaskSupport::Forbidden {
        if let Some(engine) = tasks {
            if task_engine::declared(&facts.era) {
                let call = (name, tool, args);
                // Boxed: the task path's state stays out of every other
                // call's future.
                return Box::pin(task_engine::spawn::call(
                    invoke, engine, facts, call, params, ext,
                ))
                .await;
            }
            if tool.task_support() == TaskSupport::Required {
                return Err(task_engine::missing_extension().into());
            }
        }
    }
    // A handler that cannot reach its context (a macro tool with no
    // context or injected argument) needs no round trip and no context:
    // only what a context would refuse is checked.
    if tool.is_context_free() && !resumed {
        if facts.ctx.progress.is_none() && facts.ctx.outbound.is_some() {
            progress_token(&params)?;
        }
        let ctx = InvokeContext::unreachable(facts.token().clone());
        let work = catch_panic(tool.invoke(args, ctx));
        let result = bounded(&name, tool.timeout(), async { Ok(work.await) }).await?;
        let result = result.map_err(panic_error)?;
        return Ok(Answer::Tool(
            guard(registry, invoke, facts, tool, &name, result).await,
        ));
    }
    let round = invoke.round_trip(facts, &name, &args, &params, tool.may_ask())?;
    let ctx = invoke.context(facts, &params, &round, ext)?;
    let work = catch_panic(tool.invoke(args, ctx));
    // Point 2: the handler's typed result (or its panic, as -32603).
    let result = bounded(&name, tool.timeout(), round.run(work)).await?;
    let result = result.map_err(panic_error)?;
    Ok(Answer::Tool(
        guard(registry, invoke, facts, tool, &name, result).await,
    ))
}

/// The result size guard (`server/result_guard`): a result surely within
/// its tool's limit passes after one bound check; any other is measured,
/// then cut (its whole kept for the caller) or refused.
#[inline]
async fn guard(
    registry: &Registry,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    tool: &McpToolDef,
    name: &str,
    result: CallToolResult,
) -> CallToolResult {
    match tool.result_limit().resolve(registry.result_limit) {
        Some(limit) if !result_guard::surely_within(&result, &limit) => {
            let state = invoke.handlers.state.get::<StateService>();
            let principal = facts.ctx.principal.as_deref().unwrap_or(ANONYMOUS);
            // Boxed: the guard's state stays out of every other call's future.
            let store = state.map(|s| &s.store);
            // `resource_link` blocks exist from 2025-06-18 on; older
            // clients, and those with no negotiated revision (taken as
            // 2025-03-26), read the URI in the note.
            let links = facts.is_modern()
                || facts.session.client().is_some_and(|c| {
                    crate::protocol::revision_at_least(c.protocol_version, "2025-06-18")
                });
            let enforce = result_guard::enforce(result, limit, name, store, principal, links);
            Box::pin(enforce).await
        }
        _ => result,
    }
}

/// A tool's run within its time limit, if it has one (past it, the
/// result says so).
async fn bounded<T>(
    name: &str,
    limit: Option<std::time::Duration>,
    run: impl std::future::Future<Output = Result<Result<CallToolResult, T>, Stop>>,
) -> Result<Result<CallToolResult, T>, Stop> {
    match limit {
        None => run.await,
        // Boxed: the timer stays out of the futures of untimed calls.
        Some(limit) => match Box::pin(tokio::time::timeout(limit, run)).await {
            Ok(result) => result,
            Err(_) => Ok(Ok(CallToolResult::error(format!(
                "`{name}` timed out after {limit:?}"
            )))),
        },
    }
}
