//! How the HTTP tests' tools report what happened to them: `"<tool> started"`
//! and `"<tool> ended cancelled=<bool>"` on a channel the test reads.

use std::sync::{Arc, Mutex};

use mcp_core::{CancelToken, InvokeContext};
use tokio::sync::mpsc;

/// Where the tools report.
pub type Events = Arc<Mutex<mpsc::UnboundedSender<String>>>;

/// Reports when a tool's future ends (completed or dropped) and whether the
/// call was cancelled by then: its token (a `notifications/cancelled`) or
/// the transport's external signal (disconnect, session end, shutdown; the
/// dispatcher drops the handler as soon as that fires).
pub struct EndReport {
    pub name: &'static str,
    pub ctx: InvokeContext,
    pub events: Events,
}

impl Drop for EndReport {
    fn drop(&mut self) {
        let cancelled = self.ctx.is_cancelled()
            || self
                .ctx
                .call_context()
                .signal
                .as_ref()
                .is_some_and(CancelToken::is_cancelled);
        send_event(
            &self.events,
            format!("{} ended cancelled={cancelled}", self.name),
        );
    }
}

/// Sends one report (a closed channel is ignored).
pub fn send_event(events: &Events, msg: String) {
    let _ = events.lock().map(|tx| tx.send(msg));
}
