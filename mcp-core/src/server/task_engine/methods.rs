//! `tasks/get`, `tasks/update` and `tasks/cancel` (2026-07-28). Each needs
//! the request to declare the extension (`-32021` otherwise) and names a
//! task of the caller's own principal: any other id, including a task of
//! another principal, is `-32602` (a task is never shown to anyone else).

use serde_json::{Map, Value};

use super::engine::{store_error, TaskEngine};
use super::{declared, missing_extension, wire};
use crate::protocol::ErrorObject;
use crate::server::request_facts::RequestFacts;
use crate::storage::TaskChange;
use crate::tasks::TaskRecord;

/// The task a request names, checked: its id's shape, the extension, the
/// owner.
async fn find(
    engine: &TaskEngine,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<(String, TaskRecord), ErrorObject> {
    if !declared(&facts.era) {
        return Err(missing_extension());
    }
    let task_id = match params.get("taskId") {
        Some(Value::String(id)) if id.len() <= engine.limits.max_task_id_bytes => id,
        Some(Value::String(_)) => {
            return Err(ErrorObject::invalid_params(format!(
                "`taskId` is longer than {} bytes",
                engine.limits.max_task_id_bytes
            )))
        }
        _ => return Err(ErrorObject::invalid_params("`taskId` must be a string")),
    };
    let record = engine
        .store
        .get(task_id)
        .await
        .map_err(|e| store_error(&e))?
        .filter(|r| r.owner.as_deref() == facts.ctx.principal.as_deref())
        .ok_or_else(|| unknown(task_id))?;
    let record = engine.judge_lease(record).await?;
    Ok((task_id.clone(), record))
}

fn unknown(task_id: &str) -> ErrorObject {
    let shown: String = task_id.chars().take(64).collect();
    ErrorObject::invalid_params(format!("Unknown task: {shown}"))
}

/// `tasks/get`: the task as `DetailedTask`.
pub(crate) async fn get(
    engine: &TaskEngine,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let (_, record) = find(engine, facts, params).await?;
    Ok(Value::Object(wire::detailed(&record)))
}

/// `tasks/update`: delivers `inputResponses` (answers to questions the
/// task does not ask are ignored); an empty ack.
pub(crate) async fn update(
    engine: &TaskEngine,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let (task_id, _) = find(engine, facts, params).await?;
    let responses = match params.get("inputResponses") {
        Some(Value::Object(responses)) => responses,
        _ => {
            return Err(ErrorObject::invalid_params(
                "`inputResponses` must be an object",
            ))
        }
    };
    let size = serde_json::to_vec(responses).map_or(usize::MAX, |v| v.len());
    if size > engine.limits.max_input_bytes {
        return Err(ErrorObject::invalid_params(format!(
            "`inputResponses` is larger than {} bytes",
            engine.limits.max_input_bytes
        )));
    }
    // Answers must be objects (an elicitation or sampling result); others
    // are dropped, so the question stays pending.
    let answers: Map<String, Value> = responses
        .iter()
        .filter(|(_, answer)| answer.is_object())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !answers.is_empty() {
        engine.apply(&task_id, TaskChange::Answer(answers)).await?;
        if let Some(running) = engine.running(&task_id) {
            running.wake.notify_one();
        }
    }
    Ok(Value::Object(Map::new()))
}

/// `tasks/cancel`: the task is `cancelled` (a terminal task stays as it
/// is) and its tool, when it runs here, is cancelled; an empty ack.
pub(crate) async fn cancel(
    engine: &TaskEngine,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let (task_id, record) = find(engine, facts, params).await?;
    if !record.status.is_terminal() {
        engine.apply(&task_id, TaskChange::Cancel).await?;
    }
    if let Some(running) = engine.running(&task_id) {
        running.token.cancel();
    }
    Ok(Value::Object(Map::new()))
}
