//! Wire types: JSON-RPC framing and the MCP messages this server handles.
//!
//! Nothing in this module performs I/O or depends on the dispatcher.

pub mod base64;
pub mod content;
pub mod jsonrpc;
pub mod lifecycle;
pub mod prompts;
pub mod resources;
pub mod tools;
pub mod version;

pub use content::{Annotations, Content, Icon, Role};
pub use jsonrpc::{
    fail, is_notification, notification, ok, ErrorObject, MessageKind, RequestId, RPC_ERRORS,
};
pub use lifecycle::{ClientCapabilities, ClientInfo, Implementation};
pub use prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};
pub use resources::{Resource, ResourceContents, ResourceTemplate};
pub use tools::{CallToolResult, Tool, ToolAnnotations};
pub use version::{negotiate_version, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS};
