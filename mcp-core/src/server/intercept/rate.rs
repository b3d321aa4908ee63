//! [`RateLimit`]: how many `tools/call`s a tool, or a principal, may start
//! in a window of time (a token bucket each, refilled continuously).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::{Hook, Interceptor, Next, Operation, Operations, Outcome, Request};
use crate::protocol::CallToolResult;

/// At most this many buckets are kept per kind (tools, principals): tool
/// names and principals come from clients, so their number must not grow
/// without bound. Buckets refilled to the brim say nothing and go first;
/// past that, the tenth idle the longest.
pub const MAX_BUCKETS: usize = 10_000;

/// Caps how many `tools/call`s start per window of time, per tool and per
/// principal (the caller the transport authenticated; calls without one
/// share the anonymous bucket). Each is a token bucket: `n` calls at once,
/// then one more every `window / n`. A call over a cap is answered at once
/// with a tool error the model sees, saying when to retry; nothing waits.
/// Unlike [`ConcurrencyLimit`](super::ConcurrencyLimit), which counts the
/// calls running, this counts the calls started.
///
/// ```
/// use std::time::Duration;
/// use mcp_core::intercept::RateLimit;
///
/// let minute = Duration::from_secs(60);
/// let limits = RateLimit::new()
///     .per_principal(120, minute)
///     .per_tool(600, minute)
///     .tool("send_email", 5, minute);
/// let server = mcp_core::McpServer::builder().interceptor(limits).build();
/// # drop(server);
/// ```
#[derive(Debug, Default)]
pub struct RateLimit {
    per_tool: Option<Rate>,
    per_principal: Option<Rate>,
    tools: HashMap<String, Rate>,
    buckets: Mutex<Buckets>,
}

/// `calls` per `window`.
#[derive(Debug, Clone, Copy)]
struct Rate {
    calls: u32,
    window: Duration,
}

impl Rate {
    fn new(calls: u32, window: Duration) -> Self {
        Self {
            calls: calls.max(1),
            window: window.max(Duration::from_millis(1)),
        }
    }

    /// The time one call's token takes to come back.
    fn per_call(self) -> Duration {
        self.window / self.calls
    }
}

#[derive(Debug, Default)]
struct Buckets {
    tools: HashMap<String, Bucket>,
    principals: HashMap<Option<Arc<str>>, Bucket>,
}

/// Tokens left (fractional: refilled continuously) as of `at`.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// The bucket refilled up to `now`.
    fn refilled(self, rate: Rate, now: Instant) -> Self {
        let gained =
            now.saturating_duration_since(self.at).as_secs_f64() / rate.per_call().as_secs_f64();
        Self {
            tokens: (self.tokens + gained).min(f64::from(rate.calls)),
            at: now,
        }
    }

    /// How long until one token is there.
    fn wait(self, rate: Rate) -> Duration {
        rate.per_call().mul_f64((1.0 - self.tokens).max(0.0))
    }
}

/// The bucket of `key` in `map` as of `now` (a new one is full), making
/// room first when the map is at [`MAX_BUCKETS`].
fn bucket<K: std::hash::Hash + Eq + Clone>(
    map: &mut HashMap<K, Bucket>,
    key: &K,
    rate: Rate,
    now: Instant,
) -> Bucket {
    if let Some(b) = map.get(key) {
        return b.refilled(rate, now);
    }
    if map.len() >= MAX_BUCKETS {
        let full = f64::from(rate.calls);
        map.retain(|_, b| b.refilled(rate, now).tokens < full);
        if map.len() >= MAX_BUCKETS {
            // A tenth at once, the idlest first: the scan is paid once per
            // thousand new keys, not on each.
            let mut idle: Vec<(Instant, K)> = map.iter().map(|(k, b)| (b.at, k.clone())).collect();
            idle.sort_unstable_by_key(|(at, _)| *at);
            for (_, k) in idle.into_iter().take(MAX_BUCKETS / 10) {
                map.remove(&k);
            }
        }
    }
    Bucket {
        tokens: f64::from(rate.calls),
        at: now,
    }
}

impl RateLimit {
    /// No caps yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `calls` calls of any one tool per `window`.
    #[must_use]
    pub fn per_tool(mut self, calls: u32, window: Duration) -> Self {
        self.per_tool = Some(Rate::new(calls, window));
        self
    }

