//! [`TaskStore`]: where tasks live, and the changes applied to them.

use std::fmt;

use async_trait::async_trait;
use serde_json::{Map, Value};

use crate::tasks::{TaskRecord, TaskStatus};

/// One change to one task, applied atomically by the store (a shared store
/// runs it as one transaction on the task's key). A change to a terminal
/// task is ignored, except that reading it back still works.
#[derive(Debug, Clone, PartialEq)]
pub enum TaskChange {
    /// The tool asks these questions (key → `{method, params}`): they are
    /// added to `input_requests` and the task becomes `input_required`.
    Ask(Map<String, Value>),
    /// The client's answers (`tasks/update`): each answer to a pending
    /// question moves from `input_requests` to `input_responses`; answers
    /// to anything else are ignored. When no question is left pending the
    /// task is `working` again.
    Answer(Map<String, Value>),
    /// The tool took these answers: they leave `input_responses`.
    Take(Vec<String>),
    /// A progress line (`statusMessage`).
    Message(String),
    /// The tool returned this result: the task is `completed`.
    Complete(Value),
    /// The call ended with this JSON-RPC error: the task is `failed`.
    Fail(Value),
    /// The client cancelled the task: it is `cancelled` at once.
    Cancel,
    /// The process running the task is alive: its lease now lasts until
    /// this time (ms since the epoch). Not a change a client sees
    /// (`lastUpdatedAt` stays).
    Lease(u64),
    /// Fails the task with a `-32603` naming a lost worker when its lease
    /// ended before this time (ms since the epoch); a task whose lease was
    /// renewed meanwhile, or that holds none, is left alone. Checked on
    /// the store's side of the transaction, so a renewal racing with it
    /// wins or loses as a whole.
    Orphaned(u64),
}

impl TaskChange {
    /// Applies the change to `record` at `now_ms`. Stores call this (a
    /// shared store may apply the same rules in its own language).
    pub fn apply(self, record: &mut TaskRecord, now_ms: u64) {
        if record.status.is_terminal() {
            return;
        }
        match self {
            Self::Lease(until) => {
                record.lease_until_ms = Some(until);
                return;
            }
            Self::Orphaned(now) => {
                if record.lease_until_ms.is_none_or(|until| until >= now) {
                    return;
                }
                record.status = TaskStatus::Failed;
                record.error = Some(orphaned_error());
                record.input_requests.clear();
                record.lease_until_ms = None;
            }
            Self::Ask(requests) => {
                record.input_requests.extend(requests);
                record.status = TaskStatus::InputRequired;
            }
            Self::Answer(answers) => {
                for (key, answer) in answers {
                    if record.input_requests.remove(&key).is_some() {
                        record.input_responses.insert(key, answer);
                    }
                }
                if record.input_requests.is_empty() {
                    record.status = TaskStatus::Working;
                }
            }
            Self::Take(keys) => {
                for key in keys {
                    record.input_responses.remove(&key);
                }
            }
            Self::Message(message) => record.status_message = Some(message),
            Self::Complete(result) => {
                record.lease_until_ms = None;
                record.status = TaskStatus::Completed;
                record.result = Some(result);
                record.input_requests.clear();
            }
            Self::Fail(error) => {
                record.lease_until_ms = None;
                record.status = TaskStatus::Failed;
                record.error = Some(error);
                record.input_requests.clear();
            }
            Self::Cancel => {
                record.lease_until_ms = None;
                record.status = TaskStatus::Cancelled;
                record.input_requests.clear();
            }
        }
        record.last_updated_at_ms = now_ms;
    }
}

/// The error of a task whose worker was lost (see [`TaskChange::Orphaned`]).
fn orphaned_error() -> Value {
    serde_json::json!({
        "code": -32603,
        "message": "the server process running this task stopped (its lease \
                    expired without renewal); the task did not finish",
    })
}

/// Why a store could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStoreError {
    /// The store holds as many tasks as it may.
    Full,
    /// The store is unreachable or failed (a shared store's connection).
    Unavailable(String),
    /// The task, serialized, would be larger than the store keeps
    /// (`bytes` over `max`): a result or an input too large.
    TooLarge {
        /// The serialized size.
        bytes: usize,
        /// The store's bound.
        max: usize,
    },
}

impl fmt::Display for TaskStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Full => f.write_str("the task store is full"),
            Self::Unavailable(why) => write!(f, "the task store is unavailable: {why}"),
            Self::TooLarge { bytes, max } => {
                write!(
                    f,
                    "the task would take {bytes} bytes, over the store's {max}"
                )
            }
        }
    }
}

impl std::error::Error for TaskStoreError {}

/// Where tasks live (part of a [`Storage`](super::Storage)): keyed by task id, each expiring `ttl_ms` after its
/// creation. The server checks ownership (a task of another principal is
/// never shown); the store only keeps records.
///
/// Every method is one operation on one key, so an implementation on a
/// shared store (Redis: a hash per task with `PEXPIRE`, a script per
/// [`TaskChange`]) lets a task created on one replica be read, answered
/// and cancelled on another.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. It must be readable by [`get`](Self::get) as soon
    /// as this returns (the client may poll at once).
    ///
    /// # Errors
    /// [`TaskStoreError::Full`] when no more tasks fit;
    /// [`TaskStoreError::Unavailable`] when the store failed.
    ///
    /// # Cancel safety
    /// Dropping the future may or may not have stored the task.
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError>;

    /// The task under `task_id`, or `None` when there is none (never
    /// created, or expired).
    ///
    /// # Errors
    /// [`TaskStoreError::Unavailable`] when the store failed.
    ///
    /// # Cancel safety
    /// Cancel-safe: nothing changes.
    async fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, TaskStoreError>;

    /// Applies `change` to the task under `task_id` (see
    /// [`TaskChange::apply`]) and returns the task as it is afterwards, or
    /// `None` when there is no such task.
    ///
    /// # Errors
    /// [`TaskStoreError::Unavailable`] when the store failed.
    ///
    /// # Cancel safety
    /// Dropping the future may or may not have applied the change.
    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
    ) -> Result<Option<TaskRecord>, TaskStoreError>;

    /// True when other processes share this store (a task may run in a
    /// process other than the one reading it). The server then gives each
    /// running task a lease that its process renews, and a task whose
    /// lease ran out is failed instead of staying `working` forever.
    /// Default `false` (an in-process store: its tasks die with it).
    fn is_shared(&self) -> bool {
        false
    }
}
