//! Tests of decoding: the short way against the long way.
use super::*;
use serde_json::json;

fn parts(text: &str) -> RequestParts {
    match Frame::parse(text.as_bytes()) {
        Ok(Frame(Incoming::Request(parts))) => parts,
        other => panic!("expected the short way for {text}: {other:?}"),
    }
}

fn long_way(text: &str) -> Value {
    match Frame::parse(text.as_bytes()) {
        Ok(Frame(Incoming::Json(v))) => v,
        other => panic!("expected the long way for {text}: {other:?}"),
    }
}

#[test]
fn the_id_of_an_over_deep_message_is_recovered() {
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    for (text, id) in [
        (
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"x","params":{{"a":{deep}}}}}"#),
            json!(7),
        ),
        (
            format!(r#"{{"params":{{"a":{deep},"id":9}},"id":"q\"}}","method":"x"}}"#),
            json!("q\"}"),
        ),
    ] {
        let reply = parse_payload(text.as_bytes())
            .expect_err("too deep")
            .reply();
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
    }
    // Unreadable id, or no object: the usual parse error.
    let text = format!(r#"{{"id":{deep}}}"#);
    assert_eq!(
        parse_payload(text.as_bytes())
            .expect_err("too deep")
            .reply()["id"],
        Value::Null
    );
    assert_eq!(
        parse_payload(deep.as_bytes())
            .expect_err("too deep")
            .reply()["id"],
        Value::Null
    );
}

#[test]
fn the_depth_limit_is_told_by_position_exactly_where_serde_json_stops() {
    // Nesting up to the limit parses; past it, the error serde_json
    // reports is recognised, on any line, with strings holding brackets.
    for depth in [DEPTH_LIMIT - 1, DEPTH_LIMIT, DEPTH_LIMIT + 1, 500] {
        for prefix in ["", "\n \n  ", r#"{"s":"[[{\"[","a":"#] {
            let close = if prefix.starts_with('{') { "}" } else { "" };
            let text = format!(
                "{prefix}{}{}{close}",
                "[\n".repeat(depth),
                "]".repeat(depth)
            );
            let parsed = serde_json::from_slice::<Value>(text.as_bytes());
            let opened = depth + usize::from(prefix.starts_with('{'));
            match parsed {
                Ok(_) => assert!(opened < DEPTH_LIMIT, "{opened} levels parsed"),
                Err(e) => {
                    assert!(opened >= DEPTH_LIMIT, "{e}");
                    assert!(is_depth_limit(&e, text.as_bytes()), "{e} ({opened} levels)");
                }
            }
        }
    }
}

