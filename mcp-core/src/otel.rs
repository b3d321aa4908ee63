//! OpenTelemetry by the MCP semantic conventions (the `otel` feature).
//!
//! - On the server, [`intercept::Otel`](crate::intercept::Otel) opens one
//!   SERVER span per request, named `{mcp.method.name} {target}` (the tool
//!   or prompt name, or the resource URI), whose parent is the trace
//!   context the caller put in `params._meta` (`traceparent`,
//!   `tracestate`, `baggage`: W3C Trace Context), and records
//!   [`SERVER_DURATION`].
//! - With the `client` feature, every request of `client::Client` (and so
//!   of the proxy, which forwards through it) opens a CLIENT span,
//!   a child of the span current where the call is made (in a proxy, the
//!   proxy's SERVER span), writes its context into the request's `_meta`,
//!   and records [`CLIENT_DURATION`].
//!
//! The spans are [`tracing`] spans carrying the conventions' attributes as
//! fields (`otel.name`, `otel.kind`, `mcp.method.name`, …); the
//! `tracing-opentelemetry` layer the application installs turns them into
//! OpenTelemetry spans, and a handler's own `tracing` spans nest under
//! them. Without that layer they are plain `tracing` spans and nothing is
//! propagated. The histograms go to the global meter provider (or a meter
//! given to [`Otel::with_meter`](crate::intercept::Otel::with_meter)).
//! The library installs no SDK, exporter or thread: see the guide's
//! `telemetry` chapter for an application's set-up.
//!
//! No attribute holds argument values, results, headers or tokens.
//! Metric attributes are bounded: the method, the error type, the
//! protocol version, the transport, and the tool or prompt name (the first
//! [`MAX_NAMES`] distinct names, then `_OTHER`); request ids, session ids
//! and resource URIs go on spans only.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use opentelemetry::metrics::{Histogram, Meter};
use opentelemetry::propagation::{
    Extractor, Injector, TextMapCompositePropagator, TextMapPropagator,
};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};

/// `mcp.server.operation.duration` (histogram, seconds): from the request
/// reaching the interceptors until its outcome.
pub const SERVER_DURATION: &str = "mcp.server.operation.duration";
/// `mcp.client.operation.duration` (histogram, seconds): from the request
/// being sent until its answer arrives (or it fails).
pub const CLIENT_DURATION: &str = "mcp.client.operation.duration";
/// Distinct tool and prompt names kept as metric attribute values before
/// others are recorded as `_OTHER`: names come from callers (an unknown
/// tool's), so the attribute set is bounded whatever they send.
pub const MAX_NAMES: usize = 1000;

/// The explicit bucket boundaries the conventions advise for the
/// operation durations, in seconds.
pub const DURATION_BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The instrumentation scope of the global meter.
pub(crate) const SCOPE: &str = "mcp-core";

/// W3C Trace Context and Baggage, the propagation the conventions name
/// for `params._meta`.
fn propagator() -> &'static TextMapCompositePropagator {
    static PROPAGATOR: OnceLock<TextMapCompositePropagator> = OnceLock::new();
    PROPAGATOR.get_or_init(|| {
        TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ])
    })
}

/// Reads string members of a request's `_meta`.
struct MetaExtractor<'a>(&'a Map<String, Value>);

impl Extractor for MetaExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Writes string members into a request's `_meta`.
struct MetaInjector<'a>(&'a mut Map<String, Value>);

impl Injector for MetaInjector<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// The context a caller sent in a request's `params._meta`, when it sent a
/// valid `traceparent` (W3C Trace Context, with `tracestate` and
/// `baggage`). [`Otel`](crate::intercept::Otel) parents its spans on it;
/// for a server of another transport or framework.
pub fn extract(params: &Map<String, Value>) -> Option<Context> {
    let meta = params.get("_meta")?.as_object()?;
    meta.get("traceparent")?;
    let cx = propagator().extract(&MetaExtractor(meta));
    cx.span().span_context().is_valid().then_some(cx)
}

