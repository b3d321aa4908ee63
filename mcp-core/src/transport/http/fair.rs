//! The server-wide call slots, shared fairly between *holders*.
//!
//! A holder is a principal when the request has one, and otherwise the
//! connection it came on (anonymous clients cannot be told apart by
//! anything sturdier). Each holder may run at most
//! [`HttpOptions::max_requests_per_principal`](super::HttpOptions::max_requests_per_principal)
//! requests at once when it is a principal (a connection is already bounded
//! by `max_requests_per_connection`). When every server-wide slot is taken,
//! a newcomer does not simply get `-32000`: if some holder runs at least two
//! calls more than the newcomer's holder, that holder's oldest call is
//! evicted (its slot moves to the newcomer, and the evicted call ends with
//! a `-32000` error carrying its id), so no one client — sixteen
//! connections each stuck on unanswered elicitations, say — can lock the
//! others out. The "two more" rule means an eviction never makes the
//! newcomer heavier than its victim, so two holders never evict each other
//! back and forth.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::cancel::CancelToken;
use crate::protocol::{ErrorCode, ErrorObject};

/// Who asks for a call slot: a principal, or an anonymous request's
/// connection (its [`Ledger`], from [`FairShare::connection`]).
#[derive(Clone, Copy)]
pub(super) enum Holder<'a> {
    /// An identified principal (over all its connections and sessions).
    Principal(&'a Arc<str>),
    /// An anonymous request's connection.
    Connection(&'a Arc<Ledger>),
}

/// The server-wide slots and who holds them.
///
/// The count of taken slots is one atomic: while the server is not full, an
/// anonymous request takes a slot with one compare-and-swap and records its
/// call in its own connection's ledger, with no lock the other connections
/// take. The table of holders is locked only to admit a principal's request
/// (its ledger is found there and its cap checked), to register a connection,
/// and at a full server, to pick whose call to evict.
pub(super) struct FairShare {
    max: usize,
    per_principal: usize,
    /// Slots taken (an evicted call's slot counts for the call it went to).
    live: Arc<AtomicUsize>,
    holders: Mutex<Holders>,
    /// The holder of anonymous requests through a service not made per
    /// connection (they cannot be told apart).
    unattributed: Arc<Ledger>,
}

#[derive(Default)]
struct Holders {
    principals: HashMap<Arc<str>, Arc<Ledger>>,
    connections: Vec<Weak<Ledger>>,
    /// Sizes after the last pruning of ended holders (see `prune`).
    principals_kept: usize,
    connections_kept: usize,
}

/// One holder's admitted calls, oldest first.
pub(super) struct Ledger {
    /// The server-wide count of taken slots.
    live: Arc<AtomicUsize>,
    calls: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    /// In admission order; ended calls leave, evicted ones stay until
    /// their permits are dropped.
    list: VecDeque<Running>,
    /// Calls in `list` still holding a slot.
    live: usize,
    next_seq: u64,
}

/// One admitted request.
struct Running {
    /// Its admission number within its ledger.
    seq: u64,
    /// False once evicted: the slot went to another client.
    live: bool,
    /// The request's external signal: cancelled on eviction.
    signal: CancelToken,
    /// A batch's flag, set on eviction (a single request asks its permit).
    batch: Option<Arc<AtomicBool>>,
}

/// Held while an admitted request runs; gives its slot back when dropped.
pub(super) struct FairPermit {
    ledger: Arc<Ledger>,
    seq: u64,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl FairShare {
    /// `max` slots over the server; at most `per_principal` for one principal.
    pub(super) fn new(max: usize, per_principal: usize) -> Arc<Self> {
        let live = Arc::new(AtomicUsize::new(0));
        Arc::new(Self {
            max: max.max(1),
            per_principal: per_principal.max(1),
            unattributed: Ledger::new(&live),
            live,
            holders: Mutex::default(),
        })
    }

    /// The ledger of a new connection's anonymous requests (registered
    /// here until the connection and its calls are gone).
    pub(super) fn connection(&self) -> Arc<Ledger> {
        let ledger = Ledger::new(&self.live);
        let mut holders = lock(&self.holders);
        holders.connections.push(Arc::downgrade(&ledger));
        holders.prune();
        ledger
    }

    /// The holder of anonymous requests through a service not made per
    /// connection.
    pub(super) fn unattributed(&self) -> &Arc<Ledger> {
        &self.unattributed
    }

    /// A slot for one request of `holder`, or the `-32000` error that
    /// answers it. If the slot is later given to another client, `signal`
    /// is cancelled and `batch` (a batch's flag) set.
    pub(super) fn take(
        &self,
        holder: Holder<'_>,
        signal: &CancelToken,
        batch: Option<&Arc<AtomicBool>>,
    ) -> Result<FairPermit, ErrorObject> {
        let ledger = match holder {
            // The fast path: a free slot, and no lock but the connection's.
            Holder::Connection(ledger) if self.try_claim() => {
                return Ok(ledger.record(signal, batch));
            }
            Holder::Connection(ledger) => {
                let holders = lock(&self.holders);
                if !self.try_claim() && !self.evict_heaviest(&holders, ledger) {
                    return Err(crate::server::too_many_in_flight(self.max));
                }
                return Ok(ledger.record(signal, batch));
            }
            Holder::Principal(principal) => principal,
        };
        // A principal: its ledger is found, its cap checked and its call
        // recorded under the table's lock, so two requests of one principal
        // never both take its last place.
        let mut holders = lock(&self.holders);
        let ledger = match holders.principals.get(ledger) {
            Some(found) => Arc::clone(found),
            None => {
                let fresh = Ledger::new(&self.live);
                holders
                    .principals
                    .insert(Arc::clone(ledger), Arc::clone(&fresh));
                holders.prune();
                fresh
            }
        };
        if lock(&ledger.calls).live >= self.per_principal {
            return Err(ErrorObject::new(
                ErrorCode::SERVER_BUSY,
                format!(
                    "Too many requests in flight for this principal (max {}); retry later",
                    self.per_principal
                ),
            ));
        }
        if !self.try_claim() && !self.evict_heaviest(&holders, &ledger) {
            return Err(crate::server::too_many_in_flight(self.max));
        }
        let permit = ledger.record(signal, batch);
        drop(holders);
        Ok(permit)
    }

    /// Takes a free slot, if there is one.
    fn try_claim(&self) -> bool {
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max).then_some(n + 1)
            })
            .is_ok()
    }

    /// Moves the oldest live slot of the holder running the most calls to
    /// `newcomer`, if that holder runs at least two more, and stops the
    /// request that held it; false when there is none. Only asked at a full
    /// server (with the table locked), so a scan of every holder is fine.
    /// Ledgers are locked one at a time.
    fn evict_heaviest(&self, holders: &Holders, newcomer: &Arc<Ledger>) -> bool {
        let mine = lock(&newcomer.calls).live;
        let mut heaviest: Option<(Arc<Ledger>, usize)> = None;
        let principals = holders.principals.values().cloned();
        let connections = holders.connections.iter().filter_map(Weak::upgrade);
        let everyone = principals
            .chain(connections)
            .chain(std::iter::once(Arc::clone(&self.unattributed)));
        for ledger in everyone {
            if Arc::ptr_eq(&ledger, newcomer) {
                continue;
            }
            let live = lock(&ledger.calls).live;
            if heaviest.as_ref().is_none_or(|(_, most)| live > *most) {
                heaviest = Some((ledger, live));
            }
        }
        let Some((heaviest, _)) = heaviest else {
            return false;
        };
        // Judged again under its lock: its calls may have ended since.
        let mut calls = lock(&heaviest.calls);
        if calls.live < mine + 2 {
            return false;
        }
        let Some(victim) = calls.list.iter_mut().find(|r| r.live) else {
            return false;
        };
        victim.live = false;
        victim.signal.cancel();
        if let Some(flag) = &victim.batch {
            flag.store(true, Ordering::Release);
        }
        calls.live -= 1;
        true
    }
}

