//! The HTTP transport under misbehaving clients (issue 16): byte budgets of
//! event streams, per-session subscription and per-principal session caps,
//! the stateless subscribe leak, and the connection cap that reaps idle
//! connections (half-closed sockets: `http_half_close.rs`).
//!
//! Raw HTTP/1.1 over loopback TCP. Timeouts only guard against hangs; every
//! assertion is on what the client or the tool observes.

#![cfg(feature = "http")]

#[path = "common/hardening.rs"]
mod hardening;
#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hardening::*;
use mcp_core::transport::http::SessionOptions;
use mcp_core::{handler::ResourceRequest, InvokeContext, McpResourceDef, McpServer};
use mcp_core::{serve_http, HttpOptions};
use raw_http::{raw, Stream};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

// ---------------------------------------------------------------- byte budgets

#[tokio::test]
async fn a_post_stream_not_read_past_its_byte_budget_is_closed_and_its_call_cancelled() {
    // The message count alone would let the whole flood (128 MiB) queue up.
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .stream_queue(100_000)
            .stream_budget_bytes(256 * 1024)
            .sse_keep_alive(None),
    )
    .await;
    let mut tcp = connect_small(f.addr()).await;
    let body = call(1, "flood", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    // Never reading: the stream's budget runs out, the call is cancelled.
    f.wait_event("flood started").await;
    f.wait_event("flood ended cancelled=true").await;
    let reports = f.flooded.load(Ordering::Acquire);
    assert!(
        reports < FLOOD_STEPS,
        "the flood ran to its end ({reports})"
    );
    // The connection is closed: reading now ends, short of the flood.
    let read = read_until_closed(&mut tcp).await;
    assert!(
        read < FLOOD_STEPS * FLOOD_MESSAGE / 2,
        "{read} bytes reached the client"
    );
    // Others are still served.
    let r = post(f.addr(), &[], &call(2, "echo", json!({"text": "alive"}))).await;
    assert_eq!(tool_text(&r.json()), "alive");
    f.handle.close().await;
}

#[tokio::test]
async fn a_get_stream_not_read_past_its_byte_budget_is_closed() {
    let mut f = Fixture::start(
        HttpOptions::new()
            .stream_queue(100_000)
            .stream_budget_bytes(256 * 1024)
            .sse_keep_alive(None),
    )
    .await;
    let addr = f.addr();
    let sid = open_session(addr, &[]).await;
    let mut get = connect_small(addr).await;
    get.write_all(&request(
        addr,
        "GET",
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &sid),
            KEEP_ALIVE,
        ],
        "",
    ))
    .await
    .expect("write GET");
    // Wait for the GET stream to be open (its head is sent at once).
    let mut head = [0u8; 12];
    guard("GET head", get.read_exact(&mut head))
        .await
        .expect("read head");
    assert_eq!(&head, b"HTTP/1.1 200");
    // A JSON-only call: its progress goes to the GET stream, never read.
    let r = post(
        addr,
        &[("Mcp-Session-Id", &sid)],
        &call(3, "flood", json!({})),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()), "flooded");
    f.wait_event("flood ended cancelled=false").await;
    // The GET stream overran its budget: its connection is closed.
    let read = read_until_closed(&mut get).await;
    assert!(
        read < FLOOD_STEPS * FLOOD_MESSAGE / 2,
        "{read} bytes reached the client"
    );
    f.handle.close().await;
}

// ---------------------------------------------------------------- subscriptions and sessions

fn subscribe(id: i64, uri: &str, on: bool) -> Value {
    let method = if on {
        "resources/subscribe"
    } else {
        "resources/unsubscribe"
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"uri": uri}})
}

#[tokio::test]
async fn subscriptions_past_the_per_session_cap_are_refused_with_a_clear_error() {
    // The builder's cap (default 1,000) set low.
    let server = McpServer::builder()
        .server_info("caps", "1")
        .resource_subscriptions()
        .resource(McpResourceDef::new(
            "file:///a",
            "a",
            |_r: ResourceRequest, _ctx: InvokeContext| async { "a" },
        ))
        .max_subscriptions_per_session(3)
        .build()
        .expect("valid server");
    let handle = serve_http(server, HttpOptions::new())
        .await
        .expect("serve_http");
    let addr = handle.local_addr();
    let sid = open_session(addr, &[]).await;
    let h = [("Mcp-Session-Id", sid.as_str())];
    for i in 0..3 {
        let r = post(addr, &h, &subscribe(i, &format!("file:///{i}"), true)).await;
        assert_eq!(r.json()["result"], json!({}), "{}", r.text());
    }
    let r = post(addr, &h, &subscribe(9, "file:///9", true)).await;
    let reply = r.json();
    assert_eq!(reply["id"], 9);
    assert_eq!(reply["error"]["code"], -32600);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("max 3"), "{message}");
    // Subscribing again to a URI it holds is fine; unsubscribing makes room.
    let r = post(addr, &h, &subscribe(10, "file:///1", true)).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = post(addr, &h, &subscribe(11, "file:///1", false)).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = post(addr, &h, &subscribe(12, "file:///9", true)).await;
    assert_eq!(r.json()["result"], json!({}), "{}", r.text());
    // Another session has its own allowance.
    let other = open_session(addr, &[]).await;
    let r = post(
        addr,
        &[("Mcp-Session-Id", other.as_str())],
        &subscribe(13, "file:///x", true),
    )
    .await;
    assert_eq!(r.json()["result"], json!({}));
    handle.close().await;
}

