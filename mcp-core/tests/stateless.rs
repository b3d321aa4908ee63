//! The stateless 2026-07-28 revision served beside the legacy eras:
//! per-request era on one connection, the 2026-07-28 surface
//! (`server/discover`, `_meta` validation, removed methods, `resultType`,
//! caching hints, `subscriptions/listen`), multi round-trip requests
//! (`input_required` + sealed `requestState`) and write-once tools that work
//! for both eras.
//!
//! # The write-once rule
//!
//! A tool body that asks the user something (`ctx.elicitation()…form`,
//! `ctx.confirm`, `ctx.require_elicitation()`) is written once and works for
//! both eras, with one difference users must design for:
//!
//! - legacy client: the question is pushed as an `elicitation/create` request
//!   and the body continues where it stopped; it runs **once**;
//! - 2026-07-28 client: the body is stopped at the question (the client gets
//!   `input_required`) and runs **again from the start** on the retry, with
//!   the earlier answers replayed from `requestState`.
//!
//! So work done before an elicitation may run more than once: keep it
//! idempotent (or do side effects after the last question), and ask the same
//! questions in the same order every time. `write_once_tool_*` tests count
//! executions to pin this down.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/stateless_prelude.rs");

// ---------------------------------------------------------------------------
// 1. Per-request era on one connection
// ---------------------------------------------------------------------------

#[tokio::test]
async fn per_request_era_legacy_and_modern_interleaved_on_one_stream() {
    let mut client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    // Legacy handshake announcing elicitation.
    let init = guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize");
    assert_eq!(init["protocolVersion"], "2025-11-25");
    assert_legacy_shape(&init);

    let legacy_probe = json!({
        "stateless": false,
        "version": "2025-11-25",
        "elicitation": true,
        "capabilities": {"elicitation": {}},
        "client": "mcp-core-test-client",
    });

    // Legacy call: the session's rules.
    let r = guard(
        "legacy probe",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(probe_of(&r), legacy_probe);

    // Modern call on the same stream: its own _meta, not the session.
    let r = guard(
        "modern probe",
        client.request("tools/call", modern(json!({"name": "probe"}), no_caps())),
    )
    .await
    .expect("modern call");
    assert_complete(&r);
    assert_eq!(
        probe_of(&r),
        json!({
            "stateless": true,
            "version": MODERN,
            "elicitation": false,
            "capabilities": {},
            "client": "modern-client",
        })
    );

    // A modern request that needs elicitation does not borrow the session's
    // capability: -32021, and nothing is pushed to the client.
    let err = guard(
        "modern deploy without caps",
        client.request(
            "tools/call",
            modern(
                json!({"name": "deploy", "arguments": {"env": "prod"}}),
                no_caps(),
            ),
        ),
    )
    .await
    .expect_err("missing capability");
    assert_eq!(err.code, -32021);
    assert_eq!(
        err.data,
        Some(json!({"requiredCapabilities": {"elicitation": {}}}))
    );

    // Modern with the capability declared in its own _meta.
    let r = guard(
        "modern probe with caps",
        client.request(
            "tools/call",
            modern(json!({"name": "probe"}), elicit_caps()),
        ),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["elicitation"], true);
    assert_eq!(probe_of(&r)["capabilities"], elicit_caps());

    // ...and not inferred by the next modern request.
    let r = guard(
        "modern probe again",
        client.request("tools/call", modern(json!({"name": "probe"}), no_caps())),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["elicitation"], false);

    // Legacy again: the session is untouched by the modern requests.
    let r = guard(
        "legacy probe again",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(probe_of(&r), legacy_probe);

    // Lists too: each by its own rules.
    let legacy_list = guard("legacy list", client.request("tools/list", json!({})))
        .await
        .expect("legacy list");
    assert_legacy_shape(&legacy_list);
    let modern_list = guard(
        "modern list",
        client.request("tools/list", modern(json!({}), no_caps())),
    )
    .await
    .expect("modern list");
    assert_complete(&modern_list);
    assert_eq!(legacy_list["tools"], modern_list["tools"]);

    // A server/discover without the modern _meta, even after initialize, is
    // refused as missing its required _meta (-32602), as the conformance
    // suite expects.
    let err = guard(
        "legacy discover",
        client.request("server/discover", json!({})),
    )
    .await
    .expect_err("legacy discover");
    assert_eq!(err.code, -32602);
}

#[tokio::test]
async fn modern_requests_do_not_set_up_a_legacy_session() {
    // A connection whose first requests are modern (one declaring
    // elicitation): a later legacy request without initialize sees no client.
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    let r = guard(
        "modern probe",
        client.request(
            "tools/call",
            modern(json!({"name": "probe"}), elicit_caps()),
        ),
    )
    .await
    .expect("modern call");
    assert_eq!(probe_of(&r)["version"], MODERN);
    let r = guard(
        "modern initialize",
        client.request(
            "initialize",
            modern(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "x", "version": "1"}}),
                elicit_caps(),
            ),
        ),
    )
    .await
    .expect_err("removed method");
    assert_eq!(r.code, -32601);
    let r = guard(
        "legacy probe",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("legacy call");
    assert_legacy_shape(&r);
    assert_eq!(
        probe_of(&r),
        json!({
            "stateless": false,
            "version": null,
            "elicitation": false,
            "capabilities": null,
            "client": null,
        })
    );
}

