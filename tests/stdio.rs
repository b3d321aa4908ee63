//! The stdio transport (`serve_io`) over in-memory pipes: framing, limits,
//! back-pressure, server→client traffic, shutdown, cancellation and panics.
//!
//! Framing tests write raw bytes on a `tokio::io::duplex` pipe and read the
//! raw reply lines; higher-level tests go through `TestClient`.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::testing::{ClientOptions, TestClient};
use mcp_core::{
    serve_io, CallToolResult, CannotAsk, Confirmation, ElicitResponse, HeaderValue, IntoToolResult,
    InvokeContext, Json, McpServer, McpToolDef, StdioHandle, StdioOptions,
};
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

// ---------------------------------------------------------------------------
// Framing
// ---------------------------------------------------------------------------

#[tokio::test]
async fn each_reply_is_exactly_one_line_of_json() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let mut batch = Vec::new();
    for message in [
        ping(1),
        call(2, "echo", json!({"text": "two\nlines"})),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}),
    ] {
        batch.extend_from_slice(message.to_string().as_bytes());
        batch.push(b'\n');
    }
    conn.send(&batch).await;

    let mut ids = HashSet::new();
    for _ in 0..3 {
        let line = conn.line().await;
        assert!(!line.trim().is_empty(), "no empty reply lines");
        let reply: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("reply line must be a whole JSON value ({e}): {line:?}"));
        assert_eq!(reply["jsonrpc"], "2.0");
        assert!(reply.get("result").is_some(), "reply: {reply}");
        if reply["id"] == 2 {
            assert_eq!(
                text_of(&reply),
                "two\nlines",
                "a newline inside a string is escaped, not framed"
            );
        }
        ids.insert(reply["id"].as_i64().expect("numeric id"));
    }
    assert_eq!(ids, HashSet::from([1, 2, 3]));
}

#[tokio::test]
async fn blank_lines_and_notifications_get_no_reply() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"\n\n   \n\t\r\n").await;
    conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    conn.send_json(&ping(9)).await;
    let reply = conn.json().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 9, "result": {}}),
        "the first reply must be the ping's: blank lines and notifications are not answered"
    );
}

#[tokio::test]
async fn crlf_line_endings_are_accepted() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n")
        .await;
    conn.send(
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"crlf\"}}}\r\n",
    )
    .await;
    let mut replies = [conn.json().await, conn.json().await];
    replies.sort_by_key(|r| r["id"].as_i64());
    assert_eq!(replies[0], json!({"jsonrpc": "2.0", "id": 1, "result": {}}));
    assert_eq!(replies[1]["id"], 2);
    assert_eq!(text_of(&replies[1]), "crlf", "no stray \\r in the argument");
}

#[tokio::test]
async fn garbage_line_is_a_parse_error_with_null_id_and_serving_continues() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(b"this is not json {\n").await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32700);

    conn.send_json(&ping(2)).await;
    assert_eq!(
        conn.json().await,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}})
    );
}

#[tokio::test]
async fn multibyte_character_split_across_writes_survives() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let text = "naïve café €uro 😀 done";
    let mut line = call(1, "echo", json!({"text": text}))
        .to_string()
        .into_bytes();
    line.push(b'\n');
    let line_str = std::str::from_utf8(&line).expect("serde_json writes UTF-8");
    let emoji_at = line_str.find('😀').expect("the emoji is in the line");
    let split = emoji_at + 2;
    assert!(
        !line_str.is_char_boundary(split),
        "the split must fall inside the 4-byte character"
    );

    conn.send(&line[..split]).await;
    // Give the server a chance to read the first half on its own.
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    conn.send(&line[split..]).await;

    let reply = conn.json().await;
    assert_eq!(reply["id"], 1, "reply: {reply}");
    assert_eq!(text_of(&reply), text);
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error_and_serving_continues() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    let mut line = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"".to_vec();
    line.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    line.extend_from_slice(b"\"}}}\n");
    conn.send(&line).await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32700);

    conn.send_json(&call(2, "echo", json!({"text": "ok"})))
        .await;
    let reply = conn.json().await;
    assert_eq!(reply["id"], 2);
    assert_eq!(text_of(&reply), "ok");
}

