//! The client's cache of 2026-07-28 listings and reads.
//!
//! A `tools/list`, `prompts/list`, `resources/list`,
//! `resources/templates/list` or `resources/read` result that says how long
//! it stays fresh (`ttlMs` above 0, `resultType` complete, not the answer to
//! a retry that carried input) is kept that long, keyed by its method and
//! the one parameter that changes it (`cursor`, or the read's `uri`):
//!
//! - `cacheScope: "public"` entries are served to every request;
//! - `"private"` entries (and entries without a scope) only to requests of
//!   the same authorization context: the same principal
//!   ([`RequestOptions::cache_principal`]) and the same per-request
//!   `Authorization` header ([`RequestOptions::header`]; only a digest of
//!   it is kept). A request with neither speaks with the client's own
//!   credential, and so shares the client's own private entries.
//!
//! `notifications/tools/list_changed` drops every `tools/list` entry,
//! `notifications/prompts/list_changed` every `prompts/list` entry,
//! `notifications/resources/list_changed` every resource listing and read,
//! and `notifications/resources/updated` the reads of its `uri`. A result
//! that was in flight while its entries were dropped is not kept.
//!
//! The cache holds at most [`CacheOptions::max_bytes`] of result JSON
//! (default [`DEFAULT_CACHE_BYTES`](super::DEFAULT_CACHE_BYTES)); beyond that, expired entries go first,
//! then the least recently used.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use tokio::time::Instant;

use super::handlers::Handlers;
use super::options::{CacheOptions, ClientBuilder, RequestOptions};

/// What one entry costs beyond its JSON: its key and bookkeeping.
const ENTRY_OVERHEAD: usize = 128;

/// The longest a `ttlMs` is honoured (a day): a larger one is read as this.
const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

impl ClientBuilder {
    /// How the client caches 2026-07-28 listings and reads by their
    /// `ttlMs` and `cacheScope` (default: [`CacheOptions::new`], on, at
    /// most [`DEFAULT_CACHE_BYTES`](super::DEFAULT_CACHE_BYTES)). See the client guide's "Caching".
    #[must_use]
    pub fn cache(mut self, options: CacheOptions) -> Self {
        self.cache = options;
        self
    }
}

impl RequestOptions {
    /// The principal this request speaks for, for the cache: a result the
    /// server marks `cacheScope: "private"` is served again only to
    /// requests naming the same principal (and carrying the same
    /// `Authorization` header, if any). A proxy names its caller's here.
    #[must_use]
    pub fn cache_principal(mut self, principal: impl Into<Arc<str>>) -> Self {
        self.cache_principal = Some(principal.into());
        self
    }
}

/// The lists whose notifications drop entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Family {
    Tools,
    Prompts,
    Resources,
    Templates,
    Reads,
}

impl Family {
    const ALL: usize = 5;

    fn of(method: &str) -> Option<(Self, &'static str)> {
        Some(match method {
            "tools/list" => (Self::Tools, "cursor"),
            "prompts/list" => (Self::Prompts, "cursor"),
            "resources/list" => (Self::Resources, "cursor"),
            "resources/templates/list" => (Self::Templates, "cursor"),
            "resources/read" => (Self::Reads, "uri"),
            _ => return None,
        })
    }
}

/// An authorization context: the principal named and a digest of the
/// request's own `Authorization` header (neither: the client's own).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Partition {
    principal: Option<Arc<str>>,
    token: Option<[u8; 32]>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    family: Family,
    /// The cursor or URI (none: a listing's first page).
    arg: Option<String>,
    /// `None` for a public entry.
    partition: Option<Partition>,
}

struct Entry {
    raw: Box<RawValue>,
    expires: Instant,
    size: usize,
    used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Entry>,
    /// Entries by last use, oldest first.
    order: BTreeMap<u64, Key>,
    tick: u64,
    bytes: usize,
    /// Bumped whenever a family's entries are dropped.
    generations: [u64; Family::ALL],
}

/// One client's cache (see the module docs).
pub(crate) struct Cache {
    options: CacheOptions,
    state: Mutex<State>,
}

