//! Interceptors: user code between the pipeline and a method, for access
//! checks, instrumentation, audit, argument rewriting or replacing an
//! outcome — without forking the dispatcher.
//!
//! # Where they run
//! After a request is decoded, classified (its era read), admitted,
//! registered (its id in flight) and routed, and before its method runs:
//! for `tools/call`, before the tool's arguments are parsed or checked.
//! `ping`, notifications, responses and requests refused earlier (an
//! unknown method, a malformed envelope, a busy server) never reach them.
//! `initialize` and `server/discover` do, when any interceptor is
//! registered.
//!
//! # Order
//! Onion order: the first interceptor registered on the builder is the
//! outermost. For each interceptor, [`on_request`](Interceptor::on_request)
//! wraps its operation hook (`on_call_tool`, …). A tool's own interceptors
//! ([`McpServerBuilder::tool_interceptor`](crate::McpServerBuilder::tool_interceptor))
//! run inside all the server's, in the order they were added. The same
//! chain runs for both eras and every transport; on a 2026-07-28 multi
//! round-trip call it runs on every round: [`Request::is_retry`] tells a
//! retry, and a round is final unless its outcome is
//! [`Outcome::InputRequired`] (so an audit hook fires once).
//!
//! # Cost
//! A hook that passes the request on ([`Next::pass`], every default) or
//! answers it ([`Hook::done`]) allocates nothing; a hook that wraps the
//! rest ([`Hook::wrap`]) boxes one future. A non-empty chain boxes the
//! method's future once per request; with no interceptor the pipeline is
//! unchanged.
//!
//! ```
//! use mcp_core::intercept::{Hook, Interceptor, Next, Outcome, Request};
//! use mcp_core::protocol::CallToolResult;
//!
//! /// Refuses every tool whose name starts with `admin_` to callers who are
//! /// not `root`, before their arguments are even parsed.
//! struct AdminOnly;
//!
//! impl Interceptor for AdminOnly {
//!     fn on_call_tool<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
//!         let admin = req.key().is_some_and(|k| k.starts_with("admin_"));
//!         if admin && req.principal() != Some("root") {
//!             return Hook::done(Outcome::tool(CallToolResult::error("access denied")));
//!         }
//!         next.pass(req)
//!     }
//! }
//!
//! /// Counts finished calls (a 2026-07-28 round that asks for input is not).
//! struct Count(std::sync::atomic::AtomicUsize);
//!
//! impl Interceptor for Count {
//!     fn on_request<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
//!         Hook::wrap(async move {
//!             let outcome = next.run(req).await;
//!             if !matches!(outcome, Outcome::InputRequired(_)) {
//!                 self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
//!             }
//!             outcome
//!         })
//!     }
//! }
//!
//! let server = mcp_core::McpServer::builder()
//!     .interceptor(AdminOnly)
//!     .interceptor(Count(Default::default()))
//!     .build()
//!     .expect("builds");
//! # drop(server);
//! ```

mod builtin;
mod errors;
#[cfg(feature = "metrics")]
mod metrics;
mod rate;
mod request;

use std::future::Future;
use std::sync::Arc;

#[cfg(feature = "metrics")]
pub(crate) use self::metrics::count_session;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::metrics::{Metrics, DURATION, ERRORS, IN_FLIGHT, MAX_KEYS, REQUESTS, SESSIONS};
pub use builtin::{ConcurrencyLimit, Timeout, Trace};
pub use errors::ErrorMapping;
pub use rate::{RateLimit, MAX_BUCKETS};
pub use request::{Operation, Request};

pub use super::outcome::{Answer, Listing, Outcome, ToolListing};
use crate::protocol::{CallToolResult, ErrorObject};

/// User code around a request's method. Every hook has a default that
/// passes the request on unchanged; implement the ones you need.
///
/// A hook receives the [`Request`] and the [`Next`] part of the chain, and
/// returns a [`Hook`]: pass the (possibly changed) request on
/// ([`Next::pass`]), answer it without running the rest
/// ([`Hook::done`]: a tool error the model sees, or a JSON-RPC error), or
/// wrap the rest ([`Hook::wrap`] around [`Next::run`]) to see and replace
/// its outcome.
pub trait Interceptor: Send + Sync + 'static {
    /// Every request that reaches the interceptors, around the operation's
    /// own hook.
    fn on_request<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `tools/call`, before the tool's arguments are parsed.
    fn on_call_tool<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `tools/list`.
    fn on_list_tools<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `resources/read`.
    fn on_read_resource<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `resources/list`.
    fn on_list_resources<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `resources/templates/list`.
    fn on_list_resource_templates<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `prompts/get`, before the prompt's arguments are parsed.
    fn on_get_prompt<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `prompts/list`.
    fn on_list_prompts<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `completion/complete`.
    fn on_complete<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `initialize` (legacy).
    fn on_initialize<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }

    /// `server/discover` (2026-07-28).
    fn on_discover<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        next.pass(req)
    }
}

impl Outcome {
    /// A `tools/call` result (for a hook that answers a call itself).
    pub fn tool(result: CallToolResult) -> Self {
        Self::Answer(Answer::Tool(result))
    }

