//! # mcp-core
//!
//! A Model Context Protocol (MCP) server framework: turn plain async Rust
//! functions into tools, resources and prompts, and serve them over stdio.
//!
//! The architecture is one dispatcher and thin transports:
//!
//! - [`protocol`]: JSON-RPC 2.0 and MCP wire types (no I/O).
//! - [`McpServer`]: built from [`McpToolDef`], [`McpResourceDef`] and
//!   [`McpPromptDef`] descriptors; [`McpServer::handle_message`] turns one
//!   message into at most one reply without knowing how it arrived.
//! - [`CallContext`] is what a transport supplies with a message;
//!   [`InvokeContext`] is what a handler receives (cancellation, progress,
//!   elicitation, headers, peer address).
#![cfg_attr(
    feature = "stdio",
    doc = "- [`transport::stdio`]: newline-delimited JSON-RPC over any
  `AsyncRead`/`AsyncWrite` pair, with limits enforced before buffering.
- [`testing`]: an in-process client for unit-testing servers."
)]
// Without the feature those modules do not exist: named, not linked.
#![cfg_attr(
    not(feature = "stdio"),
    doc = "- `transport::stdio` and `testing` (the in-process test client):
  with the `stdio` feature."
)]
//!
//! ```no_run
//! use mcp_core::{McpServer, McpToolDef, InvokeContext};
//! use serde_json::json;
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     let echo = McpToolDef::new(
//!         "echo",
//!         "Echo the input back",
//!         json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
//!         |args, _ctx: InvokeContext| async move {
//!             args.get("text").and_then(|t| t.as_str()).unwrap_or_default().to_owned()
//!         },
//!     );
//!     let server = McpServer::builder().server_info("hello", "1.0.0").tool(echo).build()
//!         .map_err(std::io::Error::other)?;
//!     mcp_core::serve_stdio(server, Default::default()).wait().await
//! }
//! ```

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private;
mod boxed;
mod cancel;
mod context;
mod handler;
mod panic;
pub mod protocol;
mod random;
mod request_state;
mod server;
mod session;
#[cfg(feature = "stdio")]
pub mod testing;
pub mod transport;

pub use boxed::BoxFuture;
pub use cancel::CancelToken;
pub use context::{
    CallContext, CallHeaders, Elicit, ElicitResponse, Elicitor, HeaderValue, Headers, InputRequest,
    InvokeContext, Outbound, Progress, ProgressSink, ProgressUpdate,
};
pub use handler::args::{describe, parse_args};
pub use handler::prompt::{IntoPromptResult, McpPromptDef, PromptArgs};
pub use handler::resource::{IntoResourceContents, McpResourceDef, ResourceRequest};
pub use handler::schema::{schema_for, schema_with};
pub use handler::state::State;
pub use handler::tool::{IntoToolResult, Json, McpToolDef};
pub use handler::uri_template::UriTemplate;
pub use protocol::{
    CacheScope, CallToolResult, Content, ErrorCode, ErrorObject, GetPromptResult, Implementation,
    LoggingLevel, PromptArgument, PromptMessage, RequestId, ResourceContents, ToolAnnotations,
};
pub use request_state::{StateKey, StateKeys};
pub use server::{
    parse_payload, Admission, Admit, BuildError, Call, CompletionRequest, Frame, McpServer,
    McpServerBuilder, PendingCall, Response, Started,
};
pub use session::Session;
#[cfg(feature = "http")]
pub use transport::http::{serve_http, HttpHandle, HttpOptions, McpHttpService, SessionOptions};
#[cfg(feature = "stdio")]
pub use transport::stdio::{serve_io, serve_stdio, StdioHandle, StdioOptions};

#[cfg(feature = "macros")]
pub use mcp_macros::{mcp_prompt, mcp_resource, mcp_tool};
