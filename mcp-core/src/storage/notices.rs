//! [`NotificationBus`]: server-wide notices shared by the replicas of one
//! deployment, and [`InProcessBus`], the bus of servers in one process.

use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

/// One notice carried to the other replicas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum BusEvent {
    /// `notify_resource_updated(uri)`: subscribers of `uri` (or of a URI
    /// above it) hear `notifications/resources/updated`.
    ResourceUpdated {
        /// The resource that changed.
        uri: String,
    },
    /// The tool catalog changed (`add_tool`, `remove_tool`): listeners
    /// that asked for `toolsListChanged` hear
    /// `notifications/tools/list_changed`.
    ToolsListChanged,
    /// The resources or resource templates changed (`add_resource`,
    /// `remove_resource`, `remove_resource_template`): listeners that asked
    /// for `resourcesListChanged` hear
    /// `notifications/resources/list_changed`.
    ResourcesListChanged,
    /// The prompts changed (`add_prompt`, `remove_prompt`): listeners that
    /// asked for `promptsListChanged` hear
    /// `notifications/prompts/list_changed`.
    PromptsListChanged,
    /// A task changed in the shared task store: listens watching it
    /// (`taskIds`) hear `notifications/tasks` with its new state, read
    /// from the store.
    TaskChanged {
        /// The task's id.
        task_id: String,
    },
}

/// Where a bus hands the events of other replicas: the server installs
/// one at build ([`NotificationBus::attach`]). Called from the bus's own
/// task; it returns at once (delivery runs on a task of its own).
pub type BusSink = Arc<dyn Fn(BusEvent) + Send + Sync>;

/// Carries notices between the replicas of a deployment.
///
/// A server's notices (a resource changed, its tool, resource or prompt
/// list changed, a task changed) reach the listeners held by the process
/// that made them. With several replicas behind a load balancer, a
/// `subscriptions/listen` held by replica B must also hear of a
/// [`notify_resource_updated`](crate::McpServer::notify_resource_updated)
/// made on replica A. A bus carries each notice to the other replicas,
/// which deliver it to their own listeners as if it had been made there.
///
/// Give a server one in its [`Storage`](super::Storage)
/// ([`Storage::with_notices`](super::Storage::with_notices)). Without one
/// (the default) notices stay in their process and nothing in the request
/// path changes. [`InProcessBus`] links servers of one process (tests, or
/// several servers on one runtime); the `redis` feature's
/// `RedisNotificationBus` links processes through Redis pub/sub.
///
/// The bus is best effort, like the notifications themselves: a notice
/// published while the bus is down is lost (a listener re-reads what it
/// watches when it reconnects).
#[async_trait]
pub trait NotificationBus: Send + Sync + 'static {
    /// Sends `event` to the other replicas (never back to this one). A
    /// failure is the bus's to log; the notice is then lost.
    ///
    /// # Cancel safety
    /// Dropping the future may or may not have sent the event.
    async fn publish(&self, event: BusEvent);

    /// Installs the sink for the events other replicas publish; called once
    /// by [`McpServerBuilder::build`](crate::McpServerBuilder::build).
    /// Events arriving before it are dropped.
    fn attach(&self, sink: BusSink);

    /// Completes once notices of other replicas reach this one (a bus that
    /// subscribes to a shared channel: once it has subscribed). Default:
    /// at once. A replica may wait on it before announcing itself.
    ///
    /// # Cancel safety
    /// Cancel-safe: it only waits.
    async fn ready(&self) {}
}

/// A bus linking servers in one process: each server gets a member
/// ([`join`](Self::join)); what one publishes reaches every other member.
/// The hub [`new`](Self::new) returns is no member (give servers members):
/// what it publishes reaches every member.
///
/// ```
/// use mcp_core::storage::{InProcessBus, Storage};
/// use mcp_core::McpServer;
///
/// let hub = InProcessBus::new();
/// let on = |bus| Storage::memory().with_notices(bus);
/// let a = McpServer::builder().server_info("a", "1").storage(on(hub.join())).build();
/// let b = McpServer::builder().server_info("b", "1").storage(on(hub.join())).build();
/// assert!(a.is_ok() && b.is_ok());
/// ```
#[derive(Clone, Default)]
pub struct InProcessBus {
    members: Arc<Mutex<Vec<Option<BusSink>>>>,
    me: Option<usize>,
}

impl std::fmt::Debug for InProcessBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessBus")
            .field("member", &self.me)
            .finish_non_exhaustive()
    }
}

impl InProcessBus {
    /// A new hub with no member.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new member of this hub, for one server.
    #[must_use]
    pub fn join(&self) -> Self {
        let mut members = self.members.lock().unwrap_or_else(PoisonError::into_inner);
        members.push(None);
        Self {
            members: Arc::clone(&self.members),
            me: Some(members.len() - 1),
        }
    }
}

#[async_trait]
impl NotificationBus for InProcessBus {
    async fn publish(&self, event: BusEvent) {
        let sinks: Vec<BusSink> = self
            .members
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != self.me)
            .filter_map(|(_, sink)| sink.clone())
            .collect();
        for sink in sinks {
            sink(event.clone());
        }
    }

    fn attach(&self, sink: BusSink) {
        let mut members = self.members.lock().unwrap_or_else(PoisonError::into_inner);
        // The hub itself is no member: nothing to attach.
        if let Some(slot) = self.me.and_then(|i| members.get_mut(i)) {
            *slot = Some(sink);
        }
    }
}
