//! [`FileTaskStore`]: tasks in a directory, shared by the server processes
//! of one machine.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;

use super::record::TaskRecord;
use super::store::{TaskChange, TaskStore, TaskStoreError};
use super::time::now_ms;

/// Tasks kept as one JSON file each in a directory, so that several server
/// processes on one machine share them: a task created by one process is
/// read, answered and cancelled through another (a stdio server started
/// once per request, say). Each change holds a per-task lock (a lock
/// directory, created atomically) and replaces the file by rename, so a
/// reader never sees half a record. Expired tasks are removed when looked
/// up, and swept when the store is full.
///
/// Task ids are only ever used as file names after a check that they are
/// made of `A-Z a-z 0-9 _ -` (any other id is simply unknown).
///
/// ```
/// use mcp_core::tasks::{FileTaskStore, TaskRecord, TaskStore};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dir = std::env::temp_dir().join(format!("doc-tasks-{}", std::process::id()));
/// let store = FileTaskStore::new(&dir, 100).expect("a writable directory");
/// store.create(TaskRecord::new("t1".into(), None, 0)).await.unwrap();
/// assert!(store.get("t1").await.unwrap().is_some());
/// assert!(store.get("../t1").await.unwrap().is_none());
/// # let _ = std::fs::remove_dir_all(dir);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct FileTaskStore {
    dir: PathBuf,
    max_tasks: usize,
}

/// How long a lock may be held before another process takes it over (a
/// process that died holding it).
const STALE_LOCK: Duration = Duration::from_secs(10);

impl FileTaskStore {
    /// A store in `dir` (created if missing) holding at most `max_tasks`.
    ///
    /// # Errors
    /// The directory cannot be created.
    pub fn new(dir: impl AsRef<Path>, max_tasks: usize) -> std::io::Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        fs::create_dir_all(&dir)?;
        Ok(Self { dir, max_tasks })
    }

    /// The directory the tasks are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, task_id: &str) -> Option<PathBuf> {
        let safe = !task_id.is_empty()
            && task_id.len() <= 128
            && task_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
        safe.then(|| self.dir.join(format!("{task_id}.json")))
    }

    fn read(path: &Path) -> Result<Option<TaskRecord>, TaskStoreError> {
        match fs::read(path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(unavailable(&e)),
        }
    }

    fn write(path: &Path, record: &TaskRecord) -> Result<(), TaskStoreError> {
        let bytes =
            serde_json::to_vec(record).map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let mut file = fs::File::create(&tmp).map_err(|e| unavailable(&e))?;
        file.write_all(&bytes).map_err(|e| unavailable(&e))?;
        fs::rename(&tmp, path).map_err(|e| unavailable(&e))
    }

    fn expired(record: &TaskRecord, now: u64) -> bool {
        record
            .ttl_ms
            .is_some_and(|ttl| record.created_at_ms.saturating_add(ttl) <= now)
    }

    /// Removes expired task files; returns how many remain.
    fn sweep(&self) -> Result<usize, TaskStoreError> {
        let now = now_ms();
        let mut left = 0;
        for entry in fs::read_dir(&self.dir).map_err(|e| unavailable(&e))? {
            let Ok(entry) = entry else { continue };
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match Self::read(&path)? {
                Some(record) if Self::expired(&record, now) => {
                    let _ = fs::remove_file(&path);
                }
                _ => left += 1,
            }
        }
        Ok(left)
    }
}

fn unavailable(e: &std::io::Error) -> TaskStoreError {
    TaskStoreError::Unavailable(e.to_string())
}

/// A per-task lock: a directory created atomically, removed on drop.
struct Lock(PathBuf);

impl Lock {
    async fn take(path: PathBuf) -> Result<Self, TaskStoreError> {
        for _ in 0..2000 {
            match fs::create_dir(&path) {
                Ok(()) => return Ok(Self(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = fs::metadata(&path)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|at| SystemTime::now().duration_since(at).ok())
                        .is_some_and(|age| age > STALE_LOCK);
                    if stale {
                        let _ = fs::remove_dir(&path);
                    } else {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
                Err(e) => return Err(unavailable(&e)),
            }
        }
        Err(TaskStoreError::Unavailable("a task stayed locked".into()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.0);
    }
}

#[async_trait]
impl TaskStore for FileTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let path = self
            .file(&record.task_id)
            .ok_or_else(|| TaskStoreError::Unavailable("task id unfit for a file name".into()))?;
        let count = fs::read_dir(&self.dir)
            .map_err(|e| unavailable(&e))?
            .count();
        if count >= self.max_tasks && self.sweep()? >= self.max_tasks {
            return Err(TaskStoreError::Full);
        }
        Self::write(&path, &record)
    }

    async fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        let Some(path) = self.file(task_id) else {
            return Ok(None);
        };
        match Self::read(&path)? {
            Some(record) if Self::expired(&record, now_ms()) => {
                let _ = fs::remove_file(&path);
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
        let Some(path) = self.file(task_id) else {
            return Ok(None);
        };
        let _lock = Lock::take(path.with_extension("lock")).await?;
        let Some(mut record) = Self::read(&path)? else {
            return Ok(None);
        };
        let now = now_ms();
        if Self::expired(&record, now) {
            let _ = fs::remove_file(&path);
            return Ok(None);
        }
        change.apply(&mut record, now);
        Self::write(&path, &record)?;
        Ok(Some(record))
    }

    /// Shared: tasks here may run in other processes (leases apply).
    fn is_shared(&self) -> bool {
        true
    }
}
