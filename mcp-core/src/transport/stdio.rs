//! Newline-delimited JSON-RPC over stdin/stdout, or any `AsyncRead`/`AsyncWrite` pair.
//!
//! - One message per line; blank lines are skipped; `\r\n` is accepted.
//! - A line that is not JSON (or not UTF-8) is answered `-32700` with id `null`.
//! - A line longer than [`StdioOptions::max_line_length`] bytes is discarded
//!   as it streams past, never buffered, and answered `-32600`.
//! - At most [`StdioOptions::max_concurrent_requests`] requests run at once;
//!   one more is answered `-32000` at once (inside the batch reply for a batch).
//!   Notifications are never counted nor refused.
//! - Every complete line of one read is handled before the next read: a call
//!   that finishes on its first poll (most do) is answered in place, without
//!   a task of its own, and such replies of that read leave together. A long
//!   read's replies leave in groups (every 32 replies, or once the oldest has
//!   waited 100 µs), so the client reads the first ones while the rest are
//!   still being handled. A call that has to wait gets its own task.
//! - Replies, progress notifications and `elicitation/create` requests share
//!   the output; a single writer task batches whatever is queued into one write.
//!   The queue is bounded, so a client that stops reading stalls the server
//!   instead of growing its memory.
//! - At end of input the transport stops reading, lets in-flight calls finish
//!   (up to [`StdioOptions::drain_timeout`]), flushes, and returns.
//!
//! # A guarded stdout
//!
//! On Unix, [`serve_stdio`] keeps the process's standard output for protocol
//! messages alone: it writes them to a private duplicate of file descriptor 1
//! and points fd 1 itself at stderr (`dup2(2, 1)`), so a `println!` in a
//! tool, a dependency that prints, or a child process that inherits stdout
//! lands on stderr instead of corrupting the stream. Rust's buffered
//! `std::io::stdout()` is flushed first, under its lock, so nothing printed
//! before the call leaks into the protocol stream and nothing printed after
//! reaches it. When the server stops ([`StdioHandle::wait`] returns, or the
//! handle's task is dropped with its runtime) fd 1 is pointed back at the
//! original stdout, in blocking mode again; output printed while serving
//! stays on stderr. Several `serve_stdio` calls at once share one guard: the
//! last to stop restores fd 1.
//!
//! Opt out with [`StdioOptions::guard_stdout(false)`](StdioOptions::guard_stdout)
//! (for a process that manages fd 1 itself). If the redirection fails (fd 2
//! closed, say) the transport serves unguarded, as before. On other
//! platforms there is no guard: nothing else may write to stdout there.
//! [`serve_io`] (streams of your own) never touches the process's stdio.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::Value;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use crate::cancel::CancelToken;
use crate::context::{CallContext, Headers, Outbound};
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{Admit, Frame, McpServer, Response, Started};
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
    /// Whether [`serve_stdio`] points file descriptor 1 at stderr while it
    /// serves, writing protocol messages to a private duplicate (default
    /// `true`; Unix only; see [the module docs](self#a-guarded-stdout)).
    /// Ignored by [`serve_io`].
    pub guard_stdout: bool,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            headers: Headers::new(),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            drain_timeout: Duration::from_secs(10),
            output_queue: 256,
            guard_stdout: true,
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

    /// Whether [`serve_stdio`] guards stdout (default `true`): `false` keeps
    /// fd 1 as it is, so anything printed there mixes with the protocol
    /// messages. See [the module docs](self#a-guarded-stdout).
    #[must_use]
    pub fn guard_stdout(mut self, guard: bool) -> Self {
        self.guard_stdout = guard;
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
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; the server keeps running.
    pub async fn wait(self) -> io::Result<()> {
        match self.task.await {
            Ok(result) => result,
            Err(e) => Err(io::Error::other(e)),
        }
    }
}

