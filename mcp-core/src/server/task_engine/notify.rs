//! Task status notifications (`notifications/tasks`): a
//! `subscriptions/listen` naming task ids (`notifications.taskIds`) hears of
//! each change to those tasks made in this process, and, with a
//! [notification bus](crate::storage::NotificationBus), of those made by the other replicas
//! (without one, their changes are seen by polling `tasks/get`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use super::wire;
use crate::context::Outbound;
use crate::protocol::meta::meta_keys;
use crate::tasks::TaskRecord;

/// The task ids a listen asks to watch (`notifications.taskIds`) that it
/// may: strings naming existing tasks of the caller's principal, on a
/// request that declares the extension, at most
/// [`MAX_WATCHED_PER_LISTEN`].
pub(crate) async fn watchable(
    engine: &super::TaskEngine,
    facts: &crate::server::request_facts::RequestFacts,
    asked: Option<&Value>,
) -> Vec<String> {
    let Some(Value::Array(ids)) = asked else {
        return Vec::new();
    };
    if !super::declared(&facts.era) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for id in ids
        .iter()
        .filter_map(Value::as_str)
        .take(MAX_WATCHED_PER_LISTEN)
    {
        if id.len() > engine.limits.max_task_id_bytes || out.iter().any(|o| o == id) {
            continue;
        }
        let owned = matches!(
            engine.store.get(id).await,
            Ok(Some(r)) if r.owner.as_deref() == facts.ctx.principal.as_deref()
        );
        if owned {
            out.push(id.to_owned());
        }
    }
    out
}

/// The most task ids one listen may watch (more are not honoured).
pub(crate) const MAX_WATCHED_PER_LISTEN: usize = 64;

/// One listen watching a task.
struct Watcher {
    /// The listen request's id (the notifications' `subscriptionId`).
    listen: Value,
    outbound: Arc<dyn Outbound>,
}

/// Task id → the listens watching it.
#[derive(Default)]
pub(crate) struct Watchers(Mutex<HashMap<String, Vec<Watcher>>>);

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<Watcher>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The listen `listen` watches `task_id` on `outbound`.
    pub(crate) fn add(&self, task_id: &str, listen: &Value, outbound: &Arc<dyn Outbound>) {
        self.lock()
            .entry(task_id.to_owned())
            .or_default()
            .push(Watcher {
                listen: listen.clone(),
                outbound: Arc::clone(outbound),
            });
    }

    /// True when some listen here watches `task_id`.
    pub(crate) fn watches(&self, task_id: &str) -> bool {
        self.lock().contains_key(task_id)
    }

    /// The listen `listen` ended: it watches nothing any more.
    pub(crate) fn remove(&self, task_ids: &[String], listen: &Value) {
        let mut watchers = self.lock();
        for id in task_ids {
            if let Some(list) = watchers.get_mut(id) {
                list.retain(|w| &w.listen != listen);
                if list.is_empty() {
                    watchers.remove(id);
                }
            }
        }
    }

    /// Tells the listens watching `record`'s task its new state.
    pub(crate) async fn changed(&self, record: &TaskRecord) {
        let targets: Vec<(Value, Arc<dyn Outbound>)> = match self.lock().get(&record.task_id) {
            Some(list) => list
                .iter()
                .map(|w| (w.listen.clone(), Arc::clone(&w.outbound)))
                .collect(),
            None => return,
        };
        let detailed = wire::detailed(record);
        for (listen, outbound) in targets {
            let mut params = detailed.clone();
            let mut meta = Map::new();
            meta.insert(meta_keys::SUBSCRIPTION_ID.into(), listen);
            params.insert("_meta".into(), Value::Object(meta));
            let note = crate::protocol::notification("notifications/tasks", Value::Object(params));
            outbound.send(note).await;
        }
    }
}
