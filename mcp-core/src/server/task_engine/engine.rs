//! [`TaskEngine`]: what a server with the tasks extension holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::cancel::CancelToken;
use crate::protocol::ErrorObject;
use crate::storage::{TaskStore, TaskStoreError};
use crate::tasks::TaskLimits;

/// The tasks of one server: where they are kept, the bounds, and the
/// tasks whose tool runs in this process (their cancellation token and
/// the signal that wakes them when answers arrive).
pub(crate) struct TaskEngine {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) limits: TaskLimits,
    running: Mutex<HashMap<String, Running>>,
    /// When set, a new task is run elsewhere: this is called with its id
    /// (after it is stored) instead of running the tool here.
    pub(crate) spawner: Option<TaskSpawner>,
    /// The listens watching tasks (`notifications/tasks`).
    pub(crate) watchers: super::notify::Watchers,
    /// Tells the other replicas of each change, when set.
    bus: Option<Arc<dyn crate::storage::NotificationBus>>,
}

/// Starts a stored task somewhere else (another process), by id.
pub(crate) type TaskSpawner = Arc<dyn Fn(&str) + Send + Sync>;

/// The marker a call carries when it resumes a stored task
/// ([`McpServer::run_task`](crate::McpServer::run_task)).
#[derive(Debug, Clone)]
pub(crate) struct Resume(pub(crate) String);

/// A task whose tool runs here.
#[derive(Clone)]
pub(crate) struct Running {
    pub(crate) token: CancelToken,
    pub(crate) wake: Arc<Notify>,
    owner: Option<Arc<str>>,
}

impl TaskEngine {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        limits: TaskLimits,
        spawner: Option<TaskSpawner>,
    ) -> Self {
        Self {
            store,
            limits,
            running: Mutex::new(HashMap::new()),
            spawner,
            watchers: super::notify::Watchers::default(),
            bus: None,
        }
    }

    /// The same, telling `bus` of every change.
    pub(crate) fn with_bus(
        mut self,
        bus: Option<Arc<dyn crate::storage::NotificationBus>>,
    ) -> Self {
        self.bus = bus;
        self
    }

    /// A task changed on another replica: the listens here watching it
    /// hear its state as the store has it now.
    pub(crate) async fn changed_elsewhere(&self, task_id: &str) {
        if !self.watchers.watches(task_id) {
            return;
        }
        if let Ok(Some(record)) = self.store.get(task_id).await {
            self.watchers.changed(&record).await;
        }
    }

    /// The lease a task running here starts with, or renews to: `None` on
    /// a store no other process shares.
    pub(crate) fn lease_from(&self, now_ms: u64) -> Option<u64> {
        self.store
            .is_shared()
            .then(|| now_ms.saturating_add(self.limits.lease_ms))
    }

    /// `record` as it stands once a lapsed lease is judged: a task still
    /// running on a shared store whose lease ended is failed here (its
    /// process died), in one change of the store.
    ///
    /// # Errors
    /// The store's failure, as the client sees it.
    pub(crate) async fn judge_lease(
        &self,
        record: crate::tasks::TaskRecord,
    ) -> Result<crate::tasks::TaskRecord, ErrorObject> {
        let now = crate::tasks::time::now_ms();
        let lapsed =
            !record.status.is_terminal() && record.lease_until_ms.is_some_and(|until| until < now);
        if !lapsed {
            return Ok(record);
        }
        let task_id = record.task_id.clone();
        Ok(self
            .apply(&task_id, crate::storage::TaskChange::Orphaned(now))
            .await?
            .unwrap_or(record))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Running>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a task about to run here, unless its principal already has
    /// as many running as it may.
    ///
    /// # Errors
    /// `-32000` over [`TaskLimits::max_running_per_principal`].
    pub(crate) fn admit(
        &self,
        task_id: &str,
        owner: Option<Arc<str>>,
    ) -> Result<Running, ErrorObject> {
        let mut running = self.lock();
        let of_owner = running.values().filter(|r| r.owner == owner).count();
        if of_owner >= self.limits.max_running_per_principal {
            return Err(ErrorObject::new(
                crate::protocol::ErrorCode::SERVER_BUSY,
                format!(
                    "too many running tasks: at most {} per client",
                    self.limits.max_running_per_principal
                ),
            ));
        }
        let entry = Running {
            token: CancelToken::new(),
            wake: Arc::new(Notify::new()),
            owner,
        };
        running.insert(task_id.to_owned(), entry.clone());
        Ok(entry)
    }

    /// Applies `change` to the task and tells its watchers; `None` when
    /// there is no such task.
    ///
    /// # Errors
    /// The store's failure, as the client sees it.
    pub(crate) async fn apply(
        &self,
        task_id: &str,
        change: crate::storage::TaskChange,
    ) -> Result<Option<crate::tasks::TaskRecord>, ErrorObject> {
        let record = self
            .store
            .update(task_id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(record) = &record {
            self.watchers.changed(record).await;
            if let Some(bus) = &self.bus {
                bus.publish(crate::storage::BusEvent::TaskChanged {
                    task_id: task_id.to_owned(),
                })
                .await;
            }
        }
        Ok(record)
    }

    /// The task's tool stopped running here.
    pub(crate) fn forget(&self, task_id: &str) {
        self.lock().remove(task_id);
    }

    /// The task, when its tool runs here.
    pub(crate) fn running(&self, task_id: &str) -> Option<Running> {
        self.lock().get(task_id).cloned()
    }
}

/// A store failure as the client sees it (`-32603`; the cause is logged).
pub(crate) fn store_error(e: &TaskStoreError) -> ErrorObject {
    match e {
        TaskStoreError::Full => ErrorObject::new(
            crate::protocol::ErrorCode::SERVER_BUSY,
            "the server holds too many tasks; try again later",
        ),
        TaskStoreError::TooLarge { .. } => {
            ErrorObject::internal(format!("the task could not be stored: {e}"))
        }
        TaskStoreError::Unavailable(_) => {
            tracing::error!(error = %e, "task store failed");
            ErrorObject::internal("the task store is unavailable")
        }
    }
}
