//! Tool listings and tool-call results.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::Icon;
use super::content::Content;

/// Hints describing how a tool behaves. Clients must not trust them from
/// untrusted servers; they guide presentation and confirmation prompts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool talks to an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool as advertised by `tools/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// The unique name used by `tools/call`.
    pub name: String,
    /// A human-readable title (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does; the model reads this to decide when to call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments object (its root is `type: object`).
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent` (2025-06-18 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons (2025-11-25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// The result of `tools/call`.
///
/// `structured_content` is a JSON object by construction, as the 2024-11-05 …
/// 2025-11-25 revisions require; arrays and scalars belong in `content`.
// Written through `ToolResultWire`, the one list of its members on the
// wire (a 2026-07-28 reply adds `resultType` and the server's `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// The content blocks the model reads.
    pub content: Vec<Content>,
    /// A machine-readable result matching the tool's output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Map<String, Value>>,
    /// True for a tool-level failure the model should read and react to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// A [`CallToolResult`] as written: its members in wire order, with the
/// `resultType` of a 2026-07-28 result and a `_meta` that encoding may
/// replace (adding the server's info). The only place its members are
/// listed for writing.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResultWire<'a, M> {
    #[serde(skip_serializing_if = "Option::is_none")]
    result_type: Option<&'static str>,
    content: &'a [Content],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<M>,
}

impl Serialize for CallToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.wire(None, self.meta.as_ref()).serialize(serializer)
    }
}

impl CallToolResult {
    /// The result as written, with `result_type` (a 2026-07-28 result's
    /// `"complete"`) and `meta` in place of its own `_meta`.
    pub(crate) fn wire<M>(
        &self,
        result_type: Option<&'static str>,
        meta: Option<M>,
    ) -> ToolResultWire<'_, M> {
        ToolResultWire {
            result_type,
            content: &self.content,
            structured_content: self.structured_content.as_ref(),
            is_error: self.is_error,
            meta,
        }
    }

    /// A successful result with the given content blocks.
    pub fn new(content: Vec<Content>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![Content::text(text)])
    }

    /// A tool-level failure (`isError: true`) with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: Some(true),
            ..Self::default()
        }
    }

    /// Sets `structuredContent`.
    #[must_use]
    pub fn with_structured(mut self, value: Map<String, Value>) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// True when `isError` is set.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    /// The concatenated text of all text blocks ([`Content::Raw`] blocks
    /// are parsed for it).
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            match block {
                Content::Raw(raw) => {
                    if let Ok(Content::Text { text, .. }) = raw.parse() {
                        out.push_str(&text);
                    }
                }
                typed => out.push_str(typed.as_text().unwrap_or_default()),
            }
        }
        out
    }
}