#[tokio::test]
async fn final_unterminated_line_is_still_served() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send(ping(5).to_string().as_bytes()).await;
    conn.close_input().await;
    let replies = conn.rest().await;
    assert_eq!(
        replies,
        vec![json!({"jsonrpc": "2.0", "id": 5, "result": {}})]
    );
    conn.stopped().await;
}

/// An output that keeps every write apart, to see how replies are grouped.
#[derive(Clone, Default)]
struct RecordingOutput(Arc<Mutex<Vec<Vec<u8>>>>);

impl tokio::io::AsyncWrite for RecordingOutput {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(buf.to_vec());
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_long_read_is_answered_in_groups_not_in_one_write() {
    // 100 requests arrive in a single read: the client should not wait for
    // all 100 replies before it sees the first ones.
    let mut input = Vec::new();
    for id in 0..100 {
        input.extend_from_slice(ping(id).to_string().as_bytes());
        input.push(b'\n');
    }
    let output = RecordingOutput::default();
    let (server, _probe) = test_server();
    let handle = serve_io(
        server,
        std::io::Cursor::new(input),
        output.clone(),
        StdioOptions::default(),
    );
    wait_stopped(handle).await;

    let writes = output
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let per_write: Vec<usize> = writes
        .iter()
        .map(|w| w.iter().filter(|&&b| b == b'\n').count())
        .collect();
    assert!(
        per_write.iter().all(|&n| (1..=32).contains(&n)),
        "every write carries whole replies, at most 32 of them: {per_write:?}"
    );
    let ids: Vec<i64> = writes
        .concat()
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            let reply: Value = serde_json::from_slice(line).expect("a JSON reply line");
            reply["id"].as_i64().expect("numeric id")
        })
        .collect();
    assert_eq!(ids, (0..100).collect::<Vec<_>>(), "every reply, in order");
}

// ---------------------------------------------------------------------------
// Line length limit
// ---------------------------------------------------------------------------

const TOO_LONG: &str = "Message exceeds the maximum line length (1024)";

/// An echo request whose serialized line is exactly `len` bytes.
fn echo_line_of_len(id: i64, len: usize) -> Vec<u8> {
    let base = call(id, "echo", json!({"text": ""})).to_string().len();
    assert!(len >= base, "line too short for an echo request");
    let line = call(id, "echo", json!({"text": "a".repeat(len - base)})).to_string();
    assert_eq!(line.len(), len);
    line.into_bytes()
}

#[tokio::test]
async fn overlong_line_is_answered_invalid_request_and_next_line_works() {
    let (server, _probe) = test_server();
    // A small pipe, so the long line streams in many chunks.
    let mut conn = raw_with(server, StdioOptions::default().max_line_length(1024), 256);
    let mut long = echo_line_of_len(1, 5000);
    long.push(b'\n');
    let mut bytes = long;
    bytes.extend_from_slice(ping(2).to_string().as_bytes());
    bytes.push(b'\n');
    conn.send(&bytes).await;

    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32600);
    assert_eq!(reply["error"]["message"], TOO_LONG);

    let reply = conn.json().await;
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
        "the line after an overlong one is served normally"
    );
}

#[tokio::test]
async fn line_length_limit_boundary() {
    let (mut conn, _probe) = raw(StdioOptions::default().max_line_length(1024));

    let mut at_limit = echo_line_of_len(1, 1024);
    at_limit.push(b'\n');
    conn.send(&at_limit).await;
    let reply = conn.json().await;
    assert_eq!(
        reply["id"], 1,
        "a line of exactly the limit is accepted: {reply}"
    );
    assert!(reply.get("result").is_some(), "reply: {reply}");

    let mut over = echo_line_of_len(2, 1025);
    over.push(b'\n');
    conn.send(&over).await;
    let reply = conn.json().await;
    assert_error(&reply, &Value::Null, -32600);
    assert_eq!(reply["error"]["message"], TOO_LONG);
}

#[tokio::test]
async fn overlong_final_line_without_newline_is_answered() {
    let (mut conn, _probe) = raw(StdioOptions::default().max_line_length(1024));
    conn.send(&echo_line_of_len(1, 4096)).await;
    conn.close_input().await;
    let replies = conn.rest().await;
    assert_eq!(replies.len(), 1, "replies: {replies:?}");
    assert_error(&replies[0], &Value::Null, -32600);
    assert_eq!(replies[0]["error"]["message"], TOO_LONG);
    conn.stopped().await;
}

