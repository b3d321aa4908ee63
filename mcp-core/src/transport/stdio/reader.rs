//! One connection's reading side: every complete line of a read is handled in place.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::task::JoinSet;

use super::lines::Line;
use super::output::LineSender;
use crate::cancel::CancelToken;
use crate::context::CallContext;
use crate::protocol::{ErrorCode, ErrorObject};
use crate::server::{Admit, McpServer, PendingCall, Response, Started, Unpolled};

/// Replies answered in place during one read, sent as one write. Flushed
/// early past this size so one read's replies never pile up unbounded.
const FLUSH_AT: usize = 64 * 1024;

/// Replies of one read that may wait for each other: past this many, the
/// ones gathered so far go out while the rest of the read is handled. One
/// write for a whole long read would leave the client idle while the server
/// works and the server idle while the client works; on a pipelining
/// client this raised throughput by half over one write per read (measured
/// with `bench/compare.sh`, 64 requests in flight); a write per reply would
/// cost a syscall per reply instead.
const FLUSH_EVERY: usize = 32;

/// The longest a reply waits behind later lines of the same read (looked
/// at every [`CLOCK_EVERY`] lines).
const FLUSH_AFTER: Duration = Duration::from_micros(100);

/// How many lines are handled between two looks at the clock while
/// replies wait: reading it after every line was 1.7 % of a pipelined
/// server's CPU (`perf`), and a line answered in place takes a few
/// microseconds.
const CLOCK_EVERY: usize = 4;

/// One connection's reading side: what every line needs.
pub(super) struct Reader<'a> {
    pub(super) server: &'a McpServer,
    pub(super) ctx: &'a Arc<CallContext>,
    pub(super) admit: &'a Admit,
    pub(super) out: &'a LineSender,
    pub(super) tasks: &'a mut JoinSet<()>,
    /// Cancelled when the drain after end of input runs out of time.
    pub(super) drain_over: &'a CancelToken,
    pub(super) max_line: usize,
    /// Handlers run on tasks of their own, never on the reading one
    /// (a multi-threaded runtime).
    pub(super) isolate: bool,
    /// Replies of the current read, not yet queued for the writer.
    pub(super) pending: Vec<u8>,
    /// How many replies `pending` holds.
    pub(super) pending_count: usize,
    /// When the oldest reply in `pending` was written there.
    pub(super) pending_since: Option<Instant>,
    /// Lines handled since the clock was last read (while replies wait).
    pub(super) lines_since_clock: usize,
}

impl Reader<'_> {
    /// Writes a call's answer, if it has one, to `pending`.
    fn answer(&mut self, reply: Option<Response>) {
        if let Some(reply) = reply {
            self.answer_response(&reply);
        }
    }

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
    fn should_flush(&mut self) -> bool {
        if self.pending.len() >= FLUSH_AT || self.pending_count >= FLUSH_EVERY {
            return true;
        }
        let Some(since) = self.pending_since else {
            return false;
        };
        self.lines_since_clock += 1;
        if self.lines_since_clock < CLOCK_EVERY {
            return false;
        }
        self.lines_since_clock = 0;
        since.elapsed() >= FLUSH_AFTER
    }

    /// Queues the replies gathered so far for the writer.
    pub(super) async fn flush(&mut self) {
        if !self.pending.is_empty() {
            self.pending_count = 0;
            self.pending_since = None;
            self.lines_since_clock = 0;
            let len = self.pending.len();
            let lines = if self.pending.capacity() - len > len / 4
                && self.pending.capacity() <= 2 * FLUSH_AT
            {
                // Queued at its size (the budget charges what a line
                // holds); this buffer is kept for the next replies.
                let exact = self.pending.as_slice().to_vec();
                self.pending.clear();
                exact
            } else {
                std::mem::replace(&mut self.pending, Vec::with_capacity(4096))
            };
            self.out.send_bytes(lines).await;
        }
    }

    /// Accepts one line (already split and parsed) in arrival order, so a
    /// cancel on the next line finds its call: what it answers at once is
    /// written here; a call that runs a handler comes back unpolled, for
    /// [`run`](Self::run). Synchronous, so no future holds the frame:
    /// only the small unpolled call crosses an await. Requests (each batch
    /// entry too) are admitted against the concurrency limit;
    /// notifications and responses never count.
    pub(super) fn accept(&mut self, line: Line) -> Option<PendingCall> {
        let frame = match line {
            Line::Blank => return None,
            Line::TooLong => {
                let error = ErrorObject::invalid_request(format!(
                    "Message exceeds the maximum line length ({})",
                    self.max_line_length()
                ));
                self.answer_response(&Response::error(None, error));
                return None;
            }
            Line::Parsed(Ok(frame)) => frame,
            Line::Parsed(Err(reply)) => {
                self.answer_value(&reply.reply());
                return None;
            }
        };
        while self.tasks.try_join_next().is_some() {}
        match self
            .server
            .accept(frame, self.ctx, Some(self.admit))
            .into_pending()
        {
            Unpolled::Run(pending) => Some(pending),
            Unpolled::Answered(reply) => {
                self.answer(reply);
                None
            }
        }
    }

    /// Runs an accepted call (if its line left one): answered here when
    /// it finishes on its first poll, otherwise handed to a task of its
    /// own. Then sends the replies gathered so far if they should not wait
    /// for the rest of this read.
    pub(super) async fn run(&mut self, call: Option<PendingCall>) {
        if let Some(call) = call {
            self.start(call).await;
        }
        if self.should_flush() {
            self.flush().await;
            // Let the writer task write them now: on a single-threaded
            // runtime it could not run before this read is done.
            tokio::task::yield_now().await;
        }
    }

    /// Polls a call once here, or hands it to a task of its own.
    async fn start(&mut self, call: PendingCall) {
        // On a multi-threaded runtime a handler never runs on this task: one
        // that blocks its thread must not stop the reading (a `ping` behind
        // it is still answered). On a current-thread runtime there is no
        // other thread to run it on, so the first poll stays here.
        if self.isolate {
            return self.spawn(call);
        }
        match call.first_poll().await {
            Started::Done(reply) => self.answer(reply),
            Started::Pending(rest) => self.spawn(rest),
        }
    }

    /// Hands a call that has to wait to a task of its own.
    fn spawn(&mut self, rest: PendingCall) {
        let out = self.out.clone();
        let drain_over = self.drain_over.clone();
        self.tasks.spawn(async move {
            let id = rest.id().cloned();
            // A call cut short by the drain deadline is answered
            // (when it has an id); a reply already computed is
            // queued however long the client takes to read it.
            let reply = tokio::select! {
                biased;
                reply = rest => reply,
                () = drain_over.cancelled() => {
                    tracing::warn!(?id, "stdio: a call outlived the drain timeout");
                    id.map(|id| Response::error(Some(id), drain_error()))
                }
            };
            if let Some(reply) = reply {
                out.send_response(&reply).await;
            }
        });
    }

    fn max_line_length(&self) -> usize {
        self.max_line
    }
}

/// The answer to a call still running when the drain after end of input ends.
fn drain_error() -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SERVER_BUSY,
        "Server shutting down: the call did not finish within the drain timeout",
    )
}
