//! The optional server features and server→client input, in both eras:
//!
//! - logging: `logging/setLevel` filtering on a legacy session, the
//!   2026-07-28 `_meta` log level, silence without one, bad levels, and
//!   `-32601` when the server does not offer logging;
//! - completion: the result shape, the 100-value cap with `total` /
//!   `hasMore`, `-32601` when not offered, `-32602` for malformed params;
//! - resource subscriptions: legacy `resources/subscribe` /
//!   `resources/unsubscribe` with `McpServer::notify_resource_updated`, URIs
//!   below a subscribed one, and `resourceSubscriptions` on a 2026-07-28
//!   `subscriptions/listen` (acknowledged subset, tagged updates, delivery
//!   ends with the listen);
//! - `ctx.sample`, `ctx.list_roots` and `ctx.input` with several keys: real
//!   requests on a legacy session, one `input_required` round on 2026-07-28;
//! - capability checks: `ctx.require_capability` (`-32021` + data on
//!   2026-07-28, `-32603` legacy) and `ctx.input` for an undeclared capability.
//!
//! `TestClient` answers only `elicitation/create` and `ping` itself (anything
//! else gets `-32601`), so the legacy sampling / roots tests drive
//! `McpServer::handle_message` directly with a recording [`Outbound`] and
//! route the client's responses back through `handle_message`.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

include!("common/features_prelude.rs");

// ---------------------------------------------------------------------------
// Logging
// ---------------------------------------------------------------------------

/// Logs one message at each of `debug`, `info`, `warning` and `error`.
fn logging_tool() -> McpToolDef {
    tool("emit", |_args, ctx| async move {
        for level in [
            mcp_core::protocol::LoggingLevel::Debug,
            mcp_core::protocol::LoggingLevel::Info,
            mcp_core::protocol::LoggingLevel::Warning,
            mcp_core::protocol::LoggingLevel::Error,
        ] {
            ctx.log(level, Some("probe"), json!({"at": level.as_str()}))
                .await;
        }
        "logged".to_owned()
    })
}

fn logging_server() -> McpServer {
    McpServer::builder()
        .logging()
        .tool(logging_tool())
        .build()
        .expect("valid server")
}

