//! OpenTelemetry for the example servers (the root package's `otel`
//! feature): what an application adds to export what `mcp-core` emits.
//!
//! When `OTEL_EXPORTER_OTLP_ENDPOINT` is set (e.g. `http://localhost:4318`,
//! a collector's OTLP/HTTP port), spans and metrics go there over OTLP/HTTP,
//! as protobuf or JSON by `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`,
//! the default, or `http/json`), from the service `OTEL_SERVICE_NAME`
//! (default: the example's name). The other `OTEL_EXPORTER_OTLP_*`
//! variables (per-signal endpoints, headers, timeout) are read by the
//! exporter too. Unset, nothing is installed and nothing is exported.
//!
//! The span processor and the metric reader run as tasks of the tokio
//! runtime (no thread of their own), so [`layer`] is called inside it, and
//! [`shutdown`] flushes both before the process exits.

use std::sync::Mutex;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{MetricExporter, Protocol, SpanExporter, WithExportConfig as _};
use opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::runtime::Tokio;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// Exporting is on when this is set.
pub const ENDPOINT_ENV: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The providers to flush at exit.
static PROVIDERS: Mutex<Option<(SdkTracerProvider, SdkMeterProvider)>> = Mutex::new(None);

/// The `tracing` layer exporting spans, with the global meter provider
/// installed; `None` when
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is unset or an exporter cannot be built
/// (said on stderr). Call inside the tokio runtime, before the first
/// request (the duration histograms are made at the first one).
pub fn layer<S>(service: &str) -> Option<Box<dyn Layer<S> + Send + Sync>>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span> + Send + Sync,
{
    std::env::var_os(ENDPOINT_ENV)?;
    // `http/protobuf` unless a variable says otherwise (the spec's default;
    // the crate's would be JSON, as both encodings are built in).
    let protocol = |signal: &str| {
        let set = |name: &str| std::env::var_os(name).is_some();
        (!set("OTEL_EXPORTER_OTLP_PROTOCOL") && !set(signal)).then_some(Protocol::HttpBinary)
    };
    let mut spans = SpanExporter::builder().with_http();
    if let Some(protocol) = protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") {
        spans = spans.with_protocol(protocol);
    }
    let mut metrics = MetricExporter::builder().with_http();
    if let Some(protocol) = protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL") {
        metrics = metrics.with_protocol(protocol);
    }
    let exporters = spans
        .build()
        .and_then(|spans| Ok((spans, metrics.build()?)));
    let (spans, metrics) = match exporters {
        Ok(exporters) => exporters,
        Err(e) => {
            eprintln!("OpenTelemetry: no exporter ({e}); telemetry is off");
            return None;
        }
    };
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name(service.to_owned());
    }
    let resource = resource.build();
    let tracer_provider = SdkTracerProvider::builder()
        .with_resource(resource.clone())
        .with_span_processor(BatchSpanProcessor::builder(spans, Tokio).build())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_resource(resource)
        .with_reader(PeriodicReader::builder(metrics, Tokio).build())
        .build();
    opentelemetry::global::set_meter_provider(meter_provider.clone());
    let tracer = tracer_provider.tracer("mcp-suite-examples");
    *PROVIDERS.lock().unwrap_or_else(|e| e.into_inner()) = Some((tracer_provider, meter_provider));
    // The request spans are at INFO: exported whatever RUST_LOG says.
    Some(
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(LevelFilter::INFO)
            .boxed(),
    )
}

/// Flushes and stops the exporters (a no-op when none was installed).
pub async fn shutdown() {
    let providers = PROVIDERS.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some((tracer_provider, meter_provider)) = providers {
        // Shutting down waits for the processor's task: off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = tracer_provider.shutdown() {
                eprintln!("OpenTelemetry: spans not flushed: {e}");
            }
            if let Err(e) = meter_provider.shutdown() {
                eprintln!("OpenTelemetry: metrics not flushed: {e}");
            }
        })
        .await;
    }
}
