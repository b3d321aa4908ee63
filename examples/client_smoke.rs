//! `mcp_core::client` against any MCP server: connect, list, call, follow
//! progress, cancel, answer an elicitation, read resources and prompts;
//! one `PASS`/`FAIL` line per check and `N passed, M failed` at the end
//! (exit status 1 on any failure). `.ci/run` points it at servers we did
//! not write: the official TypeScript v2 server, the reference
//! `server-everything` and a server on the official Python SDK.
//!
//! ```sh
//! cargo run --example client_smoke --features client -- --stdio "target/debug/examples/demo --stdio" --protocol auto
//! cargo run --example client_smoke --features client -- --url http://127.0.0.1:8080/mcp --protocol legacy
//! ```
//!
//! Flags (tool names and arguments differ between servers):
//! `--echo-tool echo --echo-arg text --echo-expect hi`, `--slow-tool slow
//! --slow-args '{"steps":3}' --cancel-args '{"steps":50}'`, `--confirm-tool
//! confirm` (empty: skip), `--protocol auto|legacy|2026-07-28`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mcp_core::client::{Client, ClientBuilder, ClientError, Handlers, Protocol, RequestOptions};
use mcp_core::{protocol::Content, CancelToken};
use serde_json::{json, Map, Value};

struct Report {
    passed: usize,
    failed: usize,
}

impl Report {
    fn check(&mut self, name: &str, outcome: Result<String, String>) {
        match outcome {
            Ok(detail) => {
                self.passed += 1;
                println!("PASS {name} {detail}");
            }
            Err(why) => {
                self.failed += 1;
                println!("FAIL {name}: {why}");
            }
        }
    }
}

fn flags() -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let Some(name) = flag.strip_prefix("--") else {
            return Err(format!("unexpected argument {flag:?}"));
        };
        let value = args
            .next()
            .ok_or_else(|| format!("--{name} needs a value"))?;
        out.insert(name.to_owned(), value);
    }
    Ok(out)
}

/// Accepts every elicitation, filling each requested field with its
/// default or a value of its type.
fn handlers() -> Handlers {
    Handlers::default().elicitation(|request| async move {
        let mut content = Map::new();
        if let Some(Value::Object(props)) = request
            .get("requestedSchema")
            .and_then(|s| s.get("properties"))
        {
            for (name, schema) in props {
                let value = schema.get("default").cloned().unwrap_or_else(|| {
                    match schema.get("type").and_then(Value::as_str) {
                        Some("boolean") => json!(true),
                        Some("integer" | "number") => json!(1),
                        _ => json!("yes"),
                    }
                });
                content.insert(name.clone(), value);
            }
        }
        Ok(json!({"action": "accept", "content": content}))
    })
}

