//! The stateless 2026-07-28 revision: multi round-trip requests
//! (`input_required` + sealed `requestState`) and the hardening of
//! `requestState`. The era rules are described in `stateless.rs`.

// Not every test file of the group uses every shared helper or import.
#![allow(dead_code, unused_imports)]

mod common;
include!("common/stateless_prelude.rs");

// ---------------------------------------------------------------------------
// 3. Multi round-trip requests
// ---------------------------------------------------------------------------

#[tokio::test]
async fn mrtr_form_elicitation_round_trip() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    assert_eq!(reply["id"], 1);
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 1);

    // The retry: a new id, the same params plus the answer and the state.
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state,
            ),
        ),
    )
    .await;
    assert_eq!(reply["id"], 2);
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");
    assert_no_cache_hint(r);

    // Decline and cancel are delivered as such.
    for (answer, text) in [
        (json!({"action": "decline"}), "prod: declined"),
        (json!({"action": "cancel"}), "prod: cancelled"),
    ] {
        let reply = ask(
            &server,
            &ctx,
            req(
                3,
                "tools/call",
                retry(&first, json!({"elicit-0": answer}), &state),
            ),
        )
        .await;
        assert_eq!(tool_text(result(&reply)), text);
    }
}

#[tokio::test]
async fn mrtr_retry_without_the_answer_asks_again() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    // Same state, no inputResponses (or an unknown key only): asked again,
    // not an error.
    for responses in [json!({}), json!({"other": accept(json!({"branch": "x"}))})] {
        let reply = ask(
            &server,
            &ctx,
            req(2, "tools/call", retry(&first, responses, &state)),
        )
        .await;
        let (again, _) = input_required(result(&reply));
        assert_eq!(again, requests);
    }
}

/// Answers count only for questions the server issued, as recorded in its
/// sealed state: `inputResponses` without a `requestState` are not trusted,
/// and the question is asked again.
#[tokio::test]
async fn mrtr_first_round_answers_without_state_are_used_and_validated() {
    // Answers sent without a requestState carry no earlier round; they are
    // the client's own and are used as given (the conformance suite's
    // "ignore extra params" case). Extra keys are ignored; an answer that is
    // not an object is dropped and the question asked again.
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let mut params = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let mut answers = branch_answer();
    answers["unrelated"] = json!({"action": "accept", "content": {"x": 1}});
    params["inputResponses"] = answers;
    let reply = ask(&server, &ctx, req(1, "tools/call", params.clone())).await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");
    assert_eq!(runs.deploy.load(Ordering::SeqCst), 1);

    params["inputResponses"] = json!({"elicit-0": 12345});
    let reply = ask(&server, &ctx, req(2, "tools/call", params)).await;
    let (requests, _) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );
}

#[tokio::test]
async fn mrtr_confirm_round_trip() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"name": "delete"}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Delete everything?", confirm_schema())})
    );
    for (answer, text) in [
        (accept(json!({"confirm": true})), "deleted"),
        (accept(json!({"confirm": false})), "kept"),
        (json!({"action": "decline"}), "kept"),
    ] {
        let reply = ask(
            &server,
            &ctx,
            req(
                2,
                "tools/call",
                retry(&first, json!({"elicit-0": answer}), &state),
            ),
        )
        .await;
        let r = result(&reply);
        assert_complete(r);
        assert_eq!(tool_text(r), text);
    }
}

