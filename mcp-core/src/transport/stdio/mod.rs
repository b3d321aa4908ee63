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
//!   The queue is bounded in bytes ([`StdioOptions::output_budget_bytes`],
//!   8 MiB by default) as well as in messages
//!   ([`StdioOptions::output_queue`]): a message waits for room before it is
//!   queued, and while the budget is spent the transport reads no more input
//!   (batches included). A client that stops reading stalls the server —
//!   the handlers reporting progress, the answering of further lines —
//!   instead of growing its memory; a message larger than the whole budget
//!   goes alone.
//! - At end of input the transport stops reading, lets in-flight calls finish
//!   (up to [`StdioOptions::drain_timeout`]; a call still running then is
//!   ended and answered `-32000` with its id), writes every reply made, and
//!   returns.
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
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::{JoinHandle, JoinSet};

use crate::cancel::CancelToken;
use crate::context::{CallContext, Headers};
use crate::server::{Admit, McpServer};
use crate::session::Session;

#[cfg(unix)]
mod guard;
mod lines;
mod output;
mod reader;

use lines::LineReader;
use output::{write_loop, Budget, LineSender};
use reader::Reader;

/// Default [`StdioOptions::max_line_length`]: 4 MiB.
pub const DEFAULT_MAX_LINE_LENGTH: usize = 4 * 1024 * 1024;
/// Default [`StdioOptions::max_concurrent_requests`]: 16, the contract's
/// value: one local client rarely needs more calls running at once, and a
/// client that floods the pipe is told `-32000` ("Too many requests in
/// flight (max 16); retry later") at once instead of piling up handlers. A
/// client that pipelines many instant calls on a multi-threaded runtime
/// (where every call runs on a task of its own, so even instant calls
/// overlap while queued) may want a larger window: set it explicitly, as
/// the benchmark server does.
pub const DEFAULT_MAX_CONCURRENT_REQUESTS: usize = 16;
/// Default [`StdioOptions::output_budget_bytes`]: 8 MiB.
pub const DEFAULT_OUTPUT_BUDGET_BYTES: usize = 8 * 1024 * 1024;

/// Options for [`serve_stdio`] and [`serve_io`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// Static metadata handed to every call as its headers (stdio has no
    /// per-request headers; this is how a local client passes a token or tenant).
    pub headers: Headers,
    /// The longest accepted line in bytes (default 4 MiB).
    pub max_line_length: usize,
    /// Requests running a handler at once on this connection (default 16,
    /// [`DEFAULT_MAX_CONCURRENT_REQUESTS`]); one more is answered `-32000`
    /// "Too many requests in flight (max 16); retry later" at once. `ping`, notifications and responses
    /// never count.
    pub max_concurrent_requests: usize,
    /// How long in-flight calls may run after input ends (default 10 s).
    pub drain_timeout: Duration,
    /// Outgoing messages that may wait for the writer (default 256).
    pub output_queue: usize,
    /// Bytes of outgoing messages that may wait for the writer (default
    /// 8 MiB, [`DEFAULT_OUTPUT_BUDGET_BYTES`]; at least 1, at most
    /// `u32::MAX`). Replies, progress notifications and server→client
    /// requests take their size from this budget before they are queued and
    /// get it back once written; a sender waits while it is spent, and the
    /// transport reads no more input. A message larger than the whole
    /// budget waits until nothing else is queued and then goes alone. So
    /// what a client that stops reading can make the server buffer is
    /// bounded by this budget (plus one message), whatever it asks for.
    pub output_budget_bytes: usize,
    /// Whether [`serve_stdio`] points file descriptor 1 at stderr while it
    /// serves, writing protocol messages to a private duplicate (default
    /// `true`; Unix only; see [the module docs](self#a-guarded-stdout)).
    /// Ignored by [`serve_io`].
    pub guard_stdout: bool,
    /// Who is on the other end of the pipe (default none): the principal
    /// every call of this connection carries (interceptors, `requestState`).
    pub principal: Option<Arc<str>>,
    /// Typed values attached to every call of this connection (see
    /// [`Extensions`](crate::Extensions)).
    pub extensions: crate::Extensions,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            headers: Headers::new(),
            max_line_length: DEFAULT_MAX_LINE_LENGTH,
            max_concurrent_requests: DEFAULT_MAX_CONCURRENT_REQUESTS,
            drain_timeout: Duration::from_secs(10),
            output_queue: 256,
            output_budget_bytes: DEFAULT_OUTPUT_BUDGET_BYTES,
            guard_stdout: true,
            principal: None,
            extensions: crate::Extensions::new(),
        }
    }
}

impl StdioOptions {
    /// Sets the connection's principal.
    #[must_use]
    pub fn principal(mut self, principal: impl Into<Arc<str>>) -> Self {
        self.principal = Some(principal.into());
        self
    }

    /// Attaches a typed value to every call of the connection.
    #[must_use]
    pub fn extension<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }

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

    /// Sets the output budget in bytes (see
    /// [`output_budget_bytes`](Self::output_budget_bytes)).
    #[must_use]
    pub fn output_budget_bytes(mut self, bytes: usize) -> Self {
        self.output_budget_bytes = bytes;
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
    budget: Arc<Budget>,
}

