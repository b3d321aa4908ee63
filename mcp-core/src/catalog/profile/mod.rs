//! Schema profiles: what the models and clients that consume a listing
//! accept, checked rule by rule.
//!
//! Each [`Profile`] lists every incompatibility of a server's tools as an
//! [`Issue`] with the tool, a JSON Pointer into the tool, and the rule it
//! breaks. The rules follow the providers' published documentation, as read
//! for this release (each rule's docs name its source); a provider that
//! loosens a rule makes a check stricter than needed, never looser.
//!
//! - [`Profile::OpenAiStrict`]: OpenAI function calling with
//!   `strict: true` (the "Supported schemas" section of the Structured
//!   Outputs guide, and the function-calling guide's name rule and tool cap).
//! - [`Profile::Gemini`]: Gemini function declarations (the `Schema`
//!   object of the Gemini API reference, an OpenAPI 3.0 subset, and the
//!   `FunctionDeclaration.name` rule).
//! - [`Profile::Anthropic`]: Anthropic tool use (the tool definition's
//!   `name` regex and the `input_schema` shape).
//! - [`Profile::Mcp`]: the MCP spec's tool-name guidance (2025-11-25).
//! - [`Profile::Cursor`], [`Profile::VsCode`]: documented client limits.
//!
//! [`strict`] rewrites a schema into the OpenAI strict form where a
//! faithful rewrite exists, and maps the model's arguments back.

mod rules;
pub mod strict;

use std::fmt;

use serde_json::Value;

/// A model provider's or client's expectations of a tool listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Profile {
    /// OpenAI function calling in strict mode.
    OpenAiStrict,
    /// Gemini function declarations.
    Gemini,
    /// Anthropic tool use.
    Anthropic,
    /// The MCP specification's guidance on tool names.
    Mcp,
    /// Cursor's documented limits (40 tools; server and tool name within 60 characters).
    Cursor,
    /// VS Code's documented limit (128 tools in one request).
    VsCode,
}

/// Every profile, in a stable order.
pub const ALL: &[Profile] = &[
    Profile::OpenAiStrict,
    Profile::Gemini,
    Profile::Anthropic,
    Profile::Mcp,
    Profile::Cursor,
    Profile::VsCode,
];

/// One incompatibility of a listing with a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The tool (empty for a rule on the whole listing).
    pub tool: String,
    /// A JSON Pointer into the tool (`/inputSchema/properties/units`).
    pub path: String,
    /// The rule's identifier (`openai.strict.required`, …).
    pub rule: &'static str,
    /// What is wrong, and the fix.
    pub message: String,
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.tool.is_empty() {
            write!(f, "[{}] {}", self.rule, self.message)
        } else {
            write!(
                f,
                "[{}] {}{}: {}",
                self.rule, self.tool, self.path, self.message
            )
        }
    }
}

impl Profile {
    /// The profile's name on the command line (`openai-strict`, `gemini`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai-strict",
            Self::Gemini => "gemini",
            Self::Anthropic => "anthropic",
            Self::Mcp => "mcp",
            Self::Cursor => "cursor",
            Self::VsCode => "vscode",
        }
    }

    /// The profile named `name` (see [`Profile::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        ALL.iter().copied().find(|p| p.name() == name)
    }

    /// Every issue of `tools` (listing items, as `tools/list` returns them)
    /// with this profile. `server_name` is the name a client shows the
    /// server under (Cursor counts it in its name limit).
    pub fn check(self, tools: &[Value], server_name: &str) -> Vec<Issue> {
        let mut issues = Vec::new();
        rules::check(self, tools, server_name, &mut issues);
        issues
    }
}

/// Checks `server`'s tools (as a 2026-07-28 client lists them) against
/// `profile`.
///
/// # Panics
/// When any tool breaks a rule of the profile, listing every issue — it is
/// a test assertion.
///
/// # Cancel safety
/// Dropping the future only stops reading the catalog.
pub async fn assert_profile(server: &crate::McpServer, profile: Profile) {
    let tools = super::newest_tools(server).await;
    let issues = profile.check(&tools, &server.info().name);
    if !issues.is_empty() {
        let lines: Vec<String> = issues.iter().map(ToString::to_string).collect();
        panic!(
            "{} tool issue(s) with the {} profile:\n{}",
            issues.len(),
            profile.name(),
            lines.join("\n")
        );
    }
}
