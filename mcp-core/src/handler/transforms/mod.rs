//! Tool transforms: a mounted server's tools adapted without forking it.
//!
//! A [`ToolTransforms`] set renames, hides, re-describes and re-annotates
//! tools, and gives their arguments defaults, fixed values or new names.
//! The same set is applied, by one function, to an in-process mount
//! ([`McpServerBuilder::mount_with`](crate::McpServerBuilder::mount_with))
//! and to a proxied backend (`ProxyOptions::transforms`, feature `client`,
//! applied again on every refresh of the backend's listing). What a caller
//! lists is the transformed tool; what the mounted tool receives is the
//! arguments it was written for. The guide chapter
//! `mcp_core::guide::transforms` walks through an example.

mod rewrite;

pub(crate) use rewrite::{apply, Transformed};

use std::fmt;

use serde_json::Value;

use crate::protocol::ToolAnnotations;

/// Per-mount changes to tools, each naming a tool (and its arguments) as
/// the mounted server lists it, before any mount prefix: `rename("echo",
/// "say")` under the prefix `demo` serves `demo_echo` as `demo_say`.
///
/// ```
/// use mcp_core::handler::ToolTransforms;
/// use serde_json::json;
///
/// let transforms = ToolTransforms::new()
///     .rename("echo", "say")
///     .hide("confirm")
///     .describe("slow", "Counts a few steps, quickly")
///     .default("slow", "steps", json!(3))
///     .fix("slow", "delay_ms", json!(10));
/// assert!(!transforms.is_empty());
/// ```
///
/// Every transform of a tool applies to the tool as a whole or not at all:
/// a problem ([`TransformProblem`]) fails
/// [`McpServerBuilder::build`](crate::McpServerBuilder::build) for a mount,
/// and for a proxied backend (where the backend's listing may change under
/// the transforms) the tool whose argument transforms cannot be applied is
/// not served, so a fixed argument is never left open to callers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTransforms {
    /// Each named tool's changes, in the order first named.
    pub(crate) tools: Vec<(String, ToolEdit)>,
}

/// The changes to one tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ToolEdit {
    pub(crate) rename: Option<String>,
    pub(crate) hide: bool,
    pub(crate) description: Option<String>,
    pub(crate) title: Option<String>,
    pub(crate) annotations: Option<ToolAnnotations>,
    /// Each named argument's changes, in the order first named.
    pub(crate) args: Vec<(String, ArgEdit)>,
}

/// The changes to one argument.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ArgEdit {
    pub(crate) default: Option<Value>,
    pub(crate) fixed: Option<Value>,
    pub(crate) rename: Option<String>,
}

impl ToolTransforms {
    /// No transforms: every tool served as the mounted server lists it.
    pub fn new() -> Self {
        Self { tools: Vec::new() }
    }

    /// True when no transform is set.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// True when tool `name` is hidden.
    pub(crate) fn hides(&self, name: &str) -> bool {
        self.tools.iter().any(|(n, edit)| n == name && edit.hide)
    }

    fn tool(&mut self, name: impl Into<String>) -> &mut ToolEdit {
        let name = name.into();
        let at = match self.tools.iter().position(|(n, _)| *n == name) {
            Some(at) => at,
            None => {
                self.tools.push((name, ToolEdit::default()));
                self.tools.len() - 1
            }
        };
        &mut self.tools[at].1
    }

    fn arg(&mut self, tool: impl Into<String>, arg: impl Into<String>) -> &mut ArgEdit {
        let args = &mut self.tool(tool).args;
        let arg = arg.into();
        let at = match args.iter().position(|(n, _)| *n == arg) {
            Some(at) => at,
            None => {
                args.push((arg, ArgEdit::default()));
                args.len() - 1
            }
        };
        &mut args[at].1
    }

    /// Serves tool `from` as `to` (1 to 128 of `A-Z a-z 0-9 _ - .`; under
    /// a mount prefix, `to` gets the prefix too). A name another tool of the
    /// mount ends up with is a [`TransformProblem::NameTaken`].
    #[must_use]
    pub fn rename(mut self, from: impl Into<String>, to: impl Into<String>) -> Self {
        self.tool(from).rename = Some(to.into());
        self
    }

    /// Leaves tool `name` out: it is not listed, and calling it gets the
    /// same error as a tool that never existed.
    #[must_use]
    pub fn hide(mut self, name: impl Into<String>) -> Self {
        self.tool(name).hide = true;
        self
    }

    /// Replaces tool `name`'s description (what the model reads).
    #[must_use]
    pub fn describe(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.tool(name).description = Some(text.into());
        self
    }

    /// Replaces tool `name`'s human-readable title.
    #[must_use]
    pub fn title(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.tool(name).title = Some(text.into());
        self
    }

    /// Replaces tool `name`'s behaviour annotations.
    #[must_use]
    pub fn annotations(mut self, name: impl Into<String>, annotations: ToolAnnotations) -> Self {
        self.tool(name).annotations = Some(annotations);
        self
    }

