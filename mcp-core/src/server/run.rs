//! Stage 6, run: a registered request is routed and its handler runs under
//! the cancellation select; the outcome is made into its reply.

use serde_json::{Map, Value};

use super::encode::{Body, Reply};
use super::methods;
use super::outcome::{Answer, Outcome, Stop};
use super::route::{route, Route};
use super::scope::RequestScope;
use super::McpServer;
use crate::cancel::CancelToken;

/// A request whose id is registered in its session, ready to run.
pub(crate) struct Prepared {
    pub(crate) scope: RequestScope,
    pub(crate) params: Map<String, Value>,
}

impl McpServer {
    /// Runs a prepared request to its reply. `None` when it was cancelled
    /// or ended without one (no reply is sent).
    pub(crate) async fn run_prepared(&self, call: Prepared) -> Option<Reply> {
        let Prepared { scope, params } = call;
        let outcome = self.execute(&scope, params).await;
        let RequestScope { id, era, guard, .. } = scope;
        // Unregistered before the reply leaves: a client may reuse the id
        // as soon as it has the answer.
        drop(guard);
        let modern = matches!(era, crate::protocol::Era::Modern(_));
        self.finish(id, modern, outcome)
    }

    /// Runs the request's method under the cancellation select: the call's
    /// own token (`notifications/cancelled`) and the transport's signal
    /// (a client that went away). A cancelled call has no outcome to send.
    pub(crate) async fn execute(
        &self,
        scope: &RequestScope,
        params: Map<String, Value>,
    ) -> Outcome {
        let token = scope.token();
        let external = scope.ctx.signal.as_ref();
        if external.is_some_and(CancelToken::is_cancelled) {
            token.cancel();
            return Outcome::NoReply;
        }
        let work = self.dispatch(scope, params);
        // The work is polled first: a call that finishes at once never
        // registers a waiter on either cancellation signal. One cancelled
        // by the time it finished still gets no reply.
        let result = tokio::select! {
            biased;
            r = work => (!token.is_cancelled()
                && !external.is_some_and(CancelToken::is_cancelled))
            .then_some(r),
            () = token.cancelled() => None,
            // The token is cancelled inside the waiting future, before the
            // select drops the handler, so cleanup code sees is_cancelled().
            () = async {
                wait_external(external).await;
                token.cancel();
            } => None,
        };
        result.map_or(Outcome::NoReply, Outcome::from)
    }

    /// Routes the request and runs its method.
    async fn dispatch(
        &self,
        scope: &RequestScope,
        params: Map<String, Value>,
    ) -> Result<Answer, Stop> {
        let json = match route(&self.inner, &scope.method, &scope.era)? {
            Route::ToolsCall => {
                return methods::tools::call(self, scope, params)
                    .await
                    .map(Answer::Tool)
            }
            Route::ToolsList => match &self.inner.tools_listing {
                Some(listing) => {
                    methods::check_cursor(&params)?;
                    return Ok(Answer::ToolListing(std::sync::Arc::clone(listing)));
                }
                None => methods::tools::list(self, scope, &params)?,
            },
            Route::ResourcesList => methods::resources::list(self, scope, &params)?,
            Route::ResourceTemplatesList => methods::resources::templates(self, scope, &params)?,
            Route::ResourcesRead => methods::resources::read(self, scope, params).await?,
            Route::PromptsList => methods::prompts::list(self, scope, &params)?,
            Route::PromptsGet => methods::prompts::get(self, scope, params).await?,
            Route::LoggingSetLevel => methods::features::set_level(scope, &params)?,
            Route::CompletionComplete => methods::features::complete(self, scope, &params).await?,
            Route::ResourcesSubscribe => methods::features::subscribe(self, scope, &params, true)?,
            Route::ResourcesUnsubscribe => {
                methods::features::subscribe(self, scope, &params, false)?
            }
            Route::SubscriptionsListen => methods::listen::listen(self, scope, &params).await?,
        };
        let mut json = json;
        if let (true, Value::Object(map)) = (scope.is_modern(), &mut json) {
            self.decorate(map);
        }
        Ok(Answer::Json(json))
    }

    /// The last point a request's outcome can be seen before it is written:
    /// the outcome becomes the reply (2026-07-28 results carry the
    /// server's info and cache hints, written while encoding).
    #[inline]
    pub(crate) fn finish(
        &self,
        id: crate::protocol::RequestId,
        modern: bool,
        outcome: Outcome,
    ) -> Option<Reply> {
        let inner = &self.inner;
        let body = match outcome {
            Outcome::Answer(Answer::Json(value)) => Body::Json(value),
            Outcome::Answer(Answer::ToolListing(items)) => Body::Listing {
                key: "tools",
                items,
                modern: modern.then(|| {
                    (
                        std::sync::Arc::clone(&inner.server_info_raw),
                        inner.list_cache,
                    )
                }),
            },
            Outcome::Answer(Answer::Tool(result)) => Body::Tool {
                result,
                modern: modern.then(|| std::sync::Arc::clone(&inner.server_info_raw)),
            },
            Outcome::InputRequired(result) => Body::Json(Value::Object(result)),
            Outcome::Error(e) => Body::Error(e),
            Outcome::NoReply => return None,
        };
        Some(Reply { id: Some(id), body })
    }
}

async fn wait_external(signal: Option<&CancelToken>) {
    match signal {
        Some(s) => s.cancelled().await,
        None => std::future::pending().await,
    }
}
