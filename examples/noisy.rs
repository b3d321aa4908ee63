//! A server whose tool prints to stdout, as careless code and chatty
//! dependencies do: shows the stdout guard of `serve_stdio`.
//!
//! - `noisy` prints a line with `println!`, runs a child process that prints
//!   to its inherited stdout, and answers `"done"`. With the guard (the
//!   default, on Unix) both lines land on stderr and stdout carries only
//!   JSON-RPC; with `MCP_NOISY_UNGUARDED=1` in the environment the server
//!   opts out (`StdioOptions::guard_stdout(false)`) and the noise corrupts
//!   the protocol stream, as it would on any stdio server without a guard.
//! - With `MCP_NOISY_AFTER=1` it prints `after serving` with `println!` once
//!   the server has stopped (end of input): fd 1 is the real stdout again.
//!
//! Run: `cargo run --example noisy` (`tests/stdout_guard.rs` drives it).
mod common;

use mcp_core::{mcp_tool, McpServer, StdioOptions};

/// The environment variable that turns the guard off.
const UNGUARDED_ENV: &str = "MCP_NOISY_UNGUARDED";
/// The environment variable that prints a line on stdout after serving.
const AFTER_ENV: &str = "MCP_NOISY_AFTER";

fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Print to stdout (directly and from a child process), then answer "done".
#[mcp_tool]
async fn noisy() -> &'static str {
    println!("noise from println!");
    // A child inherits file descriptor 1 as it is now (its output is not
    // read here; a missing `sh` is no failure).
    let _ = std::process::Command::new("sh")
        .args(["-c", "echo noise from a child process"])
        .status();
    "done"
}

fn main() -> std::io::Result<()> {
    let server = McpServer::builder()
        .server_info("noisy", env!("CARGO_PKG_VERSION"))
        .tool(noisy::tool())
        .build()
        .map_err(std::io::Error::other)?;
    let guard = !env_flag(UNGUARDED_ENV);
    common::run(server, StdioOptions::default().guard_stdout(guard))?;
    if env_flag(AFTER_ENV) {
        println!("after serving");
    }
    Ok(())
}
