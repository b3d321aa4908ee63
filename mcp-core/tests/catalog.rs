//! The catalog as a public API (issue 17): every change class on a pair of
//! catalogs, every profile rule with a schema that breaks it and one that
//! passes, the strict-mode rewrite on macro-generated schemas, token counts
//! against the tokenizer's own, and the lockfile round trip.

use mcp_core::catalog::profile::{strict, Profile};
use mcp_core::catalog::tokens::{self, TokenReport};
use mcp_core::catalog::{self, diff, lock, Catalog, Severity, Surface};
use mcp_core::{mcp_tool, McpServer};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

fn catalog_of(tools: Vec<Value>, prompts: Vec<Value>, resources: Vec<Value>) -> Catalog {
    let mut c = Catalog::default();
    c.revisions.insert(
        "2026-07-28".into(),
        Surface::from_listings(&tools, &resources, &[], &prompts),
    );
    c
}

fn tool(name: &str, schema: Value) -> Value {
    json!({"name": name, "description": "d", "inputSchema": schema})
}

fn weather(props: Value, required: Value) -> Catalog {
    catalog_of(
        vec![tool(
            "weather",
            json!({"type": "object", "properties": props, "required": required}),
        )],
        vec![],
        vec![],
    )
}

/// The single change between two catalogs (asserting there is exactly one).
fn only_change(old: &Catalog, new: &Catalog) -> (Severity, String, String) {
    let changes = diff(old, new);
    assert_eq!(changes.len(), 1, "{changes:#?}");
    let c = &changes[0];
    assert_eq!(c.revisions, vec!["2026-07-28".to_owned()]);
    (c.severity, c.path.clone(), c.what.clone())
}

fn assert_change(old: &Catalog, new: &Catalog, severity: Severity, path: &str, words: &str) {
    let (s, p, w) = only_change(old, new);
    assert_eq!((s, p.as_str()), (severity, path), "{w}");
    assert!(w.contains(words), "{w:?} should mention {words:?}");
}

const CITY: &str = "/tools/weather/inputSchema/properties/city";

#[test]
fn removed_and_added_tools() {
    let one = catalog_of(vec![tool("a", json!({"type": "object"}))], vec![], vec![]);
    let none = catalog_of(vec![], vec![], vec![]);
    assert_change(&one, &none, Severity::Breaking, "/tools/a", "removed");
    assert_change(&none, &one, Severity::Compatible, "/tools/a", "new tool");
}

#[test]
fn a_renamed_tool_is_a_removal_and_an_addition() {
    let old = catalog_of(vec![tool("a", json!({"type": "object"}))], vec![], vec![]);
    let new = catalog_of(vec![tool("b", json!({"type": "object"}))], vec![], vec![]);
    let changes = diff(&old, &new);
    assert_eq!(changes.len(), 2, "{changes:#?}");
    assert_eq!(
        (changes[0].severity, changes[0].path.as_str()),
        (Severity::Breaking, "/tools/a")
    );
    assert_eq!(
        (changes[1].severity, changes[1].path.as_str()),
        (Severity::Compatible, "/tools/b")
    );
}

#[test]
fn arguments_removed_renamed_required_and_added() {
    let base = weather(json!({"city": {"type": "string"}}), json!([]));
    let none = weather(json!({}), json!([]));
    assert_change(&base, &none, Severity::Breaking, CITY, "removed");
    let required = weather(json!({"city": {"type": "string"}}), json!(["city"]));
    assert_change(&base, &required, Severity::Breaking, CITY, "made required");
    assert_change(
        &required,
        &base,
        Severity::Compatible,
        CITY,
        "made optional",
    );
    let more = weather(
        json!({"city": {"type": "string"}, "days": {"type": "integer"}}),
        json!([]),
    );
    assert_change(
        &base,
        &more,
        Severity::Compatible,
        "/tools/weather/inputSchema/properties/days",
        "new optional",
    );
    let more_required = weather(
        json!({"city": {"type": "string"}, "days": {"type": "integer"}}),
        json!(["days"]),
    );
    assert_change(
        &base,
        &more_required,
        Severity::Breaking,
        "/tools/weather/inputSchema/properties/days",
        "new required",
    );
}

