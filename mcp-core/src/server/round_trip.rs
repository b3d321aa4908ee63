//! Stage 7, round trips: a handler that asks the client something. On a
//! legacy session its questions are real requests (see
//! [`Channel`](crate::context::interrupt::Channel)); on 2026-07-28 the call
//! ends with `input_required` and a sealed `requestState`, and the retry
//! brings the answers. Also where a handler's [`InvokeContext`] is made.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::lifecycle::Lifecycle;
use super::outcome::Stop;
use super::request_facts::RequestFacts;
use crate::context::interrupt::{Interrupt, Interruption};
use crate::context::state_map::StateMap;
use crate::context::{CallContext, Extensions, InvokeContext, InvokeParts as Parts, Progress};
use crate::protocol::{Era, ErrorObject};
use crate::request_state::StateKeys;

/// What a handler's context is made from, beside the lifecycle: the
/// server's shared state, and the keys that seal a 2026-07-28
/// `requestState`.
pub(crate) struct Handlers {
    /// The state the builder registered, shared by every call.
    pub(crate) state: Arc<StateMap>,
    /// The keys `requestState` is sealed and opened with.
    pub(crate) state_keys: StateKeys,
}

/// The two parts a method that runs a handler reads to set its call up:
/// the lifecycle (the era's rules, the server's info) and the handlers'
/// shared state and keys.
#[derive(Clone, Copy)]
pub(crate) struct Invoke<'s> {
    pub(crate) lifecycle: &'s Lifecycle,
    pub(crate) handlers: &'s Handlers,
}

impl<'s> Invoke<'s> {
    /// [`RoundTrip::open`] with these parts.
    ///
    /// # Errors
    /// `-32602` for a `requestState` that does not open.
    #[inline]
    pub(crate) fn round_trip(
        self,
        facts: &RequestFacts,
        key: &str,
        args: &Map<String, Value>,
        params: &Map<String, Value>,
        handler_may_ask: bool,
    ) -> Result<RoundTrip<'s>, ErrorObject> {
        let keys = &self.handlers.state_keys;
        RoundTrip::open(
            self.lifecycle,
            keys,
            facts,
            key,
            args,
            params,
            handler_may_ask,
        )
    }

    /// [`RoundTrip::none`] with these parts.
    pub(crate) fn no_round_trip(self, facts: &RequestFacts) -> RoundTrip<'s> {
        RoundTrip::none(self.lifecycle, &self.handlers.state_keys, facts)
    }

    /// [`invoke_context`] with these parts.
    ///
    /// # Errors
    /// What [`invoke_context`] refuses.
    #[inline]
    pub(crate) fn context(
        self,
        facts: &RequestFacts,
        params: &Map<String, Value>,
        round: &RoundTrip<'_>,
        extensions: Extensions,
    ) -> Result<InvokeContext, ErrorObject> {
        let state = &self.handlers.state;
        invoke_context(self.lifecycle, state, facts, params, round, extensions)
    }
}

/// The longest `progressToken` accepted, in bytes (a string token; an
/// integer is always short).
pub(crate) const MAX_PROGRESS_TOKEN: usize = 256;

/// What a call's sealed `requestState` is bound to.
enum Identity {
    /// Computed: a retry's state was opened against it, or the arguments
    /// were too large to keep a copy of (see [`DEFER_UP_TO`]).
    Known(String),
    /// Not computed yet: a first round that may ask, and most never do.
    /// Hashing the arguments costs more than keeping them (a SHA-256 over
    /// their JSON against a copy of the tree), so the digest waits until
    /// the handler asks.
    Deferred {
        method: String,
        key: String,
        args: Map<String, Value>,
    },
}

/// Arguments up to about this many bytes are kept for a binding computed
/// later; larger ones are hashed at once.
const DEFER_UP_TO: usize = 4096;

/// True when the strings, keys and items of `args` add up to more than
/// `limit` bytes (a walk that stops as soon as they do).
fn larger_than(args: &Map<String, Value>, limit: usize) -> bool {
    fn walk(value: &Value, budget: &mut usize) -> bool {
        let cost = match value {
            Value::String(s) => s.len(),
            Value::Array(items) => {
                return items.iter().any(|item| walk(item, budget)) || spend(budget, 1)
            }
            Value::Object(map) => {
                return spend(budget, 1)
                    || map
                        .iter()
                        .any(|(key, item)| spend(budget, key.len()) || walk(item, budget))
            }
            _ => 8,
        };
        spend(budget, cost)
    }
    fn spend(budget: &mut usize, cost: usize) -> bool {
        match budget.checked_sub(cost) {
            Some(left) => {
                *budget = left;
                false
            }
            None => true,
        }
    }
    let mut budget = limit;
    args.iter()
        .any(|(key, item)| spend(&mut budget, key.len()) || walk(item, &mut budget))
}