/// The levels of the `notifications/message` among `messages`.
fn log_levels(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["level"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn set_level_filters_log_messages_on_a_legacy_session() {
    let client = TestClient::connect(logging_server())
        .await
        .expect("initialize");
    let init = client.initialize_result().expect("initialized");
    assert_eq!(init["capabilities"]["logging"], json!({}));

    // Before any setLevel every level is sent, with logger and data.
    let result = client.call_tool("emit", json!({})).await.expect("call");
    assert_eq!(result.text_content(), "logged");
    let notes = client.drain_notifications().await;
    assert_eq!(log_levels(&notes), ["debug", "info", "warning", "error"]);
    let first = notes
        .iter()
        .find(|n| n["method"] == "notifications/message")
        .expect("a log message");
    assert_eq!(
        first["params"],
        json!({"level": "debug", "logger": "probe", "data": {"at": "debug"}})
    );

    // setLevel answers {} and filters from then on.
    let set = client
        .request("logging/setLevel", json!({"level": "warning"}))
        .await
        .expect("setLevel");
    assert_eq!(set, json!({}));
    client.call_tool("emit", json!({})).await.expect("call");
    assert_eq!(
        log_levels(&client.drain_notifications().await),
        ["warning", "error"]
    );

    // The most severe threshold lets nothing of these through.
    client
        .request("logging/setLevel", json!({"level": "emergency"}))
        .await
        .expect("setLevel");
    client.call_tool("emit", json!({})).await.expect("call");
    assert!(log_levels(&client.drain_notifications().await).is_empty());

    // And it can be lowered again.
    client
        .request("logging/setLevel", json!({"level": "info"}))
        .await
        .expect("setLevel");
    client.call_tool("emit", json!({})).await.expect("call");
    assert_eq!(
        log_levels(&client.drain_notifications().await),
        ["info", "warning", "error"]
    );
}

#[tokio::test]
async fn set_level_is_per_session() {
    let server = logging_server();
    let quiet = Peer::legacy(&server, json!({})).await;
    let chatty = Peer::legacy(&server, json!({})).await;
    let set = quiet
        .ask(req(1, "logging/setLevel", json!({"level": "error"})))
        .await;
    assert_eq!(result(&set), &json!({}));

    quiet
        .ask(req(2, "tools/call", json!({"name": "emit"})))
        .await;
    assert_eq!(log_levels(&quiet.quiet_out().await), ["error"]);
    chatty
        .ask(req(2, "tools/call", json!({"name": "emit"})))
        .await;
    assert_eq!(
        log_levels(&chatty.quiet_out().await),
        ["debug", "info", "warning", "error"]
    );
}

#[tokio::test]
async fn modern_log_level_in_meta_filters_log_messages() {
    let server = logging_server();
    let peer = Peer::new(&server);
    for (level, expected) in [
        ("debug", vec!["debug", "info", "warning", "error"]),
        ("warning", vec!["warning", "error"]),
        ("error", vec!["error"]),
        ("critical", vec![]),
    ] {
        let mut params = modern(json!({"name": "emit"}), json!({}));
        params["_meta"][LOG_LEVEL] = json!(level);
        let reply = peer.ask(req(1, "tools/call", params)).await;
        assert_eq!(tool_text(result(&reply)), "logged");
        assert_eq!(log_levels(&peer.quiet_out().await), expected, "{level}");
    }
}

#[tokio::test]
async fn modern_request_without_log_level_gets_no_log_messages() {
    let server = logging_server();
    let peer = Peer::new(&server);
    // Even after a legacy setLevel on the same connection: the modern
    // request's own `_meta` decides.
    let legacy = Peer::legacy(&server, json!({})).await;
    legacy
        .ask(req(1, "logging/setLevel", json!({"level": "debug"})))
        .await;
    for p in [&peer, &legacy] {
        let reply = p
            .ask(req(
                2,
                "tools/call",
                modern(json!({"name": "emit"}), json!({})),
            ))
            .await;
        assert_eq!(tool_text(result(&reply)), "logged");
        assert!(log_levels(&p.quiet_out().await).is_empty());
    }
}

#[tokio::test]
async fn bad_log_levels_are_invalid_params() {
    let server = logging_server();
    let peer = Peer::legacy(&server, json!({})).await;
    for params in [
        json!({"level": "verbose"}),
        json!({"level": "INFO"}),
        json!({"level": 3}),
        json!({}),
    ] {
        let reply = peer.ask(req(1, "logging/setLevel", params.clone())).await;
        assert_eq!(error(&reply).0, -32602, "{params}: {reply}");
    }
    // A rejected level changes nothing: everything still gets through.
    peer.ask(req(2, "tools/call", json!({"name": "emit"})))
        .await;
    assert_eq!(log_levels(&peer.quiet_out().await).len(), 4);

    let mut params = modern(json!({"name": "emit"}), json!({}));
    params["_meta"][LOG_LEVEL] = json!("verbose");
    let reply = Peer::new(&server).ask(req(3, "tools/call", params)).await;
    assert_eq!(error(&reply).0, -32602, "{reply}");
}

#[tokio::test]
async fn without_logging_set_level_is_method_not_found_and_log_is_silent() {
    let server = McpServer::builder()
        .tool(logging_tool())
        .build()
        .expect("valid server");
    assert!(server.capabilities().get("logging").is_none());
    let peer = Peer::legacy(&server, json!({})).await;
    let reply = peer
        .ask(req(1, "logging/setLevel", json!({"level": "info"})))
        .await;
    assert_eq!(error(&reply).0, -32601, "{reply}");

    peer.ask(req(2, "tools/call", json!({"name": "emit"})))
        .await;
    assert!(log_levels(&peer.quiet_out().await).is_empty());

    let mut params = modern(json!({"name": "emit"}), json!({}));
    params["_meta"][LOG_LEVEL] = json!("debug");
    peer.ask(req(3, "tools/call", params)).await;
    assert!(log_levels(&peer.quiet_out().await).is_empty());
}

// ---------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------

/// A server whose completer records each request and answers `count`
/// values (`v0`, `v1`, …) prefixed with what was typed.
fn completion_server(
    count: usize,
    seen: Arc<std::sync::Mutex<Vec<CompletionRequest>>>,
) -> McpServer {
    McpServer::builder()
        .completion(move |req: CompletionRequest, _ctx| {
            let seen = Arc::clone(&seen);
            async move {
                let values = (0..count).map(|i| format!("{}v{i}", req.value)).collect();
                seen.lock().expect("lock").push(req);
                Ok(values)
            }
        })
        .build()
        .expect("valid server")
}

fn complete_params(reference: Value, argument: Value) -> Value {
    json!({"ref": reference, "argument": argument})
}

#[tokio::test]
async fn completion_result_shape_and_request_fields() {
    let seen = Arc::default();
    let server = completion_server(3, Arc::clone(&seen));
    assert_eq!(server.capabilities()["completions"], json!({}));
    let peer = Peer::legacy(&server, json!({})).await;

    let mut params = complete_params(
        json!({"type": "ref/prompt", "name": "greet"}),
        json!({"name": "language", "value": "en"}),
    );
    params["context"] = json!({"arguments": {"style": "formal"}});
    let reply = peer.ask(req(1, "completion/complete", params)).await;
    assert_eq!(
        result(&reply),
        &json!({"completion": {"values": ["env0", "env1", "env2"], "total": 3, "hasMore": false}})
    );

    let reply = peer
        .ask(req(
            2,
            "completion/complete",
            complete_params(
                json!({"type": "ref/resource", "uri": "file:///{path}"}),
                json!({"name": "path"}),
            ),
        ))
        .await;
    assert_eq!(result(&reply)["completion"]["values"][0], "v0");

    let seen = seen.lock().expect("lock").clone();
    assert_eq!(
        seen,
        [
            CompletionRequest {
                ref_type: "ref/prompt".into(),
                ref_name: "greet".into(),
                argument: "language".into(),
                value: "en".into(),
                context: json!({"style": "formal"})
                    .as_object()
                    .cloned()
                    .expect("object"),
            },
            CompletionRequest {
                ref_type: "ref/resource".into(),
                ref_name: "file:///{path}".into(),
                argument: "path".into(),
                value: String::new(),
                context: Map::new(),
            },
        ]
    );

    // On a 2026-07-28 request the same result, decorated.
    let reply = peer
        .ask(req(
            3,
            "completion/complete",
            modern(
                complete_params(
                    json!({"type": "ref/prompt", "name": "greet"}),
                    json!({"name": "language", "value": "e"}),
                ),
                json!({}),
            ),
        ))
        .await;
    let r = result(&reply);
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["completion"]["values"], json!(["ev0", "ev1", "ev2"]));
}

#[tokio::test]
async fn completion_sends_at_most_100_values_with_total_and_has_more() {
    for (count, sent, has_more) in [
        (0, 0, false),
        (100, 100, false),
        (101, 100, true),
        (250, 100, true),
    ] {
        let server = completion_server(count, Arc::default());
        let peer = Peer::legacy(&server, json!({})).await;
        let reply = peer
            .ask(req(
                1,
                "completion/complete",
                complete_params(
                    json!({"type": "ref/prompt", "name": "p"}),
                    json!({"name": "a", "value": ""}),
                ),
            ))
            .await;
        let completion = &result(&reply)["completion"];
        let values = completion["values"].as_array().expect("values");
        assert_eq!(values.len(), sent, "{count}");
        assert_eq!(values.first().cloned(), (count > 0).then(|| json!("v0")));
        assert_eq!(completion["total"], count, "{count}");
        assert_eq!(completion["hasMore"], has_more, "{count}");
    }
}

#[tokio::test]
async fn without_completion_complete_is_method_not_found() {
    let server = McpServer::builder().build().expect("valid server");
    assert!(server.capabilities().get("completions").is_none());
    let peer = Peer::legacy(&server, json!({})).await;
    let params = complete_params(
        json!({"type": "ref/prompt", "name": "p"}),
        json!({"name": "a", "value": ""}),
    );
    let reply = peer
        .ask(req(1, "completion/complete", params.clone()))
        .await;
    assert_eq!(error(&reply).0, -32601, "{reply}");
    let reply = peer
        .ask(req(2, "completion/complete", modern(params, json!({}))))
        .await;
    assert_eq!(error(&reply).0, -32601, "{reply}");
}

#[tokio::test]
async fn malformed_completion_params_are_invalid_params() {
    let seen: Arc<std::sync::Mutex<Vec<CompletionRequest>>> = Arc::default();
    let server = completion_server(1, Arc::clone(&seen));
    let peer = Peer::legacy(&server, json!({})).await;
    let argument = json!({"name": "a", "value": "x"});
    for params in [
        json!({}),
        json!({"argument": argument}),
        json!({"ref": "greet", "argument": argument}),
        json!({"ref": {"name": "greet"}, "argument": argument}),
        json!({"ref": {"type": "ref/tool", "name": "greet"}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt"}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt", "uri": "x://y"}, "argument": argument}),
        json!({"ref": {"type": "ref/resource", "name": "greet"}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt", "name": 7}, "argument": argument}),
        json!({"ref": {"type": "ref/prompt", "name": "greet"}}),
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": "a"}),
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"value": "x"}}),
    ] {
        let reply = peer
            .ask(req(1, "completion/complete", params.clone()))
            .await;
        assert_eq!(error(&reply).0, -32602, "{params}: {reply}");
    }
    assert!(seen.lock().expect("lock").is_empty(), "completer ran");
}

