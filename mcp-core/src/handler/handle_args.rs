//! The handle arguments of a tool ([`crate::state::Handle`]), found in
//! its input schema when the tool is defined, so that `tools/call` checks
//! them before the tool runs.

use serde_json::{Map, Value};

/// The schema keyword that marks a property as a state handle, with the
/// handle's kind and the tool that mints it.
pub const MARKER: &str = "x-mcp-handle";

/// A handle argument of a tool, found in its input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HandleArg {
    /// The argument's name.
    pub(crate) name: String,
    /// The kind of state.
    pub(crate) kind: String,
    /// The tool that mints it.
    pub(crate) minted_by: String,
}

/// The handle arguments of an input schema: its top-level properties
/// marked `x-mcp-handle` (what [`Handle`](crate::state::Handle)'s schema carries).
pub(crate) fn handle_args(schema: &Map<String, Value>) -> Vec<HandleArg> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Vec::new();
    };
    props
        .iter()
        .filter_map(|(name, prop)| {
            let marker = prop.get(MARKER)?;
            Some(HandleArg {
                name: name.clone(),
                kind: marker.get("kind")?.as_str()?.to_owned(),
                minted_by: marker
                    .get("mintedBy")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
        })
        .collect()
}
