//! What running a request produced, before it is encoded: typed, so no
//! control flow travels inside error codes. [`Outcome`] and [`Answer`] are
//! public: interceptors see and replace them.

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::protocol::{CallToolResult, ErrorObject};

/// A successful answer, in the form it is cheapest to write.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A result in JSON form (every method but `tools/call` and the
    /// listings served as serialized once, and a listing computed per
    /// caller).
    Json(Value),
    /// A `tools/call` result, still typed (`is_error: Some(true)` is a tool
    /// error the model sees).
    Tool(CallToolResult),
    /// `tools/list` served from the listing serialized at build time.
    ToolListing(ToolListing),
    /// `resources/list`, `resources/templates/list` or `prompts/list`
    /// served from the listing serialized once per catalog version.
    Listing(Listing),
}

/// The `tools` array of `tools/list` as serialized once at build time
/// (written to the client as it is).
#[derive(Debug, Clone)]
pub struct ToolListing(pub(crate) Arc<Box<RawValue>>);

impl ToolListing {
    /// The listed tools, as JSON (parsed from the serialized listing).
    pub fn to_json(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Array(Vec::new()))
    }
}

/// A listing's array as serialized once per catalog version (written to
/// the client as it is): the `resources` of `resources/list`, the
/// `resourceTemplates` of `resources/templates/list`, or the `prompts` of
/// `prompts/list`.
#[derive(Debug, Clone)]
pub struct Listing {
    pub(crate) key: &'static str,
    pub(crate) items: Arc<Box<RawValue>>,
    /// The 2026-07-28 cache hint it is sent with.
    pub(crate) cache: crate::protocol::CacheHint,
}

impl Listing {
    /// The result's key: `resources`, `resourceTemplates` or `prompts`.
    pub fn key(&self) -> &str {
        self.key
    }

    /// The listed items, as JSON (parsed from the serialized listing).
    pub fn to_json(&self) -> Value {
        serde_json::from_str(self.items.get()).unwrap_or(Value::Array(Vec::new()))
    }
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

/// The final outcome of one request: what the encode stage writes, and
/// what an [`Interceptor`](crate::intercept::Interceptor) sees and may
/// replace.
#[derive(Debug, Clone)]
pub enum Outcome {
    /// A result.
    Answer(Answer),
    /// An `input_required` result (2026-07-28): this round of a multi
    /// round-trip request is not the final one.
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
