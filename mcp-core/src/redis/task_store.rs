//! [`RedisTaskStore`]: tasks in Redis, one hash per task.

use async_trait::async_trait;
use redis::Script;

use super::{unavailable, RedisBackend};
use crate::storage::{TaskChange, TaskStore, TaskStoreError};
use crate::tasks::time::now_ms;
use crate::tasks::TaskRecord;

/// Creates a task unless as many as allowed live: drops expired ids from
/// the index, checks its size, writes the hash and its TTL.
/// KEYS: task, index. ARGV: id, record, ttl ms (0: none), now ms, max.
const CREATE: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], 'v', 1, 'rec', ARGV[2])
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('ZADD', KEYS[2], tonumber(ARGV[4]) + ttl, ARGV[1])
else
  redis.call('ZADD', KEYS[2], '+inf', ARGV[1])
end
return 1
";

/// Writes a record if its version is still the one read (the hash keeps
/// its TTL). KEYS: task. ARGV: version read, new version, record.
const SWAP: &str = r"
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'rec', ARGV[3])
return 1
";

/// How many times a change is applied again after losing a race.
const MAX_ATTEMPTS: usize = 32;

/// Tasks in Redis, shared by every replica given the same
/// [`RedisBackend`] (URL and prefix): a task created through one replica
/// is read, answered and cancelled through another. Each task expires
/// with its TTL (`PEXPIRE`); each change is atomic (see the
/// [module docs](super)); the number of live tasks and the size of each
/// are bounded.
#[derive(Clone)]
pub struct RedisTaskStore {
    redis: RedisBackend,
    max_tasks: usize,
    max_record_bytes: usize,
    create: Script,
    swap: Script,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("redis", &self.redis)
            .field("max_tasks", &self.max_tasks)
            .field("max_record_bytes", &self.max_record_bytes)
            .finish_non_exhaustive()
    }
}

impl RedisTaskStore {
    /// A store on `redis` with the default bounds: 100 000 live tasks,
    /// 8 MiB per task (its result and inputs included).
    pub fn new(redis: RedisBackend) -> Self {
        Self {
            redis,
            max_tasks: 100_000,
            max_record_bytes: 8 << 20,
            create: Script::new(CREATE),
            swap: Script::new(SWAP),
        }
    }

    /// Sets the bounds: at most `max_tasks` live tasks (one more is
    /// [`TaskStoreError::Full`]), each at most `max_record_bytes` as
    /// stored JSON (a larger one is [`TaskStoreError::TooLarge`]).
    #[must_use]
    pub fn with_limits(mut self, max_tasks: usize, max_record_bytes: usize) -> Self {
        self.max_tasks = max_tasks.max(1);
        self.max_record_bytes = max_record_bytes;
        self
    }

    fn encode(&self, record: &TaskRecord) -> Result<Vec<u8>, TaskStoreError> {
        let bytes =
            serde_json::to_vec(record).map_err(|e| TaskStoreError::Unavailable(e.to_string()))?;
        if bytes.len() > self.max_record_bytes {
            return Err(TaskStoreError::TooLarge {
                bytes: bytes.len(),
                max: self.max_record_bytes,
            });
        }
        Ok(bytes)
    }

    /// The record and its version, or `None`.
    async fn read(&self, task_id: &str) -> Result<Option<(u64, TaskRecord)>, TaskStoreError> {
        let mut conn = self.redis.connection();
        let (version, bytes): (Option<u64>, Option<Vec<u8>>) = redis::cmd("HMGET")
            .arg(self.redis.key("task:", task_id))
            .arg("v")
            .arg("rec")
            .query_async(&mut conn)
            .await
            .map_err(|e| unavailable(&e))?;
        let (Some(version), Some(bytes)) = (version, bytes) else {
            return Ok(None);
        };
        // A record this version cannot read is no task (never trusted).
        Ok(serde_json::from_slice(&bytes)
            .ok()
            .map(|record| (version, record)))
    }
}

#[async_trait]
impl TaskStore for RedisTaskStore {
    async fn create(&self, record: TaskRecord) -> Result<(), TaskStoreError> {
        let bytes = self.encode(&record)?;
        let mut conn = self.redis.connection();
        let created: i64 = self
            .create
            .key(self.redis.key("task:", &record.task_id))
            .key(self.redis.key("tasks", ""))
            .arg(&record.task_id)
            .arg(bytes)
            .arg(record.ttl_ms.unwrap_or(0))
            .arg(now_ms())
            .arg(self.max_tasks)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| unavailable(&e))?;
        if created == 1 {
            Ok(())
        } else {
            Err(TaskStoreError::Full)
        }
    }

    async fn get(&self, task_id: &str) -> Result<Option<TaskRecord>, TaskStoreError> {
        Ok(self.read(task_id).await?.map(|(_, record)| record))
    }

    async fn update(
        &self,
        task_id: &str,
        change: TaskChange,
    ) -> Result<Option<TaskRecord>, TaskStoreError> {
        for _ in 0..MAX_ATTEMPTS {
            let Some((version, mut record)) = self.read(task_id).await? else {
                return Ok(None);
            };
            let before = record.clone();
            change.clone().apply(&mut record, now_ms());
            if record == before {
                // Nothing to write (a terminal task, a lease already past).
                return Ok(Some(record));
            }
            let bytes = self.encode(&record)?;
            let mut conn = self.redis.connection();
            let swapped: i64 = self
                .swap
                .key(self.redis.key("task:", task_id))
                .arg(version)
                .arg(version + 1)
                .arg(bytes)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| unavailable(&e))?;
            if swapped == 1 {
                return Ok(Some(record));
            }
        }
        Err(TaskStoreError::Unavailable(format!(
            "task {task_id} kept changing under {MAX_ATTEMPTS} attempts"
        )))
    }

    /// Shared by every replica: leases apply.
    fn is_shared(&self) -> bool {
        true
    }
}