#[tokio::test]
async fn a_principal_at_its_session_cap_is_refused_and_evicts_nobody() {
    let f = Fixture::start(
        HttpOptions::new().sessions(SessionOptions::default().max(10).max_per_principal(2)),
    )
    .await;
    let addr = f.addr();
    let alice = [("Authorization", "Bearer alice")];
    let mallory = [("Authorization", "Bearer mallory")];
    let alice_sid = open_session(addr, &alice).await;
    open_session(addr, &mallory).await;
    open_session(addr, &mallory).await;
    let r = post(addr, &mallory, &init_body()).await;
    assert_eq!(r.status, 503);
    assert!(r.header("mcp-session-id").is_none());
    let reply = r.json();
    assert_eq!(reply["id"], 0);
    assert_eq!(reply["error"]["code"], -32000);
    let message = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Too many sessions"), "{message}");
    // Alice's session is untouched and she may still open another.
    let mut h = alice.to_vec();
    h.push(("Mcp-Session-Id", &alice_sid));
    let r = post(addr, &h, &call(5, "echo", json!({"text": "hers"}))).await;
    assert_eq!(tool_text(&r.json()), "hers");
    open_session(addr, &alice).await;
    f.handle.close().await;
}

#[tokio::test]
async fn stateless_subscribes_answered_as_event_streams_are_released() {
    let (tx, _events) = mpsc::unbounded_channel();
    let server = build_server(Arc::new(Mutex::new(tx)), Arc::default());
    let probe = server.clone();
    let handle = serve_http(server, HttpOptions::stateless())
        .await
        .expect("serve_http");
    let addr = handle.local_addr();
    for i in 0..50 {
        let r = post(addr, &[ACCEPT_BOTH], &subscribe(i, "file:///a", true)).await;
        assert_eq!(r.status, 200);
    }
    // Each request's subscription ended with its request.
    assert_eq!(probe.subscriber_count(), 0);
    handle.close().await;
}

/// A server with a live tool catalog over HTTP, and a handle on it for
/// counting its listeners.
async fn live_server(options: HttpOptions) -> (McpServer, mcp_core::transport::http::HttpHandle) {
    let server = McpServer::builder()
        .server_info("live", "1")
        .live_tools()
        .build()
        .expect("build");
    let probe = server.clone();
    let handle = serve_http(server, options).await.expect("serve_http");
    (probe, handle)
}

#[tokio::test]
async fn stateless_initializes_on_a_live_catalog_leave_no_listener_behind() {
    // A live catalog tells every initialized legacy session of changes; a
    // stateless server's sessions end with their POST, and so must that.
    let (probe, handle) = live_server(HttpOptions::stateless()).await;
    let addr = handle.local_addr();
    for _ in 0..50 {
        let r = post(addr, &[ACCEPT_BOTH], &init_body()).await;
        assert_eq!(r.status, 200, "initialize: {}", r.text());
        assert!(r.header("mcp-session-id").is_none());
    }
    assert_eq!(probe.list_listener_count(), 0);
    handle.close().await;
}

#[tokio::test]
async fn an_initialize_refused_at_the_session_cap_leaves_no_listener_behind() {
    let options =
        HttpOptions::new().sessions(SessionOptions::default().max(10).max_per_principal(1));
    let (probe, handle) = live_server(options).await;
    let addr = handle.local_addr();
    let alice = [ACCEPT_BOTH, ("Authorization", "Bearer alice")];
    open_session(addr, &alice).await;
    for _ in 0..20 {
        let r = post(addr, &alice, &init_body()).await;
        assert_eq!(r.status, 503, "a second session was made: {}", r.text());
    }
    // Only the one stored session listens.
    assert_eq!(probe.list_listener_count(), 1);
    handle.close().await;
}

// ---------------------------------------------------------------- connections

