//! [`InMemoryTaskStore`]: the default store, one map in this process.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

use super::record::TaskRecord;
use super::time::now_ms;
use crate::storage::{TaskChange, TaskStore, TaskStoreError};

/// Tasks kept in this process's memory: a task is only found on the
/// replica that created it. Expired tasks are dropped when they are next
/// looked up, and swept whenever the store is full.
///
/// ```
/// use mcp_core::storage::TaskStore;
/// use mcp_core::tasks::{InMemoryTaskStore, TaskRecord};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let store = InMemoryTaskStore::new(100);
/// store.create(TaskRecord::new("t1".into(), None, 0)).await.unwrap();
/// assert!(store.get("t1").await.unwrap().is_some());
/// assert!(store.get("t2").await.unwrap().is_none());
/// # }
/// ```
#[derive(Debug)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, Entry>>,
    max_tasks: usize,
}

#[derive(Debug)]
struct Entry {
    record: TaskRecord,
    /// When it expires (monotonic, so tests can pause time).
    expires: Option<Instant>,
}

impl Entry {
    fn expired(&self, now: Instant) -> bool {
        self.expires.is_some_and(|at| at <= now)
    }
}

/// The default bound of [`InMemoryTaskStore::default`].
const DEFAULT_MAX_TASKS: usize = 10_000;

impl InMemoryTaskStore {
    /// A store that holds at most `max_tasks` tasks (expired ones are
    /// swept before a create is refused).
    pub fn new(max_tasks: usize) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            max_tasks,
        }
    }

    /// How many tasks it holds (expired ones not swept yet included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when it holds no task.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for InMemoryTaskStore {
    /// At most 10 000 tasks.
    fn default() -> Self {
        Self::new(DEFAULT_MAX_TASKS)
    }
}

#[async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let now = Instant::now();
        let mut tasks = self.lock();
        if tasks.len() >= self.max_tasks {
            tasks.retain(|_, entry| !entry.expired(now));
            if tasks.len() >= self.max_tasks {
                return Err(TaskStoreError::Full);
            }
        }
        let expires = record.ttl_ms.map(|ttl| now + Duration::from_millis(ttl));
        tasks.insert(record.task_id.clone(), Entry { record, expires });
        Ok(())
    }

    async fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let now = Instant::now();
        let mut tasks = self.lock();
        match tasks.get(task_id) {
            Some(entry) if entry.expired(now) => {
                tasks.remove(task_id);
                Ok(None)
            }
            Some(entry) => Ok(Some(entry.record.clone())),
            None => Ok(None),
        }
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let now = Instant::now();
        let mut tasks = self.lock();
        let Some(entry) = tasks.get_mut(task_id) else {
            return Ok(None);
        };
        if entry.expired(now) {
            tasks.remove(task_id);
            return Ok(None);
        }
        change.apply(&mut entry.record, now_ms());
        Ok(Some(entry.record.clone()))
    }
}
