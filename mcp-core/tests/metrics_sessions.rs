//! The `mcp_sessions` gauge of `intercept::Metrics` (issue 12): open
//! legacy sessions over stdio and HTTP, up when one initializes, down when
//! it ends, is deleted, evicted or expires; a server without `Metrics`
//! counts nothing.
//!
//! The recorder is global to a test binary, and the gauge has no label
//! only one test could own: so this binary holds this one test, which
//! runs its steps in order.

mod common;
#[path = "common/raw_http.rs"]
mod raw_http;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mcp_core::intercept::{Metrics, SESSIONS};
use mcp_core::testing::TestClient;
use mcp_core::transport::http::SessionOptions;
use mcp_core::McpServer;
use mcp_core::{serve_http, HttpOptions};
use metrics::{
    Counter, Gauge, GaugeFn, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};
use serde_json::json;

/// The `mcp_sessions` gauge's value (f64 bits).
#[derive(Default)]
struct SessionsGauge(Arc<AtomicU64>);

struct Cell(Arc<AtomicU64>);

impl Cell {
    fn update(&self, f: impl Fn(f64) -> f64) {
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |bits| {
                Some(f(f64::from_bits(bits)).to_bits())
            });
    }
}

impl GaugeFn for Cell {
    fn increment(&self, value: f64) {
        self.update(|v| v + value);
    }
    fn decrement(&self, value: f64) {
        self.update(|v| v - value);
    }
    fn set(&self, value: f64) {
        self.0.store(value.to_bits(), Ordering::SeqCst);
    }
}

impl Recorder for &'static SessionsGauge {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::noop()
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        if key.name() == SESSIONS && key.labels().next().is_none() {
            Gauge::from_arc(Arc::new(Cell(Arc::clone(&self.0))))
        } else {
            Gauge::noop()
        }
    }
    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}

fn gauge() -> &'static SessionsGauge {
    static GAUGE: OnceLock<&'static SessionsGauge> = OnceLock::new();
    GAUGE.get_or_init(|| {
        let gauge: &'static SessionsGauge = Box::leak(Box::default());
        metrics::set_global_recorder(gauge).expect("the only recorder of this test binary");
        gauge
    })
}

fn sessions() -> f64 {
    f64::from_bits(gauge().0.load(Ordering::SeqCst))
}

/// Waits until the gauge reads `expected` (a session ends on the server's
/// side shortly after the client's side is done); fails after the hang
/// guard with the last value seen.
async fn settles_at(expected: f64, what: &str) {
    let wait = async {
        while sessions() != expected {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    if tokio::time::timeout(common::HANG_GUARD, wait)
        .await
        .is_err()
    {
        panic!("{what}: the gauge stayed at {}, not {expected}", sessions());
    }
}

fn init_request(addr: SocketAddr) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "gauge-test", "version": "1"}}})
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Initializes an HTTP session; its id (if the server keeps sessions).
async fn open_http(addr: SocketAddr) -> Option<String> {
    let r = raw_http::raw(addr, &init_request(addr)).await;
    assert_eq!(r.status, 200, "initialize: {}", r.text());
    r.header("mcp-session-id").map(str::to_owned)
}

async fn delete_http(addr: SocketAddr, id: &str) {
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: {addr}\r\nMcp-Session-Id: {id}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
    );
    let r = raw_http::raw(addr, request.as_bytes()).await;
    assert!((200..300).contains(&r.status), "DELETE: {}", r.status);
}

fn counted() -> McpServer {
    McpServer::builder()
        .interceptor(Metrics::new())
        .build()
        .expect("builds")
}

#[tokio::test]
async fn open_legacy_sessions_are_a_gauge_over_stdio_and_http() {
    let _ = gauge();
    assert_eq!(sessions(), 0.0);

    // stdio: one session per connection, from `initialize` to its end.
    let server = counted();
    let first = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    settles_at(1.0, "one stdio session").await;
    let second = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    settles_at(2.0, "two stdio sessions").await;
    first.close().await.expect("closed");
    settles_at(1.0, "a stdio session ended").await;
    second.close().await.expect("closed");
    settles_at(0.0, "both ended").await;

    // A server without `Metrics` counts nothing.
    let uncounted = McpServer::builder().build().expect("builds");
    let client = TestClient::connect(uncounted).await.expect("initialize");
    client
        .request("ping", json!({}))
        .await
        .expect("the session is open");
    assert_eq!(sessions(), 0.0);
    client.close().await.expect("closed");

    // HTTP: a session from `initialize` until it is deleted or expires.
    let http = serve_http(
        counted(),
        HttpOptions::new().sessions(SessionOptions::default()),
    )
    .await
    .expect("serve");
    let addr = http.local_addr();
    let a = open_http(addr).await.expect("a session");
    let b = open_http(addr).await.expect("a session");
    settles_at(2.0, "two HTTP sessions").await;
    delete_http(addr, &a).await;
    settles_at(1.0, "one deleted").await;
    delete_http(addr, &b).await;
    settles_at(0.0, "both deleted").await;
    http.close().await;

    // One more than the cap evicts the oldest; an idle one expires.
    let http = serve_http(
        counted(),
        HttpOptions::new().sessions(
            SessionOptions::default()
                .max(1)
                .ttl(Duration::from_millis(50)),
        ),
    )
    .await
    .expect("serve");
    let addr = http.local_addr();
    open_http(addr).await.expect("a session");
    settles_at(1.0, "one HTTP session").await;
    open_http(addr).await.expect("a session");
    settles_at(1.0, "the first evicted by the second").await;
    // Past the TTL, the next `initialize` sweeps the idle one away.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let c = open_http(addr).await.expect("a session");
    settles_at(1.0, "the idle one expired, the new one open").await;
    delete_http(addr, &c).await;
    settles_at(0.0, "all gone").await;
    http.close().await;

    // Without sessions, an `initialize` opens none that stays.
    let http = serve_http(counted(), HttpOptions::stateless())
        .await
        .expect("serve");
    let addr = http.local_addr();
    assert_eq!(open_http(addr).await, None, "no session id");
    settles_at(0.0, "nothing stays open").await;
    http.close().await;
}
