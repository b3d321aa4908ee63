//! The stateless 2026-07-28 revision: write-once tools that work for both
//! eras (the rule is described in `stateless.rs`), and progress over stdio.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/stateless_prelude.rs");

// ---------------------------------------------------------------------------
// 4. Write-once tools across eras
// ---------------------------------------------------------------------------

#[tokio::test]
async fn write_once_tool_serves_a_legacy_and_a_modern_client_on_one_stream() {
    let (server, runs) = server_with_runs();
    let pushed: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&pushed);
    let options = ClientOptions::default().elicit(move |params: &Value| {
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(params.clone());
        Ok(json!({"action": "accept", "content": {"branch": "main"}}))
    });
    let mut client = TestClient::start(server, StdioOptions::default(), options);
    guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize");

    // Legacy: elicitation/create is pushed over the stream and answered by
    // the client's handler; the body runs once.
    let r = guard(
        "legacy deploy",
        client.request(
            "tools/call",
            json!({"name": "deploy", "arguments": {"env": "prod"}}),
        ),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(tool_text(&r), "deployed prod from main");
    assert_eq!(
        runs.deploy.load(Ordering::SeqCst),
        1,
        "legacy runs the prefix once"
    );
    {
        let pushed = pushed.lock().unwrap_or_else(PoisonError::into_inner);
        assert_eq!(pushed.len(), 1);
        assert_eq!(pushed[0]["message"], "Which branch?");
        assert_eq!(pushed[0]["requestedSchema"], branch_schema());
    }

    // Modern on the same stream: no request is pushed; input_required, then
    // the retry. The body runs twice.
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let r = guard(
        "modern round 1",
        client.request("tools/call", first.clone()),
    )
    .await
    .expect("modern round 1");
    let (requests, state) = input_required(&r);
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
    let r = guard(
        "modern round 2",
        client.request(
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state,
            ),
        ),
    )
    .await
    .expect("modern round 2");
    assert_complete(&r);
    assert_eq!(tool_text(&r), "deployed prod from main");
    assert_eq!(
        runs.deploy.load(Ordering::SeqCst),
        3,
        "modern runs the prefix twice (1 legacy + 2 modern)"
    );
    assert_eq!(
        pushed.lock().unwrap_or_else(PoisonError::into_inner).len(),
        1,
        "a modern request never pushes elicitation/create"
    );
}

#[tokio::test]
async fn write_once_rule_prefix_runs_once_per_round() {
    // A fresh count per era, each on its own connection.
    let (server, runs) = server_with_runs();
    let options = ClientOptions::default()
        .elicit(|_| Ok(json!({"action": "accept", "content": {"branch": "main"}})));
    let client = TestClient::connect_with(server, StdioOptions::default(), options)
        .await
        .expect("connect");
    let r = guard("legacy", client.call_tool("two_step", json!({})))
        .await
        .expect("legacy call");
    // This handler answers the confirm form with {branch} only: not confirmed.
    assert_eq!(r.text_content(), "branch=main confirmed=false");
    assert_eq!(
        runs.two_step.load(Ordering::SeqCst),
        1,
        "legacy: once for two questions"
    );

    let (server, runs) = server_with_runs();
    let client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
    let first = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let r = guard("round 1", client.request("tools/call", first.clone()))
        .await
        .expect("round 1");
    let (_, s1) = input_required(&r);
    let r = guard(
        "round 2",
        client.request("tools/call", retry(&first, branch_answer(), &s1)),
    )
    .await
    .expect("round 2");
    let (_, s2) = input_required(&r);
    let r = guard(
        "round 3",
        client.request(
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &s2,
            ),
        ),
    )
    .await
    .expect("round 3");
    assert_eq!(tool_text(&r), "branch=main confirmed=true");
    assert_eq!(
        runs.two_step.load(Ordering::SeqCst),
        3,
        "modern: once per round for two questions"
    );
}

