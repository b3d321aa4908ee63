//! Every change between two catalogs, classified.
//!
//! **Breaking**: a tool, prompt, resource or template removed (a rename is
//! a removal and an addition); an argument removed; an optional argument
//! made required or a new required one; a type narrowed; an enum value
//! removed; an output field removed, made optional or its type changed; a
//! safety hint flipped the unsafe way (`readOnlyHint` no longer true,
//! `destructiveHint` now true, `idempotentHint` no longer true,
//! `openWorldHint` now true — the spec's defaults apply when absent); a
//! resource's MIME type changed; a protocol revision no longer served.
//!
//! **Compatible**: anything added that nobody has to send (a tool, an
//! optional argument, an enum value of an argument), a type widened, a
//! description or title changed, a hint flipped the safe way.
//!
//! Paths are JSON Pointers into the lockfile's revision entry
//! (`/tools/get_weather/inputSchema/properties/city`), prefixed with the
//! revisions they apply to.

use std::collections::BTreeMap;

use serde_json::Value;

use super::change::pointer;
pub use super::change::{Change, Severity};
use super::schema_diff::{compare, Flow, Found};
use super::{Catalog, Surface};

/// Every change from `old` to `new`, breaking ones first, each once with
/// every revision it shows in.
pub fn diff(old: &Catalog, new: &Catalog) -> Vec<Change> {
    let mut merged: BTreeMap<(Severity, String, String), Vec<String>> = BTreeMap::new();
    for (revision, old_surface) in &old.revisions {
        let mut found = Vec::new();
        match new.revisions.get(revision) {
            Some(new_surface) => diff_surface(old_surface, new_surface, &mut found),
            None => found.push((
                Severity::Breaking,
                String::new(),
                "revision no longer served".into(),
            )),
        }
        for (severity, path, what) in found {
            merged
                .entry((severity, path, what))
                .or_default()
                .push(revision.clone());
        }
    }
    for revision in new
        .revisions
        .keys()
        .filter(|r| !old.revisions.contains_key(*r))
    {
        merged
            .entry((
                Severity::Compatible,
                String::new(),
                "revision newly served".into(),
            ))
            .or_default()
            .push(revision.clone());
    }
    merged
        .into_iter()
        .map(|((severity, path, what), revisions)| Change {
            severity,
            revisions,
            path,
            what,
        })
        .collect()
}

/// The changes between two surfaces of one revision.
pub(super) fn diff_surface(old: &Surface, new: &Surface, out: &mut Vec<Found>) {
    entries(&old.tools, &new.tools, "tools", "tool", out, tool);
    entries(&old.prompts, &new.prompts, "prompts", "prompt", out, prompt);
    entries(
        &old.resources,
        &new.resources,
        "resources",
        "resource",
        out,
        resource,
    );
    entries(
        &old.resource_templates,
        &new.resource_templates,
        "resourceTemplates",
        "resource template",
        out,
        resource,
    );
}

type Compare = fn(&Value, &Value, &str, &mut Vec<Found>);

fn entries(
    old: &BTreeMap<String, Value>,
    new: &BTreeMap<String, Value>,
    part: &str,
    word: &str,
    out: &mut Vec<Found>,
    each: Compare,
) {
    for (key, old_entry) in old {
        let path = format!("/{part}/{}", pointer(key));
        match new.get(key) {
            None => out.push((
                Severity::Breaking,
                path,
                format!("{word} `{key}` removed (a rename is a removal and an addition)"),
            )),
            Some(new_entry) => each(old_entry, new_entry, &path, out),
        }
    }
    for key in new.keys().filter(|k| !old.contains_key(*k)) {
        out.push((
            Severity::Compatible,
            format!("/{part}/{}", pointer(key)),
            format!("new {word} `{key}`"),
        ));
    }
}

/// Members whose change is only wording.
const WORDING: &[&str] = &["description", "title", "icons"];

fn wording(old: &Value, new: &Value, path: &str, skip: &[&str], out: &mut Vec<Found>) {
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        return;
    };
    let keys: std::collections::BTreeSet<&String> = o.keys().chain(n.keys()).collect();
    for key in keys {
        if skip.contains(&key.as_str()) || o.get(key) == n.get(key) {
            continue;
        }
        let severity = if WORDING.contains(&key.as_str()) {
            Severity::Compatible
        } else {
            // A member this classifier does not know: flagged for review.
            Severity::Breaking
        };
        out.push((
            severity,
            format!("{path}/{}", pointer(key)),
            format!("{key} changed"),
        ));
    }
}

