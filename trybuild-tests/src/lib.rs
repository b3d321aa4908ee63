//! Compile-fail tests for the `mcp-core` attribute macros live in `tests/`.
