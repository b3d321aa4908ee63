//! The public transport entry: a frame is *accepted* in arrival order
//! (classified, admitted, its id registered), then *run* — inline when it
//! finishes on its first poll, otherwise as a future the transport spawns
//! or awaits. Panics are caught here, once, for every transport.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use serde_json::Value;

use super::admission::{Admit, Permit};
use super::decode::{Frame, Incoming};
use super::encode::{Reply, Response};
use super::prepare::Step;
use super::McpServer;
use crate::context::CallContext;
use crate::panic::{catch_panic, poll_once};
use crate::protocol::{ErrorObject, RequestId};

/// An accepted frame; see [`McpServer::accept`].
#[must_use = "a call does nothing until it is started or run"]
pub struct Call {
    server: McpServer,
    state: State,
}

enum State {
    /// Answered (or nothing to answer) while it was accepted.
    Done(Option<Reply>),
    /// A registered request and what it holds while it runs.
    Run(super::run::Prepared, Option<Permit>),
    /// A batch: its entries are accepted and admitted when it runs.
    Batch(Vec<Value>, Arc<CallContext>, Option<Admit>),
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &self.state {
            State::Done(_) => "done",
            State::Run(..) => "run",
            State::Batch(..) => "batch",
        };
        f.debug_struct("Call").field("state", &state).finish()
    }
}

/// What [`Call::start`] found after the first poll.
#[derive(Debug)]
pub enum Started {
    /// The call finished (most do, on their first poll): its answer, or
    /// `None` when there is nothing to send.
    Done(Option<Response>),
    /// The call has to wait: spawn or await the rest.
    Pending(PendingCall),
}

/// A call before its first poll (see [`Call::into_pending`]).
#[derive(Debug)]
pub enum Unpolled {
    /// It runs a handler: poll it.
    Run(PendingCall),
    /// It needed none: its answer (`None`: nothing to send).
    Answered(Option<Response>),
}

/// The rest of a call that did not finish on its first poll. A `Send +
/// 'static` future: spawn it or await it. A panic outside the handler
/// (handler panics are already `-32603` results) answers the request with
/// `-32603` instead of taking the task down.
#[must_use = "a pending call does nothing unless polled"]
pub struct PendingCall {
    id: Option<RequestId>,
    work: Pin<Box<dyn Future<Output = Option<Response>> + Send>>,
}

impl std::fmt::Debug for PendingCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingCall").field("id", &self.id).finish()
    }
}

impl PendingCall {
    /// The request's id (`None` for a batch).
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// Polls the call once, here: finished, or the rest to spawn or await.
    pub async fn first_poll(mut self) -> Started {
        match poll_once(&mut self.work).await {
            Ok(Poll::Ready(reply)) => Started::Done(reply),
            Ok(Poll::Pending) => Started::Pending(self),
            Err(message) => Started::Done(Some(pipeline_panic(self.id, &message))),
        }
    }
}

