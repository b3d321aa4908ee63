//! The error of decoding a frame, able to produce its JSON-RPC reply.

use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::protocol::{fail, ErrorObject};

/// A frame that could not be decoded: invalid JSON, invalid UTF-8, or
/// nesting deeper than the parser's limit. Carries the JSON-RPC error to
/// answer with, and the id to answer (`null` unless the envelope's own
/// `id` was readable). Serializes as that ready-to-send reply.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    id: Value,
    error: ErrorObject,
}

impl ParseError {
    pub(crate) fn new(id: Value, error: ErrorObject) -> Self {
        Self { id, error }
    }

    /// The id the reply answers: `null`, or the over-deep request's id.
    pub fn id(&self) -> &Value {
        &self.id
    }

    /// The JSON-RPC error object (`-32700`, or `-32600` for an over-deep
    /// request whose id was read).
    pub fn error(&self) -> &ErrorObject {
        &self.error
    }

    /// The ready-to-send JSON-RPC error response.
    pub fn reply(&self) -> Value {
        fail(self.id.clone(), &self.error)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.error.message)
    }
}

impl std::error::Error for ParseError {}

impl Serialize for ParseError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.reply().serialize(serializer)
    }
}
