//! Tool descriptors ([`McpToolDef`]) and the result conversion trait.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::{CallContext, InvokeContext};
use crate::protocol::{CallToolResult, Content, Icon, Tool, ToolAnnotations};

use crate::boxed::BoxFuture;
use crate::panic::call_boxed;

type ToolHandler =
    Arc<dyn Fn(Map<String, Value>, InvokeContext) -> BoxFuture<CallToolResult> + Send + Sync>;
type VisibleHook = Arc<dyn Fn(&CallContext) -> bool + Send + Sync>;
/// A call's arguments rewritten for the handler, or an error's text.
pub(crate) type ArgsRewrite =
    Arc<dyn Fn(Map<String, Value>) -> Result<Map<String, Value>, String> + Send + Sync>;

/// A tool: its advertised descriptor plus the async function that runs it.
///
/// ```
/// use mcp_core::{McpToolDef, InvokeContext};
/// use serde_json::json;
///
/// let echo = McpToolDef::new(
///     "echo",
///     "Echo the input back",
///     json!({"type": "object", "properties": {"text": {"type": "string"}}}),
///     |args, _ctx: InvokeContext| async move {
///         args.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_owned()
///     },
/// );
/// assert_eq!(echo.name(), "echo");
/// ```
#[derive(Clone)]
pub struct McpToolDef {
    tool: Tool,
    handler: ToolHandler,
    visible: Option<VisibleHook>,
    /// OAuth scopes a caller needs (see [`with_scopes`](Self::with_scopes)).
    scopes: Vec<String>,
    pub(crate) required_state: Vec<(std::any::TypeId, &'static str)>,
    /// Which mounted backend added it (none: the server's own); a backend
    /// may change only what it added to a live catalog.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) owner: Option<crate::server::registry::Owner>,
    /// False once [`never_asks`](Self::never_asks) said so.
    asks: bool,
    /// The handler never reads its [`InvokeContext`] (a macro tool whose
    /// function takes neither a context nor an injected argument).
    context_free: bool,
    /// Whether it runs as a task (the tasks extension).
    task: crate::tasks::TaskSupport,
    /// How long one call may run (see [`with_timeout`](Self::with_timeout)).
    timeout: Option<std::time::Duration>,
    /// Its result size limit (see [`with_result_limit`](Self::with_result_limit)).
    result_limit: super::result_limit::ToolLimit,
    /// The arguments that are state handles (checked before the tool runs).
    handles: Arc<[super::handle_args::HandleArg]>,
}

impl fmt::Debug for McpToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpToolDef")
            .field("tool", &self.tool)
            .field("visible", &self.visible.is_some())
            .finish_non_exhaustive()
    }
}

