//! The open connections of [`serve_http`](super::serve_http), for its
//! connection cap.
//!
//! [`HttpOptions::max_connections`](super::HttpOptions::max_connections)
//! counts connections that hold no event stream; those that do (a session's
//! GET stream, a POST answered as an event stream) count against
//! [`HttpOptions::max_event_streams`](super::HttpOptions::max_event_streams)
//! instead, so held streams cannot lock new connections out. At the cap, a
//! new connection takes the place of the connection idle the longest (no
//! request in flight, no open response stream: idle keep-alive, a client
//! that has not finished its request head), which is closed; with none
//! idle, a connection whose stream only lingers after its call was
//! cancelled (owed no response) is closed instead; only when there is
//! neither is the new connection closed at once. The table is looked at
//! only once it is full, and never on a request's path.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::activity::Activity;

/// The open connections.
pub(crate) struct ConnTable {
    conns: Mutex<HashMap<u64, Arc<Activity>>>,
    max_connections: usize,
    max_streams: usize,
}

/// Why a new connection could not be admitted.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Full;

/// One admitted connection; leaves the table when dropped.
pub(crate) struct ConnSlot {
    table: Arc<ConnTable>,
    key: u64,
}

impl ConnTable {
    pub(crate) fn new(max_connections: usize, max_streams: usize) -> Arc<Self> {
        Arc::new(Self {
            conns: Mutex::new(HashMap::new()),
            max_connections: max_connections.max(1),
            max_streams,
        })
    }

    /// Admits the connection `activity` tracks (under `key`, unique),
    /// closing the longest-idle one to make room when the table is full.
    pub(crate) fn admit(
        self: &Arc<Self>,
        key: u64,
        activity: &Arc<Activity>,
    ) -> Result<ConnSlot, Full> {
        let mut conns = self.conns.lock().unwrap_or_else(PoisonError::into_inner);
        if conns.len() >= self.max_connections {
            let mut streaming = 0;
            let mut victim: Option<(u64, std::time::Duration)> = None;
            let mut lingering = None;
            for (k, a) in conns.iter() {
                if a.has_stream() {
                    streaming += 1;
                    if a.answer.is_lingering() {
                        lingering = Some(*k);
                    }
                } else if let Some(idle) = a.idle_for() {
                    if victim.is_none_or(|(_, longest)| idle > longest) {
                        victim = Some((*k, idle));
                    }
                }
            }
            let held = conns.len() - streaming;
            let all = self.max_connections.saturating_add(self.max_streams);
            if held >= self.max_connections || conns.len() >= all {
                // Else a cancelled call's stream, which is owed nothing.
                let Some(k) = victim.map(|(k, _)| k).or(lingering) else {
                    return Err(Full);
                };
                if let Some(reaped) = conns.remove(&k) {
                    reaped.kill();
                }
            }
        }
        conns.insert(key, Arc::clone(activity));
        Ok(ConnSlot {
            table: Arc::clone(self),
            key,
        })
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Drop for ConnSlot {
    fn drop(&mut self) {
        self.table
            .conns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_cap_the_longest_idle_connection_makes_room() {
        let table = ConnTable::new(2, 1);
        let (a, b, c) = (Activity::new(), Activity::new(), Activity::new());
        let _sa = table.admit(1, &a).expect("room");
        let _sb = table.admit(2, &b).expect("room");
        // `b` is busy: `a` (idle) is reaped.
        let _busy = Activity::begin(&b);
        let _sc = table.admit(3, &c).expect("an idle one is reaped");
        assert!(a.is_killed());
        assert!(!b.is_killed());
        assert_eq!(table.len(), 2);
        // Both busy now: a fourth is refused.
        let _busy_c = Activity::begin(&c);
        assert!(table.admit(4, &Activity::new()).is_err());
    }

    #[test]
    fn with_none_idle_a_lingering_stream_makes_room() {
        let table = ConnTable::new(1, 1);
        let (a, b) = (Activity::new(), Activity::new());
        let _sb = table.admit(2, &b).expect("room");
        let _stream = Activity::stream(&b);
        let _busy_b = Activity::begin(&b);
        let _sa = table.admit(1, &a).expect("a stream does not hold a slot");
        let _busy = Activity::begin(&a);
        assert!(table.admit(3, &Activity::new()).is_err(), "nothing to reap");
        // `b`'s call was cancelled: its stream only lingers.
        b.answer.set_lingering();
        let _sc = table
            .admit(3, &Activity::new())
            .expect("the lingering one is reaped");
        assert!(b.is_killed());
        assert!(!a.is_killed());
    }

    #[test]
    fn connections_holding_streams_count_apart() {
        let table = ConnTable::new(1, 2);
        let (a, b, c) = (Activity::new(), Activity::new(), Activity::new());
        let _sa = table.admit(1, &a).expect("room");
        let _stream_a = Activity::stream(&a);
        let _sb = table.admit(2, &b).expect("a stream does not hold a slot");
        let _stream_b = Activity::stream(&b);
        let _sc = table.admit(3, &c).expect("still room");
        let _busy = Activity::begin(&c);
        // One connection and two streams: full, nothing idle.
        assert!(table.admit(4, &Activity::new()).is_err());
        assert!(!a.is_killed() && !b.is_killed() && !c.is_killed());
    }
}
