//! Stage 3, admission: whether one more request may run now. A transport
//! gives [`McpServer::accept`](crate::McpServer::accept) an [`Admit`]
//! closure; the crate's stdio transport counts its requests, and its HTTP
//! transport each connection's, with an [`InflightLimit`] instead, which
//! costs no allocation and no lock.

// Only the transports of the crate count requests with these.
#![cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::protocol::{ErrorCode, ErrorObject};

/// Something held for as long as an admitted request runs (a semaphore
/// permit, a counter guard).
pub type Admission = Box<dyn Send>;

/// Decides whether one more request may run now: `Ok` with what to hold
/// while it runs, or the error that answers it in its place (such as
/// `-32000` over a concurrency limit). Asked for every request, never for
/// notifications or responses.
pub type Admit = Arc<dyn Fn() -> Result<Admission, ErrorObject> + Send + Sync>;

/// The `-32000` error refusing a request over a limit of `max` in flight
/// (every transport's own limit answers with it).
pub(crate) fn too_many_in_flight(max: usize) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SERVER_BUSY,
        format!("Too many requests in flight (max {max}); retry later"),
    )
}

/// What admits a request inside the crate: an [`Admit`] closure, or an
/// [`InflightLimit`].
pub(crate) trait Admits {
    /// What an admitted request holds while it runs.
    type Held: Send + 'static;

    /// Admits one request, or gives the error that refuses it.
    fn admit(&self) -> Result<Self::Held, ErrorObject>;

    /// The same decision as an [`Admit`], for the entries of a batch.
    fn to_admit(&self) -> Admit;
}

impl Admits for Admit {
    type Held = Admission;

    fn admit(&self) -> Result<Admission, ErrorObject> {
        self()
    }

    fn to_admit(&self) -> Admit {
        Arc::clone(self)
    }
}

/// A limit on the requests in flight at once, counted with one atomic
/// integer: admitting takes a reference to the counter (no allocation, no
/// lock), and the [`LimitGuard`] gives the place back when dropped.
#[derive(Clone)]
pub(crate) struct InflightLimit {
    count: Arc<AtomicUsize>,
    max: usize,
}

impl InflightLimit {
    /// At most `max` requests at once; one more is refused with
    /// [`too_many_in_flight`].
    pub(crate) fn new(max: usize) -> Self {
        Self {
            count: Arc::new(AtomicUsize::new(0)),
            max,
        }
    }

    /// How many requests hold a place now.
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }
}

impl Admits for InflightLimit {
    type Held = LimitGuard;

    fn admit(&self) -> Result<LimitGuard, ErrorObject> {
        let mut now = self.count.load(Ordering::Relaxed);
        loop {
            if now >= self.max {
                return Err(too_many_in_flight(self.max));
            }
            match self.count.compare_exchange_weak(
                now,
                now + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(LimitGuard(Arc::clone(&self.count))),
                Err(seen) => now = seen,
            }
        }
    }

    fn to_admit(&self) -> Admit {
        let limit = self.clone();
        Arc::new(move || limit.admit().map(|guard| Box::new(guard) as Admission))
    }
}

/// One place under an [`InflightLimit`], given back when dropped.
pub(crate) struct LimitGuard(Arc<AtomicUsize>);

impl Drop for LimitGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_admits_up_to_max_and_a_dropped_guard_frees_its_place() {
        let limit = InflightLimit::new(2);
        let first = limit.admit().map_err(|e| e.message).expect("first");
        let second = limit.admit().map_err(|e| e.message).expect("second");
        let refused = limit.admit().err().map(|e| e.message);
        assert_eq!(
            refused.as_deref(),
            Some("Too many requests in flight (max 2); retry later")
        );
        assert_eq!(limit.in_flight(), 2);
        drop(first);
        assert_eq!(limit.in_flight(), 1);
        let third = limit.admit().map_err(|e| e.message).expect("a freed place");
        drop((second, third));
        assert_eq!(limit.in_flight(), 0);
    }

    #[test]
    fn a_batch_admit_counts_against_the_same_limit() {
        let limit = InflightLimit::new(1);
        let admit = limit.to_admit();
        let held = admit().map_err(|e| e.message).expect("admitted");
        assert!(
            limit.admit().is_err(),
            "the batch entry holds the only place"
        );
        drop(held);
        assert!(limit.admit().is_ok());
    }

    #[test]
    fn racing_threads_never_exceed_the_limit() {
        let limit = InflightLimit::new(3);
        let peak = AtomicUsize::new(0);
        // Scoped: the library's own code spawns no thread (`.ci/run` checks).
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let (limit, peak) = (&limit, &peak);
                scope.spawn(move || {
                    for _ in 0..2000 {
                        if let Ok(guard) = limit.admit() {
                            peak.fetch_max(limit.in_flight(), Ordering::AcqRel);
                            drop(guard);
                        }
                    }
                });
            }
        });
        assert!(peak.load(Ordering::Acquire) <= 3);
        assert_eq!(limit.in_flight(), 0);
    }
}
