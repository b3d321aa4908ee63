//! Support for the code `#[mcp_tool]`, `#[mcp_resource]` and `#[mcp_prompt]`
//! generate. Not a public API: it may change in any release.

pub use ::schemars;
pub use ::serde;
pub use ::serde_json;

use std::future::Future;
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::InvokeContext;
use crate::handler::state::State;
use crate::handler::tool::{IntoToolResult, McpToolDef};
use crate::protocol::{CallToolResult, ErrorObject, Icon, ToolAnnotations};

mod injected;

use injected::remove_injected;
pub use injected::{
    tool_args_select, Arg, ArgsInjected, ContextKind, ContextRefKind, Injected, ParamInfo,
    PlainKind, Probe, ProbeInjected, ProbePlain, ProbeStateInjected, ProbeStatePlain,
    PromptInjected, ResourceInjected, Skip, StateKind, ToolInjected,
};

/// The input schema of a generated arguments struct: always `type: object`.
#[must_use]
pub fn input_schema<T: schemars::JsonSchema>(inline: bool) -> Value {
    let mut schema = crate::schema::schema_with::<T>(inline);
    schema.insert("type".into(), Value::String("object".into()));
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(schema)
}

/// Metadata of a macro-generated tool.
pub struct ToolMeta {
    /// Tool name.
    pub name: &'static str,
    /// Description (doc comment or attribute).
    pub description: &'static str,
    /// Title.
    pub title: Option<&'static str>,
    /// Annotations: `read_only`, `destructive`, `idempotent`, `open_world`.
    pub hints: [Option<bool>; 4],
    /// Icon URIs.
    pub icons: &'static [&'static str],
    /// `_meta` as JSON text.
    pub meta: Option<&'static str>,
    /// Keep `$defs` instead of inlining.
    pub keep_defs: bool,
    /// The function can reach the invoke context (and so ask the client
    /// something): it takes the context, or a pattern parameter (always
    /// injected). Named parameters found injected are added by `tool_def`.
    pub asks: bool,
    /// The function reads the invoke context in any way: it takes the
    /// context, a `State<T>` or a pattern parameter. Named parameters found
    /// injected are added by `tool_def`.
    pub context: bool,
}

/// Fetches `State<T>` for an injected argument.
///
/// # Errors
/// `-32603` naming the type when no such state was registered.
pub fn state<T: Clone + Send + Sync + 'static>(
    ctx: &InvokeContext,
) -> Result<State<T>, ErrorObject> {
    ctx.state::<T>().cloned().map(State).ok_or_else(|| {
        ErrorObject::internal(format!(
            "no state of type `{}` was registered: call McpServer::builder().state(value)",
            std::any::type_name::<T>()
        ))
    })
}

// ---------------------------------------------------------------------------
// Compile-time checks placed on the user's own tokens.
//
// The macros call each check below with `quote_spanned!` at the argument or
// return type it is about, so rustc reports an unsatisfied bound there, with
// the message of the check's `on_unimplemented`, and not inside generated
// code. Each check is the only place its bound is required: it returns plain
// function pointers, and the builders (`tool_def`, the resource and prompt
// closures) take those instead of repeating the bound, so one mistake gives
// one error.

/// A tool argument deserializes from JSON.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `serde::Deserialize`",
    label = "tool arguments are deserialized from the client's JSON",
    note = "derive it on the type: `#[derive(serde::Deserialize, schemars::JsonSchema)]` (a tool argument needs both)"
)]
pub trait ArgDeserialize: DeserializeOwned {}

impl<T: DeserializeOwned> ArgDeserialize for T {}

/// A tool argument has a JSON Schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `schemars::JsonSchema`",
    label = "the tool's input schema is generated from this type",
    note = "derive it on the type: `#[derive(schemars::JsonSchema)]` (schemars 1.x)"
)]
pub trait ArgSchema: schemars::JsonSchema {}

impl<T: schemars::JsonSchema> ArgSchema for T {}

