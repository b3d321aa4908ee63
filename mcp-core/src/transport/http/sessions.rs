//! The session table: unguessable ids, idle expiry, a size cap with
//! least-recently-used eviction, and principal binding.
//!
//! An idle session costs one map entry: its id, a [`Session`] (empty maps),
//! the principal hash, two small integers and an empty stream slot.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::options::SessionOptions;
use super::queue::StreamTx;
use crate::cancel::CancelToken;
use crate::session::Session;

/// One live HTTP session.
pub(crate) struct SessionEntry {
    pub(crate) session: Session,
    principal: Option<Arc<str>>,
    /// The standalone GET stream, when one is open.
    stream: Mutex<Option<StreamTx>>,
    /// Cancelled when the session ends (DELETE, expiry, eviction).
    pub(crate) ended: CancelToken,
    /// Saves of its metadata to a session store, asked and done.
    pub(crate) saves: SaveProgress,
}

/// How far the saves of a session's metadata got: each change asks for
/// one (a generation); a response waits until its own is done, so the
/// client never sees an answer whose effect another replica would not.
#[derive(Default)]
pub(crate) struct SaveProgress {
    asked: std::sync::atomic::AtomicU64,
    done: tokio::sync::watch::Sender<u64>,
}

impl SaveProgress {
    /// Asks for one more save; its generation.
    pub(crate) fn ask(&self) -> u64 {
        self.asked
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel)
            .wrapping_add(1)
    }

    /// The save of generation `generation` (and so of every earlier one)
    /// is done.
    pub(crate) fn finish(&self, generation: u64) {
        self.done.send_if_modified(|done| {
            let newer = generation > *done;
            if newer {
                *done = generation;
            }
            newer
        });
    }

    /// Waits, at most `bound`, until every save asked so far is done.
    pub(crate) async fn settled(&self, bound: std::time::Duration) {
        let asked = self.asked.load(std::sync::atomic::Ordering::Acquire);
        let mut done = self.done.subscribe();
        let _ = tokio::time::timeout(bound, done.wait_for(|d| *d >= asked)).await;
    }
}

impl SessionEntry {
    /// Where messages not tied to a request go; `None` when no GET stream is open.
    pub(crate) fn stream(&self) -> Option<StreamTx> {
        self.stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .filter(|tx| !tx.is_closed())
            .cloned()
    }

    /// The principal the session is bound to.
    pub(crate) fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// Installs a new standalone stream, replacing (and so ending) any previous one.
    pub(crate) fn open_stream(&self, tx: StreamTx) {
        *self.stream.lock().unwrap_or_else(PoisonError::into_inner) = Some(tx);
    }

    fn end(&self) {
        self.ended.cancel();
        // Ends the session's listens and drops its resource subscriptions.
        self.session.close();
        self.stream
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        // No answer to a pending elicitation can reach this session any more.
        self.session.fail_pending();
    }
}

struct Slot {
    entry: Arc<SessionEntry>,
    tick: u64,
    last_used: Instant,
}

#[derive(Default)]
struct Table {
    map: HashMap<Arc<str>, Slot>,
    /// Least recently used first.
    lru: BTreeMap<u64, Arc<str>>,
    next_tick: u64,
    /// Live sessions per (identified) principal.
    per_principal: HashMap<Arc<str>, usize>,
}

impl Table {
    fn insert(&mut self, id: Arc<str>, entry: Arc<SessionEntry>, now: Instant) {
        if let Some(p) = &entry.principal {
            *self.per_principal.entry(Arc::clone(p)).or_default() += 1;
        }
        let tick = self.next_tick;
        self.next_tick += 1;
        self.lru.insert(tick, Arc::clone(&id));
        self.map.insert(
            id,
            Slot {
                entry,
                tick,
                last_used: now,
            },
        );
    }

