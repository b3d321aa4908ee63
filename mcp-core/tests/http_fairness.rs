//! The server-wide call slots are shared fairly (issue 16, lock-out): when
//! every slot is taken, a newcomer takes one from the client running the
//! most calls instead of being refused, anonymous clients included (told
//! apart by connection), and the evicted call ends with a `-32000` error.
//!
//! Raw HTTP/1.1 over loopback TCP; timeouts only guard against hangs.

#![cfg(feature = "http")]

#[path = "common/hardening.rs"]
mod hardening;
#[path = "common/raw_http.rs"]
mod raw_http;
#[path = "common/tool_events.rs"]
mod tool_events;

use hardening::*;
use mcp_core::HttpOptions;
use serde_json::{json, Value};

fn blocks(from: i64, n: i64) -> Value {
    Value::Array(
        (from..from + n)
            .map(|id| call(id, "block", json!({})))
            .collect(),
    )
}

fn error_message(reply: &Value) -> String {
    reply["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message in {reply}"))
        .to_owned()
}

#[tokio::test]
async fn anonymous_connections_holding_every_slot_cannot_lock_a_new_client_out() {
    // The attack in small: connections posting batches of calls
    // that never end take every server-wide slot.
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .max_concurrent_requests(8)
            .max_requests_per_connection(4)
            .drain_timeout(std::time::Duration::from_millis(100)),
    )
    .await;
    let addr = f.addr();
    let first = tokio::spawn(async move { post(addr, &[], &blocks(1, 4)).await });
    let second = tokio::spawn(async move { post(addr, &[], &blocks(11, 4)).await });
    for _ in 0..8 {
        f.wait_event("block started").await;
    }

    let r = post(addr, &[], &call(99, "echo", json!({"text": "served"}))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(tool_text(&r.json()), "served");

    // Exactly one of the two attacking requests (whichever holds the
    // oldest slot of the heavier connection) was evicted, with an error
    // saying why; the other still runs.
    let (mut first, mut second) = (first, second);
    let (evicted, other) = guard("the evicted batch", async {
        tokio::select! {
            r = &mut first => (r, second),
            r = &mut second => (r, first),
        }
    })
    .await;
    let evicted = evicted.expect("task");
    assert_eq!(evicted.status, 503, "{}", evicted.text());
    assert_eq!(evicted.json()["error"]["code"], -32000);
    assert!(
        error_message(&evicted.json()).contains("make room"),
        "{}",
        evicted.text()
    );
    assert!(!other.is_finished(), "the other batch still runs");
    f.handle.close().await;
}

#[tokio::test]
async fn a_principal_holding_the_most_slots_gives_one_up_to_another_principal() {
    let mut f = Fixture::start(
        HttpOptions::stateless()
            .max_concurrent_requests(4)
            .drain_timeout(std::time::Duration::from_millis(100))
            .principal(|req| {
                req.headers
                    .get("x-user")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            }),
    )
    .await;
    let addr = f.addr();
    let mut held = Vec::new();
    for id in 1..=4 {
        held.push(tokio::spawn(async move {
            post(
                addr,
                &[("X-User", "mallory")],
                &call(id, "block", json!({})),
            )
            .await
        }));
        f.wait_event("block started").await;
    }

    let r = post(
        addr,
        &[("X-User", "alice")],
        &call(50, "echo", json!({"text": "alice"})),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(tool_text(&r.json()), "alice");

    // Mallory's oldest call was the one evicted, answered with its own id.
    let oldest = guard("the evicted call", held.remove(0))
        .await
        .expect("task");
    assert_eq!(oldest.status, 503, "{}", oldest.text());
    assert_eq!(oldest.json()["id"], 1);
    assert!(error_message(&oldest.json()).contains("make room"));

    // Mallory herself is refused at a full server: she already holds the most.
    let r = post(
        addr,
        &[("X-User", "mallory")],
        &call(60, "echo", json!({"text": "again"})),
    )
    .await;
    assert_eq!(
        r.status,
        200,
        "alice's call ended, so a slot was free: {}",
        r.text()
    );
    let refill = tokio::spawn(async move {
        post(
            addr,
            &[("X-User", "mallory")],
            &call(61, "block", json!({})),
        )
        .await
    });
    f.wait_event("block started").await;
    let r = post(
        addr,
        &[("X-User", "mallory")],
        &call(62, "echo", json!({"text": "over"})),
    )
    .await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(error_message(&r.json()).contains("Too many requests in flight"));
    f.handle.close().await;
    drop(refill);
}
