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
pub(crate) mod serve;

use lines::LineReader;
use output::{write_loop, Budget, LineSender};
use reader::Reader;
pub use serve::StdioHandle;
pub(crate) use serve::StdioOptions;
// The module docs link to the entry point, whose public path is the root.
#[allow(unused_imports)]
use crate::serve_stdio;

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
