//! Stage 5, route: the method table. Each method a registered request can
//! name, the era it exists in, and what the server must offer for it to be
//! served; anything else is `-32601`. (`initialize`, `ping` and
//! `server/discover` never get here: see [`lifecycle`](super::lifecycle).)

use super::features::Features;
use super::lifecycle::Lifecycle;
use super::offered_extensions::Extensions;
use super::registry::Registry;
use crate::protocol::{Era, ErrorObject};

/// A method a registered request is routed to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    ToolsList,
    ToolsCall,
    ResourcesList,
    ResourceTemplatesList,
    ResourcesRead,
    PromptsList,
    PromptsGet,
    LoggingSetLevel,
    CompletionComplete,
    ResourcesSubscribe,
    ResourcesUnsubscribe,
    SubscriptionsListen,
    /// `skills/list` (the skills extension).
    SkillsList,
    /// `skills/get`.
    SkillsGet,
    /// `resources/directory/read` (skill directories).
    DirectoryRead,
    /// `tasks/get` (the tasks extension).
    TasksGet,
    /// `tasks/update`.
    TasksUpdate,
    /// `tasks/cancel`.
    TasksCancel,
    /// `initialize`, routed only through interceptors (otherwise it is
    /// answered before registration, see `lifecycle`).
    Initialize,
    /// `server/discover`, likewise.
    Discover,
}

/// Which eras a method exists in.
#[derive(Clone, Copy)]
enum Eras {
    Both,
    Legacy,
    Modern,
}

/// What the server must offer for a method to exist.
#[derive(Clone, Copy)]
enum Needs {
    Nothing,
    Resources,
    Prompts,
    Logging,
    Completion,
    Subscriptions,
    Tasks,
    Skills,
}

/// One row of the method table.
struct Entry {
    method: &'static str,
    route: Route,
    eras: Eras,
    needs: Needs,
}

const fn entry(method: &'static str, route: Route, eras: Eras, needs: Needs) -> Entry {
    Entry {
        method,
        route,
        eras,
        needs,
    }
}

/// The method table, most frequent first.
static TABLE: &[Entry] = &[
    entry("tools/call", Route::ToolsCall, Eras::Both, Needs::Nothing),
    entry("tools/list", Route::ToolsList, Eras::Both, Needs::Nothing),
    entry(
        "resources/read",
        Route::ResourcesRead,
        Eras::Both,
        Needs::Resources,
    ),
    entry(
        "resources/list",
        Route::ResourcesList,
        Eras::Both,
        Needs::Resources,
    ),
    entry(
        "resources/templates/list",
        Route::ResourceTemplatesList,
        Eras::Both,
        Needs::Resources,
    ),
    entry("prompts/get", Route::PromptsGet, Eras::Both, Needs::Prompts),
    entry(
        "prompts/list",
        Route::PromptsList,
        Eras::Both,
        Needs::Prompts,
    ),
    entry(
        "completion/complete",
        Route::CompletionComplete,
        Eras::Both,
        Needs::Completion,
    ),
    entry(
        "logging/setLevel",
        Route::LoggingSetLevel,
        Eras::Legacy,
        Needs::Logging,
    ),
    entry(
        "resources/subscribe",
        Route::ResourcesSubscribe,
        Eras::Legacy,
        Needs::Subscriptions,
    ),
    entry(
        "resources/unsubscribe",
        Route::ResourcesUnsubscribe,
        Eras::Legacy,
        Needs::Subscriptions,
    ),
    entry(
        "subscriptions/listen",
        Route::SubscriptionsListen,
        Eras::Modern,
        Needs::Nothing,
    ),
    entry("skills/list", Route::SkillsList, Eras::Both, Needs::Skills),
    entry("skills/get", Route::SkillsGet, Eras::Both, Needs::Skills),
    entry(
        "resources/directory/read",
        Route::DirectoryRead,
        Eras::Both,
        Needs::Skills,
    ),
    entry("tasks/get", Route::TasksGet, Eras::Modern, Needs::Tasks),
    entry(
        "tasks/update",
        Route::TasksUpdate,
        Eras::Modern,
        Needs::Tasks,
    ),
    entry(
        "tasks/cancel",
        Route::TasksCancel,
        Eras::Modern,
        Needs::Tasks,
    ),
];

/// Looks a method up for a request of `era`, reading what the server
/// offers from the parts that hold it.
///
/// # Errors
/// `-32601` for a method that does not exist in that era or that this
/// server does not offer.
#[inline]
pub(crate) fn route(
    registry: &Registry,
    lifecycle: &Lifecycle,
    features: &Features,
    extensions: &Extensions,
    method: &str,
    era: &Era,
) -> Result<Route, ErrorObject> {
    let modern = matches!(era, Era::Modern(_));
    TABLE
        .iter()
        .find(|e| e.method == method)
        .filter(|e| match e.eras {
            Eras::Both => true,
            Eras::Legacy => !modern,
            Eras::Modern => modern,
        })
        .filter(|e| match e.needs {
            Needs::Nothing => true,
            // A live part is there even while empty (entries may come).
            Needs::Resources => {
                registry.resources.is_live() || !registry.resources.snapshot().is_empty()
            }
            Needs::Prompts => {
                registry.prompts.is_live() || !registry.prompts.snapshot().prompts.is_empty()
            }
            Needs::Logging => lifecycle.logging,
            Needs::Completion => features.completer.is_some(),
            Needs::Subscriptions => features.resource_subscriptions,
            Needs::Tasks => extensions.tasks.is_some(),
            Needs::Skills => extensions.skills.is_some(),
        })
        .map(|e| e.route)
        .ok_or_else(|| ErrorObject::method_not_found(method))
}

/// The route of `method` in any era, whatever the server offers (for a
/// check that runs before the request is routed).
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn by_name(method: &str) -> Option<Route> {
    TABLE.iter().find(|e| e.method == method).map(|e| e.route)
}
