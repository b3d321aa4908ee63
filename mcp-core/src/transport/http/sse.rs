//! Server-Sent Events framing and [`McpBody`], the transport's response body.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::time::{Instant, Sleep};

use super::halfclose::AnswerPhase;
use super::queue::{frame, Event, StreamRx};

/// Completes when a stream whose call was cancelled may end.
pub(crate) type Linger = Pin<Box<dyn Future<Output = ()> + Send>>;

/// An SSE comment line: ignored by clients, keeps proxies and dead-peer
/// detection honest on quiet streams.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// Something kept alive as long as a stream is (a disconnect guard, a
/// connection activity marker).
pub(crate) type Hold = Box<dyn Send + Sync>;

/// The response body of the MCP endpoint: a complete JSON document, nothing,
/// or an SSE stream fed by a running call or a session.
pub struct McpBody {
    kind: Kind,
}

enum Kind {
    Full(Option<Bytes>),
    Sse(Box<SseStream>),
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            Kind::Full(b) => f
                .debug_struct("McpBody")
                .field("len", &b.as_ref().map_or(0, Bytes::len))
                .finish(),
            Kind::Sse(_) => f.write_str("McpBody(event-stream)"),
        }
    }
}

impl McpBody {
    /// A body with these bytes.
    pub(crate) fn full(bytes: impl Into<Bytes>) -> Self {
        Self {
            kind: Kind::Full(Some(bytes.into())),
        }
    }

    /// An empty body.
    pub(crate) fn empty() -> Self {
        Self {
            kind: Kind::Full(None),
        }
    }

    /// An SSE stream that sends nothing but keep-alive comments until
    /// `linger` completes: the stream of a call the client cancelled before
    /// it had sent anything (see [`sse`](Self::sse)).
    pub(crate) fn lingering(keep_alive: Option<Duration>, linger: Linger, hold: Vec<Hold>) -> Self {
        let mut body = Self::sse(
            Vec::new(),
            StreamRx::empty(),
            keep_alive,
            Some(linger),
            hold,
        );
        if let Kind::Sse(stream) = &mut body.kind {
            stream.lingering = true;
        }
        body
    }

    /// An SSE stream: `first` frames, then events from `rx` until a `Done`
    /// or `Closed` event or until every sender is gone.
    ///
    /// A call the client cancelled gets no response, but its stream stays
    /// open until `linger` completes (the session ends, the server closes, a
    /// deadline) or the client goes away: some clients read a stream that
    /// ends without a response as a failure of the request they cancelled.
    pub(crate) fn sse(
        first: Vec<Bytes>,
        rx: StreamRx,
        keep_alive: Option<Duration>,
        linger: Option<Linger>,
        hold: Vec<Hold>,
    ) -> Self {
        Self {
            kind: Kind::Sse(Box::new(SseStream {
                queue: first.into(),
                rx,
                finished: false,
                lingering: false,
                linger,
                keep_alive: keep_alive.map(|every| KeepAlive {
                    every,
                    sleep: Box::pin(tokio::time::sleep(every)),
                }),
                phase: None,
                _hold: hold,
            })),
        }
    }
}

impl McpBody {
    /// True for an event stream.
    pub(crate) fn is_stream(&self) -> bool {
        matches!(self.kind, Kind::Sse(_))
    }

    /// Keeps `hold` alive as long as the stream is; false (and `hold`
    /// dropped) when this body is not a stream.
    pub(crate) fn hold_while_streaming(&mut self, hold: Hold) -> bool {
        match &mut self.kind {
            Kind::Sse(stream) => {
                stream._hold.push(hold);
                true
            }
            Kind::Full(_) => false,
        }
    }

