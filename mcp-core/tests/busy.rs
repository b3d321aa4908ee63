//! Busy answers are for work only: over a full concurrency limit a request
//! that would run a handler gets `-32000`, while `ping`, `initialize` and
//! cancellations are always served, and a batch is admitted entry by entry
//! in order (so what is refused does not vary from run to run).

mod common;

use mcp_core::{transport::stdio::serve_io, InvokeContext, McpServer, McpToolDef, StdioOptions};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

/// A server whose `wait` tool runs until it is cancelled.
fn server() -> McpServer {
    McpServer::builder()
        .tool(McpToolDef::new(
            "wait",
            "waits until cancelled",
            json!({"type": "object"}),
            |_args: Map<String, Value>, ctx: InvokeContext| async move {
                ctx.cancelled().await;
                "cancelled".to_owned()
            },
        ))
        .build()
        .expect("valid server")
}

struct Pipe {
    write: DuplexStream,
    lines: Lines<BufReader<DuplexStream>>,
}

impl Pipe {
    fn open(max_concurrent: usize) -> Self {
        let (client_w, server_r) = tokio::io::duplex(1 << 20);
        let (server_w, client_r) = tokio::io::duplex(1 << 20);
        let options = StdioOptions::default().max_concurrent_requests(max_concurrent);
        let _handle = serve_io(server(), server_r, server_w, options);
        Self {
            write: client_w,
            lines: BufReader::new(client_r).lines(),
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.write.write_all(&line).await.expect("server reads");
    }

    async fn next(&mut self) -> Value {
        let line = common::guard("a reply", self.lines.next_line())
            .await
            .expect("readable")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }
}

fn call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "wait"}})
}

#[tokio::test]
async fn ping_and_cancel_are_served_over_a_full_limit() {
    let mut pipe = Pipe::open(1);
    pipe.send(call(1)).await;
    // Lines are accepted in order: call 1 holds the only slot already.
    pipe.send(call(2)).await;
    let busy = pipe.next().await;
    assert_eq!(busy["id"], 2, "{busy}");
    assert_eq!(busy["error"]["code"], -32000, "{busy}");
    pipe.send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}))
        .await;
    let pong = pipe.next().await;
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 3, "result": {}}));
    pipe.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1}}),
    )
    .await;
    // The cancelled call gets no reply; its slot is free again.
    pipe.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    assert_eq!(pipe.next().await["id"], 4);
    pipe.send(call(5)).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"}))
        .await;
    // 5 runs (no busy answer); the ping behind it is answered.
    assert_eq!(pipe.next().await["id"], 6);
}

#[tokio::test]
async fn a_batch_of_pings_is_never_refused() {
    let mut pipe = Pipe::open(16);
    let batch: Vec<Value> = (0..40)
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
        .collect();
    pipe.send(Value::Array(batch)).await;
    let replies = pipe.next().await;
    let replies = replies.as_array().expect("a batch reply");
    assert_eq!(replies.len(), 40);
    for (id, reply) in replies.iter().enumerate() {
        assert_eq!(reply, &json!({"jsonrpc": "2.0", "id": id, "result": {}}));
    }
}

#[tokio::test]
async fn a_batch_over_the_limit_refuses_the_same_entries_every_time() {
    for _ in 0..3 {
        let mut pipe = Pipe::open(4);
        let batch: Vec<Value> = (0..10).map(call).collect();
        pipe.send(Value::Array(batch)).await;
        // The six entries past the limit are refused at once, the first
        // four run (registered before the next line is read); cancelling
        // those lets the batch reply leave.
        for id in 0..4 {
            pipe.send(
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": id}}),
            )
            .await;
        }
        let replies = pipe.next().await;
        let ids: Vec<i64> = replies
            .as_array()
            .expect("a batch reply")
            .iter()
            .map(|r| {
                assert_eq!(r["error"]["code"], -32000, "{r}");
                r["id"].as_i64().expect("an id")
            })
            .collect();
        assert_eq!(ids, [4, 5, 6, 7, 8, 9]);
    }
}
