//! The macros' generated code under the strictest lints: this file is
//! checked by `cargo clippy -p trybuild-tests --all-targets -- -D warnings
//! -W clippy::pedantic` (trybuild does not run clippy), and its test checks
//! that every descriptor builds into a server.

#![deny(missing_docs, unsafe_code, warnings)]
#![deny(clippy::all, clippy::pedantic)]
#![deny(rust_2018_idioms, unused_qualifications, missing_debug_implementations)]

use std::sync::Arc;

use mcp_core::{
    mcp_prompt, mcp_resource, mcp_tool,
    protocol::{
        CallToolResult, Content, ErrorObject, GetPromptResult, PromptMessage, ResourceContents,
    },
    InvokeContext, Json, McpServer, State,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of [`search`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,
    /// How many results.
    pub limit: Option<u32>,
}

/// A point.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Point {
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
}

/// A structured result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Hits {
    /// How many.
    pub count: usize,
}

/// Shared configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// A prefix.
    pub prefix: String,
}

/// Echo the input back.
#[mcp_tool(title = "Echo", read_only, idempotent = true, destructive = false)]
pub async fn echo(
    #[arg(description = "The text")] text: String,
    /// How many times.
    times: Option<u32>,
    State(config): State<Config>,
) -> String {
    tokio::task::yield_now().await;
    config.prefix + &text.repeat(times.unwrap_or(1) as usize)
}

/// Search with a struct of arguments.
#[mcp_tool(open_world, keep_defs)]
#[must_use]
pub fn search(ctx: &InvokeContext, #[args] args: SearchArgs) -> Json<Hits> {
    let SearchArgs { query, limit } = args;
    let _ = ctx;
    Json(Hits {
        count: query.len() + limit.unwrap_or_default() as usize,
    })
}

/// Distance of a point, scaled.
#[mcp_tool]
#[must_use]
#[allow(clippy::needless_pass_by_value)] // on the user's function, not generated code
pub fn distance(point: Point, scale: f64) -> String {
    (point.x.hypot(point.y) * scale).to_string()
}

/// A fallible tool.
///
/// # Errors
/// When asked to fail.
#[mcp_tool(name = "may-fail", icon = "https://example.com/i.png", meta = "{}")]
pub fn fallible(fail: bool) -> Result<Vec<Content>, String> {
    if fail {
        Err("failed".to_owned())
    } else {
        Ok(vec![Content::text("fine")])
    }
}

/// A full result, taking the context by value.
#[mcp_tool]
#[must_use]
#[allow(clippy::needless_pass_by_value)]
pub fn full(ctx: InvokeContext) -> CallToolResult {
    CallToolResult::text(ctx.is_cancelled().to_string())
}

/// Nothing at all.
#[mcp_tool]
pub fn nothing() {}

/// Called by its MCP Apps view only.
#[mcp_tool(ui = "ui://charts/view.html", ui_visibility = "app")]
pub fn app_only() {}

/// The notes.
#[mcp_resource(uri = "notes://all", mime_type = "text/markdown", title = "Notes")]
#[must_use]
pub fn notes() -> &'static str {
    "# Notes"
}

/// Bytes.
#[mcp_resource(uri = "blob://one")]
#[must_use]
pub fn blob() -> Vec<u8> {
    vec![1, 2, 3]
}

/// One day's log.
#[mcp_resource(uri = "logs://{day}/{level}", name = "log")]
pub async fn day_log(day: u32, level: String, ctx: InvokeContext) -> Vec<ResourceContents> {
    tokio::task::yield_now().await;
    vec![ResourceContents::text(
        "",
        format!("{day} {level} {}", ctx.is_cancelled()),
    )]
}

/// A fallible read.
///
/// # Errors
/// Always.
#[mcp_resource(uri = "notes://missing")]
pub fn missing(State(config): State<Arc<Config>>) -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params(config.prefix.clone()))
}

/// Plan.
#[mcp_prompt(title = "Plan")]
#[must_use]
pub fn plan(
    /// Who it is for.
    who: &InvokeContext,
    name: String,
    focus: Option<String>,
) -> Vec<PromptMessage> {
    let _ = who;
    vec![PromptMessage::user(name + &focus.unwrap_or_default())]
}

/// A prompt without arguments.
#[mcp_prompt(name = "hello", description = "Say hello")]
#[must_use]
pub fn hello() -> GetPromptResult {
    GetPromptResult::new(vec![PromptMessage::assistant("Hello")])
}

/// A fallible prompt.
///
/// # Errors
/// Without a mood.
#[mcp_prompt]
pub async fn mood(mood: Option<String>) -> Result<String, ErrorObject> {
    tokio::task::yield_now().await;
    mood.ok_or_else(|| ErrorObject::invalid_params("say how you feel"))
}

#[test]
fn every_descriptor_builds_into_a_server() {
    let server = McpServer::builder()
        .tool(echo::tool())
        .tool(search::tool())
        .tool(distance::tool())
        .tool(fallible::tool())
        .tool(full::tool())
        .tool(nothing::tool())
        .tool(app_only::tool())
        .app_view(mcp_core::apps::AppView::new(
            "ui://charts/view.html",
            "Chart",
            "<svg></svg>",
        ))
        .resource(notes::resource())
        .resource(blob::resource())
        .resource(day_log::resource())
        .resource(missing::resource())
        .prompt(plan::prompt())
        .prompt(hello::prompt())
        .prompt(mood::prompt())
        .state(Config {
            prefix: String::new(),
        })
        .state(Arc::new(Config {
            prefix: "x".to_owned(),
        }))
        .build()
        .expect("valid server");
    assert_eq!(server.list_tools().len(), 7);
}
