//! `prompts/list` and `prompts/get`.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{listing, to_json};
use crate::context::{scopes_allowed, Extensions};
use crate::panic::{catch_panic, panic_error};
use crate::protocol::ErrorObject;
use crate::server::access::insufficient;
use crate::server::outcome::Stop;
use crate::server::registry::Registry;
use crate::server::request_facts::RequestFacts;
use crate::server::round_trip::Invoke;

/// `prompts/list`.
pub(crate) fn list(
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    ext: &Extensions,
) -> Result<Value, ErrorObject> {
    let catalog = registry.prompts.snapshot();
    let items = catalog.prompts.iter();
    let items = items
        .filter(|p| scopes_allowed(ext, p.scopes()))
        .map(|p| to_json(p.prompt()));
    let kind = ("prompts", registry.prompt_list_cache);
    listing(facts, params, kind, items)
}

/// `prompts/get`.
pub(crate) async fn get(
    registry: &Registry,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    mut params: Map<String, Value>,
    ext: Extensions,
) -> Result<Value, Stop> {
    let name = match params.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => {
            return Err(ErrorObject::invalid_params("prompts/get requires a string `name`").into())
        }
    };
    // The catalog version this request started with, even if a live
    // catalog changes while it runs.
    let catalog = registry.prompts.snapshot();
    let prompt = catalog
        .prompts
        .get(&name)
        .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?;
    if !scopes_allowed(&ext, prompt.scopes()) {
        return Err(insufficient(&format!("prompt `{name}`"), prompt.scopes()).into());
    }
    let raw_args = params.remove("arguments");
    let binding_args = raw_args
        .as_ref()
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let args = prompt_args(raw_args)?;
    let round = invoke.round_trip(facts, &name, &binding_args, &params, true)?;
    let ctx = invoke.context(facts, &params, &round, ext)?;
    let work = catch_panic(Box::pin(prompt.get(args, ctx)));
    let result = round.run(work).await?.map_err(panic_error)??;
    Ok(to_json(&result))
}

fn prompt_args(raw: Option<Value>) -> Result<HashMap<String, String>, ErrorObject> {
    match raw {
        None | Some(Value::Null) => Ok(HashMap::new()),
        Some(Value::Object(map)) => map
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                _ => Err(ErrorObject::invalid_params(format!(
                    "prompts/get argument `{k}` must be a string"
                ))),
            })
            .collect(),
        Some(_) => Err(ErrorObject::invalid_params(
            "prompts/get `arguments` must be an object of strings",
        )),
    }
}