impl McpToolDef {
    /// A tool named `name` whose arguments follow `input_schema` (a JSON
    /// Schema object; a non-object value is replaced by `{"type":"object"}`).
    ///
    /// The handler gets the arguments object and the [`InvokeContext`]; it
    /// may return anything that is [`IntoToolResult`]. Its future runs on
    /// the runtime's worker threads and must not block them: do blocking
    /// work in `tokio::task::spawn_blocking`, or write the tool as a plain
    /// `fn` under `#[mcp_tool]`, which runs there.
    pub fn new<F, Fut, R>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Self
    where
        F: Fn(Map<String, Value>, InvokeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoToolResult,
    {
        let input_schema = match input_schema {
            Value::Object(map) => map,
            _ => {
                let mut map = Map::new();
                map.insert("type".into(), Value::String("object".into()));
                map
            }
        };
        let description: String = description.into();
        let handles = super::handle_args::handle_args(&input_schema).into();
        Self {
            tool: Tool {
                name: name.into(),
                title: None,
                description: (!description.is_empty()).then_some(description),
                input_schema,
                output_schema: None,
                annotations: None,
                icons: None,
                meta: None,
            },
            handler: Arc::new(move |args, ctx| {
                // A panic before the function's first `.await` is caught
                // like any other (see `call_boxed`).
                call_boxed(
                    || handler(args, ctx),
                    |fut| Box::pin(async move { fut.await.into_tool_result() }),
                )
            }),
            visible: None,
            scopes: Vec::new(),
            required_state: Vec::new(),
            owner: None,
            asks: true,
            context_free: false,
            task: crate::tasks::TaskSupport::Forbidden,
            timeout: None,
            result_limit: super::result_limit::ToolLimit::Inherit,
            handles,
        }
    }

    /// Declares that this handler reads state of type `T` (a `State<T>`
    /// argument, or [`InvokeContext::state`]): `McpServerBuilder::build`
    /// then fails with `BuildError::MissingState` unless a `T` was
    /// registered with `McpServerBuilder::state`. The macros declare every
    /// `State<T>` argument themselves.
    #[must_use]
    pub fn requires_state<T: std::any::Any + Send + Sync>(mut self) -> Self {
        self.required_state
            .push((std::any::TypeId::of::<T>(), std::any::type_name::<T>()));
        self
    }

    /// The state types this handler needs, as `(TypeId, type name)`.
    pub fn required_state(&self) -> &[(std::any::TypeId, &'static str)] {
        &self.required_state
    }

    /// Declares that the handler never asks the client anything
    /// (elicitation, sampling, roots) during a call. A 2026-07-28 call then
    /// skips binding its arguments (a SHA-256 over them) for a
    /// `requestState` it will never need. `#[mcp_tool]` declares this
    /// itself for a function that takes no invoke context.
    ///
    /// A handler that asks anyway gets an error from the context (its
    /// question cannot be sent; [`InvokeContext::confirm`](crate::InvokeContext::confirm)
    /// says [`CannotAsk::NoRoundTrip`](crate::context::CannotAsk::NoRoundTrip)), never
    /// a wrong answer.
    #[must_use]
    pub fn never_asks(mut self) -> Self {
        self.asks = false;
        self
    }

    /// False when the handler declared it [never asks](Self::never_asks).
    pub(crate) fn may_ask(&self) -> bool {
        self.asks
    }

    /// Sets the human-readable title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// Sets the output schema advertised on `tools/list` (a JSON object).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Map<String, Value>) -> Self {
        self.tool.output_schema = Some(schema);
        self
    }

    /// Sets the behaviour annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.tool.icons = Some(icons);
        self
    }

    /// Sets `_meta`.
    #[must_use]
    pub fn with_meta(mut self, meta: Map<String, Value>) -> Self {
        self.tool.meta = Some(meta);
        self
    }

    /// Sets a listing filter: `false` leaves the tool out of that caller's
    /// `tools/list`. It must be free of side effects (it runs on every
    /// listing), and it is not authorization: `tools/call` never consults
    /// it. A hook that panics hides the tool.
    #[must_use]
    pub fn with_visible<F>(mut self, visible: F) -> Self
    where
        F: Fn(&CallContext) -> bool + Send + Sync + 'static,
    {
        self.visible = Some(Arc::new(visible));
        self
    }

