//! [`StateStore`]: where per-principal state lives (the values behind
//! [`Handle`](crate::state::Handle)s and
//! [`PrincipalState`](crate::state::PrincipalState)), and
//! [`InMemoryStateStore`], the default.
//!
//! A store keeps opaque bytes under a [`StateKey`] (principal, kind, id)
//! with a version, and applies three rules it alone can apply atomically:
//! an entry idle longer than [`StateLimits::idle_ttl`] is expired (reported
//! as [`StateLookup::Expired`] for [`EXPIRED_KEPT`] afterwards, then
//! forgotten), a write happens only if the entry's version is still the
//! one read (compare-and-set: no update is lost when two replicas change
//! one entry at once), and a principal's live entries never exceed
//! [`StateLimits::max_bytes_per_principal`].

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;

/// How long an expired entry is still reported as expired (rather than
/// unknown): one day.
pub const EXPIRED_KEPT: Duration = Duration::from_secs(24 * 60 * 60);

/// Which entry: whose it is, its kind (`cart`, `conversation`, …) and its
/// id (empty for state keyed by the principal alone).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StateKey {
    /// The principal the entry belongs to.
    pub principal: String,
    /// The kind of state.
    pub kind: String,
    /// The entry's id within the principal and kind; empty for
    /// principal-keyed state.
    pub id: String,
}

impl StateKey {
    /// The bytes an entry of `value_len` bytes counts against its
    /// principal's cap: the value, its kind and its id.
    pub fn charged(&self, value_len: usize) -> usize {
        value_len + self.kind.len() + self.id.len()
    }
}

/// The bounds a store applies (set on the server builder:
/// [`state_ttl`](crate::McpServerBuilder::state_ttl) and
/// [`state_byte_cap`](crate::McpServerBuilder::state_byte_cap)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLimits {
    /// An entry not read nor written for this long is expired.
    pub idle_ttl: Duration,
    /// At most this many bytes of live entries per principal (see
    /// [`StateKey::charged`]).
    pub max_bytes_per_principal: usize,
}

impl StateLimits {
    /// One hour idle, 1 MiB per principal.
    pub const DEFAULT: Self = Self {
        idle_ttl: Duration::from_secs(60 * 60),
        max_bytes_per_principal: 1 << 20,
    };
}

impl Default for StateLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What [`StateStore::load`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateLookup {
    /// The entry, with its version; its idle time starts again.
    Found {
        /// The version to give [`StateStore::write`].
        version: u64,
        /// The stored bytes.
        value: Vec<u8>,
    },
    /// The entry expired (within the last [`EXPIRED_KEPT`]).
    Expired,
    /// No such entry: never made for this principal, removed, or expired
    /// long ago.
    Missing,
}

/// What [`StateStore::write`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateWrite {
    /// Written; the entry's new version.
    Written {
        /// The new version.
        version: u64,
    },
    /// The entry changed since it was read (or, for a creation, a live
    /// entry exists): read it again and retry.
    Conflict,
    /// The principal's live entries would exceed the cap.
    OverCap {
        /// Bytes the principal's other live entries hold.
        used: usize,
        /// The cap.
        cap: usize,
    },
    /// The entry expired meanwhile.
    Expired,
    /// The entry is gone (removed, or expired long ago).
    Missing,
}

/// A store that cannot be reached or failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateStoreError(pub String);

impl fmt::Display for StateStoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the state store is unavailable: {}", self.0)
    }
}

impl std::error::Error for StateStoreError {}

/// Where per-principal state lives. Shared stores (the `redis` feature's
/// `RedisStateStore`) serve every replica. Each implementation applies
/// three rules atomically: an entry idle longer than
/// [`StateLimits::idle_ttl`] is expired (reported as
/// [`StateLookup::Expired`] for [`EXPIRED_KEPT`], then forgotten); a write
/// happens only if the entry's version is still the one read; a
/// principal's live entries never exceed
/// [`StateLimits::max_bytes_per_principal`].
#[async_trait]
pub trait StateStore: Send + Sync + 'static {
    /// The entry under `key` and its version, restarting its idle time.
    ///
    /// # Errors
    /// The store is unreachable.
    async fn load(
        &self,
        key: &StateKey,
        limits: &StateLimits,
    ) -> Result<StateLookup, StateStoreError>;

    /// Writes `value` under `key` if its version is still `expected`
    /// (`None`: creates it, unless a live entry is there). The new version
    /// is one more than `expected` (1 for a creation).
    ///
    /// # Errors
    /// The store is unreachable.
    async fn write(
        &self,
        key: &StateKey,
        expected: Option<u64>,
        value: Vec<u8>,
        limits: &StateLimits,
    ) -> Result<StateWrite, StateStoreError>;

    /// Removes the entry under `key`; true when a live one was there.
    ///
    /// # Errors
    /// The store is unreachable.
    async fn remove(&self, key: &StateKey) -> Result<bool, StateStoreError>;
}

