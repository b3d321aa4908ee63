//! A handler's error reaches the client with its source chain, bounded:
//! an `anyhow` tool error shows its context and its cause (`{:#}`), a
//! `std::error::Error` turned into an `ErrorObject` by `?` shows every
//! `source()`, and a huge message is cut at a character boundary with `…`.

use std::fmt;

use mcp_core::protocol::MAX_ERROR_TEXT;
use mcp_core::{protocol::ErrorObject, InvokeContext, McpServer, McpToolDef};
use serde_json::{json, Map, Value};

fn server(tool: McpToolDef) -> McpServer {
    McpServer::builder()
        .server_info("errors-test", "1.0.0")
        .tool(tool)
        .build()
        .expect("valid server")
}

fn text(result: &mcp_core::protocol::CallToolResult) -> String {
    let value = serde_json::to_value(result).expect("serializable");
    assert_eq!(value["isError"], true, "{value}");
    value["content"][0]["text"]
        .as_str()
        .expect("a text block")
        .to_owned()
}

#[tokio::test]
async fn an_anyhow_tool_error_shows_its_context_and_its_cause() {
    let tool = McpToolDef::new(
        "read_config",
        "reads the config",
        json!({"type": "object"}),
        |_args: Map<String, Value>, _ctx: InvokeContext| async move {
            Err::<String, anyhow::Error>(
                anyhow::anyhow!("disk").context("reading /nope/config.toml"),
            )
        },
    );
    let result = server(tool)
        .call_tool("read_config", json!({}))
        .await
        .expect("a tool result, not a protocol error");
    let text = text(&result);
    assert!(text.contains("reading /nope/config.toml"), "{text}");
    assert!(text.contains("disk"), "{text}");
    assert_eq!(text, "reading /nope/config.toml: disk");
}

/// An error with a cause, as libraries write them: the cause is only
/// reachable through `source()`.
#[derive(Debug)]
struct LoadError {
    path: &'static str,
    cause: std::io::Error,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loading {}", self.path)
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.cause)
    }
}

fn load() -> Result<String, LoadError> {
    Err(LoadError {
        path: "/nope/data.json",
        cause: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
    })
}

fn handler_with_question_mark() -> Result<String, ErrorObject> {
    let data = load()?;
    Ok(data)
}

#[test]
fn a_std_error_keeps_its_source_chain_through_question_mark() {
    let error = handler_with_question_mark().expect_err("fails");
    assert_eq!(error.code, -32603);
    assert_eq!(error.message, "loading /nope/data.json: no such file");
}

#[tokio::test]
async fn a_std_error_from_a_tool_keeps_its_source_chain() {
    let tool = McpToolDef::new(
        "load",
        "loads data",
        json!({"type": "object"}),
        |_args: Map<String, Value>, _ctx: InvokeContext| async move { handler_with_question_mark() },
    );
    // A tool's `Err` is a tool error result the model reads.
    let result = server(tool)
        .call_tool("load", json!({}))
        .await
        .expect("a tool result");
    let text = text(&result);
    assert!(
        text.contains("loading /nope/data.json: no such file"),
        "{text}"
    );
}

#[tokio::test]
async fn a_huge_error_message_is_cut_at_a_char_boundary() {
    // Multi-byte characters, so a cut at the byte limit would split one.
    let huge = "é".repeat(10 * MAX_ERROR_TEXT);
    let tool = McpToolDef::new(
        "huge",
        "fails loudly",
        json!({"type": "object"}),
        move |_args: Map<String, Value>, _ctx: InvokeContext| {
            let huge = huge.clone();
            async move { Err::<String, anyhow::Error>(anyhow::anyhow!(huge).context("context")) }
        },
    );
    let result = server(tool)
        .call_tool("huge", json!({}))
        .await
        .expect("a tool result");
    let text = text(&result);
    assert!(text.len() <= MAX_ERROR_TEXT, "{} bytes", text.len());
    assert!(text.len() > MAX_ERROR_TEXT - 8, "{} bytes", text.len());
    assert!(text.starts_with("context: éé"), "{}", &text[..40]);
    assert!(text.ends_with('…'));

    let io = std::io::Error::other("x".repeat(3 * MAX_ERROR_TEXT));
    let error = ErrorObject::from(io);
    assert!(error.message.len() <= MAX_ERROR_TEXT);
    assert!(error.message.ends_with('…'));
}
