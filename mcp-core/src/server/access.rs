//! OAuth scopes of tools, resources and prompts: which scopes a request
//! needs, the refusal when its caller lacks them, and the scopes the
//! catalog declares (a resource server's `scopes_supported`).
//!
//! The caller's grants are the [`AuthInfo`](crate::context::AuthInfo) in the
//! request's extensions; an item without scopes is open to every caller.

use serde_json::{Map, Value};

use super::registry::Registry;
use super::route::Route;
use crate::context::{scopes_allowed, Extensions};
use crate::protocol::{ErrorCode, ErrorObject};

/// What a method names in the catalog, and so whose scopes it needs.
#[derive(Clone, Copy)]
enum Names {
    /// No tool, resource or prompt.
    Nothing,
    /// The tool `params.name`.
    Tool,
    /// The prompt `params.name`.
    Prompt,
    /// The resource (or template) `params.uri` matches.
    Resource,
    /// `params.ref`: a prompt by `name` or a resource template by `uri`.
    CompletionRef,
    /// Every resource of `params.notifications.resourceSubscriptions`.
    ListenedResources,
}

/// What each method names. A match without a catch-all: a new method
/// must say what it names before the crate builds, so none can skip the
/// scope check.
fn names(route: Route) -> Names {
    match route {
        Route::ToolsCall => Names::Tool,
        Route::PromptsGet => Names::Prompt,
        Route::ResourcesRead | Route::ResourcesSubscribe => Names::Resource,
        Route::CompletionComplete => Names::CompletionRef,
        Route::SubscriptionsListen => Names::ListenedResources,
        // Ending one's own subscription reads and grants nothing.
        Route::ResourcesUnsubscribe
        | Route::ToolsList
        | Route::ResourcesList
        | Route::ResourceTemplatesList
        | Route::PromptsList
        | Route::LoggingSetLevel
        | Route::SkillsList
        | Route::SkillsGet
        | Route::DirectoryRead
        | Route::TasksGet
        | Route::TasksUpdate
        | Route::TasksCancel
        | Route::Initialize
        | Route::Discover => Names::Nothing,
    }
}

/// A request refused for a scope its caller lacks: what it named and
/// the scopes that needs.
pub(crate) struct Denied {
    /// ``tool `x` ``, ``resource `u` ``, ``prompt `p` ``.
    pub(crate) what: String,
    /// The item's scopes.
    pub(crate) needed: Vec<String>,
}

impl Denied {
    /// The `-32003` error of the refusal.
    pub(crate) fn error(&self) -> ErrorObject {
        insufficient(&self.what, &self.needed)
    }
}

impl From<Denied> for ErrorObject {
    fn from(denied: Denied) -> Self {
        denied.error()
    }
}

/// The `-32003` refusal of a request whose caller lacks `needed` for `what`.
pub(crate) fn insufficient(what: &str, needed: &[String]) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::INSUFFICIENT_SCOPE,
        format!(
            "Insufficient scope: {what} needs the scope{} {}",
            if needed.len() == 1 { "" } else { "s" },
            needed.join(" ")
        ),
    )
    .with_data(serde_json::json!({ "scopes": needed }))
}

