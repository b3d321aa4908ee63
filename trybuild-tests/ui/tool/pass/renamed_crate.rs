//! `crate = "..."` names the runtime through another path: here a crate
//! that re-exports `mcp-core`, depended on under the name `renamed_core`.
//! Nothing below names `mcp_core`, `serde` or `schemars`.

use renamed_core::{mcp_prompt, mcp_resource, mcp_tool, protocol::PromptMessage, McpServer};

/// Add two numbers.
#[mcp_tool(crate = "renamed_core")]
fn add(a: i64, b: Option<i64>) -> String {
    (a + b.unwrap_or(0)).to_string()
}

/// The notes.
#[mcp_resource(uri = "notes://{topic}", crate = "renamed_core")]
fn notes(topic: String) -> String {
    topic
}

/// Plan.
#[mcp_prompt(crate = "renamed_core")]
fn plan(who: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user(who)]
}

fn main() {
    let server = McpServer::builder()
        .tool(add::tool())
        .resource(notes::resource())
        .prompt(plan::prompt())
        .build()
        .expect("valid server");
    assert_eq!(server.list_tools()[0].name, "add");
}
