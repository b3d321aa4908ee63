//! [`Otel`]: one OpenTelemetry SERVER span per request and the
//! `mcp.server.operation.duration` histogram, by the MCP semantic
//! conventions (the `otel` feature; see [`crate::otel`]).

use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::metrics::{Histogram, Meter};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{Answer, Hook, Interceptor, Next, Outcome, Request};
use crate::otel::{duration, metric_attributes, span_name, target_key, Names, SCOPE};

/// One SERVER span per request, named `{mcp.method.name} {target}`, with
/// the MCP semantic conventions' attributes (`mcp.method.name`,
/// `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.resource.uri`,
/// `jsonrpc.request.id`, `mcp.protocol.version`, `mcp.session.id`,
/// `network.transport`, and `error.type` on failure: the JSON-RPC error
/// code, or `tool_error` for a tool result with `isError`). Its parent is
/// the trace context in the request's `params._meta` (`traceparent`,
/// `tracestate`, `baggage`), else the span current when the request
/// arrived. Each request also records
/// [`SERVER_DURATION`](crate::otel::SERVER_DURATION) in seconds.
///
/// Register it first, so that its span covers the other interceptors and
/// the handler, whose own `tracing` spans (and the client spans of a
/// proxy) become its children. The spans are `tracing` spans at `INFO`:
/// the application installs `tracing-opentelemetry`'s layer and an
/// exporter (guide chapter "telemetry").
///
/// ```
/// use mcp_core::intercept::Otel;
/// let server = mcp_core::McpServer::builder().interceptor(Otel::new()).build();
/// # drop(server);
/// ```
#[derive(Debug, Default)]
pub struct Otel {
    meter: Option<Meter>,
    histogram: OnceLock<Histogram<f64>>,
    names: Names,
}

impl Otel {
    /// Records on the global meter provider's meter `mcp-core`, as it is
    /// when the first request arrives (install the provider before
    /// serving).
    pub fn new() -> Self {
        Self::default()
    }

    /// Records on `meter`.
    pub fn with_meter(meter: Meter) -> Self {
        Self {
            meter: Some(meter),
            ..Self::default()
        }
    }

    fn histogram(&self) -> &Histogram<f64> {
        self.histogram.get_or_init(|| {
            let global;
            let meter = match &self.meter {
                Some(meter) => meter,
                None => {
                    global = opentelemetry::global::meter(SCOPE);
                    &global
                }
            };
            duration(
                meter,
                crate::otel::SERVER_DURATION,
                "MCP request duration as observed by the server",
            )
        })
    }
}

impl Interceptor for Otel {
    fn intercept<'a>(&'a self, req: Request<'a>, next: Next<'a>) -> Hook<'a> {
        let method = req.method().to_owned();
        let target = req.key().map(str::to_owned);
        let version = req.client().map(|c| c.protocol_version);
        // Over HTTP the transport knows the peer, or at least the Host.
        let http = req.remote_addr().is_some() || req.headers().contains_key("host");
        let transport = if http { "tcp" } else { "pipe" };
        let span = tracing::info_span!(
            "mcp.server.request",
            otel.name = span_name(&method, target.as_deref()),
            otel.kind = "server",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method.as_str(),
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            gen_ai.operation.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            jsonrpc.request.id = %req.id(),
            mcp.protocol.version = version,
            mcp.session.id = tracing::field::Empty,
            network.transport = transport,
            "error.type" = tracing::field::Empty,
            rpc.response.status_code = tracing::field::Empty,
        );
        if let (Some(key), Some(target)) = (target_key(&method), target.as_deref()) {
            span.record(key, target);
        }
        if method == "tools/call" {
            span.record("gen_ai.operation.name", "execute_tool");
        }
        if !span.is_disabled() {
            if let Some(parent) = crate::otel::extract(req.params()) {
                let _ = span.set_parent(parent);
            }
            // A legacy HTTP session's id (its header; converting the
            // headers costs, so only for a span that is recorded).
            if http && !req.is_modern() {
                if let Some(id) = req.headers().get("mcp-session-id") {
                    span.record("mcp.session.id", id.as_single());
                }
            }
        }
        let record_span = span.clone();
        Hook::wrap(
            async move {
                let started = Instant::now();
                let outcome = next.run(req).await;
                let error = match &outcome {
                    Outcome::Answer(Answer::Tool(r)) if r.is_error == Some(true) => {
                        Some("tool_error".to_owned())
                    }
                    Outcome::Error(e) => {
                        record_span.record("rpc.response.status_code", e.code.to_string());
                        Some(e.code.to_string())
                    }
                    _ => None,
                };
                if let Some(error) = &error {
                    record_span.record("error.type", error.as_str());
                    record_span.record("otel.status_code", "error");
                }
                self.histogram().record(
                    started.elapsed().as_secs_f64(),
                    &metric_attributes(
                        &self.names,
                        &method,
                        target.as_deref(),
                        version,
                        transport,
                        error.as_deref(),
                    ),
                );
                outcome
            }
            .instrument(span),
        )
    }
}
