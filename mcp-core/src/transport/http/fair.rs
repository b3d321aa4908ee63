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

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::cancel::CancelToken;
use crate::protocol::{ErrorCode, ErrorObject};

/// Who holds call slots: a principal, or an anonymous connection.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) enum Holder {
    /// An identified principal (over all its connections and sessions).
    Principal(Arc<str>),
    /// An anonymous request's connection (0: a service not made per
    /// connection).
    Connection(u64),
}

/// A fresh connection number for [`Holder::Connection`].
pub(super) fn next_connection_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The server-wide slots and who holds them. One lock guards the count
/// and the table, taken once to admit a request and once to let it go.
pub(super) struct FairShare {
    max: usize,
    per_principal: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Live slots per principal (entries only while some run); anonymous
    /// connections are counted only when a full server looks for a victim.
    principals: HashMap<Arc<str>, usize>,
    /// Every admitted request, in a place of its own until it ends (the
    /// places of ended requests are reused: see `free`).
    running: Vec<Option<Running>>,
    /// Places in `running` whose request ended.
    free: Vec<usize>,
    /// Slots taken (an evicted request no longer holds one).
    live: usize,
    next_seq: u64,
}

/// One admitted request.
struct Running {
    /// Admission order: the oldest live call of a holder is evicted first.
    seq: u64,
    holder: Holder,
    /// False once evicted: the slot went to another client.
    live: bool,
    /// The request's external signal: cancelled on eviction.
    signal: CancelToken,
    /// A batch's flag, set on eviction (a single request asks its permit).
    batch: Option<Arc<AtomicBool>>,
}

/// Held while an admitted request runs; gives its slot back when dropped.
pub(super) struct FairPermit {
    share: Arc<FairShare>,
    /// Its place in the table, and its admission number (which tells it
    /// from a later request given the same place).
    place: usize,
    seq: u64,
}

impl FairShare {
    /// `max` slots over the server; at most `per_principal` for one principal.
    pub(super) fn new(max: usize, per_principal: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            per_principal: per_principal.max(1),
            state: Mutex::default(),
        })
    }

    /// A slot for one request of `holder`, or the `-32000` error that
    /// answers it. If the slot is later given to another client, `signal`
    /// is cancelled and `batch` (a batch's flag) set.
    pub(super) fn take(
        self: &Arc<Self>,
        holder: Holder,
        signal: &CancelToken,
        batch: Option<&Arc<AtomicBool>>,
    ) -> Result<FairPermit, ErrorObject> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Holder::Principal(principal) = &holder {
            if state.principals.get(principal).copied().unwrap_or(0) >= self.per_principal {
                return Err(ErrorObject::new(
                    ErrorCode::SERVER_BUSY,
                    format!(
                        "Too many requests in flight for this principal (max {}); retry later",
                        self.per_principal
                    ),
                ));
            }
        }
        if state.live < self.max {
            state.live += 1;
        } else if !state.evict_heaviest(&holder) {
            return Err(crate::server::too_many_in_flight(self.max));
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        if let Holder::Principal(principal) = &holder {
            *state.principals.entry(Arc::clone(principal)).or_default() += 1;
        }
        let running = Running {
            seq,
            holder,
            live: true,
            signal: signal.clone(),
            batch: batch.cloned(),
        };
        let place = match state.free.pop() {
            Some(place) => {
                state.running[place] = Some(running);
                place
            }
            None => {
                state.running.push(Some(running));
                state.running.len() - 1
            }
        };
        drop(state);
        Ok(FairPermit {
            share: Arc::clone(self),
            place,
            seq,
        })
    }
}

impl State {
    /// Moves the oldest live slot of the holder running the most calls to
    /// the newcomer, if that holder runs at least two more than
    /// `newcomer`, and stops the request that held it; false when there
    /// is none. Only asked at a full server, so counting by a scan of the
    /// running requests (at most the server-wide cap) is fine here.
    fn evict_heaviest(&mut self, newcomer: &Holder) -> bool {
        let mut counts: HashMap<&Holder, usize> = HashMap::new();
        for running in self.running.iter().flatten().filter(|r| r.live) {
            *counts.entry(&running.holder).or_default() += 1;
        }
        let mine = counts.get(newcomer).copied().unwrap_or(0);
        let Some((heaviest, live)) = counts
            .into_iter()
            .filter(|(holder, _)| *holder != newcomer)
            .max_by_key(|(_, live)| *live)
        else {
            return false;
        };
        if live < mine + 2 {
            return false;
        }
        let heaviest = heaviest.clone();
        let Some(victim) = self
            .running
            .iter_mut()
            .flatten()
            .filter(|r| r.holder == heaviest && r.live)
            .min_by_key(|r| r.seq)
        else {
            return false;
        };
        victim.live = false;
        victim.signal.cancel();
        if let Some(flag) = &victim.batch {
            flag.store(true, Ordering::Release);
        }
        self.release(&heaviest);
        true
    }

    /// One live slot of `holder` fewer.
    fn release(&mut self, holder: &Holder) {
        if let Holder::Principal(principal) = holder {
            if let Some(n) = self.principals.get_mut(principal) {
                *n -= 1;
                if *n == 0 {
                    self.principals.remove(principal);
                }
            }
        }
    }
}

