//! The tool catalog: fixed at build time, or *live* (tools added and
//! removed while serving). Either way `tools/list` is served from a
//! listing serialized once per catalog version, never per request; a live
//! change swaps in a new version and tells the clients that listen.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::registry::Registry;
use super::{BuildError, McpServer};
use crate::context::Outbound;
use crate::handler::tool::McpToolDef;
use crate::protocol::Tool;
use crate::session::Session;

/// One version of the tools.
#[derive(Clone, Default)]
pub(crate) struct ToolCatalog {
    pub(crate) tools: Registry<McpToolDef>,
    /// The `tools` array of `tools/list`, serialized once (`None` when a
    /// tool's visibility depends on the caller).
    pub(crate) listing: Option<Arc<Box<RawValue>>>,
    /// A tool declares OAuth scopes.
    pub(crate) scoped: bool,
}

impl ToolCatalog {
    pub(crate) fn new(tools: Registry<McpToolDef>) -> Self {
        let scoped = tools.iter().any(|t| !t.scopes().is_empty());
        let listing = if scoped || tools.iter().any(McpToolDef::has_visible_hook) {
            None
        } else {
            let all: Vec<&Tool> = tools.iter().map(McpToolDef::tool).collect();
            serde_json::value::to_raw_value(&all).ok().map(Arc::new)
        };
        Self {
            tools,
            listing,
            scoped,
        }
    }
}

/// The tools of a server.
pub(crate) enum Tools {
    /// Set at build time: read without any lock.
    Fixed(ToolCatalog),
    /// Changeable while serving: each request reads the current version
    /// (the flag: whether it has a scoped tool, read without the lock).
    Live(RwLock<Arc<ToolCatalog>>, AtomicBool),
}

/// The catalog version a request uses, held for its duration.
pub(crate) enum Snapshot<'a> {
    Fixed(&'a ToolCatalog),
    Live(Arc<ToolCatalog>),
}

impl std::ops::Deref for Snapshot<'_> {
    type Target = ToolCatalog;
    fn deref(&self) -> &ToolCatalog {
        match self {
            Self::Fixed(c) => c,
            Self::Live(c) => c,
        }
    }
}

impl Tools {
    #[inline]
    pub(crate) fn snapshot(&self) -> Snapshot<'_> {
        match self {
            Self::Fixed(c) => Snapshot::Fixed(c),
            Self::Live(c, _) => Snapshot::Live(Arc::clone(
                &c.read().unwrap_or_else(PoisonError::into_inner),
            )),
        }
    }

    pub(crate) fn is_live(&self) -> bool {
        matches!(self, Self::Live(..))
    }

    /// True when a tool declares scopes, without taking a snapshot.
    #[inline]
    pub(crate) fn scoped(&self) -> bool {
        match self {
            Self::Fixed(c) => c.scoped,
            Self::Live(_, scoped) => scoped.load(Ordering::Relaxed),
        }
    }

    /// Applies `change` to a copy of the current version and swaps it in;
    /// `None` for a fixed catalog. The change's result comes back.
    pub(crate) fn change<R>(
        &self,
        change: impl FnOnce(&mut Registry<McpToolDef>) -> R,
    ) -> Option<R> {
        let Self::Live(current, scoped) = self else {
            return None;
        };
        let mut current = current.write().unwrap_or_else(PoisonError::into_inner);
        let mut tools = current.tools.clone();
        let result = change(&mut tools);
        let next = ToolCatalog::new(tools);
        scoped.store(next.scoped, Ordering::Relaxed);
        *current = Arc::new(next);
        Some(result)
    }
}

/// Who is told when a live catalog changes: legacy sessions that
/// initialized, and 2026-07-28 `subscriptions/listen` requests that asked
/// for `toolsListChanged`.
#[derive(Default)]
pub(crate) struct ListListeners {
    listeners: Mutex<Vec<Listener>>,
}

struct Listener {
    session: Session,
    outbound: Arc<dyn Outbound>,
    /// The listen request's id (2026-07-28), tagged on each notification.
    listen: Option<Value>,
}

