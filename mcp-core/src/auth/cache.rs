//! A bounded table of verification answers, keyed by a SHA-256 of the
//! token (the token itself is not kept), each until its own deadline.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::verifier::Rejection;
use crate::context::AuthInfo;

/// A token's cache key.
pub(crate) type TokenKey = [u8; 32];

pub(crate) fn key_of(token: &str) -> TokenKey {
    Sha256::digest(token.as_bytes()).into()
}

struct Entry {
    until: Instant,
    answer: Result<AuthInfo, Rejection>,
}

/// At most `max` answers; a full table drops expired ones, then the one
/// closest to expiring.
pub(crate) struct AnswerCache {
    max: usize,
    ttl: Duration,
    table: Mutex<HashMap<TokenKey, Entry>>,
}

impl AnswerCache {
    pub(crate) fn new(max: usize, ttl: Duration) -> Self {
        Self {
            max,
            ttl,
            table: Mutex::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TokenKey, Entry>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer kept for `key`, while it is fresh.
    pub(crate) fn get(&self, key: &TokenKey) -> Option<Result<AuthInfo, Rejection>> {
        if self.max == 0 {
            return None;
        }
        let table = self.lock();
        let hit = table.get(key)?;
        (hit.until > Instant::now()).then(|| hit.answer.clone())
    }

    /// The longest an answer is kept.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Keeps `answer` for `life`, at most the cache's TTL (see
    /// [`reusable_for`](super::claims::reusable_for), which bounds it by
    /// the token's `exp`).
    pub(crate) fn put(&self, key: TokenKey, answer: &Result<AuthInfo, Rejection>, life: Duration) {
        if self.max == 0 {
            return;
        }
        let ttl = self.ttl.min(life);
        if ttl.is_zero() {
            return;
        }
        let now = Instant::now();
        let mut table = self.lock();
        if table.len() >= self.max && !table.contains_key(&key) {
            table.retain(|_, e| e.until > now);
            if table.len() >= self.max {
                let oldest = table.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| *k);
                if let Some(oldest) = oldest {
                    table.remove(&oldest);
                }
            }
        }
        table.insert(
            key,
            Entry {
                until: now + ttl,
                answer: answer.clone(),
            },
        );
    }
}