impl Holders {
    /// Forgets holders with nothing left: a principal whose ledger only
    /// the table holds, a connection gone with all its calls. Done when a
    /// list has doubled since the last pass, so it costs O(1) per addition
    /// and the table stays within twice what is live (plus a few).
    fn prune(&mut self) {
        if self.principals.len() > 2 * self.principals_kept + 16 {
            self.principals
                .retain(|_, ledger| Arc::strong_count(ledger) > 1);
            self.principals_kept = self.principals.len();
        }
        if self.connections.len() > 2 * self.connections_kept + 16 {
            self.connections.retain(|ledger| ledger.strong_count() > 0);
            self.connections_kept = self.connections.len();
        }
    }
}

impl Ledger {
    fn new(live: &Arc<AtomicUsize>) -> Arc<Self> {
        Arc::new(Self {
            live: Arc::clone(live),
            calls: Mutex::default(),
        })
    }

    /// Records a call that has its slot.
    fn record(
        self: &Arc<Self>,
        signal: &CancelToken,
        batch: Option<&Arc<AtomicBool>>,
    ) -> FairPermit {
        let mut calls = lock(&self.calls);
        let seq = calls.next_seq;
        calls.next_seq += 1;
        calls.live += 1;
        calls.list.push_back(Running {
            seq,
            live: true,
            signal: signal.clone(),
            batch: batch.cloned(),
        });
        drop(calls);
        FairPermit {
            ledger: Arc::clone(self),
            seq,
        }
    }
}

