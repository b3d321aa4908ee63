//! The state a server keeps across calls and replicas, behind one
//! boundary: where tasks live ([`TaskStore`]), how notices reach the other
//! replicas ([`NotificationBus`]), where legacy HTTP sessions are
//! shared ([`SessionStore`]) and where per-principal state lives
//! ([`StateStore`], behind [`crate::state`]). A [`Storage`] bundles one of
//! each; give it to [`McpServerBuilder::storage`](crate::McpServerBuilder::storage).
//!
//! | part | default ([`Storage::memory`]) | shared |
//! |---|---|---|
//! | tasks | an in-memory store, made when a tool supports tasks | [`FileTaskStore`](crate::tasks::FileTaskStore) (one machine), the `redis` feature's `RedisTaskStore` |
//! | notices | none: they stay in this process | [`InProcessBus`] (servers of one process), the `redis` feature's `RedisNotificationBus` |
//! | legacy sessions | none: a session lives in the replica that made it | the `redis` feature's `RedisSessionStore` |
//! | per-principal state | [`InMemoryStateStore`] | the `redis` feature's `RedisStateStore` |
//!
//! The `redis` feature's `RedisBackend::storage` gives all four over one
//! Redis connection. The traits name no transport and no server internals,
//! so a store implements them knowing only the records it keeps.
//!
//! ```
//! use mcp_core::storage::{InProcessBus, Storage};
//! use mcp_core::tasks::InMemoryTaskStore;
//! use mcp_core::McpServer;
//!
//! let hub = InProcessBus::new();
//! let storage = Storage::memory()
//!     .with_tasks(InMemoryTaskStore::new(1_000))
//!     .with_notices(hub.join());
//! let server = McpServer::builder()
//!     .server_info("jobs", "1.0.0")
//!     .storage(storage)
//!     .build()
//!     .expect("valid server");
//! # let _ = server;
//! ```

mod notices;
mod sessions;
mod state;
mod task_store;

use std::fmt;
use std::sync::Arc;

pub use notices::{BusEvent, BusSink, InProcessBus, NotificationBus};
pub use sessions::{SessionRecord, SessionStore};
pub use state::{
    InMemoryStateStore, StateKey, StateLimits, StateLookup, StateStore, StateStoreError,
    StateWrite, EXPIRED_KEPT,
};
pub use task_store::{TaskChange, TaskStore, TaskStoreError};

/// Where a server keeps the state it shares across calls and replicas
/// (see the [module docs](self)). Cheap to clone.
#[derive(Clone, Default)]
pub struct Storage {
    tasks: Option<Arc<dyn TaskStore>>,
    notices: Option<Arc<dyn NotificationBus>>,
    sessions: Option<Arc<dyn SessionStore>>,
    state: Option<Arc<dyn StateStore>>,
}

impl fmt::Debug for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Storage")
            .field("tasks", &self.tasks.is_some())
            .field("notices", &self.notices.is_some())
            .field("sessions", &self.sessions.is_some())
            .field("state", &self.state.is_some())
            .finish()
    }
}

impl Storage {
    /// Everything in this process (the default): tasks in memory (a store
    /// made only when a tool supports tasks), notices to this process's
    /// listeners only, each legacy session in the replica that made it,
    /// per-principal state in an [`InMemoryStateStore`].
    pub fn memory() -> Self {
        Self::default()
    }

    /// Keeps tasks in `store`. The tasks extension is then offered even
    /// when no tool supports tasks (a server that runs the tasks another
    /// one stored, or only serves `tasks/*`).
    #[must_use]
    pub fn with_tasks(mut self, store: impl TaskStore) -> Self {
        self.tasks = Some(Arc::new(store));
        self
    }

    /// Shares notices with the other replicas through `bus`: a
    /// [`notify_resource_updated`](crate::McpServer::notify_resource_updated),
    /// a change of a live tool catalog or of a task made here reaches the
    /// listeners held by the other replicas, and theirs reach the ones
    /// held here.
    #[must_use]
    pub fn with_notices(mut self, bus: impl NotificationBus) -> Self {
        self.notices = Some(Arc::new(bus));
        self
    }

    /// Shares legacy HTTP session metadata through `store`, so that a
    /// session created on one replica is served by another (after the
    /// first one stopped, or when the balancer moves the client); see
    /// [`SessionRecord`] for what survives. Another replica serves a
    /// session only to its principal, so every replica must derive
    /// principals alike: the default principal does when the replicas
    /// share [`request_state_keys`](crate::McpServerBuilder::request_state_keys)
    /// (which they need anyway for `requestState`); an
    /// `HttpOptions::principal` hook or a resource server does by itself.
    /// With none of the three, `serve_http` refuses to serve and names this
    /// fix.
    #[must_use]
    pub fn with_sessions(mut self, store: impl SessionStore) -> Self {
        self.sessions = Some(Arc::new(store));
        self
    }

    /// Keeps per-principal state (the values behind
    /// [`Handle`](crate::state::Handle)s and
    /// [`PrincipalState`](crate::state::PrincipalState)) in `store`. Default:
    /// an [`InMemoryStateStore`] of the server's own.
    #[must_use]
    pub fn with_state(mut self, store: impl StateStore) -> Self {
        self.state = Some(Arc::new(store));
        self
    }

    /// The state store, when one was given.
    pub fn state(&self) -> Option<&Arc<dyn StateStore>> {
        self.state.as_ref()
    }

    /// The task store, when one was given.
    pub fn tasks(&self) -> Option<&Arc<dyn TaskStore>> {
        self.tasks.as_ref()
    }

    /// The notification bus, when one was given.
    pub fn notices(&self) -> Option<&Arc<dyn NotificationBus>> {
        self.notices.as_ref()
    }

    /// The legacy session store, when one was given.
    pub fn sessions(&self) -> Option<&Arc<dyn SessionStore>> {
        self.sessions.as_ref()
    }
}
