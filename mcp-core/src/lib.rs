//! # mcp-core
//!
//! A Model Context Protocol (MCP) server framework: write plain Rust
//! functions, mark them `#[mcp_tool]`, `#[mcp_resource]` or `#[mcp_prompt]`,
//! and serve them over **stdio** or **Streamable HTTP**, to clients of every
//! protocol revision from 2024-11-05 (a session set up by `initialize`) to
//! the stateless **2026-07-28** (everything in each request's `_meta`), on
//! the same stream or endpoint. Schemas come from your types (schemars),
//! arguments are checked before your function runs, limits are enforced
//! before anything is buffered.
//!
//! ```no_run
//! use mcp_core::{mcp_tool, serve_stdio, McpServer};
//!
//! /// Echo the input back.
//! #[mcp_tool]
//! async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
//!     text
//! }
//!
//! #[tokio::main]
//! async fn main() -> std::io::Result<()> {
//!     let server = McpServer::builder()
//!         .server_info("hello", "1.0.0")
//!         .tool(echo::tool())
//!         .build()
//!         .map_err(std::io::Error::other)?;
//!     serve_stdio(server, Default::default()).wait().await
//! }
//! ```
//!
//! The same server over HTTP (sessions for legacy clients; 2026-07-28
//! requests are stateless):
//!
//! ```no_run
//! # use mcp_core::{mcp_tool, McpServer};
//! # /// Echo.
//! # #[mcp_tool]
//! # async fn echo(text: String) -> String { text }
//! use mcp_core::{serve_http, HttpOptions};
//!
//! # async fn run() -> std::io::Result<()> {
//! let server = McpServer::builder().server_info("hello", "1.0.0").tool(echo::tool())
//!     .build().map_err(std::io::Error::other)?;
//! // Legacy sessions are on by default (`HttpOptions::stateless()` turns them off).
//! let handle = serve_http(server, HttpOptions::new().port(8080)).await?;
//! eprintln!("MCP endpoint: {}", handle.url());
//! # Ok(()) }
//! ```
//!
//! ## What is where
//!
//! The crate root holds what a handler author writes and serves with;
//! everything else has one path, in one module.
//!
//! - **Authoring** (root): the attributes `mcp_tool`, `mcp_resource`,
//!   `mcp_prompt` (or the descriptors [`McpToolDef`], [`McpResourceDef`],
//!   [`McpPromptDef`] by hand); handlers receive an [`InvokeContext`]
//!   (cancellation, [`Progress`], [`Elicit`]ation, sampling, logging,
//!   headers) and shared [`State`], return [`Json`] or fail with a
//!   [`ToolError`]. The traits behind return values and arguments
//!   (`IntoToolResult`, `ResourceRequest`, `UriTemplate`, schemas) are in
//!   [`handler`]; the types a context carries are in [`context`].
//! - **The server** (root): [`McpServer`], built with [`McpServerBuilder`]
//!   (refusals: [`BuildError`]), served by `serve_stdio` / `serve_http`
//!   with `StdioOptions` / `HttpOptions`. Interceptors: [`intercept`].
//! - **Custom transports**: [`transport`] — the pipeline every transport
//!   enters through [`McpServer::accept`] (or the simple
//!   [`McpServer::handle_frame`]): [`transport::Frame`],
//!   [`transport::CallContext`], [`transport::Session`], admission and
//!   responses; `McpHttpService` (mountable in hyper, tower or axum) in
//!   `transport::http`, `serve_io` in `transport::stdio`.
//! - **MCP Apps**: [`apps`] — tools with interactive HTML views
//!   (`io.modelcontextprotocol/ui`): `ui://` views, CSP, visibility.
//! - **The protocol**: [`protocol`] — JSON-RPC framing, wire types
//!   (`CallToolResult`, `Content`, …), versions, `_meta` keys,
//!   capabilities, [`ErrorCode`](protocol::ErrorCode)s. No I/O.
//! - **Tests**: `testing::TestClient`, an in-process client (`stdio` feature).
//! - **Guides**: `mcp_core::guide` — chapters that span the API:
//!   authoring (and blocking work in `fn` tools), running (stdio, HTTP,
//!   limits, production builds), interceptors, protocol eras, HTTP
//!   (sessions, replicas, gateways), auth, the client and proxy, the tasks
//!   and skills extensions, the catalog lockfile, testing, trust
//!   boundaries, and MCP Apps. Built with `auth`, `client` and `stdio` (docs.rs builds
//!   every feature).
//!
//! ## Features
//!
//! The default build is `macros`, `stdio` and `http`. Each feature below
//! names what it adds and what it pulls in; a feature that implies another
//! says so.
//!
//! | feature | adds | pulls in |
//! |---|---|---|
//! | `macros` (default) | the `#[mcp_tool]`, `#[mcp_resource]`, `#[mcp_prompt]` attributes | `mcp-macros` |
//! | `stdio` (default) | `serve_stdio`, `serve_io`, and the in-process `testing::TestClient` | tokio's `io-std`, `io-util`, `net`, `fs`; `memchr` |
//! | `http` (default) | Streamable HTTP: `serve_http`, `McpHttpService` | hyper 1 (server, http1), hyper-util, http-body(-util), bytes, pin-project-lite |
//! | `tower` | `tower::Service` for `McpHttpService` (axum, tower stacks) | `http`; tower-service |
//! | `client` | `mcp_core::client`: a client over a child process, any byte stream, or Streamable HTTP, in both eras; the proxy | `http`; tokio's `process`; hyper's client |
//! | `client-oauth` | OAuth for the client (`client::oauth`): discovery, PKCE, registration, step-up, refresh, token store | `client` (no new crate) |
//! | `client-oauth-jwt` | `private_key_jwt` client authentication and DPoP | `client-oauth`; p256 |
//! | `auth` | an OAuth 2.1 resource server for the HTTP endpoint (`mcp_core::auth`): JWT or introspection, metadata, challenges, scopes | `http`; jsonwebtoken on RustCrypto (no C toolchain); add `tls` for an `https://` authorization server |
//! | `tls` | outbound HTTPS for `auth`'s fetches, the OAuth client and the client's HTTP link (`mcp_core::tls`) | `http`; rustls and hyper-rustls (AWS-LC), webpki-roots, rustls-native-certs |
//! | `catalog` | the listing as an API (`mcp_core::catalog`): lockfile, schema profiles, token counts | `client`, `stdio`; tiktoken-rs |
//! | `metrics` | `intercept::Metrics` through the `metrics` facade | metrics |
//! | `otel` | OpenTelemetry by the MCP semantic conventions (`mcp_core::otel`, `intercept::Otel`): server and client spans, trace context in `_meta`, the operation-duration histograms | opentelemetry, opentelemetry_sdk (propagators only), tracing-opentelemetry |
//! | `redis` | state shared by replicas (`mcp_core::redis`): task store, notification bus, session store | redis-rs, futures-util; tokio's `time` |
//! | `trace` | the `MCP_TRACE_DIR` recorder of `testing` (`testing::trace`) | `stdio` |
//!
//! `mcp-core/tests/crate_docs.rs` fails when a feature of `Cargo.toml` is
//! missing from this table.