/// Validates arguments against the (compiled) schema, then deserializes them.
pub(crate) type ParseFn<A> =
    fn(Map<String, Value>, &crate::handler::args::CheckedSchema) -> Result<A, String>;

/// Proof that `A` is a valid tool-arguments type: its parser and its schema.
pub struct ToolArgs<A> {
    pub(crate) parse: ParseFn<A>,
    pub(crate) schema: fn(bool) -> Value,
    /// Fields of `A` that are injected arguments, left out of the schema.
    pub(crate) skip: Vec<&'static str>,
}

/// Checks a tool-arguments type (a user struct, or the struct generated
/// from plain arguments).
#[must_use]
pub fn tool_args<A: ArgDeserialize + ArgSchema + 'static>() -> ToolArgs<A> {
    ToolArgs {
        parse: crate::handler::args::check_and_parse::<A>,
        schema: input_schema::<A>,
        skip: Vec::new(),
    }
}

/// The input schema of an `#[args]` type: its own schema, with
/// `type: object` added only when it names no type. A type whose schema is
/// not an object (an enum of names, a newtype over a string) keeps its
/// `type`, and `McpServerBuilder::build` reports the tool
/// (`BuildError::InputSchemaNotAnObject`): the arguments object can never
/// deserialize into it.
#[must_use]
pub fn whole_input_schema<T: schemars::JsonSchema>(inline: bool) -> Value {
    let mut schema = crate::schema::schema_with::<T>(inline);
    let object = match schema.get("type") {
        None => {
            schema.insert("type".into(), Value::String("object".into()));
            true
        }
        Some(t) => t == "object",
    };
    if object {
        schema
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Value::Object(schema)
}

/// Checks the type of an `#[args]` parameter: the whole arguments object.
#[must_use]
pub fn tool_args_whole<A: ArgDeserialize + ArgSchema + 'static>() -> ToolArgs<A> {
    ToolArgs {
        parse: crate::handler::args::check_and_parse::<A>,
        schema: whole_input_schema::<A>,
        skip: Vec::new(),
    }
}

/// Runs a sync tool, resource or prompt function on
/// `tokio::task::spawn_blocking`, so that it never blocks the runtime's
/// worker threads (and with them every other request). Outside a Tokio
/// runtime it runs inline. A panic in `f` is resumed in the caller, where
/// it is reported like the panic of an async function. Dropping the
/// future (a cancelled request) does not stop `f`: a blocking function
/// runs to its end.
pub async fn blocking<R, F>(f: F) -> R
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return f();
    };
    match runtime.spawn_blocking(f).await {
        Ok(value) => value,
        Err(error) => match error.try_into_panic() {
            Ok(payload) => std::panic::resume_unwind(payload),
            // The runtime is shutting down: there is no one left to answer.
            Err(_) => std::panic::resume_unwind(Box::new(
                "the blocking task was cancelled by the runtime shutting down",
            )),
        },
    }
}

/// [`tool_def`] for a sync function: `body` runs on
/// `tokio::task::spawn_blocking` (see [`blocking`]).
pub fn tool_def_blocking<A, R, F>(
    meta: &ToolMeta,
    args: ToolArgs<A>,
    result: ToolResult<R>,
    body: F,
) -> McpToolDef
where
    A: Send + 'static,
    R: Send + 'static,
    F: Fn(A, InvokeContext) -> R + Send + Sync + 'static,
{
    let body = std::sync::Arc::new(body);
    tool_def(meta, args, result, move |args, ctx| {
        let body = std::sync::Arc::clone(&body);
        blocking(move || body(args, ctx))
    })
}

