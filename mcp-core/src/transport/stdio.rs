//! Newline-delimited JSON-RPC over stdin/stdout, or any `AsyncRead`/`AsyncWrite` pair.
//!
//! - One message per line; blank lines are skipped; `\r\n` is accepted.
//! - A line that is not JSON (or not UTF-8) is answered `-32700` with id `null`.
//! - A line longer than [`StdioOptions::max_line_length`] bytes is discarded
//!   as it streams past, never buffered, and answered `-32600`.
//! - At most [`StdioOptions::max_concurrent_requests`] requests run at once;
//!   one more is answered `-32000` at once (inside the batch reply for a batch).
//!   Notifications are never counted nor refused.
//! - Replies, progress notifications and `elicitation/create` requests share
//!   the output; a single writer task batches whatever is queued into one write.
//!   The queue is bounded, so a client that stops reading stalls the server
//!   instead of growing its memory.
//! - At end of input the transport stops reading, lets in-flight calls finish
//!   (up to [`StdioOptions::drain_timeout`]), flushes, and returns.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use crate::cancel::CancelToken;
use crate::context::{CallContext, Headers, Outbound};
use crate::protocol::{fail, ErrorObject, RPC_ERRORS};
use crate::server::{parse_payload, McpServer, Step};
use crate::session::Session;

/// Default [`StdioOptions::max_line_length`]: 4 MiB.
pub const DEFAULT_MAX_LINE_LENGTH: usize = 4 * 1024 * 1024;
/// Default [`StdioOptions::max_concurrent_requests`].
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 16;

/// Options for [`serve_stdio`] and [`serve_io`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// Static metadata handed to every call as its headers (stdio has no
    /// per-request headers; this is how a local client passes a token or tenant).
    pub headers: Headers,
    /// The longest accepted line in bytes (default 4 MiB).
    pub max_line_length: usize,
    /// Requests running at once on this connection (default 16).
    pub max_concurrent_requests: usize,
    /// How long in-flight calls may run after input ends (default 10 s).
    pub drain_timeout: Duration,
    /// Outgoing messages that may wait for the writer (default 256).
    pub output_queue: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            headers: Headers::new(),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            drain_timeout: Duration::from_secs(10),
            output_queue: 256,
        }
    }
}

impl StdioOptions {
    /// Sets the static headers.
    #[must_use]
    pub fn headers(mut self, headers: Headers) -> Self {
        self.headers = headers;
        self
    }

    /// Sets the line length limit in bytes.
    #[must_use]
    pub fn max_line_length(mut self, bytes: usize) -> Self {
        self.max_line_length = bytes;
        self
    }

    /// Sets the concurrency limit.
    #[must_use]
    pub fn max_concurrent_requests(mut self, n: usize) -> Self {
        self.max_concurrent_requests = n;
        self
    }

    /// Sets the drain deadline after end of input.
    #[must_use]
    pub fn drain_timeout(mut self, timeout: Duration) -> Self {
        self.drain_timeout = timeout;
        self
    }
}

/// A running stdio server.
#[derive(Debug)]
pub struct StdioHandle {
    stop: CancelToken,
    task: JoinHandle<io::Result<()>>,
}

impl StdioHandle {
    /// Stops reading input. In-flight calls still finish (bounded by the
    /// drain timeout) and their replies are written; the streams are not closed.
    pub fn close(&self) {
        self.stop.cancel();
    }

    /// Waits until the server has stopped: input ended or [`close`](Self::close)
    /// was called, in-flight calls drained, output flushed.
    ///
    /// # Errors
    /// A read error on the input or a write error on the output.
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(e)),
        }
    }
}

/// Serves `server` on the process's stdin and stdout.
///
/// Nothing else may write to stdout: log to stderr.
///
/// When stdin or stdout is a pipe (as when an MCP client spawns the server)
/// it is switched to non-blocking mode and driven by the reactor directly;
/// otherwise (a file, a terminal) Tokio's blocking stdio is used.
pub fn serve_stdio(server: McpServer, options: StdioOptions) -> StdioHandle {
    let (reader, writer) = std_streams();
    serve_io(server, reader, writer, options)
}