    fn remove(&mut self, id: &str) -> Option<Arc<SessionEntry>> {
        let slot = self.map.remove(id)?;
        self.lru.remove(&slot.tick);
        if let Some(p) = &slot.entry.principal {
            if let Some(n) = self.per_principal.get_mut(p) {
                *n -= 1;
                if *n == 0 {
                    self.per_principal.remove(p);
                }
            }
        }
        Some(slot.entry)
    }

    fn held_by(&self, principal: Option<&Arc<str>>) -> usize {
        principal.map_or(0, |p| self.per_principal.get(p).copied().unwrap_or(0))
    }

    fn touch(&mut self, id: &str, now: Instant) {
        let tick = self.next_tick;
        if let Some(slot) = self.map.get_mut(id) {
            self.next_tick += 1;
            if let Some(key) = self.lru.remove(&slot.tick) {
                self.lru.insert(tick, key);
            }
            slot.tick = tick;
            slot.last_used = now;
        }
    }
}

/// Why a lookup found nothing usable. All of them answer 404 alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotFound;

/// A principal already holds [`SessionOptions::max_per_principal`] sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TooMany(pub(crate) usize);

/// The table of live sessions of one HTTP endpoint.
pub(crate) struct SessionTable {
    options: SessionOptions,
    table: Mutex<Table>,
}

impl SessionTable {
    pub(crate) fn new(options: SessionOptions) -> Self {
        Self {
            options,
            table: Mutex::new(Table::default()),
        }
    }

    /// Registers `session` under a fresh id bound to `principal`, evicting
    /// the least recently used session when the table is full; refused when
    /// the (identified) principal already holds its share.
    pub(crate) fn create(
        &self,
        session: Session,
        principal: Option<Arc<str>>,
    ) -> Result<(Arc<str>, Arc<SessionEntry>), TooMany> {
        let now = Instant::now();
        let mut ended = Vec::new();
        let created = {
            let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            self.sweep(&mut t, now, &mut ended);
            let cap = self.options.max_per_principal.max(1);
            if t.held_by(principal.as_ref()) >= cap {
                Err(TooMany(cap))
            } else {
                let id = mint_id().into();
                Ok(self.insert_locked(&mut t, session, principal, now, &mut ended, id))
            }
        };
        for e in ended {
            e.end();
        }
        created
    }

    /// The session `id`, whoever owns it, without touching its idle clock.
    pub(crate) fn peek(&self, id: &str) -> Option<Arc<SessionEntry>> {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .get(id)
            .map(|slot| Arc::clone(&slot.entry))
    }

    /// True when a session `id` is in the table (whoever owns it).
    pub(crate) fn holds(&self, id: &str) -> bool {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .contains_key(id)
    }

    /// Registers a session restored from a session store under its own
    /// `id`, with the same bounds as [`create`](Self::create); `None` when
    /// the principal holds its share, or when the id is here already (a
    /// concurrent restore won).
    pub(crate) fn adopt(
        &self,
        id: &str,
        session: Session,
        principal: Option<Arc<str>>,
    ) -> Option<(Arc<str>, Arc<SessionEntry>)> {
        let now = Instant::now();
        let mut ended = Vec::new();
        let adopted = {
            let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            self.sweep(&mut t, now, &mut ended);
            let cap = self.options.max_per_principal.max(1);
            if t.map.contains_key(id) || t.held_by(principal.as_ref()) >= cap {
                None
            } else {
                let id: Arc<str> = id.into();
                Some(self.insert_locked(&mut t, session, principal, now, &mut ended, id))
            }
        };
        for e in ended {
            e.end();
        }
        adopted
    }

    fn insert_locked(
        &self,
        t: &mut Table,
        session: Session,
        principal: Option<Arc<str>>,
        now: Instant,
        ended: &mut Vec<Arc<SessionEntry>>,
        id: Arc<str>,
    ) -> (Arc<str>, Arc<SessionEntry>) {
        let entry = Arc::new(SessionEntry {
            session,
            principal,
            stream: Mutex::new(None),
            ended: CancelToken::new(),
            saves: SaveProgress::default(),
        });
        {
            while t.map.len() >= self.options.max.max(1) {
                // Full: the principal holding the most sessions (counting
                // the one being created) gives up its least recently used,
                // so no principal can evict another's by creating many.
                let Some(victim) = victim(&t.map, entry.principal.as_deref()) else {
                    break;
                };
                if let Some(entry) = t.remove(&victim) {
                    ended.push(entry);
                }
            }
            t.insert(Arc::clone(&id), Arc::clone(&entry), now);
        }
        (id, entry)
    }

