//! A cloneable cancellation signal, the Rust form of an `AbortSignal`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    cancelled: AtomicBool,
    notify: Notify,
}

impl CancelToken {
    /// A fresh, not yet cancelled token.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cancels the token and wakes every waiter. Idempotent.
    pub fn cancel(&self) {
        if !self.inner.cancelled.swap(true, Ordering::AcqRel) {
            self.inner.notify.notify_waiters();
        }
    }

    /// True once [`cancel`](Self::cancel) has been called.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::Acquire)
    }

    /// Completes when the token is cancelled (at once if it already is).
    ///
    /// Cancel-safe: dropping the future loses nothing.
    ///
    /// # Cancel safety
    /// Cancel-safe: dropping the future only stops waiting.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
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
}