/// One entry of [`InMemoryStateStore`].
struct Entry {
    /// `None`: expired (a tombstone, kept [`EXPIRED_KEPT`]).
    value: Option<Vec<u8>>,
    version: u64,
    /// Last read or write; for a tombstone, when it expired.
    touched: Instant,
    /// The idle TTL it was written with: a sweep started by another
    /// principal's write (whose limits may differ, as kept results' do)
    /// expires it by its own.
    ttl: Duration,
    charged: usize,
}

/// The entries of one principal.
#[derive(Default)]
struct Principal {
    entries: HashMap<(String, String), Entry>,
}

impl Principal {
    /// Expires entries idle past their own TTL, forgets old tombstones,
    /// and returns the bytes the live entries hold.
    fn sweep(&mut self, now: Instant) -> usize {
        self.entries.retain(|_, e| match e.value {
            Some(_) if now.saturating_duration_since(e.touched) > e.ttl => {
                e.value = None;
                e.touched = now;
                true
            }
            Some(_) => true,
            None => now.saturating_duration_since(e.touched) <= EXPIRED_KEPT,
        });
        self.entries
            .values()
            .filter(|e| e.value.is_some())
            .map(|e| e.charged)
            .sum()
    }
}

/// Per-principal state in this process (the default): lost when the
/// process ends, not shared with other replicas. Every operation runs
/// under one lock held for no `.await`, so each is atomic; idle time is
/// measured on Tokio's clock (`tokio::time::pause` moves it in tests).
#[derive(Default)]
pub struct InMemoryStateStore {
    principals: Mutex<HashMap<String, Principal>>,
    /// Writes since the last sweep of every principal.
    writes: std::sync::atomic::AtomicUsize,
}

impl fmt::Debug for InMemoryStateStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InMemoryStateStore").finish_non_exhaustive()
    }
}

/// After this many writes, every principal is swept (so the entries of
/// principals that never come back are dropped too).
const SWEEP_EVERY: usize = 1024;

impl InMemoryStateStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Principal>> {
        // No code panics while holding it; a poisoned map is still consistent.
        self.principals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl StateStore for InMemoryStateStore {
    async fn load(
        &self,
        key: &StateKey,
        limits: &StateLimits,
    ) -> Result<StateLookup, StateStoreError> {
        let now = Instant::now();
        let mut all = self.lock();
        let Some(principal) = all.get_mut(&key.principal) else {
            return Ok(StateLookup::Missing);
        };
        let id = (key.kind.clone(), key.id.clone());
        let Some(entry) = principal.entries.get_mut(&id) else {
            return Ok(StateLookup::Missing);
        };
        let idle = now.saturating_duration_since(entry.touched);
        Ok(match &entry.value {
            None if idle > EXPIRED_KEPT => {
                principal.entries.remove(&id);
                StateLookup::Missing
            }
            None => StateLookup::Expired,
            Some(_) if idle > limits.idle_ttl => {
                entry.value = None;
                entry.touched = now;
                StateLookup::Expired
            }
            Some(value) => {
                let found = StateLookup::Found {
                    version: entry.version,
                    value: value.clone(),
                };
                entry.touched = now;
                found
            }
        })
    }

    async fn write(
        &self,
        key: &StateKey,
        expected: Option<u64>,
        value: Vec<u8>,
        limits: &StateLimits,
    ) -> Result<StateWrite, StateStoreError> {
        let now = Instant::now();
        let mut all = self.lock();
        if self
            .writes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            % SWEEP_EVERY
            == SWEEP_EVERY - 1
        {
            all.retain(|_, p| {
                p.sweep(now);
                !p.entries.is_empty()
            });
        }
        let principal = all.entry(key.principal.clone()).or_default();
        let used_all = principal.sweep(now);
        let id = (key.kind.clone(), key.id.clone());
        let current = principal.entries.get(&id);
        let live = current.filter(|e| e.value.is_some());
        match (expected, current) {
            (None, _) if live.is_some() => return Ok(StateWrite::Conflict),
            (None, _) => {}
            (Some(_), None) => return Ok(StateWrite::Missing),
            (Some(_), Some(e)) if e.value.is_none() => return Ok(StateWrite::Expired),
            (Some(v), Some(e)) if e.version != v => return Ok(StateWrite::Conflict),
            (Some(_), Some(_)) => {}
        }
        let used = used_all - live.map_or(0, |e| e.charged);
        let charged = key.charged(value.len());
        if used.saturating_add(charged) > limits.max_bytes_per_principal {
            return Ok(StateWrite::OverCap {
                used,
                cap: limits.max_bytes_per_principal,
            });
        }
        let version = expected.map_or(1, |v| v.saturating_add(1));
        principal.entries.insert(
            id,
            Entry {
                value: Some(value),
                version,
                touched: now,
                ttl: limits.idle_ttl,
                charged,
            },
        );
        Ok(StateWrite::Written { version })
    }

    async fn remove(&self, key: &StateKey) -> Result<bool, StateStoreError> {
        let mut all = self.lock();
        let Some(principal) = all.get_mut(&key.principal) else {
            return Ok(false);
        };
        let removed = principal
            .entries
            .remove(&(key.kind.clone(), key.id.clone()));
        Ok(removed.is_some_and(|e| e.value.is_some()))
    }
}
