//! Server→client input in both eras: `ctx.sample`, `ctx.list_roots` and
//! `ctx.input` with several keys (real requests on a legacy session, one
//! `input_required` round on 2026-07-28; see `features.rs`).

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

include!("common/features_prelude.rs");

// ---------------------------------------------------------------------------
// Server→client input: sample, list_roots, input
// ---------------------------------------------------------------------------

fn all_caps() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {"listChanged": true}})
}

fn model_reply(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "m", "stopReason": "endTurn"})
}

fn roots_reply() -> Value {
    json!({"roots": [{"uri": "file:///work", "name": "work"}]})
}

/// Checks a server→client request and returns it.
fn expect_request(message: &Value, method: &str) -> Value {
    assert_eq!(message["jsonrpc"], "2.0", "{message}");
    assert_eq!(message["method"], method, "{message}");
    assert!(
        message["id"].is_string() || message["id"].is_number(),
        "{message}"
    );
    message.clone()
}

#[tokio::test]
async fn legacy_sample_sends_create_message_and_returns_the_answer() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, all_caps()).await;
    let task = peer.start(call(1, "sample", json!({"text": "Tell me"})));
    let request = expect_request(&peer.next_out().await, "sampling/createMessage");
    assert_eq!(request["params"], sampling_params("Tell me"));
    peer.answer(&request, model_reply("Told")).await;
    let reply = finish(task).await;
    assert_eq!(
        tool_json(result(&reply)),
        json!({"answer": model_reply("Told")})
    );
}

#[tokio::test]
async fn legacy_list_roots_sends_roots_list_and_returns_the_answer() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, all_caps()).await;
    let task = peer.start(call(1, "roots", json!({})));
    let request = expect_request(&peer.next_out().await, "roots/list");
    peer.answer(&request, roots_reply()).await;
    let reply = finish(task).await;
    assert_eq!(tool_json(result(&reply)), json!({"answer": roots_reply()}));
}

/// JSON-RPC 2.0: `params`, when present, MUST be an object or an array. A
/// legacy `roots/list` (asked with `InputRequest::list_roots`, whose params
/// are `Value::Null`) goes out as `"params": null` (framework bug, see the
/// report; strict clients such as the TypeScript SDK reject it).
#[tokio::test]
async fn legacy_roots_list_request_has_no_null_params() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, all_caps()).await;
    let task = peer.start(call(1, "roots", json!({})));
    let request = expect_request(&peer.next_out().await, "roots/list");
    peer.answer(&request, roots_reply()).await;
    finish(task).await;
    assert!(
        request.get("params").is_none_or(Value::is_object),
        "invalid JSON-RPC request (params must be omitted or structured): {request}"
    );
}

#[tokio::test]
async fn legacy_input_asks_each_key_in_turn_and_returns_answers_by_key() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, all_caps()).await;
    let task = peer.start(call(1, "ask_three", json!({})));

    let first = expect_request(&peer.next_out().await, "elicitation/create");
    assert_eq!(first["params"], name_form());
    // One at a time: nothing else is asked before the first is answered.
    assert!(peer.quiet_out().await.is_empty());
    peer.answer(
        &first,
        json!({"action": "accept", "content": {"name": "Ada"}}),
    )
    .await;

    let second = expect_request(&peer.next_out().await, "sampling/createMessage");
    assert_eq!(second["params"], sampling_params("Greet me"));
    peer.answer(&second, model_reply("Hello Ada")).await;

    let third = expect_request(&peer.next_out().await, "roots/list");
    peer.answer(&third, roots_reply()).await;

    let ids = [&first["id"], &second["id"], &third["id"]];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );

    let reply = finish(task).await;
    assert_eq!(
        tool_json(result(&reply)),
        json!({"answers": {
            "name": {"action": "accept", "content": {"name": "Ada"}},
            "greeting": model_reply("Hello Ada"),
            "roots": roots_reply(),
        }})
    );
}

