//! The optional server features: resource subscriptions, legacy
//! `resources/subscribe` / `resources/unsubscribe` and `resourceSubscriptions`
//! on a 2026-07-28 `subscriptions/listen` (see `features.rs`).

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

include!("common/features_prelude.rs");

// ---------------------------------------------------------------------------
// Resource subscriptions
// ---------------------------------------------------------------------------

const WATCHED: &str = "test://watched";

fn subscription_server() -> McpServer {
    subscription_builder()
        .resource_subscriptions()
        .build()
        .expect("valid server")
}

fn subscription_builder() -> McpServerBuilder {
    McpServer::builder()
        .resource(McpResourceDef::new(
            WATCHED,
            "watched",
            |_req, _ctx| async { "watched content" },
        ))
        .resource(McpResourceDef::new(
            "test://dir",
            "dir",
            |_req, _ctx| async { "a directory" },
        ))
}

#[tokio::test]
async fn legacy_subscribe_delivers_updates_until_unsubscribe() {
    let server = subscription_server();
    assert_eq!(server.capabilities()["resources"]["subscribe"], true);
    let client = TestClient::connect(server.clone())
        .await
        .expect("initialize");
    let init = client.initialize_result().expect("initialized");
    assert_eq!(init["capabilities"]["resources"]["subscribe"], true);

    // Nobody subscribed yet.
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);

    let ok = client
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await
        .expect("subscribe");
    assert_eq!(ok, json!({}));
    assert_eq!(server.notify_resource_updated(WATCHED).await, 1);
    let note = guard("the update", client.next_notification(HANG_GUARD))
        .await
        .expect("a notification");
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED}})
    );

    // Another resource is not delivered.
    assert_eq!(server.notify_resource_updated("test://other").await, 0);

    let ok = client
        .request("resources/unsubscribe", json!({"uri": WATCHED}))
        .await
        .expect("unsubscribe");
    assert_eq!(ok, json!({}));
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    tokio::time::sleep(QUIET).await;
    assert!(updates(&client.drain_notifications().await).is_empty());
}

#[tokio::test]
async fn a_uri_below_the_subscribed_one_is_delivered_and_a_mere_prefix_is_not() {
    let server = subscription_server();
    let peer = Peer::legacy(&server, json!({})).await;
    let reply = peer
        .ask(req(1, "resources/subscribe", json!({"uri": "test://dir"})))
        .await;
    assert_eq!(result(&reply), &json!({}));

    assert_eq!(server.notify_resource_updated("test://dir").await, 1);
    assert_eq!(
        server.notify_resource_updated("test://dir/a/b.txt").await,
        1
    );
    assert_eq!(server.notify_resource_updated("test://directory").await, 0);
    assert_eq!(server.notify_resource_updated("test://di").await, 0);
    assert_eq!(
        updates(&peer.quiet_out().await),
        [
            json!({"uri": "test://dir"}),
            json!({"uri": "test://dir/a/b.txt"})
        ]
    );
}

#[tokio::test]
async fn subscriptions_belong_to_their_session() {
    let server = subscription_server();
    let subscriber = Peer::legacy(&server, json!({})).await;
    let bystander = Peer::legacy(&server, json!({})).await;
    subscriber
        .ask(req(1, "resources/subscribe", json!({"uri": WATCHED})))
        .await;
    // Subscribing twice is one subscription.
    subscriber
        .ask(req(2, "resources/subscribe", json!({"uri": WATCHED})))
        .await;
    // Unsubscribing what the other session never subscribed changes nothing.
    bystander
        .ask(req(1, "resources/unsubscribe", json!({"uri": WATCHED})))
        .await;
    assert_eq!(server.notify_resource_updated(WATCHED).await, 1);
    assert_eq!(updates(&subscriber.quiet_out().await).len(), 1);
    assert!(updates(&bystander.quiet_out().await).is_empty());
}

#[tokio::test]
async fn a_closed_session_gets_no_more_updates() {
    let server = subscription_server();
    let peer = Peer::legacy(&server, json!({})).await;
    peer.ask(req(1, "resources/subscribe", json!({"uri": WATCHED})))
        .await;
    peer.session.close();
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    assert!(updates(&peer.quiet_out().await).is_empty());
}

#[tokio::test]
async fn without_resource_subscriptions_subscribe_is_method_not_found() {
    // Not offered.
    let server = subscription_builder().build().expect("valid server");
    assert_eq!(server.capabilities()["resources"]["subscribe"], false);
    // Offered, but there are no resources to subscribe to.
    let empty = McpServer::builder()
        .resource_subscriptions()
        .build()
        .expect("valid server");
    assert!(empty.capabilities().get("resources").is_none());
    for server in [server, empty] {
        let peer = Peer::legacy(&server, json!({})).await;
        for method in ["resources/subscribe", "resources/unsubscribe"] {
            let reply = peer.ask(req(1, method, json!({"uri": WATCHED}))).await;
            assert_eq!(error(&reply).0, -32601, "{method}: {reply}");
        }
        assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    }
}

