//! Legacy session metadata shared by the replicas of a deployment
//! ([`SessionStore`], in the server's [`Storage`](crate::storage::Storage)).
//!
//! A 2025-era session lives in the table of the replica that created it.
//! With a store, its metadata is saved there when it is created and each
//! time it changes (initialize, `logging/setLevel`, a resource
//! subscription), and a replica that is asked for a session it does not
//! hold loads it from the store and serves it under the same id (same
//! principal only). What survives and what does not is listed on
//! [`SessionRecord`].

use std::sync::{Arc, Weak};

use crate::server::SubscriptionsHandle;
use std::time::Duration;

use super::call_messages::SessionOutbound;
use super::names::SESSION_NAME;
use super::sessions::{SessionEntry, SessionTable};
use crate::context::Outbound;
use crate::protocol::{ClientInfo, LoggingLevel, SUPPORTED_PROTOCOL_VERSIONS};
use crate::session::Session;

use crate::storage::{SessionRecord, SessionStore};

/// The longest session id looked up in the store (ours are 64 bytes).
const MAX_ID_BYTES: usize = 128;

/// What saving and restoring sessions needs of an endpoint: its server,
/// its store and its sessions' idle TTL.
pub(super) struct Sharing<'a> {
    pub(super) server: &'a crate::McpServer,
    pub(super) store: &'a Arc<dyn SessionStore>,
    pub(super) ttl: Duration,
}

/// Saves a session's metadata now and whenever it changes. Called once
/// per session entry (created or restored).
pub(super) fn persist(sharing: &Sharing<'_>, id: &Arc<str>, entry: &Arc<SessionEntry>) {
    let saver = Arc::new(Saver {
        store: Arc::clone(sharing.store),
        server: sharing.server.subscriptions_handle(),
        id: Arc::clone(id),
        entry: Arc::downgrade(entry),
        ttl: sharing.ttl,
        order: tokio::sync::Mutex::new(()),
    });
    let hook = Arc::clone(&saver);
    entry.session.on_change(Arc::new(move || {
        let saver = Arc::clone(&hook);
        let Some(entry) = saver.entry.upgrade() else {
            return;
        };
        let generation = entry.saves.ask();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { saver.save(generation).await });
        } else {
            entry.saves.finish(generation);
        }
    }));
    entry.session.changed();
}

/// How long a response waits for its session's saves (a store that does
/// not answer by then costs the session its survival, not the response).
const SETTLE_BOUND: Duration = Duration::from_secs(5);

/// Before a response goes out: waits until the saves its request caused
/// (to session `id`, named by the request or minted by its `initialize`)
/// are done, so another replica serving the next request sees them.
pub(super) async fn settle(table: &SessionTable, id: Option<&hyper::header::HeaderValue>) {
    let Some(entry) = id
        .and_then(|v| v.to_str().ok())
        .and_then(|id| table.peek(id))
    else {
        return;
    };
    entry.saves.settled(SETTLE_BOUND).await;
}

struct Saver {
    store: Arc<dyn SessionStore>,
    /// Weak: the server holds its sessions (through their subscriptions),
    /// a session's saver must not hold the server.
    server: SubscriptionsHandle,
    id: Arc<str>,
    entry: Weak<SessionEntry>,
    ttl: Duration,
    /// Saves run one at a time, each taking the state as it is then, so
    /// the last to run writes the latest.
    order: tokio::sync::Mutex<()>,
}

impl Saver {
    /// Saves the session as it is now, then marks `generation` done.
    async fn save(&self, generation: u64) {
        let _turn = self.order.lock().await;
        let Some(entry) = self.entry.upgrade() else {
            return;
        };
        let subscriptions = match entry.session.is_closed() {
            true => None,
            false => self.server.legacy_uris(&entry.session),
        };
        if let Some(subscriptions) = subscriptions {
            let record = record_of(subscriptions, &entry);
            if let Err(e) = self.store.save(&self.id, &record, self.ttl).await {
                tracing::warn!(error = %e, "a legacy session was not saved to the session store");
            }
        }
        entry.saves.finish(generation);
    }
}

fn record_of(subscriptions: Vec<String>, entry: &SessionEntry) -> SessionRecord {
    let client = entry.session.client();
    SessionRecord {
        principal: entry.principal().map(str::to_owned),
        protocol_version: client.as_ref().map(|c| c.protocol_version.to_owned()),
        capabilities: client
            .as_ref()
            .and_then(|c| serde_json::to_value(&c.capabilities).ok()),
        client_info: client
            .as_ref()
            .and_then(|c| c.implementation.as_ref())
            .and_then(|i| serde_json::to_value(i).ok()),
        log_level: entry
            .session
            .log_level()
            .map(|level| level.as_str().to_owned()),
        subscriptions,
    }
}

/// Before a request naming a session this replica does not hold: loads
/// it from the store and adopts it under the same id, when the store has
/// it for this principal. Anything else leaves the table as it is (the
/// request then meets the usual 404).
pub(super) async fn restore(
    sharing: &Sharing<'_>,
    table: &SessionTable,
    parts: &hyper::http::request::Parts,
    principal: impl FnOnce() -> Option<Arc<str>>,
) {
    let Some(id) = parts
        .headers
        .get(&SESSION_NAME)
        .and_then(|v| v.to_str().ok())
    else {
        return;
    };
    if id.is_empty() || id.len() > MAX_ID_BYTES || table.holds(id) {
        return;
    }
    let record = match sharing.store.load(id).await {
        Ok(Some(record)) => record,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %e, "the session store failed; the session is not restored");
            return;
        }
    };
    let principal = principal();
    if record.principal.as_deref() != principal.as_deref() {
        return;
    }
    let session = Session::new();
    if let Some(client) = client_of(&record) {
        session.set_client(client);
    }
    if let Some(level) = record
        .log_level
        .as_deref()
        .and_then(|l| l.parse::<LoggingLevel>().ok())
    {
        session.set_log_level(level);
    }
    let Some((id, entry)) = table.adopt(id, session, principal) else {
        return;
    };
    let server = sharing.server;
    let outbound: Arc<dyn Outbound> = Arc::new(SessionOutbound(Arc::clone(&entry)));
    server.restore_subscriptions(&entry.session, &outbound, &record.subscriptions);
    server.listen_for_list_changes(&entry.session, Some(&outbound));
    persist(sharing, &id, &entry);
}

/// Forgets a deleted session in the store.
pub(super) async fn forget(store: &Arc<dyn SessionStore>, id: &str) {
    if id.is_empty() || id.len() > MAX_ID_BYTES {
        return;
    }
    if let Err(e) = store.remove(id).await {
        tracing::warn!(error = %e, "a deleted session stays in the session store until its TTL");
    }
}

/// The client a record describes, when it names a version we speak.
fn client_of(record: &SessionRecord) -> Option<ClientInfo> {
    let version = record.protocol_version.as_deref()?;
    let protocol_version = SUPPORTED_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == version)?;
    Some(ClientInfo {
        protocol_version,
        capabilities: record
            .capabilities
            .clone()
            .and_then(|c| serde_json::from_value(c).ok())
            .unwrap_or_default(),
        implementation: record
            .client_info
            .clone()
            .and_then(|i| serde_json::from_value(i).ok()),
    })
}
