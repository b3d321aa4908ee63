//! One task as its store keeps it, and the statuses it moves through.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a tool runs as a task (`#[mcp_tool(task = "...")]`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never a task (the default): the call is answered with its result.
    #[default]
    Forbidden,
    /// A task when the request declares the tasks extension (a call that
    /// finishes at once is still answered with its result); otherwise the
    /// call runs as usual.
    Optional,
    /// Always a task: a request that does not declare the extension is
    /// refused with `-32021` (missing required client capability).
    Required,
}

impl TaskSupport {
    /// Parses `"forbidden"`, `"optional"` or `"required"`.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "forbidden" => Some(Self::Forbidden),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The tool is running.
    Working,
    /// The tool waits for answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// The tool returned a result (a tool error, `isError: true`, too).
    Completed,
    /// The call ended with a JSON-RPC error (a protocol error or a panic).
    Failed,
    /// The client cancelled the task.
    Cancelled,
}

impl TaskStatus {
    /// The wire name (`"working"`, `"input_required"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// True for `completed`, `failed` and `cancelled`: nothing changes a
    /// terminal task any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// One task, as a [`TaskStore`](crate::storage::TaskStore) keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The server-minted id (unguessable).
    pub task_id: String,
    /// The principal that created it; only that principal sees it.
    pub owner: Option<String>,
    /// Its status.
    pub status: TaskStatus,
    /// A human-readable line about its progress.
    pub status_message: Option<String>,
    /// Creation time, milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// Time of the last change, milliseconds since the Unix epoch.
    pub last_updated_at_ms: u64,
    /// How long it stays readable after creation (`None`: unlimited).
    pub ttl_ms: Option<u64>,
    /// The suggested polling interval.
    pub poll_interval_ms: Option<u64>,
    /// Questions waiting for the client, by key (`{method, params}`).
    pub input_requests: Map<String, Value>,
    /// Answers delivered by `tasks/update` and not yet taken by the tool.
    pub input_responses: Map<String, Value>,
    /// The tool's result (`CallToolResult` JSON), once `completed`.
    pub result: Option<Value>,
    /// The JSON-RPC error object, once `failed`.
    pub error: Option<Value>,
    /// The `tools/call` params the task runs (name, arguments, `_meta`,
    /// earlier answers), kept when another process is to run it (see
    /// [`McpServerBuilder::task_spawner`](crate::McpServerBuilder::task_spawner)).
    #[serde(default)]
    pub request: Option<Value>,
    /// While the task runs on a shared store: the time (milliseconds since
    /// the Unix epoch) until which the process running it vouches for it.
    /// That process renews it ([`TaskChange::Lease`](crate::storage::TaskChange::Lease)); once it has
    /// passed, the task is failed ([`TaskChange::Orphaned`](crate::storage::TaskChange::Orphaned)) as its
    /// process is gone. `None`: no lease (an in-process store, where the
    /// task dies with the store).
    #[serde(default)]
    pub lease_until_ms: Option<u64>,
}

impl TaskRecord {
    /// A new `working` task created at `now_ms`.
    pub fn new(task_id: String, owner: Option<String>, now_ms: u64) -> Self {
        Self {
            task_id,
            owner,
            status: TaskStatus::Working,
            status_message: None,
            created_at_ms: now_ms,
            last_updated_at_ms: now_ms,
            ttl_ms: None,
            poll_interval_ms: None,
            input_requests: Map::new(),
            input_responses: Map::new(),
            result: None,
            error: None,
            request: None,
            lease_until_ms: None,
        }
    }
}
