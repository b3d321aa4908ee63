//! A handler that blocks its worker thread must not stall the server.
//!
//! On Tokio's multi-threaded runtime, only a worker that parks polls the
//! I/O driver. When a worker wakes with a single task to run, it wakes no
//! other worker; if that task then blocks its thread (a synchronous wait in
//! an `async` handler, the mistake issue 16 guards against), every other
//! worker may stay asleep and nobody reads the sockets: other clients
//! stall until the handler returns.
//!
//! A POST used to yield once before its handler's first poll, so that the
//! scheduler woke a parked worker for it. That cost every request on a
//! busy server an unpark and, as the woken worker often stole the request's
//! task, frees on another thread than the allocations (measured: glibc arena
//! lock contention, about 1.2 µs of CPU per request at 64 connections;
//! BENCHMARKS.md). Instead, a handler's poll is now [`watched`]: it marks its
//! worker busy, and one process-wide watchdog thread, ticking every
//! [`TICK`], spawns an empty task onto the runtime of a worker whose mark is
//! two ticks old. Spawning from outside the runtime wakes a parked worker,
//! which takes over the I/O driver (and steals what waits in the blocked
//! worker's queue). A request pays two relaxed atomic stores; the watchdog
//! thread starts with the first watched poll and costs one wake-up per tick.

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::runtime::{Handle, RuntimeFlavor};

/// How often the watchdog looks at the workers: a blocked worker is noticed
/// after two to three ticks.
const TICK: Duration = Duration::from_millis(5);

/// The watchdog's tick count (never 0, which marks a worker idle).
static EPOCH: AtomicU64 = AtomicU64::new(1);

/// The high bit of a mark: the watchdog already nudged for this poll.
const NUDGED: u64 = 1 << 63;

/// Every registered worker, read by the watchdog.
static WORKERS: Mutex<Vec<Weak<Worker>>> = Mutex::new(Vec::new());

/// Starts the watchdog thread once.
static WATCHDOG: Once = Once::new();

/// One worker thread of a multi-threaded runtime.
struct Worker {
    /// The tick at which the running watched poll began (0: none).
    since: AtomicU64,
    /// The worker's runtime, to nudge.
    runtime: Handle,
}

thread_local! {
    /// This thread's worker, when it is one of a multi-threaded runtime
    /// (`None` elsewhere: a current-thread runtime has no one to wake).
    static WORKER: OnceCell<Option<Arc<Worker>>> = const { OnceCell::new() };
}

/// `future`, with each of its polls marked on its worker (see the module).
pub(crate) fn watched<F: Future>(future: F) -> Watched<F> {
    Watched { future }
}

pin_project_lite::pin_project! {
    /// See [`watched`].
    pub(crate) struct Watched<F> {
        #[pin]
        future: F,
    }
}

impl<F: Future> Future for Watched<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let future = self.project().future;
        WORKER.with(|cell| match cell.get_or_init(register) {
            Some(worker) => {
                let _mark = Mark::begin(worker);
                future.poll(cx)
            }
            None => future.poll(cx),
        })
    }
}

/// The mark of one poll; cleared when dropped (also when the poll panics).
struct Mark<'a>(&'a Worker);

impl<'a> Mark<'a> {
    fn begin(worker: &'a Worker) -> Self {
        worker
            .since
            .store(EPOCH.load(Ordering::Relaxed), Ordering::Relaxed);
        Self(worker)
    }
}

impl Drop for Mark<'_> {
    fn drop(&mut self) {
        self.0.since.store(0, Ordering::Relaxed);
    }
}

/// This thread's worker, registered with the watchdog; `None` off a
/// multi-threaded runtime.
fn register() -> Option<Arc<Worker>> {
    let runtime = Handle::try_current().ok()?;
    if runtime.runtime_flavor() != RuntimeFlavor::MultiThread {
        return None;
    }
    let worker = Arc::new(Worker {
        since: AtomicU64::new(0),
        runtime,
    });
    WORKERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Arc::downgrade(&worker));
    WATCHDOG.call_once(|| {
        // Without the thread nothing is guarded, but nothing breaks either.
        let spawned = std::thread::Builder::new()
            .name("mcp-stall-watchdog".into())
            .spawn(watch);
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "cannot start the blocked-worker watchdog");
        }
    });
    Some(worker)
}

/// The watchdog: every tick, nudges the runtime of each worker whose
/// watched poll began two ticks ago or earlier, once per poll, and forgets
/// the workers whose threads ended.
fn watch() {
    loop {
        std::thread::sleep(TICK);
        let now = EPOCH.fetch_add(1, Ordering::Relaxed) + 1;
        WORKERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|worker| {
                let Some(worker) = worker.upgrade() else {
                    return false;
                };
                let since = worker.since.load(Ordering::Relaxed);
                let claimed = || {
                    worker
                        .since
                        .compare_exchange(
                            since,
                            since | NUDGED,
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok()
                };
                if overdue(since, now) && claimed() {
                    // Spawned from outside the runtime: queued for any
                    // worker, and a parked one is woken to run it.
                    drop(worker.runtime.spawn(async {}));
                }
                true
            });
    }
}

/// Whether a mark taken at tick `since` (0: none; high bit: nudged
/// already) calls for a nudge at tick `now`.
fn overdue(since: u64, now: u64) -> bool {
    since != 0 && since & NUDGED == 0 && now.saturating_sub(since) >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_is_overdue_after_two_ticks_and_only_once() {
        assert!(!overdue(0, 10), "no poll running");
        assert!(!overdue(9, 10), "one tick old");
        assert!(overdue(8, 10));
        assert!(!overdue(8 | NUDGED, 10), "nudged already");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_poll_marks_its_worker_and_clears_the_mark() {
        let seen = tokio::spawn(watched(async {
            WORKER.with(|cell| {
                let worker = cell.get().and_then(Option::as_ref).expect("registered");
                worker.since.load(Ordering::Relaxed)
            })
        }))
        .await
        .expect("no panic");
        assert_ne!(seen, 0, "marked while polled");
        let after = tokio::spawn(async {
            WORKER.with(|cell| {
                cell.get()
                    .and_then(Option::as_ref)
                    .map(|w| w.since.load(Ordering::Relaxed))
            })
        })
        .await
        .expect("no panic");
        // The same or the other worker: registered or not, never left marked.
        assert!(after.is_none_or(|since| since == 0));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_current_thread_runtime_has_no_worker_to_wake() {
        watched(async {}).await;
        assert!(WORKER.with(|cell| cell.get().is_some_and(Option::is_none)));
    }
}
