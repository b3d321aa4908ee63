//! The `otel` feature end to end: a caller's client, a proxy and a backend
//! server (each on Streamable HTTP, so nothing but `params._meta` carries
//! the trace context from one to the next), the OpenTelemetry SDK
//! exporting over OTLP/HTTP (protobuf) to a receiver in this test, and the
//! received spans and histograms checked: names, kinds, attributes, one
//! trace from the caller to the backend with each span the child of the
//! one before, `error.type` on a tool error, no argument value anywhere.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use mcp_core::client::proxy::{ProxyOptions, Remote, Target};
use mcp_core::client::{ClientBuilder, Protocol};
use mcp_core::intercept::Otel;
use mcp_core::protocol::CallToolResult;
use mcp_core::{serve_http, HttpOptions, InvokeContext, McpServer, McpToolDef};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol as Otlp, SpanExporter, WithExportConfig};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::SdkTracerProvider;
use prost::Message;
use serde_json::{json, Map, Value};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// An argument value that must appear in no attribute.
const SECRET: &str = "s3cret-argument-value";

/// What the receiver got: (path, body) of every POST.
type Received = Arc<Mutex<Vec<(String, Bytes)>>>;

/// An OTLP/HTTP receiver: accepts POST /v1/traces and /v1/metrics, keeps
/// the bodies, answers 200 with an empty protobuf response.
async fn receiver() -> (String, Received) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let received: Received = Arc::default();
    let keep = Arc::clone(&received);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let keep = Arc::clone(&keep);
            tokio::spawn(async move {
                let service = service_fn(move |req: Request<Incoming>| {
                    let keep = Arc::clone(&keep);
                    async move {
                        let path = req.uri().path().to_owned();
                        let body = req.into_body().collect().await.map(|b| b.to_bytes());
                        let status = match (path.as_str(), body) {
                            ("/v1/traces" | "/v1/metrics", Ok(body)) => {
                                keep.lock().expect("lock").push((path, body));
                                200
                            }
                            _ => 404,
                        };
                        let mut response = Response::new(Full::new(Bytes::new()));
                        *response.status_mut() =
                            hyper::StatusCode::from_u16(status).expect("status");
                        response.headers_mut().insert(
                            hyper::header::CONTENT_TYPE,
                            hyper::header::HeaderValue::from_static("application/x-protobuf"),
                        );
                        Ok::<_, Infallible>(response)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (url, received)
}

/// The backend: `lookup` answers, `broken` returns a tool error.
fn backend() -> McpServer {
    let any = json!({"type": "object"});
    McpServer::builder()
        .server_info("backend", "1.0.0")
        .interceptor(Otel::new())
        .tool(McpToolDef::new(
            "lookup",
            "looks up",
            any.clone(),
            |_args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::text("found")
            },
        ))
        .tool(McpToolDef::new(
            "broken",
            "always fails",
            any,
            |_args: Map<String, Value>, _ctx: InvokeContext| async move {
                CallToolResult::error("it broke")
            },
        ))
        .build()
        .expect("backend")
}

fn attributes(span: &Span) -> HashMap<String, String> {
    span.attributes.iter().map(kv).collect()
}

fn kv(kv: &KeyValue) -> (String, String) {
    let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(AnyValue::StringValue(s)) => s.clone(),
        Some(AnyValue::IntValue(i)) => i.to_string(),
        Some(AnyValue::BoolValue(b)) => b.to_string(),
        Some(AnyValue::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    };
    (kv.key.clone(), value)
}

/// The one span named `name` of `kind`.
fn span<'a>(spans: &'a [Span], name: &str, kind: SpanKind) -> &'a Span {
    let found: Vec<&Span> = spans
        .iter()
        .filter(|s| s.name == name && s.kind == kind as i32)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one {kind:?} span {name:?}; spans: {:?}",
        spans.iter().map(|s| (&s.name, s.kind)).collect::<Vec<_>>()
    );
    found[0]
}

fn spans_of(received: &Received) -> Vec<Span> {
    let bodies = received.lock().expect("lock").clone();
    bodies
        .iter()
        .filter(|(path, _)| path == "/v1/traces")
        .flat_map(|(_, body)| {
            ExportTraceServiceRequest::decode(body.clone())
                .expect("an OTLP trace export")
                .resource_spans
        })
        .flat_map(|r| r.scope_spans)
        .flat_map(|s| s.spans)
        .collect()
}

