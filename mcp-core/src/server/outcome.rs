//! What running a request produced, before it is encoded: typed, so no
//! control flow travels inside error codes.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::{CallToolResult, ErrorObject};

/// A successful answer, in the form it is cheapest to write.
pub(crate) enum Answer {
    /// A result in JSON form.
    Json(Value),
    /// A tool's result, still typed.
    Tool(CallToolResult),
    /// `tools/list` from the listing serialized at build time.
    ToolListing(Arc<Box<RawValue>>),
}

/// Why a method ended without an [`Answer`].
#[derive(Debug)]
pub(crate) enum Stop {
    /// Answer with this JSON-RPC error.
    Error(ErrorObject),
    /// A 2026-07-28 round trip: answer with this `input_required` result.
    InputRequired(Map<String, Value>),
    /// Send nothing (a `subscriptions/listen` that ended with its stream).
    NoReply,
}

impl From<ErrorObject> for Stop {
    fn from(error: ErrorObject) -> Self {
        Self::Error(error)
    }
}

/// The final outcome of one request: what the encode stage writes.
pub(crate) enum Outcome {
    /// A result.
    Answer(Answer),
    /// An `input_required` result (2026-07-28).
    InputRequired(Map<String, Value>),
    /// A JSON-RPC error, exactly as the handler or pipeline gave it.
    Error(ErrorObject),
    /// No reply at all: the request was cancelled, or ended without one.
    NoReply,
}

impl From<Result<Answer, Stop>> for Outcome {
    fn from(result: Result<Answer, Stop>) -> Self {
        match result {
            Ok(answer) => Self::Answer(answer),
            Err(Stop::Error(e)) => Self::Error(e),
            Err(Stop::InputRequired(result)) => Self::InputRequired(result),
            Err(Stop::NoReply) => Self::NoReply,
        }
    }
}