#[test]
fn types_narrowed_and_widened() {
    let number = weather(json!({"city": {"type": "number"}}), json!([]));
    let integer = weather(json!({"city": {"type": "integer"}}), json!([]));
    let either = weather(json!({"city": {"type": ["string", "number"]}}), json!([]));
    assert_change(
        &number,
        &integer,
        Severity::Breaking,
        &format!("{CITY}/type"),
        "narrowed",
    );
    assert_change(
        &integer,
        &number,
        Severity::Compatible,
        &format!("{CITY}/type"),
        "widened",
    );
    assert_change(
        &number,
        &either,
        Severity::Compatible,
        &format!("{CITY}/type"),
        "widened",
    );
    let string = weather(json!({"city": {"type": "string"}}), json!([]));
    assert_change(
        &number,
        &string,
        Severity::Breaking,
        &format!("{CITY}/type"),
        "changed",
    );
    let short = weather(
        json!({"city": {"type": "string", "maxLength": 10}}),
        json!([]),
    );
    assert_change(
        &string,
        &short,
        Severity::Breaking,
        &format!("{CITY}/maxLength"),
        "narrowed",
    );
    assert_change(
        &short,
        &string,
        Severity::Compatible,
        &format!("{CITY}/maxLength"),
        "widened",
    );
}

#[test]
fn enum_values_removed_and_added() {
    let two = weather(
        json!({"city": {"type": "string", "enum": ["Oslo", "Rome"]}}),
        json!([]),
    );
    let one = weather(
        json!({"city": {"type": "string", "enum": ["Oslo"]}}),
        json!([]),
    );
    assert_change(
        &two,
        &one,
        Severity::Breaking,
        &format!("{CITY}/enum"),
        "\"Rome\"",
    );
    assert_change(
        &one,
        &two,
        Severity::Compatible,
        &format!("{CITY}/enum"),
        "added",
    );
}

/// An enum of names whose variants are documented is written as a `oneOf`
/// of `const`s (by schemars, or in an older lockfile) or as `enum` with a
/// described `oneOf` beside it (as listed now). Removing or adding a name
/// is named, not reported as "alternatives changed"; changing a name's
/// description is compatible; the two spellings of the same list are no
/// breaking change.
#[test]
fn documented_enum_values_removed_and_added_are_named() {
    let consts = |names: &[(&str, &str)]| {
        let alternatives: Vec<Value> = names
            .iter()
            .map(|(name, doc)| json!({"type": "string", "const": name, "description": doc}))
            .collect();
        weather(json!({"city": {"oneOf": alternatives}}), json!([]))
    };
    let three = consts(&[("Oslo", "Cold."), ("Rome", "Warm."), ("Lima", "Foggy.")]);
    let two = consts(&[("Oslo", "Cold."), ("Lima", "Foggy.")]);
    assert_change(
        &three,
        &two,
        Severity::Breaking,
        &format!("{CITY}/enum"),
        "enum value(s) removed: \"Rome\"",
    );
    assert_change(
        &two,
        &three,
        Severity::Compatible,
        &format!("{CITY}/enum"),
        "enum value(s) added: \"Rome\"",
    );
    let reworded = consts(&[("Oslo", "Cold."), ("Rome", "Hot."), ("Lima", "Foggy.")]);
    assert_change(
        &three,
        &reworded,
        Severity::Compatible,
        &format!("{CITY}/enum"),
        "description of value \"Rome\" changed",
    );
    // The listed form: `enum` plus the described alternatives.
    let listed = weather(
        json!({"city": {
            "type": "string",
            "enum": ["Oslo", "Rome", "Lima"],
            "oneOf": [
                {"const": "Oslo", "description": "Cold."},
                {"const": "Rome", "description": "Warm."},
                {"const": "Lima", "description": "Foggy."}
            ]
        }}),
        json!([]),
    );
    let changes = diff(&three, &listed);
    assert!(
        changes.iter().all(|c| c.severity == Severity::Compatible),
        "{changes:#?}"
    );
    let listed_two = weather(
        json!({"city": {
            "type": "string",
            "enum": ["Oslo", "Lima"],
            "oneOf": [
                {"const": "Oslo", "description": "Cold."},
                {"const": "Lima", "description": "Foggy."}
            ]
        }}),
        json!([]),
    );
    assert_change(
        &listed,
        &listed_two,
        Severity::Breaking,
        &format!("{CITY}/enum"),
        "enum value(s) removed: \"Rome\"",
    );
}

