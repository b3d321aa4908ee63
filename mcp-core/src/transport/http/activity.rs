//! Counting running calls and connection activity (for close and idle timeouts).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

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
    /// consumer overran its byte budget).
    pub(super) killed: CancelToken,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self {
            busy: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
            killed: CancelToken::new(),
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