#[tokio::test]
async fn modern_request_without_elicitation_capability() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    // ctx.elicitation() is None, also for a URL-only elicitation capability.
    for caps in [
        no_caps(),
        json!({"elicitation": {"url": {}}}),
        json!({"sampling": {}}),
    ] {
        let reply = ask(
            &server,
            &ctx,
            mreq(1, "tools/call", json!({"name": "probe"}), caps.clone()),
        )
        .await;
        let probe = probe_of(result(&reply));
        assert_eq!(probe["elicitation"], false, "caps {caps}");
        assert_eq!(probe["capabilities"], caps);

        // require_elicitation: -32021 naming the capability.
        let reply = ask(
            &server,
            &ctx,
            mreq(
                2,
                "tools/call",
                json!({"name": "deploy", "arguments": {"env": "prod"}}),
                caps.clone(),
            ),
        )
        .await;
        assert_eq!(reply["id"], 2);
        assert_eq!(
            *error_obj(&reply),
            json!({
                "code": -32021,
                "message": "Missing required client capability",
                "data": {"requiredCapabilities": {"elicitation": {}}},
            }),
            "caps {caps}"
        );

        // confirm fails closed: no question, a complete "kept".
        let reply = ask(
            &server,
            &ctx,
            mreq(3, "tools/call", json!({"name": "delete"}), caps.clone()),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        assert_eq!(tool_text(r), "kept");
    }
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 3);

    // The same for prompts/get.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            4,
            "prompts/get",
            json!({"name": "brief", "arguments": {"audience": "ops"}}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32021);
    assert_eq!(
        error_obj(&reply)["data"],
        json!({"requiredCapabilities": {"elicitation": {}}})
    );

    // With {"elicitation": {"form": {}}} the handle is there.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            5,
            "tools/call",
            json!({"name": "probe"}),
            json!({"elicitation": {"form": {}}}),
        ),
    )
    .await;
    assert_eq!(probe_of(result(&reply))["elicitation"], true);
}

#[tokio::test]
async fn legacy_require_elicitation_without_capability_is_internal_error() {
    let server = server();
    let client = TestClient::connect_with(
        server,
        StdioOptions::default(),
        ClientOptions::default().without_elicitation(),
    )
    .await
    .expect("connect");
    let err = guard("deploy", client.call_tool("deploy", json!({"env": "prod"})))
        .await
        .expect_err("no elicitation");
    assert_eq!(err.code, -32603);
}

#[tokio::test]
async fn mrtr_prompts_get_input_required_and_retry() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "brief", "arguments": {"audience": "ops"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "prompts/get", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    let topic_schema = Value::Object(mcp_core::handler::schema_for::<Topic>());
    assert_eq!(topic_schema["properties"]["topic"]["type"], "string");
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which topic?", topic_schema)})
    );
    let answer = json!({"elicit-0": accept(json!({"topic": "billing"}))});
    let reply = ask(
        &server,
        &ctx,
        req(2, "prompts/get", retry(&first, answer.clone(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_no_cache_hint(r);
    assert_eq!(
        r["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Brief ops on billing"}}])
    );
    // Bound to the prompt arguments.
    let other = modern(
        json!({"name": "brief", "arguments": {"audience": "dev"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(3, "prompts/get", retry(&other, answer, &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");
}

#[tokio::test]
async fn mrtr_resources_read_input_required_and_retry() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"uri": "demo://guarded"}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "resources/read", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Reveal the secret?", confirm_schema())})
    );
    let answer = json!({"elicit-0": accept(json!({"confirm": true}))});
    let reply = ask(
        &server,
        &ctx,
        req(2, "resources/read", retry(&first, answer.clone(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(
        r["contents"],
        json!([{"uri": "demo://guarded", "text": "s3cret"}])
    );
    // A final resources/read result carries its (required) cache hint.
    assert_eq!(cache_hint(r), (0, "private".to_owned()));

    // Bound to the URI: replayed on another resource, rejected.
    let other = modern(json!({"uri": "demo://plain"}), elicit_caps());
    let reply = ask(
        &server,
        &ctx,
        req(3, "resources/read", retry(&other, answer, &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // Without the capability: fails closed, complete.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            4,
            "resources/read",
            json!({"uri": "demo://guarded"}),
            no_caps(),
        ),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(r["contents"][0]["text"], "withheld");
}

// ---------------------------------------------------------------------------
// Progress over stdio
// ---------------------------------------------------------------------------

#[tokio::test]
async fn modern_progress_over_stdio_carries_the_token() {
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    for token in [json!("tok-7"), json!(42)] {
        let mut params = modern(json!({"name": "progress"}), no_caps());
        params["_meta"]["progressToken"] = token.clone();
        let r = guard("progress call", client.request("tools/call", params))
            .await
            .expect("call");
        assert_complete(&r);
        assert_eq!(tool_text(&r), "done");
        let progress: Vec<Value> = client
            .drain_notifications()
            .await
            .into_iter()
            .filter(|n| n["method"] == "notifications/progress")
            .map(|n| n["params"].clone())
            .collect();
        assert_eq!(
            progress,
            [
                json!({"progressToken": token, "progress": 1.0, "total": 2.0, "message": "half"}),
                json!({"progressToken": token, "progress": 2.0, "total": 2.0}),
            ],
            "token {token}"
        );
    }
    // Without a token: no progress notifications.
    let r = guard(
        "no token",
        client.request("tools/call", modern(json!({"name": "progress"}), no_caps())),
    )
    .await
    .expect("call");
    assert_eq!(tool_text(&r), "done");
    assert!(client
        .drain_notifications()
        .await
        .iter()
        .all(|n| n["method"] != "notifications/progress"));
}
