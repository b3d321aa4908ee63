//! Half-closed clients: a POST followed by `shutdown(SHUT_WR)` gets its
//! answer, and a client that closed its socket still has its call cancelled.
//!
//! Both send the same FIN, so the read side alone cannot tell them apart;
//! only a write can (a closed socket answers data with a reset). hyper's
//! `half_close(true)` keeps the call running on FIN but then no longer
//! reads the socket, so a client that went away is noticed only when its
//! answer is written — its call is never cancelled. hyper's default
//! (`half_close(false)`) cancels on FIN, answering nobody who half-closed.
//!
//! [`ConnIo`] sits between hyper and the socket and keeps hyper's default.
//! When the FIN arrives while a request is being answered (from when hyper
//! hands it to the service until its response is complete:
//! [`AnswerPhase`]), it does not pass the end of input on; it
//! writes one interim response, `HTTP/1.1 102 Processing` (HTTP/1.1
//! clients must accept unexpected 1xx responses; RFC 9110 §15.2), and
//! watches the socket for the reset that a closed peer answers it with
//! (`SO_ERROR`, or the socket no longer connected), checking after 5 ms and
//! then at doubling intervals up to 1 s. A reset is passed to hyper as an
//! error: the connection ends and the call is cancelled, as before. With
//! no reset, the call runs on and its answer is written; then the end of
//! input is passed on and the connection closes.
//!
//! The interim response is written only while the service has not
//! answered and hyper has flushed all it wrote, never inside a response (an
//! interim response may precede the final one at any point after the
//! request head). A client that half-closes before sending all of its body
//! is answered 408 once [`HttpOptions::body_read_timeout`](super::HttpOptions::body_read_timeout)
//! passes (its end of input is held back like any other). While an event-stream
//! answer is streaming the FIN is held back too, and the probe is an SSE
//! keep-alive comment the stream sends at once (`: keep-alive`, ignored by
//! clients), watched for a reset the same way. HTTP/1.0 requests never get
//! the interim response (their FIN is passed on at once).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

/// The interim response that tells a half-closed client from a gone one.
const PROBE: &[u8] = b"HTTP/1.1 102 Processing\r\n\r\n";
/// First reset check after the probe; the interval then doubles.
const FIRST_CHECK: Duration = Duration::from_millis(5);
/// Longest interval between reset checks.
const MAX_CHECK: Duration = Duration::from_secs(1);

const IDLE: u8 = 0;
/// hyper handed a request to the service, which has not answered yet.
const HANDLING: u8 = 1;
/// The answer is an event stream, still open.
const STREAMING: u8 = 2;

/// Where the connection's current request is, for [`ConnIo`].
#[derive(Default)]
pub(crate) struct AnswerPhase {
    state: AtomicU8,
    /// [`ConnIo`] holds back the peer's end of input.
    held: AtomicBool,
    /// hyper's read, to wake once the answer is done.
    waker: Mutex<Option<Waker>>,
    /// The streaming answer should send a keep-alive comment now.
    nudge: AtomicBool,
    /// The streaming answer is a cancelled call's, owed nothing (it only
    /// lingers, see `HttpOptions::cancelled_linger`).
    lingering: AtomicBool,
    /// The last write to the socket found its buffer full (see `lifetime`:
    /// a response still going out to a slow reader is not an idle
    /// connection).
    write_blocked: AtomicBool,
}

impl AnswerPhase {
    /// hyper handed a request (HTTP/1.1) to the service: a FIN from now
    /// on is held back.
    pub(crate) fn dispatched(&self) {
        self.state.store(HANDLING, Ordering::Release);
    }

    /// The handler answered with a plain response (no-op unless handling).
    pub(crate) fn answered(&self) {
        if self
            .state
            .compare_exchange(HANDLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.release();
        }
    }

