//! `TestClient` over the client's engine, against a server played by the
//! test itself on the other end of an in-memory pipe: what reaches the
//! test whole (notifications, unmatched messages, replies to ids it
//! chose), what the engine answers on its own, and a timed-out request
//! being cancelled.

use std::collections::HashMap;
use std::time::Duration;

use mcp_core::protocol::RequestId;
use mcp_core::testing::{ClientOptions, TestClient};
use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// Generous guard against hangs; never a timing assertion.
const GUARD: Duration = Duration::from_secs(10);

/// The server's end of the pipe: lines the client wrote, and a writer.
struct FakeServer {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    out: WriteHalf<DuplexStream>,
}

impl FakeServer {
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(GUARD, self.lines.next_line())
            .await
            .expect("the client writes within the guard")
            .expect("readable")
            .expect("a line, not the end of the stream");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    async fn send(&mut self, line: &str) {
        self.out.write_all(line.as_bytes()).await.expect("write");
        self.out.write_all(b"\n").await.expect("write");
        self.out.flush().await.expect("flush");
    }
}

fn pair(options: ClientOptions) -> (TestClient, FakeServer) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(client_end);
    let (server_read, server_write) = tokio::io::split(server_end);
    let server = FakeServer {
        lines: BufReader::new(server_read).lines(),
        out: server_write,
    };
    // This server sends what no schema allows on purpose: not traced.
    (TestClient::over(read, write, options.untraced()), server)
}