fn tool(old: &Value, new: &Value, path: &str, out: &mut Vec<Found>) {
    let empty = Value::Object(serde_json::Map::new());
    let input = |v: &Value| {
        v.get("inputSchema")
            .cloned()
            .unwrap_or_else(|| empty.clone())
    };
    compare(
        &input(old),
        &input(new),
        &format!("{path}/inputSchema"),
        Flow::Input,
        out,
    );
    let at = format!("{path}/outputSchema");
    match (old.get("outputSchema"), new.get("outputSchema")) {
        (Some(o), Some(n)) => compare(o, n, &at, Flow::Output, out),
        (Some(_), None) => out.push((Severity::Breaking, at, "output schema removed".into())),
        (None, Some(_)) => out.push((Severity::Compatible, at, "output schema added".into())),
        (None, None) => {}
    }
    hints(
        old.get("annotations"),
        new.get("annotations"),
        &format!("{path}/annotations"),
        out,
    );
    wording(
        old,
        new,
        path,
        &["name", "inputSchema", "outputSchema", "annotations"],
        out,
    );
}

/// A hint, its default when absent (the spec's), and which value is safe.
const HINTS: &[(&str, bool, bool)] = &[
    ("readOnlyHint", false, true),
    ("destructiveHint", true, false),
    ("idempotentHint", false, true),
    ("openWorldHint", true, false),
];

fn hints(old: Option<&Value>, new: Option<&Value>, path: &str, out: &mut Vec<Found>) {
    let get = |a: Option<&Value>, key: &str, default: bool| {
        a.and_then(|a| a.get(key))
            .and_then(Value::as_bool)
            .unwrap_or(default)
    };
    for (key, default, safe) in HINTS {
        let (o, n) = (get(old, key, *default), get(new, key, *default));
        if o != n {
            let severity = if n == *safe {
                Severity::Compatible
            } else {
                Severity::Breaking
            };
            out.push((
                severity,
                format!("{path}/{key}"),
                format!("{key} {o} -> {n}"),
            ));
        }
    }
    let empty = Value::Object(serde_json::Map::new());
    let keys: Vec<&str> = HINTS.iter().map(|h| h.0).collect();
    wording(
        old.unwrap_or(&empty),
        new.unwrap_or(&empty),
        path,
        &keys,
        out,
    );
}

fn prompt(old: &Value, new: &Value, path: &str, out: &mut Vec<Found>) {
    let args = |v: &Value| -> BTreeMap<String, Value> {
        v.get("arguments")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| Some((x.get("name")?.as_str()?.to_owned(), x.clone())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let required = |v: &Value| v.get("required").and_then(Value::as_bool).unwrap_or(false);
    let (oa, na) = (args(old), args(new));
    for (name, o) in &oa {
        let at = format!("{path}/arguments/{}", pointer(name));
        match na.get(name) {
            None => out.push((Severity::Breaking, at, format!("argument `{name}` removed"))),
            Some(n) => {
                match (required(o), required(n)) {
                    (false, true) => out.push((
                        Severity::Breaking,
                        at.clone(),
                        format!("argument `{name}` made required"),
                    )),
                    (true, false) => out.push((
                        Severity::Compatible,
                        at.clone(),
                        format!("argument `{name}` made optional"),
                    )),
                    _ => {}
                }
                wording(o, n, &at, &["name", "required"], out);
            }
        }
    }
    for (name, n) in na.iter().filter(|(k, _)| !oa.contains_key(*k)) {
        let at = format!("{path}/arguments/{}", pointer(name));
        let (severity, kind) = if required(n) {
            (Severity::Breaking, "required")
        } else {
            (Severity::Compatible, "optional")
        };
        out.push((severity, at, format!("new {kind} argument `{name}`")));
    }
    wording(old, new, path, &["name", "arguments"], out);
}

fn resource(old: &Value, new: &Value, path: &str, out: &mut Vec<Found>) {
    if old.get("mimeType") != new.get("mimeType") {
        out.push((
            Severity::Breaking,
            format!("{path}/mimeType"),
            "MIME type changed".into(),
        ));
    }
    wording(
        old,
        new,
        path,
        &[
            "uri",
            "uriTemplate",
            "mimeType",
            "name",
            "size",
            "annotations",
        ],
        out,
    );
    for key in ["name", "annotations", "size"] {
        if old.get(key) != new.get(key) {
            out.push((
                Severity::Compatible,
                format!("{path}/{key}"),
                format!("{key} changed"),
            ));
        }
    }
}
