//! The stdio output is bounded in bytes (`StdioOptions::output_budget_bytes`):
//! a client that stops reading cannot make the server buffer more than the
//! budget (plus one message), whether it asks for progress notifications
//! with large status lines or sends batches, and nothing queued
//! is lost once it reads again.
//!
//! Memory is measured two ways: the transport's own count of queued output
//! bytes, and a counting global allocator (this test binary's alone) for
//! everything the process holds. The tests run one at a time (a lock) so
//! the allocator's figures are theirs.

#[path = "../benches/support/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mcp_core::{transport::stdio::serve_io, InvokeContext, McpServer, McpToolDef, StdioOptions};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use counting_alloc::{peak_above, reset_peak};

/// One test at a time: the allocator counts the whole process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

/// How long the client reads nothing: the server has long stalled by then
/// (and, without a byte budget, long buffered everything).
const NOT_READING: Duration = Duration::from_millis(600);

/// Runs `test` alone on a multi-threaded runtime, with a hang guard.
fn run_alone<F: std::future::Future<Output = ()>>(test: F) {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(120), test)
            .await
            .expect("the test should finish before the hang guard");
    });
}

/// A server whose `slow` tool reports 100 progress steps, counting them in `reported`.
fn progress_server(reported: Arc<AtomicUsize>) -> McpServer {
    McpServer::builder()
        .tool(McpToolDef::new(
            "slow",
            "reports 100 steps",
            json!({"type": "object"}),
            move |args: Map<String, Value>, ctx: InvokeContext| {
                let reported = Arc::clone(&reported);
                // Each report carries a status line of `pad` bytes.
                let pad = args.get("pad").and_then(Value::as_u64).unwrap_or(0);
                let status = "m".repeat(usize::try_from(pad).unwrap_or(0));
                async move {
                    for i in 1..=100 {
                        ctx.report_progress(f64::from(i), Some(100.0), Some(&status))
                            .await;
                        reported.fetch_add(1, Ordering::Relaxed);
                    }
                    "done".to_owned()
                }
            },
        ))
        .build()
        .expect("valid server")
}

/// Finding 1 of issue 16 (progress amplification): a token is bounded in
/// size (256 bytes), but a tool's reports can still be large; with 256 KiB
/// reports and a client that does not read, the server buffers at most its budget (plus one
/// message) instead of all 100 notifications (25 MiB), the tool waits, and
/// once the client reads every notification and the reply arrive.
#[test]
fn progress_with_large_reports_stays_within_the_output_budget() {
    run_alone(async {
        const BUDGET: usize = MIB;
        const PAD: usize = 256 * KIB;
        let reported = Arc::new(AtomicUsize::new(0));
        let (mut client_w, server_r) = tokio::io::duplex(4 * KIB);
        let (server_w, client_r) = tokio::io::duplex(4 * KIB);
        let options = StdioOptions::default().output_budget_bytes(BUDGET);
        let handle = serve_io(
            progress_server(Arc::clone(&reported)),
            server_r,
            server_w,
            options,
        );
        let token = "t";
        let mut request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"pad": PAD}, "_meta": {"progressToken": token}}})
        .to_string()
        .into_bytes();
        request.push(b'\n');
        // One notification as the server writes it, for the bound.
        let one_message = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 100.0, "total": 100.0,
                       "message": "m".repeat(PAD)}})
        .to_string()
        .len()
            + 1;

        let base = reset_peak();
        client_w.write_all(&request).await.expect("server reads");
        drop(request);
        tokio::time::sleep(NOT_READING).await;
        let grown = peak_above(base);
        let peak_queued = handle.peak_queued_output_bytes();
        let done_before_reading = reported.load(Ordering::Relaxed);
        println!(
            "not reading: {done_before_reading}/100 reports sent, peak queued {peak_queued} B \
             (budget {BUDGET} B, one message {one_message} B), heap peak +{grown} B"
        );
        assert!(
            done_before_reading < 100,
            "the tool should wait for the client to read, not run to its end"
        );
        assert!(peak_queued > 0);
        assert!(
            peak_queued <= BUDGET + one_message,
            "queued {peak_queued} B over the budget {BUDGET} B + one message"
        );
        // The request and its token (parsed, cloned per report), the
        // budget, one report waiting for room, and the writer's and the
        // pipes' buffers; not 100 notifications.
        assert!(
            grown <= BUDGET + 8 * one_message,
            "the process grew by {grown} B while the client did not read"
        );

        // Reading again: every notification, in order, then the reply.
        let mut lines = BufReader::new(client_r).lines();
        for i in 1..=100 {
            let line = lines.next_line().await.expect("readable").expect("a line");
            let note: Value = serde_json::from_str(&line).expect("JSON");
            assert_eq!(note["method"], "notifications/progress");
            assert_eq!(note["params"]["progress"], f64::from(i));
            assert_eq!(note["params"]["message"].as_str().map(str::len), Some(PAD));
        }
        let line = lines.next_line().await.expect("readable").expect("a line");
        let reply: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(reply["id"], 1, "{reply}");
        assert_eq!(reply["result"]["content"][0]["text"], "done", "{reply}");
        drop(client_w);
        handle.wait().await.expect("clean stop");
        assert_eq!(lines.next_line().await.expect("readable"), None);
    });
}

