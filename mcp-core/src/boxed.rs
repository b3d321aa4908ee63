//! The boxed future type handlers and hooks are stored as.

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: what registered handlers and hooks return
/// once stored.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
