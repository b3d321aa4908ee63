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
//!
//! Transforms adapt a backend's tools (`ToolTransforms`, through
//! `ProxyOptions::transforms`), each flag repeatable, every TOOL named as
//! the proxy would list it without transforms, i.e. with its backend's
//! prefix (`demo_echo`; with `--no-prefix`, the backend's own name):
//! - `--rename TOOL=NEW`: serve TOOL as NEW (NEW keeps the same prefix:
//!   `--rename demo_echo=demo_say`);
//! - `--hide TOOL`: not listed, and calling it is an unknown tool;
//! - `--describe TOOL=TEXT`: a new description;
//! - `--default TOOL.ARG=JSON`: ARG becomes optional with that default;
//! - `--fix TOOL.ARG=JSON`: ARG is always JSON, and callers may not set it;
//! - `--rename-arg TOOL.ARG=NEW`: ARG is listed (and sent) as NEW.
//!
//! ARG is what follows TOOL's last `.`. A transform that does not fit the
//! backend's first listing stops the proxy with the reason; later
//! listings are transformed again (problems are logged).
//!
//! ```sh
//! target/debug/examples/proxy --rename demo_echo=demo_say --hide demo_confirm \
//!     --default demo_slow.steps=2 --fix demo_slow.delay_ms=10
//! ```

mod common;

use std::collections::HashMap;

use mcp_core::client::proxy::{ProxyOptions, Target, DEFAULT_LISTING_TTL};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_core::handler::ToolTransforms;
use mcp_core::{McpServer, StdioOptions};

fn usage(problem: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("proxy: {problem}\nusage: proxy [--remote NAME=COMMAND|URL]... [--backend-protocol P] [--no-demo] [--forward-authorization] [--rename TOOL=NEW] [--hide TOOL] [--describe TOOL=TEXT] [--default TOOL.ARG=JSON] [--fix TOOL.ARG=JSON] [--rename-arg TOOL.ARG=NEW]... [--stdio | --http ADDR [--stateless]]"),
    )
}

fn main() -> std::io::Result<()> {
    let mut remotes: Vec<(String, Target)> = Vec::new();
    let mut protocol = Protocol::Auto;
    let mut demo = true;
    let mut no_prefix = false;
    let mut options = ProxyOptions::new();
    let mut rest = Vec::new();
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rename" | "--hide" | "--describe" | "--default" | "--fix" | "--rename-arg" => {
                let value = args
                    .next()
                    .ok_or_else(|| usage(&format!("{arg} needs a value")))?;
                flags.push((arg, value));
            }
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
    let names: Vec<&str> = remotes.iter().map(|(name, _)| name.as_str()).collect();
    let transforms = transforms_of(&flags, &names, no_prefix).map_err(|e| usage(&e))?;
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
            let options = match transforms.get(&name) {
                Some(t) => options.clone().transforms(t.clone()),
                None => options.clone(),
            };
            let (remote, child) = common::connect_backend(&name, target, client, options).await?;
            let problems = remote.transform_problems();
            if !problems.is_empty() {
                let listed: Vec<String> = problems.iter().map(|p| format!("\n- {p}")).collect();
                return Err(std::io::Error::other(format!(
                    "proxy: backend {name}: the transforms do not fit its tools:{}",
                    listed.concat()
                )));
            }
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

/// Each backend's transforms from the flags, tools named as the proxy lists
/// them (`NAME_tool`, or the backend's own name with `--no-prefix`).
fn transforms_of(
    flags: &[(String, String)],
    remotes: &[&str],
    no_prefix: bool,
) -> Result<HashMap<String, ToolTransforms>, String> {
    // The backend whose prefix `listed` carries, and the tool's own name.
    let own = |listed: &str| -> Result<(String, String), String> {
        if no_prefix {
            let backend = remotes.first().copied().unwrap_or_default();
            return Ok((backend.to_owned(), listed.to_owned()));
        }
        remotes
            .iter()
            .find_map(|r| {
                let tool = listed.strip_prefix(*r)?.strip_prefix('_')?;
                Some(((*r).to_owned(), tool.to_owned()))
            })
            .ok_or_else(|| {
                format!("`{listed}`: no backend's prefix starts it (backends: {remotes:?})")
            })
    };
    let pair = |flag: &str, value: &str| -> Result<(String, String), String> {
        value
            .split_once('=')
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .ok_or_else(|| format!("{flag} {value:?}: expected LEFT=RIGHT"))
    };
    let tool_arg = |flag: &str, spec: &str| -> Result<(String, String, String), String> {
        let (tool, arg) = spec
            .rsplit_once('.')
            .ok_or_else(|| format!("{flag} {spec:?}: expected TOOL.ARG"))?;
        let (backend, tool) = own(tool)?;
        Ok((backend, tool, arg.to_owned()))
    };
    let json = |flag: &str, text: &str| -> Result<serde_json::Value, String> {
        serde_json::from_str(text).map_err(|e| format!("{flag}: {text:?} is not JSON: {e}"))
    };
    let mut all: HashMap<String, ToolTransforms> = HashMap::new();
    for (flag, value) in flags {
        let flag = flag.as_str();
        let (backend, change): (String, Box<dyn FnOnce(ToolTransforms) -> ToolTransforms>) =
            match flag {
                "--hide" => {
                    let (backend, tool) = own(value)?;
                    (backend, Box::new(move |t| t.hide(tool)))
                }
                "--rename" => {
                    let (from, to) = pair(flag, value)?;
                    let (backend, from) = own(&from)?;
                    let (to_backend, to) = own(&to)?;
                    if to_backend != backend {
                        return Err(format!("{flag} {value:?}: the new name keeps the backend's prefix `{backend}_`"));
                    }
                    (backend, Box::new(move |t| t.rename(from, to)))
                }
                "--describe" => {
                    let (tool, text) = pair(flag, value)?;
                    let (backend, tool) = own(&tool)?;
                    (backend, Box::new(move |t| t.describe(tool, text)))
                }
                "--default" | "--fix" => {
                    let (spec, text) = pair(flag, value)?;
                    let (backend, tool, arg) = tool_arg(flag, &spec)?;
                    let v = json(flag, &text)?;
                    if flag == "--fix" {
                        (backend, Box::new(move |t| t.fix(tool, arg, v)))
                    } else {
                        (backend, Box::new(move |t| t.default(tool, arg, v)))
                    }
                }
                _ => {
                    let (spec, to) = pair(flag, value)?;
                    let (backend, tool, arg) = tool_arg(flag, &spec)?;
                    (backend, Box::new(move |t| t.rename_arg(tool, arg, to)))
                }
            };
        let entry = all.entry(backend).or_default();
        *entry = change(std::mem::take(entry));
    }
    Ok(all)
}