#[tokio::test]
async fn legacy_client_error_answer_is_returned_to_the_handler() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, all_caps()).await;
    let task = peer.start(call(1, "sample", json!({})));
    let request = expect_request(&peer.next_out().await, "sampling/createMessage");
    peer.answer_error(
        &request,
        json!({"code": -1, "message": "User rejected sampling"}),
    )
    .await;
    let reply = finish(task).await;
    assert_eq!(
        tool_json(result(&reply))["error"],
        json!({"code": -1, "message": "User rejected sampling", "data": null})
    );
}

#[tokio::test]
async fn legacy_input_without_the_capability_is_32603_and_asks_nothing() {
    let server = input_server(&Arc::default());
    let peer = Peer::legacy(&server, json!({"elicitation": {}})).await;
    for (name, args) in [
        ("sample", json!({})),
        ("roots", json!({})),
        ("ask_three", json!({})),
    ] {
        let reply = peer.ask(call(1, name, args)).await;
        assert_eq!(
            tool_json(result(&reply))["error"]["code"],
            -32603,
            "{name}: {reply}"
        );
    }
    assert!(peer.quiet_out().await.is_empty(), "something was asked");

    // With no channel to the client at all: -32603 as well.
    let server = input_server(&Arc::default());
    let session = Session::new();
    let ctx = CallContext::new().with_session(session);
    let init = server
        .handle_message(
            req(
                0,
                "initialize",
                json!({"protocolVersion": LEGACY, "capabilities": all_caps()}),
            ),
            &ctx,
        )
        .await
        .expect("reply");
    result(&init);
    let reply = guard(
        "sample without a channel",
        server.handle_message(call(1, "sample", json!({})), &ctx),
    )
    .await
    .expect("reply");
    assert_eq!(tool_json(result(&reply))["error"]["code"], -32603);
}

/// A retry of a modern call with answers and the state it was given.
fn retry(first: &Value, responses: Value, state: &Value) -> Value {
    let mut again = first.clone();
    again["params"]["inputResponses"] = responses;
    again["params"]["requestState"] = state.clone();
    again
}

#[tokio::test]
async fn modern_input_with_several_keys_is_one_round_then_answers_by_key() {
    let server = input_server(&Arc::default());
    let peer = Peer::new(&server);
    let first = mcall(1, "ask_three", json!({}), all_caps());
    let reply = peer.ask(first.clone()).await;
    let (requests, state) = input_required(&reply);
    let mut form = name_form();
    form["mode"] = json!("form");
    let mut requests = requests;
    let roots = requests
        .as_object_mut()
        .and_then(|r| r.remove("roots"))
        .expect("a roots request");
    assert_eq!(roots["method"], "roots/list");
    assert!(
        roots.get("params").is_none_or(|p| p == &json!({})),
        "roots/list params: {roots}"
    );
    assert_eq!(
        requests,
        json!({
            "name": {"method": "elicitation/create", "params": form},
            "greeting": {"method": "sampling/createMessage", "params": sampling_params("Greet me")},
        })
    );
    // Nothing went out as a request: 2026-07-28 servers never send any.
    assert!(peer.quiet_out().await.is_empty());

    let answers = json!({
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "greeting": model_reply("Hello Ada"),
        "roots": roots_reply(),
    });
    let reply = peer.ask(retry(&first, answers.clone(), &state)).await;
    assert_eq!(result(&reply)["resultType"], "complete");
    assert_eq!(tool_json(result(&reply)), json!({"answers": answers}));
}

