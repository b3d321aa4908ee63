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
//! # One hook
//! An interceptor implements [`Interceptor::intercept`], which runs for
//! every operation it declares in [`Interceptor::operations`] (all of them
//! by default). [`Request::operation`] says which one a request is, and
//! [`Request::tool_name`], [`Request::prompt_name`] and
//! [`Request::resource_uri`] read what it names.
//!
//! # Order
//! Onion order: the first interceptor registered on the builder is the
//! outermost; one that does not declare a request's operation is skipped.
//! A tool's own interceptors
//! ([`McpServerBuilder::tool_interceptor`](crate::McpServerBuilder::tool_interceptor))
//! run inside all the server's, in the order they were added. The same
//! chain runs for both eras and every transport; on a 2026-07-28 multi
//! round-trip call it runs on every round: [`Request::is_retry`] tells a
//! retry, and a round is final unless its outcome is
//! [`Outcome::InputRequired`] (so an audit hook fires once).
//!
//! # Cost
//! A hook that passes the request on ([`Next::pass`]) or answers it
//! ([`Hook::done`]) allocates nothing; a hook that wraps the rest
//! ([`Hook::wrap`]) boxes one future. A chain that has an interceptor for
//! the request's operation boxes the method's future once per request; when
//! no interceptor declares the operation (or there are none), the pipeline
//! runs it as if there were no interceptors.
//!
//! ```
//! use mcp_core::intercept::{Hook, Interceptor, Next, Operation, Operations, Outcome, Request};
//! use mcp_core::protocol::CallToolResult;
//!
//! /// Refuses every tool whose name starts with `admin_` to callers who are
//! /// not `root`, before their arguments are even parsed.
//! struct AdminOnly;
//!
//! impl Interceptor for AdminOnly {
//!     fn operations(&self) -> Operations {
//!         Operations::only(Operation::CallTool)
//!     }
//!
//!     fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
//!         let admin = req.tool_name().is_some_and(|k| k.starts_with("admin_"));
//!         if admin && req.principal() != Some("root") {
//!             return Hook::done(Outcome::tool(CallToolResult::error("access denied")));
//!         }
//!         next.pass(req)
//!     }
//! }
//!
//! /// Counts finished requests of every kind (a 2026-07-28 round that asks
//! /// for input is not finished).
//! struct Count(std::sync::atomic::AtomicUsize);
//!
//! impl Interceptor for Count {
//!     fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
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
#[cfg(feature = "otel")]
mod otel;
mod rate;
mod request;

use std::future::Future;
use std::sync::Arc;

#[cfg(feature = "metrics")]
pub(crate) use self::metrics::count_session;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use self::metrics::{Metrics, DURATION, ERRORS, IN_FLIGHT, MAX_KEYS, REQUESTS, SESSIONS};
#[cfg(feature = "otel")]
#[cfg_attr(docsrs, doc(cfg(feature = "otel")))]
pub use self::otel::Otel;
pub use builtin::{ConcurrencyLimit, Timeout, Trace};
pub use errors::ErrorMapping;
pub use rate::{RateLimit, MAX_BUCKETS};
pub use request::{Operation, Operations, Request};

pub use super::outcome::{Answer, Listing, Outcome, ToolListing};
use crate::protocol::{CallToolResult, ErrorObject};

/// User code around a request's method: one hook, [`intercept`](Self::intercept),
/// for every operation the interceptor declares in
/// [`operations`](Self::operations) (all of them unless it says otherwise).
///
/// The hook receives the [`Request`] (its [`operation`](Request::operation)
/// says which method it is) and the [`Next`] part of the chain, and
/// returns a [`Hook`]: pass the (possibly changed) request on
/// ([`Next::pass`]), answer it without running the rest
/// ([`Hook::done`]: a tool error the model sees, or a JSON-RPC error), or
/// wrap the rest ([`Hook::wrap`] around [`Next::run`]) to see and replace
/// its outcome.
pub trait Interceptor: Send + Sync + 'static {
    /// Runs around every request whose operation is in
    /// [`operations`](Self::operations); for `tools/call` and `prompts/get`,
    /// before their arguments are parsed.
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a>;

    /// The operations this interceptor sees (default: all of them, including
    /// [`Operation::Other`]). Read once, when the server is built; a request
    /// of any other operation goes past it as if it were not there, and a
    /// server whose interceptors all leave an operation out runs that
    /// operation as fast as one without interceptors.
    fn operations(&self) -> Operations {
        Operations::ALL
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

/// The rest of the chain after one interceptor: the inner ones, then the
/// method.
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

/// An ordered list of interceptors (the server's, or one tool's or
/// entry's), each with the operations it declared.
#[derive(Clone, Default)]
pub(crate) struct Chain {
    links: Vec<(Operations, Arc<dyn Interceptor>)>,
    /// Every operation some interceptor of the chain sees.
    wanted: Operations,
}

impl<T: Interceptor> Interceptor for Arc<T> {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        (**self).intercept(req, next)
    }
    fn operations(&self) -> Operations {
        (**self).operations()
    }
}

impl Chain {
    /// A chain of `interceptors`, the first outermost.
    pub(crate) fn new(interceptors: Vec<Arc<dyn Interceptor>>) -> Self {
        let mut chain = Self::default();
        for interceptor in interceptors {
            chain.push(interceptor);
        }
        chain
    }

    /// Adds `interceptor` innermost.
    pub(crate) fn push(&mut self, interceptor: Arc<dyn Interceptor>) {
        let operations = interceptor.operations();
        self.wanted = self.wanted | operations;
        self.links.push((operations, interceptor));
    }

    /// True when some interceptor of the chain sees `operation`; when
    /// none does, running the chain would only run the method.
    pub(crate) fn wants(&self, operation: Operation) -> bool {
        self.wanted.contains(operation)
    }

    /// Runs the chain for `req`, ending in `method`.
    pub(crate) async fn run<'a>(&'a self, req: Request<'a>, method: &'a dyn Method) -> Outcome {
        drive(self, 0, req, method).await
    }
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} interceptor(s)", self.links.len())
    }
}

/// Runs the chain from interceptor `at`, skipping those that do not see
/// the request's operation. Passing hooks are walked in a loop (no future
/// per hook); a wrapping hook owns the rest.
async fn drive<'a>(
    chain: &'a Chain,
    mut at: usize,
    mut req: Request<'a>,
    method: &'a dyn Method,
) -> Outcome {
    let operation = req.operation();
    loop {
        let Some((operations, interceptor)) = chain.links.get(at) else {
            return method.call(req).await;
        };
        at += 1;
        if !operations.contains(operation) {
            continue;
        }
        let next = Next { chain, at, method };
        match interceptor.intercept(req, next).0 {
            Step::Pass(passed) => req = passed,
            Step::Wrap(work) => return work.await,
            Step::Done(outcome) => return outcome,
        }
    }
}