/// A cacheable request that missed: what [`Cache::store`] needs.
pub(crate) struct Ticket {
    family: Family,
    arg: Option<String>,
    partition: Partition,
    generation: u64,
}

/// What a request finds in the cache.
pub(crate) enum Lookup {
    /// Not a request this cache keeps (or the cache is off).
    Uncached,
    /// A fresh entry.
    Hit(Box<RawValue>),
    /// Nothing fresh: fetch it and hand the result to [`Cache::store`].
    Miss(Ticket),
}

/// The caching members of a result, read without building the rest.
#[derive(Deserialize)]
struct Hint<'a> {
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<u64>,
    #[serde(rename = "cacheScope", borrow, default)]
    scope: Option<std::borrow::Cow<'a, str>>,
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<std::borrow::Cow<'a, str>>,
}

impl Cache {
    pub(crate) fn new(options: &CacheOptions) -> Self {
        Self {
            options: options.clone(),
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes `handlers` drop entries on the server's change notifications
    /// (before their own callback, if any, sees them).
    pub(crate) fn watch(self: &Arc<Self>, handlers: &mut Handlers) {
        if !self.options.enabled {
            return;
        }
        let cache = Arc::clone(self);
        let user = handlers.notification.take();
        handlers.notification = Some(Arc::new(move |method: &str, params: &Value| {
            cache.on_notification(method, params);
            if let Some(user) = &user {
                user(method, params);
            }
        }));
    }

    /// Drops the entries notification `method` (with `params`) makes stale.
    pub(crate) fn on_notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/tools/list_changed" => self.drop_family(Family::Tools, None),
            "notifications/prompts/list_changed" => self.drop_family(Family::Prompts, None),
            "notifications/resources/list_changed" => {
                self.drop_family(Family::Resources, None);
                self.drop_family(Family::Templates, None);
                self.drop_family(Family::Reads, None);
            }
            "notifications/resources/updated" => match params.get("uri").and_then(Value::as_str) {
                Some(uri) => self.drop_family(Family::Reads, Some(uri)),
                None => self.drop_family(Family::Reads, None),
            },
            _ => {}
        }
    }

    /// Drops every entry of request `method` (a listing or a read).
    pub(crate) fn forget(&self, method: &str) {
        if let Some((family, _)) = Family::of(method) {
            self.drop_family(family, None);
        }
    }

    /// Drops every entry.
    pub(crate) fn clear(&self) {
        let mut state = self.state();
        state.entries.clear();
        state.order.clear();
        state.bytes = 0;
        for generation in &mut state.generations {
            *generation += 1;
        }
    }

    /// Drops `family`'s entries (only those of `arg`, when given).
    fn drop_family(&self, family: Family, arg: Option<&str>) {
        let mut state = self.state();
        state.generations[family as usize] += 1;
        let doomed: Vec<Key> = state
            .entries
            .keys()
            .filter(|k| k.family == family && (arg.is_none() || k.arg.as_deref() == arg))
            .cloned()
            .collect();
        for key in doomed {
            state.remove(&key);
        }
    }