/// The `State<T>` types a macro-generated descriptor needs, declared on
/// it so that `McpServerBuilder::build` reports state never registered.
pub trait DeclareState: Sized {
    /// Declares each `Some` of `needs`.
    #[must_use]
    fn declare_state(self, needs: &[Option<(std::any::TypeId, &'static str)>]) -> Self;
}

macro_rules! declare_state {
    ($($def:ty),*) => {$(
        impl DeclareState for $def {
            fn declare_state(mut self, needs: &[Option<(std::any::TypeId, &'static str)>]) -> Self {
                for need in needs.iter().flatten() {
                    self.required_state.push(*need);
                }
                self
            }
        }
    )*};
}

declare_state!(
    McpToolDef,
    crate::handler::resource::McpResourceDef,
    crate::handler::prompt::McpPromptDef
);

/// Proof that `R` is a tool's return type.
pub struct ToolResult<R> {
    convert: fn(R) -> CallToolResult,
    output_schema: fn() -> Option<Map<String, Value>>,
}

impl<R> Clone for ToolResult<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for ToolResult<R> {}

/// Checks a tool's return type; called at the return type's span.
#[must_use]
pub fn tool_result<R: IntoToolResult>() -> ToolResult<R> {
    ToolResult {
        convert: R::into_tool_result,
        output_schema: R::output_schema,
    }
}

/// A macro tool's answer: what its function returned, converted, or the
/// error its arguments got.
async fn answer<Fut: Future>(
    call: Result<Fut, String>,
    convert: fn(Fut::Output) -> CallToolResult,
) -> CallToolResult {
    match call {
        Ok(fut) => convert(fut.await),
        Err(message) => CallToolResult::error(message),
    }
}

/// Builds a macro-generated tool from checked arguments and return type.
/// Arguments are checked against the schema and deserialized before `body`
/// runs; bad arguments become an `isError` result naming the problem.
pub fn tool_def<A, R, F, Fut>(
    meta: &ToolMeta,
    args: ToolArgs<A>,
    result: ToolResult<R>,
    body: F,
) -> McpToolDef
where
    A: 'static,
    R: 'static,
    F: Fn(A, InvokeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    let mut schema = (args.schema)(!meta.keep_defs);
    remove_injected(&mut schema, &args.skip);
    // An injected argument may be the invoke context under another name.
    let asks = meta.asks || !args.skip.is_empty();
    // The schema compiled for the checker once, here, not on every call.
    let checked =
        crate::handler::args::CheckedSchema::new(schema.as_object().unwrap_or(&Map::new()));
    let parse = args.parse;
    let convert = result.convert;
    let mut def = McpToolDef::new(meta.name, meta.description, schema, move |raw, ctx| {
        // Call `body` here rather than in the future, so the arguments are
        // never held across an await (they need not be `Send`).
        let call = parse(raw, &checked).map(|args| body(args, ctx));
        answer(call, convert)
    });
    if !asks {
        def = def.never_asks();
    }
    if !meta.context && args.skip.is_empty() {
        def = def.context_free();
    }
    if let Some(title) = meta.title {
        def = def.with_title(title);
    }
    let [read_only, destructive, idempotent, open_world] = meta.hints;
    if meta.hints.iter().any(Option::is_some) {
        def = def.with_annotations(ToolAnnotations {
            title: None,
            read_only_hint: read_only,
            destructive_hint: destructive,
            idempotent_hint: idempotent,
            open_world_hint: open_world,
        });
    }
    if !meta.icons.is_empty() {
        def = def.with_icons(meta.icons.iter().map(|s| Icon::new(*s)).collect());
    }
    if let Some(Value::Object(m)) = meta.meta.and_then(|m| serde_json::from_str(m).ok()) {
        def = def.with_meta(m);
    }
    if let Some(schema) = (result.output_schema)() {
        def = def.with_output_schema(schema);
    }
    def
}

/// A resource function's return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP resource",
    label = "the resource's contents are converted from this type",
    note = "return a String or &'static str (text), Vec<u8> (bytes), ResourceContents, Vec<ResourceContents>, or a Result of one of these with any error that implements Display (String, anyhow::Error, Box<dyn Error + Send + Sync>, ErrorObject)"
)]
pub trait ResourceReturn: crate::handler::resource::IntoResourceContents {}

impl<T: crate::handler::resource::IntoResourceContents> ResourceReturn for T {}

/// Proof that `R` is a resource function's return type.
pub struct ResourceResult<R> {
    convert: fn(R) -> Result<Vec<crate::protocol::ResourceContents>, ErrorObject>,
}

impl<R> Clone for ResourceResult<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for ResourceResult<R> {}

impl<R> ResourceResult<R> {
    /// Converts the function's return value.
    ///
    /// # Errors
    /// The error of a returned `Result`.
    pub fn convert(self, value: R) -> Result<Vec<crate::protocol::ResourceContents>, ErrorObject> {
        (self.convert)(value)
    }
}

/// Checks a resource function's return type; called at its span.
#[must_use]
pub fn resource_result<R: ResourceReturn>() -> ResourceResult<R> {
    ResourceResult {
        convert: crate::handler::resource::IntoResourceContents::into_contents,
    }
}

/// A type a URI template variable parses into.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a URI template variable: it does not implement `FromStr` with a `Display` error",
    label = "the variable's text is parsed into this type with `FromStr`",
    note = "take a `String`, a number, or a type that implements `FromStr` whose `Err` implements `Display`"
)]
pub trait TemplateVar: Sized {
    /// Parses the matched text.
    ///
    /// # Errors
    /// The parse error's message.
    fn parse_var(raw: &str) -> Result<Self, String>;
}

impl<T: FromStr> TemplateVar for T
where
    T::Err: std::fmt::Display,
{
    fn parse_var(raw: &str) -> Result<Self, String> {
        raw.parse::<T>().map_err(|e| e.to_string())
    }
}

/// Parses a URI template variable; called at the argument type's span.
///
/// # Errors
/// `-32602` naming the variable and the value.
pub fn template_arg<T: TemplateVar>(
    request: &crate::handler::resource::ResourceRequest,
    name: &str,
) -> Result<T, ErrorObject> {
    let raw = request
        .vars
        .get(name)
        .ok_or_else(|| ErrorObject::invalid_params(format!("missing URI variable `{name}`")))?;
    T::parse_var(raw).map_err(|e| {
        ErrorObject::invalid_params(format!(
            "invalid value {raw:?} for URI variable `{name}`: {e}"
        ))
    })
}

/// A prompt function's return type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from an MCP prompt",
    label = "the prompt's messages are converted from this type",
    note = "return Vec<PromptMessage>, PromptMessage, String (one user message), GetPromptResult, or a Result of one of these with any error that implements Display (String, anyhow::Error, Box<dyn Error + Send + Sync>, ErrorObject)"
)]
pub trait PromptReturn: crate::handler::prompt::IntoPromptResult {}

