//! The registry: the server's record of its tools, resources (with
//! templates) and prompts (not the public `catalog` module, feature
//! `catalog`, which lints a catalog's lockfile), each part
//! fixed at build time or *live* (entries added and removed while
//! serving). Either way a part's listing is serialized once per version,
//! never per request (unless it depends on the caller: scoped entries, a
//! tool's `visible` hook); a live change swaps in a new version and tells
//! the clients that listen.
//!
//! | file | what it holds |
//! |---|---|
//! | `mod.rs` | [`Versions`]: a part's current version, fixed or live |
//! | `tools.rs` | the tools' version; `add_tool` / `remove_tool` |
//! | `resources.rs` | the resources' and templates' version; `add_resource` … |
//! | `prompts.rs` | the prompts' version; `add_prompt` / `remove_prompt` |
//! | `listeners.rs` | who hears of changes (legacy sessions, 2026-07-28 listens) |
//! | `mirror.rs` | the tools' `Mcp-Param-*` mirrored arguments, per version |
//! | `owned.rs` | changes made by a mounted backend: only to what it added |
//! | `ordered.rs` | [`OrderedMap`]: entries in registration order, by key |

mod listeners;
#[cfg(feature = "http")]
mod mirror;
mod ordered;
#[cfg(feature = "client")]
pub(crate) mod owned;
mod prompts;
pub(crate) mod resources;
mod tools;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use serde_json::value::RawValue;

/// The registry stage's state: the three catalogs, who listens to their
/// changes, and the cache hints of their listings.
pub(crate) struct Registry {
    /// The tools, fixed or live, with their precomputed listing.
    pub(crate) tools: Tools,
    /// Who hears of changes to a live catalog.
    pub(crate) list_listeners: ListListeners,
    /// The resources and templates, fixed or live, with their listings.
    pub(crate) resources: Resources,
    /// The prompts, fixed or live, with their listing.
    pub(crate) prompts: Prompts,
    /// The cache hint of `tools/list` (and of the skills listing) when it
    /// is the same for every caller (a per-caller listing is `private`).
    pub(crate) list_cache: crate::protocol::CacheHint,
    /// The cache hint of `resources/list` and `resources/templates/list`,
    /// likewise.
    pub(crate) resource_list_cache: crate::protocol::CacheHint,
    /// The cache hint of `prompts/list`, likewise.
    pub(crate) prompt_list_cache: crate::protocol::CacheHint,
    /// The default call time limit of tools (also of tools added live).
    pub(crate) tool_timeout: Option<std::time::Duration>,
    /// Tool search, when on (see `crate::tool_search`).
    pub(crate) tool_search: Option<Box<crate::tool_search::Searcher>>,
    /// The server's result size limit (`None`: off), for tools without
    /// their own.
    pub(crate) result_limit: Option<crate::handler::ResultLimit>,
    /// A `Metrics` interceptor is registered: open sessions are counted.
    #[cfg(feature = "metrics")]
    pub(crate) count_sessions: bool,
}

pub(crate) use listeners::{Kinds, ListKind, ListListeners};
#[cfg(feature = "http")]
pub(crate) use mirror::ParamHeaders;
pub(crate) use ordered::OrderedMap;
#[cfg(feature = "client")]
pub(crate) use owned::Held;
pub(crate) use prompts::PromptRegistry;
pub(crate) use resources::ResourceRegistry;
pub(crate) use tools::ToolRegistry;

/// Who added an entry to the catalog: a mounted backend (a proxied
/// `Remote`) marks each forwarder it makes with its own `Owner`, and may
/// later replace or remove only entries marked with it. Two owners are
/// the same only when they are the same value (cloned), never by label.
#[derive(Clone)]
pub(crate) struct Owner(Arc<str>);

impl Owner {
    /// A new owner, named `label` when debugged.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) fn new(label: &str) -> Self {
        Self(Arc::from(label))
    }
}

impl PartialEq for Owner {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Owner").field(&self.0).finish()
    }
}