    /// Gives argument `arg` of `tool` a default: the argument becomes
    /// optional in the listed schema (out of `required`, with the schema's
    /// `default` set to `value`), and a call that leaves it out (or sends
    /// `null` for it) gets `value`. The value must fit the argument's
    /// schema ([`TransformProblem::BadValue`]). Top-level arguments only.
    #[must_use]
    pub fn default(
        mut self,
        tool: impl Into<String>,
        arg: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        self.arg(tool, arg).default = Some(value.into());
        self
    }

    /// Fixes argument `arg` of `tool` to `value`: the argument leaves the
    /// listed schema, every call gets `value`, and a caller that sends it
    /// anyway gets an `Invalid arguments` tool error (never a silent
    /// override). The value must fit the argument's schema.
    #[must_use]
    pub fn fix(
        mut self,
        tool: impl Into<String>,
        arg: impl Into<String>,
        value: impl Into<Value>,
    ) -> Self {
        self.arg(tool, arg).fixed = Some(value.into());
        self
    }

    /// Lists argument `from` of `tool` as `to` (in `properties` and
    /// `required`); a call's `to` reaches the tool as `from`, and a call
    /// that sends `from` gets an `Invalid arguments` tool error naming `to`.
    #[must_use]
    pub fn rename_arg(
        mut self,
        tool: impl Into<String>,
        from: impl Into<String>,
        to: impl Into<String>,
    ) -> Self {
        self.arg(tool, from).rename = Some(to.into());
        self
    }
}

/// A transform that cannot be applied to the tools it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransformProblem {
    /// A transform names a tool the mounted server does not list.
    UnknownTool(String),
    /// A transform names an argument that is not in the tool's schema
    /// `properties`.
    UnknownArgument {
        /// The tool, by its own name.
        tool: String,
        /// The argument.
        argument: String,
    },
    /// A rename (of a tool, or of one of its arguments) to a name that is
    /// already taken: the tool (or argument) keeps its own name.
    NameTaken {
        /// The tool, by its own name.
        tool: String,
        /// The argument renamed, if it is one.
        argument: Option<String>,
        /// The name it was to get.
        name: String,
    },
    /// A rename to a name that is not 1 to 128 of `A-Z a-z 0-9 _ - .`.
    InvalidName {
        /// The tool, by its own name.
        tool: String,
        /// The name it was to get.
        name: String,
    },
    /// A default or fixed value that the argument's own schema refuses.
    BadValue {
        /// The tool, by its own name.
        tool: String,
        /// The argument.
        argument: String,
        /// The checker's complaint.
        reason: String,
    },
    /// Transforms of one argument that cannot go together (a fixed value
    /// with a default or a new name), a default or fixed value for a
    /// state handle (it would skip the handle's ownership check), or an
    /// argument transform of a mounted tool that the mounted server's own
    /// interceptors run for (they would see the arguments as the caller
    /// sends them, not as the tool gets them).
    Conflict {
        /// The tool, by its own name.
        tool: String,
        /// The argument.
        argument: String,
        /// Why.
        reason: String,
    },
    /// A mount's transform names a tool forwarded from a proxied backend:
    /// the backend's refreshes rebuild its tools from the proxy's own
    /// transforms (`ProxyOptions::transforms`, feature `client`), which is
    /// where the transform belongs.
    Proxied(String),
}

impl fmt::Display for TransformProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownTool(tool) => write!(f, "no tool `{tool}` to transform"),
            Self::UnknownArgument { tool, argument } => write!(
                f,
                "tool `{tool}` has no argument `{argument}` in its input schema"
            ),
            Self::NameTaken {
                tool,
                argument: None,
                name,
            } => write!(
                f,
                "tool `{tool}` cannot be renamed `{name}`: another tool has that name"
            ),
            Self::NameTaken {
                tool,
                argument: Some(argument),
                name,
            } => write!(
                f,
                "argument `{argument}` of tool `{tool}` cannot be renamed `{name}`: another argument has that name"
            ),
            Self::InvalidName { tool, name } => write!(
                f,
                "tool `{tool}` cannot be renamed `{name}`: use 1 to 128 of A-Z a-z 0-9 _ - ."
            ),
            Self::BadValue {
                tool,
                argument,
                reason,
            } => write!(
                f,
                "argument `{argument}` of tool `{tool}`: the value does not fit its schema: {reason}"
            ),
            Self::Conflict {
                tool,
                argument,
                reason,
            } => write!(f, "argument `{argument}` of tool `{tool}`: {reason}"),
            Self::Proxied(tool) => write!(
                f,
                "tool `{tool}` is forwarded from a proxied backend, whose refreshes would undo a mount's transform: give it in the backend's ProxyOptions::transforms instead"
            ),
        }
    }
}

impl std::error::Error for TransformProblem {}
