//! `resources/list`, `resources/templates/list` and `resources/read`.

use serde_json::{Map, Value};

use super::{listing, single, to_json};
use crate::context::{scopes_allowed, Extensions};
use crate::handler::resource::ResourceRequest;
use crate::panic::{catch_panic, panic_error};
use crate::protocol::{CacheHint, CacheScope, ErrorObject};
use crate::server::access::insufficient;
use crate::server::outcome::Stop;
use crate::server::registry::Registry;
use crate::server::request_facts::RequestFacts;
use crate::server::result_guard::kept;
use crate::server::round_trip::Invoke;
use crate::state::service::{StateService, ANONYMOUS};

/// `resources/list`.
pub(crate) fn list(
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    ext: &Extensions,
) -> Result<Value, ErrorObject> {
    let catalog = registry.resources.snapshot();
    let items = catalog.resources.iter();
    let items = items.filter(|r| scopes_allowed(ext, r.scopes()));
    let kind = ("resources", registry.resource_list_cache);
    listing(
        facts,
        params,
        kind,
        items.filter_map(|r| r.resource().map(to_json)),
    )
}

/// `resources/templates/list`.
pub(crate) fn templates(
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    ext: &Extensions,
) -> Result<Value, ErrorObject> {
    let catalog = registry.resources.snapshot();
    let items = catalog.templates.iter();
    let items = items.filter(|r| scopes_allowed(ext, r.scopes()));
    let items = items.filter_map(|r| r.resource_template().map(to_json));
    let kind = ("resourceTemplates", registry.resource_list_cache);
    listing(facts, params, kind, items)
}

/// The answer to a `resources/read` of a URI nothing is behind.
fn unknown(uri: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Unknown resource: {uri}"))
        .with_data(serde_json::json!({ "uri": uri }))
}

/// `resources/read`: a kept tool result (`mcp-result://`), a registered URI, else the first template it matches.
pub(crate) async fn read(
    registry: &Registry,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    params: Map<String, Value>,
    ext: Extensions,
) -> Result<Value, Stop> {
    let uri = match params.get("uri") {
        Some(Value::String(uri)) => uri.clone(),
        _ => {
            return Err(
                ErrorObject::invalid_params("resources/read requires a string `uri`").into(),
            )
        }
    };
    if kept::is_kept(&uri) {
        // A cut tool result's whole (`server/result_guard`), for its caller.
        let store = invoke.handlers.state.get::<StateService>();
        let principal = facts.ctx.principal.as_deref().unwrap_or(ANONYMOUS);
        let store = store.map(|s| &s.store);
        let mut result = kept::read(store, principal, &uri, || unknown(&uri)).await?;
        if let (true, Value::Object(map)) = (facts.is_modern(), &mut result) {
            CacheHint::new(0, CacheScope::Private).apply(map);
        }
        return Ok(result);
    }
    // The catalog version this read started with, even if a live catalog
    // changes while it runs.
    let catalog = registry.resources.snapshot();
    let (def, vars) = catalog.find(&uri).ok_or_else(|| unknown(&uri))?;
    if !scopes_allowed(&ext, def.scopes()) {
        return Err(insufficient(&format!("resource `{uri}`"), def.scopes()).into());
    }
    let round = invoke.round_trip(facts, &uri, &Map::new(), &params, true)?;
    let ctx = invoke.context(facts, &params, &round, ext)?;
    let cache = def.cache;
    let work = catch_panic(Box::pin(def.read(ResourceRequest { uri, vars }, ctx)));
    let contents = round.run(work).await?.map_err(panic_error)??;
    // An MCP Apps view's CSP, as the host will read it.
    if let Some(why) = crate::apps::contents_problem(&contents) {
        return Err(ErrorObject::internal(why).into());
    }
    let mut result = single("contents", to_json(&contents));
    if let (true, Value::Object(map)) = (facts.is_modern(), &mut result) {
        cache
            .unwrap_or(CacheHint::new(0, CacheScope::Private))
            .apply(map);
    }
    Ok(result)
}