/// The tools of a server.
pub(crate) type Tools = Versions<ToolRegistry>;
/// The resources and resource templates of a server.
pub(crate) type Resources = Versions<ResourceRegistry>;
/// The prompts of a server.
pub(crate) type Prompts = Versions<PromptRegistry>;

/// What every version of a catalog part tells without being searched.
pub(crate) trait Part {
    /// An entry declares OAuth scopes (its listing depends on the caller).
    fn scoped(&self) -> bool;
}

/// One part of the catalog.
pub(crate) enum Versions<C> {
    /// Set at build time: read without any lock.
    Fixed(C),
    /// Changeable while serving: each request reads the current version
    /// (the flag: whether it has a scoped entry, read without the lock).
    Live(RwLock<Arc<C>>, AtomicBool),
}

/// The version of a catalog part a request uses, held for its duration.
pub(crate) enum Snapshot<'a, C> {
    Fixed(&'a C),
    Live(Arc<C>),
}

impl<C> std::ops::Deref for Snapshot<'_, C> {
    type Target = C;
    fn deref(&self) -> &C {
        match self {
            Self::Fixed(c) => c,
            Self::Live(c) => c,
        }
    }
}

impl<C: Part> Versions<C> {
    /// `catalog`, live or fixed.
    pub(crate) fn new(catalog: C, live: bool) -> Self {
        if live {
            let scoped = AtomicBool::new(catalog.scoped());
            Self::Live(RwLock::new(Arc::new(catalog)), scoped)
        } else {
            Self::Fixed(catalog)
        }
    }

    #[inline]
    pub(crate) fn snapshot(&self) -> Snapshot<'_, C> {
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

    /// True when an entry declares scopes, without taking a snapshot.
    #[inline]
    pub(crate) fn scoped(&self) -> bool {
        match self {
            Self::Fixed(c) => c.scoped(),
            Self::Live(_, scoped) => scoped.load(Ordering::Relaxed),
        }
    }

    /// Makes the next version from the current one with `change` and swaps
    /// it in (`Ok`), or keeps the current one (`Err`: why not); `None` for
    /// a fixed part. Requests already running keep the version they took.
    pub(crate) fn change<E>(
        &self,
        change: impl FnOnce(&C) -> Result<C, E>,
    ) -> Option<Result<(), E>> {
        let Self::Live(current, scoped) = self else {
            return None;
        };
        let mut current = current.write().unwrap_or_else(PoisonError::into_inner);
        Some(change(&current).map(|next| {
            scoped.store(next.scoped(), Ordering::Relaxed);
            *current = Arc::new(next);
        }))
    }
}

/// `items` serialized once as a listing's array; `None` when a listing
/// depends on the caller (`per_caller`), or (never for our own types)
/// when they do not serialize.
pub(crate) fn serialize_listing<'a, T: serde::Serialize + 'a>(
    per_caller: bool,
    items: impl Iterator<Item = &'a T>,
) -> Option<Arc<Box<RawValue>>> {
    if per_caller {
        return None;
    }
    let all: Vec<&T> = items.collect();
    serde_json::value::to_raw_value(&all).ok().map(Arc::new)
}

/// The one way an entry joins a live part: refused when `part` is not
/// live, or when `state` lacks what the entry `needs` (`what` names the
/// entry in the error); otherwise `next` makes the new version from the
/// current one. Telling the listeners of the change is the caller's.
pub(crate) fn edit_live<C: Part>(
    part: &Versions<C>,
    state: &crate::context::state_map::StateMap,
    what: &str,
    needs: &[(std::any::TypeId, &'static str)],
    next: impl FnOnce(&C) -> Result<C, crate::server::BuildError>,
) -> Result<(), crate::server::BuildError> {
    if !part.is_live() {
        return Err(crate::server::BuildError::CatalogNotLive);
    }
    if let Some((_, type_name)) = needs.iter().find(|(id, _)| !state.contains(*id)) {
        return Err(crate::server::BuildError::MissingState {
            handler: what.to_owned(),
            type_name,
        });
    }
    part.change(next)
        .unwrap_or(Err(crate::server::BuildError::CatalogNotLive))
}
