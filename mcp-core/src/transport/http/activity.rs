//! Counting running calls and connection activity (for close and idle timeouts).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use super::halfclose::AnswerPhase;
use crate::cancel::CancelToken;

/// Counts running calls so `close` can wait for them.
#[derive(Default, Clone)]
pub(crate) struct Tracker(pub(super) Arc<TrackerInner>);

#[derive(Default)]
pub(crate) struct TrackerInner {
    pub(super) count: AtomicUsize,
    pub(super) idle: Notify,
}

/// One running call; leaves the tracker when dropped.
pub(crate) struct TrackGuard(pub(super) Arc<TrackerInner>);

impl Tracker {
    pub(super) fn enter(&self) -> TrackGuard {
        self.0.count.fetch_add(1, Ordering::AcqRel);
        TrackGuard(Arc::clone(&self.0))
    }

    /// Completes once no call is running.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.0.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.0.count.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for TrackGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// A connection's activity: requests in flight and when the last one ended.
pub(crate) struct Activity {
    pub(super) busy: AtomicUsize,
    pub(super) last: Mutex<Instant>,
    /// Cancelled to close the connection at once (an event stream's
    /// consumer overran its byte budget, or the connection cap reaped it).
    pub(super) killed: CancelToken,
    /// Event streams open on the connection (see `conns`).
    streams: AtomicUsize,
    /// Where the current request is, for half-closed peers (see `halfclose`).
    pub(super) answer: Arc<AnswerPhase>,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            busy: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            killed: CancelToken::new(),
            streams: AtomicUsize::new(0),
            answer: Arc::default(),
        })
    }

    pub(super) fn begin(this: &Arc<Self>) -> ActivityGuard {
        this.busy.fetch_add(1, Ordering::AcqRel);
        ActivityGuard(Arc::clone(this))
    }

    /// Closes the connection at once, whatever it is doing.
    pub(crate) fn kill(&self) {
        self.killed.cancel();
    }

    /// True once [`kill`](Self::kill) was called.
    #[cfg(test)]
    pub(crate) fn is_killed(&self) -> bool {
        self.killed.is_cancelled()
    }

    /// Marks an event stream open on the connection until the mark is dropped.
    pub(super) fn stream(this: &Arc<Self>) -> StreamMark {
        this.streams.fetch_add(1, Ordering::AcqRel);
        StreamMark(Arc::clone(this))
    }

    /// True while an event stream is open on the connection.
    pub(crate) fn has_stream(&self) -> bool {
        self.streams.load(Ordering::Acquire) > 0
    }

    /// How long the connection has been idle; `None` while a request runs.
    pub(crate) fn idle_for(&self) -> Option<Duration> {
        if self.busy.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(
            self.last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed(),
        )
    }
}

pub(crate) struct ActivityGuard(pub(super) Arc<Activity>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An event stream open on a connection; see [`Activity::stream`].
pub(crate) struct StreamMark(Arc<Activity>);

impl Drop for StreamMark {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One open GET stream of the server; leaves the count when dropped.
pub(crate) struct Counted(pub(super) Arc<AtomicUsize>);

impl Counted {
    /// Takes one of `max` places in `count`; `None` when all are taken.
    pub(super) fn take(count: &Arc<AtomicUsize>, max: usize) -> Option<Self> {
        count
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| Self(Arc::clone(count)))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
