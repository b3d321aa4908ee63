//! What `mcp_core::client` itself costs per call: sequential and pipelined
//! `echo` calls against a server over stdio, timed and with this process's
//! CPU per call (the client's side only; the server runs in its own
//! process). BENCHMARKS.md quotes it against the benchmark driver on the
//! no-framework server of `bench/baseline`.
//!
//! ```sh
//! cargo build --release --example client_bench --features client
//! target/release/examples/client_bench --stdio "target/peer-bench/target/release/baseline" \
//!     --protocol 2025-11-25 --seq 20000 --pipelined 200000 --window 64
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_core::client::{Client, ClientBuilder, Protocol};
use serde_json::json;

/// This thread's CPU time (the runtime is single-threaded, so this is the
/// client's): the first field of `/proc/thread-self/schedstat`, in ns.
fn cpu() -> Duration {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|n| n.parse().ok()))
        .map_or(Duration::ZERO, Duration::from_nanos)
}

async fn echo(client: &Client, i: usize) {
    let text = format!("hello-{i}");
    match client.call_tool("echo", json!({ "text": text })).await {
        Ok(r) if r.text_content() == text => {}
        other => panic!("echo {i}: {other:?}"),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut command, mut protocol, mut seq, mut pipelined, mut window) = (
        None,
        "2025-11-25".to_owned(),
        20_000usize,
        200_000usize,
        64usize,
    );
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || {
            value
                .parse::<usize>()
                .unwrap_or_else(|e| panic!("{flag}: {e}"))
        };
        match flag.as_str() {
            "--stdio" => command = Some(value.clone()),
            "--protocol" => protocol = value.clone(),
            "--seq" => seq = number(),
            "--pipelined" => pipelined = number(),
            "--window" => window = number().max(1),
            other => panic!("unknown flag {other}"),
        }
    }
    let command = command.unwrap_or_else(|| panic!("give --stdio \"CMD\""));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
    runtime.block_on(async move {
        let mut words = command.split_whitespace();
        let mut cmd = tokio::process::Command::new(words.next().unwrap_or_default());
        cmd.args(words);
        let client = ClientBuilder::new("client-bench", "0")
            .protocol(Protocol::pinned(&protocol))
            .connect_stdio(cmd)
            .await
            .unwrap_or_else(|e| panic!("connect: {e}"));
        let client = Arc::new(client);
        for i in 0..1000 {
            echo(&client, i).await;
        }

        let (t0, c0) = (Instant::now(), cpu());
        for i in 0..seq {
            echo(&client, i).await;
        }
        let (wall, used) = (t0.elapsed(), cpu() - c0);
        println!(
            "{protocol} sequential: {seq} calls, {:.1} µs per round trip, client CPU {:.2} µs per call",
            wall.as_secs_f64() * 1e6 / seq as f64,
            used.as_secs_f64() * 1e6 / seq as f64
        );

        let (t0, c0) = (Instant::now(), cpu());
        let mut workers = tokio::task::JoinSet::new();
        for w in 0..window {
            let client = Arc::clone(&client);
            let share = pipelined / window + usize::from(w < pipelined % window);
            workers.spawn(async move {
                for i in 0..share {
                    echo(&client, w * 1_000_000 + i).await;
                }
            });
        }
        while workers.join_next().await.is_some() {}
        let (wall, used) = (t0.elapsed(), cpu() - c0);
        println!(
            "{protocol} pipelined ({window} in flight): {pipelined} calls, {:.0} calls/s, client CPU {:.2} µs per call",
            pipelined as f64 / wall.as_secs_f64(),
            used.as_secs_f64() * 1e6 / pipelined as f64
        );
        client.close().await;
    });
}
