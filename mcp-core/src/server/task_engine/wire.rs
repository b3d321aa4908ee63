//! The JSON shapes of the tasks extension: the task fields every answer
//! shares, `CreateTaskResult` (the `tools/call` answer, `resultType:
//! "task"`) and `DetailedTask` (`tasks/get`).

use serde_json::{Map, Value};

use crate::tasks::time::iso8601;
use crate::tasks::{TaskRecord, TaskStatus};

/// The `Task` fields: id, status, timestamps, TTL and polling hint (all
/// durations integer milliseconds; `ttlMs: null` for unlimited).
fn task_fields(record: &TaskRecord) -> Map<String, Value> {
    let mut map = Map::with_capacity(8);
    map.insert("taskId".into(), Value::String(record.task_id.clone()));
    map.insert(
        "status".into(),
        Value::String(record.status.as_str().to_owned()),
    );
    if let Some(message) = &record.status_message {
        map.insert("statusMessage".into(), Value::String(message.clone()));
    }
    map.insert(
        "createdAt".into(),
        Value::String(iso8601(record.created_at_ms)),
    );
    map.insert(
        "lastUpdatedAt".into(),
        Value::String(iso8601(record.last_updated_at_ms)),
    );
    map.insert(
        "ttlMs".into(),
        record.ttl_ms.map_or(Value::Null, Value::from),
    );
    if let Some(poll) = record.poll_interval_ms {
        map.insert("pollIntervalMs".into(), Value::from(poll));
    }
    map
}

/// `CreateTaskResult`: the task fields at the top level, flat, with
/// `resultType: "task"` (never `result`, `error` or `inputRequests`).
pub(crate) fn create_result(record: &TaskRecord) -> Map<String, Value> {
    let mut map = task_fields(record);
    map.insert("resultType".into(), Value::String("task".into()));
    map
}

/// `DetailedTask` (`tasks/get`): the task fields, plus `inputRequests`
/// while `input_required`, the inlined `result` once `completed` and the
/// `error` once `failed`.
pub(crate) fn detailed(record: &TaskRecord) -> Map<String, Value> {
    let mut map = task_fields(record);
    match record.status {
        TaskStatus::InputRequired => {
            map.insert(
                "inputRequests".into(),
                Value::Object(record.input_requests.clone()),
            );
        }
        TaskStatus::Completed => {
            if let Some(result) = &record.result {
                map.insert("result".into(), result.clone());
            }
        }
        TaskStatus::Failed => {
            if let Some(error) = &record.error {
                map.insert("error".into(), error.clone());
            }
        }
        TaskStatus::Working | TaskStatus::Cancelled => {}
    }
    map
}
