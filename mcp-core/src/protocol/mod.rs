//! The protocol: JSON-RPC 2.0 framing and the MCP wire types, versions,
//! `_meta` keys, capabilities, log levels and cache hints.
//!
//! Nothing in this module performs I/O or depends on anything above it in
//! the crate (contexts, handlers, the server pipeline, transports).

#[doc(hidden)]
pub mod base64;
mod cache;
mod capabilities;
mod common;
mod content;
pub(crate) mod jsonrpc;
mod lifecycle;
mod logging;
pub mod meta;
mod prompts;
mod resources;
mod tools;
mod version;

pub use cache::{CacheHint, CacheScope};
pub use capabilities::{
    ClientCapabilities, ListCapability, ResourcesCapability, ServerCapabilities,
};
pub use common::{Annotations, Icon, Role};
pub use content::{Content, NotAnObject, RawContent};
pub use jsonrpc::{
    fail, is_notification, notification, ok, ErrorCode, ErrorObject, MessageKind, RequestId,
    MAX_ERROR_TEXT,
};
pub use lifecycle::{ClientInfo, Implementation};
pub use logging::{LoggingLevel, UnknownLevel};
// One public path (`protocol::meta`); the short one is for the crate.
pub(crate) use meta::Era;
pub use prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use resources::{Resource, ResourceContents, ResourceTemplate};
pub use tools::{CallToolResult, Tool, ToolAnnotations};
pub(crate) use version::revision_at_least;
pub use version::{
    negotiate_version, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSIONS, REMOVED_METHODS,
    SUPPORTED_PROTOCOL_VERSIONS,
};
