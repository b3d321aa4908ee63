//! [`RedisNotificationBus`]: notices between replicas on Redis pub/sub.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use super::RedisBackend;
use crate::storage::{BusEvent, BusSink, NotificationBus};

/// The largest message taken from the channel (a notice is small; a
/// larger payload is not ours and is dropped unread).
const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// How long the subscriber waits before subscribing again after a failure.
const RESUBSCRIBE_AFTER: Duration = Duration::from_millis(250);

/// One message on the channel: who sent it, and the notice.
#[derive(Serialize, Deserialize)]
struct Envelope {
    from: String,
    event: BusEvent,
}

/// A [`NotificationBus`] on the pub/sub channel `{prefix}bus` of a
/// [`RedisBackend`]: every replica publishes its notices there and
/// delivers those of the others (its own, recognised by a random replica
/// id, are skipped). Best effort: a notice published while Redis is down
/// is lost; the subscriber subscribes again by itself.
#[derive(Clone)]
pub struct RedisNotificationBus {
    shared: Arc<Shared>,
}

struct Shared {
    redis: RedisBackend,
    channel: String,
    /// This replica's id (128 random bits, hex).
    me: String,
    sink: Mutex<Option<BusSink>>,
    /// True while subscribed.
    subscribed: watch::Sender<bool>,
}

impl std::fmt::Debug for RedisNotificationBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisNotificationBus")
            .field("channel", &self.shared.channel)
            .field("subscribed", &*self.shared.subscribed.borrow())
            .finish_non_exhaustive()
    }
}

impl RedisNotificationBus {
    pub(super) fn start(redis: RedisBackend) -> Self {
        let me: String = crate::random::bytes::<16>()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let shared = Arc::new(Shared {
            channel: redis.key("bus", ""),
            redis,
            me,
            sink: Mutex::new(None),
            subscribed: watch::Sender::new(false),
        });
        tokio::spawn(subscribe(Arc::downgrade(&shared)));
        Self { shared }
    }

    /// True while the subscriber is subscribed.
    pub fn is_subscribed(&self) -> bool {
        *self.shared.subscribed.borrow()
    }
}

/// The subscriber: subscribes, hands each notice of another replica to
/// the sink, and subscribes again after any failure; ends with the bus.
async fn subscribe(shared: std::sync::Weak<Shared>) {
    loop {
        let Some(bus) = shared.upgrade() else { return };
        let pubsub = bus.redis.client.get_async_pubsub();
        let pubsub = tokio::time::timeout(bus.redis.timeout, pubsub).await;
        let mut pubsub = match pubsub {
            Ok(Ok(pubsub)) => pubsub,
            _ => {
                drop(bus);
                tokio::time::sleep(RESUBSCRIBE_AFTER).await;
                continue;
            }
        };
        if pubsub.subscribe(&bus.channel).await.is_err() {
            drop(bus);
            tokio::time::sleep(RESUBSCRIBE_AFTER).await;
            continue;
        }
        bus.subscribed.send_replace(true);
        drop(bus);
        let mut messages = pubsub.into_on_message();
        // The stream ends when the connection drops.
        while let Some(message) = messages.next().await {
            let Some(bus) = shared.upgrade() else { return };
            let payload = message.get_payload_bytes();
            if payload.len() > MAX_MESSAGE_BYTES {
                continue;
            }
            let Ok(envelope) = serde_json::from_slice::<Envelope>(payload) else {
                continue;
            };
            if envelope.from == bus.me {
                continue;
            }
            let sink = bus
                .sink
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            if let Some(sink) = sink {
                sink(envelope.event);
            }
        }
        let Some(bus) = shared.upgrade() else { return };
        bus.subscribed.send_replace(false);
        tracing::warn!(channel = %bus.channel, "notification bus disconnected; subscribing again");
        drop(bus);
        tokio::time::sleep(RESUBSCRIBE_AFTER).await;
    }
}

#[async_trait]
impl NotificationBus for RedisNotificationBus {
    async fn publish(&self, event: BusEvent) {
        let envelope = Envelope {
            from: self.shared.me.clone(),
            event,
        };
        let Ok(payload) = serde_json::to_vec(&envelope) else {
            return;
        };
        let mut conn = self.shared.redis.connection();
        let sent: Result<i64, _> = redis::cmd("PUBLISH")
            .arg(&self.shared.channel)
            .arg(payload)
            .query_async(&mut conn)
            .await;
        if let Err(e) = sent {
            tracing::warn!(error = %e, "notification bus: a notice was not published");
        }
    }

    /// Completes once the subscriber is subscribed (notices of other
    /// replicas reach this one from then on); at once if it is.
    async fn ready(&self) {
        let mut rx = self.shared.subscribed.subscribe();
        let _ = rx.wait_for(|on| *on).await;
    }

    fn attach(&self, sink: BusSink) {
        *self
            .shared
            .sink
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(sink);
    }
}
