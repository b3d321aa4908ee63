//! The optional features' methods: `logging/setLevel`,
//! `completion/complete`, `resources/subscribe` and `resources/unsubscribe`.

use crate::server::round_trip::Invoke;
use serde_json::{Map, Value};

use crate::context::Extensions;
use crate::panic::{catch_panic, panic_error};
use crate::protocol::{ErrorObject, LoggingLevel};
use crate::server::features::{completion_request, completion_result, Features};
use crate::server::outcome::Stop;
use crate::server::request_facts::RequestFacts;

/// `logging/setLevel` (legacy): the session's minimum level.
pub(crate) fn set_level(
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let level = params
        .get("level")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let level = level
        .parse::<LoggingLevel>()
        .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
    facts.session.set_log_level(level);
    Ok(Value::Object(Map::new()))
}

/// `completion/complete`, answered by the server's completer.
pub(crate) async fn complete(
    features: &Features,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    ext: Extensions,
) -> Result<Value, Stop> {
    let request = completion_request(params)?;
    let Some(complete) = &features.completer else {
        return Err(ErrorObject::method_not_found(&facts.method).into());
    };
    let round = invoke.no_round_trip(facts);
    let ctx = invoke.context(facts, params, &round, ext)?;
    let work = catch_panic(complete(request, ctx));
    let values = round.run(work).await?.map_err(panic_error)??;
    Ok(completion_result(values))
}

/// `resources/subscribe` (`on`) and `resources/unsubscribe` (legacy).
pub(crate) fn subscribe(
    features: &Features,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    on: bool,
) -> Result<Value, ErrorObject> {
    let uri = params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        ErrorObject::invalid_params(format!("{} requires a string `uri`", facts.method))
    })?;
    features
        .subscriptions
        .set_legacy(&facts.session, facts.ctx.outbound.as_ref(), uri, on)?;
    Ok(Value::Object(Map::new()))
}
