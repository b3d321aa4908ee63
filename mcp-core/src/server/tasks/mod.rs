//! The tasks extension in the pipeline (`io.modelcontextprotocol/tasks`,
//! SEP-2663, 2026-07-28 requests only):
//!
//! | file | what it holds |
//! |---|---|
//! | `engine.rs` | [`TaskEngine`]: the store, the limits, the tasks running here |
//! | `spawn.rs` | a `tools/call` run as a task: first poll, creation, the runner |
//! | `requester.rs` | the questions of a tool run as a task (`input_required`) |
//! | `methods.rs` | `tasks/get`, `tasks/update`, `tasks/cancel` |
//! | `wire.rs` | the JSON shapes (`CreateTaskResult`, `DetailedTask`) |
//!
//! A call becomes a task only when its tool declares task support and the
//! request declares the extension in its own client capabilities; every
//! other call runs as before (the check is one field read).

mod engine;
pub(crate) mod methods;
mod requester;
pub(crate) mod spawn;
mod wire;

pub(crate) use engine::TaskEngine;

use crate::protocol::{Era, ErrorObject};
use crate::tasks::TASKS_EXTENSION;

/// True when a 2026-07-28 request declared the tasks extension in its
/// per-request client capabilities.
pub(crate) fn declared(era: &Era) -> bool {
    match era {
        Era::Modern(meta) => meta
            .client
            .capabilities
            .extra
            .get("extensions")
            .and_then(|e| e.get(TASKS_EXTENSION))
            .is_some(),
        Era::Legacy => false,
    }
}

/// `-32021` naming the tasks extension as the missing capability.
pub(crate) fn missing_extension() -> ErrorObject {
    let mut extensions = serde_json::Map::new();
    extensions.insert(TASKS_EXTENSION.into(), serde_json::json!({}));
    crate::protocol::meta::missing_capability(serde_json::json!({ "extensions": extensions }))
}
