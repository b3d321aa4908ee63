//! Chapters on topics that span the API, beyond what one item's docs say.
//!
//! Read them in this order to learn the framework:
//!
//! 1. [`authoring`]: tools, resources and prompts from functions or by
//!    hand; blocking work; the invoke context.
//! 2. [`running`]: stdio and HTTP, limits, your own transport, logs,
//!    production builds, registering with MCP clients.
//! 3. [`interceptors`]: code around every method; built-in timeouts,
//!    limits, tracing, error mapping, metrics; request extensions.
//! 4. [`eras`]: the protocol revisions, and one tool body for both eras.
//! 5. [`http`]: sessions, several replicas, gateways (mounted and live
//!    catalogs).
//! 6. [`auth`]: the OAuth resource server, scopes, stdio credentials.
//! 7. [`client`]: the client for both eras, its OAuth, the proxy.
//! 8. [`extensions`]: tasks and skills; [`state`]: per-principal state
//!    in handles instead of sessions.
//! 9. [`catalog`]: the listing as an API (lockfile, profiles, tokens).
//! 10. [`testing`]: in-process and end-to-end tests.
//! 11. [`trust_boundaries`]: what the framework guarantees between parties
//!     that must not trust each other.
//! 12. [`telemetry`]: OpenTelemetry spans and metrics (feature `otel`),
//!     sending them to a collector, cardinality and cost.
//! 13. [`apps`]: MCP Apps, tools with interactive HTML views (CSP,
//!     permissions, visibility, testing in a browser).
//! 14. [`tool_search`]: a large catalog listed as `search_tools` and
//!     `call_tool`.
//! 15. [`transforms`]: adapting mounted and proxied tools (rename, hide,
//!     describe, argument defaults and fixed values).
//! 16. [`result_size`]: the guard on every tool result: the limit, the
//!     cut, reading the whole back.
//!
//! Built with the features they link to (`auth`, `client`, `stdio`); on
//! docs.rs, always.

#[doc = include_str!("authoring.md")]
pub mod authoring {}
#[doc = include_str!("running.md")]
pub mod running {}
#[doc = include_str!("interceptors.md")]
pub mod interceptors {}
#[doc = include_str!("eras.md")]
pub mod eras {}
#[doc = include_str!("http.md")]
pub mod http {}
#[doc = include_str!("auth.md")]
pub mod auth {}
#[doc = include_str!("client.md")]
pub mod client {}
#[doc = include_str!("extensions.md")]
pub mod extensions {}
#[doc = include_str!("state.md")]
pub mod state {}
#[doc = include_str!("catalog.md")]
pub mod catalog {}
#[doc = include_str!("testing.md")]
pub mod testing {}
#[doc = include_str!("trust_boundaries.md")]
pub mod trust_boundaries {}
#[doc = include_str!("telemetry.md")]
pub mod telemetry {}
#[doc = include_str!("apps.md")]
pub mod apps {}
#[doc = include_str!("tool_search.md")]
pub mod tool_search {}
#[doc = include_str!("transforms.md")]
pub mod transforms {}
#[doc = include_str!("result_size.md")]
pub mod result_size {}
