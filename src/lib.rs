//! Runnable examples for mcp-core: see `examples/` and run one with
//! `cargo run --example hello`. This library is empty; it exists so that the
//! integration tests (`tests/`, the `mcp-suite-tests` package) can depend on
//! this package with its `full` feature, and `cargo test --workspace` then
//! builds every example those tests spawn.
