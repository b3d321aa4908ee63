//! Stopping a running handler from inside: a multi round-trip request that
//! needs input from the client (2026-07-28 `input_required`), or a protocol
//! error a handler raises (`-32021` for a missing client capability).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use serde_json::{json, Map, Value};
use tokio::sync::Notify;

use crate::context::Elicit;
use crate::protocol::ErrorObject;

/// Why a handler was stopped.
#[derive(Debug, Clone)]
pub(crate) enum Interruption {
    /// The handler needs the client's answer to `request` (a `{method, params}`
    /// input request) under `key`.
    Input { key: String, request: Value },
    /// Answer the request with this error.
    Error(ErrorObject),
}

/// A one-shot slot a handler raises and the dispatcher waits on.
#[derive(Default, Debug)]
pub(crate) struct Interrupt {
    slot: Mutex<Option<Interruption>>,
    notify: Notify,
}

impl Interrupt {
    /// Raises an interruption (the first one wins) and never returns: the
    /// dispatcher drops the handler's future.
    pub(crate) async fn raise(&self, why: Interruption) -> std::convert::Infallible {
        {
            let mut slot = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
            if slot.is_none() {
                *slot = Some(why);
            }
        }
        self.notify.notify_one();
        std::future::pending().await
    }

    /// Completes when a handler raised an interruption.
    pub(crate) async fn wait(&self) -> Interruption {
        loop {
            if let Some(why) = self
                .slot
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                return why;
            }
            self.notify.notified().await;
        }
    }
}

/// Elicitation for a 2026-07-28 request: answers come from the retry
/// (`inputResponses`, plus earlier rounds carried in `requestState`); a
/// question without an answer yet stops the handler with `input_required`.
///
/// Questions are keyed by their order in the handler (`elicit-0`,
/// `elicit-1`, …), so a handler must ask the same questions in the same
/// order when it runs again on the retry.
pub(crate) struct RoundTripElicit {
    pub(crate) answers: Map<String, Value>,
    pub(crate) next: AtomicUsize,
    pub(crate) interrupt: Arc<Interrupt>,
}

#[async_trait]
impl Elicit for RoundTripElicit {
    async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        let key = format!("elicit-{}", self.next.fetch_add(1, Ordering::Relaxed));
        if let Some(answer) = self.answers.get(&key) {
            return Ok(answer.clone());
        }
        let mut params = params;
        if let Value::Object(p) = &mut params {
            p.entry("mode")
                .or_insert_with(|| Value::String("form".into()));
        }
        let request = json!({ "method": "elicitation/create", "params": params });
        match self
            .interrupt
            .raise(Interruption::Input { key, request })
            .await {}
    }
}
