//! Re-exports `mcp-core` under another crate name, the way a framework built
//! on it would. `trybuild-tests` depends on this crate as `renamed_core` to
//! test `#[mcp_tool(crate = "renamed_core")]`: Cargo does not allow depending
//! on `mcp-core` itself twice under two names.

pub use mcp_core::*;