#[test]
fn nested_properties_are_compared_by_path() {
    let old = weather(
        json!({"where": {"type": "object", "properties": {"lat": {"type": "number"}}}}),
        json!([]),
    );
    let new = weather(
        json!({"where": {"type": "object", "properties": {"lat": {"type": "integer"}}}}),
        json!([]),
    );
    assert_change(
        &old,
        &new,
        Severity::Breaking,
        "/tools/weather/inputSchema/properties/where/properties/lat/type",
        "narrowed",
    );
}

#[test]
fn output_fields_removed_or_changed_break_added_ones_do_not() {
    let out = |props: Value| {
        catalog_of(
            vec![json!({"name": "t", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object", "properties": props, "required": ["temp"]}})],
            vec![],
            vec![],
        )
    };
    let base = out(json!({"temp": {"type": "number"}}));
    assert_change(
        &base,
        &out(json!({})),
        Severity::Breaking,
        "/tools/t/outputSchema/properties/temp",
        "output field `temp` removed",
    );
    assert_change(
        &base,
        &out(json!({"temp": {"type": "string"}})),
        Severity::Breaking,
        "/tools/t/outputSchema/properties/temp/type",
        "changed",
    );
    assert_change(
        &base,
        &out(json!({"temp": {"type": "number"}, "unit": {"type": "string"}})),
        Severity::Compatible,
        "/tools/t/outputSchema/properties/unit",
        "new optional output field",
    );
}

#[test]
fn safety_hints_flipped_the_unsafe_way_break() {
    let hinted = |a: Value| {
        catalog_of(
            vec![json!({"name": "t", "inputSchema": {"type": "object"}, "annotations": a})],
            vec![],
            vec![],
        )
    };
    let read_only = hinted(json!({"readOnlyHint": true}));
    let writes = hinted(json!({}));
    assert_change(
        &read_only,
        &writes,
        Severity::Breaking,
        "/tools/t/annotations/readOnlyHint",
        "true -> false",
    );
    assert_change(
        &writes,
        &read_only,
        Severity::Compatible,
        "/tools/t/annotations/readOnlyHint",
        "false -> true",
    );
    let safe = hinted(json!({"destructiveHint": false}));
    assert_change(
        &safe,
        &writes,
        Severity::Breaking,
        "/tools/t/annotations/destructiveHint",
        "false -> true",
    );
}

#[test]
fn descriptions_and_titles_are_compatible() {
    let a = catalog_of(
        vec![json!({"name": "t", "description": "one", "inputSchema": {"type": "object"}})],
        vec![],
        vec![],
    );
    let b = catalog_of(
        vec![json!({"name": "t", "description": "two", "inputSchema": {"type": "object"}})],
        vec![],
        vec![],
    );
    assert_change(
        &a,
        &b,
        Severity::Compatible,
        "/tools/t/description",
        "description changed",
    );
}

#[test]
fn prompt_arguments_and_resources() {
    let prompt = |args: Value| {
        catalog_of(
            vec![],
            vec![json!({"name": "p", "arguments": args})],
            vec![],
        )
    };
    let optional = prompt(json!([{"name": "topic"}]));
    let required = prompt(json!([{"name": "topic", "required": true}]));
    assert_change(
        &optional,
        &required,
        Severity::Breaking,
        "/prompts/p/arguments/topic",
        "made required",
    );
    assert_change(
        &optional,
        &prompt(json!([])),
        Severity::Breaking,
        "/prompts/p/arguments/topic",
        "removed",
    );
    assert_change(
        &prompt(json!([])),
        &optional,
        Severity::Compatible,
        "/prompts/p/arguments/topic",
        "new optional",
    );
    let res = |mime: &str| {
        catalog_of(
            vec![],
            vec![],
            vec![json!({"uri": "file:///a", "name": "a", "mimeType": mime})],
        )
    };
    assert_change(
        &res("text/plain"),
        &res("application/json"),
        Severity::Breaking,
        "/resources/file:~1~1~1a/mimeType",
        "MIME",
    );
}

// ---------------------------------------------------------------- profiles

fn rules(profile: Profile, tools: &[Value]) -> Vec<&'static str> {
    profile
        .check(tools, "srv")
        .into_iter()
        .map(|i| i.rule)
        .collect()
}

fn strict_ok() -> Value {
    tool(
        "ok",
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": false}),
    )
}

#[test]
fn openai_strict_rules_each_fail_and_pass() {
    assert!(rules(Profile::OpenAiStrict, &[strict_ok()]).is_empty());
    let open = tool(
        "t",
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}),
    );
    assert_eq!(
        rules(Profile::OpenAiStrict, &[open]),
        ["openai.strict.additional-properties"]
    );
    let optional = tool(
        "t",
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}),
    );
    assert_eq!(
        rules(Profile::OpenAiStrict, &[optional]),
        ["openai.strict.required"]
    );
    let one_of = tool(
        "t",
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false, "oneOf": []}),
    );
    assert_eq!(
        rules(Profile::OpenAiStrict, &[one_of]),
        ["openai.strict.keyword"]
    );
    let not_object = tool("t", json!({"type": "string"}));
    assert_eq!(
        rules(Profile::OpenAiStrict, &[not_object]),
        ["openai.strict.root-object"]
    );
    let bad_name = json!({"name": "a.b", "inputSchema": strict_ok()["inputSchema"]});
    assert_eq!(rules(Profile::OpenAiStrict, &[bad_name]), ["openai.name"]);
    let long = json!({"name": "t", "description": "x".repeat(1025), "inputSchema": strict_ok()["inputSchema"]});
    assert_eq!(
        rules(Profile::OpenAiStrict, &[long]),
        ["openai.description"]
    );
    let many: Vec<Value> = (0..129)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": strict_ok()["inputSchema"]}))
        .collect();
    assert_eq!(rules(Profile::OpenAiStrict, &many), ["openai.tools"]);
    let mut deep = json!({"type": "string"});
    for _ in 0..11 {
        deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"], "additionalProperties": false});
    }
    assert!(rules(Profile::OpenAiStrict, &[tool("deep", deep)]).contains(&"openai.strict.nesting"));
}

