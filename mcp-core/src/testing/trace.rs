//! The trace recorder behind `MCP_TRACE_DIR` (feature `trace`), used by
//! this workspace's CI to check every response its tests receive against the
//! official JSON Schemas. Not part of what a user's test needs.
//!
//! When the environment variable `MCP_TRACE_DIR` is set (it is read once per
//! process), every [`TestClient`](super::TestClient) appends one JSON line
//! per message it receives to `$MCP_TRACE_DIR/trace-<pid>.jsonl` (one file
//! per process, opened in append mode; the directory is created if needed).
//! Each line is
//!
//! ```json
//! {"revision": "2025-11-25", "method": "tools/call", "message": {"jsonrpc": "2.0", "id": 3, "result": {}}}
//! ```
//!
//! - `message` is the message as received, verbatim (each entry of a batch
//!   reply is a line of its own; a line that is not JSON is recorded as a
//!   string);
//! - `method` is the method of the request a response answers (for every
//!   request this client wrote, including raw ones sent with
//!   [`send_raw`](super::TestClient::send_raw)), the message's own method
//!   for a notification or a server→client request, and `null` for a
//!   response to no request of this client;
//! - `revision` is the protocol revision in force: the
//!   `io.modelcontextprotocol/protocolVersion` in the answered request's
//!   `_meta` when it had one, else the version negotiated by this client's
//!   `initialize`, else `"2025-11-25"`. A notification takes the revision of
//!   the request it belongs to (by `progressToken`, by the
//!   `io.modelcontextprotocol/subscriptionId` of a listen stream, or by
//!   `requestId`), or that of the requests in flight when they all agree.
//!
//! `tests/schema/validate_traces.py` checks such a directory against the
//! official JSON Schemas of each revision. Write errors are ignored; when the
//! variable is unset nothing is recorded and nothing is parsed.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use serde_json::{json, Value};

use crate::protocol::{RequestId, LATEST_PROTOCOL_VERSION};

const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
const SUBSCRIPTION_ID_META: &str = "io.modelcontextprotocol/subscriptionId";

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// This process's trace file: `None` unless `MCP_TRACE_DIR` is set (read once).
fn trace_file() -> Option<&'static Mutex<std::fs::File>> {
    static FILE: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let dir = std::env::var_os("MCP_TRACE_DIR").filter(|dir| !dir.is_empty())?;
        let _ = std::fs::create_dir_all(&dir);
        let path = std::path::Path::new(&dir).join(format!("trace-{}.jsonl", std::process::id()));
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    })
    .as_ref()
}

/// Records one exchange made without a [`TestClient`](super::TestClient) (for example through
/// [`McpServer::handle_message`](crate::McpServer::handle_message) directly): `reply` answers `request`, under
/// the revision of the request's `_meta` claim or, without one, `revision`.
/// Does nothing unless `MCP_TRACE_DIR` is set. Batches are recorded entry
/// by entry when the request is a batch of the same length.
pub fn trace_exchange(request: &Value, reply: &Value, revision: &str) {
    let Some(file) = trace_file() else { return };
    let pairs: Vec<(&Value, &Value)> = match (request, reply) {
        (Value::Array(reqs), Value::Array(replies)) => {
            // Replies come in request order, one per request with an id.
            let with_ids = reqs
                .iter()
                .filter(|r| r.get("id").is_some() && r.get("method").is_some());
            with_ids.zip(replies.iter()).collect()
        }
        _ => vec![(request, reply)],
    };
    for (req, rep) in pairs {
        let method = req
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rev = req
            .pointer("/params/_meta")
            .and_then(|m| m.get(PROTOCOL_VERSION_META))
            .and_then(Value::as_str)
            .unwrap_or(revision);
        let line = json!({"revision": rev, "method": method, "message": rep});
        let mut f = lock(file);
        let _ = writeln!(f, "{line}");
    }
}

/// A request this client wrote, remembered until its response arrives.
struct SentRequest {
    method: String,
    /// The `_meta` protocol version it carried, if any.
    revision: Option<String>,
    progress_token: Option<Value>,
}