fn text_of(content: &[Content]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            Content::Text { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn object(json: &str) -> Result<Value, String> {
    serde_json::from_str(json).map_err(|e| format!("{json:?} is not JSON: {e}"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let flags = match flags() {
        Ok(f) => f,
        Err(e) => {
            eprintln!("client_smoke: {e}");
            return ExitCode::from(2);
        }
    };
    let get = |k: &str, d: &str| flags.get(k).cloned().unwrap_or_else(|| d.to_owned());
    let protocol = match get("protocol", "auto").as_str() {
        "auto" => Protocol::Auto,
        "legacy" => Protocol::Legacy("2025-11-25".into()),
        other => Protocol::pinned(other),
    };
    let builder = ClientBuilder::new("mcp-core-client-smoke", env!("CARGO_PKG_VERSION"))
        .protocol(protocol)
        .handlers(handlers())
        .timeout(Some(Duration::from_secs(30)));
    let connected = if let Some(command) = flags.get("stdio") {
        let mut command_line = command.split_whitespace();
        let Some(program) = command_line.next() else {
            eprintln!("client_smoke: --stdio needs a command");
            return ExitCode::from(2);
        };
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(command_line);
        builder.connect_stdio(cmd).await
    } else if let Some(url) = flags.get("url") {
        builder.connect_http(url).await
    } else {
        eprintln!("client_smoke: give --stdio CMD or --url URL");
        return ExitCode::from(2);
    };
    let mut report = Report {
        passed: 0,
        failed: 0,
    };
    let client = match connected {
        Ok(c) => c,
        Err(e) => {
            report.check("connect", Err(e.to_string()));
            println!("{} passed, {} failed", report.passed, report.failed);
            return ExitCode::FAILURE;
        }
    };
    report.check("connect", Ok(format!("({})", client.protocol_version())));
    run(&client, &get, &mut report).await;
    client.close().await;
    println!("{} passed, {} failed", report.passed, report.failed);
    if report.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn run(client: &Client, get: &dyn Fn(&str, &str) -> String, report: &mut Report) {
    if !client.is_modern() {
        report.check(
            "ping",
            client
                .ping()
                .await
                .map(|()| String::new())
                .map_err(|e| e.to_string()),
        );
    }
    let tools = client.list_tools().await;
    report.check(
        "tools/list",
        tools
            .as_ref()
            .map(|t| format!("({} tools)", t.len()))
            .map_err(ToString::to_string),
    );

    let (echo, arg, expect) = (
        get("echo-tool", "echo"),
        get("echo-arg", "text"),
        get("echo-expect", "hi"),
    );
    let echoed = client
        .call_tool(&echo, json!({ arg.clone(): get("echo-text", "hi") }))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| {
            let text = text_of(&r.content);
            if text.contains(&expect) {
                Ok(format!("({text:?})"))
            } else {
                Err(format!("got {text:?}"))
            }
        });
    report.check("echo", echoed);

    let slow = get("slow-tool", "slow");
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let options = RequestOptions::new().progress(move |_| {
        counter.fetch_add(1, Ordering::Relaxed);
    });
    let progress = match object(&get("slow-args", r#"{"steps":3}"#)) {
        Ok(args) => client
            .call_tool_with(&slow, args, &options)
            .await
            .map_err(|e| e.to_string())
            .and_then(|_| match seen.load(Ordering::Relaxed) {
                0 => Err("no progress notification".to_owned()),
                n => Ok(format!("({n} notifications)")),
            }),
        Err(e) => Err(e),
    };
    report.check("progress", progress);

    let cancel = async {
        let args = object(&get("cancel-args", r#"{"steps":50}"#))?;
        let token = CancelToken::new();
        let trigger = token.clone();
        let options = RequestOptions::new()
            .cancel(token)
            .progress(move |_| trigger.cancel());
        match client.call_tool_with(&slow, args, &options).await {
            Err(ClientError::Cancelled) => {}
            other => return Err(format!("expected a cancellation, got {other:?}")),
        }
        // The connection still serves.
        client
            .call_tool(&echo, json!({ arg.clone(): "again" }))
            .await
            .map_err(|e| e.to_string())?;
        Ok("(then echo again)".to_owned())
    };
    report.check("cancel", cancel.await);

    let confirm = get("confirm-tool", "confirm");
    if !confirm.is_empty() {
        let outcome = client
            .call_tool(&confirm, json!({}))
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| {
                let text = text_of(&r.content);
                if r.is_error == Some(true) {
                    Err(format!("tool error {text:?}"))
                } else {
                    Ok(format!("({text:?})"))
                }
            });
        report.check("elicitation", outcome);
    }

    let caps = client.server_capabilities().cloned().unwrap_or(Value::Null);
    if caps.get("resources").is_some() {
        let outcome = async {
            let resources = client.list_resources().await.map_err(|e| e.to_string())?;
            let Some(first) = resources.first() else {
                return Ok("(none listed)".to_owned());
            };
            let contents = client
                .read_resource(&first.uri)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "({} listed, {} read: {} contents)",
                resources.len(),
                first.uri,
                contents.len()
            ))
        };
        report.check("resources", outcome.await);
    }
    if caps.get("prompts").is_some() {
        let outcome = async {
            let prompts = client.list_prompts().await.map_err(|e| e.to_string())?;
            let Some(first) = prompts.first() else {
                return Ok("(none listed)".to_owned());
            };
            let arguments = first
                .arguments
                .iter()
                .flatten()
                .filter(|a| a.required == Some(true))
                .map(|a| (a.name.clone(), "value".to_owned()));
            let got = client
                .get_prompt(&first.name, arguments)
                .await
                .map_err(|e| e.to_string())?;
            Ok(format!(
                "({} listed, {}: {} messages)",
                prompts.len(),
                first.name,
                got.messages.len()
            ))
        };
        report.check("prompts", outcome.await);
    }
}
