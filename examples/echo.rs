//! The benchmark server: one `echo` tool, over stdio or HTTP, in every
//! protocol revision (see BENCHMARKS.md). Over stdio it admits 256 requests
//! in flight (the default is 16), since the benchmark pipelines 64.
//!
//! Run: `cargo run --release --example echo -- --stdio` or
//! `cargo run --release --example echo -- --http 127.0.0.1:8080 --stateless`

mod common;

use mcp_core::{mcp_tool, McpServer};

/// Echo the input back.
#[mcp_tool(read_only, idempotent)]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

fn main() -> std::io::Result<()> {
    let server = common::with_telemetry(McpServer::builder())
        .server_info("echo", env!("CARGO_PKG_VERSION"))
        .tool(echo::tool())
        .build()
        .map_err(std::io::Error::other)?;
    let stdio = mcp_core::StdioOptions::default().max_concurrent_requests(256);
    common::run(server, stdio)
}
