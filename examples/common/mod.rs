//! Shared by the examples: serve over stdio (the default, or `--stdio`) or
//! over Streamable HTTP with `--http ADDR`, where ADDR is `HOST:PORT`,
//! `[IPV6]:PORT` or just `PORT` (on 127.0.0.1). HTTP serves with sessions
//! (so legacy clients get cancellation and elicitation) unless `--stateless`
//! is given; it runs until Ctrl-C, then drains in-flight calls.

// Each example uses part of this module.
#![allow(dead_code)]

use mcp_core::transport::http::{serve_http, HttpOptions, SessionOptions};
use mcp_core::{serve_stdio, McpServer, StdioOptions};

/// Builds a runtime suited to the transport the command line picks and
/// serves on it: a single-threaded runtime for stdio (one connection: no
/// cross-thread hand-offs), a multi-threaded one for HTTP.
pub fn run(server: McpServer, stdio: StdioOptions) -> std::io::Result<()> {
    let http = std::env::args().any(|a| a == "--http");
    let runtime = if http {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?
    };
    runtime.block_on(serve_with(server, stdio))
}

/// Serves `server` as the command line says.
pub async fn serve(server: McpServer) -> std::io::Result<()> {
    serve_with(server, StdioOptions::default()).await
}

/// Like [`serve`], with explicit stdio options.
pub async fn serve_with(server: McpServer, stdio: StdioOptions) -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut http = None;
    let mut stateless = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--stdio" => {}
            "--stateless" => stateless = true,
            "--http" => {
                i += 1;
                http = Some(
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| usage("--http needs HOST:PORT or PORT"))?,
                );
            }
            other => return Err(usage(&format!("unknown argument {other:?}"))),
        }
        i += 1;
    }
    let Some(addr) = http else {
        return serve_stdio(server, stdio).wait().await;
    };
    let (host, port) = split_addr(&addr).ok_or_else(|| usage(&format!("bad address {addr:?}")))?;
    let mut options = HttpOptions::new().host(host).port(port);
    if !stateless {
        options = options.sessions(SessionOptions::default());
    }
    let handle = serve_http(server, options).await?;
    eprintln!("MCP endpoint: {}", handle.url());
    tokio::signal::ctrl_c().await?;
    handle.close().await;
    Ok(())
}

fn split_addr(addr: &str) -> Option<(String, u16)> {
    if let Ok(port) = addr.parse::<u16>() {
        return Some(("127.0.0.1".to_owned(), port));
    }
    let (host, port) = addr.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port.parse().ok()?))
}

fn usage(problem: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{problem}\nusage: [--stdio | --http HOST:PORT|PORT [--stateless]]"),
    )
}
