//! [`Request`]: what an interceptor sees of a request, and may change
//! (its arguments, its params, its extensions) before the method runs.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::cancel::CancelToken;
use crate::context::{Extensions, Headers};
use crate::protocol::{ClientInfo, Era, RequestId};
use crate::server::request_facts::RequestFacts;
use crate::server::route::Route;
use crate::session::Session;

/// Which operation a request is ([`Request::operation`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operation {
    /// `tools/call`.
    CallTool,
    /// `tools/list`.
    ListTools,
    /// `resources/read`.
    ReadResource,
    /// `resources/list`.
    ListResources,
    /// `resources/templates/list`.
    ListResourceTemplates,
    /// `prompts/get`.
    GetPrompt,
    /// `prompts/list`.
    ListPrompts,
    /// `completion/complete`.
    Complete,
    /// `initialize` (legacy).
    Initialize,
    /// `server/discover` (2026-07-28).
    Discover,
    /// Anything else that runs: `logging/setLevel`, `resources/subscribe`
    /// and `unsubscribe`, `subscriptions/listen`, `tasks/get`, `tasks/update`,
    /// `tasks/cancel`, `skills/list`, `skills/get` and
    /// `resources/directory/read`.
    Other,
}

/// A set of [`Operation`]s: those an interceptor sees
/// ([`Interceptor::operations`](crate::intercept::Interceptor::operations)).
///
/// ```
/// use mcp_core::intercept::{Operation, Operations};
///
/// let tools = Operation::CallTool | Operation::ListTools;
/// assert!(tools.contains(Operation::ListTools));
/// assert!(!tools.contains(Operation::GetPrompt));
/// assert!(Operations::ALL.contains(Operation::Other));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Operations(u16);

impl Operations {
    /// Every operation, [`Operation::Other`] included.
    pub const ALL: Self = Self(u16::MAX);
    /// No operation: the interceptor is never run.
    pub const NONE: Self = Self(0);

    /// Just `operation`.
    pub const fn only(operation: Operation) -> Self {
        Self(operation.bit())
    }

    /// This set and `operation`.
    #[must_use]
    pub const fn with(self, operation: Operation) -> Self {
        Self(self.0 | operation.bit())
    }

    /// True when `operation` is in the set.
    pub const fn contains(self, operation: Operation) -> bool {
        self.0 & operation.bit() != 0
    }
}

impl From<Operation> for Operations {
    fn from(operation: Operation) -> Self {
        Self::only(operation)
    }
}

impl std::ops::BitOr for Operations {
    type Output = Self;
    fn bitor(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }
}

impl std::ops::BitOr<Operation> for Operations {
    type Output = Self;
    fn bitor(self, operation: Operation) -> Self {
        self.with(operation)
    }
}

impl std::ops::BitOr for Operation {
    type Output = Operations;
    fn bitor(self, other: Self) -> Operations {
        Operations::only(self).with(other)
    }
}

impl Operation {
    const fn bit(self) -> u16 {
        1 << self as u16
    }

    pub(crate) fn of(route: Route) -> Self {
        match route {
            Route::ToolsCall => Self::CallTool,
            Route::ToolsList => Self::ListTools,
            Route::ResourcesRead => Self::ReadResource,
            Route::ResourcesList => Self::ListResources,
            Route::ResourceTemplatesList => Self::ListResourceTemplates,
            Route::PromptsGet => Self::GetPrompt,
            Route::PromptsList => Self::ListPrompts,
            Route::CompletionComplete => Self::Complete,
            Route::Initialize => Self::Initialize,
            Route::Discover => Self::Discover,
            Route::LoggingSetLevel
            | Route::ResourcesSubscribe
            | Route::ResourcesUnsubscribe
            | Route::SubscriptionsListen
            | Route::SkillsList
            | Route::SkillsGet
            | Route::DirectoryRead
            | Route::TasksGet
            | Route::TasksUpdate
            | Route::TasksCancel => Self::Other,
        }
    }
}

/// One request on its way through the interceptors to its method.
///
/// Everything a transport and the earlier stages know is readable; the
/// params (a tool's or prompt's *raw* arguments, before any parsing) and
/// the [`Extensions`] can be changed, and the method runs with what the
/// last interceptor passes on.
pub struct Request<'a> {
    pub(crate) scope: &'a RequestFacts,
    pub(crate) route: Route,
    pub(crate) params: Map<String, Value>,
    pub(crate) extensions: Extensions,
}

impl<'a> Request<'a> {
    /// The JSON-RPC method.
    pub fn method(&self) -> &str {
        &self.scope.method
    }

    /// The operation: which method this is, as a type.
    pub fn operation(&self) -> Operation {
        Operation::of(self.route)
    }