/// `params` with `cx` written into its `_meta` (`traceparent`,
/// `tracestate`, `baggage`; replacing those it carried), or `None` when
/// `cx` has no valid span. The client does this for its own requests; for
/// requests sent by other means.
pub fn inject(cx: &Context, params: &Map<String, Value>) -> Option<Map<String, Value>> {
    if !cx.span().span_context().is_valid() {
        return None;
    }
    let mut params = params.clone();
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Value::Object(meta) = meta {
        propagator().inject_context(cx, &mut MetaInjector(meta));
    }
    Some(params)
}

/// A duration histogram on `meter`, with the advised buckets.
pub(crate) fn duration(meter: &Meter, name: &'static str, what: &'static str) -> Histogram<f64> {
    meter
        .f64_histogram(name)
        .with_unit("s")
        .with_description(what)
        .with_boundaries(DURATION_BOUNDARIES.to_vec())
        .build()
}

/// The metric attribute value of a tool or prompt name: itself while
/// fewer than [`MAX_NAMES`] were seen, else `_OTHER` (shared, so that
/// recording allocates nothing).
#[derive(Debug, Default)]
pub(crate) struct Names(Mutex<HashSet<Arc<str>>>);

impl Names {
    pub(crate) fn label(&self, name: &str) -> Arc<str> {
        let mut names = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(known) = names.get(name) {
            return Arc::clone(known);
        }
        if names.len() < MAX_NAMES {
            let name: Arc<str> = Arc::from(name);
            names.insert(Arc::clone(&name));
            return name;
        }
        Arc::from("_OTHER")
    }
}

/// A method of the protocol as a static string (no allocation per
/// record), `_OTHER` for any other: the attribute stays bounded.
fn method_label(method: &str) -> &'static str {
    const METHODS: [&str; 22] = [
        "tools/call",
        "tools/list",
        "resources/read",
        "resources/list",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/get",
        "prompts/list",
        "completion/complete",
        "initialize",
        "ping",
        "server/discover",
        "logging/setLevel",
        "subscriptions/listen",
        "tasks/get",
        "tasks/update",
        "tasks/cancel",
        "tasks/list",
        "tasks/result",
        "skills/list",
        "skills/get",
    ];
    METHODS
        .into_iter()
        .find(|m| *m == method)
        .unwrap_or("_OTHER")
}

/// The span and metric attribute naming a request's target: the tool
/// (`gen_ai.tool.name`), the prompt (`gen_ai.prompt.name`) or the resource
/// (`mcp.resource.uri`), by method.
pub(crate) fn target_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" => Some("gen_ai.tool.name"),
        "prompts/get" => Some("gen_ai.prompt.name"),
        "resources/read" => Some("mcp.resource.uri"),
        _ => None,
    }
}

/// The span name: `{mcp.method.name} {target}`, or the method alone.
pub(crate) fn span_name(method: &str, target: Option<&str>) -> String {
    match target {
        Some(target) => format!("{method} {target}"),
        None => method.to_owned(),
    }
}

/// The metric attributes every operation carries.
pub(crate) fn metric_attributes(
    names: &Names,
    method: &str,
    target: Option<&str>,
    version: Option<&'static str>,
    transport: &'static str,
    error: Option<&str>,
) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(5);
    attributes.push(KeyValue::new("mcp.method.name", method_label(method)));
    attributes.push(KeyValue::new("network.transport", transport));
    if let (Some(key), Some(target)) = (target_key(method), target) {
        // Resource URIs are unbounded: spans only.
        if key != "mcp.resource.uri" {
            attributes.push(KeyValue::new(key, names.label(target)));
        }
    }
    if let Some(version) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", version));
    }
    if let Some(error) = error {
        attributes.push(KeyValue::new("error.type", error.to_owned()));
    }
    attributes
}

// The client engine is built with `client`, and also with `stdio` alone
// (the in-process `TestClient` speaks through it): its CLIENT span is
// there whenever the engine is.
#[cfg(any(feature = "client", feature = "stdio"))]
pub(crate) use client::ClientCall;

#[cfg(any(feature = "client", feature = "stdio"))]
mod client;