type BoxedReader = Box<dyn AsyncRead + Unpin + Send>;
type BoxedWriter = Box<dyn AsyncWrite + Unpin + Send>;

#[cfg(unix)]
fn std_streams() -> (BoxedReader, BoxedWriter) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let reader: BoxedReader = match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    };
    let writer: BoxedWriter = match std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Sender::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdout()),
    };
    (reader, writer)
}

#[cfg(not(unix))]
fn std_streams() -> (BoxedReader, BoxedWriter) {
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

/// Serves `server` on any byte stream pair (in tests, `tokio::io::duplex`).
///
/// Must be called within a Tokio runtime.
pub fn serve_io<R, W>(server: McpServer, reader: R, writer: W, options: StdioOptions) -> StdioHandle
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let stop = CancelToken::new();
    let task = tokio::spawn(run(server, reader, writer, options, stop.clone()));
    StdioHandle { stop, task }
}

/// Queues serialized lines for the writer task.
#[derive(Clone)]
struct LineSender(mpsc::Sender<Vec<u8>>);

impl LineSender {
    async fn send_value(&self, message: &Value) -> bool {
        let mut line = match serde_json::to_vec(message) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        };
        line.push(b'\n');
        self.0.send(line).await.is_ok()
    }
}

#[async_trait]
impl Outbound for LineSender {
    async fn send(&self, message: Value) -> bool {
        self.send_value(&message).await
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> io::Result<()> {
    const BATCH: usize = 64 * 1024;
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        if rx.is_empty() {
            writer.write_all(&first).await?;
        } else {
            buf.clear();
            buf.extend_from_slice(&first);
            while buf.len() < BATCH {
                match rx.try_recv() {
                    Ok(more) => buf.extend_from_slice(&more),
                    Err(_) => break,
                }
            }
            writer.write_all(&buf).await?;
        }
        writer.flush().await?;
    }
    writer.flush().await
}

async fn run<R, W>(
    server: McpServer,
    reader: R,
    writer: W,
    options: StdioOptions,
    stop: CancelToken,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(options.output_queue.max(1));
    let writer_task = tokio::spawn(write_loop(writer, rx));
    let out = LineSender(tx);
    let session = Session::new();
    let ctx = CallContext::new()
        .with_headers(options.headers.clone())
        .with_session(session.clone())
        .with_outbound(Arc::new(out.clone()));
    let limit = Arc::new(Semaphore::new(options.max_concurrent_requests));
    let mut tasks = JoinSet::new();
    let mut lines = LineReader::new(reader, options.max_line_length);

    let read_result = loop {
        let next = tokio::select! {
            biased;
            () = stop.cancelled() => break Ok(()),
            next = lines.next_line() => next,
        };
        let message = match next {
            Ok(Line::Eof) => break Ok(()),
            Ok(Line::Blank) => continue,
            Ok(Line::TooLong) => {
                let error = ErrorObject::invalid_request(format!(
                    "Message exceeds the maximum line length ({})",
                    options.max_line_length
                ));
                out.send_value(&fail(Value::Null, &error)).await;
                continue;
            }
            Ok(Line::Parsed(Ok(message))) => message,
            Ok(Line::Parsed(Err(reply))) => {
                out.send_value(&reply).await;
                continue;
            }
            Err(e) => break Err(e),
        };
        while tasks.try_join_next().is_some() {}
        dispatch_line(
            &server,
            message,
            &ctx,
            &limit,
            &out,
            &mut tasks,
            options.max_concurrent_requests,
        )
        .await;
    };

    // No more responses can arrive: end long-lived requests
    // (subscriptions/listen), refuse new server→client requests, and release
    // tools already waiting on the client.
    session.close();
    server.release_closed_sessions();
    session.fail_pending();
    let drained = tokio::time::timeout(options.drain_timeout, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tasks.abort_all();
    }
    drop(ctx);
    drop(out);
    let write_result = match writer_task.await {
        Ok(r) => r,
        Err(e) => Err(io::Error::other(e)),
    };
    read_result.and(write_result)
}

async fn dispatch_line(
    server: &McpServer,
    message: Value,
    ctx: &CallContext,
    limit: &Arc<Semaphore>,
    out: &LineSender,
    tasks: &mut JoinSet<()>,
    max: usize,
) {
    let busy = move || {
        ErrorObject::new(
            RPC_ERRORS::SERVER_BUSY,
            format!("Too many requests in flight (max {max}); retry later"),
        )
    };
    match &message {
        Value::Array(_) => {
            let server = server.clone();
            let ctx = ctx.clone();
            let out = out.clone();
            let limit = Arc::clone(limit);
            tasks.spawn(async move {
                let mut admit = move || {
                    Arc::clone(&limit)
                        .try_acquire_owned()
                        .map(|p| Box::new(p) as crate::server::Admission)
                        .map_err(|_| busy())
                };
                if let Some(reply) = server
                    .dispatch_payload_admitted(message, &ctx, &mut admit)
                    .await
                {
                    out.send_value(&reply).await;
                }
            });
        }
        Value::Object(obj) if obj.contains_key("id") && obj.contains_key("method") => {
            match Arc::clone(limit).try_acquire_owned() {
                Ok(permit) => match server.prepare(message, ctx) {
                    // Registered here, in arrival order, so a cancel that
                    // follows on the next line finds the call.
                    Step::Run(call) => {
                        let server = server.clone();
                        let out = out.clone();
                        tasks.spawn(async move {
                            if let Some(reply) = server.run_prepared(call).await {
                                out.send_value(&reply).await;
                            }
                            drop(permit);
                        });
                    }
                    Step::Done(reply) => {
                        drop(permit);
                        if let Some(reply) = reply {
                            out.send_value(&reply).await;
                        }
                    }
                },
                Err(_) => {
                    let id = obj
                        .get("id")
                        .and_then(crate::protocol::RequestId::from_value)
                        .map_or(Value::Null, |id| id.to_value());
                    out.send_value(&fail(id, &busy())).await;
                }
            }
        }
        _ => {
            // Notifications, responses and invalid messages: cheap, handled inline.
            if let Some(reply) = server.handle_message(message, ctx).await {
                out.send_value(&reply).await;
            }
        }
    }
}

enum Line {
    /// A non-blank line, parsed: the message or the ready `-32700` reply.
    Parsed(Result<Value, Value>),
    Blank,
    TooLong,
    Eof,
}

/// Splits a byte stream into lines without ever holding more than `max`
/// bytes of one line, and parses each. A line that lies whole in the read
/// buffer (the usual case) is parsed in place, without a copy.
struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    line: Vec<u8>,
    discarding: bool,
}

