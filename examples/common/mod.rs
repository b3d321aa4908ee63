//! Shared by the examples: serve over stdio (the default, or `--stdio`) or
//! over Streamable HTTP with `--http ADDR`, where ADDR is `HOST:PORT`,
//! `[IPV6]:PORT` or just `PORT` (on 127.0.0.1). HTTP serves with sessions
//! (so legacy clients get cancellation and elicitation) unless `--stateless`
//! is given; it runs until Ctrl-C, then drains in-flight calls.
//!
//! Replicas behind a load balancer must seal 2026-07-28 `requestState` with
//! one shared key (the default key is random per process): examples that use
//! [`with_env_state_key`] read it from `MCP_REQUEST_STATE_KEY` (64 hex
//! digits = 32 bytes) and its id from `MCP_REQUEST_STATE_KEY_ID` (default
//! `env`).
//!
//! With the root package's `otel` feature, the servers built through
//! [`with_telemetry`] emit OpenTelemetry spans and metrics, exported over
//! OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set (`telemetry.rs`).
//!
//! On start each example prints one line to stderr saying what it serves and
//! how to talk to it (over HTTP followed by the `MCP endpoint: URL` line that
//! scripts and tests look for).

// Each example uses part of this module.
#![allow(dead_code)]

use mcp_core::{serve_http, HttpOptions};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::Layer as _;

#[cfg(feature = "otel")]
pub mod telemetry;

use mcp_core::transport::http::SessionOptions;
use mcp_core::transport::{StateKey, StateKeys};
use mcp_core::{serve_stdio, McpServer, McpServerBuilder, StdioOptions};

/// The environment variable holding the shared `requestState` key (hex).
pub const STATE_KEY_ENV: &str = "MCP_REQUEST_STATE_KEY";
/// The environment variable holding that key's id (default `env`).
pub const STATE_KEY_ID_ENV: &str = "MCP_REQUEST_STATE_KEY_ID";

/// Seals `requestState` with the key in `MCP_REQUEST_STATE_KEY` when it is
/// set, so every replica given the same key can open another's state;
/// otherwise leaves the builder as it is (a random per-process key). Exits
/// with status 2 and a message on stderr when the variable is malformed.
pub fn with_env_state_key(builder: McpServerBuilder) -> McpServerBuilder {
    match state_key_from_env() {
        Ok(None) => builder,
        Ok(Some(key)) => builder.request_state_keys(StateKeys::new(key, Vec::new())),
        Err(problem) => {
            eprintln!("error: {problem}");
            std::process::exit(2);
        }
    }
}

fn state_key_from_env() -> Result<Option<StateKey>, String> {
    let Some(hex) = std::env::var_os(STATE_KEY_ENV) else {
        return Ok(None);
    };
    let hex = hex
        .into_string()
        .map_err(|_| format!("{STATE_KEY_ENV} is not valid UTF-8"))?;
    let secret = decode_hex(hex.trim()).ok_or_else(|| {
        format!(
            "{STATE_KEY_ENV} must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`"
        )
    })?;
    let id = match std::env::var_os(STATE_KEY_ID_ENV) {
        None => "env".to_owned(),
        Some(id) => id
            .into_string()
            .map_err(|_| format!("{STATE_KEY_ID_ENV} is not valid UTF-8"))?,
    };
    StateKey::new(id, secret)
        .map(Some)
        .map_err(|e| format!("{STATE_KEY_ENV} / {STATE_KEY_ID_ENV}: {e}"))
}

/// Exactly 32 bytes from 64 hex digits.
fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    hex.as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

/// Installs a `tracing` subscriber writing to stderr (stdout may be the
/// stdio protocol stream), filtered by `RUST_LOG` (e.g. `RUST_LOG=info`
/// for a line per request with the `Trace` interceptor, `mcp_core=debug`
/// for the library's own diagnostics; errors only when unset), and with
/// the `otel` feature the OpenTelemetry export ([`telemetry::layer`]).
/// Called by [`serve_args`] (so by every `run` and `serve`), inside the
/// runtime; a second call changes nothing.
pub fn init_tracing() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let stderr = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(tracing_subscriber::EnvFilter::from_default_env());
        let registry = tracing_subscriber::registry().with(stderr);
        #[cfg(feature = "otel")]
        let registry = registry.with(telemetry::layer(&me().0));
        let _ = registry.try_init();
    });
}

/// `builder` with OpenTelemetry's request spans and duration histogram
/// (`mcp_core::intercept::Otel`) when the `otel` feature is on; as it is
/// otherwise.
pub fn with_telemetry(builder: McpServerBuilder) -> McpServerBuilder {
    #[cfg(feature = "otel")]
    let builder = builder.interceptor(mcp_core::intercept::Otel::new());
    builder
}