    /// The live session `id` if `principal` owns it; refreshes its idle clock.
    pub(crate) fn get(
        &self,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Arc<SessionEntry>, NotFound> {
        let now = Instant::now();
        let mut ended = Vec::new();
        let found = {
            let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            self.sweep(&mut t, now, &mut ended);
            match t.map.get(id) {
                Some(slot) if slot.entry.principal.as_deref() == principal => {
                    let entry = Arc::clone(&slot.entry);
                    t.touch(id, now);
                    Ok(entry)
                }
                _ => Err(NotFound),
            }
        };
        for e in ended {
            e.end();
        }
        found
    }

    /// Ends session `id` if `principal` owns it.
    pub(crate) fn delete(&self, id: &str, principal: Option<&str>) -> Result<(), NotFound> {
        let entry = {
            let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            match t.map.get(id) {
                Some(slot) if slot.entry.principal.as_deref() == principal => t.remove(id),
                _ => None,
            }
        };
        match entry {
            Some(e) => {
                e.end();
                Ok(())
            }
            None => Err(NotFound),
        }
    }

    /// Number of live sessions (expired ones not yet swept included).
    pub(crate) fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }

    /// Ends every session's GET stream, keeping the sessions (server draining).
    pub(crate) fn close_streams(&self) {
        let entries: Vec<_> = self
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .values()
            .map(|slot| Arc::clone(&slot.entry))
            .collect();
        for e in entries {
            e.stream
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
        }
    }

    /// Ends every session (server shutdown).
    pub(crate) fn clear(&self) {
        let drained: Vec<_> = {
            let mut t = self.table.lock().unwrap_or_else(PoisonError::into_inner);
            t.lru.clear();
            t.per_principal.clear();
            t.map.drain().map(|(_, slot)| slot.entry).collect()
        };
        for e in drained {
            e.end();
        }
    }

    /// Drops sessions idle for longer than the TTL. The LRU order is the
    /// idle order, so this only looks at the expired front.
    fn sweep(&self, t: &mut Table, now: Instant, ended: &mut Vec<Arc<SessionEntry>>) {
        while let Some((_, id)) = t.lru.first_key_value() {
            let id = Arc::clone(id);
            let expired = t
                .map
                .get(&id)
                .is_none_or(|slot| now.duration_since(slot.last_used) >= self.options.ttl);
            if !expired {
                break;
            }
            match t.remove(&id) {
                Some(entry) => ended.push(entry),
                None => {
                    t.lru.pop_first();
                }
            }
        }
    }
}

