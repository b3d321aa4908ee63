//! Tool search in the pipeline (see [`crate::tool_search`]): the
//! rewrite of `call_tool` into the named tool's `tools/call`, the
//! `search_tools` answer, the listing of the two tools and the pinned
//! ones, and the checks made when the server is built.

use serde_json::{Map, Value};

use super::visible;
use crate::context::Extensions;
use crate::handler::args::check_and_parse;
use crate::handler::tool::McpToolDef;
use crate::protocol::{CallToolResult, ErrorObject};
use crate::server::decode::Held;
use crate::server::registry::{Registry, ToolRegistry};
use crate::server::request_facts::RequestFacts;
use crate::server::BuildError;
use crate::tool_search::rank::Query;
use crate::tool_search::{SearchArgs, Searcher, ToolSearch, CALL_TOOL};

/// Tool search for a server with `tools` (`live`: its tool catalog is
/// live), or why not.
///
/// # Errors
/// [`BuildError::ToolSearchNameTaken`] for a tool named like one of the
/// two; [`BuildError::ToolSearchPinUnknown`] for a pinned name that is no
/// tool of a fixed catalog.
pub(crate) fn setup(
    options: ToolSearch,
    tools: &[McpToolDef],
    live: bool,
) -> Result<Searcher, BuildError> {
    if let Some(t) = tools.iter().find(|t| Searcher::is_reserved(t.name())) {
        return Err(BuildError::ToolSearchNameTaken(t.name().to_owned()));
    }
    if !live {
        if let Some(pin) = options
            .pinned()
            .iter()
            .find(|p| !tools.iter().any(|t| t.name() == p.as_str()))
        {
            return Err(BuildError::ToolSearchPinUnknown(pin.clone()));
        }
    }
    Ok(Searcher::new(options))
}

/// Rewrites a `call_tool` request into the `tools/call` of the tool it
/// names: `arguments.name` and `arguments.arguments` become the call's
/// `name` and `arguments`; everything else (`_meta`, `task`,
/// `requestState`, …) stays. Any other call is left as it is.
///
/// # Errors
/// `-32602` when `call_tool`'s `arguments` has no string `name`; `-32602
/// Unknown tool` when it names `call_tool` itself (no tool has that name:
/// the scope check would read the inner call as a second wrapper) or a
/// tool whose MCP Apps visibility keeps it from the model (as the search
/// never finds one).
pub(crate) fn unwrap_call(
    registry: &Registry,
    params: &mut Map<String, Value>,
    held: &mut Held,
) -> Result<(), ErrorObject> {
    let outer = held
        .name
        .as_deref()
        .or_else(|| params.get("name").and_then(Value::as_str));
    if outer != Some(CALL_TOOL) {
        return Ok(());
    }
    let refused = || {
        ErrorObject::invalid_params(
            "call_tool requires `arguments.name`: the name of the tool to call, a string",
        )
    };
    let mut inner = match params.remove("arguments") {
        Some(Value::Object(inner)) => inner,
        _ => return Err(refused()),
    };
    let Some(Value::String(name)) = inner.remove("name") else {
        return Err(refused());
    };
    // `call_tool` itself, or a tool the model may not see (its caller is
    // the model: a view calls its app-only tools by their own names).
    let hidden = || {
        let catalog = registry.tools.snapshot();
        catalog.tools.get(&name).is_some_and(|t| !for_model(t))
    };
    if name == CALL_TOOL || hidden() {
        return Err(ErrorObject::invalid_params(format!("Unknown tool: {name}")));
    }
    params.remove("name");
    held.name = Some(name);
    if let Some(arguments) = inner.remove("arguments") {
        params.insert("arguments".into(), arguments);
    }
    Ok(())
}

/// `tools/list` under tool search: the two tools, then the pinned tools
/// `facts`' caller may see, in catalog order.
pub(crate) fn listed<'a>(
    searcher: &'a Searcher,
    catalog: &'a ToolRegistry,
    facts: &'a RequestFacts,
    ext: &'a Extensions,
) -> impl Iterator<Item = Value> + 'a {
    let pinned = searcher.options.pinned();
    let pins = visible(catalog, facts, ext)
        .filter(move |t| pinned.iter().any(|p| p == t.name()))
        .map(|t| super::to_json(t.tool()));
    searcher.listed.iter().cloned().chain(pins)
}

/// The answer of `search_tools`: the best matches among the tools the
/// caller may see, in the catalog version of the call. Invalid arguments
/// are an `isError` result, as for any tool.
pub(crate) fn search(
    searcher: &Searcher,
    catalog: &ToolRegistry,
    facts: &RequestFacts,
    args: Map<String, Value>,
    ext: &Extensions,
) -> CallToolResult {
    let args: SearchArgs = match check_and_parse(args, &searcher.search_args) {
        Ok(args) => args,
        Err(message) => return CallToolResult::error(message),
    };
    let options = &searcher.options;
    let limit = args.limit.map_or(options.limit(), |n| {
        usize::try_from(n)
            .unwrap_or(usize::MAX)
            .clamp(1, options.max())
    });
    let query = Query::new(&args.query);
    let mut matches: Vec<(u32, &McpToolDef)> = visible(catalog, facts, ext)
        .filter(|t| !Searcher::is_reserved(t.name()) && for_model(t))
        .map(|t| (query.score(t.tool()), t))
        .filter(|(score, _)| query.is_empty() || *score > 0)
        .collect();
    // Stable: ties keep catalog order.
    matches.sort_by_key(|m| std::cmp::Reverse(m.0));
    let tools: Vec<Value> = matches
        .into_iter()
        .take(limit)
        .map(|(_, t)| describe(t))
        .collect();
    let mut structured = Map::with_capacity(1);
    structured.insert("tools".into(), Value::Array(tools));
    let text = serde_json::to_string(&structured).unwrap_or_default();
    CallToolResult::text(text).with_structured(structured)
}

/// Whether the model may see `def` (MCP Apps): its `_meta.ui.visibility`,
/// when present, lists `"model"`. A search result goes to the model, so an
/// app-only tool (`["app"]`, called by its view through the host) is never
/// one.
fn for_model(def: &McpToolDef) -> bool {
    let visibility = def
        .tool()
        .meta
        .as_ref()
        .and_then(|meta| meta.get("ui"))
        .and_then(|ui| ui.get("visibility"));
    match visibility {
        None => true,
        Some(list) => list
            .as_array()
            .is_some_and(|list| list.iter().any(|v| v == "model")),
    }
}

/// One match: the tool's name, title, description and input schema, and
/// its annotations and `_meta` when it has them (as `tools/list` shows
/// them: hints such as `destructiveHint` and an MCP Apps view link).
fn describe(def: &McpToolDef) -> Value {
    let tool = def.tool();
    let mut out = Map::with_capacity(6);
    out.insert("name".into(), Value::String(tool.name.clone()));
    if let Some(title) = &tool.title {
        out.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(description) = &tool.description {
        out.insert("description".into(), Value::String(description.clone()));
    }
    out.insert(
        "inputSchema".into(),
        Value::Object(tool.input_schema.clone()),
    );
    if let Some(annotations) = &tool.annotations {
        out.insert(
            "annotations".into(),
            serde_json::to_value(annotations).unwrap_or(Value::Null),
        );
    }
    if let Some(meta) = &tool.meta {
        out.insert("_meta".into(), Value::Object(meta.clone()));
    }
    Value::Object(out)
}