    /// Looks request `method` with `params` up for a request with `options`.
    pub(crate) fn lookup(
        &self,
        method: &str,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Lookup {
        if !self.options.enabled || self.options.max_bytes == 0 {
            return Lookup::Uncached;
        }
        let Some((family, name)) = Family::of(method) else {
            return Lookup::Uncached;
        };
        // Only the parameter known to change the result; any other one
        // (an extension's) might too, so such a request is not cached.
        if params.keys().any(|k| k != name) {
            return Lookup::Uncached;
        }
        let arg = match params.get(name) {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Lookup::Uncached,
        };
        if family == Family::Reads && arg.is_none() {
            return Lookup::Uncached;
        }
        let partition = partition_of(options);
        let mut state = self.state();
        let now = Instant::now();
        let public = Key {
            family,
            arg,
            partition: None,
        };
        if let Some(raw) = state.fresh(&public, now) {
            return Lookup::Hit(raw);
        }
        let private = Key {
            partition: Some(partition),
            ..public
        };
        if let Some(raw) = state.fresh(&private, now) {
            return Lookup::Hit(raw);
        }
        let Key { arg, partition, .. } = private;
        Lookup::Miss(Ticket {
            family,
            arg,
            partition: partition.unwrap_or(Partition {
                principal: None,
                token: None,
            }),
            generation: state.generations[family as usize],
        })
    }

    /// Keeps `raw`, the final answer to the request of `ticket` that took
    /// no input round, if it says it may be kept.
    pub(crate) fn store(&self, ticket: Ticket, raw: &RawValue) {
        let Ok(hint) = serde_json::from_str::<Hint<'_>>(raw.get()) else {
            return;
        };
        if hint.result_type.as_deref().is_some_and(|t| t != "complete") {
            return;
        }
        let ttl = match hint.ttl_ms {
            Some(ms) if ms > 0 => Duration::from_millis(ms).min(MAX_TTL),
            _ => return,
        };
        let size = raw.get().len()
            + ENTRY_OVERHEAD
            + ticket.arg.as_ref().map_or(0, String::len)
            + ticket.partition.principal.as_ref().map_or(0, |p| p.len());
        if size > self.options.max_bytes {
            return;
        }
        let partition = match hint.scope.as_deref() {
            Some("public") => None,
            // "private", or a result that does not say: the safe reading.
            _ => Some(ticket.partition),
        };
        let key = Key {
            family: ticket.family,
            arg: ticket.arg,
            partition,
        };
        let mut state = self.state();
        if state.generations[ticket.family as usize] != ticket.generation {
            return;
        }
        state.remove(&key);
        let now = Instant::now();
        if state.bytes + size > self.options.max_bytes {
            state.drop_expired(now);
        }
        while state.bytes + size > self.options.max_bytes {
            let Some((_, oldest)) = state.order.pop_first() else {
                break;
            };
            state.remove(&oldest);
        }
        state.tick += 1;
        let used = state.tick;
        state.order.insert(used, key.clone());
        state.bytes += size;
        state.entries.insert(
            key,
            Entry {
                raw: raw.to_owned(),
                expires: now + ttl,
                size,
                used,
            },
        );
    }
}

impl State {
    /// A copy of `key`'s entry while fresh (marked used); an expired one
    /// is dropped.
    fn fresh(&mut self, key: &Key, now: Instant) -> Option<Box<RawValue>> {
        let expires = self.entries.get(key)?.expires;
        if expires <= now {
            self.remove(key);
            return None;
        }
        self.tick += 1;
        let tick = self.tick;
        let entry = self.entries.get_mut(key)?;
        let previous = std::mem::replace(&mut entry.used, tick);
        let raw = entry.raw.clone();
        self.order.remove(&previous);
        self.order.insert(tick, key.clone());
        Some(raw)
    }

    fn remove(&mut self, key: &Key) {
        if let Some(entry) = self.entries.remove(key) {
            self.order.remove(&entry.used);
            self.bytes -= entry.size;
        }
    }

    fn drop_expired(&mut self, now: Instant) {
        let expired: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, e)| e.expires <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for key in expired {
            self.remove(&key);
        }
    }
}

impl super::Client {
    /// Forgets the cached listings (not the reads), so that the next
    /// listings come from the server: a proxy's periodic refresh, which
    /// promises to look again at least every period it was given.
    pub(crate) fn forget_listings(&self) {
        for method in [
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
        ] {
            self.cache.forget(method);
        }
    }
}

/// The authorization context of a request with `options`.
fn partition_of(options: &RequestOptions) -> Partition {
    let token = options
        .headers
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        .fold(None::<Sha256>, |digest, (_, value)| {
            let mut digest = digest.unwrap_or_default();
            digest.update(value.as_bytes());
            digest.update([0]);
            Some(digest)
        })
        .map(|digest| digest.finalize().into());
    Partition {
        principal: options.cache_principal.clone(),
        token,
    }
}

#[cfg(test)]
mod tests;