impl ListListeners {
    pub(crate) fn add(
        &self,
        session: &Session,
        outbound: &Arc<dyn Outbound>,
        listen: Option<Value>,
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
            Some(known) => known.outbound = Arc::clone(outbound),
            None => all.push(Listener {
                session: session.clone(),
                outbound: Arc::clone(outbound),
                listen,
            }),
        }
    }

    pub(crate) fn remove_listen(&self, session: &Session, id: &Value) {
        let mut all = self
            .listeners
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.retain(|l| !(l.session.same_as(session) && l.listen.as_ref() == Some(id)));
    }

    /// Sends `notifications/tools/list_changed` to every listener; how
    /// many took it.
    pub(crate) async fn tools_changed(&self) -> usize {
        let targets: Vec<(Arc<dyn Outbound>, Option<Value>)> = {
            let mut all = self
                .listeners
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            all.retain(|l| !l.session.is_closed());
            all.iter()
                .map(|l| (Arc::clone(&l.outbound), l.listen.clone()))
                .collect()
        };
        super::features::send_tagged(targets, "notifications/tools/list_changed", &Map::new()).await
    }
}

impl McpServer {
    /// Adds a tool to a [live](crate::McpServerBuilder::live_tools) catalog
    /// while serving; returns how many listening clients were told (see
    /// [`live_tools`](crate::McpServerBuilder::live_tools)). Calls that
    /// started before finish with the catalog they started with.
    ///
    /// # Errors
    /// [`BuildError::CatalogNotLive`], [`BuildError::DuplicateTool`], or
    /// [`BuildError::MissingState`] for a tool needing state the server
    /// does not have.
    ///
    /// # Cancel safety
    /// The tool is added before the first `.await`; dropping the future
    /// only skips notifying the remaining clients.
    pub async fn add_tool(&self, tool: impl Into<McpToolDef>) -> Result<usize, BuildError> {
        let mut tool = tool.into();
        tool.default_timeout(self.inner.tool_timeout);
        if !self.inner.tools.is_live() {
            return Err(BuildError::CatalogNotLive);
        }
        if let Some((_, type_name)) = tool
            .required_state
            .iter()
            .find(|(id, _)| !self.inner.state.contains(*id))
        {
            return Err(BuildError::MissingState {
                handler: format!("tool `{}`", tool.name()),
                type_name,
            });
        }
        let name = tool.name().to_owned();
        let added = self
            .inner
            .tools
            .change(|tools| tools.insert(name.clone(), tool))
            .unwrap_or(false);
        if !added {
            return Err(BuildError::DuplicateTool(name));
        }
        Ok(self.tools_changed().await)
    }

    /// Removes a tool from a [live](crate::McpServerBuilder::live_tools)
    /// catalog; `None` when the catalog is not live or has no such tool,
    /// else how many listening clients were told.
    ///
    /// # Cancel safety
    /// As for [`add_tool`](Self::add_tool).
    pub async fn remove_tool(&self, name: &str) -> Option<usize> {
        self.inner
            .tools
            .change(|tools| tools.remove(name).is_some())
            .filter(|removed| *removed)?;
        Some(self.tools_changed().await)
    }

    /// Tells the listeners here, and the other replicas through the bus,
    /// that the catalog changed; how many listeners here took it.
    async fn tools_changed(&self) -> usize {
        let sent = self.inner.list_listeners.tools_changed().await;
        if let Some(bus) = &self.inner.bus {
            bus.publish(crate::bus::BusEvent::ToolsListChanged).await;
        }
        sent
    }

    /// Registers a legacy session that initialized (live catalogs only).
    pub(crate) fn listen_for_list_changes(
        &self,
        session: &Session,
        outbound: Option<&Arc<dyn Outbound>>,
    ) {
        if let (true, Some(outbound)) = (self.inner.tools.is_live(), outbound) {
            self.inner.list_listeners.add(session, outbound, None);
        }
    }
}
