//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the
//! 2026-07-28 revision: the data a task is made of and where it is kept.
//!
//! A `tools/call` of a tool that supports tasks, from a request that
//! declares the extension in its per-request client capabilities
//! (`_meta["io.modelcontextprotocol/clientCapabilities"].extensions`), may
//! be answered with a task handle (`resultType: "task"`) instead of the
//! tool's result. The client then polls `tasks/get`, answers the task's
//! questions with `tasks/update` and stops it with `tasks/cancel`.
//!
//! - [`TaskSupport`]: what a tool declares (`#[mcp_tool(task = "optional")]`
//!   or [`McpToolDef::with_task_support`](crate::McpToolDef::with_task_support)).
//! - [`TaskRecord`]: one task as its store keeps it.
//! - [`TaskStore`](crate::storage::TaskStore) (in [`crate::storage`]):
//!   where tasks live, keyed by task id, with TTL expiry;
//!   [`InMemoryTaskStore`] is the default; [`FileTaskStore`] shares tasks
//!   between the server processes of one machine. The trait is async and every
//!   change is one [`TaskChange`](crate::storage::TaskChange) applied to one key, so a store shared by
//!   several replicas (Redis) can implement it.
//! - [`TaskLimits`]: the bounds a server keeps (tasks per principal, sizes).
//!
//! **A task whose process died.** On a store other processes share
//! ([`TaskStore::is_shared`](crate::storage::TaskStore::is_shared): [`FileTaskStore`], the `redis` feature's
//! `RedisTaskStore`) each running task holds a lease
//! ([`TaskRecord::lease_until_ms`]) that the process running it renews
//! every third of [`TaskLimits::lease_ms`]; a `tasks/*` request that finds
//! the lease lapsed fails the task (`-32603`, "the server process running
//! this task stopped"), in one change of the store, so it never stays
//! `working`. [`InMemoryTaskStore`] keeps no lease: its tasks live and die
//! with the process that runs them.
//!
//! The server side (running the tool as a task, the `tasks/*` methods) is
//! in the server pipeline; it is offered as soon as a tool supports tasks,
//! or when the server's [`Storage`](crate::storage::Storage) holds a task
//! store ([`Storage::with_tasks`](crate::storage::Storage::with_tasks)).

mod file;
mod memory;
mod record;
pub(crate) mod time;

pub use file::FileTaskStore;
pub use memory::InMemoryTaskStore;
pub use record::{TaskRecord, TaskStatus, TaskSupport};

/// The extension's identifier, as it appears under `extensions` in
/// capabilities.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The bounds a server keeps on tasks: a hostile client can neither fill
/// memory with tasks nor with what it sends to them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskLimits {
    /// How long a task stays readable after its creation, in milliseconds
    /// (`ttlMs`); a running task is stopped and forgotten then.
    pub ttl_ms: u64,
    /// The polling interval suggested to clients (`pollIntervalMs`).
    pub poll_interval_ms: u64,
    /// Tasks one principal may have running (not yet terminal) on this
    /// server at once; one more call is refused with `-32000`.
    pub max_running_per_principal: usize,
    /// The longest task id accepted in `tasks/*` params, in bytes.
    pub max_task_id_bytes: usize,
    /// The largest `inputResponses` a `tasks/update` may carry, in bytes
    /// (as serialized JSON).
    pub max_input_bytes: usize,
    /// On a shared store ([`TaskStore::is_shared`](crate::storage::TaskStore::is_shared)): how long a running
    /// task's lease lasts, in milliseconds. Its process renews it every
    /// third of that; a task whose process died is `failed` at most this
    /// long (plus one poll) after its last renewal, on the next read.
    pub lease_ms: u64,
}

impl TaskLimits {
    /// The defaults: one hour TTL, 500 ms polling, 64 running tasks per
    /// principal, 128-byte task ids, 1 MiB of input per update, 15 s
    /// leases.
    pub const DEFAULT: Self = Self {
        ttl_ms: 3_600_000,
        poll_interval_ms: 500,
        max_running_per_principal: 64,
        max_task_id_bytes: 128,
        max_input_bytes: 1 << 20,
        lease_ms: 15_000,
    };
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}
