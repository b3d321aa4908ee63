//! The byte budget of one event stream (a POST's, or a session's GET stream).
//!
//! Every server→client message bound for a stream is framed (serialized)
//! when it is queued, and its size is charged to the stream's budget until
//! the stream hands the frame to hyper. hyper takes a frame only when its
//! write buffer has room, so the charge is what a client that does not read
//! makes the server hold. A message that would take the charge past
//! [`HttpOptions::stream_budget_bytes`](super::HttpOptions::stream_budget_bytes)
//! is refused, and the consumer is disconnected: the stream ends (nothing
//! more is queued, what was queued is dropped with it), the call it carries
//! is cancelled, and the connection under it is closed. A message larger
//! than the whole budget still goes when nothing else is queued, alone.
//!
//! The accounting is one atomic add and one subtract per message.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::mpsc;

use super::activity::Activity;
use crate::cancel::CancelToken;
use crate::server::Response as Replies;

/// What flows from a running call (or a session) to its stream.
#[derive(Debug)]
pub(crate) enum Event {
    /// A server→client notification or request, framed (its bytes are
    /// charged to the stream's budget until taken).
    Message(Bytes),
    /// The call finished: its reply, or `None` when the client cancelled it
    /// (then the stream lingers, sending nothing, until it may end).
    Done(Option<Replies>),
    /// The call was stopped by the server (session ended, shutdown): this
    /// final JSON-RPC error response (with the call's id), then the end.
    Closed(Value),
}

/// One SSE event carrying a JSON-RPC message: `event: message` + `data:` lines.
pub(crate) fn frame<T: serde::Serialize + ?Sized>(message: &T) -> Bytes {
    let json = serde_json::to_string(message).unwrap_or_else(|_| "null".to_owned());
    let mut out = String::with_capacity(json.len() + 24);
    out.push_str("event: message\n");
    // serde_json never emits raw newlines, but stay correct if one appears.
    for line in json.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// What a stream's budget knows and whom it disconnects.
struct Budget {
    queued: AtomicUsize,
    limit: usize,
    over: AtomicBool,
    /// The call this stream carries (a POST's external signal).
    call: Option<CancelToken>,
    /// The connection under the stream (absent when the service is mounted
    /// in someone else's server).
    conn: Option<Arc<Activity>>,
}

impl Budget {
    fn overflow(&self) {
        if self.over.swap(true, Ordering::AcqRel) {
            return;
        }
        if let Some(call) = &self.call {
            call.cancel();
        }
        if let Some(conn) = &self.conn {
            conn.kill();
        }
    }

    fn is_over(&self) -> bool {
        self.over.load(Ordering::Acquire)
    }
}

/// The sending end of an event stream, with its byte budget.
#[derive(Clone)]
pub(crate) struct StreamTx {
    tx: mpsc::Sender<Event>,
    /// `None`: the channel carries the reply only, never a message.
    budget: Option<Arc<Budget>>,
}

/// The receiving end of an event stream (owned by its [`McpBody`](super::McpBody)).
pub(crate) struct StreamRx {
    rx: mpsc::Receiver<Event>,
    budget: Option<Arc<Budget>>,
}

/// A stream of at most `queue` messages and `limit` bytes waiting for the
/// client; past the bytes, `call` is cancelled and `conn` closed.
pub(crate) fn channel(
    queue: usize,
    limit: usize,
    call: Option<CancelToken>,
    conn: Option<Arc<Activity>>,
) -> (StreamTx, StreamRx) {
    let (tx, rx) = mpsc::channel(queue.max(1));
    let budget = Arc::new(Budget {
        queued: AtomicUsize::new(0),
        limit,
        over: AtomicBool::new(false),
        call,
        conn,
    });
    (
        StreamTx {
            tx,
            budget: Some(Arc::clone(&budget)),
        },
        StreamRx {
            rx,
            budget: Some(budget),
        },
    )
}

/// An event-stream POST's [`channel`], made when first needed: by the
/// call's first message, or by the POST once the call outlives its first
/// poll. Most calls do neither (they answer at once, with nothing to say
/// before), and then no channel is ever made.
pub(crate) struct LazyStream {
    made: std::sync::OnceLock<StreamTx>,
    /// The receiving end, until the POST takes it.
    rx: std::sync::Mutex<Option<StreamRx>>,
    queue: usize,
    limit: usize,
    call: Option<CancelToken>,
    conn: Option<Arc<Activity>>,
}

impl LazyStream {
    /// What [`channel`] would be made with.
    pub(crate) fn new(
        queue: usize,
        limit: usize,
        call: Option<CancelToken>,
        conn: Option<Arc<Activity>>,
    ) -> Self {
        Self {
            made: std::sync::OnceLock::new(),
            rx: std::sync::Mutex::new(None),
            queue,
            limit,
            call,
            conn,
        }
    }

    /// The sending end, made on first use.
    pub(crate) fn tx(&self) -> &StreamTx {
        self.made.get_or_init(|| {
            let (tx, rx) = channel(self.queue, self.limit, self.call.clone(), self.conn.clone());
            *self
                .rx
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(rx);
            tx
        })
    }

    /// True while nothing was ever queued (the channel was never made).
    pub(crate) fn untouched(&self) -> bool {
        self.made.get().is_none()
    }

    /// Both ends, made now if they were not (the receiver can be taken once).
    pub(crate) fn split(&self) -> (StreamTx, StreamRx) {
        let tx = self.tx().clone();
        let rx = self
            .rx
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .unwrap_or_else(StreamRx::empty);
        (tx, rx)
    }
}

/// A channel for a call's reply alone (a POST that cannot stream): no
/// message is ever accepted, so there is no budget to keep.
pub(crate) fn replies_only() -> (StreamTx, StreamRx) {
    let (tx, rx) = mpsc::channel(1);
    (StreamTx { tx, budget: None }, StreamRx { rx, budget: None })
}

impl StreamTx {
    /// Queues one server→client message; false when the stream is gone or
    /// the message would exceed the budget (the consumer is then disconnected).
    pub(crate) async fn message(&self, message: &Value) -> bool {
        let Some(budget) = &self.budget else {
            return false;
        };
        if budget.is_over() {
            return false;
        }
        let bytes = frame(message);
        let n = bytes.len();
        let before = budget.queued.fetch_add(n, Ordering::AcqRel);
        if before > 0 && before.saturating_add(n) > budget.limit {
            budget.queued.fetch_sub(n, Ordering::AcqRel);
            budget.overflow();
            return false;
        }
        if self.tx.send(Event::Message(bytes)).await.is_ok() {
            true
        } else {
            budget.queued.fetch_sub(n, Ordering::AcqRel);
            false
        }
    }

    fn is_over(&self) -> bool {
        self.budget.as_ref().is_some_and(|b| b.is_over())
    }

    /// Queues the call's last event (its reply, or the error that stops it).
    /// Not charged: it is the answer, and it ends the stream. Dropped when
    /// the consumer was disconnected.
    pub(crate) async fn finish(&self, event: Event) {
        if !self.is_over() {
            let _ = self.tx.send(event).await;
        }
    }

    /// True once the receiver is gone or the consumer was disconnected.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed() || self.is_over()
    }

    /// Bytes queued and not yet taken by hyper.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.budget
            .as_ref()
            .map_or(0, |b| b.queued.load(Ordering::Acquire))
    }
}

