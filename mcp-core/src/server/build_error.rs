//! [`BuildError`]: what `McpServerBuilder::build` (and a live catalog's
//! changes) can refuse.

use std::fmt;

/// A problem found while building a server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools share a name.
    DuplicateTool(String),
    /// Two prompts share a name.
    DuplicatePrompt(String),
    /// Two resources share a URI, or two templates share a URI template.
    DuplicateResource(String),
    /// A resource template could not be parsed.
    InvalidUriTemplate {
        /// The template as written.
        template: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A tool, resource or prompt takes `State<T>` (or declared it with
    /// `requires_state::<T>()`) and no `T` was registered with
    /// [`McpServerBuilder::state`](super::McpServerBuilder::state).
    MissingState {
        /// The handler: `tool `name``, `resource `uri`` or `prompt `name``.
        handler: String,
        /// The state type, as `std::any::type_name` spells it.
        type_name: &'static str,
    },
    /// A tool's input schema is not an object schema (its `type` is not
    /// `"object"`): the arguments of `tools/call` are always a JSON object,
    /// so no call could succeed. Typically an `#[args]` parameter whose type
    /// is an enum of names or a newtype over a string or number: take it as
    /// a plain argument (one property) instead.
    InputSchemaNotAnObject {
        /// The tool name.
        tool: String,
        /// The schema's `type`, as JSON.
        found: String,
    },
    /// [`McpServerBuilder::tool_interceptor`](super::McpServerBuilder::tool_interceptor) names a tool the server does
    /// not have.
    UnknownTool(String),
    /// A live change ([`McpServer::add_tool`](super::McpServer::add_tool),
    /// [`add_resource`](super::McpServer::add_resource),
    /// [`add_prompt`](super::McpServer::add_prompt)) to a part of the catalog
    /// that is fixed: build the server with
    /// [`live_tools`](super::McpServerBuilder::live_tools) or
    /// [`live_catalog`](super::McpServerBuilder::live_catalog).
    CatalogNotLive,
    /// A [`mount`](super::McpServerBuilder::mount) prefix that would make invalid
    /// tool or prompt names: 1 to 64 of `A-Z a-z 0-9 _ - .`.
    InvalidMountPrefix(String),
    /// Two [`mount`](super::McpServerBuilder::mount) prefixes where one
    /// followed by `_` starts the other followed by `_` (equal prefixes,
    /// or `conf` and `conf_test`): a name of one mount could then be a
    /// name of the other (`conf` serving `test_x` and `conf_test` serving
    /// `x` are both `conf_test_x`).
    MountPrefixCollision {
        /// The prefix mounted first.
        first: String,
        /// The prefix that collides with it.
        second: String,
    },
    /// The transforms given to
    /// [`mount_with`](super::McpServerBuilder::mount_with) cannot all be
    /// applied to the mounted server's tools.
    MountTransform {
        /// The mount's prefix.
        prefix: String,
        /// Every problem, tools and arguments named as the mounted server
        /// lists them.
        problems: Vec<crate::handler::TransformProblem>,
    },
    /// A skill (or a skills directory) is not valid: the reason.
    InvalidSkill(String),
    /// MCP Apps ([`crate::apps`]) set up wrongly, the reason naming the
    /// view or tool: a view whose URI is not `ui://`, a CSP entry that is
    /// not an origin, a tool whose `_meta.ui.resourceUri` names no view of
    /// the server, or an empty (or unknown) `_meta.ui.visibility`.
    InvalidApp(String),
    /// The tools break a profile the server requires
    /// (`McpServerBuilder::require_profile`, feature `catalog`).
    ProfileIssues {
        /// The profile's name (`openai-strict`, …).
        profile: String,
        /// Every issue, one line each.
        issues: Vec<String>,
    },
    /// A tool is named `search_tools` or `call_tool` while
    /// [`tool_search`](super::McpServerBuilder::tool_search) is on (those
    /// names are the search tools'); also refused by
    /// [`McpServer::add_tool`](super::McpServer::add_tool).
    ToolSearchNameTaken(String),
    /// A name [`ToolSearch::pin`](crate::tool_search::ToolSearch::pin)
    /// pins is no tool of the server's fixed catalog.
    ToolSearchPinUnknown(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::DuplicateTool(n) => {
                write!(f, "duplicate tool name `{n}`: tool names must be unique")
            }
            Self::DuplicatePrompt(n) => {
                write!(
                    f,
                    "duplicate prompt name `{n}`: prompt names must be unique"
                )
            }
            Self::DuplicateResource(u) => {
                write!(
                    f,
                    "duplicate resource URI `{u}`: resource URIs must be unique"
                )
            }
            Self::InvalidUriTemplate { template, reason } => {
                write!(f, "invalid resource template `{template}`: {reason}")
            }
            Self::MissingState { handler, type_name } => write!(
                f,
                "{handler} takes `State<{type_name}>` but no `{type_name}` was registered: call McpServer::builder().state(value) with one"
            ),
            Self::CatalogNotLive => write!(
                f,
                "this part of the server's catalog is fixed: build it with McpServer::builder().live_catalog() (or .live_tools() for tools only) to add or remove entries while serving"
            ),
            Self::InvalidMountPrefix(p) => write!(
                f,
                "mount prefix `{p}`: use 1 to 64 of A-Z a-z 0-9 _ - . (it starts every mounted tool and prompt name)"
            ),
            Self::MountPrefixCollision { first, second } => write!(
                f,
                "mount prefixes `{first}` and `{second}` collide: one followed by `_` starts the other followed by `_`, so a tool or prompt name under one could be a name under the other; mount them under prefixes where neither does"
            ),
            Self::MountTransform { prefix, problems } => {
                write!(f, "the transforms of mount `{prefix}` cannot be applied:")?;
                for problem in problems {
                    write!(f, "\n- {problem}")?;
                }
                Ok(())
            }
            Self::InvalidSkill(why) => write!(f, "invalid skill: {why}"),
            Self::InvalidApp(why) => write!(f, "invalid MCP App: {why}"),
            Self::ProfileIssues { profile, issues } => write!(
                f,
                "the tools break the {profile} profile this server requires ({} issue(s)):\n{}",
                issues.len(),
                issues.join("\n")
            ),
            Self::ToolSearchNameTaken(n) => write!(
                f,
                "tool `{n}`: with tool search on, `search_tools` and `call_tool` are the search tools' names; rename the tool"
            ),
            Self::ToolSearchPinUnknown(n) => write!(
                f,
                "tool search pins `{n}`, but no tool has that name"
            ),
            Self::UnknownTool(n) => write!(
                f,
                "an interceptor is registered for tool `{n}`, but no tool has that name"
            ),
            Self::InputSchemaNotAnObject { tool, found } => write!(
                f,
                "tool `{tool}`: its input schema has type {found}, but tool arguments are always a JSON object; take the value as a named argument (`fn {tool}(value: T)`) instead of `#[args]`, or make the `#[args]` type a struct"
            ),
        }
    }
}

impl std::error::Error for BuildError {}