impl FairPermit {
    /// True when this request's slot was given to another client.
    pub(super) fn was_evicted(&self) -> bool {
        lock(&self.ledger.calls)
            .list
            .iter()
            .find(|r| r.seq == self.seq)
            .is_some_and(|r| !r.live)
    }
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        let mut calls = lock(&self.ledger.calls);
        let Some(at) = calls.list.iter().position(|r| r.seq == self.seq) else {
            return;
        };
        let Some(running) = calls.list.remove(at) else {
            return;
        };
        if running.live {
            calls.live -= 1;
        }
        drop(calls);
        if running.live {
            self.ledger.live.fetch_sub(1, Ordering::AcqRel);
        }
        // The request's signal and flag are released outside the lock.
        drop(running);
    }
}

/// The final answer of an evicted call (503 as JSON, or the last event of
/// its stream). `id` is the request's (null for a batch).
pub(super) fn evicted_error(id: serde_json::Value) -> serde_json::Value {
    crate::protocol::fail(
        id,
        &ErrorObject::new(
            ErrorCode::SERVER_BUSY,
            "The server is at capacity and this client holds the most calls in flight: \
             this call was cancelled to make room for another client; retry later",
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: &str) -> Arc<str> {
        Arc::from(n)
    }

    fn ok(permit: Result<FairPermit, ErrorObject>) -> FairPermit {
        permit.unwrap_or_else(|e| panic!("{e:?}"))
    }

    #[test]
    fn a_full_server_evicts_the_oldest_call_of_the_heaviest_holder() {
        let share = FairShare::new(4, 64);
        let c7 = share.connection();
        let tokens: Vec<CancelToken> = (0..4).map(|_| CancelToken::new()).collect();
        let held: Vec<FairPermit> = tokens
            .iter()
            .map(|t| ok(share.take(Holder::Connection(&c7), t, None)))
            .collect();
        let newcomer = CancelToken::new();
        let bob = name("bob");
        let got = share.take(Holder::Principal(&bob), &newcomer, None);
        assert!(got.is_ok(), "the newcomer got a slot");
        assert!(tokens[0].is_cancelled(), "the oldest call was evicted");
        assert!(held[0].was_evicted() && !held[1].was_evicted());
        assert!(tokens[1..].iter().all(|t| !t.is_cancelled()));
        assert!(!newcomer.is_cancelled());
        drop(held);
    }

    #[test]
    fn the_oldest_live_call_is_evicted_after_earlier_ones_ended() {
        let share = FairShare::new(3, 64);
        let (c1, c2, c3) = (share.connection(), share.connection(), share.connection());
        let tokens: Vec<CancelToken> = (0..4).map(|_| CancelToken::new()).collect();
        let take = |t: &CancelToken| ok(share.take(Holder::Connection(&c1), t, None));
        let first = take(&tokens[0]);
        let second = take(&tokens[1]);
        drop(first);
        // The second call is now the oldest.
        let third = take(&tokens[2]);
        let fourth = take(&tokens[3]);
        let newcomer = share.take(Holder::Connection(&c2), &CancelToken::new(), None);
        assert!(newcomer.is_ok(), "a full server made room");
        assert!(tokens[1].is_cancelled() && second.was_evicted());
        assert!(!tokens[2].is_cancelled() && !third.was_evicted());
        assert!(!tokens[3].is_cancelled() && !fourth.was_evicted());
        // The evicted call's end frees no slot: the server is still full.
        drop(second);
        let refused = share.take(Holder::Connection(&c2), &CancelToken::new(), None);
        assert!(refused.is_err(), "connection 1 runs only one more than 2");
        drop((third, fourth, newcomer));
        assert!(share
            .take(Holder::Connection(&c3), &CancelToken::new(), None)
            .is_ok());
    }

    #[test]
    fn holders_within_one_call_of_each_other_are_not_evicted() {
        let share = FairShare::new(2, 64);
        let (a, b) = (CancelToken::new(), CancelToken::new());
        let (alice, bob, carol) = (name("alice"), name("bob"), name("carol"));
        let _a = ok(share.take(Holder::Principal(&alice), &a, None));
        let _b = ok(share.take(Holder::Principal(&bob), &b, None));
        let refused = share.take(Holder::Principal(&carol), &CancelToken::new(), None);
        assert!(refused.is_err(), "no holder runs two more than carol");
        assert!(!a.is_cancelled() && !b.is_cancelled());
    }

    #[test]
    fn the_heaviest_holder_cannot_evict_itself_and_slots_come_back() {
        let share = FairShare::new(2, 64);
        let c1 = share.connection();
        let first = share.take(Holder::Connection(&c1), &CancelToken::new(), None);
        let second = share.take(Holder::Connection(&c1), &CancelToken::new(), None);
        assert!(first.is_ok() && second.is_ok());
        let third = share.take(Holder::Connection(&c1), &CancelToken::new(), None);
        assert!(
            third.is_err(),
            "a full server refuses the heaviest holder itself"
        );
        drop(first);
        assert!(share
            .take(Holder::Connection(&c1), &CancelToken::new(), None)
            .is_ok());
    }

    #[test]
    fn an_evicted_batch_entry_sets_its_batch_flag() {
        let share = FairShare::new(2, 64);
        let (c3, c4) = (share.connection(), share.connection());
        let flag = Arc::new(AtomicBool::new(false));
        let signal = CancelToken::new();
        let _a = share.take(Holder::Connection(&c3), &signal, Some(&flag));
        let _b = share.take(Holder::Connection(&c3), &signal, Some(&flag));
        assert!(!flag.load(Ordering::Acquire));
        let _c = share.take(Holder::Connection(&c4), &CancelToken::new(), None);
        assert!(_c.is_ok() && flag.load(Ordering::Acquire) && signal.is_cancelled());
    }

    #[test]
    fn a_principal_is_capped_at_its_share_across_its_requests() {
        let share = FairShare::new(10, 2);
        let t = CancelToken::new();
        // Two handles on one principal name: one holder.
        let (p1, p2) = (name("p"), name("p"));
        let _one = ok(share.take(Holder::Principal(&p1), &t, None));
        let two = ok(share.take(Holder::Principal(&p2), &t, None));
        let err = share
            .take(Holder::Principal(&p1), &t, None)
            .err()
            .map(|e| e.message);
        assert!(err.is_some_and(|m| m.contains("for this principal")));
        drop(two);
        assert!(share.take(Holder::Principal(&p2), &t, None).is_ok());
    }

    #[test]
    fn slots_are_counted_exactly_under_concurrent_takers() {
        // Four threads, each its own connection, take and release slots on
        // a server of 8 while a fifth holds 4: the count never passes the
        // cap, and every slot comes back.
        let share = FairShare::new(8, 64);
        let holder = share.connection();
        let held: Vec<FairPermit> = (0..4)
            .map(|_| ok(share.take(Holder::Connection(&holder), &CancelToken::new(), None)))
            .collect();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                let share = &share;
                scope.spawn(move || {
                    let mine = share.connection();
                    for _ in 0..2_000 {
                        let permit =
                            share.take(Holder::Connection(&mine), &CancelToken::new(), None);
                        assert!(share.live.load(Ordering::Acquire) <= 8);
                        drop(permit);
                    }
                });
            }
        });
        assert_eq!(share.live.load(Ordering::Acquire), 4);
        drop(held);
        assert_eq!(share.live.load(Ordering::Acquire), 0);
        assert!(held_calls(&holder) == 0);
    }

    fn held_calls(ledger: &Arc<Ledger>) -> usize {
        lock(&ledger.calls).list.len()
    }

    #[test]
    fn ended_holders_are_forgotten() {
        let share = FairShare::new(1000, 64);
        for i in 0..500 {
            let p = name(&format!("p{i}"));
            drop(ok(share.take(
                Holder::Principal(&p),
                &CancelToken::new(),
                None,
            )));
            drop(share.connection());
        }
        let holders = lock(&share.holders);
        assert!(
            holders.principals.len() < 100,
            "{}",
            holders.principals.len()
        );
        assert!(
            holders.connections.len() < 100,
            "{}",
            holders.connections.len()
        );
    }
}
