//! The handler layer: what a handler may return (the `Into…` traits), the
//! requests resource and prompt handlers receive, argument checking,
//! schemas, URI templates, and the transforms that adapt a mounted
//! server's tools ([`ToolTransforms`]). The descriptors themselves
//! ([`McpToolDef`](crate::McpToolDef), [`McpResourceDef`](crate::McpResourceDef),
//! [`McpPromptDef`](crate::McpPromptDef)) and [`State`](crate::State) are at
//! the crate root.

pub(crate) mod args;
pub(crate) mod handle_args;
pub(crate) mod prompt;
pub(crate) mod resource;
pub(crate) mod result_limit;
pub(crate) mod state;
pub(crate) mod tool;
pub(crate) mod tool_error;
pub(crate) mod transforms;
pub(crate) mod uri_template;

pub use crate::boxed::BoxFuture;
pub use crate::schema::{schema_for, schema_with};
pub use crate::server::CompletionRequest;
pub use args::{describe, parse_args};
pub use prompt::{IntoPromptResult, PromptArgs};
pub use resource::{IntoResourceContents, ResourceRequest};
pub use result_limit::ResultLimit;
pub use tool::IntoToolResult;
pub use transforms::{ToolTransforms, TransformProblem};
pub use uri_template::{UriTemplate, UriTemplateError};

/// Why [`parse_args`] refused a tool's arguments: every problem found (up
/// to eight), or the deserializer's complaint. [`Display`](std::fmt::Display)
/// gives the text a tool result reports (`Invalid arguments: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgsError(pub(crate) String);

impl ArgsError {
    /// The report's text.
    pub fn message(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for ArgsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ArgsError {}

/// Appends `scopes` to a descriptor's, dropping repeats (the `with_scopes`
/// of tools, resources and prompts).
pub(crate) fn add_scopes<I, S>(into: &mut Vec<String>, scopes: I)
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    for scope in scopes {
        let scope = scope.into();
        if !into.contains(&scope) {
            into.push(scope);
        }
    }
}