#[test]
fn gemini_rules_each_fail_and_pass() {
    let ok = tool(
        "ok",
        json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "nullable": true}}}),
    );
    assert!(rules(Profile::Gemini, &[ok]).is_empty());
    let closed = tool(
        "t",
        json!({"type": "object", "additionalProperties": false}),
    );
    assert_eq!(rules(Profile::Gemini, &[closed]), ["gemini.keyword"]);
    let union = tool(
        "t",
        json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
    );
    assert_eq!(rules(Profile::Gemini, &[union]), ["gemini.type"]);
    let int_enum = tool(
        "t",
        json!({"type": "object", "properties": {"a": {"type": "integer", "enum": [1]}}}),
    );
    assert_eq!(rules(Profile::Gemini, &[int_enum]), ["gemini.enum"]);
    let digit = tool("1t", json!({"type": "object"}));
    assert_eq!(rules(Profile::Gemini, &[digit]), ["gemini.name"]);
    assert_eq!(
        rules(Profile::Gemini, &[tool("t", json!({"type": "array"}))]),
        ["gemini.root"]
    );
}

#[test]
fn anthropic_mcp_and_client_rules_each_fail_and_pass() {
    let ok = tool("ok", json!({"type": "object"}));
    assert!(rules(Profile::Anthropic, &[ok]).is_empty());
    let combinator = tool(
        "t",
        json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
    );
    assert_eq!(
        rules(Profile::Anthropic, &[combinator]),
        ["anthropic.top-level-combinator"]
    );
    assert_eq!(
        rules(
            Profile::Anthropic,
            &[tool(&"n".repeat(65), json!({"type": "object"}))]
        ),
        ["anthropic.name"]
    );
    assert!(rules(Profile::Mcp, &[tool("a.b-c_d", json!({}))]).is_empty());
    assert_eq!(rules(Profile::Mcp, &[tool("a b", json!({}))]), ["mcp.name"]);
    let forty_one: Vec<Value> = (0..41).map(|i| tool(&format!("t{i}"), json!({}))).collect();
    assert_eq!(rules(Profile::Cursor, &forty_one), ["cursor.tools"]);
    assert!(rules(Profile::Cursor, &forty_one[..40]).is_empty());
    assert_eq!(
        rules(Profile::Cursor, &[tool(&"n".repeat(58), json!({}))]),
        ["cursor.name-length"]
    );
    let many: Vec<Value> = (0..129)
        .map(|i| tool(&format!("t{i}"), json!({})))
        .collect();
    assert_eq!(rules(Profile::VsCode, &many), ["vscode.tools"]);
    assert!(rules(Profile::VsCode, &many[..128]).is_empty());
}