#[tokio::test]
async fn mrtr_two_sequential_elicitations_take_two_rounds() {
    let (server, runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );

    // Round 1: the branch.
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (requests, state1) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-0": elicit_request("Which branch?", branch_schema())})
    );

    // Round 2: the confirmation, which already knows the branch.
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(
                &first,
                json!({"elicit-0": accept(json!({"branch": "main"}))}),
                &state1,
            ),
        ),
    )
    .await;
    let (requests, state2) = input_required(result(&reply));
    assert_eq!(
        requests,
        json!({"elicit-1": elicit_request("Deploy main?", confirm_schema())})
    );
    assert_ne!(state1, state2);

    // Round 3 answers only the second question: the first answer travels in
    // the state, and the tool sees both.
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &state2,
            ),
        ),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "branch=main confirmed=true");
    assert_eq!(runs.two_step.load(Ordering::SeqCst), 3, "one run per round");

    // A re-sent earlier answer cannot override the sealed one.
    let reply = ask(
        &server,
        &ctx,
        req(
            4,
            "tools/call",
            retry(
                &first,
                json!({
                    "elicit-0": accept(json!({"branch": "evil"})),
                    "elicit-1": accept(json!({"confirm": true})),
                }),
                &state2,
            ),
        ),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "branch=main confirmed=true");

    // Answers to questions not asked yet are ignored: the first state only
    // takes elicit-0, so the tool still asks elicit-1.
    let reply = ask(
        &server,
        &ctx,
        req(
            5,
            "tools/call",
            retry(
                &first,
                json!({
                    "elicit-0": accept(json!({"branch": "main"})),
                    "elicit-1": accept(json!({"confirm": true})),
                }),
                &state1,
            ),
        ),
    )
    .await;
    let (requests, _) = input_required(result(&reply));
    assert_eq!(
        requests
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["elicit-1".to_owned()])
    );
}

