//! The questions of a tool run as a task. Until the task exists (the
//! handler's first poll, inside the `tools/call`) they are ordinary
//! 2026-07-28 round trips: the call ends `input_required` and the retry
//! brings the answers. Once it exists they are published on the task
//! (`input_required`, `inputRequests`) and answered by `tasks/update`.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::engine::{store_error, Running, TaskEngine};
use crate::context::interrupt::{Interrupt, Requester, RoundTripRequester};
use crate::protocol::ErrorObject;
use crate::storage::TaskChange;

/// The task a call became.
pub(crate) struct TaskLink {
    pub(crate) engine: Arc<TaskEngine>,
    pub(crate) task_id: String,
    pub(crate) running: Running,
}

/// The requester of a call that may become a task.
pub(crate) struct TaskRequester {
    round: RoundTripRequester,
    interrupt: Arc<Interrupt>,
    /// Set once the task exists.
    pub(crate) link: OnceLock<TaskLink>,
}

impl TaskRequester {
    pub(crate) fn new(interrupt: Arc<Interrupt>) -> Self {
        Self {
            round: RoundTripRequester {
                interrupt: Arc::clone(&interrupt),
            },
            interrupt,
            link: OnceLock::new(),
        }
    }
}

#[async_trait]
impl Requester for TaskRequester {
    fn auto_key(&self, prefix: &str) -> String {
        self.round.auto_key(prefix)
    }

    async fn request_all(
        &self,
        requests: Vec<(String, String, Value)>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let Some(link) = self.link.get() else {
            return self.round.request_all(requests).await;
        };
        // Answers of the round trips before the task existed come first.
        let (mut answers, missing) = self.interrupt.split_answered(requests);
        if missing.is_empty() {
            return Ok(answers);
        }
        let keys: Vec<String> = missing.keys().cloned().collect();
        link.ask(missing).await?;
        let taken = link.wait_for(&keys).await?;
        answers.extend(taken);
        Ok(answers)
    }
}

impl TaskLink {
    async fn ask(&self, questions: Map<String, Value>) -> Result<(), ErrorObject> {
        let change = TaskChange::Ask(questions);
        match self.engine.apply(&self.task_id, change).await? {
            Some(_) => Ok(()),
            None => Err(ErrorObject::internal("the task expired")),
        }
    }

    /// Waits until every key has an answer, takes them and returns them.
    /// Woken by `tasks/update` on this replica; a store shared with other
    /// replicas is also polled at the task's polling interval.
    async fn wait_for(&self, keys: &[String]) -> Result<Map<String, Value>, ErrorObject> {
        let store = &self.engine.store;
        let poll = Duration::from_millis(self.engine.limits.poll_interval_ms.max(10));
        loop {
            let notified = self.running.wake.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let record = store
                .get(&self.task_id)
                .await
                .map_err(|e| store_error(&e))?
                .ok_or_else(|| ErrorObject::internal("the task expired"))?;
            if record.status.is_terminal() {
                return Err(ErrorObject::internal("the task ended"));
            }
            if keys.iter().all(|k| record.input_responses.contains_key(k)) {
                let answers: Map<String, Value> = keys
                    .iter()
                    .filter_map(|k| {
                        record
                            .input_responses
                            .get(k)
                            .map(|v| (k.clone(), v.clone()))
                    })
                    .collect();
                store
                    .update(&self.task_id, TaskChange::Take(keys.to_vec()))
                    .await
                    .map_err(|e| store_error(&e))?;
                return Ok(answers);
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep(poll) => {}
            }
        }
    }
}
