//! State shared by the replicas of one deployment, on Redis (feature
//! `redis`): the four parts of a [`Storage`](crate::storage::Storage)
//! (tasks, notices, legacy session metadata and per-principal state),
//! implemented on the
//! [storage traits](crate::storage) alone, knowing no transport.
//!
//! One [`RedisBackend`] (a URL and a key prefix) hands out all four at
//! once ([`RedisBackend::storage`]), or each apart:
//!
//! | what | type | keys |
//! |---|---|---|
//! | tasks ([`TaskStore`](crate::storage::TaskStore)) | [`RedisTaskStore`] | `{prefix}task:{id}` (a hash: `v` version, `rec` JSON record, `PEXPIRE` = the task's TTL), `{prefix}tasks` (a sorted set of ids by expiry, bounding how many live) |
//! | notices ([`NotificationBus`](crate::storage::NotificationBus)) | [`RedisNotificationBus`] | pub/sub channel `{prefix}bus` |
//! | legacy sessions ([`SessionStore`](crate::storage::SessionStore)) | [`RedisSessionStore`] | `{prefix}session:{id}` (JSON, `PEXPIRE` = the session's idle TTL) |
//! | per-principal state ([`StateStore`](crate::storage::StateStore)) | [`RedisStateStore`] | `{prefix}state:{principal hash}` (a hash of the principal's entries, each a compare-and-set in one Lua script) |
//!
//! **Atomicity.** Every task change is read–apply–compare-and-set: the
//! record is read with its version, [`TaskChange::apply`](crate::storage::TaskChange::apply)
//! runs here (one set of rules for every store), and a Lua script writes
//! the new record only if the version is still the one read (else the
//! change is applied again to the newer record, a bounded number of
//! times). Creation is one script too (bound on live tasks, TTL).
//!
//! **Replica death.** A task running on a replica holds a lease that the
//! replica renews (see [`TaskLimits::lease_ms`](crate::tasks::TaskLimits::lease_ms));
//! once it lapses, the next read through any replica fails the task with
//! a `-32603` saying its process stopped.
//!
//! **Redis down.** Every operation has a response timeout
//! ([`RedisBackend::timeout`], 2 s by default): a task call then fails
//! with `-32603 the task store is unavailable` (the cause is logged), other
//! calls are served as usual, notices stay in their process, and the
//! connection comes back by itself once Redis answers again.
//!
//! **What a legacy session keeps across replicas** ([`RedisSessionStore`],
//! the sessions of [`RedisBackend::storage`]):
//! its id, principal, negotiated protocol version, the client's
//! capabilities and info, its `logging/setLevel` level and its resource
//! subscriptions. What does not survive its replica: requests in flight
//! there (their answers and progress are lost; the client retries), a
//! server→client request waiting for its answer (elicitation, sampling,
//! roots: the answer posted to another replica finds no one waiting, so
//! such a call needs the balancer's affinity), and an open GET stream
//! (the client opens a new one, on whichever replica).
//!
//! The connection is `redis-rs`'s `ConnectionManager` (one multiplexed
//! connection, reconnected on failure) plus one pub/sub connection per
//! bus.

mod bus;
mod sessions;
mod state;
mod task_store;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use bus::RedisNotificationBus;
pub use sessions::RedisSessionStore;
pub use state::RedisStateStore;
pub use task_store::RedisTaskStore;

/// Why a [`RedisBackend`] could not be set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSetupError(String);

impl fmt::Display for RedisSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "redis: {}", self.0)
    }
}

impl std::error::Error for RedisSetupError {}

/// The default [`RedisBackend::timeout`].
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// The default key prefix, `mcp:`.
pub const DEFAULT_REDIS_PREFIX: &str = "mcp:";

/// A Redis server and a key prefix: where the shared state of one
/// deployment lives. Cheap to clone. See the [module docs](self).
///
/// ```no_run
/// use mcp_core::redis::RedisBackend;
/// use mcp_core::McpServer;
///
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let redis = RedisBackend::open("redis://127.0.0.1:6379/")?;
/// let server = McpServer::builder()
///     .server_info("jobs", "1.0.0")
///     .storage(redis.storage())
///     .build()?;
/// # let _ = server; Ok(()) }
/// ```
#[derive(Clone)]
pub struct RedisBackend {
    client: redis::Client,
    manager: ConnectionManager,
    prefix: Arc<str>,
    timeout: Duration,
}

impl fmt::Debug for RedisBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBackend")
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RedisBackend {
    /// The Redis at `url` (`redis://host:port/db`), with the default
    /// prefix and timeout. Connects lazily: a server may start while Redis
    /// is down (its task calls fail until Redis is up). Call it inside a
    /// Tokio runtime.
    ///
    /// # Errors
    /// A URL that does not parse.
    ///
    /// # Panics
    /// Outside a Tokio runtime (the connection's task needs one).
    pub fn open(url: &str) -> Result<Self, RedisSetupError> {
        Self::open_with(url, DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT)
    }

    /// The same with a key `prefix` (deployments sharing one Redis use
    /// different prefixes) and a per-operation `timeout`.
    ///
    /// # Errors
    /// A URL that does not parse.
    ///
    /// # Panics
    /// Outside a Tokio runtime (the connection's task needs one).
    pub fn open_with(url: &str, prefix: &str, timeout: Duration) -> Result<Self, RedisSetupError> {
        let client = redis::Client::open(url).map_err(|e| RedisSetupError(e.to_string()))?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(timeout))
            .set_connection_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_millis(500));
        let manager = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(|e| RedisSetupError(e.to_string()))?;
        Ok(Self {
            client,
            manager,
            prefix: prefix.into(),
            timeout,
        })
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The per-operation timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A task store on this Redis holding at most 100 000 live tasks of
    /// at most 8 MiB each (see [`RedisTaskStore::with_limits`]).
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.clone())
    }

    /// A notification bus on this Redis's pub/sub. Its subscriber runs on
    /// a task of its own (started here, so call this inside a Tokio
    /// runtime), resubscribing after any failure.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn notification_bus(&self) -> RedisNotificationBus {
        RedisNotificationBus::start(self.clone())
    }

    /// A store of legacy session metadata on this Redis.
    pub fn session_store(&self) -> RedisSessionStore {
        RedisSessionStore::new(self.clone())
    }

    /// A store of per-principal state ([`crate::state`]) on this Redis.
    pub fn state_store(&self) -> RedisStateStore {
        RedisStateStore::new(self.clone())
    }

    /// All four parts of a [`Storage`](crate::storage::Storage) on this
    /// Redis, over its one connection (plus the bus's pub/sub one): the
    /// [`task_store`](Self::task_store), the
    /// [`notification_bus`](Self::notification_bus), the
    /// [`session_store`](Self::session_store) and the
    /// [`state_store`](Self::state_store). Give every replica the same
    /// URL and prefix.
    ///
    /// # Panics
    /// Outside a Tokio runtime (the bus's subscriber task needs one).
    pub fn storage(&self) -> crate::storage::Storage {
        crate::storage::Storage::memory()
            .with_tasks(self.task_store())
            .with_notices(self.notification_bus())
            .with_sessions(self.session_store())
            .with_state(self.state_store())
    }

    pub(crate) fn key(&self, kind: &str, id: &str) -> String {
        format!("{}{kind}{id}", self.prefix)
    }

    pub(crate) fn connection(&self) -> ConnectionManager {
        self.manager.clone()
    }
}

/// A Redis failure as the stores report it.
pub(crate) fn unavailable(e: &redis::RedisError) -> crate::storage::TaskStoreError {
    crate::storage::TaskStoreError::Unavailable(e.to_string())
}