    /// What the operation acts on: the tool or prompt name (`tools/call`,
    /// `prompts/get`) or the resource URI (`resources/read`).
    pub fn key(&self) -> Option<&str> {
        let field = match self.route {
            Route::ToolsCall | Route::PromptsGet => "name",
            Route::ResourcesRead => "uri",
            _ => return None,
        };
        self.params.get(field).and_then(Value::as_str)
    }

    /// The tool a `tools/call` names (`None` for other operations).
    pub fn tool_name(&self) -> Option<&str> {
        self.named(Route::ToolsCall, "name")
    }

    /// The prompt a `prompts/get` names (`None` for other operations).
    pub fn prompt_name(&self) -> Option<&str> {
        self.named(Route::PromptsGet, "name")
    }

    /// The URI a `resources/read` reads (`None` for other operations).
    pub fn resource_uri(&self) -> Option<&str> {
        self.named(Route::ResourcesRead, "uri")
    }

    fn named(&self, route: Route, field: &str) -> Option<&str> {
        if self.route != route {
            return None;
        }
        self.params.get(field).and_then(Value::as_str)
    }

    /// The raw arguments of `tools/call` or `prompts/get`, exactly as the
    /// client sent them (not parsed or checked yet).
    pub fn arguments(&self) -> Option<&Map<String, Value>> {
        self.params.get("arguments").and_then(Value::as_object)
    }

    /// The arguments to change before they are parsed (an empty object is
    /// put in when the request had none). `None` for other operations, or
    /// when the client sent arguments that are not an object (the method
    /// answers that `-32602`).
    pub fn arguments_mut(&mut self) -> Option<&mut Map<String, Value>> {
        if !matches!(self.route, Route::ToolsCall | Route::PromptsGet) {
            return None;
        }
        let args = self
            .params
            .entry("arguments")
            .or_insert_with(|| Value::Object(Map::new()));
        if args.is_null() {
            *args = Value::Object(Map::new());
        }
        args.as_object_mut()
    }

    /// All the request's params.
    pub fn params(&self) -> &Map<String, Value> {
        &self.params
    }

    /// The params, to change.
    pub fn params_mut(&mut self) -> &mut Map<String, Value> {
        &mut self.params
    }

    /// The request's id.
    pub fn id(&self) -> &RequestId {
        &self.scope.id
    }

    /// True for a 2026-07-28 request (stateless, `_meta` per request).
    pub fn is_modern(&self) -> bool {
        self.scope.is_modern()
    }

    /// True for a 2026-07-28 retry: the request carries the answers of an
    /// earlier round (`requestState` or `inputResponses`). Whether *this*
    /// round is the final one shows in its outcome: anything but
    /// [`Outcome::InputRequired`](crate::intercept::Outcome::InputRequired).
    pub fn is_retry(&self) -> bool {
        self.is_modern()
            && (self.params.contains_key("requestState")
                || self.params.contains_key("inputResponses"))
    }

    /// What the client declared: on 2026-07-28 in this request's `_meta`,
    /// on a legacy session in `initialize` (`None` before it, or without a
    /// session).
    pub fn client(&self) -> Option<Arc<ClientInfo>> {
        match &self.scope.era {
            Era::Modern(meta) => Some(Arc::clone(&meta.client)),
            Era::Legacy => self.scope.ctx.session.as_ref().and_then(Session::client),
        }
    }

    /// The session the request belongs to (a legacy HTTP session or the
    /// stdio connection); `None` for a stateless request.
    pub fn session(&self) -> Option<&Session> {
        self.scope.ctx.session.as_ref()
    }

    /// The transport's request headers (HTTP) or options (stdio).
    pub fn headers(&self) -> &Headers {
        &self.scope.ctx.headers
    }

    /// Who is calling, as the transport authenticated them (the principal
    /// sessions and `requestState` are bound to).
    pub fn principal(&self) -> Option<&str> {
        self.scope.ctx.principal.as_deref()
    }

    /// The transport peer's address, when known.
    pub fn remote_addr(&self) -> Option<&str> {
        self.scope.ctx.remote_addr.as_deref()
    }

    /// Fires when the call is cancelled (by the client, or because the
    /// transport went away).
    pub fn cancel_token(&self) -> &CancelToken {
        self.scope.token()
    }

    /// The request's extensions: the transport's, plus what interceptors
    /// before this one attached. Handlers read them from their
    /// [`InvokeContext`](crate::InvokeContext).
    pub fn extensions(&self) -> &Extensions {
        &self.extensions
    }

    /// The extensions, to attach values for later interceptors and the
    /// handler.
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method())
            .field("id", self.id())
            .field("key", &self.key())
            .field("modern", &self.is_modern())
            .finish_non_exhaustive()
    }
}