// ---------------------------------------------------------------------------
// Concurrency limit
// ---------------------------------------------------------------------------

const BUSY: &str = "Too many requests in flight (max 2); retry later";

#[tokio::test]
async fn third_concurrent_request_is_refused_while_notifications_still_work() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().max_concurrent_requests(2),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");

    let a = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "a"}}),
        )
        .await;
    let b = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "b"}}),
        )
        .await;
    assert_eq!(
        probe.started(2).await,
        HashSet::from(["a".to_owned(), "b".to_owned()])
    );

    // Both slots are taken and neither call can finish: the refusal must
    // come back on its own.
    let refused = client
        .call_tool("echo", json!({"text": "third"}))
        .await
        .expect_err("a third concurrent request must be refused");
    assert_eq!(refused.code, -32000);
    assert_eq!(refused.message, BUSY);
    assert!(
        probe.stopped.try_recv().is_err(),
        "the refusal must not wait for a running call to end"
    );

    // A notification during saturation is processed: it cancels `a`.
    assert!(client.cancel(&a.id).await);
    probe.stopped("a").await;
    assert!(
        a.response(Duration::from_millis(300)).await.is_none(),
        "a cancelled request gets no response"
    );

    // Its slot frees up (the permit is released just after the call ends).
    let reply = timeout(GUARD, async {
        loop {
            match client.call_tool("echo", json!({"text": "again"})).await {
                Err(e) if e.code == -32000 => tokio::time::sleep(Duration::from_millis(10)).await,
                other => return other,
            }
        }
    })
    .await
    .expect("a slot should free up after the cancellation")
    .expect("echo after the cancellation");
    assert_eq!(reply.text_content(), "again");

    probe.release_all();
    let b_reply = b.response(GUARD).await.expect("the released call answers");
    assert_eq!(text_of(&b_reply), "released b");
}

/// A client that opens seventeen slow calls on one stream with the default
/// options: the contract admits sixteen at once, so the seventeenth must be
/// refused `-32000` with the contract's message while the sixteen still run,
/// instead of starting a seventeenth handler.
#[tokio::test]
async fn default_limit_admits_sixteen_slow_calls_and_refuses_the_seventeenth() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");

    let mut running = Vec::new();
    for i in 0..16 {
        running.push(
            client
                .start_request(
                    "tools/call",
                    json!({"name": "block", "arguments": {"tag": format!("call {i}")}}),
                )
                .await,
        );
    }
    assert_eq!(probe.started(16).await.len(), 16);

    let refused = client
        .call_tool("block", json!({"tag": "call 16"}))
        .await
        .expect_err("the seventeenth concurrent request must be refused");
    assert_eq!(refused.code, -32000);
    assert_eq!(
        refused.message,
        "Too many requests in flight (max 16); retry later"
    );
    assert!(
        probe.started.try_recv().is_err(),
        "the seventeenth call must not start a handler"
    );

    probe.release_all();
    for call in running {
        let reply = call.response(GUARD).await.expect("a released call answers");
        assert!(text_of(&reply).starts_with("released call "));
    }
}

#[tokio::test]
async fn batch_over_the_limit_refuses_entries_inside_the_batch_reply() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().max_concurrent_requests(2),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");

    let batch = json!([
        call("b1", "block", json!({"tag": "x"})),
        call("b2", "block", json!({"tag": "y"})),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        call("b3", "echo", json!({"text": "refused"})),
    ]);
    assert!(client.send_json(&batch).await);
    assert_eq!(
        probe.started(2).await,
        HashSet::from(["x".to_owned(), "y".to_owned()])
    );
    probe.release_all();

    let reply = client
        .next_unmatched(GUARD)
        .await
        .expect("the batch reply arrives");
    let entries = reply
        .as_array()
        .unwrap_or_else(|| panic!("a batch gets an array reply: {reply}"));
    assert_eq!(
        entries.len(),
        3,
        "one entry per request, none for the notification: {reply}"
    );
    assert_eq!(entries[0]["id"], "b1");
    assert_eq!(text_of(&entries[0]), "released x");
    assert_eq!(entries[1]["id"], "b2");
    assert_eq!(text_of(&entries[1]), "released y");
    assert_error(&entries[2], &json!("b3"), -32000);
    assert_eq!(entries[2]["error"]["message"], BUSY);
}