impl Identity {
    fn binding(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Known(identity) => identity.as_str().into(),
            Self::Deferred { method, key, args } => {
                crate::request_state::binding(method, key, args).into()
            }
        }
    }
}

/// A call that a handler may interrupt.
pub(crate) struct RoundTrip<'a> {
    pub(crate) interrupt: Arc<Interrupt>,
    /// Set for modern requests that may ask: what sealed state is bound to
    /// (method plus a digest of name or URI and arguments).
    identity: Option<Identity>,
    lifecycle: &'a Lifecycle,
    state_keys: &'a StateKeys,
    principal: Option<Arc<str>>,
}

impl<'a> RoundTrip<'a> {
    /// Sets up a call that may be interrupted: for a modern request, opens
    /// its `requestState` (answers of earlier rounds) and merges the retry's
    /// `inputResponses`. `key` is the tool or prompt name or resource URI.
    ///
    /// # Errors
    /// `-32602` for a `requestState` that does not open.
    pub(crate) fn open(
        lifecycle: &'a Lifecycle,
        state_keys: &'a StateKeys,
        facts: &RequestFacts,
        key: &str,
        args: &Map<String, Value>,
        params: &Map<String, Value>,
        handler_may_ask: bool,
    ) -> Result<Self, ErrorObject> {
        let mut round = Self {
            interrupt: Arc::new(Interrupt::default()),
            identity: None,
            lifecycle,
            state_keys,
            principal: facts.ctx.principal.clone(),
        };
        let Era::Modern(meta) = &facts.era else {
            return Ok(round);
        };
        // A handler can only ask what the client declared it can answer
        // (elicitation, sampling, roots, or an extension), and only if it
        // can reach its context at all: otherwise a request that carries
        // no answers never needs its binding, which hashes the arguments.
        let caps = &meta.client.capabilities;
        let may_ask = handler_may_ask
            && (caps.elicitation.is_some()
                || caps.sampling.is_some()
                || caps.roots.is_some()
                || !caps.extra.is_empty());
        if !may_ask
            && !params.contains_key("requestState")
            && !params.contains_key("inputResponses")
        {
            return Ok(round);
        }
        let Some(state) = params.get("requestState") else {
            if let Some(Value::Object(responses)) = params.get("inputResponses") {
                // Answers without a state: nothing of an earlier round to
                // carry, and these answers are the client's own either way,
                // so they are used as given (keys nobody asks for are
                // ignored; answers that are not objects are dropped and the
                // question asked again).
                let answers = responses
                    .iter()
                    .filter(|(_, answer)| answer.is_object())
                    .map(|(key, answer)| (key.clone(), answer.clone()))
                    .collect();
                round.interrupt = Arc::new(Interrupt::with_answers(answers));
            }
            // A copy of large arguments would cost more memory than their
            // digest costs time: those are hashed now.
            round.identity = Some(if larger_than(args, DEFER_UP_TO) {
                Identity::Known(crate::request_state::binding(&facts.method, key, args))
            } else {
                Identity::Deferred {
                    method: facts.method.to_string(),
                    key: key.to_owned(),
                    args: args.clone(),
                }
            });
            return Ok(round);
        };
        let identity = crate::request_state::binding(&facts.method, key, args);
        let state = state
            .as_str()
            .ok_or_else(|| ErrorObject::invalid_params("`requestState` must be a string"))?;
        let (mut answers, pending) = state_keys
            .open(state, &identity, facts.ctx.principal.as_deref())
            .map_err(|why| ErrorObject::invalid_params(format!("Invalid requestState: {why}")))?;
        if let Some(Value::Object(responses)) = params.get("inputResponses") {
            for key in pending {
                if let Some(answer @ Value::Object(_)) = responses.get(&key) {
                    answers.insert(key, answer.clone());
                }
            }
        }
        round.interrupt = Arc::new(Interrupt::with_answers(answers));
        round.identity = Some(Identity::Known(identity));
        Ok(round)
    }

    /// A call that cannot ask by round trip (its questions, if any, get
    /// an error): `completion/complete`.
    pub(crate) fn none(
        lifecycle: &'a Lifecycle,
        state_keys: &'a StateKeys,
        facts: &RequestFacts,
    ) -> Self {
        Self {
            interrupt: Arc::new(Interrupt::default()),
            identity: None,
            lifecycle,
            state_keys,
            principal: facts.ctx.principal.clone(),
        }
    }
}

