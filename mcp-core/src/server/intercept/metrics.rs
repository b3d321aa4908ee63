//! [`Metrics`]: request counts, outcomes, latency and in-flight calls
//! through the [`metrics`] facade, so the application picks the exporter
//! (Prometheus, OpenTelemetry, StatsD, …) by installing its recorder.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::{Answer, Hook, Interceptor, Next, Outcome, Request};
use crate::session::Session;

/// `mcp_requests_total` (counter): requests by `method`, `key` (the tool,
/// prompt or resource URI) and `outcome` (`ok`, `tool_error`, `error`,
/// `input_required`, `no_reply`).
pub const REQUESTS: &str = "mcp_requests_total";
/// `mcp_request_errors_total` (counter): JSON-RPC errors by `method`,
/// `key` and `code`.
pub const ERRORS: &str = "mcp_request_errors_total";
/// `mcp_request_duration_seconds` (histogram): by `method` and `key`.
pub const DURATION: &str = "mcp_request_duration_seconds";
/// `mcp_requests_in_flight` (gauge): requests running now, by `method`.
pub const IN_FLIGHT: &str = "mcp_requests_in_flight";
/// `mcp_sessions` (gauge): legacy sessions open now (stdio connections
/// and HTTP sessions that initialized, until they end, expire or are
/// deleted). Kept by a server a [`Metrics`] interceptor is registered on.
pub const SESSIONS: &str = "mcp_sessions";

/// Distinct `key` label values kept before others are counted as `(other)`:
/// keys come from clients (an unknown tool's name), so the label set is
/// bounded whatever they send.
pub const MAX_KEYS: usize = 1000;

/// Records every request that reaches the interceptors (see the metric
/// names above), and the server's open sessions ([`SESSIONS`]) when it is
/// registered with
/// [`McpServerBuilder::interceptor`](crate::McpServerBuilder::interceptor).
/// With no recorder installed the facade's calls are no-ops.
///
/// ```
/// use mcp_core::intercept::Metrics;
/// // Install an exporter's recorder first (metrics-exporter-prometheus, …).
/// let server = mcp_core::McpServer::builder().interceptor(Metrics::new()).build();
/// # drop(server);
/// ```
#[derive(Debug, Default)]
pub struct Metrics {
    keys: Mutex<HashSet<String>>,
}

impl Metrics {
    /// The interceptor.
    pub fn new() -> Self {
        Self::default()
    }

    /// The `key` label for `key`: itself while fewer than [`MAX_KEYS`]
    /// were seen, else `(other)`.
    fn label(&self, key: Option<&str>) -> String {
        let Some(key) = key else {
            return String::new();
        };
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        if keys.contains(key) {
            return key.to_owned();
        }
        if keys.len() < MAX_KEYS {
            keys.insert(key.to_owned());
            return key.to_owned();
        }
        "(other)".to_owned()
    }
}

impl Interceptor for Metrics {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let method = req.method().to_owned();
        let key = self.label(req.key());
        Hook::wrap(async move {
            let in_flight = metrics::gauge!(IN_FLIGHT, "method" => method.clone());
            in_flight.increment(1.0);
            let started = Instant::now();
            let outcome = next.run(req).await;
            in_flight.decrement(1.0);
            metrics::histogram!(DURATION, "method" => method.clone(), "key" => key.clone())
                .record(started.elapsed().as_secs_f64());
            let kind = match &outcome {
                Outcome::Answer(Answer::Tool(r)) if r.is_error == Some(true) => "tool_error",
                Outcome::Answer(_) => "ok",
                Outcome::InputRequired(_) => "input_required",
                Outcome::Error(e) => {
                    metrics::counter!(ERRORS, "method" => method.clone(), "key" => key.clone(),
                        "code" => e.code.to_string())
                    .increment(1);
                    "error"
                }
                Outcome::NoReply => "no_reply",
            };
            metrics::counter!(REQUESTS, "method" => method, "key" => key, "outcome" => kind)
                .increment(1);
            outcome
        })
    }
}

/// Counts `session` in [`SESSIONS`] until it ends (once, however often it
/// is told of).
pub(crate) fn count_session(session: &Session) {
    let gauge = metrics::gauge!(SESSIONS);
    let at_end = gauge.clone();
    if session.on_end(Box::new(move || at_end.decrement(1.0))) {
        gauge.increment(1.0);
    }
}