#[tokio::test]
async fn subscribe_requires_a_string_uri() {
    let server = subscription_server();
    let peer = Peer::legacy(&server, json!({})).await;
    for method in ["resources/subscribe", "resources/unsubscribe"] {
        for params in [json!({}), json!({"uri": 5})] {
            let reply = peer.ask(req(1, method, params.clone())).await;
            assert_eq!(error(&reply).0, -32602, "{method} {params}: {reply}");
        }
    }
}

#[tokio::test]
async fn modern_listen_acknowledges_resource_subscriptions_and_delivers_tagged_updates() {
    let server = subscription_server();
    let peer = Peer::new(&server);
    let task = peer.start(listen(
        "L1",
        json!({"toolsListChanged": true, "resourceSubscriptions": [WATCHED, 42, WATCHED]}),
    ));

    // First the acknowledgement: only what is honoured (string URIs, once;
    // no tool list changes on this server), tagged with the listen's id.
    let ack = peer.next_out().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_ID], "L1");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": [WATCHED]})
    );

    assert_eq!(server.notify_resource_updated(WATCHED).await, 1);
    let note = peer.next_out().await;
    assert_eq!(note["method"], "notifications/resources/updated");
    assert_eq!(note["params"]["uri"], WATCHED);
    assert_eq!(note["params"]["_meta"][SUB_ID], "L1");

    // Below the subscribed URI too; not elsewhere.
    assert_eq!(
        server
            .notify_resource_updated(&format!("{WATCHED}/part"))
            .await,
        1
    );
    assert_eq!(server.notify_resource_updated("test://dir").await, 0);
    assert_eq!(updates(&peer.quiet_out().await).len(), 1);

    // Cancelling the listen ends it without a reply and stops delivery.
    peer.tell(notification(
        "notifications/cancelled",
        json!({"requestId": "L1"}),
    ))
    .await;
    assert_eq!(guard("the listen to end", task).await.expect("task"), None);
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    assert!(peer.quiet_out().await.is_empty());
}

#[tokio::test]
async fn a_listen_ended_by_the_session_closing_stops_delivery() {
    let server = subscription_server();
    let peer = Peer::new(&server);
    let task = peer.start(listen("L2", json!({"resourceSubscriptions": [WATCHED]})));
    let ack = peer.next_out().await;
    assert_eq!(ack["params"]["_meta"][SUB_ID], "L2");
    assert_eq!(server.notify_resource_updated(WATCHED).await, 1);

    peer.session.close();
    let reply = finish(task).await;
    assert_eq!(result(&reply)["_meta"][SUB_ID], "L2");
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
}

#[tokio::test]
async fn listens_are_independent() {
    let server = subscription_server();
    let peer = Peer::new(&server);
    let a = peer.start(listen("A", json!({"resourceSubscriptions": [WATCHED]})));
    peer.next_out().await;
    let b = peer.start(listen(
        "B",
        json!({"resourceSubscriptions": ["test://dir"]}),
    ));
    peer.next_out().await;

    assert_eq!(server.notify_resource_updated(WATCHED).await, 1);
    assert_eq!(server.notify_resource_updated("test://dir").await, 1);
    let tags: Vec<Value> = updates(&peer.quiet_out().await)
        .iter()
        .map(|p| json!([p["uri"], p["_meta"][SUB_ID]]))
        .collect();
    assert_eq!(tags, [json!([WATCHED, "A"]), json!(["test://dir", "B"])]);

    peer.tell(notification(
        "notifications/cancelled",
        json!({"requestId": "A"}),
    ))
    .await;
    assert_eq!(guard("listen A to end", a).await.expect("task"), None);
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    assert_eq!(server.notify_resource_updated("test://dir").await, 1);
    peer.session.close();
    finish(b).await;
}

#[tokio::test]
async fn modern_listen_without_subscription_support_honours_no_resources() {
    let server = subscription_builder().build().expect("valid server");
    let peer = Peer::new(&server);
    let task = peer.start(listen("L3", json!({"resourceSubscriptions": [WATCHED]})));
    let ack = peer.next_out().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"], json!({}));
    assert_eq!(server.notify_resource_updated(WATCHED).await, 0);
    peer.session.close();
    finish(task).await;
}

/// A stdio server must stop when its input ends; a live legacy subscription
/// keeps a clone of the output channel in the server's subscription table
/// (pruned only on the next subscription change or notify), so the writer
/// never finishes and the server never stops (framework bug, see the report).
#[tokio::test]
async fn stdio_server_stops_at_end_of_input_with_a_live_subscription() {
    let server = subscription_server();
    let client = TestClient::connect(server).await.expect("initialize");
    client
        .request("resources/subscribe", json!({"uri": WATCHED}))
        .await
        .expect("subscribe");
    tokio::time::timeout(Duration::from_secs(5), client.close())
        .await
        .expect("the stdio server did not stop within 5 s of end of input")
        .expect("clean stop");
}

