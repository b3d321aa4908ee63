//! `subscriptions/listen` (2026-07-28): acknowledge the subset of
//! notifications honoured (`resourceSubscriptions`, `toolsListChanged`,
//! `resourcesListChanged`, `promptsListChanged`, the tasks extension's
//! `taskIds`), then hold the request open until the client
//! cancels it (no reply) or its session ends (a graceful, tagged result).

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::protocol::meta::meta_keys;
use crate::protocol::{self, ErrorObject};
use crate::server::features::Features;
use crate::server::outcome::Stop;
use crate::server::registry::Registry;
use crate::server::registry::{Kinds, ListKind};
use crate::server::request_facts::RequestFacts;
use crate::server::task_engine::TaskEngine;
use crate::session::Session;

/// Runs one `subscriptions/listen`.
pub(crate) async fn listen(
    features: &Features,
    registry: &Registry,
    tasks: Option<&Arc<TaskEngine>>,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, Stop> {
    if !params.get("notifications").is_some_and(Value::is_object) {
        return Err(ErrorObject::invalid_params(
            "subscriptions/listen requires a `notifications` object",
        )
        .into());
    }
    let id = facts.id.to_value();
    let tag = serde_json::json!({ meta_keys::SUBSCRIPTION_ID: id.clone() });
    let mut honoured = Map::new();
    let mut listening = None;
    if let (true, Some(Value::Array(uris)), Some(outbound)) = (
        features.resource_subscriptions,
        params
            .get("notifications")
            .and_then(|n| n.get("resourceSubscriptions")),
        &facts.ctx.outbound,
    ) {
        let uris: HashSet<String> = uris
            .iter()
            .filter_map(|u| u.as_str().map(str::to_owned))
            .collect();
        honoured.insert(
            "resourceSubscriptions".into(),
            serde_json::to_value(&uris).unwrap_or(Value::Null),
        );
        features
            .subscriptions
            .add_listen(&facts.session, id.clone(), Arc::clone(outbound), uris);
        listening = Some(ListenGuard {
            features,
            session: &facts.session,
            id,
        });
    }
    // A live part of the catalog honours its `…ListChanged`; the listener
    // is added once the acknowledgement is out (nothing may come before it).
    let mut list_kinds = Kinds::default();
    for kind in ListKind::ALL {
        let asked = params
            .get("notifications")
            .and_then(|n| n.get(kind.listen_key()))
            == Some(&Value::Bool(true));
        if asked && registry.is_live(kind) && facts.ctx.outbound.is_some() {
            honoured.insert(kind.listen_key().into(), Value::Bool(true));
            list_kinds = list_kinds.with(kind);
        }
    }
    // Task status notifications for the caller's own tasks (the tasks
    // extension), registered once the acknowledgement is out.
    let task_ids = match (tasks, &facts.ctx.outbound) {
        (Some(engine), Some(_)) => {
            let asked = params.get("notifications").and_then(|n| n.get("taskIds"));
            Box::pin(crate::server::task_engine::notify::watchable(
                engine, facts, asked,
            ))
            .await
        }
        _ => Vec::new(),
    };
    if !task_ids.is_empty() {
        honoured.insert(
            "taskIds".into(),
            serde_json::to_value(&task_ids).unwrap_or(Value::Null),
        );
    }
    let mut lists_listen = None;
    let mut tasks_listen = None;
    if let Some(outbound) = &facts.ctx.outbound {
        let ack = protocol::notification(
            "notifications/subscriptions/acknowledged",
            serde_json::json!({ "_meta": tag, "notifications": honoured }),
        );
        if !outbound.send(ack).await {
            // The stream is gone: nobody is left to answer.
            return Err(Stop::NoReply);
        }
        if !list_kinds.is_empty() {
            let id = facts.id.to_value();
            registry
                .list_listeners
                .add(&facts.session, outbound, Some(id.clone()), list_kinds);
            lists_listen = Some(ListsListen {
                registry,
                session: &facts.session,
                id,
            });
        }
        if let (Some(engine), false) = (tasks, task_ids.is_empty()) {
            let id = facts.id.to_value();
            for task_id in &task_ids {
                engine.watchers.add(task_id, &id, outbound);
            }
            tasks_listen = Some(TasksListen {
                engine,
                task_ids,
                id,
            });
        }
    }
    facts.session.closed().await;
    drop(listening);
    drop(lists_listen);
    drop(tasks_listen);
    let mut result = Map::new();
    result.insert("_meta".into(), tag);
    Ok(Value::Object(result))
}

/// Unregisters a listen's resource subscriptions however the listen ends.
struct ListenGuard<'a> {
    features: &'a Features,
    session: &'a Session,
    id: Value,
}

/// Unregisters a listen's `…ListChanged` however the listen ends.
struct ListsListen<'a> {
    registry: &'a Registry,
    session: &'a Session,
    id: Value,
}

/// Unregisters a listen's `taskIds` however the listen ends.
struct TasksListen<'a> {
    engine: &'a TaskEngine,
    task_ids: Vec<String>,
    id: Value,
}

impl Drop for TasksListen<'_> {
    fn drop(&mut self) {
        self.engine.watchers.remove(&self.task_ids, &self.id);
    }
}

impl Drop for ListsListen<'_> {
    fn drop(&mut self) {
        self.registry
            .list_listeners
            .remove_listen(self.session, &self.id);
    }
}

impl Drop for ListenGuard<'_> {
    fn drop(&mut self) {
        self.features
            .subscriptions
            .end_listen(self.session, &self.id);
    }
}
