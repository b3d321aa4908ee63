//! Stage 4, register: a request's id enters its session's in-flight table
//! (so a `notifications/cancelled` read right after it finds it); responses
//! and notifications are routed to what waits for them.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::decode::RequestParts;
use super::request_facts::RequestFacts;
use crate::cancel::CancelToken;
use crate::context::CallContext;
use crate::protocol::{Era, ErrorObject, RequestId};
use crate::session::Session;

/// Registers a request's id in `session`.
///
/// # Errors
/// `-32600` when the same id is already in flight there.
#[inline]
pub(crate) fn register(
    parts: RequestParts,
    era: Era,
    ctx: &Arc<CallContext>,
    session: Session,
) -> Result<(RequestFacts, Map<String, Value>), (RequestId, ErrorObject)> {
    let RequestParts {
        id, method, params, ..
    } = parts;
    let Some(guard) = session.begin(&id, CancelToken::new()) else {
        let error = ErrorObject::invalid_request(format!("Request id {id} is already in flight"));
        return Err((id, error));
    };
    let facts = RequestFacts {
        id,
        method,
        era,
        session,
        ctx: Arc::clone(ctx),
        guard,
    };
    Ok((facts, params))
}

/// Hands a client's response to the server→client request waiting for it
/// (a response nobody waits for is ignored).
pub(crate) fn on_response(message: Value, id: Option<&RequestId>, session: &Session) {
    let Some(id) = id else { return };
    let Value::Object(mut obj) = message else {
        return;
    };
    let reply = match obj.remove("error") {
        Some(err) => Err(
            serde_json::from_value::<ErrorObject>(err).unwrap_or_else(|_| {
                ErrorObject::internal("the client answered with a malformed error")
            }),
        ),
        None => Ok(obj.remove("result").unwrap_or(Value::Null)),
    };
    session.resolve(id, reply);
}

/// Acts on a notification: `notifications/cancelled` cancels the request it
/// names. Anything else (`notifications/initialized`, …) is accepted as is;
/// a request method sent without an id is never executed.
pub(crate) fn on_notification(message: &Value, session: &Session) {
    if message.get("method").and_then(Value::as_str) == Some("notifications/cancelled") {
        if let Some(id) = message
            .pointer("/params/requestId")
            .and_then(RequestId::from_value)
        {
            session.cancel(&id);
        }
    }
}