#[tokio::test]
async fn initialize_asking_for_2026_07_28_negotiates_the_newest_legacy_version() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::transport::Session::new());
    let reply = ask(
        &server,
        &ctx,
        req(
            1,
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    )
    .await;
    let init = result(&reply);
    assert_eq!(
        *init,
        json!({
            "protocolVersion": "2025-11-25",
            "capabilities": server.capabilities(),
            "serverInfo": server_info_json(),
            "instructions": "Use the tools.",
        })
    );
    // The session that follows is legacy, under 2025-11-25.
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", json!({"name": "probe"})),
    )
    .await;
    let probe = probe_of(result(&reply));
    assert_eq!(probe["version"], "2025-11-25");
    assert_eq!(probe["stateless"], false);

    // The same over a stream with the test client.
    let mut client = TestClient::start(server, StdioOptions::default(), ClientOptions::default());
    let init = guard("initialize", client.initialize(MODERN))
        .await
        .expect("initialize");
    assert_eq!(init["protocolVersion"], "2025-11-25");
}

#[tokio::test]
async fn bare_server_discover_probe_is_invalid_params_and_the_stream_keeps_working() {
    let mut client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    // The dual-era client's stdio probe, without the modern _meta (as a
    // legacy-only client library would send it): with params, and without.
    let err = guard("probe", client.request("server/discover", json!({})))
        .await
        .expect_err("legacy discover");
    assert_eq!(err.code, -32602);
    assert_eq!(
        err.message,
        "server/discover requires `_meta[\"io.modelcontextprotocol/protocolVersion\"]`"
    );
    let bare = guard(
        "bare probe",
        client.start_request_with_id(RequestId::from("probe-2"), "server/discover", Value::Null),
    )
    .await;
    let reply = guard("bare probe reply", bare.response(HANG_GUARD))
        .await
        .expect("a reply to the bare probe");
    assert_eq!(reply["id"], "probe-2");
    assert_eq!(error(&reply).0, -32602);

    // The server did not exit: the fallback handshake and calls work.
    let init = guard("initialize", client.initialize(LATEST_PROTOCOL_VERSION))
        .await
        .expect("initialize after the probe");
    assert_eq!(init["protocolVersion"], "2025-11-25");
    let r = guard(
        "call",
        client.request("tools/call", json!({"name": "probe"})),
    )
    .await
    .expect("call after the probe");
    assert_eq!(probe_of(&r)["version"], "2025-11-25");
    // And a modern discover on the same stream works too.
    let d = guard(
        "modern discover",
        client.request("server/discover", modern(json!({}), no_caps())),
    )
    .await
    .expect("modern discover");
    assert_eq!(d["supportedVersions"], json!([MODERN]));
    guard("close", client.close()).await.expect("clean stop");
}

// ---------------------------------------------------------------------------
// 2. The 2026-07-28 surface
// ---------------------------------------------------------------------------

