//! The client's side: one CLIENT span per request, its context written
//! into the request's `_meta`, and `mcp.client.operation.duration`.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::metrics::Histogram;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{duration, metric_attributes, span_name, target_key, Names, CLIENT_DURATION, SCOPE};
use crate::client::engine::Peer;
use crate::client::ClientError;
use crate::protocol::{RequestId, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS};

/// The client histogram on the global meter, made at the first request
/// (install the meter provider before connecting), and the names seen.
fn instruments() -> &'static (Histogram<f64>, Names) {
    static INSTRUMENTS: OnceLock<(Histogram<f64>, Names)> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter(SCOPE);
        let histogram = duration(
            &meter,
            CLIENT_DURATION,
            "MCP request duration as observed by the client",
        );
        (histogram, Names::default())
    })
}

/// One request's span and clock, from before it is sent until its answer.
pub(crate) struct ClientCall {
    span: tracing::Span,
    started: Instant,
    method: String,
    target: Option<String>,
    version: Option<&'static str>,
    transport: &'static str,
    error: Option<String>,
    recorded: bool,
}

impl ClientCall {
    /// Opens the span of request `method` (a child of the current span),
    /// speaking `version` on `peer`'s link (HTTP: `tcp`, else a pipe), and
    /// gives `params` with the span's context in `_meta` when there is one
    /// (an OpenTelemetry layer is installed and the span is enabled).
    pub(crate) fn start(
        method: &str,
        params: &Map<String, Value>,
        id: &RequestId,
        version: &Option<Arc<str>>,
        peer: &Peer,
    ) -> (Self, Option<Map<String, Value>>) {
        // A revision this crate speaks, as a static string (the client
        // speaks no other).
        let version = version.as_deref().and_then(|v| {
            SUPPORTED_PROTOCOL_VERSIONS
                .iter()
                .chain(MODERN_PROTOCOL_VERSIONS)
                .copied()
                .find(|known| *known == v)
        });
        let key = target_key(method);
        let target = key
            .and_then(|_| {
                params.get(if method == "resources/read" {
                    "uri"
                } else {
                    "name"
                })
            })
            .and_then(Value::as_str);
        let transport = if peer.link().routes() { "tcp" } else { "pipe" };
        let span = tracing::info_span!(
            "mcp.client.request",
            otel.name = span_name(method, target),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method,
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            jsonrpc.request.id = %id,
            mcp.protocol.version = version,
            network.transport = transport,
            "error.type" = tracing::field::Empty,
            rpc.response.status_code = tracing::field::Empty,
        );
        if let (Some(key), Some(target)) = (key, target) {
            span.record(key, target);
        }
        if method == "tools/call" {
            span.record("gen_ai.operation.name", "execute_tool");
        }
        let traced = if span.is_disabled() {
            None
        } else {
            super::inject(&span.context(), params)
        };
        let call = Self {
            span,
            started: Instant::now(),
            method: method.to_owned(),
            target: target.map(str::to_owned),
            version,
            transport,
            error: None,
            recorded: false,
        };
        (call, traced)
    }

    /// Notes a failure to send.
    pub(crate) fn sent(&mut self, sent: &Result<(), ClientError>) {
        if let Err(e) = sent {
            self.error = Some(error_type(e));
        }
    }

    /// Ends the call with its answer.
    pub(crate) fn finish(mut self, result: &Result<Box<RawValue>, ClientError>) {
        self.error = match result {
            Err(e) => Some(error_type(e)),
            Ok(raw) if self.method == "tools/call" && is_tool_error(raw) => {
                Some("tool_error".to_owned())
            }
            Ok(_) => None,
        };
        if let Err(ClientError::Rpc(e)) = result {
            self.span
                .record("rpc.response.status_code", e.code.to_string());
        }
        self.record();
    }

    fn record(&mut self) {
        if std::mem::replace(&mut self.recorded, true) {
            return;
        }
        if let Some(error) = &self.error {
            self.span.record("error.type", error.as_str());
            self.span.record("otel.status_code", "error");
        }
        let (histogram, names) = instruments();
        histogram.record(
            self.started.elapsed().as_secs_f64(),
            &metric_attributes(
                names,
                &self.method,
                self.target.as_deref(),
                self.version,
                self.transport,
                self.error.as_deref(),
            ),
        );
    }
}

impl Drop for ClientCall {
    /// A call dropped before its answer (abandoned, or failed to send)
    /// still counts, as `cancelled` unless it failed.
    fn drop(&mut self) {
        if !self.recorded {
            self.error.get_or_insert_with(|| "cancelled".to_owned());
            self.record();
        }
    }
}

/// `error.type` of a failed call: the JSON-RPC error code as a string,
/// else what went wrong (`timeout`, `cancelled`, `closed`, `transport`,
/// `protocol`, `authorization`).
fn error_type(error: &ClientError) -> String {
    match error {
        ClientError::Rpc(e) => e.code.to_string(),
        ClientError::Timeout => "timeout".to_owned(),
        ClientError::Cancelled => "cancelled".to_owned(),
        ClientError::Closed => "closed".to_owned(),
        ClientError::Transport(_) => "transport".to_owned(),
        ClientError::Protocol(_) => "protocol".to_owned(),
        ClientError::Authorization(_) => "authorization".to_owned(),
        #[allow(unreachable_patterns)]
        _ => "_OTHER".to_owned(),
    }
}

/// True when a `tools/call` result says `isError: true`.
fn is_tool_error(raw: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(raw.get()).is_ok_and(|f| f.is_error == Some(true))
}