/// A fresh session id: 32 bytes from the OS random source (`getrandom`) as
/// 64 hex digits (visible ASCII, as the transport spec requires).
///
/// # Panics
/// When the OS random source fails (no fallback: a session id must never be
/// guessable); see `crate::random`.
pub(crate) fn mint_id() -> String {
    hex(&crate::random::bytes::<32>())
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The session to evict from a full table: the least recently used one of
/// the principal holding the most sessions, counting `creating` (the
/// principal about to get one more) — on a tie, the creator's own.
fn victim(map: &HashMap<Arc<str>, Slot>, creating: Option<&str>) -> Option<Arc<str>> {
    let mut counts: HashMap<Option<&str>, usize> = HashMap::new();
    *counts.entry(creating).or_default() += 1;
    for slot in map.values() {
        *counts.entry(slot.entry.principal.as_deref()).or_default() += 1;
    }
    let most = counts.values().copied().max()?;
    let heaviest = if counts.get(&creating) == Some(&most) {
        creating
    } else {
        counts
            .iter()
            .filter(|(_, n)| **n == most)
            .map(|(p, _)| *p)
            .min()?
    };
    let oldest = |only: Option<Option<&str>>| {
        map.iter()
            .filter(|(_, slot)| only.is_none_or(|p| slot.entry.principal.as_deref() == p))
            .min_by_key(|(_, slot)| slot.tick)
            .map(|(id, _)| Arc::clone(id))
    };
    // The creator may hold none yet (every principal at one session): then
    // the least recently used of all goes.
    oldest(Some(heaviest)).or_else(|| oldest(None))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn ids_are_long_distinct_and_visible_ascii() {
        let a = mint_id();
        let b = mint_id();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert_eq!(b.len(), 64);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)));
    }

    #[test]
    fn lru_eviction_and_principal_binding() {
        let t = SessionTable::new(SessionOptions::default().max(2));
        let (a, ea) = t.create(Session::new(), None).expect("room");
        let (b, _) = t.create(Session::new(), Some("p".into())).expect("room");
        assert!(t.get(&a, None).is_ok()); // a is now the most recent
        assert_eq!(t.get(&b, None).err(), Some(NotFound)); // foreign principal
        assert!(t.get(&b, Some("p")).is_ok());
        let (c, _) = t.create(Session::new(), None).expect("room"); // evicts a (b was touched last)
        assert_eq!(t.len(), 2);
        assert!(t.get(&a, None).is_err());
        assert!(ea.ended.is_cancelled());
        assert!(t.get(&c, None).is_ok());
        assert_eq!(t.delete(&b, None), Err(NotFound));
        assert_eq!(t.delete(&b, Some("p")), Ok(()));
        assert_eq!(t.delete(&b, Some("p")), Err(NotFound));
    }

    #[test]
    fn a_principal_creating_many_sessions_evicts_its_own() {
        let t = SessionTable::new(SessionOptions::default().max(4));
        let (alice, alice_entry) = t
            .create(Session::new(), Some("alice".into()))
            .expect("room");
        let mut mallory = Vec::new();
        for _ in 0..10 {
            mallory.push(
                t.create(Session::new(), Some("mallory".into()))
                    .expect("room")
                    .0,
            );
        }
        assert_eq!(t.len(), 4);
        assert!(t.get(&alice, Some("alice")).is_ok(), "alice keeps hers");
        assert!(!alice_entry.ended.is_cancelled());
        // Mallory keeps her three most recent.
        for id in &mallory[..7] {
            assert!(t.get(id, Some("mallory")).is_err());
        }
        for id in &mallory[7..] {
            assert!(t.get(id, Some("mallory")).is_ok());
        }
    }

    #[test]
    fn a_principal_at_its_cap_is_refused_and_others_keep_theirs() {
        let t = SessionTable::new(SessionOptions::default().max(10).max_per_principal(2));
        let (a, _) = t
            .create(Session::new(), Some("alice".into()))
            .expect("room");
        let (m1, _) = t
            .create(Session::new(), Some("mallory".into()))
            .expect("room");
        t.create(Session::new(), Some("mallory".into()))
            .expect("room");
        assert_eq!(
            t.create(Session::new(), Some("mallory".into())).err(),
            Some(TooMany(2))
        );
        assert_eq!(t.len(), 3);
        assert!(t.get(&a, Some("alice")).is_ok());
        // Room again once one of hers ends.
        assert_eq!(t.delete(&m1, Some("mallory")), Ok(()));
        assert!(t.create(Session::new(), Some("mallory".into())).is_ok());
        // Anonymous sessions are not counted per principal.
        for _ in 0..5 {
            assert!(t.create(Session::new(), None).is_ok());
        }
    }

    #[test]
    fn idle_sessions_expire() {
        let t = SessionTable::new(SessionOptions::default().ttl(Duration::ZERO));
        let (a, _) = t.create(Session::new(), None).expect("room");
        assert!(t.get(&a, None).is_err());
        assert_eq!(t.len(), 0);
    }
}
