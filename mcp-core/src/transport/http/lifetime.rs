//! How long a served connection lives: until hyper ends it, it is killed,
//! the server drains, or its idle clock runs out.
//!
//! The idle clock runs while the connection has no request in flight (see
//! [`Activity::idle_for`]): from its accept, and from each response handed
//! over. Past [`keep_alive_timeout`](super::HttpOptions::keep_alive_timeout)
//! the connection is shut down gracefully (hyper closes it between
//! requests); past [`header_read_timeout`](super::HttpOptions::header_read_timeout)
//! it is dropped, which is what ends a client that trickles a request head
//! and never finishes it. A connection whose response is still going out
//! (its socket buffer full: a slow reader) is not dropped; like hyper's own
//! header timer, this limit does not bound how long a response takes to
//! be read.
//!
//! This replaces hyper's own header-read timer, which costs a timer
//! allocation, a timer-wheel insertion and removal, and clock reads on every
//! request. Here one timer per connection is armed for the next deadline and
//! moved only when it fires. Between firings a wake-up of the connection's
//! task reads two flags and the timer's state: the timer is polled again only
//! when it fired or the task's waker changed.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::{Poll, Waker};
use std::time::Duration;

use hyper::rt::{Read, Write};
use hyper::server::conn::http1::Connection;
use hyper::service::HttpService;

use super::activity::Activity;
use super::sse::McpBody;
use crate::cancel::CancelToken;

/// The shortest wait between two checks of the idle clock.
const MIN_CHECK: Duration = Duration::from_millis(1);

/// The idle limits of one connection.
#[derive(Clone, Copy, Debug)]
pub(super) struct IdleLimits {
    /// Idle this long: shut down gracefully.
    pub(super) keep_alive: Duration,
    /// Idle this long: dropped at once.
    pub(super) header_read: Duration,
}

/// What the idle clock says once `idle` has passed (`None`: a request is
/// in flight).
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Drop the connection now.
    Drop,
    /// Shut it down gracefully, then check again after this long.
    ShutDown(Duration),
    /// Check again after this long.
    Wait(Duration),
}

impl IdleLimits {
    fn judge(&self, idle: Option<Duration>, shutting_down: bool) -> Verdict {
        let Some(idle) = idle else {
            // Busy: nothing can expire before the request ends, which
            // restarts the clock; look again after the shorter limit.
            let limit = if shutting_down {
                self.header_read
            } else {
                self.keep_alive.min(self.header_read)
            };
            return Verdict::Wait(limit.max(MIN_CHECK));
        };
        if idle >= self.header_read {
            return Verdict::Drop;
        }
        let to_drop = self.header_read - idle;
        if !shutting_down && idle >= self.keep_alive {
            return Verdict::ShutDown(to_drop.max(MIN_CHECK));
        }
        let next = if shutting_down {
            to_drop
        } else {
            to_drop.min(self.keep_alive - idle)
        };
        Verdict::Wait(next.max(MIN_CHECK))
    }
}

/// Serves `conn` until hyper ends it, `activity` is killed, or its idle
/// clock runs out; once `closing` is cancelled (the server drains) it is
/// shut down gracefully. Dropping the connection closes its socket and drops
/// what it was serving.
///
/// # Cancel safety
/// Dropping the future drops the connection.
pub(super) async fn serve<I, S>(
    conn: Connection<I, S>,
    activity: &Activity,
    closing: &CancelToken,
    limits: IdleLimits,
) where
    I: Read + Write + Unpin,
    S: HttpService<hyper::body::Incoming, ResBody = McpBody>,
{
    let mut conn = pin!(conn);
    let mut killed = pin!(activity.killed.cancelled());
    let mut drain = pin!(closing.cancelled());
    let mut shutting_down = false;
    let first = match limits.judge(activity.idle_for(), false) {
        Verdict::Wait(after) | Verdict::ShutDown(after) => after,
        Verdict::Drop => return,
    };
    let mut timer = pin!(tokio::time::sleep(first));

    // The waker the timer was last polled with; while it stays this
    // task's, an unfired timer need not be polled again.
    let mut timer_waker: Option<Waker> = None;
    poll_fn(|cx| loop {
        // The connection first: it is what wakes this task almost always.
        if conn.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        if killed.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        if !shutting_down && drain.as_mut().poll(cx).is_ready() {
            conn.as_mut().graceful_shutdown();
            shutting_down = true;
            // hyper must see the shutdown: poll the connection again.
            continue;
        }
        let current = timer_waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()));
        if current && !timer.is_elapsed() {
            return Poll::Pending;
        }
        if timer.as_mut().poll(cx).is_pending() {
            timer_waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let now = tokio::time::Instant::now();
        let next = match limits.judge(activity.idle_for(), shutting_down) {
            // A response still going out to a slow reader: not idle.
            Verdict::Drop if activity.answer.write_blocked() => limits.header_read.max(MIN_CHECK),
            Verdict::Drop => return Poll::Ready(()),
            Verdict::ShutDown(after) => {
                conn.as_mut().graceful_shutdown();
                shutting_down = true;
                after
            }
            Verdict::Wait(after) => after,
        };
        timer.as_mut().reset(now + next);
        timer_waker = None;
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: IdleLimits = IdleLimits {
        keep_alive: Duration::from_secs(5),
        header_read: Duration::from_secs(10),
    };

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn an_idle_connection_is_shut_down_at_keep_alive_then_dropped_at_header_read() {
        assert_eq!(LIMITS.judge(Some(secs(0)), false), Verdict::Wait(secs(5)));
        assert_eq!(LIMITS.judge(Some(secs(2)), false), Verdict::Wait(secs(3)));
        assert_eq!(
            LIMITS.judge(Some(secs(5)), false),
            Verdict::ShutDown(secs(5))
        );
        // Once shutting down, only the hard limit is left.
        assert_eq!(LIMITS.judge(Some(secs(6)), true), Verdict::Wait(secs(4)));
        assert_eq!(LIMITS.judge(Some(secs(10)), true), Verdict::Drop);
        assert_eq!(LIMITS.judge(Some(secs(11)), false), Verdict::Drop);
    }

    #[test]
    fn a_busy_connection_is_checked_again_after_the_shorter_limit() {
        assert_eq!(LIMITS.judge(None, false), Verdict::Wait(secs(5)));
        assert_eq!(LIMITS.judge(None, true), Verdict::Wait(secs(10)));
    }

    #[test]
    fn a_header_limit_below_keep_alive_drops_first() {
        let limits = IdleLimits {
            keep_alive: secs(30),
            header_read: Duration::from_millis(300),
        };
        assert_eq!(
            limits.judge(Some(Duration::from_millis(100)), false),
            Verdict::Wait(Duration::from_millis(200))
        );
        assert_eq!(
            limits.judge(Some(Duration::from_millis(300)), false),
            Verdict::Drop
        );
    }

    #[test]
    fn checks_are_never_closer_than_a_millisecond() {
        let limits = IdleLimits {
            keep_alive: Duration::ZERO,
            header_read: Duration::ZERO,
        };
        assert_eq!(limits.judge(None, false), Verdict::Wait(MIN_CHECK));
        assert_eq!(limits.judge(Some(Duration::ZERO), false), Verdict::Drop);
    }
}
