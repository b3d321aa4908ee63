//! Reading a POST body within its limits.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use bytes::{Buf, Bytes};
use http_body::Body;
use http_body_util::BodyExt;
use hyper::header::{HeaderMap, CONTENT_LENGTH, EXPECT};
use hyper::{Response, StatusCode};

use super::names::header_str;
use super::options::HttpOptions;
use super::respond::{close_after, error_response};
use super::sse::McpBody;
use crate::protocol::ErrorCode;

/// How much of a refused body is still read and discarded, as a multiple of
/// [`HttpOptions::max_body_bytes`] (the whole body counts): see [`read_body`].
pub(super) const LINGER_BYTES_PER_LIMIT: usize = 4;

/// How long a refused body is still read and discarded at most: see [`read_body`].
pub(super) const LINGER_TIME: Duration = Duration::from_secs(2);

/// Reads the body up to the limit. A body over the limit is refused 413
/// and never buffered; a body slower than the read timeout is abandoned
/// (408). The connection closes after either.
///
/// Before a 413 the rest of the body is read and thrown away, as nginx's
/// lingering close does, up to [`LINGER_BYTES_PER_LIMIT`] times the limit
/// and for at most [`LINGER_TIME`]: a server that answers and closes while
/// the client is still sending makes the kernel reset the connection, and a
/// client that only reads once it has sent everything (Node's `fetch`, so
/// the official TypeScript SDK) then sees `EPIPE`/`ECONNRESET` instead of
/// the 413. A declared length past that budget, or a client waiting for
/// `100 Continue`, is answered at once without reading.
pub(super) async fn read_body<B>(
    body: B,
    headers: &HeaderMap,
    opts: &HttpOptions,
) -> Result<Bytes, Response<McpBody>>
where
    B: Body + Send + 'static,
{
    let max = opts.max_body_bytes;
    let too_large = || {
        let mut r = error_response(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::INVALID_REQUEST,
            &format!("Request body exceeds {max} bytes"),
        );
        close_after(&mut r);
        r
    };
    let linger_budget = max.saturating_mul(LINGER_BYTES_PER_LIMIT) as u64;
    let declared = header_str(headers, CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
    let mut body = std::pin::pin!(body);
    if declared.is_some_and(|n| n > max as u64) {
        // `100 Continue` goes out only once the body is read: a client
        // that waits for it has sent nothing, and is simply answered.
        let waits = header_str(headers, EXPECT).is_some_and(|v| v.contains("100-continue"));
        if !waits && declared.is_some_and(|n| n <= linger_budget) {
            Box::pin(discard(body.as_mut(), 0, linger_budget)).await;
        }
        return Err(too_large());
    }
    // A body that arrives as one frame (the usual small POST) is kept as
    // that frame's bytes, with no copy; only a body in several frames is
    // gathered into a buffer of its own.
    let mut buf = Gathered::new(declared.map_or(0, |n| n as usize).min(max));
    // What has arrived is read in place; only a body still on its way
    // waits, against its deadline, in a box of its own (a timer and its
    // states would otherwise weigh on the future of every POST).
    let end =
        match std::future::poll_fn(|cx| Poll::Ready(take_ready(body.as_mut(), cx, &mut buf, max)))
            .await
        {
            Poll::Ready(end) => end,
            Poll::Pending => {
                let deadline = tokio::time::Instant::now() + opts.body_read_timeout;
                let rest = std::future::poll_fn(|cx| take_ready(body.as_mut(), cx, &mut buf, max));
                Box::pin(tokio::time::timeout_at(deadline, rest))
                    .await
                    .unwrap_or(Err(Unread::Late))
            }
        };
    let refusal = |status, message: &str| {
        let mut r = error_response(status, ErrorCode::INVALID_REQUEST, message);
        close_after(&mut r);
        Err(r)
    };
    match end {
        Ok(()) => Ok(buf.into_bytes()),
        Err(Unread::TooLarge(seen)) => {
            drop(buf);
            Box::pin(discard(body.as_mut(), seen, linger_budget)).await;
            Err(too_large())
        }
        Err(Unread::Broken) => refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: the body could not be read",
        ),
        Err(Unread::Late) => refusal(
            StatusCode::REQUEST_TIMEOUT,
            "Request Timeout: the body did not arrive in time",
        ),
    }
}

