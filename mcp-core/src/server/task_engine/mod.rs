//! The task engine: the tasks extension in the pipeline
//! (`io.modelcontextprotocol/tasks`, SEP-2663, 2026-07-28 requests only),
//! running calls as the tasks that [`crate::tasks`] records and stores:
//!
//! | file | what it holds |
//! |---|---|
//! | `engine.rs` | [`TaskEngine`]: the store, the limits, the tasks running here |
//! | `spawn.rs` | a `tools/call` run as a task: first poll, creation, the runner |
//! | `requester.rs` | the questions of a tool run as a task (`input_required`) |
//! | `methods.rs` | `tasks/get`, `tasks/update`, `tasks/cancel` |
//! | `wire.rs` | the JSON shapes (`CreateTaskResult`, `DetailedTask`) |
//! | `notify.rs` | `notifications/tasks` to the listens watching a task |
//!
//! A call becomes a task only when its tool declares task support and the
//! request declares the extension in its own client capabilities; every
//! other call runs as before (the check is one field read).

mod engine;
pub(crate) mod methods;
pub(crate) mod notify;
mod requester;
pub(crate) mod spawn;
mod wire;

pub(crate) use engine::{Resume, TaskEngine, TaskSpawner};

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

impl crate::McpServer {
    /// Runs a stored task here: the process a
    /// [`task_spawner`](crate::McpServerBuilder::task_spawner) started for
    /// it calls this with the task's id. The task's `tools/call` runs
    /// through the pipeline again (its `_meta` and earlier answers
    /// included) under the task's principal, with its questions, progress
    /// and cancellation going through the shared store; returns when the
    /// task is settled. A task already terminal is left as it is.
    ///
    /// # Errors
    /// `-32601` when the server does not offer tasks, `-32602` for an
    /// unknown task, `-32603` for a task that holds no request or a store
    /// that fails.
    ///
    /// # Cancel safety
    /// Dropping the future stops the tool; the task stays as stored (it
    /// expires with its TTL).
    pub async fn run_task(&self, task_id: &str) -> Result<(), ErrorObject> {
        let engine = self
            .inner
            .pipeline
            .extensions
            .tasks
            .as_ref()
            .ok_or_else(|| ErrorObject::method_not_found("tasks/get"))?;
        let record = engine
            .store
            .get(task_id)
            .await
            .map_err(|e| engine::store_error(&e))?
            .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown task: {task_id}")))?;
        if record.status.is_terminal() {
            return Ok(());
        }
        let request = record
            .request
            .clone()
            .ok_or_else(|| ErrorObject::internal("the task holds no request to run"))?;
        let message = serde_json::json!({
            "jsonrpc": "2.0",
            "id": "task",
            "method": "tools/call",
            "params": request,
        });
        let mut ctx =
            crate::transport::CallContext::new().with_extension(Resume(task_id.to_owned()));
        if let Some(owner) = &record.owner {
            ctx = ctx.with_principal(owner.as_str());
        }
        let reply = self.handle_message(message, &ctx).await;
        // An error before the tool ran (the request no longer passes):
        // the task fails with it.
        if let Some(error) = reply.as_ref().and_then(|r| r.get("error")) {
            let change = crate::storage::TaskChange::Fail(error.clone());
            engine
                .store
                .update(task_id, change)
                .await
                .map_err(|e| engine::store_error(&e))?;
        }
        Ok(())
    }
}
