//! The error-mapping and metrics built-ins (issue 12): a typed
//! `ToolError` keeps its code with an error id and its detail stays out of
//! the answer; `ErrorMapping` classifies untyped failures (validation vs
//! internal, the internal text never sent); `Metrics` counts requests by
//! outcome through the `metrics` facade.

#![cfg(feature = "metrics")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use mcp_core::intercept::{ErrorMapping, Metrics, REQUESTS};
use mcp_core::{mcp_tool, protocol::CallToolResult, McpServer, ToolError};
use metrics::{
    Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};
use serde_json::{json, Value};

/// Reads `/secret/<name>`: fails with a typed error whose detail is the I/O error.
#[mcp_tool]
async fn lookup(name: String) -> Result<String, ToolError> {
    std::fs::read_to_string(format!("/nonexistent-secret-dir/{name}")).map_err(|e| {
        ToolError::new("NOT_FOUND", format!("no record named {name}"))
            .hint("list the records first")
            .detail(&e)
    })
}

/// Fails the same way as `lookup`; called only by the metrics test, so the
/// counts it reads (the recorder is global to this test binary) are its own.
#[mcp_tool]
async fn counted() -> Result<String, ToolError> {
    Err(ToolError::new("NOT_FOUND", "nothing to count"))
}

/// Fails with an internal error whose text must not reach the model.
#[mcp_tool]
async fn explode() -> Result<String, String> {
    Err("connection to db-primary.internal:5432 refused (password=hunter2)".into())
}

fn server() -> McpServer {
    McpServer::builder()
        .interceptor(Metrics::new())
        .interceptor(ErrorMapping::new())
        .tool(lookup::tool())
        .tool(explode::tool())
        .tool(counted::tool())
        .build()
        .expect("builds")
}

fn structured(result: &CallToolResult) -> Value {
    Value::Object(result.structured_content.clone().expect("structured error"))
}

#[tokio::test]
async fn a_typed_tool_error_keeps_its_code_and_hides_its_detail() {
    let result = server()
        .call_tool("lookup", json!({"name": "alice"}))
        .await
        .expect("answer");
    assert!(result.is_error());
    let s = structured(&result);
    assert_eq!(s["code"], "NOT_FOUND");
    assert_eq!(s["message"], "no record named alice");
    assert_eq!(s["hint"], "list the records first");
    assert_eq!(s["retryable"], false);
    let id = s["errorId"].as_str().expect("an error id");
    assert_eq!(id.len(), 16);
    let text = result.text_content();
    assert!(
        text.starts_with("NOT_FOUND: no record named alice") && text.contains(id),
        "{text}"
    );
    assert!(!text.contains("nonexistent-secret-dir") && !s.to_string().contains("No such file"));
}

#[tokio::test]
async fn untyped_failures_are_classified_and_internals_never_sent() {
    let server = server();
    let internal = server
        .call_tool("explode", json!({}))
        .await
        .expect("answer");
    let s = structured(&internal);
    assert_eq!(
        (
            s["code"].as_str(),
            s["message"].as_str(),
            s["retryable"].as_bool()
        ),
        (Some("INTERNAL_ERROR"), Some("Internal error"), Some(true))
    );
    assert!(!internal.text_content().contains("hunter2") && !s.to_string().contains("hunter2"));

    let invalid = server
        .call_tool("lookup", json!({"nmae": "x"}))
        .await
        .expect("answer");
    let s = structured(&invalid);
    assert_eq!(s["code"], "VALIDATION_ERROR");
    assert!(
        s["message"].as_str().is_some_and(|m| m.contains("name")),
        "{s}"
    );
    assert!(s["hint"].is_string());
}

// ---------------------------------------------------------------- metrics

/// A recorder keeping counters by their full key (name and labels).
#[derive(Default)]
struct Counters(Mutex<HashMap<String, Arc<AtomicU64>>>);

struct Count(Arc<AtomicU64>);

impl CounterFn for Count {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::SeqCst);
    }
    fn absolute(&self, value: u64) {
        self.0.store(value, Ordering::SeqCst);
    }
}

fn render(key: &Key) -> String {
    let mut labels: Vec<String> = key
        .labels()
        .map(|l| format!("{}={}", l.key(), l.value()))
        .collect();
    labels.sort();
    format!("{}{{{}}}", key.name(), labels.join(","))
}

impl Recorder for &'static Counters {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let cell = Arc::clone(map.entry(render(key)).or_default());
        Counter::from_arc(Arc::new(Count(cell)))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn counters() -> &'static Counters {
    static COUNTERS: OnceLock<&'static Counters> = OnceLock::new();
    COUNTERS.get_or_init(|| {
        let counters: &'static Counters = Box::leak(Box::default());
        metrics::set_global_recorder(counters).expect("the only recorder of this test binary");
        counters
    })
}

fn count(key: &str) -> u64 {
    counters()
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(key)
        .map_or(0, |c| c.load(Ordering::SeqCst))
}

#[tokio::test]
async fn metrics_count_requests_by_tool_and_outcome() {
    let _ = counters();
    let server = server();
    server
        .call_tool("counted", json!({}))
        .await
        .expect("answer");
    server
        .call_tool("counted", json!({}))
        .await
        .expect("answer");
    let _ = server
        .call_tool("no_such_tool_for_metrics", json!({}))
        .await;
    assert_eq!(
        count(&format!(
            "{REQUESTS}{{key=counted,method=tools/call,outcome=tool_error}}"
        )),
        2,
        "{:?}",
        counters()
            .0
            .lock()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
    );
    assert_eq!(
        count(&format!(
            "{REQUESTS}{{key=no_such_tool_for_metrics,method=tools/call,outcome=error}}"
        )),
        1
    );
}