#[tokio::test]
async fn completer_errors_are_the_response() {
    let server = McpServer::builder()
        .completion(|req: CompletionRequest, _ctx| async move {
            Err(ErrorObject::invalid_params(format!(
                "no such prompt: {}",
                req.ref_name
            )))
        })
        .build()
        .expect("valid server");
    let peer = Peer::legacy(&server, json!({})).await;
    let reply = peer
        .ask(req(
            1,
            "completion/complete",
            complete_params(
                json!({"type": "ref/prompt", "name": "nope"}),
                json!({"name": "a", "value": ""}),
            ),
        ))
        .await;
    assert_eq!(
        error(&reply),
        (-32602, "no such prompt: nope".to_owned(), Value::Null)
    );
}

/// `InvokeContext::fail` is documented to stop "this call" with the error;
/// in a completion handler nothing waits for the interruption, so the
/// request never gets an answer (framework bug, see the report).
#[tokio::test]
async fn completer_that_calls_fail_is_answered_with_the_error() {
    let server = McpServer::builder()
        .completion(|_req: CompletionRequest, ctx: InvokeContext| async move {
            ctx.fail(ErrorObject::invalid_params("not completable"))
                .await;
            Ok(vec!["unreachable".to_owned()])
        })
        .build()
        .expect("valid server");
    let peer = Peer::legacy(&server, json!({})).await;
    let message = req(
        1,
        "completion/complete",
        complete_params(
            json!({"type": "ref/prompt", "name": "p"}),
            json!({"name": "a", "value": ""}),
        ),
    );
    let reply = tokio::time::timeout(
        Duration::from_secs(3),
        server.handle_message(message, &peer.ctx),
    )
    .await
    .expect("completion/complete hung after ctx.fail (no reply within 3 s)")
    .expect("a reply");
    assert_eq!(error(&reply).0, -32602, "{reply}");
}

