//! Progress reports of one request (`notifications/progress`).

use std::fmt;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::outbound::Outbound;
use crate::protocol;

/// One progress report.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Work done so far; must increase from report to report.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A human-readable status line.
    pub message: Option<String>,
}

/// An explicit progress sink an embedder can put in a
/// [`CallContext`](crate::transport::CallContext).
pub type ProgressSink = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// Reports progress for one request.
#[derive(Clone)]
pub struct Progress {
    target: ProgressTarget,
}

/// A sink whose reports are awaited (a task's status message, written to
/// its store).
pub(crate) type AwaitedSink =
    Arc<dyn Fn(ProgressUpdate) -> crate::handler::BoxFuture<()> + Send + Sync>;

#[derive(Clone)]
enum ProgressTarget {
    Sink(ProgressSink),
    Awaited(AwaitedSink),
    Notify {
        token: Value,
        outbound: Arc<dyn Outbound>,
    },
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            ProgressTarget::Sink(_) => f.write_str("Progress(sink)"),
            ProgressTarget::Awaited(_) => f.write_str("Progress(task)"),
            ProgressTarget::Notify { token, .. } => write!(f, "Progress({token})"),
        }
    }
}

impl Progress {
    pub(crate) fn sink(sink: ProgressSink) -> Self {
        Self {
            target: ProgressTarget::Sink(sink),
        }
    }

    pub(crate) fn awaited(sink: AwaitedSink) -> Self {
        Self {
            target: ProgressTarget::Awaited(sink),
        }
    }

    pub(crate) fn notify(token: Value, outbound: Arc<dyn Outbound>) -> Self {
        Self {
            target: ProgressTarget::Notify { token, outbound },
        }
    }

    /// Sends one report (`notifications/progress`). Waits while the client is
    /// not reading; a closed channel is ignored.
    ///
    /// # Cancel safety
    /// Dropping the future may drop this report; nothing else is affected.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        match &self.target {
            ProgressTarget::Sink(sink) => sink(ProgressUpdate {
                progress,
                total,
                message: message.map(str::to_owned),
            }),
            ProgressTarget::Awaited(sink) => {
                sink(ProgressUpdate {
                    progress,
                    total,
                    message: message.map(str::to_owned),
                })
                .await;
            }
            ProgressTarget::Notify { token, outbound } => {
                let mut params = Map::with_capacity(4);
                params.insert("progressToken".into(), token.clone());
                params.insert("progress".into(), json!(progress));
                if let Some(total) = total {
                    params.insert("total".into(), json!(total));
                }
                if let Some(message) = message {
                    params.insert("message".into(), Value::String(message.to_owned()));
                }
                let note = protocol::notification("notifications/progress", Value::Object(params));
                outbound.send(note).await;
            }
        }
    }
}