impl FairPermit {
    /// True when this request's slot was given to another client.
    pub(super) fn was_evicted(&self) -> bool {
        let state = self
            .share
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match state.running.get(self.place) {
            Some(Some(running)) if running.seq == self.seq => !running.live,
            _ => false,
        }
    }
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        let mut state = self
            .share
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(running) = state
            .running
            .get_mut(self.place)
            .and_then(|slot| slot.take_if(|running| running.seq == self.seq))
        else {
            return;
        };
        state.free.push(self.place);
        if running.live {
            state.live -= 1;
            state.release(&running.holder);
        }
        drop(state);
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

    fn principal(name: &str) -> Holder {
        Holder::Principal(Arc::from(name))
    }

    #[test]
    fn a_full_server_evicts_the_oldest_call_of_the_heaviest_holder() {
        let share = FairShare::new(4, 64);
        let tokens: Vec<CancelToken> = (0..4).map(|_| CancelToken::new()).collect();
        let held: Vec<FairPermit> = tokens
            .iter()
            .map(|t| share.take(Holder::Connection(7), t, None))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e:?}"));
        let newcomer = CancelToken::new();
        let got = share.take(principal("bob"), &newcomer, None);
        assert!(got.is_ok(), "the newcomer got a slot");
        assert!(tokens[0].is_cancelled(), "the oldest call was evicted");
        assert!(held[0].was_evicted() && !held[1].was_evicted());
        assert!(tokens[1..].iter().all(|t| !t.is_cancelled()));
        assert!(!newcomer.is_cancelled());
        drop(held);
    }

    #[test]
    fn the_oldest_call_is_evicted_even_when_a_newer_one_reuses_an_earlier_place() {
        let share = FairShare::new(3, 64);
        let tokens: Vec<CancelToken> = (0..4).map(|_| CancelToken::new()).collect();
        let take = |t: &CancelToken| {
            share
                .take(Holder::Connection(1), t, None)
                .unwrap_or_else(|e| panic!("{e:?}"))
        };
        let first = take(&tokens[0]);
        let second = take(&tokens[1]);
        drop(first);
        // The third call takes the place the first left; the second is
        // now the oldest.
        let third = take(&tokens[2]);
        let fourth = take(&tokens[3]);
        let newcomer = share.take(Holder::Connection(2), &CancelToken::new(), None);
        assert!(newcomer.is_ok(), "a full server made room");
        assert!(tokens[1].is_cancelled() && second.was_evicted());
        assert!(!tokens[2].is_cancelled() && !third.was_evicted());
        assert!(!tokens[3].is_cancelled() && !fourth.was_evicted());
        // The evicted call's end frees no slot: the server is still full.
        drop(second);
        let refused = share.take(Holder::Connection(2), &CancelToken::new(), None);
        assert!(refused.is_err(), "connection 1 runs only one more than 2");
        drop((third, fourth, newcomer));
        assert!(share
            .take(Holder::Connection(3), &CancelToken::new(), None)
            .is_ok());
    }

    #[test]
    fn holders_within_one_call_of_each_other_are_not_evicted() {
        let share = FairShare::new(2, 64);
        let (a, b) = (CancelToken::new(), CancelToken::new());
        let _a = share
            .take(principal("alice"), &a, None)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let _b = share
            .take(principal("bob"), &b, None)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let refused = share.take(principal("carol"), &CancelToken::new(), None);
        assert!(refused.is_err(), "no holder runs two more than carol");
        assert!(!a.is_cancelled() && !b.is_cancelled());
    }

    #[test]
    fn the_heaviest_holder_cannot_evict_itself_and_slots_come_back() {
        let share = FairShare::new(2, 64);
        let first = share.take(Holder::Connection(1), &CancelToken::new(), None);
        let second = share.take(Holder::Connection(1), &CancelToken::new(), None);
        assert!(first.is_ok() && second.is_ok());
        let third = share.take(Holder::Connection(1), &CancelToken::new(), None);
        assert!(
            third.is_err(),
            "a full server refuses the heaviest holder itself"
        );
        drop(first);
        assert!(share
            .take(Holder::Connection(1), &CancelToken::new(), None)
            .is_ok());
    }

    #[test]
    fn an_evicted_batch_entry_sets_its_batch_flag() {
        let share = FairShare::new(2, 64);
        let flag = Arc::new(AtomicBool::new(false));
        let signal = CancelToken::new();
        let _a = share.take(Holder::Connection(3), &signal, Some(&flag));
        let _b = share.take(Holder::Connection(3), &signal, Some(&flag));
        assert!(!flag.load(Ordering::Acquire));
        let _c = share.take(Holder::Connection(4), &CancelToken::new(), None);
        assert!(_c.is_ok() && flag.load(Ordering::Acquire) && signal.is_cancelled());
    }

    #[test]
    fn a_principal_is_capped_at_its_share() {
        let share = FairShare::new(10, 2);
        let t = CancelToken::new();
        let _one = share
            .take(principal("p"), &t, None)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let _two = share
            .take(principal("p"), &t, None)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let err = share
            .take(principal("p"), &t, None)
            .err()
            .map(|e| e.message);
        assert!(err.is_some_and(|m| m.contains("for this principal")));
    }
}
