//! [`FileTaskStore`]: tasks in a directory, shared by the server processes
//! of one machine.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;

use super::record::TaskRecord;
use super::time::now_ms;
use crate::storage::{TaskChange, TaskStore, TaskStoreError};

mod dir;

use dir::TaskDir;

/// Tasks kept as one JSON file each in a directory, so that several server
/// processes on one machine share them: a task created by one process is
/// read, answered and cancelled through another (a stdio server started
/// once per request, say). Each change holds a per-task lock (a lock
/// directory, created atomically) and replaces the file by rename, so a
/// reader never sees half a record. Expired tasks are removed when looked
/// up, and swept when the store is full.
///
/// **The directory is private to the user the server runs as.** A record
/// holds a task's arguments, questions, answers and result, and whoever can
/// write one can answer another caller's task, so on Unix:
/// - a missing directory is created with mode `0700` (missing parents
///   too), and every record with mode `0600`, set when the file is created;
/// - [`new`](Self::new) refuses (an error naming the path) a directory that
///   is a symbolic link, is not owned by the process's effective user, or
///   grants any permission to its group or to others (`mode & 0o077 != 0`):
///   use a directory of your own, such as one from `mktemp -d`, never a
///   shared one like `/tmp` itself;
/// - the directory is opened once and every record is reached relative to
///   that open directory without following symbolic links, so renaming or
///   replacing the path afterwards has no effect;
/// - a record that is not a regular file owned by that user with mode
///   `0600` (or stricter) is refused, never served.
///
/// On other platforms none of this is checked: the directory is created if
/// missing and used as it is; give one that only the server's user can
/// read and write.
///
/// Task ids are only ever used as file names after a check that they are
/// made of `A-Z a-z 0-9 _ -` (any other id is simply unknown).
///
/// ```
/// use mcp_core::storage::TaskStore;
/// use mcp_core::tasks::{FileTaskStore, TaskRecord};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dir = std::env::temp_dir().join(format!("doc-tasks-{}", std::process::id()));
/// let store = FileTaskStore::new(&dir, 100).expect("a private directory");
/// store.create(TaskRecord::new("t1".into(), None, 0)).await.unwrap();
/// assert!(store.get("t1").await.unwrap().is_some());
/// assert!(store.get("../t1").await.unwrap().is_none());
/// # let _ = std::fs::remove_dir_all(dir);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FileTaskStore {
    dir: TaskDir,
    max_tasks: usize,
}

/// How long a lock may be held before another process takes it over (a
/// process that died holding it).
const STALE_LOCK: Duration = Duration::from_secs(10);

impl FileTaskStore {
    /// A store in `dir` holding at most `max_tasks`; `dir` is created
    /// (mode `0700`) if missing.
    ///
    /// # Errors
    /// The directory cannot be created or opened, or (on Unix) it is a
    /// symbolic link, is owned by another user, or is open to its group or
    /// to others (the error, of kind `PermissionDenied`, names the path and
    /// what is wrong).
    pub fn new(dir: impl AsRef<Path>, max_tasks: usize) -> std::io::Result<Self> {
        let dir = TaskDir::open(dir.as_ref())?;
        Ok(Self { dir, max_tasks })
    }

    /// The directory the tasks are kept in.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The file name of a task's record, if its id is fit for one.
    fn file(task_id: &str) -> Option<String> {
        let safe = !task_id.is_empty()
            && task_id.len() <= 128
            && task_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
        safe.then(|| format!("{task_id}.json"))
    }

    fn read(&self, name: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let bytes = self.dir.read(name).map_err(|e| unavailable(&e))?;
        Ok(bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok()))
    }

    fn write(&self, name: &str, record: &TaskRecord) -> Result<(), TaskStoreError> {
        let bytes =
            serde_json::to_vec(record).map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
        self.dir.write(name, &bytes).map_err(|e| unavailable(&e))
    }

    fn expired(record: &TaskRecord, now: u64) -> bool {
        record
            .ttl_ms
            .is_some_and(|ttl| record.created_at_ms.saturating_add(ttl) <= now)
    }

    /// Removes expired task files; returns how many remain (a record that
    /// cannot be read counts as one that remains).
    fn sweep(&self) -> Result<usize, TaskStoreError> {
        let now = now_ms();
        let mut left = 0;
        for name in self.dir.names().map_err(|e| unavailable(&e))? {
            if !name.ends_with(".json") {
                continue;
            }
            match self.read(&name) {
                Ok(Some(record)) if Self::expired(&record, now) => self.dir.remove(&name),
                _ => left += 1,
            }
        }
        Ok(left)
    }

    /// Takes the lock of the record `name`, removed when dropped.
    async fn lock(&self, name: &str) -> Result<Lock<'_>, TaskStoreError> {
        let lock = format!("{name}.lock");
        for _ in 0..2000 {
            if self.dir.try_lock(&lock).map_err(|e| unavailable(&e))? {
                return Ok(Lock(&self.dir, lock));
            }
            if self.dir.lock_age(&lock).is_some_and(|age| age > STALE_LOCK) {
                self.dir.unlock(&lock);
            } else {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        Err(TaskStoreError::Unavailable("a task stayed locked".into()))
    }
}

fn unavailable(e: &std::io::Error) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

/// A per-task lock: a directory created atomically, removed on drop.
struct Lock<'a>(&'a TaskDir, String);

impl Drop for Lock<'_> {
    fn drop(&mut self) {
        self.0.unlock(&self.1);
    }
}

#[async_trait]
impl TaskStore for FileTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let name = Self::file(&record.task_id)
            .ok_or_else(|| TaskStoreError::Unavailable("task id unfit for a file name".into()))?;
        let count = self.dir.names().map_err(|e| unavailable(&e))?.len();
        if count >= self.max_tasks && self.sweep()? >= self.max_tasks {
            return Err(TaskStoreError::Full);
        }
        self.write(&name, &record)
    }

    async fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(name) = Self::file(task_id) else {
            return Ok(None);
        };
        match self.read(&name)? {
            Some(record) if Self::expired(&record, now_ms()) => {
                self.dir.remove(&name);
                Ok(None)
            }
            other => Ok(other),
        }
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(name) = Self::file(task_id) else {
            return Ok(None);
        };
        let _lock = self.lock(&name).await?;
        let Some(mut record) = self.read(&name)? else {
            return Ok(None);
        };
        let now = now_ms();
        if Self::expired(&record, now) {
            self.dir.remove(&name);
            return Ok(None);
        }
        change.apply(&mut record, now);
        self.write(&name, &record)?;
        Ok(Some(record))
    }

    /// Shared: tasks here may run in other processes (leases apply).
    fn is_shared(&self) -> bool {
        true
    }
}
