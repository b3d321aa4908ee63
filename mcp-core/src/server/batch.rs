//! Batches, and the simple public forms of the pipeline
//! ([`McpServer::handle_message`], [`McpServer::dispatch_payload`],
//! [`McpServer::handle_frame`]).

use std::sync::Arc;

use serde_json::Value;

use super::admission::Admit;
use super::decode::{is_request, request_id_of, Frame};
use super::encode::{Replies, Reply};
use super::prepare::Step;
use super::McpServer;
use crate::context::CallContext;
use crate::protocol::ErrorObject;

impl McpServer {
    /// Handles one JSON-RPC message (not a batch) and returns the reply, if
    /// any: requests get a response; notifications and responses get `None`;
    /// a request cancelled while running gets `None`.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the call (and unregisters its id).
    pub async fn handle_message(&self, message: Value, ctx: &CallContext) -> Option<Value> {
        self.reply_to(message, ctx).await.map(Reply::into_value)
    }

    /// Handles one transport frame (a stdio line, an HTTP body) from bytes
    /// to bytes: parses it, runs it (a batch too) and returns the reply's
    /// JSON, written straight from the reply without an intermediate
    /// `serde_json::Value`. `None` when there is nothing to answer
    /// (notifications and responses). Invalid JSON gets the `-32700`
    /// reply. The simple form of [`accept`](Self::accept).
    ///
    /// # Cancel safety
    /// Dropping the future abandons the call (and unregisters its id).
    pub async fn handle_frame(&self, frame: &[u8], ctx: &CallContext) -> Option<Vec<u8>> {
        let replies = match Frame::parse(frame) {
            Err(reply) => return serde_json::to_vec(&reply).ok(),
            Ok(frame) => {
                self.accept(frame, &Arc::new(ctx.clone()), None)
                    .run()
                    .await?
            }
        };
        let mut out = Vec::new();
        replies.write_to(&mut out);
        Some(out)
    }

    /// Dispatches a payload that may be a batch: a single message goes to
    /// [`handle_message`](Self::handle_message); an array gets one response
    /// per request, in order, or `None` when it held only notifications and
    /// responses. An empty batch is `-32600`; so is an `initialize` inside a
    /// batch (answered in its slot; the rest of the batch still runs).
    ///
    /// # Cancel safety
    /// Dropping the future abandons the calls (and unregisters their ids).
    pub async fn dispatch_payload(&self, payload: Value, ctx: &CallContext) -> Option<Value> {
        self.accept(Frame::from_value(payload), &Arc::new(ctx.clone()), None)
            .run()
            .await
            .map(super::Response::into_value)
    }

    /// Runs a batch's entries concurrently, each request admitted on its
    /// own (refused ones answered in their slot).
    pub(crate) async fn run_batch(
        &self,
        items: Vec<Value>,
        ctx: &Arc<CallContext>,
        admit: Option<&Admit>,
    ) -> Option<Replies> {
        if items.is_empty() {
            return Some(Replies::One(Reply::error(
                None,
                ErrorObject::invalid_request("Invalid JSON-RPC request: empty batch"),
            )));
        }
        let mut tasks = tokio::task::JoinSet::new();
        let mut replies: Vec<Option<Reply>> =
            std::iter::repeat_with(|| None).take(items.len()).collect();
        // Every entry is accepted in order (ids registered, lifecycle
        // methods answered) before any runs; only an entry that runs a
        // handler is admitted, one by one.
        for (slot, item) in items.into_iter().enumerate() {
            if is_request(&item) && item.get("method").and_then(Value::as_str) == Some("initialize")
            {
                replies[slot] = Some(Reply::error(
                    request_id_of(&item),
                    ErrorObject::invalid_request(
                        "Invalid JSON-RPC request: initialize cannot be batched",
                    ),
                ));
                continue;
            }
            let prepared = match self.pipeline().prepare_value(item, ctx) {
                Step::Done(reply) => {
                    replies[slot] = reply;
                    continue;
                }
                Step::Run(prepared) => prepared,
            };
            let permit = match admit.map(Admit::admit) {
                None => None,
                Some(Ok(permit)) => Some(permit),
                Some(Err(e)) => {
                    replies[slot] = Some(Reply::error(Some(prepared.scope.id.clone()), e));
                    continue;
                }
            };
            let server = self.clone();
            tasks.spawn(async move {
                let reply = server.pipeline().run_prepared(prepared).await;
                drop(permit);
                (slot, reply)
            });
        }
        while let Some(done) = tasks.join_next().await {
            match done {
                Ok((slot, reply)) => replies[slot] = reply,
                Err(join_error) => {
                    // Handler panics are caught inside the pipeline; this is
                    // a bug in it, reported without taking the batch down.
                    tracing::error!(error = %join_error, "a batch entry task failed");
                }
            }
        }
        let out: Vec<Reply> = replies.into_iter().flatten().collect();
        (!out.is_empty()).then_some(Replies::Batch(out))
    }
}
