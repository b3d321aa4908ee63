//! Reading a POST body within its limits.

// A refused request is answered with its ready `Response`; it is built once
// per request, so its size in a `Result` does not matter.
#![allow(clippy::result_large_err)]

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::{Buf, Bytes};
use http_body::Body;
use http_body_util::BodyExt;
use hyper::header::{HeaderMap, CONTENT_LENGTH};
use hyper::{Response, StatusCode};

use super::names::header_str;
use super::options::HttpOptions;
use super::respond::{close_after, error_response};
use super::sse::McpBody;
use crate::protocol::ErrorCode;

/// Reads the body up to the limit: a declared length over it is refused
/// before reading, a streamed body is cut off at the limit, a body slower
/// than the read timeout is abandoned. The connection closes after either.
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
    let declared = header_str(headers, CONTENT_LENGTH).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > max as u64) {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    let mut buf: Vec<u8> = Vec::with_capacity(declared.map_or(0, |n| n as usize).min(max));
    // Armed at the first frame that is not already buffered: a small body
    // usually arrives with its head, and then no timer is built at all.
    let mut deadline = None;
    loop {
        // (The body's own error type need not be `Send`: it is dropped here.)
        let buffered = {
            let mut next = body.frame();
            std::future::poll_fn(|cx| {
                Poll::Ready(
                    Pin::new(&mut next)
                        .poll(cx)
                        .map(|frame| frame.map(|r| r.map_err(drop))),
                )
            })
            .await
        };
        let next = match buffered {
            Poll::Ready(frame) => Ok(frame),
            Poll::Pending => {
                let deadline = *deadline
                    .get_or_insert_with(|| tokio::time::Instant::now() + opts.body_read_timeout);
                tokio::time::timeout_at(deadline, body.frame())
                    .await
                    .map(|frame| frame.map(|r| r.map_err(drop)))
            }
        };
        match next {
            Err(_) => {
                let mut r = error_response(
                    StatusCode::REQUEST_TIMEOUT,
                    ErrorCode::INVALID_REQUEST,
                    "Request Timeout: the body did not arrive in time",
                );
                close_after(&mut r);
                return Err(r);
            }
            Ok(None) => break,
            Ok(Some(Err(_))) => {
                let mut r = error_response(
                    StatusCode::BAD_REQUEST,
                    ErrorCode::INVALID_REQUEST,
                    "Bad Request: the body could not be read",
                );
                close_after(&mut r);
                return Err(r);
            }
            Ok(Some(Ok(frame))) => {
                if let Ok(mut data) = frame.into_data() {
                    if buf.len() + data.remaining() > max {
                        return Err(too_large());
                    }
                    while data.has_remaining() {
                        let chunk = data.chunk();
                        let n = chunk.len();
                        buf.extend_from_slice(chunk);
                        data.advance(n);
                    }
                }
            }
        }
    }
    Ok(Bytes::from(buf))
}