// ---------------------------------------------------------------------------
// Server → client traffic: progress and elicitation
// ---------------------------------------------------------------------------

#[tokio::test]
async fn progress_notifications_arrive_on_the_same_stream() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let (result, progress) = client
        .call_tool_with_progress("progress", json!({"steps": 3}))
        .await
        .expect("progress call");
    assert_eq!(result.text_content(), "done 3");
    assert_eq!(progress.len(), 3, "progress: {progress:?}");
    mcp_suite::assert_progress_counts_up(&progress, 3.0);
    assert_eq!(progress[0]["message"], "step 1");
}

#[tokio::test]
async fn no_progress_without_a_progress_token() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let result = client
        .call_tool("progress", json!({"steps": 3}))
        .await
        .expect("progress call");
    assert_eq!(result.text_content(), "done 3");
    let notes = client.drain_notifications().await;
    assert!(
        notes
            .iter()
            .all(|n| n["method"] != "notifications/progress"),
        "no token, no progress: {notes:?}"
    );
}

#[tokio::test]
async fn confirm_through_elicitation() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let result = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm call");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(result.text_content(), "confirmed");
}

#[tokio::test]
async fn confirm_declined_by_the_user_fails_closed() {
    let (server, _probe) = test_server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().elicit(|_| Ok(json!({"action": "decline"}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("confirm", json!({}))
        .await
        .expect("confirm call");
    assert!(result.is_error());
    assert_eq!(result.text_content(), "not confirmed");
}

#[tokio::test]
async fn typed_form_elicitation_round_trips() {
    let (server, _probe) = test_server();
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().elicit(move |params| {
            record
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(params.clone());
            Ok(json!({"action": "accept", "content": {"title": "Sync", "minutes": 30}}))
        }),
    )
    .await
    .expect("initialize");

    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert!(!result.is_error(), "result: {result:?}");
    assert_eq!(
        result.structured_content,
        json!({"title": "Sync", "minutes": 30}).as_object().cloned()
    );

    let seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    assert_eq!(seen.len(), 1, "exactly one elicitation/create: {seen:?}");
    assert_eq!(seen[0]["message"], "Plan a meeting");
    let schema = &seen[0]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["title"]["type"], "string");
    assert_eq!(schema["properties"]["minutes"]["type"], "integer");
}

#[tokio::test]
async fn typed_form_decline_and_misfit_content() {
    let (server, _probe) = test_server();
    let client = TestClient::connect_with(
        server.clone(),
        StdioOptions::default(),
        ClientOptions::default().elicit(|_| Ok(json!({"action": "decline"}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert_eq!(result.text_content(), "declined");

    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default()
            .elicit(|_| Ok(json!({"action": "accept", "content": {"title": 7}}))),
    )
    .await
    .expect("initialize");
    let result = client
        .call_tool("form", json!({}))
        .await
        .expect("form call");
    assert!(result.is_error(), "result: {result:?}");
    assert!(
        result.text_content().starts_with("-32602: "),
        "content that does not fit the form is -32602: {result:?}"
    );
}

#[tokio::test]
async fn elicitation_request_and_response_share_the_raw_stream() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    let init = conn.json().await;
    assert_eq!(init["id"], 1, "initialize reply: {init}");
    conn.send_json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;

    conn.send_json(&call(2, "ask", json!({}))).await;
    let request = conn.json().await;
    assert_eq!(request["jsonrpc"], "2.0");
    assert_eq!(
        request["method"], "elicitation/create",
        "message: {request}"
    );
    assert_eq!(request["params"]["message"], "Proceed?");
    let id = request
        .get("id")
        .filter(|id| id.is_string() || id.is_i64())
        .expect("a server→client request has an id")
        .clone();

    conn.send_json(&json!({"jsonrpc": "2.0", "id": id,
        "result": {"action": "accept", "content": {"confirm": true}}}))
        .await;
    let reply = conn.json().await;
    assert_eq!(reply["id"], 2, "reply: {reply}");
    assert_eq!(text_of(&reply), "answer true");
}

#[tokio::test]
async fn no_elicitation_when_the_client_did_not_announce_it() {
    let (server, _probe) = test_server();
    let with = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    let result = with
        .call_tool("has_elicitation", json!({}))
        .await
        .expect("call");
    assert_eq!(
        result.text_content(),
        "true",
        "control: announced → present"
    );

    let without = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().without_elicitation(),
    )
    .await
    .expect("initialize");
    let result = without
        .call_tool("has_elicitation", json!({}))
        .await
        .expect("call");
    assert_eq!(result.text_content(), "false");
    let result = without.call_tool("confirm", json!({})).await.expect("call");
    assert!(result.is_error(), "confirm fails closed: {result:?}");
    assert_eq!(result.text_content(), "not confirmed");
}

// ---------------------------------------------------------------------------
// Back-pressure
// ---------------------------------------------------------------------------

#[tokio::test]
async fn a_client_that_never_reads_stalls_the_server_instead_of_growing_it() {
    let (server, _probe) = test_server();
    let (client_end, server_end) = tokio::io::duplex(64);
    let (server_read, server_write) = tokio::io::split(server_end);
    let handle = serve_io(server, server_read, server_write, StdioOptions::default());
    let (mut client_read, mut client_write) = tokio::io::split(client_end);

    // Write requests (whose replies nobody reads) chunk by chunk until a
    // chunk makes no progress for a while: the server stopped reading. A
    // bounded server stalls after a few kilobytes (its output queue and the
    // requests blocked on it); one that buffers without bound reads the
    // whole budget.
    const BUDGET: usize = 1024 * 1024;
    const STALL: Duration = Duration::from_secs(2);
    let mut written = 0usize;
    let mut next_id = 0u64;
    let mut stalled = false;
    while written < BUDGET {
        let mut chunk = Vec::with_capacity(8 * 1024);
        for _ in 0..100 {
            next_id += 1;
            chunk.extend_from_slice(ping(next_id).to_string().as_bytes());
            chunk.push(b'\n');
        }
        match timeout(STALL, client_write.write_all(&chunk)).await {
            Ok(result) => result.expect("writing to the in-memory pipe"),
            Err(_elapsed) => {
                stalled = true;
                break;
            }
        }
        written += chunk.len();
    }
    assert!(
        stalled,
        "the server read all {written} bytes although nobody read its replies"
    );

    // Start reading: everything queued flows, and the server serves again.
    let reader = tokio::spawn(async move {
        let mut lines = BufReader::new(&mut client_read).lines();
        let mut replies = Vec::new();
        while let Some(line) = lines.next_line().await.expect("reading replies") {
            let reply: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("reply line is not JSON ({e}): {line:?}"));
            let done = reply["id"] == "final";
            replies.push(reply);
            if done {
                break;
            }
        }
        replies
    });
    // Terminate whatever line the abandoned write left half-written.
    timeout(GUARD, async {
        client_write.write_all(b"\n").await?;
        client_write
            .write_all(format!("{}\n", ping("final")).as_bytes())
            .await?;
        client_write.flush().await
    })
    .await
    .expect("once the client reads, the server reads again")
    .expect("writing to the in-memory pipe");

    let replies = timeout(GUARD, reader)
        .await
        .expect("the final reply arrives")
        .expect("the reader task does not panic");
    assert_eq!(
        replies.last(),
        Some(&json!({"jsonrpc": "2.0", "id": "final", "result": {}}))
    );
    let mut seen = HashSet::new();
    for reply in &replies {
        if let Some(id) = reply["id"].as_u64() {
            assert!(seen.insert(id), "id {id} answered twice");
            assert!(
                reply.get("result") == Some(&json!({})) || reply["error"]["code"] == -32000,
                "a ping is answered or refused as busy: {reply}"
            );
        }
    }
    // Every ping of the chunks written in full was read and answered once.
    let complete = next_id.saturating_sub(100);
    let missing: Vec<u64> = (1..=complete).filter(|id| !seen.contains(id)).collect();
    assert!(
        missing.is_empty(),
        "{} of the {complete} fully written pings were never answered, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(seen.iter().all(|id| *id <= next_id), "unknown ids answered");

    client_write.shutdown().await.expect("closing input");
    wait_stopped(handle).await;
}

// ---------------------------------------------------------------------------
// End of input, close, drain
// ---------------------------------------------------------------------------

#[tokio::test]
async fn call_in_flight_at_end_of_input_completes_before_wait_returns() {
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&call(1, "sleepy", json!({"ms": 150, "tag": "s"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;

    conn.stopped().await;
    // wait() has returned: the reply must already be in the pipe.
    let mut rest = Vec::new();
    timeout(GUARD, conn.lines.get_mut().read_to_end(&mut rest))
        .await
        .expect("the server's output is closed once it stopped")
        .expect("reading the pipe");
    let text = String::from_utf8(rest).expect("UTF-8 output");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "output after end of input: {text:?}");
    let reply: Value = serde_json::from_str(lines[0]).expect("JSON reply");
    assert_eq!(reply["id"], 1);
    assert_eq!(text_of(&reply), "slept");
}

#[tokio::test]
async fn tool_awaiting_elicitation_is_released_when_input_closes() {
    let (mut conn, _probe) = raw(StdioOptions::default().drain_timeout(Duration::from_secs(120)));
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    assert_eq!(conn.json().await["id"], 1);
    conn.send_json(&call(2, "ask", json!({}))).await;
    let request = conn.json().await;
    assert_eq!(
        request["method"], "elicitation/create",
        "message: {request}"
    );

    // Never answer; end the input instead.
    conn.close_input().await;
    conn.stopped().await;

    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "output after end of input: {rest:?}");
    assert_eq!(rest[0]["id"], 2);
    assert_eq!(rest[0]["result"]["isError"], true, "reply: {}", rest[0]);
    assert_eq!(
        text_of(&rest[0]),
        "elicitation failed: the client connection closed"
    );
}

#[tokio::test]
async fn elicitation_started_after_input_closed_fails_instead_of_hanging() {
    // Like the test above, but the call only reaches its elicitation after
    // the input has ended: no answer can arrive any more, so the elicitation
    // must fail at once and the call still completes with a reply, rather
    // than wait for an answer until the drain deadline (10 s by default)
    // ends it with an error.
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&initialize_request(1, json!({"elicitation": {}})))
        .await;
    assert_eq!(conn.json().await["id"], 1);
    conn.send_json(&call(2, "ask", json!({"after_ms": 200, "tag": "late"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;
    conn.stopped().await;

    let rest = conn.rest().await;
    let replies: Vec<&Value> = rest.iter().filter(|m| m.get("method").is_none()).collect();
    assert_eq!(replies.len(), 1, "output after end of input: {rest:?}");
    assert_eq!(replies[0]["id"], 2);
    assert_eq!(
        replies[0]["result"]["isError"], true,
        "reply: {}",
        replies[0]
    );
    assert_eq!(
        text_of(replies[0]),
        "elicitation failed: the client connection closed"
    );
}

#[tokio::test]
async fn drain_timeout_bounds_a_call_that_never_ends() {
    let (mut conn, mut probe) =
        raw(StdioOptions::default().drain_timeout(Duration::from_millis(100)));
    conn.send_json(&call(1, "block", json!({"tag": "forever"})))
        .await;
    probe.started(1).await;
    conn.close_input().await;
    conn.stopped().await;
    probe.stopped("forever").await;
    // Ended by the drain deadline, the call still gets its one answer.
    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert_eq!(rest[0]["id"], 1, "{rest:?}");
    assert_eq!(rest[0]["error"]["code"], -32000, "{rest:?}");
    let message = rest[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("drain timeout"), "{rest:?}");
}

#[tokio::test]
async fn close_stops_reading_while_input_stays_open() {
    let (mut conn, _probe) = raw(StdioOptions::default());
    conn.send_json(&ping(1)).await;
    assert_eq!(conn.json().await["id"], 1);

    conn.close();
    // The client's output is still open: only close() can end the server.
    conn.stopped().await;

    // A request sent now is never read (the pipe may already be gone).
    let _ = conn
        .write
        .write_all(format!("{}\n", ping(2)).as_bytes())
        .await;
    let next = timeout(GUARD, conn.lines.next_line())
        .await
        .expect("the output ends once the server stopped")
        .expect("reading the pipe");
    assert_eq!(next, None, "nothing is answered after close()");
}

#[tokio::test]
async fn close_lets_the_call_in_flight_finish() {
    let (mut conn, mut probe) = raw(StdioOptions::default());
    conn.send_json(&call(1, "sleepy", json!({"ms": 150, "tag": "c"})))
        .await;
    probe.started(1).await;
    conn.close();
    conn.stopped().await;
    let rest = conn.rest().await;
    assert_eq!(rest.len(), 1, "output: {rest:?}");
    assert_eq!(rest[0]["id"], 1);
    assert_eq!(text_of(&rest[0]), "slept");
}

// ---------------------------------------------------------------------------
// Headers, cancellation, panics
// ---------------------------------------------------------------------------

#[tokio::test]
async fn static_headers_reach_the_tool() {
    let (server, _probe) = test_server();
    let headers = BTreeMap::from([
        ("x-tenant".to_owned(), HeaderValue::One("acme".to_owned())),
        (
            "x-scope".to_owned(),
            HeaderValue::Many(vec!["read".to_owned(), "write".to_owned()]),
        ),
    ]);
    let client = TestClient::connect_with(
        server,
        StdioOptions::default().headers(headers),
        ClientOptions::default(),
    )
    .await
    .expect("initialize");
    let get = |name: &'static str| {
        let client = &client;
        async move {
            client
                .call_tool("header", json!({"name": name}))
                .await
                .expect("header call")
                .text_content()
        }
    };
    assert_eq!(get("x-tenant").await, "one:acme");
    assert_eq!(get("x-scope").await, "many:read|write");
    assert_eq!(get("authorization").await, "<none>");
}

#[tokio::test]
async fn cancelled_request_gets_no_response_and_serving_continues() {
    let (server, mut probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let pending = client
        .start_request(
            "tools/call",
            json!({"name": "block", "arguments": {"tag": "c"}}),
        )
        .await;
    probe.started(1).await;

    assert!(client.cancel(&pending.id).await);
    probe.stopped("c").await;
    assert!(
        pending.response(Duration::from_secs(1)).await.is_none(),
        "a cancelled request must not be answered"
    );

    let result = client
        .call_tool("echo", json!({"text": "still here"}))
        .await
        .expect("echo after cancellation");
    assert_eq!(result.text_content(), "still here");
}

#[tokio::test]
async fn cancel_right_behind_its_request_is_not_lost() {
    // The stream is ordered: a cancellation sent right after its request
    // refers to a request the server has already read, so it must apply even
    // when the server has not started running the call yet. With one slot, a
    // lost cancellation leaves `block` holding it forever and every later
    // request is refused as busy.
    let (server, _probe) = test_server();
    let mut conn = raw_with(
        server,
        StdioOptions::default().max_concurrent_requests(1),
        1 << 16,
    );
    for round in 0..50 {
        let id = format!("blk-{round}");
        let mut bytes = call(id.as_str(), "block", json!({"tag": id}))
            .to_string()
            .into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": id, "reason": "test"}})
            .to_string()
            .as_bytes(),
        );
        bytes.push(b'\n');
        conn.send(&bytes).await;

        // The slot must come free again: retry a ping while it is busy.
        let freed = timeout(Duration::from_secs(5), async {
            let mut attempt = 0u32;
            loop {
                attempt += 1;
                let ping_id = format!("ping-{round}-{attempt}");
                conn.send_json(&ping(ping_id.as_str())).await;
                let reply = conn.json().await;
                assert_ne!(
                    reply["id"],
                    json!(id),
                    "a cancelled request is not answered"
                );
                assert_eq!(reply["id"], json!(ping_id), "reply: {reply}");
                if reply.get("result").is_some() {
                    return;
                }
                assert_eq!(reply["error"]["code"], -32000, "reply: {reply}");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        assert!(
            freed.is_ok(),
            "round {round}: the cancellation sent right after request {id} was lost; \
             the call still holds the only slot"
        );
    }
}

#[tokio::test]
async fn tool_panic_is_an_internal_error_and_serving_continues() {
    let (server, _probe) = test_server();
    let client = TestClient::connect(server).await.expect("initialize");
    let err = client
        .call_tool("boom", json!({}))
        .await
        .expect_err("a panicking tool is a protocol error");
    assert_eq!(err.code, -32603);
    // The panic's text stays in the server's log; the client gets an id.
    assert!(
        err.message.starts_with("Internal error (error id "),
        "{err:?}"
    );
    assert!(
        !err.to_value().to_string().contains("panicked on purpose"),
        "error: {err:?}"
    );

    let result = client
        .call_tool("echo", json!({"text": "after panic"}))
        .await
        .expect("echo after a panic");
    assert_eq!(result.text_content(), "after panic");
}