    /// At most `calls` tool calls of one principal per `window`.
    #[must_use]
    pub fn per_principal(mut self, calls: u32, window: Duration) -> Self {
        self.per_principal = Some(Rate::new(calls, window));
        self
    }

    /// At most `calls` calls of the tool `name` per `window` (instead of
    /// [`per_tool`](Self::per_tool)).
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, calls: u32, window: Duration) -> Self {
        self.tools.insert(name.into(), Rate::new(calls, window));
        self
    }

    /// Takes a token from the tool's and the principal's buckets, or says
    /// which is empty and when it has one again. Nothing is taken unless
    /// both have one.
    fn take(&self, tool: &str, principal: &Option<Arc<str>>) -> Result<(), (bool, Duration)> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let Buckets { tools, principals } = &mut *buckets;
        let tool_key = tool.to_owned();
        let tool_rate = self.tools.get(tool).copied().or(self.per_tool);
        let for_tool = tool_rate.map(|rate| (rate, bucket(tools, &tool_key, rate, now)));
        let for_principal = self
            .per_principal
            .map(|rate| (rate, bucket(principals, principal, rate, now)));
        if let Some((rate, b)) = for_tool.filter(|(_, b)| b.tokens < 1.0) {
            return Err((true, b.wait(rate)));
        }
        if let Some((rate, b)) = for_principal.filter(|(_, b)| b.tokens < 1.0) {
            return Err((false, b.wait(rate)));
        }
        if let Some((_, mut b)) = for_tool {
            b.tokens -= 1.0;
            tools.insert(tool_key, b);
        }
        if let Some((_, mut b)) = for_principal {
            b.tokens -= 1.0;
            principals.insert(principal.clone(), b);
        }
        Ok(())
    }
}

impl Interceptor for RateLimit {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default();
        match self.take(tool, &req.scope.ctx.principal) {
            Ok(()) => next.pass(req),
            Err((is_tool, wait)) => {
                let whose = if is_tool {
                    format!("`{tool}`")
                } else {
                    "yours".to_owned()
                };
                // Whole seconds, rounded up: "retry in 0 s" would mislead.
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Hook::done(Outcome::tool(CallToolResult::error(format!(
                    "rate limit: too many calls of {whose}; try again in {secs} s"
                ))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_bucket_refills_one_call_per_share_of_the_window() {
        let limit = RateLimit::new().per_tool(2, Duration::from_secs(10));
        assert!(limit.take("t", &None).is_ok());
        assert!(limit.take("t", &None).is_ok());
        let (is_tool, wait) = limit.take("t", &None).expect_err("empty");
        assert!(is_tool);
        assert_eq!(wait, Duration::from_secs(5));
        // Another tool has its own bucket.
        assert!(limit.take("u", &None).is_ok());
        tokio::time::advance(Duration::from_secs(5)).await;
        assert!(limit.take("t", &None).is_ok(), "one token came back");
        assert!(limit.take("t", &None).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_call_takes_nothing_from_the_other_bucket() {
        let alice: Option<Arc<str>> = Some(Arc::from("alice"));
        let limit = RateLimit::new()
            .per_principal(1, Duration::from_secs(60))
            .tool("t", 1, Duration::from_secs(60));
        assert!(limit.take("t", &alice).is_ok());
        // The tool's bucket is empty: the principal's is not charged.
        let bob: Option<Arc<str>> = Some(Arc::from("bob"));
        assert_eq!(limit.take("t", &bob).map_err(|e| e.0), Err(true));
        assert!(limit.take("other", &bob).is_ok(), "bob still had his call");
        assert_eq!(limit.take("other", &alice).map_err(|e| e.0), Err(false));
    }

    #[tokio::test(start_paused = true)]
    async fn client_chosen_keys_are_bounded() {
        let limit = RateLimit::new().per_tool(1, Duration::from_secs(3600));
        for i in 0..MAX_BUCKETS + 50 {
            let _ = limit.take(&format!("tool-{i}"), &None);
        }
        let kept = limit
            .buckets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tools
            .len();
        assert!(kept <= MAX_BUCKETS, "{kept} buckets");
    }
}