    /// Ends a call that runs longer than `limit` with a tool error the
    /// model sees (`` `name` timed out after 30s ``); the handler's future
    /// is dropped, so its work stops at its next `.await`. The macro form
    /// is `#[mcp_tool(timeout = "30s")]`; a server-wide default is
    /// [`McpServerBuilder::tool_timeout`](crate::McpServerBuilder::tool_timeout).
    /// Not applied to a call run as a task (a task has its own TTL).
    #[must_use]
    pub fn with_timeout(mut self, limit: std::time::Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// The call time limit set with [`with_timeout`](Self::with_timeout)
    /// (or the server's [`tool_timeout`](crate::McpServerBuilder::tool_timeout)).
    pub fn timeout(&self) -> Option<std::time::Duration> {
        self.timeout
    }

    /// Limits this tool's results to `limit`, whatever the server's
    /// ([`McpServerBuilder::result_limit`](crate::McpServerBuilder::result_limit));
    /// see [`ResultLimit`](crate::handler::ResultLimit). The macro form is
    /// `#[mcp_tool(max_result_bytes = 50_000)]` (with
    /// `result_over_limit = "fail"` to refuse instead of cut).
    #[must_use]
    pub fn with_result_limit(mut self, limit: super::result_limit::ResultLimit) -> Self {
        self.result_limit = super::result_limit::ToolLimit::Own(limit);
        self
    }

    /// Sends this tool's results whole, whatever their size and the
    /// server's limit (`#[mcp_tool(no_result_limit)]`): for a tool whose
    /// client is known to take large results.
    #[must_use]
    pub fn without_result_limit(mut self) -> Self {
        self.result_limit = super::result_limit::ToolLimit::Off;
        self
    }

    /// The tool's own result limit choice.
    #[inline]
    pub(crate) fn result_limit(&self) -> super::result_limit::ToolLimit {
        self.result_limit
    }

    /// Sets the limit unless the tool has its own.
    pub(crate) fn default_timeout(&mut self, limit: Option<std::time::Duration>) {
        if self.timeout.is_none() {
            self.timeout = limit;
        }
    }

    /// Declares the OAuth scopes a caller needs for this tool (all of
    /// them): a caller whose [`AuthInfo`](crate::context::AuthInfo) lacks one is
    /// refused (over HTTP `403` with an `insufficient_scope` challenge,
    /// elsewhere a `-32003` JSON-RPC error) and does not see it listed.
    /// A caller with no `AuthInfo` at all lacks every scope. Repeats are
    /// dropped; see the `auth` module for where scopes come from.
    ///
    /// ```
    /// use mcp_core::{McpToolDef, InvokeContext};
    /// use serde_json::json;
    ///
    /// let save = McpToolDef::new("save", "Save a file", json!({"type": "object"}),
    ///     |_args, _ctx: InvokeContext| async move { "saved" })
    ///     .with_scopes(["files:write"]);
    /// assert_eq!(save.scopes(), ["files:write"]);
    /// ```
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        super::add_scopes(&mut self.scopes, scopes);
        self
    }

    /// The scopes a caller needs (empty: open to every caller).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// True when a `visible` hook filters this tool per caller.
    pub fn has_visible_hook(&self) -> bool {
        self.visible.is_some()
    }

    /// Renames the tool (what [`McpServerBuilder::mount`](crate::McpServerBuilder::mount)
    /// does with a prefix).
    #[must_use]
    pub fn renamed(mut self, name: impl Into<String>) -> Self {
        self.tool.name = name.into();
        self
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.tool.name
    }

