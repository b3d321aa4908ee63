//! Generated code compiles under strict lints in the user's crate.

#![deny(missing_docs, unsafe_code, warnings, missing_debug_implementations)]
#![deny(rust_2018_idioms, unused_qualifications, trivial_casts, unused_results)]
#![forbid(unsafe_code)]

use mcp_core::{mcp_prompt, mcp_resource, mcp_tool, InvokeContext, Json, McpServer, State, protocol::PromptMessage};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Arguments of [`search`].
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchArgs {
    /// What to look for.
    pub query: String,
}

/// A search hit count.
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
#[mcp_tool]
pub async fn echo(text: String, limit: Option<u32>, State(config): State<Config>) -> String {
    format!("{}{text}{}", config.prefix, limit.unwrap_or_default())
}

/// Search.
#[mcp_tool(read_only)]
pub fn search(args: SearchArgs, ctx: &InvokeContext) -> Json<Hits> {
    let _ = ctx;
    Json(Hits {
        count: args.query.len(),
    })
}

/// A fallible tool.
#[mcp_tool]
pub fn fallible() -> Result<(), String> {
    Ok(())
}

/// The notes.
#[mcp_resource(uri = "notes://all", mime_type = "text/markdown")]
pub fn notes() -> &'static str {
    "# Notes"
}

/// One day's log.
#[mcp_resource(uri = "logs://{day}")]
pub async fn day_log(day: u32, ctx: InvokeContext) -> String {
    let _ = ctx;
    format!("day {day}")
}

/// Plan.
#[mcp_prompt]
pub fn plan(who: String, focus: Option<String>) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("{who} {focus:?}"))]
}

/// A prompt without arguments.
#[mcp_prompt]
pub fn hello() -> String {
    "Hello".to_owned()
}

fn main() {
    let _server = McpServer::builder()
        .tool(echo::tool())
        .tool(search::tool())
        .tool(fallible::tool())
        .resource(notes::resource())
        .resource(day_log::resource())
        .prompt(plan::prompt())
        .prompt(hello::prompt())
        .state(Config {
            prefix: String::new(),
        })
        .build()
        .expect("valid server");
}