// ---------------------------------------------------------------- strict rewrite

#[derive(Debug, Deserialize, JsonSchema)]
struct Place {
    /// City name.
    city: String,
    /// Optional region.
    region: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
enum Units {
    Celsius,
    Fahrenheit,
}

/// Forecast for a place.
#[mcp_tool]
async fn forecast(
    place: Place,
    units: Option<Units>,
    days: Option<u8>,
    tags: Vec<String>,
) -> String {
    format!(
        "{}|{:?}|{:?}|{:?}|{}",
        place.city,
        place.region,
        units,
        days,
        tags.len()
    )
}

/// Records the arguments a tool call reaches it with.
#[derive(Clone, Default)]
struct Seen(std::sync::Arc<std::sync::Mutex<Option<Value>>>);

impl mcp_core::intercept::Interceptor for Seen {
    fn operations(&self) -> mcp_core::intercept::Operations {
        mcp_core::intercept::Operation::CallTool.into()
    }

    fn intercept<'a>(
        &'a self,
        req: mcp_core::intercept::Request<'a>,
        next: mcp_core::intercept::Next<'a>,
    ) -> mcp_core::intercept::Hook<'a> {
        let args = req.arguments().cloned().map(Value::Object);
        *self.0.lock().expect("lock") = args;
        next.pass(req)
    }
}

fn forecast_server(strict: Option<&strict::StrictTools>, seen: &Seen) -> McpServer {
    let mut builder = McpServer::builder()
        .server_info("catalog-test", "1")
        .tool(forecast::tool());
    if let Some(s) = strict {
        builder = builder.interceptor(s.clone());
    }
    builder.interceptor(seen.clone()).build().expect("builds")
}

#[tokio::test]
async fn the_strict_rewrite_of_macro_schemas_passes_the_profile_and_keeps_arguments() {
    let server = forecast_server(None, &Seen::default());
    let tools = Catalog::of_server(&server, &["2026-07-28"])
        .await
        .expect("catalog")
        .latest()
        .expect("surface")
        .tool_list();
    assert!(
        !Profile::OpenAiStrict.check(&tools, "srv").is_empty(),
        "the macro schema is not strict as it is"
    );
    let schema = &tools[0]["inputSchema"];
    let rewritten = strict::rewrite(schema).expect("a faithful rewrite");
    let as_tool = json!({"name": "forecast", "inputSchema": rewritten.schema});
    assert_eq!(Profile::OpenAiStrict.check(&[as_tool], "srv"), vec![]);

    // What a strict model sends for arguments valid under the original
    // schema (optional ones left out) comes back to exactly those arguments.
    let original = json!({"place": {"city": "Oslo"}, "tags": []});
    let mut sent =
        json!({"place": {"city": "Oslo", "region": null}, "units": null, "days": null, "tags": []});
    rewritten.restore.apply(&mut sent);
    assert_eq!(sent, original);
}

#[tokio::test]
async fn the_strict_interceptor_serves_strict_schemas_and_the_tool_accepts_strict_arguments() {
    let strict_tools = strict::StrictTools::new();
    let seen = Seen::default();
    let server = forecast_server(Some(&strict_tools), &seen);
    strict_tools.learn(&server);
    let catalog = Catalog::of_server(&server, catalog::DEFAULT_REVISIONS)
        .await
        .expect("catalog");
    for (revision, surface) in &catalog.revisions {
        assert_eq!(
            Profile::OpenAiStrict.check(&surface.tool_list(), "srv"),
            vec![],
            "{revision}"
        );
    }
    let result = server
        .call_tool("forecast", json!({"place": {"city": "Oslo", "region": null}, "units": null, "days": 3, "tags": ["a"]}))
        .await
        .expect("the call succeeds");
    let text = serde_json::to_value(&result).expect("json")["content"][0]["text"].clone();
    assert_eq!(text, json!("Oslo|None|None|Some(3)|1"), "{result:?}");
    // The tool's side saw the arguments its own schema describes: the
    // nulls standing for left-out properties are gone.
    let seen = seen.0.lock().expect("lock").clone();
    assert_eq!(
        seen,
        Some(json!({"place": {"city": "Oslo"}, "days": 3, "tags": ["a"]}))
    );
}