#![warn(unreachable_pub)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeDoctests;

#[doc(hidden)]
pub mod __private;
pub mod apps;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth;
mod boxed;
mod cancel;
#[cfg(feature = "catalog")]
#[cfg_attr(docsrs, doc(cfg(feature = "catalog")))]
pub mod catalog;
#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;
// Feature `stdio` without `client`: the client's transport-neutral engine
// and byte stream link only, private, for `testing::TestClient` (one client
// implementation, no HTTP client built).
#[cfg(all(feature = "stdio", not(feature = "client")))]
mod client;
pub mod context;
mod fast_hash;
// The chapters link to items of several features, so they are built with
// those features on (docs.rs builds with all of them).
#[cfg(any(docsrs, all(feature = "auth", feature = "client", feature = "stdio")))]
pub mod guide;
pub mod handler;
#[cfg(any(feature = "client", feature = "auth", feature = "tls"))]
mod http_client;
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub mod otel;
mod panic;
pub mod protocol;
mod random;
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
pub mod redis;
mod request_state;
mod schema;
mod server;
mod session;
pub mod skills;
pub mod state;
pub mod storage;
pub mod tasks;
#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub mod testing;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
pub mod tool_search;
pub mod transport;

// ---------------------------------------------------------------------------
// The crate root: what a handler author writes tools, resources and prompts
// with and serves them by. Everything else lives in exactly one module:
// `protocol` (wire types), `transport` (custom transports), `context`,
// `handler`, `intercept`. `mcp-core/tests/public_surface.rs` counts these.

pub use cancel::CancelToken;
pub use context::elicit::{Confirmation, Elicit};
pub use context::invoke::InvokeContext;
pub use context::progress::Progress;
pub use handler::prompt::McpPromptDef;
pub use handler::resource::McpResourceDef;
pub use handler::state::State;
pub use handler::tool::{Json, McpToolDef};
pub use handler::tool_error::ToolError;
pub use server::intercept;
pub use server::{BuildError, McpServer, McpServerBuilder};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use transport::http::options::HttpOptions;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use transport::http::server::serve_http;
#[cfg(feature = "stdio")]
#[cfg_attr(docsrs, doc(cfg(feature = "stdio")))]
pub use transport::stdio::serve::{serve_stdio, StdioOptions};

#[cfg(feature = "macros")]
#[cfg_attr(docsrs, doc(cfg(feature = "macros")))]
pub use mcp_macros::{mcp_prompt, mcp_resource, mcp_tool};
