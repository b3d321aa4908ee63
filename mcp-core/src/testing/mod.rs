//! An in-process MCP client for testing servers.
//!
//! [`TestClient`] speaks newline-delimited JSON-RPC over any byte stream pair:
//! an in-memory pipe to a server in the same process ([`TestClient::connect`]),
//! or a child process's stdin/stdout ([`TestClient::over`]). It answers
//! `elicitation/create` requests with a handler you choose, records progress
//! and other notifications, and hands back anything it cannot match.
//!
//! It is a thin layer over the client of `mcp_core::client` (feature
//! `client`): the same engine (request ids, replies matched to requests,
//! timeouts, answers to the server's requests) on the same byte stream
//! link. With feature `stdio` alone only that engine and link are built,
//! not the HTTP client.
//!
//! ```
//! use mcp_core::{McpServer, McpToolDef, InvokeContext, testing::TestClient};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let server = McpServer::builder()
//!     .tool(McpToolDef::new("echo", "Echo", json!({"type": "object"}),
//!         |args, _ctx: InvokeContext| async move { args["text"].as_str().unwrap_or("").to_owned() }))
//!     .build()
//!     .unwrap();
//! let client = TestClient::connect(server).await.unwrap();
//! let result = client.call_tool("echo", json!({"text": "hi"})).await.unwrap();
//! assert_eq!(result.text_content(), "hi");
//! # }
//! ```
//!
//! # Tracing (feature `trace`)
//!
//! With the non-default `trace` feature, a [`TestClient`] also records every
//! message it receives to `$MCP_TRACE_DIR` when that variable is set; see
//! `trace` (present only with the feature). This workspace enables it for
//! its own tests, for the CI's schema validation; a user's tests need not.

mod client;
#[cfg(feature = "trace")]
#[cfg_attr(docsrs, doc(cfg(feature = "trace")))]
pub mod trace;

pub use client::{ClientOptions, ElicitHandler, PendingRequest, TestClient};