/// Serves `server` on the process's stdin and stdout.
///
/// On Unix, stdout is guarded while the server runs (unless
/// [`StdioOptions::guard_stdout`] says otherwise): protocol messages go to a
/// private duplicate of fd 1 and fd 1 is pointed at stderr, so a stray
/// `println!` (yours, a dependency's, a child process's) shows up on stderr
/// instead of breaking the client. fd 1 is restored when the server stops.
/// Elsewhere nothing else may write to stdout: log to stderr. See
/// [the module docs](self#a-guarded-stdout).
///
/// When stdin or stdout is a pipe (as when an MCP client spawns the server)
/// it is switched to non-blocking mode and driven by the reactor directly;
/// otherwise (a file, a terminal) Tokio's blocking stdio is used.
///
/// Must be called within a Tokio runtime.
pub fn serve_stdio(server: McpServer, options: StdioOptions) -> StdioHandle {
    #[cfg(unix)]
    if options.guard_stdout {
        if let Ok((guard, protocol_fd)) = guard::StdoutGuard::install() {
            let reader = std_reader();
            let writer = guard::protocol_writer(protocol_fd);
            let stop = CancelToken::new();
            let task = tokio::spawn({
                let stop = stop.clone();
                async move {
                    let result = run(server, reader, writer, options, stop).await;
                    // Every message is written: fd 1 may be the real stdout again.
                    drop(guard);
                    result
                }
            });
            return StdioHandle { stop, task };
        }
    }
    let (reader, writer) = std_streams();
    serve_io(server, reader, writer, options)
}

type BoxedReader = Box<dyn AsyncRead + Unpin + Send>;
type BoxedWriter = Box<dyn AsyncWrite + Unpin + Send>;

#[cfg(unix)]
fn std_reader() -> BoxedReader {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    match std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .and_then(pipe::Receiver::from_owned_fd)
    {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::io::stdin()),
    }
}

#[cfg(unix)]
fn std_streams() -> (BoxedReader, BoxedWriter) {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    let reader = std_reader();
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
        self.send_bytes(line).await
    }

    async fn send_response(&self, response: &Response) -> bool {
        let mut line = Vec::new();
        response.write_to(&mut line);
        line.push(b'\n');
        self.send_bytes(line).await
    }

    /// Queues whole lines (one or more, each ending in `\n`).
    async fn send_bytes(&self, lines: Vec<u8>) -> bool {
        self.0.send(lines).await.is_ok()
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

/// Replies answered in place during one read, sent as one write. Flushed
/// early past this size so one read's replies never pile up unbounded.
const FLUSH_AT: usize = 64 * 1024;

/// Replies of one read that may wait for each other: past this many, the
/// ones gathered so far go out while the rest of the read is handled. One
/// write for a whole long read would leave the client idle while the server
/// works and the server idle while the client works; on a pipelining
/// client this raised throughput by half over one write per read (measured
/// with `../shared/bench`, 64 requests in flight); a write per reply would
/// cost a syscall per reply instead.
const FLUSH_EVERY: usize = 32;

/// The longest a reply waits behind later lines of the same read.
const FLUSH_AFTER: Duration = Duration::from_micros(100);

/// One connection's reading side: what every line needs.
struct Reader<'a> {
    server: &'a McpServer,
    ctx: &'a CallContext,
    admit: &'a Admit,
    out: &'a LineSender,
    tasks: &'a mut JoinSet<()>,
    max_line: usize,
    /// Replies of the current read, not yet queued for the writer.
    pending: Vec<u8>,
    /// How many replies `pending` holds.
    pending_count: usize,
    /// When the oldest reply in `pending` was written there.
    pending_since: Option<Instant>,
}

