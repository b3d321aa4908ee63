//! Small built-in interceptors: [`Timeout`] per tool, [`ConcurrencyLimit`]
//! per tool and per principal, and [`Trace`] (one `tracing` span per
//! request). Each is optional: register it with
//! [`McpServerBuilder::interceptor`](crate::McpServerBuilder::interceptor)
//! (or for one tool with `tool_interceptor`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tracing::Instrument;

use super::{Answer, Hook, Interceptor, Next, Operation, Operations, Outcome, Request};
use crate::protocol::CallToolResult;

/// Ends a `tools/call` that runs longer than its limit with a tool error
/// the model sees (`` `name` timed out after 30s ``); the handler's future
/// is dropped, so its work stops at its next `.await` (tasks it spawned
/// itself are not stopped).
///
/// ```
/// use std::time::Duration;
/// use mcp_core::intercept::Timeout;
///
/// let timeouts = Timeout::new(Duration::from_secs(30)).tool("slow_report", Duration::from_secs(300));
/// let server = mcp_core::McpServer::builder().interceptor(timeouts).build();
/// # drop(server);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Timeout {
    default: Option<Duration>,
    per_tool: HashMap<String, Duration>,
}

impl Timeout {
    /// Every tool gets `limit`, unless [`tool`](Self::tool) says otherwise.
    pub fn new(limit: Duration) -> Self {
        Self {
            default: Some(limit),
            per_tool: HashMap::new(),
        }
    }

    /// No default: only the tools named with [`tool`](Self::tool) are limited.
    pub fn per_tool() -> Self {
        Self::default()
    }

    /// The limit for one tool.
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, limit: Duration) -> Self {
        self.per_tool.insert(name.into(), limit);
        self
    }

    fn limit_of(&self, tool: &str) -> Option<Duration> {
        self.per_tool.get(tool).copied().or(self.default)
    }
}

impl Interceptor for Timeout {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let Some((tool, limit)) = req
            .tool_name()
            .and_then(|tool| Some((tool.to_owned(), self.limit_of(tool)?)))
        else {
            return next.pass(req);
        };
        Hook::wrap(async move {
            match tokio::time::timeout(limit, next.run(req)).await {
                Ok(outcome) => outcome,
                Err(_) => Outcome::tool(CallToolResult::error(format!(
                    "`{tool}` timed out after {limit:?}"
                ))),
            }
        })
    }
}

/// Caps the `tools/call`s running at once, per tool and per principal
/// (the caller the transport authenticated; calls without one share the
/// anonymous count). One call over a cap is answered at once with a tool
/// error the model sees, asking to retry later; nothing waits.
///
/// ```
/// use mcp_core::intercept::ConcurrencyLimit;
///
/// let limits = ConcurrencyLimit::new().per_tool(4).per_principal(16).tool("render", 1);
/// let server = mcp_core::McpServer::builder().interceptor(limits).build();
/// # drop(server);
/// ```
#[derive(Debug, Default)]
pub struct ConcurrencyLimit {
    per_tool: Option<usize>,
    per_principal: Option<usize>,
    tools: HashMap<String, usize>,
    running: Mutex<Running>,
}

#[derive(Debug, Default)]
struct Running {
    tools: HashMap<String, usize>,
    principals: HashMap<Option<Arc<str>>, usize>,
}

impl ConcurrencyLimit {
    /// No caps yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// At most `n` calls of any one tool at once.
    #[must_use]
    pub fn per_tool(mut self, n: usize) -> Self {
        self.per_tool = Some(n);
        self
    }

    /// At most `n` tool calls of one principal at once.
    #[must_use]
    pub fn per_principal(mut self, n: usize) -> Self {
        self.per_principal = Some(n);
        self
    }

    /// At most `n` calls of the tool `name` at once (instead of
    /// [`per_tool`](Self::per_tool)).
    #[must_use]
    pub fn tool(mut self, name: impl Into<String>, n: usize) -> Self {
        self.tools.insert(name.into(), n);
        self
    }

