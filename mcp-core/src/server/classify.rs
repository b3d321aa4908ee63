//! Stage 2, classify: is a message a request, a notification or a
//! response, and which era is a request served in.

use serde_json::{Map, Value};

use super::decode::{Incoming, RequestParts};
use super::encode::Reply;
use crate::protocol::jsonrpc::classify as kind_of;
use crate::protocol::meta::modern_claim;
use crate::protocol::{Era, ErrorObject, MessageKind, RequestId};

/// One message, sorted.
pub(crate) enum Kind {
    /// A request, taken apart (its era not read yet).
    Request(RequestParts),
    /// A notification (`notifications/cancelled`, …).
    Notification(Value),
    /// A response to a server→client request.
    Response(Value, Option<RequestId>),
    /// Not a valid JSON-RPC message: answered at once.
    Invalid(Reply),
}

/// Sorts one decoded message (never a batch: batches are split first).
#[inline]
pub(crate) fn classify(message: Incoming) -> Kind {
    let message = match message {
        Incoming::Request(parts) => return Kind::Request(parts),
        Incoming::Json(message) => message,
    };
    let id = match kind_of(&message) {
        MessageKind::Invalid { id, reason } => {
            return Kind::Invalid(Reply::error(
                RequestId::from_value(&id),
                ErrorObject::invalid_request(reason),
            ))
        }
        MessageKind::Response { id } => {
            return Kind::Response(message, id);
        }
        MessageKind::Notification { .. } => return Kind::Notification(message),
        MessageKind::Request { id, .. } => id,
    };
    match take_method_and_params(message) {
        Ok((method, params)) => Kind::Request(RequestParts {
            id,
            method: super::decode::method_name(method.into()),
            params,
            claim: None,
            held: Default::default(),
        }),
        Err(e) => Kind::Invalid(Reply::error(Some(id), e)),
    }
}

/// The era a request claims: legacy without a modern protocol version in
/// `_meta`; otherwise the validated metadata (read while decoding, or now
/// from the params of a message handed over as JSON).
///
/// # Errors
/// `-32602` for malformed metadata, `-32022` for an unsupported version.
#[inline]
pub(crate) fn era_of(parts: &mut RequestParts) -> Result<Era, ErrorObject> {
    if let Some(claim) = parts.claim.take() {
        return claim.meta.map(Era::Modern);
    }
    match modern_claim(&parts.params) {
        None => Ok(Era::Legacy),
        Some(Ok(meta)) => Ok(Era::Modern(meta)),
        Some(Err(e)) => Err(e),
    }
}

/// Moves a request's method name and params out of it (no copies).
fn take_method_and_params(message: Value) -> Result<(String, Map<String, Value>), ErrorObject> {
    let Value::Object(mut obj) = message else {
        return Ok((String::new(), Map::new()));
    };
    let method = match obj.remove("method") {
        Some(Value::String(method)) => method,
        _ => String::new(),
    };
    match obj.remove("params") {
        None | Some(Value::Null) => Ok((method, Map::new())),
        Some(Value::Object(params)) => Ok((method, params)),
        Some(_) => Err(ErrorObject::invalid_params("`params` must be an object")),
    }
}