impl Reader<'_> {
    fn answer_response(&mut self, response: &Response) {
        response.write_to(&mut self.pending);
        self.answered();
    }

    fn answer_value(&mut self, reply: &Value) {
        if serde_json::to_writer(&mut self.pending, reply).is_ok() {
            self.answered();
        }
    }

    /// Ends the reply just written to `pending`.
    fn answered(&mut self) {
        self.pending.push(b'\n');
        self.pending_count += 1;
        if self.pending_since.is_none() {
            self.pending_since = Some(Instant::now());
        }
    }

    /// Whether the replies gathered so far should go out before the rest
    /// of this read is handled.
    fn should_flush(&self) -> bool {
        self.pending.len() >= FLUSH_AT
            || self.pending_count >= FLUSH_EVERY
            || self
                .pending_since
                .is_some_and(|since| since.elapsed() >= FLUSH_AFTER)
    }

    /// Queues the replies gathered so far for the writer.
    async fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.pending_count = 0;
            self.pending_since = None;
            let lines = std::mem::replace(&mut self.pending, Vec::with_capacity(4096));
            self.out.send_bytes(lines).await;
        }
    }

    /// Handles one line (already split and parsed).
    async fn line(&mut self, line: Line) {
        let message = match line {
            Line::Blank => return,
            Line::TooLong => {
                let error = ErrorObject::invalid_request(format!(
                    "Message exceeds the maximum line length ({})",
                    self.max_line_length()
                ));
                self.answer_response(&Response::error(None, error));
                return;
            }
            Line::Parsed(Ok(message)) => message,
            Line::Parsed(Err(reply)) => {
                self.answer_value(&reply);
                return;
            }
        };
        while self.tasks.try_join_next().is_some() {}
        self.run(message).await;
        if self.should_flush() {
            self.flush().await;
            // Let the writer task write them now: on a single-threaded
            // runtime it could not run before this read is done.
            tokio::task::yield_now().await;
        }
    }

    /// Accepts a frame in arrival order (so a cancel on the next line finds
    /// its call), then runs it: answered here when it finishes on its
    /// first poll, otherwise handed to a task of its own. Requests (each
    /// batch entry too) are admitted against the concurrency limit;
    /// notifications and responses never count.
    async fn run(&mut self, frame: Frame) {
        let call = self.server.accept(frame, self.ctx, Some(self.admit));
        match call.start().await {
            Started::Done(reply) => {
                if let Some(reply) = reply {
                    self.answer_response(&reply);
                }
            }
            Started::Pending(rest) => {
                let out = self.out.clone();
                self.tasks.spawn(async move {
                    if let Some(reply) = rest.await {
                        out.send_response(&reply).await;
                    }
                });
            }
        }
    }

    fn max_line_length(&self) -> usize {
        self.max_line
    }
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
    let max = options.max_concurrent_requests;
    let admit: Admit = Arc::new(move || {
        Arc::clone(&limit)
            .try_acquire_owned()
            .map(|permit| Box::new(permit) as crate::server::Admission)
            .map_err(|_| {
                ErrorObject::new(
                    ErrorCode::SERVER_BUSY,
                    format!("Too many requests in flight (max {max}); retry later"),
                )
            })
    });
    let mut tasks = JoinSet::new();
    let mut lines = LineReader::new(reader, options.max_line_length);

    let read_result = {
        let mut reader = Reader {
            server: &server,
            ctx: &ctx,
            admit: &admit,
            out: &out,
            tasks: &mut tasks,
            max_line: options.max_line_length,
            pending: Vec::with_capacity(4096),
            pending_count: 0,
            pending_since: None,
        };
        let result = loop {
            // Everything already read is answered before reading more.
            while let Some(line) = lines.next_buffered() {
                reader.line(line).await;
            }
            reader.flush().await;
            let more = tokio::select! {
                biased;
                () = stop.cancelled() => break Ok(()),
                more = lines.fill() => more,
            };
            match more {
                Ok(true) => {}
                Ok(false) => {
                    // End of input: a final unterminated line still counts.
                    if let Some(line) = lines.finish() {
                        reader.line(line).await;
                        reader.flush().await;
                    }
                    break Ok(());
                }
                Err(e) => break Err(e),
            }
        };
        reader.flush().await;
        result
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

enum Line {
    /// A non-blank line, parsed: the message or the ready `-32700` reply.
    Parsed(Result<Frame, Value>),
    Blank,
    TooLong,
}

fn parse_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        Line::Blank
    } else {
        Line::Parsed(Frame::parse(line))
    }
}