#[tokio::test]
async fn server_discover_modern_reports_versions_capabilities_instructions_and_cache_hint() {
    let server = server();
    let reply = ask(
        &server,
        &CallContext::default(),
        mreq(1, "server/discover", json!({}), no_caps()),
    )
    .await;
    assert_eq!(reply["id"], 1);
    let d = result(&reply);
    assert_eq!(
        *d,
        json!({
            "resultType": "complete",
            "supportedVersions": [MODERN],
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"subscribe": false, "listChanged": false},
                "prompts": {"listChanged": false},
            },
            "instructions": "Use the tools.",
            "ttlMs": 3_600_000,
            "cacheScope": "public",
            "_meta": {SERVER_INFO: server_info_json()},
        })
    );
    assert!(d.get("serverInfo").is_none(), "server info only in _meta");

    // Without instructions, no instructions member; discover_cache overrides.
    let bare = McpServer::builder()
        .server_info("bare", "0.0.1")
        .discover_cache(5, CacheScope::Private)
        .build()
        .expect("server builds");
    let reply = ask(
        &bare,
        &CallContext::default(),
        mreq("d", "server/discover", json!({}), no_caps()),
    )
    .await;
    let d = result(&reply);
    assert!(d.get("instructions").is_none(), "{d}");
    assert_eq!(cache_hint(d), (5, "private".to_owned()));
    assert_eq!(d["capabilities"], json!({"tools": {"listChanged": false}}));
    assert_eq!(
        d["_meta"][SERVER_INFO],
        json!({"name": "bare", "version": "0.0.1"})
    );
    assert_eq!(d["resultType"], "complete");
}

#[tokio::test]
async fn missing_or_malformed_client_capabilities_is_invalid_params() {
    let server = server();
    let ctx = CallContext::default();
    for method in ["server/discover", "tools/list", "tools/call"] {
        let params = json!({"name": "probe", "_meta": {PV: MODERN}});
        let reply = ask(&server, &ctx, req(1, method, params)).await;
        assert_eq!(reply["id"], 1);
        assert_eq!(
            error(&reply),
            (-32602, format!("missing required `_meta[\"{CAPS}\"]`")),
            "{method}"
        );
    }
    for bad in [json!("all"), json!(["elicitation"]), json!(null), json!(1)] {
        let params = json!({"_meta": {PV: MODERN, CAPS: bad}});
        let reply = ask(&server, &ctx, req(2, "tools/list", params)).await;
        assert_eq!(
            error(&reply),
            (-32602, format!("`_meta[\"{CAPS}\"]` must be an object")),
            "caps {bad}"
        );
    }
}

/// `clientCapabilities` is an object, but a member has the wrong type: the
/// schema types `elicitation` (like `sampling` and `roots`) as an object, so
/// the required key is malformed and the spec asks for `-32602`.
#[tokio::test]
async fn malformed_member_of_client_capabilities_is_invalid_params() {
    let server = server();
    let ctx = CallContext::default();
    for bad in [
        json!({"elicitation": 5}),
        json!({"elicitation": "form"}),
        json!({"sampling": true}),
        json!({"roots": []}),
    ] {
        let params = json!({"_meta": {PV: MODERN, CAPS: bad}});
        let reply = ask(&server, &ctx, req(3, "tools/list", params)).await;
        assert_eq!(error(&reply).0, -32602, "caps {bad}: {reply}");
    }
}

#[tokio::test]
async fn non_string_protocol_version_is_invalid_params() {
    let server = server();
    for bad in [
        json!(20_260_728),
        json!(true),
        json!({"v": MODERN}),
        json!([MODERN]),
    ] {
        let params = json!({"_meta": {PV: bad, CAPS: {}}});
        let reply = ask(
            &server,
            &CallContext::default(),
            req(1, "server/discover", params),
        )
        .await;
        assert_eq!(
            error(&reply),
            (-32602, format!("`_meta[\"{PV}\"]` must be a string")),
            "version {bad}"
        );
    }
}

#[tokio::test]
async fn unsupported_protocol_version_is_32022_with_supported_and_requested() {
    let server = server();
    let params = json!({"_meta": {PV: "2099-01-01", CAPS: {}}});
    let reply = ask(
        &server,
        &CallContext::default(),
        req(9, "server/discover", params),
    )
    .await;
    assert_eq!(reply["id"], 9);
    let err = error_obj(&reply);
    assert_eq!(err["code"], -32022);
    assert_eq!(err["message"], "Unsupported protocol version: 2099-01-01");
    // The same list server/discover advertises (a _meta claim can only name
    // a stateless revision).
    let supported = vec![MODERN];
    assert_eq!(
        err["data"],
        json!({"supported": supported, "requested": "2099-01-01"})
    );
    // Checked before the method: a tools/call for an unknown tool too.
    let params = json!({"name": "nope", "_meta": {PV: "2026-01-01", CAPS: {}}});
    let reply = ask(
        &server,
        &CallContext::default(),
        req(10, "tools/call", params),
    )
    .await;
    assert_eq!(error(&reply).0, -32022);
    assert_eq!(error_obj(&reply)["data"]["requested"], "2026-01-01");
}

