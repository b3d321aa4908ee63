//! How a request becomes final: the 2026-07-28 `input_required` rounds
//! (the handlers' answers, then the retry with `inputResponses` and the
//! server's `requestState`) and the retry with another stateless
//! revision after a `-32022`.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

use super::connect::supported_modern;
use super::engine::{modern_meta, Speaking};
use super::error::ClientError;
use super::options::RequestOptions;
use super::Client;
use crate::protocol::ErrorCode;

/// `input_required` rounds one request may take.
const MAX_INPUT_ROUNDS: usize = 16;

impl Client {
    /// Sends `method` until its result is final: each answer goes to
    /// `read`, which returns it read, or asks for an input round; a
    /// `-32022` naming another stateless revision is retried once with it.
    pub(crate) async fn drive<T>(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        options: &RequestOptions,
        read: impl Fn(Box<RawValue>) -> Result<Step<T>, ClientError>,
    ) -> Result<T, ClientError> {
        let mut retried_version = false;
        let mut rounds = 0;
        loop {
            let raw = match self.peer.request(method, &params, options).await {
                Err(ClientError::Rpc(e))
                    if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0
                        && self.peer.is_modern()
                        && !retried_version =>
                {
                    let Some(version) = supported_modern(e.data.as_ref()) else {
                        return Err(ClientError::Rpc(e));
                    };
                    retried_version = true;
                    self.switch_to(&version);
                    continue;
                }
                other => other?,
            };
            match read(raw)? {
                Step::Done(result) => return Ok(result),
                Step::Input(result) => {
                    rounds += 1;
                    if rounds > MAX_INPUT_ROUNDS {
                        return Err(ClientError::protocol(format!(
                            "{method} still asks for input after {MAX_INPUT_ROUNDS} rounds"
                        )));
                    }
                    self.fulfil(&mut params, result, options).await?;
                }
            }
        }
    }

    /// Speaks stateless `version` from now on.
    fn switch_to(&self, version: &str) {
        let speaking = self.peer.speaking();
        let meta = speaking.modern_meta.map(|mut meta| {
            meta.insert(
                crate::protocol::meta::meta_keys::PROTOCOL_VERSION.into(),
                Value::String(version.into()),
            );
            meta
        });
        let meta = meta.unwrap_or_else(|| modern_meta(version, &Map::new(), &Value::Null));
        self.peer.speak(Speaking::modern(version, meta));
    }

    /// Answers the entries of an `input_required` result and sets the
    /// retry's `inputResponses` and `requestState` in `params`.
    async fn fulfil(
        &self,
        params: &mut Map<String, Value>,
        result: Value,
        options: &RequestOptions,
    ) -> Result<(), ClientError> {
        let handlers = options.handlers.as_ref().unwrap_or(&self.peer.handlers);
        let Value::Object(mut result) = result else {
            return Err(ClientError::protocol(
                "an input_required result that is not an object",
            ));
        };
        let requests = match result.remove("inputRequests") {
            Some(Value::Object(requests)) => requests,
            None => Map::new(),
            Some(_) => return Err(ClientError::protocol("inputRequests is not an object")),
        };
        let mut responses = Map::new();
        for (key, request) in requests {
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    ClientError::protocol(format!("input request {key:?} has no method"))
                })?;
            if !handlers.answers(method) {
                return Err(ClientError::protocol(format!(
                    "the server asks for {method}, which this client does not answer"
                )));
            }
            let request_params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = handlers
                .answer(method, request_params)
                .await
                .map_err(ClientError::Rpc)?;
            responses.insert(key, answer);
        }
        params.insert("inputResponses".into(), Value::Object(responses));
        // The state goes back exactly as it came, or not at all.
        match result.remove("requestState") {
            Some(state) => params.insert("requestState".into(), state),
            None => params.remove("requestState"),
        };
        Ok(())
    }
}

/// What [`Client::drive`]'s reader made of one answer.
pub(crate) enum Step<T> {
    /// The final result.
    Done(T),
    /// An `input_required` result (2026-07-28), whole: fulfil and retry.
    Input(Value),
}

/// What an answer naming `result_type` is: final (`None`, `"complete"`,
/// or anything on a legacy revision), or an input round (its whole
/// result, parsed from `raw`).
///
/// # Errors
/// A `resultType` this client does not know.
pub(crate) fn input_round(
    method: &str,
    modern: bool,
    result_type: Option<&str>,
    raw: &RawValue,
) -> Result<Option<Value>, ClientError> {
    match result_type {
        _ if !modern => Ok(None),
        None | Some("complete") => Ok(None),
        Some("input_required") => serde_json::from_str(raw.get())
            .map(Some)
            .map_err(ClientError::protocol),
        Some(other) => Err(ClientError::protocol(format!(
            "{method} answered resultType {other:?}, which this client does not know"
        ))),
    }
}
