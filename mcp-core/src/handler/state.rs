//! Typed application state shared with handlers (a database pool, a config).

/// Extracts a value registered with
/// [`McpServerBuilder::state`](crate::McpServerBuilder::state); use it as a
/// tool argument (`State(db): State<Db>`) with the macros, or call
/// [`InvokeContext::state`](crate::InvokeContext::state) by hand.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);