// ---------------------------------------------------------------------------
// require_capability and fail
// ---------------------------------------------------------------------------

#[tokio::test]
async fn require_capability_stops_a_modern_call_with_32021_and_data() {
    let runs = Arc::new(Runs::default());
    let server = input_server(&runs);
    let peer = Peer::new(&server);
    let reply = peer
        .ask(mcall(
            1,
            "needs_sampling",
            json!({}),
            json!({"elicitation": {}}),
        ))
        .await;
    let (code, _, data) = error(&reply);
    assert_eq!(code, -32021, "{reply}");
    assert_eq!(data, json!({"requiredCapabilities": {"sampling": {}}}));
    assert_eq!(runs.started.load(Ordering::SeqCst), 1);
    assert_eq!(
        runs.finished.load(Ordering::SeqCst),
        0,
        "ran past the check"
    );

    let reply = peer
        .ask(mcall(
            2,
            "needs_sampling",
            json!({}),
            json!({"sampling": {}}),
        ))
        .await;
    assert_eq!(tool_text(result(&reply)), "had sampling");
    assert_eq!(runs.finished.load(Ordering::SeqCst), 1);

    // Elicitation modes: form-only does not cover URL mode.
    let reply = peer
        .ask(mcall(
            3,
            "needs_url_elicitation",
            json!({}),
            json!({"elicitation": {}}),
        ))
        .await;
    let (code, _, data) = error(&reply);
    assert_eq!(code, -32021, "{reply}");
    assert_eq!(
        data,
        json!({"requiredCapabilities": {"elicitation": {"url": {}}}})
    );
    let reply = peer
        .ask(mcall(
            4,
            "needs_url_elicitation",
            json!({}),
            json!({"elicitation": {"url": {}}}),
        ))
        .await;
    assert_eq!(tool_text(result(&reply)), "had url elicitation");
}

#[tokio::test]
async fn require_capability_stops_a_legacy_call_with_32603() {
    let runs = Arc::new(Runs::default());
    let server = input_server(&runs);
    let without = Peer::legacy(&server, json!({"elicitation": {}})).await;
    let reply = without.ask(call(1, "needs_sampling", json!({}))).await;
    assert_eq!(error(&reply).0, -32603, "{reply}");
    assert_eq!(
        runs.finished.load(Ordering::SeqCst),
        0,
        "ran past the check"
    );

    let with = Peer::legacy(&server, json!({"sampling": {}})).await;
    let reply = with.ask(call(1, "needs_sampling", json!({}))).await;
    assert_eq!(tool_text(result(&reply)), "had sampling");
    assert_eq!(runs.finished.load(Ordering::SeqCst), 1);

    // A session that never initialized declared nothing.
    let fresh = Peer::new(&server);
    let reply = fresh.ask(call(1, "needs_sampling", json!({}))).await;
    assert_eq!(error(&reply).0, -32603, "{reply}");
}

#[tokio::test]
async fn fail_answers_the_call_with_the_given_error_in_both_eras() {
    let server = input_server(&Arc::default());
    let expected = (-32050, "custom failure".to_owned(), json!({"why": "test"}));
    let legacy = Peer::legacy(&server, json!({})).await;
    assert_eq!(
        error(&legacy.ask(call(1, "fail", json!({}))).await),
        expected
    );
    let modern = Peer::new(&server);
    assert_eq!(
        error(&modern.ask(mcall(1, "fail", json!({}), json!({}))).await),
        expected
    );
}