fn parse_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        Line::Blank
    } else {
        Line::Parsed(parse_payload(line))
    }
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
            line: Vec::new(),
            discarding: false,
        }
    }

    /// The next line (without its `\n` / `\r\n`), parsed. Cancel-safe: a
    /// partially read line stays buffered in `self`.
    async fn next_line(&mut self) -> io::Result<Line> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                // End of input: a final unterminated line still counts.
                if self.discarding {
                    self.discarding = false;
                    return Ok(Line::TooLong);
                }
                if self.line.is_empty() {
                    return Ok(Line::Eof);
                }
                let parsed = parse_line(&self.line);
                self.line.clear();
                return Ok(parsed);
            }
            match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let fits = !self.discarding && self.line.len() + i <= self.max;
                    let parsed = if !fits {
                        Line::TooLong
                    } else if self.line.is_empty() {
                        parse_line(&chunk[..i])
                    } else {
                        self.line.extend_from_slice(&chunk[..i]);
                        let parsed = parse_line(&self.line);
                        self.line.clear();
                        parsed
                    };
                    self.inner.consume(i + 1);
                    if !fits {
                        self.discarding = false;
                        self.line = Vec::new();
                    }
                    return Ok(parsed);
                }
                None => {
                    let n = chunk.len();
                    if !self.discarding {
                        if self.line.len() + n > self.max {
                            self.discarding = true;
                            self.line = Vec::new();
                        } else {
                            self.line.extend_from_slice(chunk);
                        }
                    }
                    self.inner.consume(n);
                }
            }
        }
    }
}
