//! The entry points: [`serve_stdio`], [`serve_io`] and their options.

#[allow(clippy::wildcard_imports)]
use super::*;

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
    /// `true`; Unix only; see [the module docs](crate::transport::stdio#a-guarded-stdout)).
    /// Ignored by [`serve_io`].
    pub guard_stdout: bool,
    /// Who is on the other end of the pipe (default none): the principal
    /// every call of this connection carries (interceptors, `requestState`).
    pub principal: Option<Arc<str>>,
    /// Typed values attached to every call of this connection (see
    /// [`Extensions`](crate::context::Extensions)).
    pub extensions: crate::context::Extensions,
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
            extensions: crate::context::Extensions::new(),
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
    /// messages. See [the module docs](crate::transport::stdio#a-guarded-stdout).
    #[must_use]
    pub fn guard_stdout(mut self, guard: bool) -> Self {
        self.guard_stdout = guard;
        self
    }
}

/// A running stdio server.
#[derive(Debug)]
pub struct StdioHandle {
    pub(super) stop: CancelToken,
    pub(super) task: JoinHandle<io::Result<()>>,
    pub(super) budget: Arc<Budget>,
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
/// [the module docs](crate::transport::stdio#a-guarded-stdout).
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
pub(crate) type BoxedWriter = Box<dyn AsyncWrite + Unpin + Send>;

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