/// Runs the first round of `deploy {env: prod}` on `server` and returns
/// `(first params, state)`.
async fn first_round(server: &McpServer, ctx: &CallContext) -> (Value, Value) {
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(server, ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    (first, state)
}

#[tokio::test]
async fn mrtr_tampered_state_is_rejected() {
    let server = server();
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;
    let s = state.as_str().expect("string state");

    // A flipped character in the payload.
    let parts: Vec<&str> = s.split('.').collect();
    let mut payload = parts[2].to_owned().into_bytes();
    let i = payload.len() / 2;
    payload[i] = if payload[i] == b'A' { b'B' } else { b'A' };
    let flipped = format!(
        "{}.{}.{}.{}",
        parts[0],
        parts[1],
        String::from_utf8(payload).expect("ascii"),
        parts[3]
    );
    let reply = ask(
        &server,
        &ctx,
        req(
            2,
            "tools/call",
            retry(&first, branch_answer(), &json!(flipped)),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A well-formed forgery: the expiry pushed out, the tag kept.
    let forged = forge_state(s, |p| p["e"] = json!(u64::MAX / 2));
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(&first, branch_answer(), &json!(forged)),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A state answering the question itself, without the client's retry.
    let forged = forge_state(s, |p| p["a"] = branch_answer());
    let reply = ask(
        &server,
        &ctx,
        req(4, "tools/call", retry(&first, json!({}), &json!(forged))),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // A tampered tag; garbage; a non-string state.
    let bad_tag = format!("{}.{}.{}.{}", parts[0], parts[1], parts[2], "AAAA");
    let reply = ask(
        &server,
        &ctx,
        req(
            5,
            "tools/call",
            retry(&first, branch_answer(), &json!(bad_tag)),
        ),
    )
    .await;
    assert_eq!(error(&reply).0, -32602);
    assert!(
        error(&reply).1.starts_with("Invalid requestState: "),
        "{reply}"
    );
    let reply = ask(
        &server,
        &ctx,
        req(
            6,
            "tools/call",
            retry(&first, branch_answer(), &json!("garbage")),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState is malformed");
    let reply = ask(
        &server,
        &ctx,
        req(7, "tools/call", retry(&first, branch_answer(), &json!(42))),
    )
    .await;
    assert_eq!(
        error(&reply),
        (-32602, "`requestState` must be a string".to_owned())
    );

    // The untouched state still works.
    let reply = ask(
        &server,
        &ctx,
        req(8, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_sealed_answers_cannot_be_rewritten() {
    let server = server();
    let ctx = CallContext::default();
    let first = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state1) = input_required(result(&reply));
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state1)),
    )
    .await;
    let (_, state2) = input_required(result(&reply));
    let s = state2.as_str().expect("string");
    // The payload carries the first answer (readable, not writable).
    assert_eq!(
        state_payload(s)["a"]["elicit-0"],
        accept(json!({"branch": "main"}))
    );
    let forged = forge_state(s, |p| {
        p["a"]["elicit-0"] = accept(json!({"branch": "evil"}));
    });
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(
                &first,
                json!({"elicit-1": accept(json!({"confirm": true}))}),
                &json!(forged),
            ),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");
}

#[tokio::test]
async fn mrtr_state_replayed_for_other_arguments_or_another_tool_is_rejected() {
    // One configured key, and a prompt sharing the tool's name, so that only
    // the binding can tell the requests apart.
    let server = builder(&Arc::new(Runs::default()))
        .request_state_keys(StateKeys::new(key("k", 8), vec![]))
        .prompt(McpPromptDef::new(
            "deploy",
            |_a: PromptArgs, _c: InvokeContext| async move { "a prompt".to_owned() },
        ))
        .build()
        .expect("server builds");
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;

    let other_args = modern(
        json!({"name": "deploy", "arguments": {"env": "dev"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&other_args, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    let no_args = modern(json!({"name": "deploy"}), elicit_caps());
    let reply = ask(
        &server,
        &ctx,
        req(3, "tools/call", retry(&no_args, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    let other_tool = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(4, "tools/call", retry(&other_tool, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // Another method with the same name and arguments.
    let prompt = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(
        &server,
        &ctx,
        req(5, "prompts/get", retry(&prompt, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different request");

    // The genuine retry still works.
    let reply = ask(
        &server,
        &ctx,
        req(6, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_state_sealed_by_another_server_is_rejected() {
    // Two servers with default keys: each a random per-process key.
    let a = server();
    let b = server();
    let ctx = CallContext::default();
    let (first, state) = first_round(&a, &ctx).await;
    let reply = ask(
        &b,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // Configured keys with different ids.
    let c = server_with_keys(StateKeys::new(key("c-key", 3), vec![]));
    let reply = ask(
        &c,
        &ctx,
        req(3, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");

    // The same key id with a different secret.
    let d1 = server_with_keys(StateKeys::new(key("shared", 4), vec![]));
    let d2 = server_with_keys(StateKeys::new(key("shared", 5), vec![]));
    let (first, state) = first_round(&d1, &ctx).await;
    let reply = ask(
        &d2,
        &ctx,
        req(4, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState failed verification");

    // Same configured key: another instance completes the call (scale-out).
    let d3 = server_with_keys(StateKeys::new(key("shared", 4), vec![]));
    let reply = ask(
        &d3,
        &ctx,
        req(5, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

#[tokio::test]
async fn mrtr_expired_state_is_rejected() {
    let server = server_with_keys(StateKeys::new(key("k", 6), vec![]).with_ttl(Duration::ZERO));
    let ctx = CallContext::default();
    let (first, state) = first_round(&server, &ctx).await;
    // Let the millisecond clock move past the zero-length validity.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState has expired");
}

#[tokio::test]
async fn mrtr_key_rotation_opens_state_sealed_with_a_previous_key() {
    let old = key("old", 1);
    let new = key("new", 2);
    let a = server_with_keys(StateKeys::new(old.clone(), vec![]));
    let b = server_with_keys(StateKeys::new(new.clone(), vec![old]));
    let only_new = server_with_keys(StateKeys::new(new, vec![]));
    let ctx = CallContext::default();

    let (first, state) = first_round(&a, &ctx).await;
    assert!(
        state.as_str().expect("string").starts_with("v1.old."),
        "{state}"
    );
    let reply = ask(
        &b,
        &ctx,
        req(2, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    let r = result(&reply);
    assert_complete(r);
    assert_eq!(tool_text(r), "deployed prod from main");

    // Once the old key is dropped, its state is refused.
    let reply = ask(
        &only_new,
        &ctx,
        req(3, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");

    // B seals with its current key, which A does not know.
    let two = modern(json!({"name": "two_step", "arguments": {}}), elicit_caps());
    let reply = ask(&a, &ctx, req(4, "tools/call", two.clone())).await;
    let (_, s1) = input_required(result(&reply));
    let reply = ask(
        &b,
        &ctx,
        req(5, "tools/call", retry(&two, branch_answer(), &s1)),
    )
    .await;
    let (_, s2) = input_required(result(&reply));
    assert!(s2.as_str().expect("string").starts_with("v1.new."), "{s2}");
    let answer = json!({"elicit-1": accept(json!({"confirm": true}))});
    let reply = ask(
        &a,
        &ctx,
        req(6, "tools/call", retry(&two, answer.clone(), &s2)),
    )
    .await;
    assert_invalid_state(&reply, "requestState was sealed with an unknown key");
    let reply = ask(
        &only_new,
        &ctx,
        req(7, "tools/call", retry(&two, answer, &s2)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "branch=main confirmed=true");
}

#[tokio::test]
async fn mrtr_state_is_bound_to_the_principal() {
    let server = server();
    let alice = CallContext::new().with_principal("alice");
    let bob = CallContext::new().with_principal("bob");
    let anonymous = CallContext::default();
    let (first, state) = first_round(&server, &alice).await;

    for (i, ctx) in [&bob, &anonymous].into_iter().enumerate() {
        let reply = ask(
            &server,
            ctx,
            req(
                10 + i as i64,
                "tools/call",
                retry(&first, branch_answer(), &state),
            ),
        )
        .await;
        assert_invalid_state(&reply, "requestState belongs to a different principal");
    }
    // Anonymous state is not usable by a principal either.
    let (first_anon, anon_state) = first_round(&server, &anonymous).await;
    let reply = ask(
        &server,
        &alice,
        req(
            20,
            "tools/call",
            retry(&first_anon, branch_answer(), &anon_state),
        ),
    )
    .await;
    assert_invalid_state(&reply, "requestState belongs to a different principal");

    let reply = ask(
        &server,
        &alice,
        req(21, "tools/call", retry(&first, branch_answer(), &state)),
    )
    .await;
    assert_eq!(tool_text(result(&reply)), "deployed prod from main");
}

// ---------------------------------------------------------------------------
// Hardening of requestState (issue 16)
// ---------------------------------------------------------------------------

/// Only the answers the handler asked for are sealed into the next round's
/// state: keys the server never asked (however large) are not carried.
#[tokio::test]
async fn mrtr_answers_nobody_asked_for_are_not_sealed() {
    let (server, _runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "two_step", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    let state = state.as_str().expect("a string state").to_owned();
    let mut answers = branch_answer();
    let junk = "x".repeat(64 * 1024);
    answers["junk"] = json!({"action": "accept", "content": {"pad": junk}});
    let reply = ask(
        &server,
        &ctx,
        req(2, "tools/call", retry(&first, answers, &json!(state))),
    )
    .await;
    let (requests, next) = input_required(result(&reply));
    assert!(requests.get("elicit-1").is_some(), "{requests}");
    let next = next.as_str().expect("a string state");
    let payload = state_payload(next);
    assert!(payload["a"].get("elicit-0").is_some(), "{payload}");
    assert!(payload["a"].get("junk").is_none(), "{payload}");
    assert!(next.len() < 4096, "state grew to {} bytes", next.len());
}

/// A tag spelled with non-zero unused bits in its last base64url character
/// (another spelling of the same bytes) does not verify.
#[tokio::test]
async fn mrtr_state_tags_must_be_canonical_base64url() {
    let (server, _runs) = server_with_runs();
    let ctx = CallContext::default();
    let first = modern(
        json!({"name": "deploy", "arguments": {"env": "prod"}}),
        elicit_caps(),
    );
    let reply = ask(&server, &ctx, req(1, "tools/call", first.clone())).await;
    let (_, state) = input_required(result(&reply));
    let state = state.as_str().expect("a string state");
    let (head, tag) = state.rsplit_once('.').expect("a tag");
    // A 32-byte tag is 43 characters: the last one carries 2 unused bits.
    assert_eq!(tag.len(), 43);
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let last = tag.as_bytes()[42];
    let index = alphabet
        .iter()
        .position(|&c| c == last)
        .expect("a base64url character");
    for unused in 1..4 {
        let other = char::from(alphabet[(index & !3) | unused]);
        let forged = format!("{head}.{}{other}", &tag[..42]);
        let reply = ask(
            &server,
            &ctx,
            req(
                2,
                "tools/call",
                retry(&first, branch_answer(), &json!(forged)),
            ),
        )
        .await;
        assert_invalid_state(&reply, "requestState is malformed");
    }
    // The canonical spelling still opens.
    let reply = ask(
        &server,
        &ctx,
        req(
            3,
            "tools/call",
            retry(&first, branch_answer(), &json!(state)),
        ),
    )
    .await;
    assert_complete(result(&reply));
}
