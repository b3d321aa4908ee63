//! Who is told when a live part of the catalog changes: legacy sessions
//! that initialized (every live part), and 2026-07-28
//! `subscriptions/listen` requests (the parts they asked for:
//! `toolsListChanged`, `resourcesListChanged`, `promptsListChanged`).

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Map, Value};

use crate::context::Outbound;
use crate::session::Session;

/// A part of the catalog whose listing can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Prompts,
}

impl ListKind {
    pub(crate) const ALL: [Self; 3] = [Self::Tools, Self::Resources, Self::Prompts];

    /// The notification its listeners get.
    pub(crate) fn notification(self) -> &'static str {
        match self {
            Self::Tools => "notifications/tools/list_changed",
            Self::Resources => "notifications/resources/list_changed",
            Self::Prompts => "notifications/prompts/list_changed",
        }
    }

    /// The key a 2026-07-28 `subscriptions/listen` asks for it with.
    pub(crate) fn listen_key(self) -> &'static str {
        match self {
            Self::Tools => "toolsListChanged",
            Self::Resources => "resourcesListChanged",
            Self::Prompts => "promptsListChanged",
        }
    }

    /// Its bit in a [`Kinds`] mask.
    pub(crate) fn bit(self) -> Kinds {
        Kinds(match self {
            Self::Tools => 1,
            Self::Resources => 2,
            Self::Prompts => 4,
        })
    }
}

/// A set of [`ListKind`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub(crate) const ALL: Self = Self(7);

    pub(crate) fn with(self, kind: ListKind) -> Self {
        Self(self.0 | kind.bit().0)
    }

    pub(crate) fn has(self, kind: ListKind) -> bool {
        self.0 & kind.bit().0 != 0
    }

    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[derive(Default)]
pub(crate) struct ListListeners {
    listeners: Mutex<Vec<Listener>>,
}

struct Listener {
    session: Session,
    outbound: Arc<dyn Outbound>,
    /// The listen request's id (2026-07-28), tagged on each notification.
    listen: Option<Value>,
    /// The parts it hears of.
    kinds: Kinds,
}

impl ListListeners {
    pub(crate) fn add(
        &self,
        session: &Session,
        outbound: &Arc<dyn Outbound>,
        listen: Option<Value>,
        kinds: Kinds,
    ) {
        let mut all = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|l| !l.session.is_closed());
        // Registered again (a transport that learns a better channel once
        // the session exists): the newer channel wins.
        match all
            .iter_mut()
            .find(|l| l.session.same_as(session) && l.listen == listen)
        {
            Some(known) => {
                known.outbound = Arc::clone(outbound);
                known.kinds = kinds;
            }
            None => all.push(Listener {
                session: session.clone(),
                outbound: Arc::clone(outbound),
                listen,
                kinds,
            }),
        }
    }

    /// Drops the listeners of closed sessions (and with them their
    /// transports' channels).
    pub(crate) fn forget_closed(&self) {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|l| !l.session.is_closed());
    }

    /// How many listeners are held.
    pub(crate) fn len(&self) -> usize {
        self.listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    pub(crate) fn remove_listen(&self, session: &Session, id: &Value) {
        let mut all = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|l| !(l.session.same_as(session) && l.listen.as_ref() == Some(id)));
    }

    /// Sends `kind`'s `list_changed` notification to every listener of
    /// that part; how many took it.
    pub(crate) async fn changed(&self, kind: ListKind) -> usize {
        let targets: Vec<(Arc<dyn Outbound>, Option<Value>)> = {
            let mut all = self
                .listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.retain(|l| !l.session.is_closed());
            all.iter()
                .filter(|l| l.kinds.has(kind))
                .map(|l| (Arc::clone(&l.outbound), l.listen.clone()))
                .collect()
        };
        crate::server::features::send_tagged(targets, kind.notification(), &Map::new()).await
    }
}

impl super::Registry {
    /// Whether `kind`'s part of the catalog is live.
    pub(crate) fn is_live(&self, kind: ListKind) -> bool {
        match kind {
            ListKind::Tools => self.tools.is_live(),
            ListKind::Resources => self.resources.is_live(),
            ListKind::Prompts => self.prompts.is_live(),
        }
    }

    /// Tells the listeners here, and the other replicas through `bus`,
    /// that `kind`'s part changed; how many listeners here took it.
    pub(crate) async fn list_changed(
        &self,
        kind: ListKind,
        bus: Option<&Arc<dyn crate::storage::NotificationBus>>,
    ) -> usize {
        let sent = self.list_listeners.changed(kind).await;
        if let Some(bus) = bus {
            use crate::storage::BusEvent;
            let event = match kind {
                ListKind::Tools => BusEvent::ToolsListChanged,
                ListKind::Resources => BusEvent::ResourcesListChanged,
                ListKind::Prompts => BusEvent::PromptsListChanged,
            };
            bus.publish(event).await;
        }
        sent
    }

    /// A legacy session initialized: it hears of changes to the live
    /// parts of the catalog, and (feature `metrics`, with a
    /// [`Metrics`](crate::intercept::Metrics) interceptor) counts as open
    /// until it closes. Called again for the same session (a transport
    /// that learns a better channel once the session exists), the newer
    /// channel wins and it is counted once.
    pub(crate) fn listen_for_list_changes(
        &self,
        session: &Session,
        outbound: Option<&Arc<dyn Outbound>>,
    ) {
        #[cfg(feature = "metrics")]
        if self.count_sessions {
            crate::server::intercept::count_session(session);
        }
        let live = ListKind::ALL.iter().any(|k| self.is_live(*k));
        if let (true, Some(outbound)) = (live, outbound) {
            self.list_listeners.add(session, outbound, None, Kinds::ALL);
        }
    }
}