/// One client's trace state.
pub(super) struct Tracer {
    file: &'static Mutex<std::fs::File>,
    sent: Mutex<HashMap<RequestId, SentRequest>>,
    negotiated: Mutex<Option<String>>,
}

impl Tracer {
    pub(super) fn new() -> Option<Arc<Self>> {
        trace_file().map(|file| {
            Arc::new(Self {
                file,
                sent: Mutex::default(),
                negotiated: Mutex::default(),
            })
        })
    }

    /// Remembers the requests in an outgoing line (a message or a batch).
    pub(super) fn sent(&self, line: &[u8]) {
        match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(items)) => items.iter().for_each(|m| self.sent_one(m)),
            Ok(message) => self.sent_one(&message),
            Err(_) => {}
        }
    }

    fn sent_one(&self, message: &Value) {
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").and_then(RequestId::from_value);
        let (Some(method), Some(id)) = (method, id) else {
            return;
        };
        let meta = message.get("params").and_then(|p| p.get("_meta"));
        let revision = meta
            .and_then(|m| m.get(PROTOCOL_VERSION_META))
            .map(|v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        let progress_token = meta.and_then(|m| m.get("progressToken")).cloned();
        lock(&self.sent).insert(
            id,
            SentRequest {
                method: method.to_owned(),
                revision,
                progress_token,
            },
        );
    }

    /// Appends the trace line(s) of a received message; `raw` is its text
    /// when it is valid JSON.
    pub(super) fn received(&self, message: &Value, raw: Option<&str>) {
        match message {
            Value::Array(items) => items.iter().for_each(|m| self.received_one(m, None)),
            message => self.received_one(message, raw),
        }
    }

    fn received_one(&self, message: &Value, raw: Option<&str>) {
        let own_method = message.get("method").and_then(Value::as_str);
        let id = message.get("id").and_then(RequestId::from_value);
        let (method, revision) = match (own_method, id) {
            (Some(method), Some(_)) => (Some(method.to_owned()), None),
            (Some(method), None) => (Some(method.to_owned()), self.notification_revision(message)),
            (None, Some(id)) => {
                let request = lock(&self.sent).remove(&id);
                match request {
                    Some(request) => {
                        if request.method == "initialize" && request.revision.is_none() {
                            let version = message
                                .get("result")
                                .and_then(|r| r.get("protocolVersion"))
                                .and_then(Value::as_str);
                            if let Some(version) = version {
                                *lock(&self.negotiated) = Some(version.to_owned());
                            }
                        }
                        (Some(request.method), request.revision)
                    }
                    None => (None, None),
                }
            }
            (None, None) => (None, None),
        };
        let revision = revision
            .or_else(|| lock(&self.negotiated).clone())
            .unwrap_or_else(|| LATEST_PROTOCOL_VERSION.to_owned());
        let raw = raw.map_or_else(|| message.to_string(), |raw| raw.trim().to_owned());
        let line = format!(
            "{{\"revision\":{},\"method\":{},\"message\":{raw}}}\n",
            Value::String(revision),
            json!(method),
        );
        let _ = lock(self.file).write_all(line.as_bytes());
    }

    /// The `_meta` revision of the request a notification belongs to.
    fn notification_revision(&self, message: &Value) -> Option<String> {
        let params = message.get("params");
        let sent = lock(&self.sent);
        let by_token = params
            .and_then(|p| p.get("progressToken"))
            .and_then(|token| {
                sent.values()
                    .find(|r| r.progress_token.as_ref() == Some(token))
            });
        let by_id = || {
            let subscription = params
                .and_then(|p| p.get("_meta"))
                .and_then(|m| m.get(SUBSCRIPTION_ID_META));
            let request_id = params.and_then(|p| p.get("requestId"));
            subscription
                .or(request_id)
                .and_then(RequestId::from_value)
                .and_then(|id| sent.get(&id))
        };
        if let Some(request) = by_token.or_else(by_id) {
            return request.revision.clone();
        }
        // Uncorrelated (a log message, say): the requests in flight, when they agree.
        let mut revisions = sent.values().map(|r| &r.revision);
        let first = revisions.next()?;
        if revisions.all(|r| r == first) {
            first.clone()
        } else {
            None
        }
    }
}
