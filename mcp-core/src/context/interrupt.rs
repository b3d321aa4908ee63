//! Stopping a running handler from inside: a multi round-trip request that
//! needs input from the client (2026-07-28 `input_required`), or a protocol
//! error a handler raises (`-32021` for a missing client capability).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Map, Value};
use tokio::sync::Notify;

use super::elicit::Elicit;
use super::outbound::Outbound;
use crate::protocol::ErrorObject;
use crate::session::Session;

/// Why a handler was stopped.
#[derive(Debug, Clone)]
pub(crate) enum Interruption {
    /// The handler needs the client's answers to these input requests
    /// (key → `{method, params}`).
    Input(Map<String, Value>),
    /// Answer the request with this error.
    Error(ErrorObject),
}

/// A one-shot slot a handler raises and the dispatcher waits on, plus, for
/// a 2026-07-28 round trip, the answers collected so far and the counter
/// that names unnamed questions.
#[derive(Default, Debug)]
pub(crate) struct Interrupt {
    slot: Mutex<Option<Interruption>>,
    notify: Notify,
    pub(crate) answers: Map<String, Value>,
    /// The keys of `answers` the handler asked for this round: only those
    /// are sealed into the next `requestState` (never a key the server did
    /// not ask, however many a client sends).
    used: Mutex<Vec<String>>,
    pub(crate) next: AtomicUsize,
}

impl Interrupt {
    /// A round with the answers collected so far.
    pub(crate) fn with_answers(answers: Map<String, Value>) -> Self {
        Self {
            answers,
            ..Self::default()
        }
    }

    /// Ends the call with `why` (the first interruption wins). Only the
    /// request pipeline creates an `Interrupt`, and it races every handler
    /// it runs against [`wait`](Self::wait): once raised, the pipeline
    /// answers the interruption and drops the handler's future, so this
    /// future never completes (a detached context has no `Interrupt`, and
    /// its calls return errors instead).
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

    /// Splits `requests` (key, method, params) into the answers this
    /// round already carries, by key, and the questions still to ask, as
    /// `inputRequests` entries.
    pub(crate) fn split_answered(
        &self,
        requests: Vec<(String, String, Value)>,
    ) -> (Map<String, Value>, Map<String, Value>) {
        let mut answers = Map::new();
        let mut missing = Map::new();
        for (key, method, params) in requests {
            match self.answer(&key) {
                Some(answer) => {
                    answers.insert(key, answer.clone());
                }
                None => {
                    missing.insert(key, input_request(method, params));
                }
            }
        }
        (answers, missing)
    }

    /// The answer under `key`, recorded as used.
    pub(crate) fn answer(&self, key: &str) -> Option<&Value> {
        let answer = self.answers.get(key)?;
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        if !used.iter().any(|k| k == key) {
            used.push(key.to_owned());
        }
        Some(answer)
    }

    /// The answers the handler used this round, to seal for the next.
    pub(crate) fn used_answers(&self) -> Map<String, Value> {
        let used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        used.iter()
            .filter_map(|k| self.answers.get(k).map(|a| (k.clone(), a.clone())))
            .collect()
    }

