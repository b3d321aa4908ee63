//! Turning a panic inside a handler future into an error value.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Polls `future`, converting a panic during any poll into `Err(message)`.
///
/// The future must be `Unpin`; handler futures are boxed, so they are.
pub(crate) fn catch_panic<F: Future + Unpin>(future: F) -> CatchPanic<F> {
    CatchPanic { future }
}

/// Future returned by [`catch_panic`].
pub(crate) struct CatchPanic<F> {
    future: F,
}

impl<F: Future + Unpin> Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let future = &mut self.get_mut().future;
        match catch_unwind(AssertUnwindSafe(|| Pin::new(future).poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

/// Calls a handler function (which may run user code before it returns
/// its future: parsing arguments, a synchronous prelude) and boxes the
/// future it returns, mapped by `then`. A panic during the call is caught
/// here and raised again when the boxed future is first polled, so it
/// reaches [`catch_panic`] like a panic during any poll.
///
/// The function is called here rather than inside the boxed future: that
/// future then holds only what the handler's own future holds, not the
/// function's arguments (the invoke context) a second time.
pub(crate) fn call_boxed<Fut, T>(
    call: impl FnOnce() -> Fut,
    then: impl FnOnce(Fut) -> crate::handler::BoxFuture<T>,
) -> crate::handler::BoxFuture<T>
where
    T: 'static,
{
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(future) => then(future),
        Err(payload) => {
            let mut payload = Some(payload);
            Box::pin(std::future::poll_fn(move |_| match payload.take() {
                Some(payload) => std::panic::resume_unwind(payload),
                None => Poll::Pending,
            }))
        }
    }
}

/// The text of a panic payload (`&str` or `String`), or a generic message.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "handler panicked".to_owned()
    }
}

/// Polls `future` once, here, catching a panic during that poll: `Ok(Ready)`
/// when it finished, `Ok(Pending)` when it must be run further (spawned or
/// awaited), `Err` with the panic's message. The one place where a
/// transport's "answer in place when it finishes at once" is decided.
pub(crate) async fn poll_once<F: Future + Unpin>(
    future: &mut F,
) -> Result<Poll<F::Output>, String> {
    std::future::poll_fn(|cx| {
        Poll::Ready(
            catch_unwind(AssertUnwindSafe(|| Pin::new(&mut *future).poll(cx)))
                .map_err(|payload| panic_message(payload.as_ref())),
        )
    })
    .await
}

/// The JSON-RPC error a handler's panic is answered with: `-32603` with a
/// generic message and an error id. The panic's own message may hold
/// internals, so it goes only to the server's log (a `tracing` error event
/// carrying the same id), never to the client.
pub(crate) fn panic_error(message: String) -> crate::protocol::ErrorObject {
    let id = error_id();
    tracing::error!(error_id = %id, panic = %message, "a handler panicked");
    crate::protocol::ErrorObject::internal(format!("Internal error (error id {id})"))
        .with_data(serde_json::json!({ "errorId": id }))
}

/// A short random id that ties a client's error to the server's log line.
pub(crate) fn error_id() -> String {
    use std::fmt::Write as _;
    let bytes: [u8; 8] = crate::random::bytes();
    bytes.iter().fold(String::with_capacity(16), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}