/// Finding 2 of issue 16 (batches bypass backpressure): 2,000 lines of
/// 50-ping batches written while the client reads nothing. The server
/// stops reading once its output budget is spent (so the client's writes
/// stall, not the server's memory grows); once the client reads, every one
/// of the 100,000 replies arrives, none lost at end of input.
#[test]
fn ping_batches_unread_stay_within_the_output_budget_and_all_arrive() {
    run_alone(async {
        const BUDGET: usize = 256 * KIB;
        const LINES: usize = 2_000;
        const PER_BATCH: usize = 50;
        const TOTAL: usize = LINES * PER_BATCH;
        let server = McpServer::builder().build().expect("valid server");
        let (mut client_w, server_r) = tokio::io::duplex(4 * KIB);
        let (server_w, client_r) = tokio::io::duplex(4 * KIB);
        let options = StdioOptions::default()
            .output_budget_bytes(BUDGET)
            .drain_timeout(Duration::from_millis(200));
        let handle = serve_io(server, server_r, server_w, options);
        let mut input = Vec::new();
        for line in 0..LINES {
            let batch: Vec<Value> = (0..PER_BATCH)
                .map(|i| json!({"jsonrpc": "2.0", "id": line * PER_BATCH + i, "method": "ping"}))
                .collect();
            serde_json::to_writer(&mut input, &batch).expect("serializable");
            input.push(b'\n');
        }
        let input_len = input.len();
        // The largest thing queued at once: a group of one read's replies
        // (sent past 64 KiB or 32 lines) plus one batch reply.
        let one_message = 64 * KIB + 4 * KIB;

        let base = reset_peak();
        let writer = tokio::spawn(async move {
            client_w.write_all(&input).await.expect("server reads");
            // End of input: the server drains and closes its output.
            drop(client_w);
        });
        tokio::time::sleep(NOT_READING).await;
        let grown = peak_above(base);
        eprintln!("live now +{}", counting_alloc::live() - base);
        let peak_queued = handle.peak_queued_output_bytes();
        let input_all_read = writer.is_finished();
        println!(
            "not reading: input of {input_len} B read in full: {input_all_read}, peak queued \
             {peak_queued} B (budget {BUDGET} B), heap peak +{grown} B"
        );
        assert!(
            !input_all_read,
            "the server should stop reading input while its output is not read"
        );
        assert!(peak_queued > 0);
        assert!(
            peak_queued <= BUDGET + one_message,
            "queued {peak_queued} B over the budget {BUDGET} B + one message"
        );
        assert!(
            grown <= BUDGET + MIB,
            "the process grew by {grown} B while the client did not read"
        );

        // Reading everything: each of the 100,000 replies exactly once.
        let mut seen = vec![false; TOTAL];
        let mut count = 0;
        let mut lines = BufReader::new(client_r).lines();
        while let Some(line) = lines.next_line().await.expect("readable") {
            let replies: Vec<Value> = serde_json::from_str(&line).expect("a JSON batch reply");
            assert_eq!(replies.len(), PER_BATCH);
            for reply in replies {
                let id = reply["id"]
                    .as_u64()
                    .and_then(|id| usize::try_from(id).ok())
                    .unwrap_or_else(|| panic!("a numeric id: {reply}"));
                assert_eq!(reply["result"], json!({}), "{reply}");
                assert!(!seen[id], "reply {id} twice");
                seen[id] = true;
                count += 1;
            }
        }
        writer.await.expect("the client's writer");
        let final_peak = handle.peak_queued_output_bytes();
        handle.wait().await.expect("clean stop");
        assert_eq!(count, TOTAL, "replies lost");
        assert!(final_peak <= BUDGET + one_message, "queued {final_peak} B");
        println!("all {TOTAL} replies arrived; peak queued over the whole run {final_peak} B");
    });
}

/// A message larger than the whole budget takes all of it and goes alone:
/// it never waits forever (here 100 progress notifications and a reply,
/// each 64 KiB, through a 1 KiB budget).
#[test]
fn a_message_larger_than_the_budget_goes_alone() {
    run_alone(async {
        const BUDGET: usize = KIB;
        let (mut client_w, server_r) = tokio::io::duplex(4 * KIB);
        let (server_w, client_r) = tokio::io::duplex(4 * KIB);
        let options = StdioOptions::default().output_budget_bytes(BUDGET);
        let reported = Arc::new(AtomicUsize::new(0));
        let handle = serve_io(progress_server(reported), server_r, server_w, options);
        let mut request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"pad": 64 * KIB}, "_meta": {"progressToken": "t"}}})
        .to_string()
        .into_bytes();
        request.push(b'\n');
        client_w.write_all(&request).await.expect("server reads");
        let mut lines = BufReader::new(client_r).lines();
        for _ in 0..100 {
            let line = lines.next_line().await.expect("readable").expect("a line");
            assert!(line.len() > 64 * KIB);
        }
        let line = lines.next_line().await.expect("readable").expect("a line");
        let reply: Value = serde_json::from_str(&line).expect("JSON");
        assert_eq!(reply["id"], 7, "{reply}");
        let peak = handle.peak_queued_output_bytes();
        assert!(peak > BUDGET, "a long line counts whole: {peak}");
        assert!(peak < 2 * 64 * KIB, "but goes alone: {peak}");
        drop(client_w);
        handle.wait().await.expect("clean stop");
    });
}