impl StdioHandle {
    /// Stops reading input. In-flight calls still finish (bounded by the
    /// drain timeout) and their replies are written; the streams are not closed.
    pub fn close(&self) {
        self.stop.cancel();
    }

    /// Bytes of output queued for the writer or being written now.
    /// For tests of the output budget; not a stable API.
    #[doc(hidden)]
    pub fn queued_output_bytes(&self) -> usize {
        self.budget.queued()
    }

    /// The most bytes of output that were queued at once so far.
    /// For tests of the output budget; not a stable API.
    #[doc(hidden)]
    pub fn peak_queued_output_bytes(&self) -> usize {
        self.budget.peak()
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
/// The runtime decides how calls run. On a multi-threaded runtime (what
/// `#[tokio::main]` builds) every call runs on a task of its own, never on
/// the task that reads stdin: a handler that blocks its thread cannot delay
/// a `ping` or a cancellation behind it, at the price of a thread hop per
/// call. On a current-thread runtime a call's first poll runs where it was
/// read (most calls finish there, with no task at all), which is about
/// three times cheaper per call (BENCHMARKS.md) but lets a handler that
/// blocks stop the reading: pick it when every handler is `async` and
/// never blocks (a `fn` tool runs on `spawn_blocking` either way).
///
/// Must be called within a Tokio runtime.
pub fn serve_stdio(server: McpServer, options: StdioOptions) -> StdioHandle {
    #[cfg(unix)]
    if options.guard_stdout {
        if let Ok((guard, protocol_fd)) = guard::StdoutGuard::install() {
            let reader = std_reader();
            let writer = guard::protocol_writer(protocol_fd);
            let stop = CancelToken::new();
            let budget = Budget::new(options.output_budget_bytes);
            let task = tokio::spawn({
                let stop = stop.clone();
                let budget = Arc::clone(&budget);
                async move {
                    let result = run(server, reader, writer, options, stop, budget).await;
                    // Every message is written: fd 1 may be the real stdout again.
                    drop(guard);
                    result
                }
            });
            return StdioHandle { stop, task, budget };
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
    let budget = Budget::new(options.output_budget_bytes);
    let task = tokio::spawn(run(
        server,
        reader,
        writer,
        options,
        stop.clone(),
        Arc::clone(&budget),
    ));
    StdioHandle { stop, task, budget }
}

async fn run<R, W>(
    server: McpServer,
    reader: R,
    writer: W,
    options: StdioOptions,
    stop: CancelToken,
    budget: Arc<Budget>,
) -> io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, rx) = LineSender::new(options.output_queue, Arc::clone(&budget));
    let writer_task = tokio::spawn(write_loop(writer, rx, budget));
    let session = Session::new();
    let mut ctx = CallContext::new()
        .with_headers(options.headers.clone())
        .with_session(session.clone())
        .with_outbound(Arc::new(out.clone()));
    ctx.principal = options.principal.clone();
    ctx.extensions = options.extensions.clone();
    // Shared by every request of the connection (no copy per request).
    let ctx = Arc::new(ctx);
    let admit = Admit::limit(options.max_concurrent_requests);
    let mut tasks = JoinSet::new();
    let drain_over = CancelToken::new();
    let mut lines = LineReader::new(reader, options.max_line_length);

    let read_result = {
        let mut reader = Reader {
            server: &server,
            ctx: &ctx,
            admit: &admit,
            out: &out,
            tasks: &mut tasks,
            drain_over: &drain_over,
            max_line: options.max_line_length,
            isolate: tokio::runtime::Handle::current().runtime_flavor()
                == tokio::runtime::RuntimeFlavor::MultiThread,
            pending: Vec::with_capacity(4096),
            pending_count: 0,
            pending_since: None,
            lines_since_clock: 0,
        };
        let result = loop {
            // Everything already read is answered before reading more.
            while let Some(line) = lines.next_buffered() {
                let call = reader.accept(line);
                reader.run(call).await;
            }
            reader.flush().await;
            // No more input while the output budget is spent (by these
            // replies, a batch's, a progress report's): a client that does
            // not read stalls its own input instead of growing our memory.
            let more = tokio::select! {
                biased;
                () = stop.cancelled() => break Ok(()),
                more = async {
                    out.wait_for_room().await;
                    lines.fill().await
                } => more,
            };
            match more {
                Ok(true) => {}
                Ok(false) => {
                    // End of input: a final unterminated line still counts.
                    if let Some(line) = lines.finish() {
                        let call = reader.accept(line);
                        reader.run(call).await;
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
        // Calls still running are ended and answered with an error; replies
        // already made (waiting for output budget) are not dropped: they
        // are queued as the client reads.
        drain_over.cancel();
        while tasks.join_next().await.is_some() {}
    }
    drop(ctx);
    drop(out);
    let write_result = match writer_task.await {
        Ok(r) => r,
        Err(e) => Err(io::Error::other(e)),
    };
    read_result.and(write_result)
}