impl Future for PendingCall {
    type Output = Option<Response>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Response>> {
        let this = &mut *self;
        let mut guarded = catch_panic(&mut this.work);
        match Pin::new(&mut guarded).poll(cx) {
            Poll::Ready(Ok(reply)) => Poll::Ready(reply),
            Poll::Ready(Err(message)) => {
                Poll::Ready(Some(pipeline_panic(this.id.take(), &message)))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The answer to a request whose pipeline (not its handler) panicked.
fn pipeline_panic(id: Option<RequestId>, message: &str) -> Response {
    tracing::error!(panic = %message, "a call panicked outside its handler");
    Reply::error(id, ErrorObject::internal("Internal error")).into()
}

impl McpServer {
    /// Accepts one frame for serving — phase one of the transport entry.
    ///
    /// Call it in arrival order: it classifies the frame, answers at once
    /// what needs no handler (invalid messages, notifications, responses,
    /// `initialize`, `ping`, `server/discover`), registers a request's id
    /// (so a `notifications/cancelled` accepted right after always finds
    /// it) and asks `admit` for a request that will run a handler — only
    /// those: a `ping` or a cancellation is never refused as busy. Then [`start`](Call::start) or
    /// [`run`](Call::run) the returned call (phase two).
    ///
    /// A custom transport over a Unix socket, one JSON message per line:
    ///
    /// ```no_run
    /// use std::sync::Arc;
    ///
    /// use mcp_core::{McpServer, transport::{CallContext, Frame, Session, Started}};
    /// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    ///
    /// async fn serve(server: McpServer, path: &str) -> std::io::Result<()> {
    ///     let listener = tokio::net::UnixListener::bind(path)?;
    ///     loop {
    ///         let (stream, _) = listener.accept().await?;
    ///         let server = server.clone();
    ///         tokio::spawn(async move {
    ///             let (read, mut write) = stream.into_split();
    ///             // One context for the connection, shared by its calls.
    ///             let ctx = Arc::new(CallContext::new().with_session(Session::new()));
    ///             let mut lines = BufReader::new(read).lines();
    ///             while let Ok(Some(line)) = lines.next_line().await {
    ///                 let frame = match Frame::parse(line.as_bytes()) {
    ///                     Ok(frame) => frame,
    ///                     Err(parse_error) => {
    ///                         let mut out = parse_error.to_string().into_bytes();
    ///                         out.push(b'\n');
    ///                         let _ = write.write_all(&out).await;
    ///                         continue;
    ///                     }
    ///                 };
    ///                 // Phase one in arrival order, phase two inline.
    ///                 let reply = match server.accept(frame, &ctx, None).start().await {
    ///                     Started::Done(reply) => reply,
    ///                     // A real transport spawns this and reads on.
    ///                     Started::Pending(rest) => rest.await,
    ///                 };
    ///                 if let Some(reply) = reply {
    ///                     let mut out = reply.to_vec();
    ///                     out.push(b'\n');
    ///                     let _ = write.write_all(&out).await;
    ///                 }
    ///             }
    ///         });
    ///     }
    /// }
    /// ```
    ///
    /// This is the only entry: the crate's stdio and HTTP transports serve
    /// every frame through it too.
    #[inline]
    pub fn accept(&self, frame: Frame, ctx: &Arc<CallContext>, admit: Option<&Admit>) -> Call {
        let state = match frame.0 {
            Incoming::Json(Value::Array(items)) => {
                State::Batch(items, Arc::clone(ctx), admit.cloned())
            }
            message => match self.pipeline().prepare(message, ctx) {
                Step::Done(reply) => State::Done(reply),
                // Only a request that will run a handler is admitted: what
                // is answered in place (`ping`, `initialize`, errors) and
                // notifications (cancellations) are never refused as busy.
                Step::Run(prepared) => match admit.map(Admit::admit).transpose() {
                    Ok(permit) => State::Run(prepared, permit),
                    Err(e) => State::Done(Some(refused(prepared, e))),
                },
            },
        };
        Call {
            server: self.clone(),
            state,
        }
    }
}

/// The reply refusing a prepared request that was not admitted.
fn refused(prepared: super::run::Prepared, e: ErrorObject) -> Reply {
    let id = prepared.scope.id.clone();
    // Dropping the prepared call unregisters its id.
    drop(prepared);
    Reply::error(Some(id), e)
}

impl Call {
    /// True when the call was answered while it was accepted (or needs no
    /// answer): there is no handler to run.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done(_))
    }

    /// Runs the call's first poll here and returns what it found: a
    /// finished call needs no task of its own.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes drops the call: its id is
    /// unregistered and no reply is sent.
    pub async fn start(self) -> Started {
        match self.into_pending() {
            Unpolled::Run(pending) => pending.first_poll().await,
            Unpolled::Answered(reply) => Started::Done(reply),
        }
    }

    /// The call as its unpolled future, or its answer when it needed no
    /// handler. With [`PendingCall::first_poll`] this is
    /// [`start`](Self::start) in two steps, so a transport's own future
    /// holds the small boxed call across the first poll, not this `Call`
    /// (or spawns it without a first poll).
    #[inline]
    pub fn into_pending(self) -> Unpolled {
        match self.state {
            State::Done(reply) => Unpolled::Answered(reply.map(Response::from)),
            state => Unpolled::Run(self.server.pending(state)),
        }
    }

    /// Runs the call to its end and returns its answer (`None` when there
    /// is nothing to send: a notification, a response, a cancelled call).
    ///
    /// # Cancel safety
    /// Dropping the future drops the call: its id is unregistered and no
    /// reply is sent.
    pub async fn run(self) -> Option<Response> {
        // Awaited in place: no box, no task (a panic outside the handler
        // reaches the caller, as with any future it awaits).
        match self.state {
            State::Done(reply) => reply.map(Response::from),
            State::Run(prepared, permit) => {
                // `run_prepared` written out: its future would hold the
                // prepared call a second time (a copy of a few hundred bytes).
                let outcome = self
                    .server
                    .pipeline()
                    .execute(&prepared.scope, prepared.params, prepared.held)
                    .await;
                let reply = self.server.pipeline().conclude(prepared.scope, outcome);
                drop(permit);
                reply.map(Response::from)
            }
            State::Batch(items, ctx, admit) => self
                .server
                .run_batch(items, &ctx, admit.as_ref())
                .await
                .map(Response),
        }
    }
}

impl McpServer {
    /// The future that runs an accepted call.
    fn pending(&self, state: State) -> PendingCall {
        match state {
            State::Done(reply) => PendingCall {
                id: None,
                work: Box::pin(std::future::ready(reply.map(Response::from))),
            },
            State::Run(prepared, permit) => self.pending_run(prepared, permit),
            State::Batch(items, ctx, admit) => {
                let server = self.clone();
                PendingCall {
                    id: None,
                    work: Box::pin(async move {
                        server
                            .run_batch(items, &ctx, admit.as_ref())
                            .await
                            .map(Response)
                    }),
                }
            }
        }
    }

    /// The future that runs a prepared, admitted request.
    fn pending_run(&self, prepared: super::run::Prepared, permit: Option<Permit>) -> PendingCall {
        let server = self.clone();
        PendingCall {
            id: Some(prepared.scope.id.clone()),
            // `run_prepared` written out: its future would hold the
            // prepared call a second time.
            work: Box::pin(async move {
                let outcome = server
                    .pipeline()
                    .execute(&prepared.scope, prepared.params, prepared.held)
                    .await;
                let reply = server.pipeline().conclude(prepared.scope, outcome);
                drop(permit);
                reply.map(Response::from)
            }),
        }
    }

    /// Runs one message (never split as a batch) to its reply.
    pub(crate) async fn reply_to(&self, message: Value, ctx: &CallContext) -> Option<Reply> {
        let pipeline = self.pipeline();
        match pipeline.prepare_value(message, &Arc::new(ctx.clone())) {
            Step::Done(reply) => reply,
            Step::Run(call) => pipeline.run_prepared(call).await,
        }
    }
}

#[allow(dead_code)]
fn _assert_send(server: &McpServer, ctx: &CallContext, frame: Frame) {
    fn is_send<T: Send>(_: T) {}
    is_send(server.accept(frame, &Arc::new(ctx.clone()), None).run());
    is_send(server.handle_message(Value::Null, ctx));
    is_send(server.dispatch_payload(Value::Null, ctx));
}