    /// Takes a slot for `tool` and `principal`, or says which cap is full.
    fn enter(&self, tool: &str, principal: Option<Arc<str>>) -> Result<Slot<'_>, &'static str> {
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        let tool_cap = self.tools.get(tool).copied().or(self.per_tool);
        let tool_now = running.tools.get(tool).copied().unwrap_or(0);
        if tool_cap.is_some_and(|cap| tool_now >= cap) {
            return Err("this tool");
        }
        let principal_now = running.principals.get(&principal).copied().unwrap_or(0);
        if self.per_principal.is_some_and(|cap| principal_now >= cap) {
            return Err("your");
        }
        *running.tools.entry(tool.to_owned()).or_default() += 1;
        *running.principals.entry(principal.clone()).or_default() += 1;
        Ok(Slot {
            limit: self,
            tool: tool.to_owned(),
            principal,
        })
    }
}

/// One running call's place in the counts; given back when dropped
/// (finished, failed or cancelled alike).
struct Slot<'a> {
    limit: &'a ConcurrencyLimit,
    tool: String,
    principal: Option<Arc<str>>,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut running = self
            .limit
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Running { tools, principals } = &mut *running;
        for count in [
            tools.get_mut(&self.tool),
            principals.get_mut(&self.principal),
        ]
        .into_iter()
        .flatten()
        {
            *count = count.saturating_sub(1);
        }
        // Counts at zero are removed: the maps hold running calls only.
        tools.retain(|_, n| *n > 0);
        principals.retain(|_, n| *n > 0);
    }
}

impl Interceptor for ConcurrencyLimit {
    fn operations(&self) -> Operations {
        Operations::only(Operation::CallTool)
    }

    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let tool = req.tool_name().unwrap_or_default();
        let principal = req.scope.ctx.principal.clone();
        match self.enter(tool, principal) {
            Ok(slot) => Hook::wrap(async move {
                let outcome = next.run(req).await;
                drop(slot);
                outcome
            }),
            Err(which) => Hook::done(Outcome::tool(CallToolResult::error(format!(
                "too many calls of {which} at once; try again when one has finished",
                which = if which == "your" {
                    "yours".to_owned()
                } else {
                    format!("`{tool}`")
                }
            )))),
        }
    }
}

/// One `tracing` span per request (`mcp.request`, with the method, the
/// tool/prompt name or URI, the era, the request id and the principal —
/// over HTTP with the `auth` feature, the token's subject), and one event
/// when it ends with its outcome (`ok`, `tool_error`, `error` with the
/// code, `input_required`, `no_reply`) and duration in microseconds.
/// Events go to whatever subscriber the application installed; with none,
/// `tracing` keeps them nearly free.
#[derive(Debug, Clone, Copy, Default)]
pub struct Trace;

impl Interceptor for Trace {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let span = tracing::info_span!(
            "mcp.request",
            method = req.method(),
            key = req.key(),
            era = if req.is_modern() { "2026-07-28" } else { "legacy" },
            id = %req.id(),
            retry = req.is_retry(),
            principal = req.principal(),
        );
        Hook::wrap(
            async move {
                let started = Instant::now();
                let outcome = next.run(req).await;
                let micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
                match &outcome {
                    Outcome::Answer(Answer::Tool(r)) if r.is_error == Some(true) => {
                        tracing::info!(outcome = "tool_error", micros, "request ended");
                    }
                    Outcome::Answer(_) => tracing::info!(outcome = "ok", micros, "request ended"),
                    Outcome::InputRequired(_) => {
                        tracing::info!(outcome = "input_required", micros, "request ended");
                    }
                    Outcome::Error(e) => {
                        tracing::info!(outcome = "error", code = e.code, micros, "request ended")
                    }
                    Outcome::NoReply => {
                        tracing::info!(outcome = "no_reply", micros, "request ended")
                    }
                }
                outcome
            }
            .instrument(span),
        )
    }
}
