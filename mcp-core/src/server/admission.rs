//! Stage 3, admission: whether one more request may run now. A transport
//! gives [`McpServer::accept`](crate::McpServer::accept) an [`Admit`]: a
//! limit counted with one atomic integer ([`Admit::limit`], what the
//! crate's stdio and HTTP transports use: no allocation, no lock), or a
//! closure of its own ([`Admit::new`]).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::protocol::{ErrorCode, ErrorObject};

/// Something held for as long as an admitted request runs (a semaphore
/// permit, a counter guard), as an [`Admit::new`] closure returns it.
pub type Admission = Box<dyn Send>;

/// A custom admission decision (see [`Admit::new`]).
type Decide = Arc<dyn Fn() -> Result<Admission, ErrorObject> + Send + Sync>;

/// Decides whether one more request may run now: a [`Permit`] to hold while
/// it runs, or the error that answers it in its place (such as `-32000`
/// over a concurrency limit). Asked for every request that runs a handler,
/// never for notifications, responses or what is answered in place
/// (`ping`, `initialize`). Cheap to clone.
///
/// The crate's stdio transport admits with [`Admit::limit`], its HTTP
/// transport each connection's requests the same way.
#[derive(Clone)]
pub struct Admit(Rule);

#[derive(Clone)]
enum Rule {
    Limit(InflightLimit),
    Custom(Decide),
}

impl std::fmt::Debug for Admit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Rule::Limit(limit) => f.debug_tuple("Admit::limit").field(&limit.max).finish(),
            Rule::Custom(_) => f.write_str("Admit::new(..)"),
        }
    }
}

impl Admit {
    /// At most `max` requests at once, counted with one atomic integer (no
    /// allocation, no lock); one more is refused with `-32000`.
    pub fn limit(max: usize) -> Self {
        Self(Rule::Limit(InflightLimit::new(max)))
    }

    /// Admits with `decide`: `Ok` with what to hold while the request
    /// runs, or the error that answers it.
    pub fn new(
        decide: impl Fn() -> Result<Admission, ErrorObject> + Send + Sync + 'static,
    ) -> Self {
        Self(Rule::Custom(Arc::new(decide)))
    }

    /// Admits one request now: the permit it holds while it runs, or the
    /// error that refuses it.
    ///
    /// # Errors
    /// The refusal, as the limit or the closure gives it.
    pub fn admit(&self) -> Result<Permit, ErrorObject> {
        match &self.0 {
            Rule::Limit(limit) => limit.admit().map(|guard| Permit(Held::Limit(guard))),
            Rule::Custom(decide) => decide().map(|held| Permit(Held::Custom(held))),
        }
    }
}

/// One admitted request's place, given back when dropped.
#[must_use = "the place is given back when the permit is dropped"]
pub struct Permit(#[allow(dead_code)] Held);

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Permit")
    }
}

/// What a [`Permit`] holds (dropping it gives the place back).
enum Held {
    Limit(#[allow(dead_code)] LimitGuard),
    Custom(#[allow(dead_code)] Admission),
}

/// The `-32000` error refusing a request over a limit of `max` in flight
/// (every transport's own limit answers with it).
pub(crate) fn too_many_in_flight(max: usize) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::SERVER_BUSY,
        format!("Too many requests in flight (max {max}); retry later"),
    )
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

impl InflightLimit {
    /// Takes one place, or refuses over the limit.
    pub(crate) fn admit(&self) -> Result<LimitGuard, ErrorObject> {
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
    fn a_cloned_admit_counts_against_the_same_limit() {
        let admit = Admit::limit(1);
        let batch_entry = admit.clone();
        let held = batch_entry
            .admit()
            .map_err(|e| e.message)
            .expect("admitted");
        assert!(admit.admit().is_err(), "the clone holds the only place");
        drop(held);
        assert!(admit.admit().is_ok());
    }

    #[test]
    fn a_custom_admit_holds_what_its_closure_returns_until_dropped() {
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        let admit = Admit::new(move || {
            seen.fetch_add(1, Ordering::AcqRel);
            Ok(Box::new(Arc::clone(&seen)) as Admission)
        });
        let permit = admit.admit().map_err(|e| e.message).expect("admitted");
        assert_eq!(count.load(Ordering::Acquire), 1);
        assert_eq!(Arc::strong_count(&count), 3, "the permit holds its value");
        drop(permit);
        assert_eq!(Arc::strong_count(&count), 2);
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