impl<T: crate::handler::prompt::IntoPromptResult> PromptReturn for T {}

/// Proof that `R` is a prompt function's return type.
pub struct PromptResult<R> {
    convert: fn(R) -> Result<crate::protocol::GetPromptResult, ErrorObject>,
}

impl<R> Clone for PromptResult<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for PromptResult<R> {}

impl<R> PromptResult<R> {
    /// Converts the function's return value.
    ///
    /// # Errors
    /// The error of a returned `Result`.
    pub fn convert(self, value: R) -> Result<crate::protocol::GetPromptResult, ErrorObject> {
        (self.convert)(value)
    }
}

/// Checks a prompt function's return type; called at its span.
#[must_use]
pub fn prompt_result<R: PromptReturn>() -> PromptResult<R> {
    PromptResult {
        convert: crate::handler::prompt::IntoPromptResult::into_prompt_result,
    }
}

/// A type injected as `State<T>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected as `State<{Self}>`: it must be `Clone + Send + Sync + 'static`",
    label = "injected application state",
    note = "wrap shared state in an `Arc` (e.g. `State(db): State<Arc<Db>>`) and register it with `McpServer::builder().state(value)`"
)]
pub trait StateValue: Clone + Send + Sync + 'static {}

impl<T: Clone + Send + Sync + 'static> StateValue for T {}

/// Fetches `State<T>` for an injected argument; called at the state type's span.
///
/// # Errors
/// `-32603` naming the type when no such state was registered.
pub fn state_arg<T: StateValue>(ctx: &InvokeContext) -> Result<State<T>, ErrorObject> {
    state::<T>(ctx)
}