    /// The connection's answer phase: when the client's FIN is held back
    /// during this stream, a keep-alive comment goes out at once so that a
    /// closed peer answers it with a reset (see `halfclose`).
    pub(crate) fn watch_phase(&mut self, phase: Arc<AnswerPhase>) {
        if let Kind::Sse(stream) = &mut self.kind {
            if stream.lingering {
                phase.set_lingering();
            }
            stream.phase = Some(phase);
        }
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().kind {
            Kind::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Kind::Sse(stream) => stream.poll_next(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.kind, Kind::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Kind::Full(None) => SizeHint::with_exact(0),
            Kind::Sse(_) => SizeHint::default(),
        }
    }
}

struct KeepAlive {
    every: Duration,
    sleep: Pin<Box<Sleep>>,
}

struct SseStream {
    queue: VecDeque<Bytes>,
    rx: StreamRx,
    finished: bool,
    lingering: bool,
    linger: Option<Linger>,
    keep_alive: Option<KeepAlive>,
    phase: Option<Arc<AnswerPhase>>,
    _hold: Vec<Hold>,
}

impl SseStream {
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            if self.rx.is_over() {
                // The client stopped reading and the stream's byte budget
                // ran out: it ends here, what was queued dropped with it.
                self.queue.clear();
                return Poll::Ready(None);
            }
            if self.phase.as_ref().is_some_and(|p| p.take_nudge()) {
                self.queue.push_back(Bytes::from_static(KEEP_ALIVE));
            }
            if let Some(bytes) = self.queue.pop_front() {
                if let Some(ka) = &mut self.keep_alive {
                    ka.sleep.as_mut().reset(Instant::now() + ka.every);
                }
                return Poll::Ready(Some(bytes));
            }
            if self.finished {
                return Poll::Ready(None);
            }
            if self.lingering {
                let done = self
                    .linger
                    .as_mut()
                    .is_none_or(|linger| linger.as_mut().poll(cx).is_ready());
                if done {
                    self.finished = true;
                    continue;
                }
            } else {
                match self.rx.poll_recv(cx) {
                    Poll::Ready(Some(Event::Message(bytes))) => {
                        self.queue.push_back(bytes);
                        continue;
                    }
                    Poll::Ready(Some(Event::Done(Some(reply)))) => {
                        // The response ends the stream; later messages of this
                        // call (there should be none) are dropped.
                        self.queue.push_back(frame(&reply));
                        self.finished = true;
                        self.rx.close();
                        continue;
                    }
                    Poll::Ready(Some(Event::Done(None))) => {
                        self.lingering = true;
                        if let Some(phase) = &self.phase {
                            // Owed nothing: the connection cap may reap it.
                            phase.set_lingering();
                        }
                        self.rx.close();
                        continue;
                    }
                    Poll::Ready(Some(Event::Closed(error))) => {
                        // The call gets its answer all the same: the error
                        // the JSON path answers 503, as the stream's last event.
                        self.queue.push_back(frame(&error));
                        self.finished = true;
                        self.rx.close();
                        continue;
                    }
                    Poll::Ready(None) => {
                        self.finished = true;
                        continue;
                    }
                    Poll::Pending => {}
                }
            }
            if let Some(ka) = &mut self.keep_alive {
                if ka.sleep.as_mut().poll(cx).is_ready() {
                    self.queue.push_back(Bytes::from_static(KEEP_ALIVE));
                    continue;
                }
            }
            return Poll::Pending;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use serde_json::json;

    #[test]
    fn frames_are_single_events() {
        let f = frame(&json!({"jsonrpc": "2.0", "method": "x", "params": {"s": "a\nb"}}));
        assert_eq!(
            &f[..],
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":{\"s\":\"a\\nb\"}}\n\n"
        );
    }

    #[tokio::test]
    async fn stream_ends_after_done() {
        let (tx, rx) = crate::transport::http::queue::channel(4, 1 << 20, None, None);
        let body = McpBody::sse(vec![frame(&json!(1))], rx, None, None, Vec::new());
        assert!(tx.message(&json!(2)).await);
        let frame = crate::transport::Frame::from_value(
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        );
        let server = crate::McpServer::builder()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let reply = server
            .accept(
                frame,
                &std::sync::Arc::new(crate::transport::CallContext::new()),
                None,
            )
            .run()
            .await;
        tx.finish(Event::Done(reply)).await;
        let _ = tx.message(&json!(4)).await;
        let bytes = body.collect().await.expect("infallible").to_bytes();
        assert_eq!(
            &bytes[..],
            &b"event: message\ndata: 1\n\nevent: message\ndata: 2\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"[..]
        );
    }
}