/// Legacy subscriptions over Streamable HTTP: updates are server-initiated,
/// so they belong on the session's GET stream, not on the response stream
/// of the POST that subscribed (which ends with its `{}` reply).
#[cfg(feature = "http")]
mod over_http {
    use std::net::SocketAddr;

    use mcp_core::{serve_http, HttpOptions};

    use mcp_core::transport::http::SessionOptions;
    use serde_json::{json, Value};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    use super::{guard, subscription_server, QUIET, WATCHED};

    fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
        let mut out = format!("{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
        for (k, v) in headers {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        if method == "POST" {
            out.push_str(&format!(
                "Content-Type: application/json\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        out.push_str("\r\n");
        out.push_str(body);
        out.into_bytes()
    }

    /// POSTs `body` and returns `(status, session id header, raw response text)`.
    async fn post(
        addr: SocketAddr,
        headers: &[(&str, &str)],
        body: &Value,
    ) -> (u16, Option<String>, String) {
        let mut tcp = guard("connect", TcpStream::connect(addr))
            .await
            .expect("connect");
        tcp.write_all(&request(addr, "POST", headers, &body.to_string()))
            .await
            .expect("write");
        let mut buf = Vec::new();
        guard("response", tcp.read_to_end(&mut buf))
            .await
            .expect("read");
        let text = String::from_utf8_lossy(&buf).into_owned();
        let status = text
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let session = text.lines().take_while(|l| !l.is_empty()).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("mcp-session-id")
                .then(|| v.trim().to_owned())
        });
        (status, session, text)
    }

    /// Subscribes in a fresh session whose GET stream is open, posting the
    /// subscribe with `accept`, then updates the resource. Returns how many
    /// subscribers were notified and whether the GET stream carried the update.
    async fn subscribe_and_update(accept: &str) -> (usize, bool) {
        let server = subscription_server();
        let http = serve_http(
            server.clone(),
            HttpOptions::new().sessions(SessionOptions::default()),
        )
        .await
        .expect("serve_http");
        let addr = http.local_addr();
        let both = ("Accept", "application/json, text/event-stream");
        let (status, session, text) = post(
            addr,
            &[both],
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "features-test", "version": "1"}}}),
        )
        .await;
        assert_eq!(status, 200, "{text}");
        let session = session.expect("a session id");
        let sid = ("Mcp-Session-Id", session.as_str());
        let version = ("MCP-Protocol-Version", "2025-11-25");
        let (status, _, text) = post(
            addr,
            &[both, sid, version],
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        )
        .await;
        assert_eq!(status, 202, "{text}");

        // The standalone GET stream, open before subscribing.
        let mut get = guard("connect", TcpStream::connect(addr))
            .await
            .expect("connect");
        get.write_all(&request(
            addr,
            "GET",
            &[("Accept", "text/event-stream"), sid, version],
            "",
        ))
        .await
        .expect("write");
        let mut seen = Vec::new();
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let mut buf = [0u8; 1024];
            let n = guard("GET stream head", get.read(&mut buf))
                .await
                .expect("read");
            assert!(
                n > 0,
                "GET stream closed: {}",
                String::from_utf8_lossy(&seen)
            );
            seen.extend_from_slice(&buf[..n]);
        }
        assert!(
            seen.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&seen)
        );

        let (status, _, text) = post(
            addr,
            &[("Accept", accept), sid, version],
            &json!({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe",
                "params": {"uri": WATCHED}}),
        )
        .await;
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(r#""result":{}"#), "{text}");

        let notified = server.notify_resource_updated(WATCHED).await;
        let mut delivered = false;
        while !delivered {
            let mut buf = [0u8; 4096];
            match tokio::time::timeout(QUIET * 5, get.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => {
                    seen.extend_from_slice(&buf[..n]);
                    delivered =
                        String::from_utf8_lossy(&seen).contains("notifications/resources/updated");
                }
                _ => break,
            }
        }
        http.close().await;
        (notified, delivered)
    }

    #[tokio::test]
    async fn subscribed_with_a_json_only_post_updates_arrive_on_the_get_stream() {
        assert_eq!(subscribe_and_update("application/json").await, (1, true));
    }

    /// Every real client sends `Accept: application/json, text/event-stream`
    /// (the spec requires both); the subscription must still outlive the
    /// subscribe POST's own response stream, which ends with its reply.
    #[tokio::test]
    async fn subscribed_with_an_sse_capable_post_updates_arrive_on_the_get_stream() {
        assert_eq!(
            subscribe_and_update("application/json, text/event-stream").await,
            (1, true)
        );
    }
}
