//! A prompt function's `Result` takes any `Display` error, as a tool's
//! does: `String`, an own error type, a boxed error (the shape of
//! `anyhow::Result`), and `ErrorObject`.

use mcp_core::{mcp_prompt, McpServer, protocol::{ErrorObject, PromptMessage}};

/// An error with only `Display`.
#[derive(Debug)]
struct Unknown;

impl std::fmt::Display for Unknown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("unknown topic")
    }
}

/// A `String` error.
#[mcp_prompt]
fn string_error(topic: String) -> Result<String, String> {
    Err(format!("no brief on {topic}"))
}

/// An own error type.
#[mcp_prompt]
async fn own_error() -> Result<Vec<PromptMessage>, Unknown> {
    Err(Unknown)
}

/// A boxed error.
#[mcp_prompt]
async fn boxed_error() -> Result<PromptMessage, Box<dyn std::error::Error + Send + Sync>> {
    Err("no brief".into())
}

/// A JSON-RPC error.
#[mcp_prompt]
fn coded_error() -> Result<String, ErrorObject> {
    Err(ErrorObject::invalid_params("bad"))
}

fn main() {
    let _ = McpServer::builder()
        .prompt(string_error::prompt())
        .prompt(own_error::prompt())
        .prompt(boxed_error::prompt())
        .prompt(coded_error::prompt())
        .build();
}