    /// The descriptor `tools/list` advertises.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// Whether this tool is listed for `ctx` (false when the hook panics).
    pub fn is_visible(&self, ctx: &CallContext) -> bool {
        match &self.visible {
            None => true,
            Some(hook) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook(ctx)))
                .unwrap_or(false),
        }
    }

    /// Declares whether the tool runs as a task (the tasks extension,
    /// `io.modelcontextprotocol/tasks`); the default is
    /// [`TaskSupport::Forbidden`](crate::tasks::TaskSupport::Forbidden).
    /// The handler stays the same: run as a task, its progress reports
    /// become the task's status message, its questions
    /// ([`InvokeContext::confirm`], [`input`](InvokeContext::input), …)
    /// turn the task `input_required` until the client answers with
    /// `tasks/update`, and `tasks/cancel` cancels its token.
    ///
    /// ```
    /// use mcp_core::{McpToolDef, InvokeContext, tasks::TaskSupport};
    /// use serde_json::json;
    ///
    /// let tool = McpToolDef::new("render", "Render a video", json!({"type": "object"}),
    ///     |_args, _ctx: InvokeContext| async move { "done" })
    ///     .with_task_support(TaskSupport::Optional);
    /// assert_eq!(tool.task_support(), TaskSupport::Optional);
    /// ```
    pub fn with_task_support(mut self, support: crate::tasks::TaskSupport) -> Self {
        self.task = support;
        self
    }

    /// Whether the tool runs as a task.
    pub fn task_support(&self) -> crate::tasks::TaskSupport {
        self.task
    }

    /// Runs the tool's handler directly.
    pub fn invoke(
        &self,
        args: Map<String, Value>,
        ctx: InvokeContext,
    ) -> BoxFuture<CallToolResult> {
        (self.handler)(args, ctx)
    }

    /// Declares that the handler never reads its [`InvokeContext`]: a
    /// call then builds none (only the macros know this for certain).
    pub(crate) fn context_free(mut self) -> Self {
        self.asks = false;
        self.context_free = true;
        self
    }

    /// True when the handler never reads its [`InvokeContext`].
    pub(crate) fn is_context_free(&self) -> bool {
        self.context_free
    }

    /// The arguments that are state handles (`Handle<T>`), found in the
    /// input schema when the tool was made.
    pub(crate) fn handle_args(&self) -> &[super::handle_args::HandleArg] {
        &self.handles
    }

    /// Replaces the description (a mount's transforms).
    pub(crate) fn with_description(mut self, text: String) -> Self {
        self.tool.description = Some(text);
        self
    }

    /// Lists `schema` as the input schema and hands the handler what
    /// `rewrite` makes of a call's arguments (its `Err` is the text of an
    /// error result, and the handler does not run): a mount's argument
    /// transforms, before the tool's own argument check.
    pub(crate) fn with_rewritten_input(
        mut self,
        schema: Map<String, Value>,
        rewrite: ArgsRewrite,
    ) -> Self {
        self.handles = super::handle_args::handle_args(&schema).into();
        self.tool.input_schema = schema;
        let inner = self.handler;
        self.handler = Arc::new(move |args, ctx| match rewrite(args) {
            Ok(args) => inner(args, ctx),
            Err(message) => Box::pin(std::future::ready(CallToolResult::error(message))),
        });
        self
    }
}

/// Conversion of a tool's return value into a `tools/call` result.
///
/// `Err` values of a `Result` become `isError: true` results carrying the
/// error's message, so the model can read it and try something else.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP tool",
    note = "return a String, &'static str, (), Content, Vec<Content>, CallToolResult, Json<T>, or a Result of one of these"
)]
pub trait IntoToolResult {
    /// Performs the conversion.
    fn into_tool_result(self) -> CallToolResult;

    /// The `outputSchema` this return type implies (set for [`Json<T>`]).
    fn output_schema() -> Option<Map<String, Value>> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl IntoToolResult for Content {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<Content> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

/// `Err(e)` is an error result (`isError: true`) whose text is `{e:#}`, the
/// alternate form (`anyhow` prints its context chain with it), cut to
/// [`MAX_ERROR_TEXT`](crate::protocol::MAX_ERROR_TEXT) bytes.
impl<T: IntoToolResult, E: fmt::Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => CallToolResult::error(crate::protocol::jsonrpc::display_chain(&e)),
        }
    }

    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }
}

/// A structured tool result: serialized into `structuredContent` (when it is
/// a JSON object) and, as the spec advises, also as a text block.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + schemars::JsonSchema> IntoToolResult for Json<T> {
    fn output_schema() -> Option<Map<String, Value>> {
        let schema = crate::schema::schema_for::<T>();
        (schema.get("type") == Some(&Value::String("object".into()))).then_some(schema)
    }

    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => {
                let text = value.to_string();
                match value {
                    Value::Object(map) => CallToolResult::text(text).with_structured(map),
                    _ => CallToolResult::text(text),
                }
            }
            Err(e) => CallToolResult::error(format!("could not serialize the tool result: {e}")),
        }
    }
}
