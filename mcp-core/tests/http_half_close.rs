//! Half-closed sockets over HTTP (issue 16): a client that POSTs and then
//! `shutdown(SHUT_WR)` gets its answer (JSON or a whole event stream),
//! while a client that closes its socket still has its call cancelled.
//!
//! Raw HTTP/1.1 over loopback TCP. Timeouts only guard against hangs.

#![cfg(feature = "http")]

#[path = "common/hardening.rs"]
mod hardening;
#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use std::time::Duration;

use hardening::*;
use mcp_core::HttpOptions;
use raw_http::Stream;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[tokio::test]
async fn a_client_that_half_closes_right_after_its_post_gets_the_answer() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(6, "finite", json!({})).to_string();
    // Request and FIN back to back, as `printf ... | nc -N` sends them.
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    assert_eq!(tool_text(&r.json()), "finished");
    f.wait_event("finite ended cancelled=false").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_a_large_answer_whole() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let text = "z".repeat(900_000);
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(7, "echo", json!({"text": text})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let r = final_response(&read_all(&mut tcp).await);
    assert_eq!(r.status, 200);
    assert_eq!(tool_text(&r.json()).len(), text.len());
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_half_closes_before_its_body_is_complete_gets_408() {
    let f = Fixture::start(HttpOptions::stateless().body_read_timeout(Duration::from_millis(300)))
        .await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
        f.addr()
    );
    tcp.write_all(head.as_bytes()).await.expect("partial body");
    tcp.shutdown().await.expect("shutdown write");
    let r = final_response(&read_all(&mut tcp).await);
    assert_eq!(r.status, 408);
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_the_answer_of_a_slow_call() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(1, "finite", json!({})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    f.wait_event("finite started").await;
    // shutdown(SHUT_WR): nothing more to send, still reading.
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    assert_eq!(tool_text(&r.json()), "finished");
    f.wait_event("finite ended cancelled=false").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_half_closed_client_gets_its_event_stream_to_the_end() {
    let f = Fixture::start(HttpOptions::stateless()).await;
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(2, "steps", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    tcp.shutdown().await.expect("shutdown write");
    let text = read_all(&mut tcp).await;
    let r = final_response(&text);
    assert_eq!(r.status, 200, "{text:?}");
    let events: Vec<Value> = r
        .text()
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).expect("event JSON"))
        .collect();
    assert_eq!(events.len(), 4, "{events:?}");
    assert_eq!(events[2]["params"]["progress"], 3.0);
    assert_eq!(tool_text(&events[3]), "stepped");
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_closes_its_socket_still_has_its_call_cancelled() {
    let mut f = Fixture::start(HttpOptions::stateless()).await;
    // Keep-alive, then gone (close(): FIN, like the half-closed client).
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(3, "block", json!({})).to_string();
    tcp.write_all(&request(f.addr(), "POST", &[JSON, KEEP_ALIVE], &body))
        .await
        .expect("write");
    f.wait_event("block started").await;
    drop(tcp);
    f.wait_event("block ended cancelled=true").await;
    // And over an event stream that has not sent anything yet.
    let mut tcp = TcpStream::connect(f.addr()).await.expect("connect");
    let body = call(4, "block", json!({})).to_string();
    tcp.write_all(&request(
        f.addr(),
        "POST",
        &[JSON, ACCEPT_BOTH, KEEP_ALIVE],
        &body,
    ))
    .await
    .expect("write");
    f.wait_event("block started").await;
    drop(tcp);
    f.wait_event("block ended cancelled=true").await;
    f.handle.close().await;
}

#[tokio::test]
async fn a_client_that_closes_a_quiet_event_stream_has_its_call_cancelled() {
    // No keep-alive comments: nothing else would ever be written.
    let mut f = Fixture::start(HttpOptions::stateless().sse_keep_alive(None)).await;
    let body = call(5, "talk_then_block", json!({}));
    let h = [JSON, ACCEPT_BOTH, KEEP_ALIVE];
    let mut s = Stream::open(f.addr(), &request(f.addr(), "POST", &h, &body.to_string())).await;
    assert!(s.is_sse());
    let first = s.next_event().await.expect("the progress report");
    assert_eq!(first["method"], "notifications/progress");
    // Gone: the stream is quiet, its call blocked.
    drop(s);
    f.wait_event("talk_then_block ended cancelled=true").await;
    f.handle.close().await;
}
