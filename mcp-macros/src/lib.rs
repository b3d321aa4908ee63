//! Attribute macros for [`mcp-core`](https://docs.rs/mcp-core).
//!
//! This crate is re-exported by `mcp-core` behind its default `macros`
//! feature; depend on `mcp-core` rather than on this crate directly.
//! The macros themselves arrive with the macros milestone; until then
//! descriptors are written by hand with `McpToolDef::new` and friends.
