//! A proxy: other MCP servers mounted into ours, each under its own
//! prefix, their tools, resources and prompts forwarded with progress,
//! cancellation and elicitation intact (see `mcp_core::client::proxy`).
//!
//! By default it mounts the `demo` example (found next to this binary)
//! as `demo_*`. Each `--remote NAME=TARGET` mounts one more: TARGET is a
//! command line (`node server.mjs --stdio`) or an `http://` URL.
//!
//! ```sh
//! cargo build --examples --features full
//! target/debug/examples/proxy --remote ts="npx -y @modelcontextprotocol/server-everything stdio"
//! target/debug/examples/proxy --http 127.0.0.1:8080 --backend-protocol legacy
//! ```
//!
//! `--no-prefix` (with `--no-demo` and one `--remote`) serves that backend
//! under its own names: the benchmark's proxied `echo` (BENCHMARKS.md).
//! `--backend-protocol auto|legacy|2026-07-28` picks what the proxy speaks
//! to its backends (default auto); `--no-demo` leaves the demo out;
//! `--forward-authorization` passes callers' `Authorization` to HTTP
//! backends. The rest (`--stdio`, `--http ADDR`, `--stateless`) is how the
//! proxy itself serves, as for every example.

mod common;

use mcp_core::client::proxy::{ProxyOptions, Target, DEFAULT_LISTING_TTL};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_core::{McpServer, StdioOptions};

fn usage(problem: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("proxy: {problem}\nusage: proxy [--remote NAME=COMMAND|URL]... [--backend-protocol P] [--no-demo] [--forward-authorization] [--stdio | --http ADDR [--stateless]]"),
    )
}

fn main() -> std::io::Result<()> {
    let mut remotes: Vec<(String, Target)> = Vec::new();
    let mut protocol = Protocol::Auto;
    let mut demo = true;
    let mut no_prefix = false;
    let mut options = ProxyOptions::new();
    let mut rest = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--remote" => {
                let spec = args
                    .next()
                    .ok_or_else(|| usage("--remote needs NAME=TARGET"))?;
                let (name, spec) = spec
                    .split_once('=')
                    .ok_or_else(|| usage(&format!("--remote {spec:?}: expected NAME=TARGET")))?;
                remotes.push((
                    name.to_owned(),
                    Target::parse(spec).map_err(|e| usage(&e.to_string()))?,
                ));
            }
            "--backend-protocol" => {
                protocol = match args.next().as_deref() {
                    Some("auto") => Protocol::Auto,
                    Some("legacy") => Protocol::Legacy("2025-11-25".into()),
                    Some(v) => Protocol::pinned(v),
                    None => return Err(usage("--backend-protocol needs a value")),
                }
            }
            "--no-demo" => demo = false,
            "--no-prefix" => no_prefix = true,
            "--forward-authorization" => options = options.forward_authorization(true),
            _ => rest.push(arg),
        }
    }
    if demo {
        let exe = std::env::current_exe()?;
        let demo_path = exe.with_file_name(format!("demo{}", std::env::consts::EXE_SUFFIX));
        remotes.insert(
            0,
            (
                "demo".to_owned(),
                Target::command(demo_path.display().to_string(), ["--stdio"]),
            ),
        );
    }
    if no_prefix && (demo || remotes.len() != 1) {
        return Err(usage(
            "--no-prefix serves one --remote as it is: give --no-demo and exactly one --remote",
        ));
    }
    let runtime = common::runtime_for(&rest)?;
    runtime.block_on(async move {
        // Before the first request to a backend (OpenTelemetry, with `otel`).
        common::init_tracing();
        // Live: each backend's tool, resource and prompt changes reach our clients.
        let mut builder = McpServer::builder()
            .live_catalog()
            .server_info("proxy", env!("CARGO_PKG_VERSION"))
            .instructions("A proxy: each backend's tools are prefixed with its name.");
        let mut mounted = Vec::new();
        for (name, target) in remotes {
            let client = ClientBuilder::new("mcp-core-proxy", env!("CARGO_PKG_VERSION"))
                .protocol(protocol.clone())
                // A proxied call lasts as long as its backend needs.
                .timeout(None);
            let (remote, child) =
                common::connect_backend(&name, target, client, options.clone()).await?;
            if no_prefix {
                // One backend served under its own names (the benchmark's
                // proxied echo): its builder is the whole server.
                builder = child.live_catalog();
                mounted.push((name, remote));
                break;
            }
            builder = builder.mount(&name, child);
            mounted.push((name, remote));
        }
        let server = common::with_telemetry(builder)
            .build()
            .map_err(std::io::Error::other)?;
        // Refreshed on each backend's list_changed, and every 5 minutes.
        let _syncs: Vec<_> = mounted
            .into_iter()
            .map(|(name, remote)| {
                // Under its own names with --no-prefix, else prefixed.
                let prefix = (!no_prefix).then_some(name);
                remote.sync_tools(server.clone(), prefix, DEFAULT_LISTING_TTL)
            })
            .collect();
        common::serve_args(server, StdioOptions::default(), rest, |o| o).await
    })
}
