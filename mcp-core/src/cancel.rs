//! A cloneable cancellation signal, the Rust form of an `AbortSignal`.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Poll, Waker};

use tokio::sync::Notify;

/// A cancellation signal shared between the dispatcher and a running call.
///
/// Clones observe the same state. Once cancelled it stays cancelled.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let token = mcp_core::CancelToken::new();
/// let waiter = token.clone();
/// token.cancel();
/// waiter.cancelled().await; // returns at once
/// assert!(waiter.is_cancelled());
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct CancelToken {
    inner: Arc<Signal>,
}

/// The state behind a [`CancelToken`], for a value that embeds a signal
/// nobody else holds (a session's end), without an allocation of its own.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    cancelled: AtomicBool,
    notify: Notify,
}

impl Signal {
    /// Cancels the signal and wakes every waiter. Idempotent.
    pub(crate) fn cancel(&self) {
        if !self.cancelled.swap(true, Ordering::AcqRel) {
            self.notify.notify_waiters();
        }
    }

    /// True once [`cancel`](Self::cancel) has been called.
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
    }

    /// Completes when the signal is cancelled (at once if it already is).
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub(crate) async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            // Polled again by the task that registered (a `select!` polls
            // every branch at each wake-up), the future only reads the
            // flag: the registered waker is already this task's, and
            // `cancel` sets the flag before it wakes anyone. Re-polling
            // `Notified` would take its waiter-list lock each time.
            let mut registered: Option<Waker> = None;
            let notified = &mut notified;
            std::future::poll_fn(|cx| {
                if self.is_cancelled() {
                    return Poll::Ready(());
                }
                if registered.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    return Poll::Pending;
                }
                let poll = notified.as_mut().poll(cx);
                if poll.is_pending() {
                    registered = Some(cx.waker().clone());
                }
                poll
            })
            .await;
        }
    }
}

impl CancelToken {
    /// A fresh, not yet cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the token and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        self.inner.cancel();
    }

    /// True once [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Completes when the token is cancelled (at once if it already is).
    ///
    /// Cancel-safe: dropping the future loses nothing.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn cancelled(&self) {
        self.inner.cancelled().await;
    }

    /// True when both handles share one signal.
    pub fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn waiters_wake_on_cancel() {
        let token = CancelToken::new();
        let waiter = token.clone();
        let task = tokio::spawn(async move { waiter.cancelled().await });
        tokio::task::yield_now().await;
        assert!(!token.is_cancelled());
        token.cancel();
        task.await.expect("waiter task");
        assert!(token.is_cancelled());
    }

    /// Polled many times by one task (as a `select!` branch is), then by
    /// another, the future still completes when the token is cancelled.
    #[tokio::test]
    async fn repolled_waiters_wake_on_cancel() {
        use std::pin::pin;
        use std::sync::atomic::AtomicUsize;
        use std::task::{Context, Wake};

        struct Count(AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let token = CancelToken::new();
        let mut waiting = pin!(token.cancelled());
        let first = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&first));
        for _ in 0..5 {
            let mut cx = Context::from_waker(&waker);
            assert!(waiting.as_mut().poll(&mut cx).is_pending());
        }
        // Moved to another task: its waker is the one woken.
        let second = Arc::new(Count(AtomicUsize::new(0)));
        let other = Waker::from(Arc::clone(&second));
        assert!(waiting
            .as_mut()
            .poll(&mut Context::from_waker(&other))
            .is_pending());
        token.cancel();
        assert_eq!(
            second.0.load(Ordering::SeqCst),
            1,
            "the last waker is woken"
        );
        assert_eq!(first.0.load(Ordering::SeqCst), 0, "the replaced one is not");
        assert!(waiting
            .as_mut()
            .poll(&mut Context::from_waker(&other))
            .is_ready());
    }
}
