//! The interceptors a mounted server brings for its own resources and
//! prompts: collected by the builder ([`EntryInterceptors`]), run inside
//! the server's chain for `resources/read` and `prompts/get` of those
//! entries ([`EntryChains`]; a mounted server's tools use `tool_chains`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::intercept::{Chain, Interceptor, LocalBoxed, Method, Operation, Request};
use super::methods;
use super::outcome::{Answer, Stop};
use super::registry::Registry;
use super::request_facts::RequestFacts;
use super::round_trip::Invoke;
use super::route::Route;
use crate::context::Extensions;

type Registered = Vec<(String, Arc<dyn Interceptor>)>;

/// Interceptors for single resources (by URI, or template as written) and
/// prompts (by name), as the builder collects them.
#[derive(Default)]
pub(crate) struct EntryInterceptors {
    pub(crate) resources: Registered,
    pub(crate) prompts: Registered,
}

impl EntryInterceptors {
    /// Each entry's chain, in the order its interceptors were added.
    pub(crate) fn chains(self) -> EntryChains {
        let group = |all: Registered| {
            let mut chains: HashMap<String, Chain> = HashMap::new();
            for (key, interceptor) in all {
                chains.entry(key).or_default().push(interceptor);
            }
            chains
        };
        EntryChains {
            resources: group(self.resources),
            prompts: group(self.prompts),
        }
    }
}

/// The resources and prompts that have interceptors of their own.
#[derive(Default)]
pub(crate) struct EntryChains {
    resources: HashMap<String, Chain>,
    prompts: HashMap<String, Chain>,
}

impl EntryChains {
    /// No entry has interceptors of its own.
    pub(crate) fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.prompts.is_empty()
    }
}

/// Runs `resources/read` or `prompts/get` through the interceptors of
/// the entry it names, when it has any (inside the server's chain);
/// `Err` gives the params back when it has none. Reads the entry chains
/// and the resources' catalog; the registry and `invoke` run the method
/// at the chain's end.
pub(crate) async fn run_entry_chain(
    chains: &EntryChains,
    registry: &Registry,
    invoke: Invoke<'_>,
    facts: &RequestFacts,
    route: Route,
    params: Map<String, Value>,
    ext: Extensions,
) -> Result<Result<Answer, Stop>, (Map<String, Value>, Extensions)> {
    let field = |key: &str| params.get(key).and_then(Value::as_str);
    let chain = match route {
        Route::PromptsGet if !chains.prompts.is_empty() => {
            field("name").and_then(|name| chains.prompts.get(name))
        }
        Route::ResourcesRead if !chains.resources.is_empty() => {
            let catalog = registry.resources.snapshot();
            field("uri")
                .and_then(|uri| catalog.find(uri))
                .and_then(|(def, _)| chains.resources.get(def.key()))
        }
        _ => None,
    };
    // A chain whose interceptors all leave the operation out is none.
    let Some(chain) = chain.filter(|chain| chain.wants(Operation::of(route))) else {
        return Err((params, ext));
    };
    let req = Request {
        scope: facts,
        route,
        params,
        extensions: ext,
    };
    Ok(chain
        .run(req, &EntryMethod { registry, invoke })
        .await
        .into())
}

/// A resource's read or a prompt's get as the end of that entry's own
/// interceptors.
struct EntryMethod<'s> {
    registry: &'s Registry,
    invoke: Invoke<'s>,
}

impl Method for EntryMethod<'_> {
    fn call<'a>(&'a self, req: Request<'a>) -> LocalBoxed<'a> {
        Box::pin(async move {
            let Request {
                scope: facts,
                route,
                params,
                extensions,
            } = req;
            let json = if route == Route::PromptsGet {
                methods::prompts::get(self.registry, self.invoke, facts, params, extensions).await
            } else {
                methods::resources::read(self.registry, self.invoke, facts, params, extensions)
                    .await
            };
            self.invoke.lifecycle.json_answer(facts, json).into()
        })
    }
}

/// The interceptor chains a request may run through: the server's, a
/// tool's own, a mounted entry's own.
pub(crate) struct Chains {
    /// The server's interceptors, outermost first.
    pub(crate) interceptors: Chain,
    /// The tools that have interceptors of their own, and theirs.
    pub(crate) tool_chains: HashMap<String, Chain>,
    /// The resources (by URI or template) and prompts (by name) that have
    /// interceptors of their own (a mounted server's), and theirs.
    pub(crate) entry_chains: EntryChains,
}