/// The context a handler of this request receives.
///
/// # Errors
/// `-32602` for a `progressToken` longer than [`MAX_PROGRESS_TOKEN`]
/// bytes: every progress notification repeats it, so a huge one would
/// multiply into the output.
pub(crate) fn invoke_context(
    lifecycle: &Lifecycle,
    state: &Arc<StateMap>,
    facts: &RequestFacts,
    params: &Map<String, Value>,
    round: &RoundTrip<'_>,
    extensions: Extensions,
) -> Result<InvokeContext, ErrorObject> {
    let ctx = &facts.ctx;
    let progress = match (&ctx.progress, &ctx.outbound) {
        (Some(sink), _) => Some(Progress::sink(Arc::clone(sink))),
        (None, Some(outbound)) => {
            progress_token(params)?.map(|t| Progress::notify(t.clone(), Arc::clone(outbound)))
        }
        (None, None) => None,
    };
    let (client, channel) = lifecycle.client_and_channel(facts, &round.interrupt);
    let can_elicit = client
        .as_deref()
        .is_some_and(|c| c.capabilities.supports_form_elicitation());
    let parts = Parts {
        progress,
        elicitor: std::sync::OnceLock::new(),
        can_elicit,
        request_id: Some(facts.id.clone()),
        client,
        call: {
            let mut call = CallContext::clone(ctx);
            call.extensions = extensions;
            call
        },
        state: Some(Arc::clone(state)),
        interrupt: Some(Arc::clone(&round.interrupt)),
        channel,
        modern: facts.is_modern(),
        no_round_trip: facts.is_modern() && round.identity.is_none(),
        log_threshold: lifecycle.log_threshold(facts),
    };
    Ok(InvokeContext::with_parts(facts.token().clone(), parts))
}

/// The usable `progressToken` of a request's `_meta` (a string or an
/// integer), as the context of a transport that can notify reads it.
///
/// # Errors
/// `-32602` for a string token longer than [`MAX_PROGRESS_TOKEN`] bytes.
pub(crate) fn progress_token(params: &Map<String, Value>) -> Result<Option<&Value>, ErrorObject> {
    match params.get("_meta").and_then(|m| m.get("progressToken")) {
        Some(Value::String(t)) if t.len() > MAX_PROGRESS_TOKEN => Err(ErrorObject::invalid_params(
            format!("`progressToken` is longer than {MAX_PROGRESS_TOKEN} bytes"),
        )),
        Some(t) if t.is_string() || t.as_i64().is_some() => Ok(Some(t)),
        _ => Ok(None),
    }
}

impl RoundTrip<'_> {
    /// Runs the handler future unless it interrupts itself; an interruption
    /// comes back as the [`Stop`] it means.
    pub(crate) async fn run<T>(
        &self,
        work: impl std::future::Future<Output = T>,
    ) -> Result<T, Stop> {
        // Work first: a handler that finishes at once never registers a
        // waiter on the interrupt.
        tokio::select! {
            biased;
            r = work => Ok(r),
            why = self.interrupt.wait() => Err(self.interrupted(why)),
        }
    }

    /// The [`Stop`] an interruption means for this call.
    pub(crate) fn interrupted(&self, why: Interruption) -> Stop {
        match (why, &self.identity) {
            (Interruption::Error(e), _) => Stop::Error(e),
            (Interruption::Input(requests), Some(identity)) => {
                let pending: Vec<String> = requests.keys().cloned().collect();
                let state = self.state_keys.seal(
                    &identity.binding(),
                    self.principal.as_deref(),
                    &self.interrupt.used_answers(),
                    &pending,
                );
                let mut result = Map::new();
                result.insert("resultType".into(), Value::String("input_required".into()));
                result.insert("inputRequests".into(), Value::Object(requests));
                result.insert("requestState".into(), Value::String(state));
                self.lifecycle.decorate(&mut result);
                Stop::InputRequired(result)
            }
            (Interruption::Input(_), None) => Stop::Error(ErrorObject::internal(
                "this request cannot ask for input by round trip",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn large_arguments_are_found_without_walking_them_all() {
        let small = json!({"a": "x", "b": [1, 2, {"c": true}]});
        assert!(!larger_than(
            small.as_object().unwrap_or(&Map::new()),
            DEFER_UP_TO
        ));
        let big = json!({"text": "x".repeat(DEFER_UP_TO + 1)});
        assert!(larger_than(
            big.as_object().unwrap_or(&Map::new()),
            DEFER_UP_TO
        ));
        let many = json!({"items": vec![json!(1); DEFER_UP_TO]});
        assert!(larger_than(
            many.as_object().unwrap_or(&Map::new()),
            DEFER_UP_TO
        ));
        let nested = json!({"a": {"b": {"c": "y".repeat(DEFER_UP_TO)}}});
        assert!(larger_than(
            nested.as_object().unwrap_or(&Map::new()),
            DEFER_UP_TO
        ));
    }
}
