//! The stdout guard of `serve_stdio` (Unix): a tool that prints to stdout
//! (`println!`, and a child process inheriting fd 1) cannot corrupt the
//! protocol stream. Drives `examples/noisy.rs` over real pipes and reads its
//! stdout raw, line by line, not through a client that might skip junk.
#![cfg(unix)]

use std::process::Stdio;
use std::time::Duration;

use mcp_suite::example_command;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::time::timeout;

/// Hang guard for a run of the example (building it comes before).
const GUARD: Duration = Duration::from_secs(20);

/// What one run of `noisy` wrote.
struct Run {
    stdout: String,
    stderr: String,
}

/// Runs `noisy` with `env`, sends initialize, initialized and a call of the
/// `noisy` tool, closes its stdin and collects everything it writes until it
/// exits.
async fn run_noisy(env: &[(&str, &str)]) -> Run {
    let mut command = example_command("noisy").expect("example `noisy` should build");
    command
        .env_remove("MCP_NOISY_UNGUARDED")
        .env_remove("MCP_NOISY_AFTER")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("example `noisy` should start");
    let mut stdin = child.stdin.take().expect("piped stdin");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "stdout_guard", "version": "0"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "noisy", "arguments": {}}}),
    ];
    let mut input = String::new();
    for message in &messages {
        input.push_str(&message.to_string());
        input.push('\n');
    }
    stdin
        .write_all(input.as_bytes())
        .await
        .expect("writing to the example");
    // End of input: the server answers what it read, drains and exits.
    drop(stdin);
    let output = timeout(GUARD, child.wait_with_output())
        .await
        .expect("`noisy` should exit after end of input, before the hang guard")
        .expect("waiting for `noisy`");
    assert!(output.status.success(), "exit status {:?}", output.status);
    Run {
        stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
    }
}

/// The stdout lines that are not JSON-RPC 2.0 messages.
fn non_protocol_lines(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter(|line| {
            serde_json::from_str::<Value>(line).map_or(true, |message| message["jsonrpc"] != "2.0")
        })
        .collect()
}

/// The reply with this id among the stdout lines.
fn reply(stdout: &str, id: u64) -> Option<Value> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|message| message["id"] == id)
}

#[tokio::test]
async fn println_in_a_tool_never_reaches_the_protocol_stream() {
    let run = run_noisy(&[]).await;
    assert_eq!(
        non_protocol_lines(&run.stdout),
        Vec::<&str>::new(),
        "every stdout line is a JSON-RPC message; stdout:\n{}",
        run.stdout
    );
    let initialized = reply(&run.stdout, 1).expect("the initialize reply");
    assert_eq!(initialized["result"]["serverInfo"]["name"], "noisy");
    let called = reply(&run.stdout, 2).expect("the tools/call reply");
    assert_eq!(
        called["result"]["content"][0]["text"], "done",
        "reply: {called}"
    );
    assert_eq!(run.stdout.lines().count(), 2, "stdout:\n{}", run.stdout);
    // The noise went to stderr: from `println!` and from a child process.
    assert!(
        run.stderr.contains("noise from println!"),
        "stderr: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains("noise from a child process"),
        "stderr: {}",
        run.stderr
    );
}

/// The control: with the guard turned off (`StdioOptions::guard_stdout(false)`)
/// the same tool corrupts stdout, so the test above checks something real.
#[tokio::test]
async fn without_the_guard_the_noise_corrupts_stdout() {
    let run = run_noisy(&[("MCP_NOISY_UNGUARDED", "1")]).await;
    let junk = non_protocol_lines(&run.stdout);
    assert!(
        junk.contains(&"noise from println!"),
        "unguarded, the println! line is on stdout; stdout:\n{}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("noise from println!"),
        "stderr: {}",
        run.stderr
    );
}

/// Once the server has stopped, fd 1 is the original stdout again (and
/// blocking): a `println!` after serving reaches the client's pipe.
#[tokio::test]
async fn stdout_is_restored_when_the_server_stops() {
    let run = run_noisy(&[("MCP_NOISY_AFTER", "1")]).await;
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines.last(),
        Some(&"after serving"),
        "stdout:\n{}",
        run.stdout
    );
    assert_eq!(
        non_protocol_lines(&run.stdout),
        vec!["after serving"],
        "only the line printed after serving is not JSON-RPC; stdout:\n{}",
        run.stdout
    );
    assert!(
        run.stderr.contains("noise from println!"),
        "stderr: {}",
        run.stderr
    );
}