/// Flushes the OpenTelemetry export, if any, before the process exits.
pub async fn shutdown_telemetry() {
    #[cfg(feature = "otel")]
    telemetry::shutdown().await;
}

/// Builds a runtime suited to the transport the command line picks and
/// serves on it: a single-threaded runtime for stdio (one connection: no
/// cross-thread hand-offs), a multi-threaded one for HTTP.
pub fn run(server: McpServer, stdio: StdioOptions) -> std::io::Result<()> {
    run_args(server, stdio, std::env::args().skip(1).collect(), |o| o)
}

/// [`run`] for the arguments `args` (what is left once an example took its
/// own), with `http_options` adjusting the HTTP options.
pub fn run_args(
    server: McpServer,
    stdio: StdioOptions,
    args: Vec<String>,
    http_options: impl FnOnce(HttpOptions) -> HttpOptions,
) -> std::io::Result<()> {
    runtime_for(&args)?.block_on(serve_args(server, stdio, args, http_options))
}

/// The runtime for the transport `args` pick: single-threaded for stdio
/// (one connection: no cross-thread hand-offs), multi-threaded for HTTP.
pub fn runtime_for(args: &[String]) -> std::io::Result<tokio::runtime::Runtime> {
    if args.iter().any(|a| a == "--http") {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
}

/// Serves `server` as the arguments `args` say (what is left once an
/// example took its own: `--stdio`, `--http ADDR`, `--stateless`), with
/// `http_options` adjusting the HTTP options.
pub async fn serve_args(
    server: McpServer,
    stdio: StdioOptions,
    args: Vec<String>,
    http_options: impl FnOnce(HttpOptions) -> HttpOptions,
) -> std::io::Result<()> {
    init_tracing();
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
        announce_stdio();
        let served = serve_stdio(server, stdio).wait().await;
        shutdown_telemetry().await;
        return served;
    };
    let (host, port) = split_addr(&addr).ok_or_else(|| usage(&format!("bad address {addr:?}")))?;
    let mut options = HttpOptions::new().host(host).port(port).without_sessions();
    if !stateless {
        options = options.sessions(SessionOptions::default());
    }
    let options = http_options(options);
    let handle = serve_http(server, options).await?;
    announce_http(handle.url(), stateless);
    eprintln!("MCP endpoint: {}", handle.url());
    tokio::signal::ctrl_c().await?;
    handle.close().await;
    shutdown_telemetry().await;
    Ok(())
}

/// The `initialize` request of the hints below (the newest
/// initialize-based revision).
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}"#;

/// This example's name (its executable's stem) and the path to run it by.
fn me() -> (String, String) {
    let exe = std::env::current_exe().ok();
    let name = exe
        .as_deref()
        .and_then(std::path::Path::file_stem)
        .map_or_else(|| "server".to_owned(), |s| s.to_string_lossy().into_owned());
    let path = exe.map_or_else(
        || format!("target/debug/examples/{name}"),
        |p| p.display().to_string(),
    );
    (name, path)
}

/// The stdio start line: what is served and a command that talks to it.
pub fn announce_stdio() {
    let (name, path) = me();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    eprintln!(
        "{name}: MCP server on stdio (one JSON-RPC message per line in, replies on stdout, logs on stderr; Ctrl-D ends); \
         try: printf '%s\\n' '{INITIALIZE}' '{list}' | {path}"
    );
}

/// The HTTP start line: what is served and a `curl` that talks to it.
pub fn announce_http(url: &str, stateless: bool) {
    let (name, _) = me();
    let sessions = if stateless {
        "stateless"
    } else {
        "with sessions"
    };
    eprintln!(
        "{name}: MCP server over Streamable HTTP ({sessions}; POST one JSON-RPC message per request, Ctrl-C stops); \
         try: curl -s {url} -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{INITIALIZE}'"
    );
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

/// Connects to backend `name` at `target` and lists what it serves: the
/// [`Remote`](mcp_core::client::proxy::Remote) and a builder of forwarders
/// to `mount` (the proxy and gateway examples).
#[cfg(feature = "client")]
pub async fn connect_backend(
    name: &str,
    target: mcp_core::client::proxy::Target,
    client: mcp_core::client::ClientBuilder,
    options: mcp_core::client::proxy::ProxyOptions,
) -> std::io::Result<(mcp_core::client::proxy::Remote, McpServerBuilder)> {
    let failed =
        |e: mcp_core::client::ClientError| std::io::Error::other(format!("backend {name}: {e}"));
    let remote = mcp_core::client::proxy::Remote::connect(name, target, client, options)
        .await
        .map_err(failed)?;
    let child = remote.builder().await.map_err(failed)?;
    Ok((remote, child))
}