/// How much is read at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Splits a byte stream into lines without ever holding more than `max`
/// bytes of one line (plus one read), and parses each in place.
struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    start: usize,
    /// Where to resume looking for `\n` (everything before has none).
    scan: usize,
    max: usize,
    /// Inside a line that is over the limit: its bytes are dropped as they come.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(inner: R, max: usize) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(READ_CHUNK),
            start: 0,
            scan: 0,
            max,
            discarding: false,
        }
    }

    /// The next complete line already read, if any (no I/O).
    fn next_buffered(&mut self) -> Option<Line> {
        match memchr::memchr(b'\n', &self.buf[self.scan..]) {
            Some(i) => {
                let end = self.scan + i;
                let line = if self.discarding || end - self.start > self.max {
                    self.discarding = false;
                    Line::TooLong
                } else {
                    parse_line(&self.buf[self.start..end])
                };
                self.start = end + 1;
                self.scan = self.start;
                Some(line)
            }
            None => {
                if !self.discarding && self.buf.len() - self.start > self.max {
                    self.discarding = true;
                }
                if self.discarding {
                    // Never keep the bytes of an over-long line.
                    self.buf.truncate(self.start);
                }
                self.scan = self.buf.len();
                None
            }
        }
    }

    /// Reads more input. `false` at end of input. Cancel-safe: nothing is
    /// lost when the future is dropped before it completes.
    async fn fill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scan -= self.start;
            self.start = 0;
            if self.buf.is_empty() && self.buf.capacity() > 4 * READ_CHUNK {
                // A long line came and went: give its memory back.
                self.buf = Vec::with_capacity(READ_CHUNK);
            }
        }
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        Ok(self.inner.read_buf(&mut self.buf).await? > 0)
    }

    /// At end of input: the final unterminated line, if any.
    fn finish(&mut self) -> Option<Line> {
        if self.discarding {
            self.discarding = false;
            return Some(Line::TooLong);
        }
        let rest = &self.buf[self.start..];
        let line = (!rest.is_empty()).then(|| {
            if rest.len() > self.max {
                Line::TooLong
            } else {
                parse_line(rest)
            }
        });
        self.start = self.buf.len();
        self.scan = self.start;
        line
    }
}

/// The stdout guard of [`serve_stdio`] (see the module docs).
#[cfg(unix)]
mod guard {
    use std::io::{self, Write};
    use std::os::fd::{AsFd, OwnedFd};
    use std::sync::{Mutex, PoisonError};

    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    use tokio::net::unix::pipe;

    use super::BoxedWriter;

    /// The original stdout while a guard is live.
    struct Saved {
        original: OwnedFd,
        /// Whether it was non-blocking before the protocol writer made it so.
        nonblocking: bool,
        /// Live guards.
        count: usize,
    }

    static SAVED: Mutex<Option<Saved>> = Mutex::new(None);

    /// While alive, fd 1 points at stderr; the last one dropped restores it.
    pub(super) struct StdoutGuard(());

    impl StdoutGuard {
        /// Points fd 1 at stderr. Returns the guard and a private duplicate
        /// of the original stdout (close-on-exec, so child processes never
        /// inherit it) for the protocol messages.
        pub(super) fn install() -> io::Result<(Self, OwnedFd)> {
            let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(saved) = saved.as_mut() {
                let protocol = saved.original.try_clone()?;
                saved.count += 1;
                return Ok((Self(()), protocol));
            }
            // Under std's stdout lock: what was printed before goes out on
            // the real stdout, and no `print!` lands between flush and dup2.
            let mut stdout = io::stdout().lock();
            stdout.flush()?;
            let original = stdout.as_fd().try_clone_to_owned()?;
            let protocol = original.try_clone()?;
            let nonblocking = fcntl_getfl(&original)?.contains(OFlags::NONBLOCK);
            rustix::stdio::dup2_stdout(io::stderr())?;
            drop(stdout);
            *saved = Some(Saved {
                original,
                nonblocking,
                count: 1,
            });
            Ok((Self(()), protocol))
        }
    }

    impl Drop for StdoutGuard {
        fn drop(&mut self) {
            let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(live) = saved.as_mut() else {
                return;
            };
            live.count -= 1;
            if live.count > 0 {
                return;
            }
            let Some(Saved {
                original,
                nonblocking,
                ..
            }) = saved.take()
            else {
                return;
            };
            let mut stdout = io::stdout().lock();
            // What was printed while serving belongs on stderr, where fd 1 still points.
            let _ = stdout.flush();
            // The protocol writer made the shared file description
            // non-blocking; `println!` expects a blocking stdout.
            if !nonblocking {
                if let Ok(flags) = fcntl_getfl(&original) {
                    let _ = fcntl_setfl(&original, flags - OFlags::NONBLOCK);
                }
            }
            let _ = rustix::stdio::dup2_stdout(&original);
        }
    }

    /// The protocol messages' writer on `fd`: driven by the reactor when it
    /// is a pipe, through Tokio's blocking pool otherwise (a file, a terminal).
    pub(super) fn protocol_writer(fd: OwnedFd) -> BoxedWriter {
        match fd.try_clone().and_then(pipe::Sender::from_owned_fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))),
        }
    }
}