impl StreamRx {
    /// A receiver with no sender: a stream fed by nothing.
    pub(crate) fn empty() -> Self {
        replies_only().1
    }

    /// The next event; a message's bytes leave the budget as it is taken.
    pub(crate) fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let polled = self.rx.poll_recv(cx);
        if let Poll::Ready(Some(Event::Message(bytes))) = &polled {
            self.release(bytes);
        }
        polled
    }

    /// The next event (see [`poll_recv`](Self::poll_recv)).
    ///
    /// # Cancel safety
    /// Cancel-safe, as `mpsc::Receiver::recv`.
    pub(crate) async fn recv(&mut self) -> Option<Event> {
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    fn release(&self, bytes: &Bytes) {
        if let Some(budget) = &self.budget {
            budget.queued.fetch_sub(bytes.len(), Ordering::AcqRel);
        }
    }

    /// No more events are accepted.
    pub(crate) fn close(&mut self) {
        self.rx.close();
    }

    /// True once the consumer was disconnected for exceeding the budget.
    pub(crate) fn is_over(&self) -> bool {
        self.budget.as_ref().is_some_and(|b| b.is_over())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn past_the_budget_the_call_is_cancelled_and_nothing_more_is_queued() {
        let call = CancelToken::new();
        let (tx, mut rx) = channel(1000, 300, Some(call.clone()), None);
        let big = json!({"data": "x".repeat(100)});
        assert!(tx.message(&big).await);
        assert!(tx.message(&big).await);
        assert!(tx.queued() > 200);
        // The third would pass 300 bytes: refused, the consumer disconnected.
        assert!(!tx.message(&big).await);
        assert!(call.is_cancelled());
        assert!(rx.is_over());
        assert!(tx.is_closed());
        assert!(!tx.message(&json!(1)).await, "nothing after the overflow");
        // What was queued leaves the budget as it is taken.
        assert!(matches!(rx.recv().await, Some(Event::Message(_))));
        assert!(matches!(rx.recv().await, Some(Event::Message(_))));
        assert_eq!(tx.queued(), 0);
    }

    #[tokio::test]
    async fn a_message_larger_than_the_budget_goes_alone() {
        let call = CancelToken::new();
        let (tx, mut rx) = channel(8, 10, Some(call.clone()), None);
        assert!(tx.message(&json!({"data": "y".repeat(100)})).await);
        assert!(!call.is_cancelled());
        assert!(matches!(rx.recv().await, Some(Event::Message(_))));
        assert_eq!(tx.queued(), 0);
        assert!(tx.message(&json!({"data": "y".repeat(100)})).await);
    }
}