#[test]
fn open_maps_have_no_strict_form() {
    let open = json!({"type": "object", "additionalProperties": {"type": "string"}});
    let err = strict::rewrite(&open).expect_err("no faithful rewrite");
    assert_eq!(err.len(), 1);
    assert!(err[0].contains("/additionalProperties"), "{err:?}");
}

// ---------------------------------------------------------------- tokens

#[test]
fn token_counts_are_the_tokenizers_own() {
    let bpe = tiktoken_rs::o200k_base().expect("tokenizer");
    for text in [
        "",
        "Forecast for a place.",
        "{\"type\":\"object\",\"properties\":{}}",
        "ünïcödé → 漢字",
    ] {
        assert_eq!(
            tokens::count(text),
            bpe.encode_with_special_tokens(text).len(),
            "{text:?}"
        );
    }
    let tools = vec![
        tool("short", json!({"type": "object"})),
        json!({"name": "long", "description": "word ".repeat(200), "inputSchema": {"type": "object"}}),
    ];
    let report = TokenReport::of(&tools);
    assert_eq!(report.tools[0].name, "long", "costliest first");
    assert_eq!(
        report.total,
        report.tools.iter().map(|t| t.total).sum::<usize>()
    );
    let entry =
        json!({"name": "short", "description": "d", "inputSchema": {"type": "object"}}).to_string();
    assert_eq!(
        report.tools[1].total,
        bpe.encode_with_special_tokens(&entry).len()
    );
    let err = report.within(50).expect_err("over budget").to_string();
    assert!(
        err.contains("long:") && err.contains("description"),
        "{err}"
    );
    assert!(report.within(report.total).is_ok());
}

// ---------------------------------------------------------------- lockfile

#[tokio::test]
async fn the_lockfile_round_trips_and_reports_drift() {
    let dir = std::env::temp_dir().join(format!("mcp-catalog-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("mcp.lock.json");
    let _ = std::fs::remove_file(&path);
    let server = forecast_server(None, &Seen::default());
    let current = Catalog::of_server(&server, catalog::DEFAULT_REVISIONS)
        .await
        .expect("catalog");
    assert_eq!(lock::check(&current, &path), lock::Verdict::Missing);
    let missing = lock::assert_catalog(&current, &path).expect_err("a missing lockfile fails");
    assert!(
        matches!(missing, catalog::CatalogError::Missing(_)),
        "{missing}"
    );
    let missing = missing.to_string();
    assert!(missing.contains("MCP_CATALOG=overwrite"), "{missing}");
    std::fs::write(&path, lock::render(&current)).expect("write");
    assert_eq!(lock::check(&current, &path), lock::Verdict::Matches);
    // Reading back gives the same catalog, and rendering is stable.
    let text = std::fs::read_to_string(&path).expect("read");
    let back = Catalog::from_json(&serde_json::from_str(&text).expect("json")).expect("catalog");
    assert_eq!(back, current);
    assert_eq!(lock::render(&back), text);

    let mut changed = current.clone();
    for surface in changed.revisions.values_mut() {
        surface.tools.clear();
    }
    match lock::check(&changed, &path) {
        lock::Verdict::Drifted(changes) => {
            assert_eq!(changes.len(), 1, "{changes:#?}");
            assert_eq!(changes[0].severity, Severity::Breaking);
            assert_eq!(changes[0].revisions, vec!["2025-11-25", "2026-07-28"]);
        }
        other => panic!("expected drift, got {other:?}"),
    }
    let report = lock::assert_catalog(&changed, &path).expect_err("drift fails");
    assert!(
        matches!(report, catalog::CatalogError::Drifted(_)),
        "{report}"
    );
    let report = report.to_string();
    assert!(
        report.contains("BREAKING") && report.contains("/tools/forecast"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_required_profile_fails_the_build_naming_each_issue() {
    let err = McpServer::builder()
        .require_profile(Profile::OpenAiStrict)
        .tool(forecast::tool())
        .build()
        .expect_err("the macro schema is not strict");
    let text = err.to_string();
    assert!(
        text.contains("openai-strict") && text.contains("openai.strict.required"),
        "{text}"
    );
    let ok = McpServer::builder()
        .require_profile(Profile::Anthropic)
        .tool(forecast::tool())
        .build();
    assert!(ok.is_ok(), "{:?}", ok.err());
}
