//! Tool search: a catalog too large to list whole is listed as two tools,
//! `search_tools` and `call_tool`, plus the tools you pin.
//!
//! Turned on with
//! [`McpServerBuilder::tool_search`](crate::McpServerBuilder::tool_search):
//!
//! ```
//! use mcp_core::tool_search::ToolSearch;
//! use mcp_core::{McpServer, McpToolDef};
//! use serde_json::json;
//!
//! let echo = McpToolDef::new("echo", "Echo the input back", json!({"type": "object"}), |_, _| async { "hi" });
//! let server = McpServer::builder()
//!     .tool(echo)
//!     .tool_search(ToolSearch::new().pin(["echo"]).default_limit(5))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```
//!
//! - `tools/list` lists `search_tools`, `call_tool` and the pinned tools
//!   the caller may see (a pinned name that is not a tool is a
//!   [`BuildError::ToolSearchPinUnknown`](crate::BuildError::ToolSearchPinUnknown)
//!   for a fixed catalog; with
//!   [`live_tools`](crate::McpServerBuilder::live_tools) it is left out of
//!   the listing until such a tool is added).
//! - `search_tools {query, limit?}` ranks the tools the caller may see
//!   (the same visibility hooks and scopes as `tools/list`) by the terms
//!   of the query (the scoring is described below) and returns up to
//!   `limit` of them (default [`ToolSearch::default_limit`], never more
//!   than [`ToolSearch::max_limit`]), each with its name, title,
//!   description, input schema, annotations and `_meta`: as `structuredContent`
//!   `{"tools": [...]}` (the tool declares its `outputSchema`) and the
//!   same JSON as text. A query without terms lists the first tools.
//!   It reads the catalog as it is at the call: tools added or removed
//!   on a live catalog are found, or not, at once. A tool whose MCP Apps
//!   `_meta.ui.visibility` leaves out `"model"` is never found (a search
//!   result goes to the model). A query longer than 1,024 characters is
//!   an `isError` result.
//! - `call_tool {name, arguments?}` is a `tools/call` of `name`: the
//!   request is rewritten into that call where every `tools/call` enters
//!   the pipeline, before any interceptor, so scopes, the server's and
//!   the tool's interceptors, the argument checks, time limits,
//!   progress, cancellation, tasks and state handles apply exactly as to
//!   a direct call, and so do their errors (an unknown name is
//!   `-32602 Unknown tool`, as is a name of `call_tool` itself or of a
//!   tool kept from the model by its MCP Apps visibility). A missing or
//!   non-string `arguments.name` is `-32602`.
//! - Every tool stays callable directly by its name.
//! - A tool named `search_tools` or `call_tool` cannot be registered
//!   while tool search is on
//!   ([`BuildError::ToolSearchNameTaken`](crate::BuildError::ToolSearchNameTaken),
//!   at build time, from `add_tool` or from a proxied backend's refresh),
//!   and a call of `search_tools` is answered by the search before any
//!   tool is looked up.
//!
//! Over 2026-07-28 HTTP a `call_tool` request carries `Mcp-Name:
//! call_tool` (the name in its body); that is what the transport checks.
//! The inner tool's `Mcp-Param-*` mirrors are not asked for (a client
//! that found the tool by search does not know them); the scope check of
//! the transport (a `403` with an `insufficient_scope` challenge) looks at
//! the inner tool, as for a direct call.
//!
//! # Ranking
//!
//! Text is cut into terms: runs of letters and digits, split again where a
//! lower-case letter or a digit is followed by an upper-case letter, all
//! lower-cased (`getWeather` and `get_weather` are both `get weather`).
//! Each query term is compared with five fields of a tool:
//!
//! | field | weight |
//! |---|---|
//! | name | 6 |
//! | title | 4 |
//! | parameter names (top-level `properties` of the input schema) | 3 |
//! | description | 2 |
//! | parameter descriptions | 1 |
//!
//! A field that holds the term scores twice its weight; one with a term
//! that starts with the query term (three characters or more) scores its
//! weight. A tool's score is the sum over query terms and fields, plus 20
//! when the whole query is the tool's name. Tools scoring 0 are left out;
//! the rest are ordered by score, ties in catalog order. Only the first 32
//! distinct terms of a query count (a query is the client's to choose, and
//! a search costs its terms times the catalog).
//!
//! When tool search is off, it costs one branch per `tools/call`.

pub(crate) mod rank;

use serde_json::{json, Map, Value};

use crate::handler::args::CheckedSchema;
use crate::protocol::{Tool, ToolAnnotations};

/// The name of the search tool.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The name of the tool that calls another by name.
pub const CALL_TOOL: &str = "call_tool";

/// The longest `search_tools` query, in characters (its `maxLength`): a
/// longer one is an `isError` result, refused before it is read.
pub(crate) const MAX_QUERY_CHARS: usize = 1024;

/// Default of [`ToolSearch::default_limit`].
pub const DEFAULT_LIMIT: usize = 8;
/// Default of [`ToolSearch::max_limit`].
pub const DEFAULT_MAX_LIMIT: usize = 50;