    /// A JSON-RPC error answer.
    pub fn error(error: ErrorObject) -> Self {
        Self::Error(error)
    }
}

/// A boxed future borrowing the request's scope.
pub(crate) type LocalBoxed<'a> = std::pin::Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// What a hook decided.
pub struct Hook<'a>(pub(crate) Step<'a>);

pub(crate) enum Step<'a> {
    /// Go on with the rest of the chain.
    Pass(Request<'a>),
    /// The rest of the chain ran inside this future.
    Wrap(LocalBoxed<'a>),
    /// Answered here; the rest never runs.
    Done(Outcome),
}

impl<'a> Hook<'a> {
    /// Answers the request with `outcome`: later interceptors and the
    /// method never run (for `tools/call`, its arguments are never parsed).
    pub fn done(outcome: Outcome) -> Self {
        Self(Step::Done(outcome))
    }

    /// Runs `work`, which runs the rest of the chain with [`Next::run`]
    /// (or answers without it) and returns the outcome to send.
    pub fn wrap(work: impl Future<Output = Outcome> + Send + 'a) -> Self {
        Self(Step::Wrap(Box::pin(work)))
    }
}

/// The rest of the chain after one hook: more hooks, then the method.
pub struct Next<'a> {
    chain: &'a Chain,
    at: usize,
    method: &'a dyn Method,
}

impl<'a> Next<'a> {
    /// Goes on with `req` (the usual end of a hook that only looks or
    /// changes the request): no future is allocated.
    pub fn pass(self, req: Request<'a>) -> Hook<'a> {
        Hook(Step::Pass(req))
    }

    /// Runs the rest of the chain and the method, to their outcome.
    ///
    /// # Cancel safety
    /// Dropping the future drops the call (its handler is dropped too).
    pub async fn run(self, req: Request<'a>) -> Outcome {
        drive(self.chain, self.at, req, self.method).await
    }
}

/// What the chain ends in: the method itself.
pub(crate) trait Method: Send + Sync {
    /// Runs the method for `req`.
    fn call<'a>(&'a self, req: Request<'a>) -> LocalBoxed<'a>;
}

/// An ordered list of interceptors (the server's, or one tool's).
#[derive(Clone, Default)]
pub(crate) struct Chain(pub(crate) Vec<Arc<dyn Interceptor>>);

impl<T: Interceptor> Interceptor for Arc<T> {
    fn on_request<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_request(req, next)
    }
    fn on_call_tool<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_call_tool(req, next)
    }
    fn on_list_tools<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_list_tools(req, next)
    }
    fn on_read_resource<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_read_resource(req, next)
    }
    fn on_list_resources<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_list_resources(req, next)
    }
    fn on_list_resource_templates<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_list_resource_templates(req, next)
    }
    fn on_get_prompt<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_get_prompt(req, next)
    }
    fn on_list_prompts<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_list_prompts(req, next)
    }
    fn on_complete<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_complete(req, next)
    }
    fn on_initialize<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_initialize(req, next)
    }
    fn on_discover<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).on_discover(req, next)
    }
}

impl Chain {
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Runs the chain for `req`, ending in `method`.
    pub(crate) async fn run<'a>(&'a self, req: Request<'a>, method: &'a dyn Method) -> Outcome {
        drive(self, 0, req, method).await
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} interceptor(s)", self.0.len())
    }
}

/// Runs the chain from stage `at`: stage `2i` is interceptor `i`'s
/// `on_request`, stage `2i + 1` its operation hook. Passing hooks are
/// walked in a loop (no future per hook); a wrapping hook owns the rest.
async fn drive<'a>(
    chain: &'a Chain,
    mut at: usize,
    mut req: Request<'a>,
    method: &'a dyn Method,
) -> Outcome {
    loop {
        let Some(interceptor) = chain.0.get(at / 2) else {
            return method.call(req).await;
        };
        let next = Next {
            chain,
            at: at + 1,
            method,
        };
        let hook = if at % 2 == 0 {
            interceptor.on_request(req, next)
        } else {
            operation_hook(&**interceptor, req, next)
        };
        match hook.0 {
            Step::Pass(passed) => {
                req = passed;
                at += 1;
            }
            Step::Wrap(work) => return work.await,
            Step::Done(outcome) => return outcome,
        }
    }
}

fn operation_hook<'a>(i: &'a dyn Interceptor, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
    match req.operation() {
        Operation::CallTool => i.on_call_tool(req, next),
        Operation::ListTools => i.on_list_tools(req, next),
        Operation::ReadResource => i.on_read_resource(req, next),
        Operation::ListResources => i.on_list_resources(req, next),
        Operation::ListResourceTemplates => i.on_list_resource_templates(req, next),
        Operation::GetPrompt => i.on_get_prompt(req, next),
        Operation::ListPrompts => i.on_list_prompts(req, next),
        Operation::Complete => i.on_complete(req, next),
        Operation::Initialize => i.on_initialize(req, next),
        Operation::Discover => i.on_discover(req, next),
        Operation::Other => next.pass(req),
    }
}
