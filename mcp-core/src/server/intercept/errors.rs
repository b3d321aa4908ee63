//! [`ErrorMapping`]: every failed tool call classified into a code
//! taxonomy, with a safe message and an error id; the full error stays in
//! the server's log.

use super::{Answer, Hook, Interceptor, Next, Operation, Operations, Outcome, Request};
use crate::handler::tool_error::typed_error;
use crate::protocol::CallToolResult;

/// Classifies every error result of `tools/call`:
///
/// - a [`ToolError`](crate::ToolError) keeps its code and message (it is
///   already classified, with its error id);
/// - arguments refused by the tool's own checks become `VALIDATION_ERROR`,
///   message kept (it names the argument and the fix; it holds no
///   internals), with a hint to check the input schema;
/// - anything else (an `anyhow` chain, an I/O error's text, …) becomes
///   `INTERNAL_ERROR` with the message `Internal error`, retryable: its
///   text is logged through `tracing` with the error id the model gets,
///   and never sent.
///
/// The result's text is `CODE: message (error id …)` and its
/// `structuredContent` is `{code, message, retryable, hint?, errorId}`.
/// Successful results and JSON-RPC errors pass unchanged (a handler panic
/// is already a `-32603` with an error id).
///
/// ```
/// use mcp_core::intercept::ErrorMapping;
/// let server = mcp_core::McpServer::builder().interceptor(ErrorMapping::new()).build();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ErrorMapping;

impl ErrorMapping {
    /// The mapping (it has no settings).
    pub fn new() -> Self {
        Self
    }
}

/// The prefix of the tools' own argument errors (`handler::args`).
const INVALID_ARGUMENTS: &str = "Invalid arguments";

impl Interceptor for ErrorMapping {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        Hook::wrap(async move {
            let tool = req.tool_name().unwrap_or_default().to_owned();
            match next.run(req).await {
                Outcome::Answer(Answer::Tool(result)) if result.is_error() => {
                    Outcome::tool(classify(&tool, result))
                }
                other => other,
            }
        })
    }
}

fn classify(tool: &str, result: CallToolResult) -> CallToolResult {
    let typed = result
        .structured_content
        .as_ref()
        .is_some_and(|s| s.get("code").is_some() && s.get("errorId").is_some());
    if typed {
        return result;
    }
    let text = result.text_content();
    let id = crate::panic::error_id();
    if text.starts_with(INVALID_ARGUMENTS) {
        return typed_error(
            "VALIDATION_ERROR",
            &text,
            false,
            Some("check the arguments against the tool's input schema"),
            &id,
        );
    }
    tracing::error!(error_id = %id, tool, detail = %text, "tool failed");
    typed_error("INTERNAL_ERROR", "Internal error", true, None, &id)
}
