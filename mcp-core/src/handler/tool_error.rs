//! [`ToolError`]: a tool's typed failure — a code from the application's
//! taxonomy, a message safe to show the model, and details that stay in
//! the server's log.

use std::fmt;

use serde_json::{json, Map, Value};

use super::tool::IntoToolResult;
use crate::protocol::CallToolResult;

/// A tool failure the model sees as an error result (`isError: true`)
/// carrying `structuredContent` `{code, message, retryable, hint?, errorId}`.
/// The [`detail`](Self::detail) (an error chain, internals) is logged
/// through `tracing` with the same `errorId`, never sent.
///
/// Return it as a tool's error type: `Result<T, ToolError>`.
///
/// ```
/// use mcp_core::ToolError;
///
/// fn lookup(city: &str) -> Result<String, ToolError> {
///     std::fs::read_to_string(format!("/data/{city}.json")).map_err(|e| {
///         ToolError::new("NOT_FOUND", format!("no forecast for {city}"))
///             .hint("try a larger city nearby")
///             .detail(&e)
///     })
/// }
/// # let _ = lookup;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    code: String,
    message: String,
    retryable: bool,
    hint: Option<String>,
    detail: Option<String>,
}

impl ToolError {
    /// A failure with an application `code` (`NOT_FOUND`,
    /// `RATE_LIMITED`, …) and a `message` safe for the model.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable: false,
            hint: None,
            detail: None,
        }
    }

    /// The call may succeed if retried.
    #[must_use]
    pub fn retryable(mut self) -> Self {
        self.retryable = true;
        self
    }

    /// What the model could do about it.
    #[must_use]
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// The cause, logged with the error id and never sent (its source chain
    /// included, as `{:#}` shows `anyhow` errors).
    #[must_use]
    pub fn detail(mut self, cause: &dyn fmt::Display) -> Self {
        self.detail = Some(format!("{cause:#}"));
        self
    }

    /// The application code.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The error result, with a fresh error id (the detail logged with it).
    pub fn into_result(self) -> CallToolResult {
        let id = crate::panic::error_id();
        if let Some(detail) = &self.detail {
            tracing::warn!(error_id = %id, code = %self.code, detail = %detail, "tool error");
        }
        typed_error(
            &self.code,
            &self.message,
            self.retryable,
            self.hint.as_deref(),
            &id,
        )
    }
}

/// The error result of a classified failure: text `CODE: message (error
/// id …)` and `structuredContent` with the same fields.
pub(crate) fn typed_error(
    code: &str,
    message: &str,
    retryable: bool,
    hint: Option<&str>,
    id: &str,
) -> CallToolResult {
    let mut structured = Map::new();
    structured.insert("code".into(), json!(code));
    structured.insert("message".into(), json!(message));
    structured.insert("retryable".into(), json!(retryable));
    if let Some(hint) = hint {
        structured.insert("hint".into(), Value::String(hint.to_owned()));
    }
    structured.insert("errorId".into(), json!(id));
    CallToolResult::error(format!("{code}: {message} (error id {id})")).with_structured(structured)
}

impl<T: IntoToolResult> IntoToolResult for Result<T, ToolError> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(e) => e.into_result(),
        }
    }

    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }
}