    /// The interruption raised so far, if any (taken: a later
    /// [`wait`](Self::wait) does not see it again).
    pub(crate) fn try_take(&self) -> Option<Interruption> {
        self.slot
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
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

/// Sends server→client requests for a handler, in whichever way the
/// request's era allows.
#[async_trait]
pub(crate) trait Requester: Send + Sync {
    /// A fresh key for a request the handler did not name.
    fn auto_key(&self, prefix: &str) -> String;

    /// Asks all `requests` (key, method, params) and returns the answers by key.
    async fn request_all(
        &self,
        requests: Vec<(String, String, Value)>,
    ) -> Result<Map<String, Value>, ErrorObject>;
}

/// Legacy era: real JSON-RPC requests on the outbound channel, answered
/// through the session's pending table, one after the other.
pub(crate) struct OutboundRequester {
    pub(crate) session: Session,
    pub(crate) outbound: Arc<dyn Outbound>,
    pub(crate) next: AtomicUsize,
    /// How long the client has to answer each request.
    pub(crate) timeout: Duration,
}

#[async_trait]
impl Requester for OutboundRequester {
    fn auto_key(&self, prefix: &str) -> String {
        format!("{prefix}-{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    async fn request_all(
        &self,
        requests: Vec<(String, String, Value)>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let mut answers = Map::new();
        for (key, method, params) in requests {
            if self.session.is_closed() {
                return Err(ErrorObject::internal("the client connection closed"));
            }
            let (id, pending) = self.session.begin_outbound();
            let request = crate::protocol::jsonrpc::request(&id, &method, params);
            if !self.outbound.send(request).await {
                return Err(ErrorObject::internal("the client connection closed"));
            }
            let answer = tokio::time::timeout(self.timeout, pending.wait())
                .await
                .map_err(|_| {
                    // Dropping the pending reply forgets the request: a late
                    // answer is ignored.
                    ErrorObject::internal(format!(
                        "the client did not answer `{method}` within {} s",
                        self.timeout.as_secs_f64()
                    ))
                })??;
            answers.insert(key, answer);
        }
        Ok(answers)
    }
}

/// 2026-07-28: answers come from the retry (`inputResponses`, plus earlier
/// rounds carried in `requestState`); questions without an answer yet stop
/// the handler with `input_required` listing all of them.
///
/// Unnamed questions are keyed by their order in the handler (`elicit-0`,
/// `sample-1`, …), so a handler must ask the same questions in the same
/// order when it runs again on the retry.
pub(crate) struct RoundTripRequester {
    pub(crate) interrupt: Arc<Interrupt>,
}

#[async_trait]
impl Requester for RoundTripRequester {
    fn auto_key(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.interrupt.next.fetch_add(1, Ordering::Relaxed)
        )
    }

    async fn request_all(
        &self,
        requests: Vec<(String, String, Value)>,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let (answers, missing) = self.interrupt.split_answered(requests);
        if missing.is_empty() {
            return Ok(answers);
        }
        match self.interrupt.raise(Interruption::Input(missing)).await {}
    }
}

/// One question as `inputRequests` lists it: `{method, params}` (a form
/// elicitation says `mode: "form"`).
pub(crate) fn input_request(method: String, mut params: Value) -> Value {
    if let (true, Value::Object(p)) = (method == "elicitation/create", &mut params) {
        p.entry("mode")
            .or_insert_with(|| Value::String("form".into()));
    }
    let mut request = Map::new();
    request.insert("method".into(), Value::String(method));
    if !params.is_null() {
        request.insert("params".into(), params);
    }
    Value::Object(request)
}

/// What can carry a handler's questions to the client.
#[derive(Clone, Default)]
pub(crate) enum Channel {
    /// Nothing (no outbound channel on a legacy request).
    #[default]
    None,
    /// Legacy: real requests on this session's outbound channel.
    Legacy {
        session: Session,
        outbound: Arc<dyn Outbound>,
        /// How long the client has to answer each request.
        timeout: Duration,
    },
    /// 2026-07-28: `input_required` round trips.
    RoundTrip(Arc<Interrupt>),
    /// A requester of the pipeline's own (a call run as a task).
    Custom(Arc<dyn Requester>),
}

impl Channel {
    /// A requester for this channel, built on first use (most calls never ask).
    pub(crate) fn requester(&self) -> Option<Arc<dyn Requester>> {
        match self {
            Self::None => None,
            Self::Legacy {
                session,
                outbound,
                timeout,
            } => Some(Arc::new(OutboundRequester {
                session: session.clone(),
                outbound: Arc::clone(outbound),
                next: AtomicUsize::new(0),
                timeout: *timeout,
            })),
            Self::RoundTrip(interrupt) => Some(Arc::new(RoundTripRequester {
                interrupt: Arc::clone(interrupt),
            })),
            Self::Custom(requester) => Some(Arc::clone(requester)),
        }
    }
}

/// Elicitation over either requester.
pub(crate) struct RequesterElicit(pub(crate) Arc<dyn Requester>);

#[async_trait]
impl Elicit for RequesterElicit {
    async fn elicit(&self, params: Value) -> Result<Value, ErrorObject> {
        let key = self.0.auto_key("elicit");
        self.elicit_keyed(&key, params).await
    }

    async fn elicit_keyed(&self, key: &str, params: Value) -> Result<Value, ErrorObject> {
        let mut answers = self
            .0
            .request_all(vec![(
                key.to_owned(),
                "elicitation/create".to_owned(),
                params,
            )])
            .await?;
        Ok(answers.remove(key).unwrap_or(Value::Null))
    }
}