#[tokio::test]
async fn bad_log_level_is_invalid_params_and_a_good_one_is_accepted() {
    let server = server();
    let ctx = CallContext::default();
    for bad in [json!("verbose"), json!("DEBUG"), json!(3), json!(null)] {
        let mut params = modern(json!({}), no_caps());
        params["_meta"][LOG_LEVEL] = bad.clone();
        let reply = ask(&server, &ctx, req(1, "tools/list", params)).await;
        assert_eq!(
            error(&reply),
            (
                -32602,
                format!(
                    "invalid log level {bad}; expected one of debug, info, notice, warning, \
                     error, critical, alert, emergency"
                )
            ),
            "level {bad}"
        );
    }
    for good in ["debug", "warning", "emergency"] {
        let mut params = modern(json!({}), no_caps());
        params["_meta"][LOG_LEVEL] = json!(good);
        let reply = ask(&server, &ctx, req(2, "tools/list", params)).await;
        assert_complete(result(&reply));
    }
}

#[tokio::test]
async fn removed_methods_on_a_modern_request_are_method_not_found() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::transport::Session::new());
    let cases = [
        (
            "initialize",
            json!({"protocolVersion": MODERN, "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
        ("ping", json!({})),
        ("logging/setLevel", json!({"level": "info"})),
        ("resources/subscribe", json!({"uri": "demo://plain"})),
        ("resources/unsubscribe", json!({"uri": "demo://plain"})),
    ];
    for (i, (method, params)) in cases.into_iter().enumerate() {
        let reply = ask(&server, &ctx, mreq(i as i64, method, params, no_caps())).await;
        assert_eq!(reply["id"], i as i64);
        assert_eq!(
            error(&reply),
            (-32601, format!("Method not found: {method}")),
            "{method}"
        );
    }
    // The modern initialize did not start a legacy session on this scope.
    let reply = ask(
        &server,
        &ctx,
        req(10, "tools/call", json!({"name": "probe"})),
    )
    .await;
    assert_eq!(probe_of(result(&reply))["version"], Value::Null);
    // Legacy ping still answers {} (no resultType).
    let reply = ask(&server, &ctx, req(11, "ping", json!({}))).await;
    assert_eq!(*result(&reply), json!({}));
}

#[tokio::test]
async fn result_type_complete_on_every_modern_result_and_never_on_legacy_ones() {
    let server = server();
    let ctx = CallContext::new().with_session(mcp_core::transport::Session::new());
    let calls = [
        ("server/discover", json!({})),
        ("tools/list", json!({})),
        ("tools/call", json!({"name": "probe"})),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/list", json!({})),
        ("prompts/get", json!({"name": "hello"})),
        ("resources/list", json!({})),
        ("resources/templates/list", json!({})),
        ("resources/read", json!({"uri": "demo://plain"})),
        ("resources/read", json!({"uri": "demo://logs/monday"})),
    ];
    for (i, (method, params)) in calls.iter().enumerate() {
        let reply = ask(
            &server,
            &ctx,
            mreq(i as i64, method, params.clone(), no_caps()),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        if params["name"] == "fail" {
            assert_eq!(r["isError"], true, "{r}");
            assert_eq!(tool_text(r), "disk full");
        }
    }

    // Legacy: initialize and the same methods (except discover) carry none
    // of it.
    let reply = ask(
        &server,
        &ctx,
        req(
            100,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}),
        ),
    )
    .await;
    assert_eq!(result(&reply)["protocolVersion"], "2025-06-18");
    assert_legacy_shape(result(&reply));
    let reply = ask(&server, &ctx, req(101, "ping", json!({}))).await;
    assert_legacy_shape(result(&reply));
    for (i, (method, params)) in calls.iter().enumerate().skip(1) {
        let reply = ask(&server, &ctx, req(200 + i as i64, method, params.clone())).await;
        assert_legacy_shape(result(&reply));
    }
    // A legacy request with a _meta that makes no modern claim is legacy.
    let reply = ask(
        &server,
        &ctx,
        req(300, "tools/list", json!({"_meta": {"progressToken": 1}})),
    )
    .await;
    assert_legacy_shape(result(&reply));
}

#[tokio::test]
async fn cache_hints_defaults_on_lists_and_reads_and_none_on_calls() {
    let server = server();
    let ctx = CallContext::default();
    let expect = [
        ("tools/list", json!({}), 60_000, "public"),
        ("prompts/list", json!({}), 60_000, "public"),
        ("resources/list", json!({}), 60_000, "public"),
        ("resources/templates/list", json!({}), 60_000, "public"),
        // A resource without with_cache: immediately stale, private.
        (
            "resources/read",
            json!({"uri": "demo://plain"}),
            0,
            "private",
        ),
        // Per descriptor: a fixed resource and a template.
        (
            "resources/read",
            json!({"uri": "demo://cached"}),
            123,
            "public",
        ),
        (
            "resources/read",
            json!({"uri": "demo://logs/tuesday"}),
            456,
            "private",
        ),
        ("server/discover", json!({}), 3_600_000, "public"),
    ];
    for (i, (method, params, ttl, scope)) in expect.into_iter().enumerate() {
        let reply = ask(
            &server,
            &ctx,
            mreq(i as i64, method, params.clone(), no_caps()),
        )
        .await;
        assert_eq!(
            cache_hint(result(&reply)),
            (ttl, scope.to_owned()),
            "{method} {params}"
        );
    }
    let reply = ask(
        &server,
        &ctx,
        mreq(
            20,
            "resources/read",
            json!({"uri": "demo://logs/tuesday"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(
        result(&reply)["contents"],
        json!([{"uri": "demo://logs/tuesday", "text": "log of tuesday"}])
    );
    // Never on tools/call (success or tool error) or prompts/get.
    for (method, params) in [
        ("tools/call", json!({"name": "probe"})),
        ("tools/call", json!({"name": "fail"})),
        ("prompts/get", json!({"name": "hello"})),
    ] {
        let reply = ask(&server, &ctx, mreq(30, method, params, no_caps())).await;
        assert_no_cache_hint(result(&reply));
    }
}

#[tokio::test]
async fn cache_hints_overridden_per_server() {
    let server = builder(&Arc::new(Runs::default()))
        .list_cache(5_000, CacheScope::Private)
        .discover_cache(7, CacheScope::Private)
        .build()
        .expect("server builds");
    let ctx = CallContext::default();
    for (i, method) in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ]
    .into_iter()
    .enumerate()
    {
        let reply = ask(&server, &ctx, mreq(i as i64, method, json!({}), no_caps())).await;
        assert_eq!(
            cache_hint(result(&reply)),
            (5_000, "private".to_owned()),
            "{method}"
        );
    }
    let reply = ask(
        &server,
        &ctx,
        mreq(9, "server/discover", json!({}), no_caps()),
    )
    .await;
    assert_eq!(cache_hint(result(&reply)), (7, "private".to_owned()));
    // Descriptor hints are not replaced by the list hint.
    let reply = ask(
        &server,
        &ctx,
        mreq(
            10,
            "resources/read",
            json!({"uri": "demo://cached"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(cache_hint(result(&reply)), (123, "public".to_owned()));

    // A tool with a visible hook makes the default list scope private.
    let hooked = McpServer::builder()
        .tool(
            McpToolDef::new(
                "secret",
                "Only for some",
                json!({"type": "object"}),
                |_a, _c: InvokeContext| async move { "ok" },
            )
            .with_visible(|_ctx: &CallContext| true),
        )
        .build()
        .expect("server builds");
    let reply = ask(&hooked, &ctx, mreq(11, "tools/list", json!({}), no_caps())).await;
    assert_eq!(cache_hint(result(&reply)), (60_000, "private".to_owned()));
}

#[tokio::test]
async fn unknown_resource_is_invalid_params_with_the_uri() {
    let server = server();
    let reply = ask(
        &server,
        &CallContext::default(),
        mreq(
            4,
            "resources/read",
            json!({"uri": "demo://nope"}),
            no_caps(),
        ),
    )
    .await;
    assert_eq!(reply["id"], 4);
    let err = error_obj(&reply);
    assert_eq!(
        *err,
        json!({"code": -32602, "message": "Unknown resource: demo://nope",
               "data": {"uri": "demo://nope"}})
    );
}

// ---------------------------------------------------------------------------
// subscriptions/listen
// ---------------------------------------------------------------------------

fn ack(id: Value) -> Value {
    json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {SUB_ID: id}, "notifications": {}},
    })
}

fn listen_params() -> Value {
    modern(
        json!({"notifications": {
            "toolsListChanged": true,
            "promptsListChanged": true,
            "resourcesListChanged": true,
            "resourceSubscriptions": ["demo://plain"],
        }}),
        no_caps(),
    )
}

#[tokio::test]
async fn listen_acknowledges_first_tagged_with_numeric_and_string_ids() {
    let client = TestClient::start(server(), StdioOptions::default(), ClientOptions::default());
    let numeric = guard(
        "listen 900",
        client.start_request_with_id(
            RequestId::Number(900),
            "subscriptions/listen",
            listen_params(),
        ),
    )
    .await;
    let first = guard("ack 900", client.next_notification(HANG_GUARD))
        .await
        .expect("an acknowledgement");
    // Nothing the server offers changes, so it honours none of the asks.
    assert_eq!(first, ack(json!(900)));

    let string = guard(
        "listen L1",
        client.start_request_with_id(
            RequestId::from("L1"),
            "subscriptions/listen",
            listen_params(),
        ),
    )
    .await;
    let second = guard("ack L1", client.next_notification(HANG_GUARD))
        .await
        .expect("an acknowledgement");
    assert_eq!(second, ack(json!("L1")));

    // Open listens do not block other requests on the stream.
    let r = guard(
        "list while listening",
        client.request("tools/list", modern(json!({}), no_caps())),
    )
    .await
    .expect("tools/list");
    assert_complete(&r);

    // The client ends both; no reply comes for a cancelled listen (checked
    // byte-exactly in listen_cancel_and_end_of_input_on_a_raw_stream).
    assert!(client.cancel(&numeric.id).await);
    assert!(client.cancel(&string.id).await);
}

#[tokio::test]
async fn listen_cancel_and_end_of_input_on_a_raw_stream() {
    let mut raw = Raw::start(server());
    raw.send(&req("A", "subscriptions/listen", listen_params()))
        .await;
    assert_eq!(raw.next().await, Some(ack(json!("A"))), "ack comes first");
    raw.send(&req(2, "subscriptions/listen", listen_params()))
        .await;
    assert_eq!(raw.next().await, Some(ack(json!(2))));

    // The client cancels "A".
    raw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": "A", "reason": "done"}}),
    )
    .await;
    // The stream still serves requests.
    raw.send(&mreq(3, "tools/list", json!({}), no_caps())).await;
    let r = raw.next().await.expect("a reply to tools/list");
    assert_eq!(r["id"], 3);
    assert_complete(result(&r));

    // End of input ends listen 2 gracefully with its tagged result; "A"
    // gets nothing.
    let rest = raw.finish().await;
    let responses: Vec<&Value> = rest.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(
        responses,
        [&json!({
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "resultType": "complete",
                "_meta": {SUB_ID: 2, SERVER_INFO: server_info_json()},
            },
        })],
        "remaining output: {rest:?}"
    );
    assert!(
        !rest.iter().any(|m| m.to_string().contains("\"A\"")),
        "nothing more for the cancelled listen: {rest:?}"
    );
}

#[tokio::test]
async fn listen_requires_a_notifications_object() {
    let server = server();
    for params in [
        json!({}),
        json!({"notifications": true}),
        json!({"notifications": []}),
    ] {
        let reply = ask(
            &server,
            &CallContext::default(),
            mreq(5, "subscriptions/listen", params.clone(), no_caps()),
        )
        .await;
        assert_eq!(
            error(&reply),
            (
                -32602,
                "subscriptions/listen requires a `notifications` object".to_owned()
            ),
            "{params}"
        );
    }
    // Over a stream: the error is the reply and no acknowledgement precedes it.
    let mut raw = Raw::start(server);
    raw.send(&mreq(6, "subscriptions/listen", json!({}), no_caps()))
        .await;
    let first = raw.next().await.expect("a reply");
    assert_eq!(first["id"], 6);
    assert_eq!(error(&first).0, -32602);
    assert!(raw.finish().await.is_empty());
}

#[tokio::test]
async fn legacy_listen_is_method_not_found() {
    let reply = ask(
        &server(),
        &CallContext::default(),
        req(1, "subscriptions/listen", json!({"notifications": {}})),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32601, "Method not found: subscriptions/listen".to_owned())
    );
}
