// The imports, constants and helpers shared by the stdio test files (stdio.rs,
// stdio_flow.rs), brought into each with `include!`: they were one file, split
// by what the tests exercise.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::{Confirmation, InvokeContext, Json, McpServer, McpToolDef, StdioOptions, transport::stdio::{serve_io, StdioHandle}, protocol::CallToolResult, context::{CannotAsk, ElicitResponse, HeaderValue}, handler::IntoToolResult};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf,
    WriteHalf,
};
use tokio::sync::{mpsc, watch};
use tokio::time::timeout;

/// Hang guard for anything that should happen promptly.
const GUARD: Duration = Duration::from_secs(15);

// ---------------------------------------------------------------------------
// The server under test
// ---------------------------------------------------------------------------

/// Fires `stopped` with the tag when a tool's future ends, whether it
/// returned or was dropped (cancelled).
struct StopGuard {
    tag: String,
    tx: mpsc::UnboundedSender<String>,
}

impl Drop for StopGuard {
    fn drop(&mut self) {
        let _ = self.tx.send(self.tag.clone());
    }
}

/// The tool side of [`Probe`].
#[derive(Clone)]
struct Signals {
    started: mpsc::UnboundedSender<String>,
    stopped: mpsc::UnboundedSender<String>,
    release: watch::Receiver<bool>,
}

/// The test side: which blocking tools started / stopped, and a switch that
/// releases every `block` call.
struct Probe {
    started: mpsc::UnboundedReceiver<String>,
    stopped: mpsc::UnboundedReceiver<String>,
    release: watch::Sender<bool>,
}

impl Probe {
    /// Waits until `n` tools reported that they started; returns their tags.
    async fn started(&mut self, n: usize) -> HashSet<String> {
        let mut tags = HashSet::new();
        while tags.len() < n {
            let tag = timeout(GUARD, self.started.recv())
                .await
                .expect("a tool should start before the hang guard")
                .expect("the server keeps the started channel open");
            tags.insert(tag);
        }
        tags
    }

    /// Waits until the tool tagged `tag` ended (returned or was dropped).
    async fn stopped(&mut self, tag: &str) {
        loop {
            let got = timeout(GUARD, self.stopped.recv())
                .await
                .unwrap_or_else(|_| panic!("tool `{tag}` should stop before the hang guard"))
                .expect("the server keeps the stopped channel open");
            if got == tag {
                return;
            }
        }
    }

    /// Lets every `block` call return.
    fn release_all(&self) {
        self.release
            .send(true)
            .expect("the server holds a release receiver");
    }
}