    /// The handler answered with an event stream; [`stream_ended`](Self::stream_ended) follows.
    pub(crate) fn streaming(&self) {
        let _ =
            self.state
                .compare_exchange(HANDLING, STREAMING, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The event-stream answer is a cancelled call's, lingering.
    pub(crate) fn set_lingering(&self) {
        self.lingering.store(true, Ordering::Release);
    }

    /// True while the answer is a lingering stream (see `conns`).
    pub(crate) fn is_lingering(&self) -> bool {
        self.lingering.load(Ordering::Acquire)
    }

    /// The event-stream answer ended.
    pub(crate) fn stream_ended(&self) {
        self.lingering.store(false, Ordering::Release);
        if self
            .state
            .compare_exchange(STREAMING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.release();
        }
    }

    /// Wakes hyper's read if an end of input is held back: it is due now.
    fn release(&self) {
        if self.held.load(Ordering::Acquire) {
            let waker = self
                .waker
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            if let Some(waker) = waker {
                waker.wake();
            }
        }
    }

    /// True once per nudge: the event stream sends a comment now.
    pub(crate) fn take_nudge(&self) -> bool {
        self.nudge.load(Ordering::Relaxed) && self.nudge.swap(false, Ordering::AcqRel)
    }

    fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    /// True while hyper waits for the socket to take more of what it writes.
    pub(crate) fn write_blocked(&self) -> bool {
        self.write_blocked.load(Ordering::Relaxed)
    }

    fn wrote(&self, done: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        self.write_blocked
            .store(done.is_pending(), Ordering::Relaxed);
        done
    }
}

/// Ends the streaming phase when an event-stream answer is dropped.
pub(crate) struct StreamPhase(pub(crate) std::sync::Arc<AnswerPhase>);

impl Drop for StreamPhase {
    fn drop(&mut self) {
        self.0.stream_ended();
    }
}

/// Ends the handling phase when the handler is done (or dropped).
pub(crate) struct Handling<'a>(pub(crate) &'a AnswerPhase);

impl Drop for Handling<'_> {
    fn drop(&mut self) {
        self.0.answered();
    }
}

/// The socket under hyper: see the [module docs](self).
pub(crate) struct ConnIo {
    stream: TcpStream,
    phase: std::sync::Arc<AnswerPhase>,
    /// The peer's FIN was read and is held back.
    eof: bool,
    /// Bytes of [`PROBE`] written.
    probed: usize,
    /// Everything hyper wrote was flushed (no response is half written).
    quiet: bool,
    /// The streaming answer was asked for a keep-alive comment.
    nudged: bool,
    check: Option<Pin<Box<Sleep>>>,
    interval: Duration,
}

impl ConnIo {
    pub(crate) fn new(stream: TcpStream, phase: std::sync::Arc<AnswerPhase>) -> Self {
        Self {
            stream,
            phase,
            eof: false,
            probed: 0,
            quiet: true,
            nudged: false,
            check: None,
            interval: FIRST_CHECK,
        }
    }

    /// hyper reads after the held-back FIN.
    fn poll_held(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let state = self.phase.state();
        if state == IDLE {
            // Answered: the end of input is passed on now.
            return Poll::Ready(Ok(()));
        }
        *self
            .phase
            .waker
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(cx.waker().clone());
        if state == HANDLING && self.quiet && self.probed < PROBE.len() {
            if let Poll::Ready(Err(e)) = self.poll_probe(cx) {
                return Poll::Ready(Err(e));
            }
        }
        if state == STREAMING && !self.nudged {
            // The stream's own next write is the probe: have it send a
            // keep-alive comment now (hyper polls the body on this wake).
            self.nudged = true;
            self.phase.nudge.store(true, Ordering::Release);
            cx.waker().wake_by_ref();
        }
        if self.probed == 0 && !self.nudged {
            return Poll::Pending;
        }
        loop {
            if peer_gone(&self.stream) {
                return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
            }
            let interval = self.interval;
            let check = self
                .check
                .get_or_insert_with(|| Box::pin(tokio::time::sleep(interval)));
            if check.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            self.interval = (self.interval * 2).min(MAX_CHECK);
            check.as_mut().reset(Instant::now() + self.interval);
        }
    }

    /// Writes (the rest of) the probe.
    fn poll_probe(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.probed < PROBE.len() {
            let n = std::task::ready!(
                Pin::new(&mut self.stream).poll_write(cx, &PROBE[self.probed..])
            )?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.probed += n;
        }
        Poll::Ready(Ok(()))
    }
}

/// True once the socket was reset (the peer closed it and got our data).
fn peer_gone(stream: &TcpStream) -> bool {
    !matches!(stream.take_error(), Ok(None)) || stream.peer_addr().is_err()
}

impl AsyncRead for ConnIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.eof {
            let before = buf.filled().len();
            std::task::ready!(Pin::new(&mut this.stream).poll_read(cx, buf))?;
            if buf.filled().len() > before || buf.remaining() == 0 || this.phase.state() == IDLE {
                return Poll::Ready(Ok(()));
            }
            this.eof = true;
            this.phase.held.store(true, Ordering::Release);
        }
        this.poll_held(cx)
    }
}

impl AsyncWrite for ConnIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.probed > 0 {
            std::task::ready!(this.poll_probe(cx))?;
        }
        this.quiet = false;
        this.phase
            .wrote(Pin::new(&mut this.stream).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.probed > 0 {
            std::task::ready!(this.poll_probe(cx))?;
        }
        this.quiet = false;
        this.phase
            .wrote(Pin::new(&mut this.stream).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(Pin::new(&mut this.stream).poll_flush(cx))?;
        this.quiet = true;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
