//! The smallest useful MCP server: one `echo` tool over stdio.
//! Run: `cargo run --example hello`
use mcp_core::{mcp_tool, serve_stdio, McpServer};

/// Echo the input back.
#[mcp_tool]
async fn echo(#[arg(description = "The text to echo")] text: String) -> String {
    text
}

// One stdio connection and handlers that never block: a current-thread
// runtime runs each call where it was read, with no thread hop (see
// `serve_stdio`'s docs).
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    // The library's diagnostics on stderr, filtered by RUST_LOG (stdout is
    // the protocol stream).
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let server = McpServer::builder()
        .server_info("hello", "1.0.0")
        .tool(echo::tool())
        .build()
        .map_err(std::io::Error::other)?;
    // One line on stderr so a terminal run does not look hung.
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    eprintln!(
        "hello: MCP server on stdio (one JSON-RPC message per line; replies on stdout); \
         try: printf '%s\\n' '{call}' | target/debug/examples/hello"
    );
    serve_stdio(server, Default::default()).wait().await
}