#[tokio::test]
async fn modern_partial_answers_ask_again_for_the_rest() {
    let server = input_server(&Arc::default());
    let peer = Peer::new(&server);
    let first = mcall(1, "ask_three", json!({}), all_caps());
    let (_, state) = input_required(&peer.ask(first.clone()).await);

    let greeting = model_reply("Hi");
    let reply = peer
        .ask(retry(&first, json!({"greeting": greeting}), &state))
        .await;
    let (requests, state) = input_required(&reply);
    let mut keys: Vec<&String> = requests.as_object().expect("object").keys().collect();
    keys.sort();
    assert_eq!(keys, ["name", "roots"]);

    let reply = peer
        .ask(retry(
            &first,
            json!({"name": {"action": "decline"}, "roots": {"roots": []}}),
            &state,
        ))
        .await;
    assert_eq!(
        tool_json(result(&reply)),
        json!({"answers": {"name": {"action": "decline"}, "greeting": greeting, "roots": {"roots": []}}})
    );
}

#[tokio::test]
async fn modern_sample_and_list_roots_ask_in_rounds_under_generated_keys() {
    let server = input_server(&Arc::default());
    let peer = Peer::new(&server);
    let first = mcall(1, "sample_then_roots", json!({}), all_caps());
    let (requests, state) = input_required(&peer.ask(first.clone()).await);
    let (sample_key, sample) = requests
        .as_object()
        .and_then(|m| m.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .expect("one request");
    assert_eq!(requests.as_object().map(Map::len), Some(1), "{requests}");
    assert_eq!(sample["method"], "sampling/createMessage");
    assert_eq!(sample["params"], sampling_params("first"));

    let reply = peer
        .ask(retry(
            &first,
            json!({ sample_key.clone(): model_reply("one") }),
            &state,
        ))
        .await;
    let (requests, state) = input_required(&reply);
    let (roots_key, roots) = requests
        .as_object()
        .and_then(|m| m.iter().next())
        .map(|(k, v)| (k.clone(), v.clone()))
        .expect("one request");
    assert_eq!(roots["method"], "roots/list");
    assert_ne!(roots_key, sample_key);

    let reply = peer
        .ask(retry(&first, json!({ roots_key: roots_reply() }), &state))
        .await;
    assert_eq!(
        tool_json(result(&reply)),
        json!({"model": model_reply("one"), "roots": roots_reply()})
    );
}

#[tokio::test]
async fn modern_input_without_the_capability_is_32021_for_the_handler() {
    let server = input_server(&Arc::default());
    let peer = Peer::new(&server);
    let cases = [
        (
            json!({"elicitation": {}}),
            "sample",
            json!({}),
            json!({"sampling": {}}),
        ),
        (
            json!({"sampling": {}}),
            "roots",
            json!({}),
            json!({"roots": {}}),
        ),
        // One undeclared capability among several: nothing is asked.
        (
            json!({"elicitation": {}, "roots": {}}),
            "ask_three",
            json!({}),
            json!({"sampling": {}}),
        ),
        (
            json!({"sampling": {}}),
            "ask_three",
            json!({}),
            json!({"elicitation": {}}),
        ),
        // URL-mode elicitation needs `elicitation.url`.
        (
            json!({"elicitation": {}}),
            "input",
            json!({"requests": [{"key": "k", "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"}}]}),
            json!({"elicitation": {"url": {}}}),
        ),
    ];
    for (caps, name, args, required) in cases {
        let reply = peer.ask(mcall(1, name, args, caps.clone())).await;
        let r = result(&reply);
        assert_eq!(r["resultType"], "complete", "{name} {caps}: {reply}");
        let reported = tool_json(r);
        assert_eq!(reported["error"]["code"], -32021, "{name} {caps}: {reply}");
        assert_eq!(
            reported["error"]["data"],
            json!({"requiredCapabilities": required}),
            "{name} {caps}"
        );
    }
    // Declared URL mode is enough for a URL-mode question.
    let reply = peer
        .ask(mcall(
            2,
            "input",
            json!({"requests": [{"key": "k", "method": "elicitation/create",
                "params": {"mode": "url", "message": "Sign in", "url": "https://example.com", "elicitationId": "e1"}}]}),
            json!({"elicitation": {"url": {}}}),
        ))
        .await;
    let (requests, _) = input_required(&reply);
    assert_eq!(requests["k"]["params"]["mode"], "url");
}