/// Why a body was not read whole.
enum Unread {
    /// Past the limit after this many bytes.
    TooLarge(u64),
    /// The body failed.
    Broken,
    /// The read timeout passed.
    Late,
}

/// A body's bytes as they arrive: the first frame as it came, then (from a
/// second frame on) a buffer of them all.
struct Gathered {
    /// The only frame so far, unless `more` holds the bytes.
    first: Option<Bytes>,
    /// Every frame's bytes, once there was more than one.
    more: Vec<u8>,
    /// The declared length (within the limit): the buffer's first size.
    expected: usize,
}

impl Gathered {
    fn new(expected: usize) -> Self {
        Self {
            first: None,
            more: Vec::new(),
            expected,
        }
    }

    fn len(&self) -> usize {
        self.first.as_ref().map_or(self.more.len(), Bytes::len)
    }

    fn push(&mut self, mut data: impl Buf) {
        if self.first.is_none() && self.more.is_empty() {
            // `Bytes` (hyper's frames) hands itself over without a copy.
            self.first = Some(data.copy_to_bytes(data.remaining()));
            return;
        }
        if let Some(first) = self.first.take() {
            self.more = Vec::with_capacity(self.expected.max(first.len() + data.remaining()));
            self.more.extend_from_slice(&first);
        }
        while data.has_remaining() {
            let chunk = data.chunk();
            let n = chunk.len();
            self.more.extend_from_slice(chunk);
            data.advance(n);
        }
    }

    fn into_bytes(self) -> Bytes {
        self.first.unwrap_or_else(|| Bytes::from(self.more))
    }
}

/// Appends the frames already there to `buf`: `Ready` once the body ended
/// (or went past `max`, or failed), `Pending` while more is on its way.
/// (The body's own error type need not be `Send`: it is dropped here.)
fn take_ready<B: Body>(
    mut body: Pin<&mut B>,
    cx: &mut std::task::Context<'_>,
    buf: &mut Gathered,
    max: usize,
) -> Poll<Result<(), Unread>> {
    loop {
        let frame = match body.as_mut().poll_frame(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => return Poll::Ready(Ok(())),
            Poll::Ready(Some(Err(_))) => return Poll::Ready(Err(Unread::Broken)),
            Poll::Ready(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.remaining() > max {
                let seen = (buf.len() + data.remaining()) as u64;
                return Poll::Ready(Err(Unread::TooLarge(seen)));
            }
            buf.push(data);
        }
    }
}

/// Reads and drops the rest of a refused body until it ends, fails, or
/// `budget` bytes of it (counting the `seen` ones) or [`LINGER_TIME`] have
/// passed: the client has then sent everything and reads the answer.
async fn discard<B: Body>(mut body: Pin<&mut B>, mut seen: u64, budget: u64) {
    let deadline = tokio::time::Instant::now() + LINGER_TIME;
    while seen <= budget {
        let next = tokio::time::timeout_at(deadline, body.frame())
            .await
            .map(|frame| frame.map(|r| r.map_err(drop)));
        match next {
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    seen += data.remaining() as u64;
                }
            }
            // The end, a broken body, or out of time.
            Ok(None | Some(Err(()))) | Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_frame_is_kept_as_it_came_and_more_are_gathered() {
        let frame = Bytes::from_static(b"{\"jsonrpc\":\"2.0\"}");
        let mut one = Gathered::new(frame.len());
        one.push(frame.clone());
        assert_eq!(one.len(), frame.len());
        let kept = one.into_bytes();
        assert_eq!(kept.as_ptr(), frame.as_ptr(), "no copy of a single frame");

        let mut three = Gathered::new(0);
        for part in [&b"{\"a\":"[..], b"", b"1}"] {
            three.push(Bytes::copy_from_slice(part));
        }
        assert_eq!(three.len(), 7);
        assert_eq!(&three.into_bytes()[..], b"{\"a\":1}");
        assert!(Gathered::new(0).into_bytes().is_empty());
    }
}