#[test]
fn a_syntax_error_before_the_depth_limit_is_a_parse_error() {
    let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
    for text in [
        format!(r#"{{"id":7,"x":tru,"params":{deep}}}"#),
        format!(
            r#"{{"id":7,"params":{}x[{deep}}}"#,
            "[".repeat(DEPTH_LIMIT - 2)
        ),
    ] {
        let e = serde_json::from_slice::<Value>(text.as_bytes()).expect_err("invalid");
        assert!(!is_depth_limit(&e, text.as_bytes()), "{e}");
        let reply = parse_payload(text.as_bytes()).expect_err("invalid").reply();
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        assert_eq!(reply["id"], Value::Null, "{reply}");
    }
}

#[test]
fn usual_method_names_are_borrowed_and_others_kept_as_sent() {
    for usual in USUAL_METHODS {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{usual}"}}"#);
        let method = parts(&text).method;
        assert!(matches!(method, Cow::Borrowed(_)), "{usual}");
        assert_eq!(method, usual);
    }
    // An escaped spelling names the same method.
    let method = parts(r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call"}"#).method;
    assert!(matches!(method, Cow::Borrowed("tools/call")), "{method}");
    for other in ["tools/cal", "tools/callx", "Tools/call", "x/y", ""] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{other}"}}"#);
        let method = parts(&text).method;
        assert!(matches!(method, Cow::Owned(_)), "{other}");
        assert_eq!(method, other);
    }
}

#[test]
fn usual_requests_are_taken_apart() {
    let p =
        parts(r#" {"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"},"extra":1}"#);
    assert_eq!(p.id, RequestId::Number(7));
    assert_eq!(p.method, "tools/call");
    // The name is held apart from the map, and put back on demand.
    assert!(p.params.is_empty());
    assert_eq!(p.held.name.as_deref(), Some("x"));
    let mut params = p.params;
    p.held.restore(&mut params);
    assert_eq!(Value::Object(params), json!({"name": "x"}));

    let p = parts(r#"{"method":"ping","id":"a\"b","jsonrpc":"2.0"}"#);
    assert_eq!(p.id, RequestId::String("a\"b".into()));
    assert!(p.params.is_empty());

    let p = parts(r#"{"jsonrpc":"2.0","id":-3,"method":"ping","params":null}"#);
    assert_eq!(p.id, RequestId::Number(-3));
    assert!(p.params.is_empty());
}

#[test]
fn everything_else_takes_the_long_way_unchanged() {
    for text in [
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
        r#""just a string""#,
    ] {
        let expected: Value = serde_json::from_str(text).expect("valid JSON");
        assert_eq!(long_way(text), expected, "{text}");
    }
    assert!(Frame::parse(b"{not json").is_err());
    assert!(Frame::parse(b"").is_err());
}

/// The era a request is served in, and the params its handler sees,
/// read the short way (from bytes) and the long way (from JSON).
fn both_ways(params: &str) -> [(Result<crate::protocol::Era, ErrorObject>, Value); 2] {
    let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
    let mut short = parts(&text);
    let short_era = crate::server::classify::era_of(&mut short);
    let mut long = match crate::server::classify::classify(Incoming::Json(
        serde_json::from_str(&text).expect("valid JSON"),
    )) {
        crate::server::classify::Kind::Request(parts) => parts,
        _ => panic!("a request"),
    };
    let long_era = crate::server::classify::era_of(&mut long);
    let mut short_params = short.params;
    short.held.restore(&mut short_params);
    [
        (short_era, Value::Object(short_params)),
        (long_era, Value::Object(long.params)),
    ]
}

#[test]
fn modern_meta_reads_the_same_both_ways_and_keeps_other_members() {
    const CAPS: &str = r#""io.modelcontextprotocol/clientCapabilities""#;
    const VERSION: &str = r#""io.modelcontextprotocol/protocolVersion""#;
    const INFO: &str = r#""io.modelcontextprotocol/clientInfo""#;
    let cases = [
        format!(
            r#"{{"name":"t","_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"roots":{{}}}},{INFO}:{{"name":"c","version":"1"}}}}}}"#
        ),
        // The same text again (served from the per-thread cache), then
        // texts that differ in one place each.
        format!(
            r#"{{"name":"t","_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"roots":{{}}}},{INFO}:{{"name":"c","version":"1"}}}}}}"#
        ),
        format!(
            r#"{{"name":"t","_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"sampling":{{}}}},{INFO}:{{"name":"c","version":"1"}}}}}}"#
        ),
        format!(
            r#"{{"name":"t","_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"sampling":{{}}}},{INFO}:{{"name":"d","version":"1"}}}}}}"#
        ),
        format!(
            r#"{{"name":"t","_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{}},"progressToken":7,"x":[1]}}}}"#
        ),
        format!(
            r#"{{"_meta":{{{CAPS}:{{}},{VERSION}:"2026-07-28","io.modelcontextprotocol/logLevel":"debug"}}}}"#
        ),
        format!(
            r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{}},"io.modelcontextprotocol/logLevel":"loud"}}}}"#
        ),
        format!(r#"{{"_meta":{{{VERSION}:"2099-01-01",{CAPS}:{{}}}}}}"#),
        format!(r#"{{"_meta":{{{VERSION}:20260728,{CAPS}:{{}}}}}}"#),
        format!(r#"{{"_meta":{{{VERSION}:"2026-07-28"}}}}"#),
        format!(r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:[]}}}}"#),
        format!(r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"roots":true}}}}}}"#),
        format!(
            r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{"roots":{{"listChanged":"yes"}}}}}}}}"#
        ),
        format!(r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{}},{INFO}:7}}}}"#),
        // Legacy: everything stays in `_meta` as sent.
        format!(
            r#"{{"name":"t","_meta":{{{CAPS}:{{"roots":{{}}}},{INFO}:{{"name":"c"}},"progressToken":"p"}}}}"#
        ),
        r#"{"name":"t","_meta":{}}"#.to_owned(),
        // The held name and the arguments: the last of each wins; a
        // non-string name stays in the map.
        r#"{"name":"t","arguments":{"a":[1,{"b":null}],"c":"\u00e9"},"name":"u"}"#.to_owned(),
        r#"{"arguments":{"a":1},"name":7,"arguments":"s"}"#.to_owned(),
        r#"{"name":"t","name":null,"arguments":null}"#.to_owned(),
        r#"{"arguments":[],"arguments":{}}"#.to_owned(),
        r#"{"name":7,"name":"t"}"#.to_owned(),
        r#"{"name":7,"name":"t","name":[]}"#.to_owned(),
        // A repeated `_meta`: the last one decides what stays.
        format!(
            r#"{{"_meta":{{"progressToken":1}},"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{}}}}}}"#
        ),
        format!(
            r#"{{"_meta":{{{VERSION}:"2026-07-28",{CAPS}:{{}}}},"_meta":{{"progressToken":1}}}}"#
        ),
    ];
    for params in &cases {
        let [short, long] = both_ways(params);
        assert_eq!(short.0, long.0, "era of {params}");
        // The long way keeps the reserved keys; the short way drops them
        // from a request that claims a version (they are in its era, or
        // in the error it is answered) and nothing else.
        let mut long_params = long.1;
        if let Some(Value::Object(meta)) = long_params.get_mut("_meta") {
            if meta.contains_key(crate::protocol::meta::PROTOCOL_VERSION) {
                meta.retain(|k, _| !k.starts_with("io.modelcontextprotocol/"));
            }
        }
        if long_params["_meta"]
            .as_object()
            .is_some_and(|m| m.is_empty())
            && short.1.get("_meta").is_none()
        {
            long_params.as_object_mut().map(|p| p.remove("_meta"));
        }
        assert_eq!(short.1, long_params, "params of {params}");
    }
    // Nothing was read from a cached answer that did not apply.
    let [first, _] = both_ways(&cases[2]);
    let Ok(crate::protocol::Era::Modern(meta)) = first.0 else {
        panic!("modern")
    };
    assert!(meta.client.capabilities.sampling.is_some());
    assert!(meta.client.capabilities.roots.is_none());
}

#[test]
fn accessors_agree_between_the_two_forms() {
    let text = r#"{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"x"}}"#;
    let short = Frame::parse(text.as_bytes()).expect("parses");
    let long = Frame::from_value(serde_json::from_str(text).expect("valid JSON"));
    for m in [&short, &long] {
        assert!(m.is_request());
        assert_eq!(m.method(), Some("tools/call"));
        assert_eq!(m.param_str("name"), Some("x"));
        assert_eq!(m.id_value(), json!("q"));
        assert_eq!(m.request_id(), Some(RequestId::String("q".into())));
    }
    assert!(matches!(short.0, Incoming::Request(_)));
}