fn arg_str(args: &Map<String, Value>, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A typed elicitation form.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Meeting {
    /// What the meeting is about.
    title: String,
    /// Length in minutes.
    minutes: u32,
}

fn object_schema() -> Value {
    json!({"type": "object"})
}

/// A server with one tool per behaviour under test.
fn test_server() -> (McpServer, Probe) {
    let (started_tx, started_rx) = mpsc::unbounded_channel();
    let (stopped_tx, stopped_rx) = mpsc::unbounded_channel();
    let (release_tx, release_rx) = watch::channel(false);
    let signals = Signals {
        started: started_tx,
        stopped: stopped_tx,
        release: release_rx,
    };

    let echo = McpToolDef::new(
        "echo",
        "Echo `text` back",
        object_schema(),
        |args, _ctx: InvokeContext| async move { arg_str(&args, "text") },
    );

    let block_signals = signals.clone();
    let block = McpToolDef::new(
        "block",
        "Report start, then wait until released or cancelled",
        object_schema(),
        move |args, ctx: InvokeContext| {
            let signals = block_signals.clone();
            async move {
                let tag = arg_str(&args, "tag");
                let _guard = StopGuard {
                    tag: tag.clone(),
                    tx: signals.stopped.clone(),
                };
                let mut release = signals.release.clone();
                let _ = signals.started.send(tag.clone());
                let released = async move { release.wait_for(|r| *r).await.is_ok() };
                tokio::select! {
                    ok = released => if ok { format!("released {tag}") } else { "release dropped".to_owned() },
                    () = ctx.cancelled() => format!("cancelled {tag}"),
                }
            }
        },
    );

    let sleepy_signals = signals.clone();
    let sleepy = McpToolDef::new(
        "sleepy",
        "Report start, sleep `ms` milliseconds, answer `slept`",
        object_schema(),
        move |args, _ctx: InvokeContext| {
            let signals = sleepy_signals.clone();
            async move {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(100);
                let _ = signals.started.send(arg_str(&args, "tag"));
                tokio::time::sleep(Duration::from_millis(ms)).await;
                "slept"
            }
        },
    );

    let boom = McpToolDef::new(
        "boom",
        "Panics",
        object_schema(),
        |_args, _ctx: InvokeContext| async move {
            if std::hint::black_box(true) {
                panic!("boom: the tool panicked on purpose");
            }
            "unreachable"
        },
    );

    let progress = McpToolDef::new(
        "progress",
        "Report `steps` progress notifications",
        object_schema(),
        |args, ctx: InvokeContext| async move {
            let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
            for step in 1..=steps {
                ctx.report_progress(
                    step as f64,
                    Some(steps as f64),
                    Some(&format!("step {step}")),
                )
                .await;
            }
            format!("done {steps}")
        },
    );

    let confirm = McpToolDef::new(
        "confirm",
        "Ask for confirmation (fails closed)",
        object_schema(),
        |_args, ctx: InvokeContext| async move {
            if ctx.confirm("Really?").await.is_accepted() {
                CallToolResult::text("confirmed")
            } else {
                CallToolResult::error("not confirmed")
            }
        },
    );

    let ask_signals = signals.clone();
    let ask = McpToolDef::new(
        "ask",
        "Report start, wait `after_ms`, then confirm through the elicitor and report errors verbatim",
        object_schema(),
        move |args, ctx: InvokeContext| {
            let signals = ask_signals.clone();
            async move {
                let _ = signals.started.send(arg_str(&args, "tag"));
                if let Some(ms) = args.get("after_ms").and_then(Value::as_u64) {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                }
                let Some(elicitor) = ctx.elicitation() else {
                    return CallToolResult::error("no elicitation");
                };
                match elicitor.confirm("Proceed?").await {
                    Confirmation::CannotAsk(CannotAsk::NoAnswer(e)) => {
                        CallToolResult::error(format!("elicitation failed: {}", e.message))
                    }
                    other => CallToolResult::text(format!("answer {}", other.is_accepted())),
                }
            }
        },
    );

    let form = McpToolDef::new(
        "form",
        "Ask for a typed Meeting form",
        object_schema(),
        |_args, ctx: InvokeContext| async move {
            let Some(elicitor) = ctx.elicitation() else {
                return CallToolResult::error("no elicitation");
            };
            match elicitor.form::<Meeting>("Plan a meeting").await {
                Ok(ElicitResponse::Accept(meeting)) => Json(meeting).into_tool_result(),
                Ok(ElicitResponse::Decline) => CallToolResult::text("declined"),
                Ok(ElicitResponse::Cancel) => CallToolResult::text("cancelled"),
                Err(e) => CallToolResult::error(format!("{}: {}", e.code, e.message)),
            }
        },
    );

    let has_elicitation = McpToolDef::new(
        "has_elicitation",
        "Whether ctx.elicitation() is present",
        object_schema(),
        |_args, ctx: InvokeContext| async move { ctx.elicitation().is_some().to_string() },
    );

    let header = McpToolDef::new(
        "header",
        "Return the header named `name`",
        object_schema(),
        |args, ctx: InvokeContext| async move {
            match ctx.header(&arg_str(&args, "name")) {
                Some(HeaderValue::One(v)) => format!("one:{v}"),
                Some(HeaderValue::Many(vs)) => format!("many:{}", vs.join("|")),
                None => "<none>".to_owned(),
            }
        },
    );

    let server = McpServer::builder()
        .server_info("stdio-test", "0.0.0")
        .tools([
            echo,
            block,
            sleepy,
            boom,
            progress,
            confirm,
            ask,
            form,
            has_elicitation,
            header,
        ])
        .build()
        .expect("the test server is valid");
    let probe = Probe {
        started: started_rx,
        stopped: stopped_rx,
        release: release_tx,
    };
    (server, probe)
}

// ---------------------------------------------------------------------------
// Raw pipe helpers
// ---------------------------------------------------------------------------

/// The client end of a raw in-memory connection to `serve_io`.
struct Raw {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    handle: Option<StdioHandle>,
}

fn raw_with(server: McpServer, options: StdioOptions, pipe_buffer: usize) -> Raw {
    let (client_end, server_end) = tokio::io::duplex(pipe_buffer);
    let (server_read, server_write) = tokio::io::split(server_end);
    let handle = serve_io(server, server_read, server_write, options);
    let (read, write) = tokio::io::split(client_end);
    Raw {
        write,
        lines: BufReader::new(read).lines(),
        handle: Some(handle),
    }
}

fn raw(options: StdioOptions) -> (Raw, Probe) {
    let (server, probe) = test_server();
    (raw_with(server, options, 1 << 16), probe)
}

impl Raw {
    /// Asks the server to stop reading.
    fn close(&self) {
        self.handle
            .as_ref()
            .expect("the server has not been waited for yet")
            .close();
    }

    /// Waits until the server stopped.
    async fn stopped(&mut self) {
        wait_stopped(
            self.handle
                .take()
                .expect("the server has not been waited for yet"),
        )
        .await;
    }

    /// Writes bytes as they are and flushes.
    async fn send(&mut self, bytes: &[u8]) {
        timeout(GUARD, async {
            self.write.write_all(bytes).await?;
            self.write.flush().await
        })
        .await
        .expect("the server should keep reading its input")
        .expect("writing to the in-memory pipe");
    }

    /// Writes one JSON message followed by `\n`.
    async fn send_json(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.send(&line).await;
    }

    /// The next reply line, raw.
    async fn line(&mut self) -> String {
        timeout(GUARD, self.lines.next_line())
            .await
            .expect("a reply line should arrive before the hang guard")
            .expect("reading from the in-memory pipe")
            .expect("the server should not close its output yet")
    }

    /// The next reply line, parsed; every line must be one complete JSON value.
    async fn json(&mut self) -> Value {
        let line = self.line().await;
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("reply line is not one JSON value ({e}): {line:?}"))
    }

    /// Reads lines until the server closes its output; parses each.
    async fn rest(&mut self) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let next = timeout(GUARD, self.lines.next_line())
                .await
                .expect("the server should close its output before the hang guard")
                .expect("reading from the in-memory pipe");
            match next {
                Some(line) => out.push(
                    serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("reply line is not JSON ({e}): {line:?}")),
                ),
                None => return out,
            }
        }
    }

    /// Closes the client's output: the server sees end of input.
    async fn close_input(&mut self) {
        timeout(GUARD, self.write.shutdown())
            .await
            .expect("shutdown should not hang")
            .expect("shutting down the in-memory pipe");
    }
}

async fn wait_stopped(handle: StdioHandle) {
    timeout(GUARD, handle.wait())
        .await
        .expect("serve_io should stop before the hang guard")
        .expect("serve_io should stop without an I/O error or panic");
}

fn ping(id: impl Into<Value>) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "ping"})
}

fn call(id: impl Into<Value>, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id.into(), "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

fn initialize_request(id: i64, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": mcp_core::protocol::LATEST_PROTOCOL_VERSION,
        "capabilities": capabilities,
        "clientInfo": {"name": "raw-test", "version": "0"},
    }})
}

fn assert_error(reply: &Value, id: &Value, code: i64) {
    assert_eq!(reply["jsonrpc"], "2.0", "reply: {reply}");
    assert_eq!(
        reply.get("id"),
        Some(id),
        "reply must carry id {id}: {reply}"
    );
    assert_eq!(reply["error"]["code"], code, "reply: {reply}");
    assert!(
        reply.get("result").is_none(),
        "an error has no result: {reply}"
    );
}

fn text_of(reply: &Value) -> String {
    reply["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("not a tool result: {reply}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}