/// One histogram data point: its attributes and its count.
type Point = (HashMap<String, String>, u64);

/// Histogram name → its data points.
fn histograms_of(received: &Received) -> HashMap<String, Vec<Point>> {
    let bodies = received.lock().expect("lock").clone();
    let mut out: HashMap<String, Vec<_>> = HashMap::new();
    for (_, body) in bodies.iter().filter(|(path, _)| path == "/v1/metrics") {
        let request =
            ExportMetricsServiceRequest::decode(body.clone()).expect("an OTLP metrics export");
        for metric in request
            .resource_metrics
            .into_iter()
            .flat_map(|r| r.scope_metrics)
            .flat_map(|s| s.metrics)
        {
            if let Some(Data::Histogram(h)) = metric.data {
                for point in h.data_points {
                    let attrs = point.attributes.iter().map(kv).collect();
                    out.entry(metric.name.clone())
                        .or_default()
                        .push((attrs, point.count));
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_trace_runs_from_the_caller_through_a_proxy_to_the_backend() {
    let (otlp, received) = receiver().await;

    // The application's set-up: SDK, OTLP/HTTP exporters, the tracing bridge.
    let spans = SpanExporter::builder()
        .with_http()
        // Explicit: the default depends on the exporter's features.
        .with_protocol(Otlp::HttpBinary)
        .with_endpoint(format!("{otlp}/v1/traces"))
        .build()
        .expect("span exporter");
    let tracer_provider = SdkTracerProvider::builder()
        .with_span_processor(BatchSpanProcessor::builder(spans, Tokio).build())
        .build();
    let metrics = MetricExporter::builder()
        .with_http()
        .with_protocol(Otlp::HttpBinary)
        .with_endpoint(format!("{otlp}/v1/metrics"))
        .build()
        .expect("metric exporter");
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(metrics, Tokio).build())
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(tracer_provider.tracer("otel-test")));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    // backend ← proxy ← caller, each hop over HTTP.
    let backend = serve_http(backend(), HttpOptions::new().port(0))
        .await
        .expect("backend");
    let remote = Remote::connect(
        "backend",
        Target::Url(backend.url().to_owned()),
        ClientBuilder::new("proxy", "0"),
        ProxyOptions::new(),
    )
    .await
    .expect("proxy connects");
    let front = McpServer::builder()
        .server_info("proxy", "1.0.0")
        .interceptor(Otel::new())
        .mount("remote", remote.builder().await.expect("proxied listing"))
        .build()
        .expect("proxy server");
    let front = serve_http(front, HttpOptions::new().port(0))
        .await
        .expect("proxy serves");
    for protocol in ["2025-11-25", "2026-07-28"] {
        let caller = ClientBuilder::new("caller", "0")
            .protocol(Protocol::pinned(protocol))
            .connect_http(front.url())
            .await
            .expect("caller connects");
        let root = tracing::info_span!("caller", protocol);
        async {
            let ok = caller
                .call_tool("remote_lookup", json!({"query": SECRET}))
                .await
                .expect("lookup");
            assert_ne!(ok.is_error, Some(true));
            let failed = caller
                .call_tool("remote_broken", json!({}))
                .await
                .expect("broken");
            assert_eq!(failed.is_error, Some(true));
        }
        .instrument(root)
        .await;
    }

    let flush = tokio::task::spawn_blocking(move || {
        tracer_provider.force_flush().expect("spans flushed");
        meter_provider.force_flush().expect("metrics flushed");
        (tracer_provider, meter_provider)
    });
    let (tracer_provider, meter_provider) = flush.await.expect("flush");
    let mut all = spans_of(&received);
    for _ in 0..100 {
        if all.iter().filter(|s| s.name == "caller").count() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        all = spans_of(&received);
    }

    for protocol in ["2025-11-25", "2026-07-28"] {
        let root = all
            .iter()
            .find(|s| {
                s.name == "caller"
                    && attributes(s).get("protocol").map(String::as_str) == Some(protocol)
            })
            .unwrap_or_else(|| panic!("the caller's span ({protocol})"));
        let trace: Vec<Span> = all
            .iter()
            .filter(|s| s.trace_id == root.trace_id)
            .cloned()
            .collect();
        // caller → CLIENT → proxy SERVER → proxy CLIENT → backend SERVER.
        let client = span(&trace, "tools/call remote_lookup", SpanKind::Client);
        let proxy = span(&trace, "tools/call remote_lookup", SpanKind::Server);
        let forward = span(&trace, "tools/call lookup", SpanKind::Client);
        let served = span(&trace, "tools/call lookup", SpanKind::Server);
        assert_eq!(
            client.parent_span_id, root.span_id,
            "{protocol}: client under caller"
        );
        assert_eq!(
            proxy.parent_span_id, client.span_id,
            "{protocol}: proxy under client"
        );
        assert_eq!(
            forward.parent_span_id, proxy.span_id,
            "{protocol}: forward under proxy"
        );
        assert_eq!(
            served.parent_span_id, forward.span_id,
            "{protocol}: backend under forward"
        );

        let proxy_attrs = attributes(proxy);
        assert_eq!(proxy_attrs["mcp.method.name"], "tools/call");
        assert_eq!(proxy_attrs["gen_ai.tool.name"], "remote_lookup");
        assert_eq!(proxy_attrs["gen_ai.operation.name"], "execute_tool");
        assert_eq!(proxy_attrs["network.transport"], "tcp");
        assert_eq!(proxy_attrs["mcp.protocol.version"], protocol);
        assert!(
            proxy_attrs.contains_key("jsonrpc.request.id"),
            "{proxy_attrs:?}"
        );
        assert!(!proxy_attrs.contains_key("error.type"), "{proxy_attrs:?}");
        // A legacy HTTP session has an id; a 2026-07-28 request has none.
        assert_eq!(
            proxy_attrs.contains_key("mcp.session.id"),
            protocol == "2025-11-25"
        );
        let served_attrs = attributes(served);
        assert_eq!(served_attrs["gen_ai.tool.name"], "lookup");
        let client_attrs = attributes(client);
        assert_eq!(client_attrs["network.transport"], "tcp");
        assert_eq!(client_attrs["gen_ai.tool.name"], "remote_lookup");
        assert!(
            client_attrs.contains_key("jsonrpc.request.id"),
            "{client_attrs:?}"
        );
        assert_eq!(attributes(forward)["mcp.method.name"], "tools/call");

        // A tool error: `error.type` is `tool_error` on every hop.
        for (name, kind) in [
            ("tools/call remote_broken", SpanKind::Client),
            ("tools/call remote_broken", SpanKind::Server),
            ("tools/call broken", SpanKind::Client),
            ("tools/call broken", SpanKind::Server),
        ] {
            let s = span(&trace, name, kind);
            assert_eq!(
                attributes(s).get("error.type").map(String::as_str),
                Some("tool_error"),
                "{name} {kind:?}"
            );
            assert_eq!(
                s.status.as_ref().map(|s| s.code),
                Some(2),
                "{name} {kind:?}: status error"
            );
        }
    }
    for s in &all {
        for (key, value) in attributes(s) {
            assert!(
                !value.contains(SECRET),
                "{}: attribute {key} holds an argument",
                s.name
            );
        }
    }

    let histograms = histograms_of(&received);
    for (name, method_count) in [
        ("mcp.server.operation.duration", "tools/call"),
        ("mcp.client.operation.duration", "tools/call"),
    ] {
        let points = histograms
            .get(name)
            .unwrap_or_else(|| panic!("{name} arrived; got {:?}", histograms.keys()));
        let tool_errors: u64 = points
            .iter()
            .filter(|(a, _)| a.get("mcp.method.name").map(String::as_str) == Some(method_count))
            .filter(|(a, _)| a.get("error.type").map(String::as_str) == Some("tool_error"))
            .map(|(_, n)| n)
            .sum();
        // Two protocols, two hops each (the proxy and the backend serve;
        // the caller and the proxy call).
        assert_eq!(tool_errors, 4, "{name}: {points:?}");
        for (attrs, _) in points {
            assert!(
                !attrs.contains_key("jsonrpc.request.id"),
                "{name}: ids are unbounded"
            );
            assert!(
                !attrs.contains_key("mcp.session.id"),
                "{name}: ids are unbounded"
            );
        }
    }
    let _ = tokio::task::spawn_blocking(move || {
        let _ = tracer_provider.shutdown();
        let _ = meter_provider.shutdown();
    })
    .await;
}
