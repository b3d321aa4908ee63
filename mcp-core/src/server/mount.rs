//! Composition: [`McpServerBuilder::mount`] serves another server's
//! catalog under a prefix, and the interceptors a mounted server brings
//! for its own resources and prompts ([`EntryChains`]; its tools' are in
//! the server's `tool_chains`).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::builder::{BuildError, McpServerBuilder};
use super::intercept::{Chain, Interceptor, LocalBoxed, Method, Request};
use super::methods;
use super::route::Route;
use super::scope::RequestScope;
use super::McpServer;
use crate::context::Extensions;
use crate::server::outcome::{Answer, Stop};

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
                chains.entry(key).or_default().0.push(interceptor);
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

impl McpServerBuilder {
    /// Mounts another server's catalog into this one under `prefix`: its
    /// tools and prompts are served as `{prefix}_{name}`, its resources and
    /// templates under their own URIs (a URI both servers have is a
    /// [`BuildError::DuplicateResource`]), its state is added where this
    /// server has none of that type, and its interceptors run for its
    /// tools (`tools/call`), resources (`resources/read`) and prompts
    /// (`prompts/get`), inside this server's (which apply to mounted
    /// entries like to any other): onion order, this server's outermost. Extensions attached by this server's interceptors reach
    /// the mounted handlers. (The mounted server's completer, logging and
    /// server info are not carried over.)
    ///
    /// ```
    /// use mcp_core::{McpServer, McpToolDef};
    ///
    /// let weather = McpServer::builder().tool(McpToolDef::new(
    ///     "forecast", "Tomorrow's weather", serde_json::json!({"type": "object"}),
    ///     |_args, _ctx: mcp_core::InvokeContext| async { "sunny" },
    /// ));
    /// let server = McpServer::builder().mount("weather", weather).build().expect("builds");
    /// assert_eq!(server.list_tools()[0].name, "weather_forecast");
    /// ```
    pub fn mount(mut self, prefix: &str, child: McpServerBuilder) -> Self {
        let valid = (1..=64).contains(&prefix.len())
            && prefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
        if !valid {
            self.deferred
                .get_or_insert(BuildError::InvalidMountPrefix(prefix.to_owned()));
            return self;
        }
        if let Some(e) = child.deferred {
            self.deferred.get_or_insert(e);
        }
        let named = |name: &str| format!("{prefix}_{name}");
        for tool in child.tools {
            let name = named(tool.name());
            for interceptor in &child.interceptors {
                self.tool_interceptors
                    .push((name.clone(), Arc::clone(interceptor)));
            }
            self.tools.push(tool.renamed(name));
        }
        for (tool, interceptor) in child.tool_interceptors {
            self.tool_interceptors.push((named(&tool), interceptor));
        }
        let parent = &mut self.entry_interceptors;
        for prompt in child.prompts {
            let name = named(prompt.name());
            for interceptor in &child.interceptors {
                parent.prompts.push((name.clone(), Arc::clone(interceptor)));
            }
            self.prompts.push(prompt.renamed(name));
        }
        for resource in child.resources {
            for interceptor in &child.interceptors {
                let key = resource.key().to_owned();
                parent.resources.push((key, Arc::clone(interceptor)));
            }
            self.resources.push(resource);
        }
        // What the child mounted in turn keeps its own interceptors, inside.
        let EntryInterceptors { resources, prompts } = child.entry_interceptors;
        parent.resources.extend(resources);
        let prompts = prompts.into_iter().map(|(name, i)| (named(&name), i));
        parent.prompts.extend(prompts);
        self.state.absorb(child.state);
        self.state_types.extend(child.state_types);
        self
    }
}

impl McpServer {
    /// Runs `resources/read` or `prompts/get` through the interceptors of
    /// the entry it names, when it has any (inside the server's chain);
    /// `Err` gives the params back when it has none.
    pub(crate) async fn run_entry_chain(
        &self,
        scope: &RequestScope,
        route: Route,
        params: Map<String, Value>,
        ext: Extensions,
    ) -> Result<Result<Answer, Stop>, (Map<String, Value>, Extensions)> {
        let chains = &self.inner.entry_chains;
        let field = |key: &str| params.get(key).and_then(Value::as_str);
        let chain = match route {
            Route::PromptsGet if !chains.prompts.is_empty() => {
                field("name").and_then(|name| chains.prompts.get(name))
            }
            Route::ResourcesRead if !chains.resources.is_empty() => {
                let catalog = self.inner.resources.snapshot();
                field("uri")
                    .and_then(|uri| catalog.find(uri))
                    .and_then(|(def, _)| chains.resources.get(def.key()))
            }
            _ => None,
        };
        let Some(chain) = chain else {
            return Err((params, ext));
        };
        let req = Request {
            scope,
            route,
            params,
            extensions: ext,
        };
        Ok(chain.run(req, &EntryMethod(self)).await.into())
    }
}

/// A resource's read or a prompt's get as the end of that entry's own
/// interceptors.
struct EntryMethod<'s>(&'s McpServer);

impl Method for EntryMethod<'_> {
    fn call<'a>(&'a self, req: Request<'a>) -> LocalBoxed<'a> {
        Box::pin(async move {
            let Request {
                scope,
                route,
                params,
                extensions,
            } = req;
            let json = if route == Route::PromptsGet {
                methods::prompts::get(self.0, scope, params, extensions).await
            } else {
                methods::resources::read(self.0, scope, params, extensions).await
            };
            self.0.json_answer(scope, json).into()
        })
    }
}
