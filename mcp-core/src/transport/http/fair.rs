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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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

/// The server-wide slots and who holds them.
pub(super) struct FairShare {
    slots: Arc<Semaphore>,
    max: usize,
    per_principal: usize,
    holders: Mutex<HashMap<Holder, Held>>,
}

/// The slots of one holder, oldest first.
#[derive(Default)]
struct Held {
    slots: VecDeque<Arc<Slot>>,
    /// Slots still holding their permit (evicted ones no longer count).
    live: usize,
}

/// One admitted request's slot.
struct Slot {
    permit: Mutex<Option<OwnedSemaphorePermit>>,
    /// Fired when the slot is evicted: the request's transport ends it.
    evict: CancelToken,
}

/// Held while an admitted request runs; gives its slot back when dropped.
pub(super) struct FairPermit {
    share: Arc<FairShare>,
    holder: Holder,
    slot: Arc<Slot>,
}

impl FairShare {
    /// `max` slots over the server; at most `per_principal` for one principal.
    pub(super) fn new(max: usize, per_principal: usize) -> Arc<Self> {
        let max = max.max(1);
        Arc::new(Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
            per_principal: per_principal.max(1),
            holders: Mutex::default(),
        })
    }

    /// A slot for one request of `holder`, or the `-32000` error that
    /// answers it. `evict` is fired if the slot is later taken away.
    pub(super) fn take(
        self: &Arc<Self>,
        holder: Holder,
        evict: &CancelToken,
    ) -> Result<FairPermit, ErrorObject> {
        let mut holders = self.holders.lock().unwrap_or_else(PoisonError::into_inner);
        let mine = holders.get(&holder).map_or(0, |h| h.live);
        if matches!(holder, Holder::Principal(_)) && mine >= self.per_principal {
            return Err(ErrorObject::new(
                ErrorCode::SERVER_BUSY,
                format!(
                    "Too many requests in flight for this principal (max {}); retry later",
                    self.per_principal
                ),
            ));
        }
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => evict_heaviest(&mut holders, &holder, mine).ok_or_else(|| {
                ErrorObject::new(
                    ErrorCode::SERVER_BUSY,
                    format!(
                        "Too many requests in flight (max {}); retry later",
                        self.max
                    ),
                )
            })?,
        };
        let slot = Arc::new(Slot {
            permit: Mutex::new(Some(permit)),
            evict: evict.clone(),
        });
        let held = holders.entry(holder.clone()).or_default();
        held.slots.push_back(Arc::clone(&slot));
        held.live += 1;
        drop(holders);
        Ok(FairPermit {
            share: Arc::clone(self),
            holder,
            slot,
        })
    }
}

/// Takes the oldest live slot of the holder running the most calls, if it
/// runs at least two more than `mine` (the newcomer's count), and fires
/// that slot's eviction.
fn evict_heaviest(
    holders: &mut HashMap<Holder, Held>,
    newcomer: &Holder,
    mine: usize,
) -> Option<OwnedSemaphorePermit> {
    let held = holders
        .iter_mut()
        .filter(|(holder, _)| *holder != newcomer)
        .map(|(_, held)| held)
        .max_by_key(|held| held.live)?;
    if held.live < mine + 2 {
        return None;
    }
    for slot in &held.slots {
        let taken = slot
            .permit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(permit) = taken {
            held.live -= 1;
            slot.evict.cancel();
            return Some(permit);
        }
    }
    None
}

impl Drop for FairPermit {
    fn drop(&mut self) {
        let mut holders = self
            .share
            .holders
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let Some(held) = holders.get_mut(&self.holder) else {
            return;
        };
        if let Some(at) = held.slots.iter().position(|s| Arc::ptr_eq(s, &self.slot)) {
            held.slots.remove(at);
        }
        let permit = self
            .slot
            .permit
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if permit.is_some() {
            held.live -= 1;
        }
        if held.slots.is_empty() {
            holders.remove(&self.holder);
        }
        // The permit goes back to the semaphore as it drops here.
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
            .map(|t| share.take(Holder::Connection(7), t))
            .collect::<Result<_, _>>()
            .unwrap_or_else(|e| panic!("{e:?}"));
        let newcomer = CancelToken::new();
        let got = share.take(principal("bob"), &newcomer);
        assert!(got.is_ok(), "the newcomer got a slot");
        assert!(tokens[0].is_cancelled(), "the oldest call was evicted");
        assert!(tokens[1..].iter().all(|t| !t.is_cancelled()));
        assert!(!newcomer.is_cancelled());
        drop(held);
    }

    #[test]
    fn holders_within_one_call_of_each_other_are_not_evicted() {
        let share = FairShare::new(2, 64);
        let (a, b) = (CancelToken::new(), CancelToken::new());
        let _a = share
            .take(principal("alice"), &a)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let _b = share
            .take(principal("bob"), &b)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let refused = share.take(principal("carol"), &CancelToken::new());
        assert!(refused.is_err(), "no holder runs two more than carol");
        assert!(!a.is_cancelled() && !b.is_cancelled());
    }

    #[test]
    fn the_heaviest_holder_cannot_evict_itself_and_slots_come_back() {
        let share = FairShare::new(2, 64);
        let first = share.take(Holder::Connection(1), &CancelToken::new());
        let second = share.take(Holder::Connection(1), &CancelToken::new());
        assert!(first.is_ok() && second.is_ok());
        let third = share.take(Holder::Connection(1), &CancelToken::new());
        assert!(
            third.is_err(),
            "a full server refuses the heaviest holder itself"
        );
        drop(first);
        assert!(share
            .take(Holder::Connection(1), &CancelToken::new())
            .is_ok());
    }

    #[test]
    fn a_principal_is_capped_at_its_share() {
        let share = FairShare::new(10, 2);
        let t = CancelToken::new();
        let _one = share
            .take(principal("p"), &t)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let _two = share
            .take(principal("p"), &t)
            .unwrap_or_else(|e| panic!("{e:?}"));
        let err = share.take(principal("p"), &t).err().map(|e| e.message);
        assert!(err.is_some_and(|m| m.contains("for this principal")));
    }
}
