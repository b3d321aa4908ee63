//! Tests of the encoder: written bytes against `Serialize`, and the
//! shape of 2026-07-28 tool results.
use super::*;
use serde_json::json;

#[test]
fn envelopes_match_the_value_builders() {
    let id = RequestId::Number(7);
    let ok = Reply::result(&id, json!({"x": 1}));
    assert_eq!(
        ok.into_value(),
        crate::protocol::ok(json!(7), json!({"x": 1}))
    );
    let err = Reply::error(None, ErrorObject::parse_error());
    assert_eq!(
        err.into_value(),
        crate::protocol::fail(Value::Null, &ErrorObject::parse_error())
    );
}

/// Results of every shape: plain, structured, failed, with `_meta`.
fn tool_results() -> Vec<CallToolResult> {
    let mut structured = CallToolResult::text("x\u{1}\"y").with_structured(Map::new());
    structured.is_error = Some(true);
    let mut with_meta = CallToolResult::new(vec![Content::text("a"), Content::text("b")]);
    with_meta.meta = Some(serde_json::from_value(json!({"k": [1]})).unwrap_or_default());
    let mut failed = CallToolResult::text("no");
    failed.is_error = Some(false);
    vec![
        CallToolResult::text("plain"),
        CallToolResult::new(Vec::new()),
        structured,
        with_meta,
        failed,
    ]
}

#[test]
fn written_bytes_are_exactly_what_serialize_gives() {
    let info = Arc::new(ServerInfoRaw::new(&json!({"name": "s\"q", "version": "1"})));
    let listing = || {
        Arc::new(
            RawValue::from_string(r#"[{"name":"t"},2]"#.into()).unwrap_or_else(|e| panic!("{e}")),
        )
    };
    let mut bodies: Vec<Body> = vec![
        Body::Json(json!({"a": [1, "\u{7f}\n\u{1}"], "é": null})),
        Body::Json(Value::Null),
        Body::Error(ErrorObject::invalid_params("bad \"thing\"")),
        Body::Error(ErrorObject::parse_error()),
        Body::Listing {
            key: "tools",
            items: listing(),
            modern: None,
        },
        Body::Listing {
            key: "resourceTemplates",
            items: listing(),
            modern: Some((
                Arc::clone(&info),
                CacheHint::new(5, crate::protocol::CacheScope::Public),
            )),
        },
    ];
    for result in tool_results() {
        bodies.push(Body::Tool {
            result: result.clone(),
            modern: None,
        });
        bodies.push(Body::Tool {
            result,
            modern: Some(Arc::clone(&info)),
        });
    }
    let ids = [
        None,
        Some(RequestId::Number(-4)),
        Some(RequestId::String("q\"\u{2028}".into())),
    ];
    let replies: Vec<Reply> = bodies
        .into_iter()
        .enumerate()
        .map(|(i, body)| Reply {
            id: ids[i % ids.len()].clone(),
            body,
        })
        .collect();
    for reply in &replies {
        let mut written = Vec::new();
        reply.write_to(&mut written);
        let serialized = serde_json::to_vec(reply).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&serialized)
        );
    }
    let batch = Replies::Batch(replies);
    let mut written = Vec::new();
    batch.write_to(&mut written);
    assert_eq!(written, serde_json::to_vec(&batch).unwrap_or_default());
}

#[test]
fn a_modern_tool_result_is_the_derived_one_plus_result_type_and_server_info() {
    let info = Arc::new(ServerInfoRaw::new(&json!({"name": "s", "version": "1"})));
    for result in tool_results() {
        // What the result serializes to on its own, as a client reads it.
        let mut expected = serde_json::to_value(&result).unwrap_or_default();
        let Some(object) = expected.as_object_mut() else {
            panic!("a result is an object");
        };
        object.insert("resultType".into(), json!("complete"));
        let mut meta = result.meta.clone().unwrap_or_default();
        meta.insert(
            meta_keys::SERVER_INFO.into(),
            json!({"name": "s", "version": "1"}),
        );
        object.insert("_meta".into(), Value::Object(meta));
        for modern in [None, Some(Arc::clone(&info))] {
            let is_modern = modern.is_some();
            let reply = Reply {
                id: Some(RequestId::Number(3)),
                body: Body::Tool {
                    result: result.clone(),
                    modern,
                },
            };
            let bytes = Response::from(reply).to_vec();
            let written: Value = serde_json::from_slice(&bytes).unwrap_or_default();
            let want = if is_modern {
                expected.clone()
            } else {
                serde_json::to_value(&result).unwrap_or_default()
            };
            assert_eq!(
                written,
                json!({"jsonrpc": "2.0", "id": 3, "result": want}),
                "{result:?}"
            );
        }
    }
}

#[test]
fn a_batch_is_its_replies_in_order() {
    let replies: Vec<Reply> = [
        Body::Json(json!({"a": [1, "\u{7f}"]})),
        Body::Error(ErrorObject::invalid_params("bad \"thing\"")),
        Body::Listing {
            key: "tools",
            items: Arc::new(
                RawValue::from_string("[1,2]".into()).unwrap_or_else(|e| panic!("{e}")),
            ),
            modern: None,
        },
    ]
    .into_iter()
    .map(|body| Reply { id: None, body })
    .collect();
    let bytes = Response(Replies::Batch(replies)).to_vec();
    let written: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    assert_eq!(
        written,
        json!([
            {"jsonrpc": "2.0", "id": null, "result": {"a": [1, "\u{7f}"]}},
            {"jsonrpc": "2.0", "id": null,
             "error": {"code": -32602, "message": "bad \"thing\""}},
            {"jsonrpc": "2.0", "id": null, "result": {"tools": [1, 2]}},
        ])
    );
}

#[test]
fn modern_tool_results_carry_result_type_and_merged_meta() {
    let mut result = CallToolResult::new(vec![Content::text("hi")]);
    let mut meta = Map::new();
    meta.insert("mine".into(), json!(1));
    meta.insert(meta_keys::SERVER_INFO.into(), json!("spoofed"));
    result.meta = Some(meta);
    let info = Arc::new(ServerInfoRaw::new(&json!({"name": "s", "version": "1"})));
    let reply = Reply {
        id: Some(RequestId::String("a".into())),
        body: Body::Tool {
            result,
            modern: Some(info),
        },
    };
    let mut bytes = Vec::new();
    reply.write_to(&mut bytes);
    let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": "a", "result": {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hi"}],
            "_meta": {"mine": 1, meta_keys::SERVER_INFO: {"name": "s", "version": "1"}}
        }})
    );
    // Without a `_meta` of its own (or an empty one), the one written
    // once for the server.
    for meta in [None, Some(Map::new())] {
        let mut result = CallToolResult::new(vec![Content::text("hi")]);
        result.meta = meta;
        let reply = Reply {
            id: Some(RequestId::Number(2)),
            body: Body::Tool {
                result,
                modern: Some(Arc::new(ServerInfoRaw::new(&json!({"name": "s"})))),
            },
        };
        let mut bytes = Vec::new();
        reply.write_to(&mut bytes);
        let v: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        assert_eq!(
            v["result"]["_meta"],
            json!({meta_keys::SERVER_INFO: {"name": "s"}})
        );
    }
}
