//! The checker's messages, keyword by keyword.

use super::*;
use serde_json::json;

fn schema() -> Map<String, Value> {
    json!({
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "count": {"type": "integer", "minimum": 0},
            "starts_at": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["text"],
    })
    .as_object()
    .cloned()
    .unwrap_or_default()
}

#[test]
fn reports_path_expected_and_received() {
    let err = check_and_parse::<Value>(
        json!({"text": 5}).as_object().cloned().unwrap_or_default(),
        &CheckedSchema::new(&schema()),
    )
    .expect_err("wrong type");
    assert!(
        err.contains("`text`: expected string, received the integer 5"),
        "{err}"
    );
    let err = check_and_parse::<Value>(
        json!({"text": "x", "tags": ["a", 3]})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        &CheckedSchema::new(&schema()),
    )
    .expect_err("bad item");
    assert!(
        err.contains("`tags[1]`: expected string, received the integer 3"),
        "{err}"
    );
}

#[test]
fn unknown_keys_get_suggestions() {
    let err = check_and_parse::<Value>(
        json!({"text": "x", "startsAt": "now", "cuont": 1})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        &CheckedSchema::new(&schema()),
    )
    .expect_err("unknown keys");
    assert!(
        err.contains("`startsAt`: unknown field; did you mean `starts_at`?"),
        "{err}"
    );
    assert!(
        err.contains("`cuont`: unknown field; did you mean `count`?"),
        "{err}"
    );
    assert!(
        err.contains("Valid fields: text, count, starts_at, tags") || err.contains("Valid fields:"),
        "{err}"
    );
}

#[test]
fn missing_required_and_bounds() {
    let err = check_and_parse::<Value>(
        json!({"count": -1})
            .as_object()
            .cloned()
            .unwrap_or_default(),
        &CheckedSchema::new(&schema()),
    )
    .expect_err("missing");
    assert!(
        err.contains("`text`: missing required field (string)"),
        "{err}"
    );
    assert!(
        err.contains("`count`: must be at least 0, received -1"),
        "{err}"
    );
}

/// Every keyword the checker reads, each with a value that breaks it.
#[test]
fn every_keyword_is_checked() {
    let schema = json!({
        "type": "object",
        "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "version": {"const": 2},
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "shape": {"oneOf": [{"type": "object"}, {"type": "null"}]},
            "ratio": {"type": "number", "maximum": 1},
            "when": {"type": "string", "format": "date-time"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "inner": {
                "type": "object",
                "properties": {"a": {"type": "boolean"}},
                "additionalProperties": false
            },
            "open": {"type": "object", "properties": {"a": {"type": "boolean"}}}
        }
    });
    let schema = schema.as_object().cloned().unwrap_or_default();
    let args = json!({
        "mode": "medium",
        "version": 3,
        "id": true,
        "shape": 1,
        "ratio": 1.5,
        "when": 7,
        "tags": ["ok", 4],
        "inner": {"b": 1},
        "open": {"b": 1}
    });
    let err = check_and_parse::<Value>(
        args.as_object().cloned().unwrap_or_default(),
        &CheckedSchema::new(&schema),
    )
    .expect_err("every field is wrong");
    for expected in [
        "`mode`: expected one of \"fast\", \"slow\", received the string \"medium\"",
        "`version`: expected 2, received the integer 3",
        "`id`: the boolean true does not match any of the 2 allowed shapes",
        "`shape`: the integer 1 does not match any of the 2 allowed shapes",
        "`ratio`: must be at most 1, received 1.5",
        "`when`: expected string (date-time), received the integer 7",
        "`tags[1]`: expected string, received the integer 4",
        "`inner.b`: unknown field",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in:\n{err}");
    }
    assert!(
        !err.contains("`open.b`"),
        "an open object takes any key: {err}"
    );
    assert_eq!(err.matches("\n- ").count(), 8, "{err}");
}

#[test]
fn max_length_counts_characters() {
    let schema = json!({"type": "object", "properties": {"q": {"type": "string", "maxLength": 3}}});
    let schema = CheckedSchema::new(schema.as_object().unwrap_or(&Map::new()));
    let args = |q: &str| json!({ "q": q }).as_object().cloned().unwrap_or_default();
    assert!(
        check_and_parse::<Value>(args("ééé"), &schema).is_ok(),
        "3 characters, 6 bytes"
    );
    let err = check_and_parse::<Value>(args("abcd"), &schema).expect_err("too long");
    assert!(
        err.contains("`q`: must be at most 3 characters, received 4 characters"),
        "{err}"
    );
}

#[test]
fn a_true_property_schema_takes_any_value_and_false_none() {
    // schemars writes `true` for a `serde_json::Value` field.
    let schema = json!({
        "type": "object",
        "properties": {"data": true, "never": false},
        "required": ["data"],
    })
    .as_object()
    .cloned()
    .unwrap_or_default();
    let checked = CheckedSchema::new(&schema);
    for data in [json!(1), json!("x"), json!({"a": [null]}), json!(null)] {
        let args = json!({ "data": data })
            .as_object()
            .cloned()
            .unwrap_or_default();
        assert!(check_and_parse::<Value>(args, &checked).is_ok(), "{data}");
    }
    let args = json!({"data": 1, "never": 2})
        .as_object()
        .cloned()
        .unwrap_or_default();
    let err = check_and_parse::<Value>(args, &checked).expect_err("false takes nothing");
    assert!(err.contains("`never`"), "{err}");
}
