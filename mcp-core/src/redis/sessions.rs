//! `RedisSessionStore`: legacy session metadata in Redis.

use std::time::Duration;

use async_trait::async_trait;

use super::RedisBackend;
use crate::storage::{SessionRecord, SessionStore};

/// The largest session record kept (a client's capabilities and info
/// are small; a larger record is not saved, so that session stays on its
/// replica).
const MAX_RECORD_BYTES: usize = 256 * 1024;

/// A [`SessionStore`] on a [`RedisBackend`]: one JSON value per session
/// under `{prefix}session:{id}`, expiring with the session's idle TTL
/// (each save renews it). Give it to every replica's
/// [`Storage`](crate::storage::Storage) (as [`RedisBackend::storage`]
/// does).
#[derive(Debug, Clone)]
pub struct RedisSessionStore {
    redis: RedisBackend,
}

impl RedisSessionStore {
    /// A session store on `redis`.
    pub fn new(redis: RedisBackend) -> Self {
        Self { redis }
    }
}

#[async_trait]
impl SessionStore for RedisSessionStore {
    async fn save(&self, id: &str, record: &SessionRecord, ttl: Duration) -> Result<(), String> {
        let bytes = serde_json::to_vec(record).map_err(|e| e.to_string())?;
        if bytes.len() > MAX_RECORD_BYTES {
            return Err(format!(
                "session record of {} bytes, over {MAX_RECORD_BYTES}",
                bytes.len()
            ));
        }
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut conn = self.redis.connection();
        redis::cmd("SET")
            .arg(self.redis.key("session:", id))
            .arg(bytes)
            .arg("PX")
            .arg(ttl_ms)
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| e.to_string())
    }

    async fn load(&self, id: &str) -> Result<Option<SessionRecord>, String> {
        let mut conn = self.redis.connection();
        let bytes: Option<Vec<u8>> = redis::cmd("GET")
            .arg(self.redis.key("session:", id))
            .query_async(&mut conn)
            .await
            .map_err(|e| e.to_string())?;
        Ok(bytes
            .filter(|b| b.len() <= MAX_RECORD_BYTES)
            .and_then(|b| serde_json::from_slice(&b).ok()))
    }

    async fn remove(&self, id: &str) -> Result<(), String> {
        let mut conn = self.redis.connection();
        redis::cmd("DEL")
            .arg(self.redis.key("session:", id))
            .query_async::<()>(&mut conn)
            .await
            .map_err(|e| e.to_string())
    }
}
