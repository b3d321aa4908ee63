//! [`TaskEngine`]: what a server with the tasks extension holds.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::Notify;

use crate::cancel::CancelToken;
use crate::protocol::ErrorObject;
use crate::tasks::{TaskLimits, TaskStore, TaskStoreError};

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
        }
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
        change: crate::tasks::TaskChange,
    ) -> Result<Option<crate::tasks::TaskRecord>, ErrorObject> {
        let record = self
            .store
            .update(task_id, change)
            .await
            .map_err(|e| store_error(&e))?;
        if let Some(record) = &record {
            self.watchers.changed(record).await;
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
        TaskStoreError::Unavailable(_) => {
            tracing::error!(error = %e, "task store failed");
            ErrorObject::internal("the task store is unavailable")
        }
    }
}