/// Opens a keep-alive connection, has one request answered on it, and
/// returns it idle.
async fn idle_keep_alive(addr: SocketAddr) -> TcpStream {
    let mut tcp = guard("connect", TcpStream::connect(addr))
        .await
        .expect("connect");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}).to_string();
    tcp.write_all(&request(addr, "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    let mut buf = vec![0u8; 4096];
    let n = guard("ping answer", tcp.read(&mut buf))
        .await
        .expect("read");
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &buf[..n]);
    tcp
}

#[tokio::test]
async fn at_the_connection_cap_idle_connections_make_room_for_new_clients() {
    let f = Fixture::start(
        HttpOptions::stateless()
            .max_connections(64)
            .keep_alive_timeout(Duration::from_secs(60))
            .header_read_timeout(Duration::from_secs(60)),
    )
    .await;
    let addr = f.addr();
    // 200 idle keep-alive connections, and 20 that never send a request.
    let mut idle = Vec::new();
    for _ in 0..200 {
        idle.push(idle_keep_alive(addr).await);
    }
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(TcpStream::connect(addr).await.expect("connect"));
    }
    // A legitimate client is still served.
    for i in 0..5 {
        let r = post(addr, &[], &call(100 + i, "echo", json!({"text": "served"}))).await;
        assert_eq!(tool_text(&r.json()), "served");
    }
    // The oldest idle connection was closed to make room.
    let mut first = idle.swap_remove(0);
    let mut buf = [0u8; 16];
    let n = guard("oldest idle closed", first.read(&mut buf))
        .await
        .unwrap_or(0);
    assert_eq!(n, 0, "the oldest idle connection is still served");
    f.handle.close().await;
}

#[tokio::test]
async fn held_event_streams_do_not_lock_new_connections_out() {
    let f = Fixture::start(
        HttpOptions::new()
            .max_connections(2)
            .max_event_streams(6)
            .sse_keep_alive(Some(Duration::from_millis(50))),
    )
    .await;
    let addr = f.addr();
    let mut streams = Vec::new();
    for _ in 0..6 {
        let sid = open_session(addr, &[]).await;
        let s = Stream::open(
            addr,
            &request(
                addr,
                "GET",
                &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
                "",
            ),
        )
        .await;
        assert_eq!(s.status, 200);
        streams.push(s);
    }
    // Six held streams, a connection cap of two: others are still served.
    for i in 0..3 {
        let r = post(addr, &[], &init_body()).await;
        assert_eq!(r.status, 200, "initialize {i}: {}", r.text());
    }
    // A seventh stream is past its own cap: 503, not a closed connection.
    let sid = open_session(addr, &[]).await;
    let r = raw(
        addr,
        &request(
            addr,
            "GET",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", &sid)],
            "",
        ),
    )
    .await;
    assert_eq!(r.status, 503);
    assert_eq!(r.error_code(), -32000);
    // The held streams are alive (keep-alive comments still arrive).
    for s in &mut streams {
        assert!(s.fill().await, "a held stream ended");
    }
    drop(streams);
    f.handle.close().await;
}

#[tokio::test]
async fn with_nothing_idle_a_cancelled_calls_lingering_stream_makes_room() {
    let mut f = Fixture::start(
        HttpOptions::new()
            .max_connections(2)
            .max_event_streams(1)
            .keep_alive_timeout(Duration::from_secs(60))
            .drain_timeout(Duration::from_millis(100)),
    )
    .await;
    let addr = f.addr();
    let sid = open_session(addr, &[]).await;
    let session = ("Mcp-Session-Id", sid.as_str());
    // A: an event-stream call the client cancels; its stream then lingers.
    let mut a = TcpStream::connect(addr).await.expect("connect");
    let body = call(9, "block", json!({})).to_string();
    a.write_all(&request(
        addr,
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE, session],
        &body,
    ))
    .await
    .expect("write");
    f.wait_event("block started").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9}});
    assert_eq!(post(addr, &[session], &cancel).await.status, 202);
    f.wait_event("block ended cancelled=true").await;
    // Two busy connections fill the connection cap; A holds the stream cap.
    let mut busy = Vec::new();
    for id in [10, 11] {
        let mut tcp = TcpStream::connect(addr).await.expect("connect");
        let body = call(id, "block", json!({})).to_string();
        tcp.write_all(&request(addr, "POST", &[JSON, KEEP_ALIVE, session], &body))
            .await
            .expect("write");
        f.wait_event("block started").await;
        busy.push(tcp);
    }
    // Nothing is idle: the lingering stream, owed nothing, makes room.
    let r = post(addr, &[session], &call(12, "echo", json!({"text": "room"}))).await;
    assert_eq!(tool_text(&r.json()), "room");
    read_until_closed(&mut a).await;
    drop(busy);
    f.handle.close().await;
}