#[tokio::test]
async fn what_no_request_claims_reaches_the_test_whole_and_in_order() {
    let (client, mut server) = pair(ClientOptions::default());
    server.send("this is not JSON").await;
    server
        .send(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#)
        .await;
    server
        .send(
            r#"[{"jsonrpc":"2.0","id":"b1","result":{}},{"jsonrpc":"2.0","id":"b2","result":{}}]"#,
        )
        .await;
    server
        .send(r#"{"jsonrpc":"2.0","id":99,"result":{"late":true}}"#)
        .await;

    let mut seen = Vec::new();
    for _ in 0..4 {
        seen.push(
            client
                .next_unmatched(GUARD)
                .await
                .expect("an unmatched message"),
        );
    }
    assert_eq!(
        seen,
        vec![
            json!("this is not JSON"),
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
            json!([{"jsonrpc": "2.0", "id": "b1", "result": {}}, {"jsonrpc": "2.0", "id": "b2", "result": {}}]),
            json!({"jsonrpc": "2.0", "id": 99, "result": {"late": true}}),
        ]
    );
    assert!(client.drain_notifications().await.is_empty());
}

#[tokio::test]
async fn a_caller_chosen_id_gets_its_whole_reply_and_raw_lines_go_out_as_they_are() {
    let (client, mut server) = pair(ClientOptions::default());
    assert!(client.send_raw(b"{not json").await);
    let line = tokio::time::timeout(GUARD, server.lines.next_line())
        .await
        .expect("in time")
        .expect("readable");
    assert_eq!(line.as_deref(), Some("{not json"));

    let pending = client
        .start_request_with_id(RequestId::from("probe"), "server/discover", Value::Null)
        .await;
    assert_eq!(
        server.next().await,
        json!({"jsonrpc": "2.0", "id": "probe", "method": "server/discover"}),
        "null params are left out"
    );
    server
        .send(r#"{"jsonrpc":"2.0","id":"probe","result":{"a":1},"extra":true}"#)
        .await;
    assert_eq!(
        pending.response(GUARD).await,
        Some(json!({"jsonrpc": "2.0", "id": "probe", "result": {"a": 1}, "extra": true}))
    );
}

#[tokio::test]
async fn ids_count_up_and_a_reply_settles_request_with_the_result_or_the_error() {
    let (client, mut server) = pair(ClientOptions::default());
    let first = client.start_request("a", json!({})).await;
    let ask = tokio::spawn(async move {
        let ok = client.request("tools/list", json!({"cursor": "c"})).await;
        let err = client.request("tools/call", json!({"name": "x"})).await;
        (ok, err)
    });
    assert_eq!(server.next().await["id"], json!(first.id.to_value()));
    let list = server.next().await;
    assert_eq!(list["method"], "tools/list");
    assert_eq!(list["params"], json!({"cursor": "c"}));
    let list_id = list["id"].as_i64().expect("a numeric id");
    assert!(
        RequestId::Number(list_id) != first.id,
        "one counter, no reuse"
    );
    server
        .send(&json!({"jsonrpc": "2.0", "id": list_id, "result": {"tools": []}}).to_string())
        .await;
    let call = server.next().await;
    server
        .send(
            &json!({"jsonrpc": "2.0", "id": call["id"], "error": {"code": -32602, "message": "bad", "data": {"k": 1}}})
                .to_string(),
        )
        .await;
    let (ok, err) = tokio::time::timeout(GUARD, ask)
        .await
        .expect("in time")
        .expect("no panic");
    assert_eq!(ok.expect("a result"), json!({"tools": []}));
    let err = err.expect_err("the server's error");
    assert_eq!((err.code, err.message.as_str()), (-32602, "bad"));
    assert_eq!(err.data, Some(json!({"k": 1})));
}

#[tokio::test]
async fn server_requests_get_the_elicit_handler_ping_and_method_not_found() {
    let options = ClientOptions::default()
        .elicit(|params| Ok(json!({"action": "accept", "content": {"echo": params["message"]}})));
    let (_client, mut server) = pair(options);
    for (id, method) in [
        ("e1", "elicitation/create"),
        ("p1", "ping"),
        ("r1", "roots/list"),
    ] {
        server
            .send(
                &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {"message": "hi"}})
                    .to_string(),
            )
            .await;
    }
    let mut replies = HashMap::new();
    for _ in 0..3 {
        let reply = server.next().await;
        replies.insert(reply["id"].as_str().expect("string id").to_owned(), reply);
    }
    assert_eq!(
        replies["e1"]["result"],
        json!({"action": "accept", "content": {"echo": "hi"}})
    );
    assert_eq!(replies["p1"]["result"], json!({}));
    assert_eq!(replies["r1"]["error"]["code"], -32601);

    let (_client, mut server) = pair(ClientOptions::default().without_elicitation());
    server
        .send(r#"{"jsonrpc":"2.0","id":"e2","method":"elicitation/create","params":{}}"#)
        .await;
    assert_eq!(server.next().await["error"]["code"], -32601);
}

#[tokio::test]
async fn notifications_are_queued_whole() {
    let (client, mut server) = pair(ClientOptions::default());
    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": 1, "_meta": {"k": "v"}}});
    server.send(&note.to_string()).await;
    server
        .send(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        .await;
    assert_eq!(client.next_notification(GUARD).await, Some(note));
    assert_eq!(
        client.next_notification(GUARD).await,
        Some(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
        "no params member is added"
    );
}

#[tokio::test]
async fn a_request_that_times_out_is_cancelled_and_fails() {
    // A short timeout so the test is quick; nothing asserts how long it took.
    let (client, mut server) = pair(ClientOptions::default().timeout(Duration::from_millis(50)));
    let ask = tokio::spawn(async move { client.request("slow", json!({})).await });
    let sent = server.next().await;
    assert_eq!(sent["method"], "slow");
    let cancel = server.next().await;
    assert_eq!(cancel["method"], "notifications/cancelled");
    assert_eq!(cancel["params"]["requestId"], sent["id"]);
    let err = tokio::time::timeout(GUARD, ask)
        .await
        .expect("in time")
        .expect("no panic")
        .expect_err("no answer");
    assert_eq!(err.message, "no response to slow");
}

#[tokio::test]
async fn a_closed_connection_fails_waiting_requests_instead_of_hanging() {
    let (client, server) = pair(ClientOptions::default());
    let pending = client.start_request("never", json!({})).await;
    drop(server);
    let reply = tokio::time::timeout(GUARD, pending.response(Duration::from_secs(3600)))
        .await
        .expect("the end of the stream ends the wait");
    assert_eq!(reply, None);
    let err = client
        .request("after", json!({}))
        .await
        .expect_err("the connection is gone");
    assert_eq!(err.message, "no response to after");
}