impl Registry {
    /// The scope check of every method that names a tool, resource or
    /// prompt (`tools/call`, `prompts/get`, `resources/read`,
    /// `resources/subscribe`, `completion/complete`,
    /// `subscriptions/listen`): each item it names is looked up in the
    /// catalog as it is now, and a caller lacking one of its scopes is
    /// refused with the same `-32003` whatever the method. `name`: the
    /// tool name when decoding held it apart from `params`. Costs one
    /// flag read per part when no entry declares scopes.
    ///
    /// # Errors
    /// The first named item whose scopes `ext` does not grant.
    pub(crate) fn check_named_scopes(
        &self,
        route: Route,
        params: Option<&Map<String, Value>>,
        name: Option<&str>,
        ext: Option<&Extensions>,
    ) -> Result<(), Denied> {
        let field = |key: &str| params?.get(key)?.as_str();
        let name = || name.or_else(|| field("name"));
        let granted =
            |needed: &[String]| needed.is_empty() || ext.is_some_and(|e| scopes_allowed(e, needed));
        let deny = |what: String, needed: &[String]| {
            Err(Denied {
                what,
                needed: needed.to_vec(),
            })
        };
        let resource = |uri: &str, template: bool| -> Result<(), Denied> {
            if !self.resources.scoped() {
                return Ok(());
            }
            let catalog = self.resources.snapshot();
            // A completion names a template by its own text.
            let def = template
                .then(|| catalog.templates.iter().find(|t| t.key() == uri))
                .flatten()
                .or_else(|| catalog.find(uri).map(|(def, _)| def));
            match def {
                Some(def) if !granted(def.scopes()) => {
                    deny(format!("resource `{uri}`"), def.scopes())
                }
                _ => Ok(()),
            }
        };
        let prompt = |name: &str| -> Result<(), Denied> {
            if !self.prompts.scoped() {
                return Ok(());
            }
            let catalog = self.prompts.snapshot();
            match catalog.prompts.get(name) {
                Some(p) if !granted(p.scopes()) => deny(format!("prompt `{name}`"), p.scopes()),
                _ => Ok(()),
            }
        };
        match names(route) {
            Names::Nothing => Ok(()),
            Names::Tool => {
                let Some(mut name) = name().filter(|_| self.tools.scoped()) else {
                    return Ok(());
                };
                // Under tool search, `call_tool` needs what the tool it
                // calls needs (checked here before the call is rewritten,
                // by a transport that refuses early).
                if name == crate::tool_search::CALL_TOOL && self.tool_search.is_some() {
                    let inner = params
                        .and_then(|p| p.get("arguments"))
                        .and_then(|a| a.get("name"))
                        .and_then(Value::as_str);
                    match inner {
                        Some(inner) => name = inner,
                        None => return Ok(()),
                    }
                }
                let catalog = self.tools.snapshot();
                match catalog.tools.get(name) {
                    Some(t) if !granted(t.scopes()) => deny(format!("tool `{name}`"), t.scopes()),
                    _ => Ok(()),
                }
            }
            Names::Prompt => name().map_or(Ok(()), prompt),
            Names::Resource => field("uri").map_or(Ok(()), |uri| resource(uri, false)),
            Names::CompletionRef => {
                let reference = params.and_then(|p| p.get("ref"));
                let text = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
                match text("type") {
                    Some("ref/prompt") => text("name").map_or(Ok(()), prompt),
                    Some("ref/resource") => text("uri").map_or(Ok(()), |uri| resource(uri, true)),
                    _ => Ok(()),
                }
            }
            Names::ListenedResources => {
                let uris = params
                    .and_then(|p| p.get("notifications"))
                    .and_then(|n| n.get("resourceSubscriptions"))
                    .and_then(Value::as_array);
                uris.into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .try_for_each(|uri| resource(uri, false))
            }
        }
    }

    /// Every scope a tool, resource or prompt of this server declares,
    /// sorted, without repeats (what a resource server publishes as
    /// `scopes_supported`). A live catalog's tools count as they are now.
    pub(crate) fn declared_scopes(&self) -> Vec<String> {
        let catalog = self.tools.snapshot();
        let mut all: Vec<String> = catalog
            .tools
            .iter()
            .flat_map(|t| t.scopes().iter().cloned())
            .chain(
                self.resources
                    .snapshot()
                    .iter()
                    .flat_map(|r| r.scopes().to_vec()),
            )
            .chain(
                self.prompts
                    .snapshot()
                    .prompts
                    .iter()
                    .flat_map(|p| p.scopes().to_vec()),
            )
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    /// True when a tool, resource or prompt declares scopes (a transport
    /// checks requests only then).
    #[inline]
    pub(crate) fn has_scoped_items(&self) -> bool {
        self.tools.scoped() || self.resources.scoped() || self.prompts.scoped()
    }
}