/// The settings of tool search (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub struct ToolSearch {
    pinned: Vec<String>,
    default_limit: usize,
    max_limit: usize,
}

impl Default for ToolSearch {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolSearch {
    /// No pinned tools; up to [`DEFAULT_LIMIT`] matches by default and
    /// [`DEFAULT_MAX_LIMIT`] at most.
    pub fn new() -> Self {
        Self {
            pinned: Vec::new(),
            default_limit: DEFAULT_LIMIT,
            max_limit: DEFAULT_MAX_LIMIT,
        }
    }

    /// Tools listed by `tools/list` beside the two search tools (added to
    /// those pinned before; listed in catalog order).
    pub fn pin<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.pinned.extend(names.into_iter().map(Into::into));
        self
    }

    /// How many matches `search_tools` returns when the call gives no
    /// `limit` (at least 1).
    pub fn default_limit(mut self, limit: usize) -> Self {
        self.default_limit = limit.max(1);
        self
    }

    /// The most matches one `search_tools` call returns, whatever its
    /// `limit` (at least 1).
    pub fn max_limit(mut self, limit: usize) -> Self {
        self.max_limit = limit.max(1);
        self
    }

    /// The pinned tool names.
    pub fn pinned(&self) -> &[String] {
        &self.pinned
    }

    /// How many matches a call without `limit` gets (never more than
    /// the maximum).
    pub fn limit(&self) -> usize {
        self.default_limit.min(self.max_limit)
    }

    /// The most matches one call gets.
    pub fn max(&self) -> usize {
        self.max_limit
    }
}

/// Tool search as a built server holds it: the settings, the two tools'
/// descriptors, and the compiled schema of `search_tools`' arguments.
pub(crate) struct Searcher {
    pub(crate) options: ToolSearch,
    /// `search_tools` and `call_tool`, as `tools/list` shows them.
    pub(crate) listed: [Value; 2],
    pub(crate) search_args: CheckedSchema,
}

/// The arguments of `search_tools`.
#[derive(serde::Deserialize)]
pub(crate) struct SearchArgs {
    pub(crate) query: String,
    pub(crate) limit: Option<u64>,
}

impl Searcher {
    /// Tool search with `options`.
    pub(crate) fn new(options: ToolSearch) -> Self {
        let search = search_tool(&options);
        let search_args = CheckedSchema::new(&search.input_schema);
        let listed = [to_json(&search), to_json(&call_tool())];
        Self {
            options,
            listed,
            search_args,
        }
    }

    /// True for a name the two search tools take.
    pub(crate) fn is_reserved(name: &str) -> bool {
        name == SEARCH_TOOLS || name == CALL_TOOL
    }
}

fn to_json(tool: &Tool) -> Value {
    // Our own type always serializes; `null` keeps this total.
    serde_json::to_value(tool).unwrap_or(Value::Null)
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

fn read_only() -> ToolAnnotations {
    ToolAnnotations {
        read_only_hint: Some(true),
        ..ToolAnnotations::default()
    }
}

/// The descriptor of `search_tools`.
fn search_tool(options: &ToolSearch) -> Tool {
    let max = options.max();
    let input_schema = object(json!({
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": MAX_QUERY_CHARS,
                "description": "Words describing what you want to do, or a tool's name"
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": format!(
                    "How many tools to return at most (default {}, at most {max})",
                    options.limit()
                )
            }
        },
        "required": ["query"],
        "additionalProperties": false
    }));
    let output_schema = object(json!({
        "type": "object",
        "properties": {
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "title": {"type": "string"},
                        "description": {"type": "string"},
                        "inputSchema": {"type": "object"},
                        "annotations": {"type": "object"},
                        "_meta": {"type": "object"}
                    },
                    "required": ["name", "inputSchema"]
                }
            }
        },
        "required": ["tools"]
    }));
    Tool {
        name: SEARCH_TOOLS.into(),
        title: Some("Search tools".into()),
        description: Some(
            "Find tools of this server by what they do. Returns the best matches, each with \
             its name, description and input schema; run one with `call_tool`."
                .into(),
        ),
        input_schema,
        output_schema: Some(output_schema),
        annotations: Some(read_only()),
        icons: None,
        meta: None,
    }
}

/// The descriptor of `call_tool`.
fn call_tool() -> Tool {
    let input_schema = object(json!({
        "type": "object",
        "properties": {
            "name": {
                "type": "string",
                "description": "The tool's name, as `search_tools` returned it"
            },
            "arguments": {
                "type": "object",
                "description": "The tool's arguments, following its input schema"
            }
        },
        "required": ["name"]
    }));
    Tool {
        name: CALL_TOOL.into(),
        title: Some("Call a tool".into()),
        description: Some(
            "Call a tool found with `search_tools` by its name, with its arguments.".into(),
        ),
        input_schema,
        output_schema: None,
        annotations: None,
        icons: None,
        meta: None,
    }
}
