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
use crate::protocol::{CallToolResult, ErrorObject, Icon, ToolAnnotations};
use crate::state::State;
use crate::tool::{IntoToolResult, McpToolDef};

/// The input schema of a generated arguments struct: always `type: object`.
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
    /// Annotations: read_only, destructive, idempotent, open_world.
    pub hints: [Option<bool>; 4],
    /// Icon URIs.
    pub icons: &'static [&'static str],
    /// `_meta` as JSON text.
    pub meta: Option<&'static str>,
    /// Keep `$defs` instead of inlining.
    pub keep_defs: bool,
}

/// Builds a tool whose arguments are checked against `A`'s schema and
/// deserialized into `A` before `body` runs.
pub fn tool<A, R, F, Fut>(meta: &ToolMeta, body: F) -> McpToolDef
where
    A: DeserializeOwned + schemars::JsonSchema + Send + 'static,
    R: IntoToolResult,
    F: Fn(A, InvokeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
{
    let schema = input_schema::<A>(!meta.keep_defs);
    let checked = schema.as_object().cloned().unwrap_or_default();
    let body = std::sync::Arc::new(body);
    let mut def = McpToolDef::new(meta.name, meta.description, schema, move |args, ctx| {
        let parsed = crate::args::parse_args::<A>(args, &checked);
        let body = std::sync::Arc::clone(&body);
        async move {
            match parsed {
                Ok(args) => body(args, ctx).await.into_tool_result(),
                Err(message) => CallToolResult::error(message),
            }
        }
    });
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
    if let Some(schema) = R::output_schema() {
        def = def.with_output_schema(schema);
    }
    def
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

/// Parses a URI template variable with `FromStr`.
///
/// # Errors
/// `-32602` naming the variable and the value.
pub fn template_var<T: FromStr>(
    vars: &std::collections::HashMap<String, String>,
    name: &str,
) -> Result<T, ErrorObject>
where
    T::Err: std::fmt::Display,
{
    let raw = vars
        .get(name)
        .ok_or_else(|| ErrorObject::invalid_params(format!("missing URI variable `{name}`")))?;
    raw.parse::<T>().map_err(|e| {
        ErrorObject::invalid_params(format!(
            "invalid value {raw:?} for URI variable `{name}`: {e}"
        ))
    })
}

/// Compile-time check that a tool's return type converts into a result.
pub const fn assert_tool_result<T: IntoToolResult>() {}

/// Compile-time check that a resource's return type converts into contents.
pub const fn assert_resource_result<T: crate::resource::IntoResourceContents>() {}

/// Compile-time check that a prompt's return type converts into a result.
pub const fn assert_prompt_result<T: crate::prompt::IntoPromptResult>() {}

/// Compile-time check that a template variable's type parses with `FromStr`.
pub const fn assert_from_str<T: FromStr>() {}
