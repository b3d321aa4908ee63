//! The output side: serialized lines queued for the writer task, bounded in
//! bytes ([`StdioOptions::output_budget_bytes`](super::StdioOptions::output_budget_bytes))
//! as well as in messages.
//!
//! Every line (a reply, a group of replies, a progress notification, an
//! `elicitation/create` request) takes its size in bytes from a [`Budget`]
//! before it is queued, and the writer gives them back once the line is
//! written. The size charged is the line's allocation (its capacity), so
//! the budget bounds the memory queued lines hold, not only their text; a
//! line whose buffer has much room to spare is shrunk before it is queued. A sender waits while the budget is spent, so a client
//! that stops reading stalls the senders (the handlers reporting progress,
//! the reader answering lines) instead of growing the server's memory. A
//! line longer than the whole budget takes all of it: it waits until
//! nothing else is queued, then goes alone, so it never deadlocks.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Semaphore};

use crate::context::Outbound;
use crate::server::Response;

/// The bytes that may wait for the writer, and how many do.
#[derive(Debug)]
pub(super) struct Budget {
    /// One permit per byte not queued.
    bytes: Semaphore,
    /// All permits: the budget.
    total: u32,
    /// Bytes held by lines queued or being written (their capacity; a line
    /// over the budget counts whole).
    queued: AtomicUsize,
    /// The most `queued` has been.
    peak: AtomicUsize,
}

impl Budget {
    /// A budget of `bytes` (at least 1; at most what a semaphore holds).
    pub(super) fn new(bytes: usize) -> Arc<Self> {
        let max = Semaphore::MAX_PERMITS.min(u32::MAX as usize);
        let total = bytes.clamp(1, max);
        Arc::new(Self {
            bytes: Semaphore::new(total),
            total: u32::try_from(total).unwrap_or(u32::MAX),
            queued: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }

    /// Waits for room for a line holding `len` bytes and takes it: the
    /// permits to give back once written, or `None` once the writer is gone.
    async fn take(&self, len: usize) -> Option<u32> {
        let permits = u32::try_from(len).unwrap_or(u32::MAX).min(self.total);
        self.bytes.acquire_many(permits).await.ok()?.forget();
        let now = self.queued.fetch_add(len, Ordering::Relaxed) + len;
        self.peak.fetch_max(now, Ordering::Relaxed);
        Some(permits)
    }

    /// Gives back what lines holding `len` bytes in all took: they are written.
    fn give_back(&self, permits: usize, len: usize) {
        self.queued.fetch_sub(len, Ordering::Relaxed);
        self.bytes.add_permits(permits);
    }

    /// Waits until the budget is not spent (at once when it is not, or when
    /// the writer is gone): the reader reads no more input before.
    pub(super) async fn wait_for_room(&self) {
        if self.bytes.available_permits() == 0 {
            // Queued behind the senders already waiting (the semaphore is fair).
            drop(self.bytes.acquire().await);
        }
    }

    /// Bytes queued for the writer or being written now.
    pub(super) fn queued(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// The most bytes that were ever queued at once.
    pub(super) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Lines on their way to the writer, with the budget they took.
pub(super) struct Queued {
    lines: Vec<u8>,
    permits: u32,
}

/// Queues serialized lines for the writer task.
#[derive(Clone)]
pub(super) struct LineSender {
    tx: mpsc::Sender<Queued>,
    budget: Arc<Budget>,
}

impl LineSender {
    /// A sender and the writer's end, holding at most `messages` lines and
    /// `budget` bytes.
    pub(super) fn new(messages: usize, budget: Arc<Budget>) -> (Self, mpsc::Receiver<Queued>) {
        let (tx, rx) = mpsc::channel(messages.max(1));
        (Self { tx, budget }, rx)
    }

    async fn send_value(&self, message: &Value) -> bool {
        let mut line = match serde_json::to_vec(message) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        };
        line.push(b'\n');
        self.send_bytes(line).await
    }

    pub(super) async fn send_response(&self, response: &Response) -> bool {
        let mut line = Vec::new();
        response.write_to(&mut line);
        line.push(b'\n');
        self.send_bytes(line).await
    }

    /// Queues whole lines (one or more, each ending in `\n`), waiting for
    /// budget first. `false` once the writer is gone.
    pub(super) async fn send_bytes(&self, mut lines: Vec<u8>) -> bool {
        // Grown by doubling, or reserved for more replies than came: what
        // is spare would count against the budget (and hold memory) for
        // nothing while the line waits.
        if lines.capacity() - lines.len() > lines.len() / 4 {
            lines.shrink_to_fit();
        }
        let len = lines.capacity();
        let Some(permits) = self.budget.take(len).await else {
            return false;
        };
        if self.tx.send(Queued { lines, permits }).await.is_err() {
            self.budget.give_back(permits as usize, len);
            return false;
        }
        true
    }

    /// Waits until the output budget is not spent.
    pub(super) async fn wait_for_room(&self) {
        self.budget.wait_for_room().await;
    }
}

#[async_trait]
impl Outbound for LineSender {
    async fn send(&self, message: Value) -> bool {
        self.send_value(&message).await
    }
}

/// Closes the budget when the writer stops, however it stops: senders
/// waiting for room then fail instead of waiting forever.
struct CloseOnExit(Arc<Budget>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        self.0.bytes.close();
    }
}

/// Writes what is queued, whatever is waiting batched into one write, and
/// gives each line's budget back once it is written.
pub(super) async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Queued>,
    budget: Arc<Budget>,
) -> io::Result<()> {
    const BATCH: usize = 64 * 1024;
    let _close = CloseOnExit(Arc::clone(&budget));
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH);
    while let Some(first) = rx.recv().await {
        let mut permits = first.permits as usize;
        let mut len = first.lines.capacity();
        if rx.is_empty() {
            writer.write_all(&first.lines).await?;
            drop(first);
        } else {
            buf.clear();
            buf.extend_from_slice(&first.lines);
            drop(first);
            while buf.len() < BATCH {
                match rx.try_recv() {
                    Ok(more) => {
                        buf.extend_from_slice(&more.lines);
                        permits += more.permits as usize;
                        len += more.lines.capacity();
                    }
                    Err(_) => break,
                }
            }
            writer.write_all(&buf).await?;
            if buf.capacity() > 4 * BATCH {
                // A long line went through: give its memory back.
                buf = Vec::with_capacity(BATCH);
            }
        }
        writer.flush().await?;
        budget.give_back(permits, len);
    }
    writer.flush().await
}
