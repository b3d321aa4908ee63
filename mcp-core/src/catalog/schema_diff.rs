//! Comparing two JSON Schemas of one argument object (what a client may
//! send: narrowing breaks) or one structured result (what a client reads:
//! widening or removing breaks).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::change::{pointer, Severity};

/// Which way values flow through the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flow {
    /// Arguments: the client writes, the server reads.
    Input,
    /// A structured result: the server writes, the client reads.
    Output,
}

/// The severity of a change that lets fewer values through: breaking for
/// arguments (a client's value may now be refused), compatible for results.
fn narrowing(flow: Flow) -> Severity {
    match flow {
        Flow::Input => Severity::Breaking,
        Flow::Output => Severity::Compatible,
    }
}

/// The severity of a change that lets more values through: compatible for
/// arguments, breaking for results (a client may get a value it does not
/// expect).
fn widening(flow: Flow) -> Severity {
    match flow {
        Flow::Input => Severity::Compatible,
        Flow::Output => Severity::Breaking,
    }
}

/// One change found: its severity, path and description.
pub(super) type Found = (Severity, String, String);

/// Compares `old` with `new` at `path`, appending what changed to `out`.
pub(super) fn compare(old: &Value, new: &Value, path: &str, flow: Flow, out: &mut Vec<Found>) {
    if old == new {
        return;
    }
    let (Some(o), Some(n)) = (old.as_object(), new.as_object()) else {
        // `true`/`false` schemas, or anything else: judged whole.
        out.push((
            Severity::Breaking,
            path.to_owned(),
            "schema replaced".into(),
        ));
        return;
    };
    // Two lists of strings admit exactly their strings, whatever `type`
    // says beside them (an older lockfile has none, the listed form says
    // `string`): the lists are compared, by `enums`.
    let enumerations = value_notes(o).zip(value_notes(n));
    if enumerations.is_none() {
        types(o, n, path, flow, out);
    }
    enums(o, n, path, flow, out);
    bounds(o, n, path, flow, out);
    properties(o, n, path, flow, out);
    if let (Some(oi), Some(ni)) = (o.get("items"), n.get("items")) {
        compare(oi, ni, &format!("{path}/items"), flow, out);
    }
    // An enumeration written as alternatives (documented names) is
    // compared as a list, by `enums`; only the names' notes are left.
    if let (Some((old_notes, new_notes)), Some(listed_old), Some(listed_new)) =
        (&enumerations, listed(o), listed(n))
    {
        let both = listed_old.iter().filter(|v| listed_new.contains(v));
        notes(old_notes, new_notes, both, path, out);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if enumerations.is_some() && key != "allOf" {
            continue;
        }
        alternatives(o.get(key), n.get(key), &format!("{path}/{key}"), flow, out);
    }
    for key in ["description", "title", "default", "examples"] {
        if o.get(key) != n.get(key) {
            out.push((
                Severity::Compatible,
                format!("{path}/{key}"),
                format!("{key} changed"),
            ));
        }
    }
}

/// The schema's `type` as a set (`None`: any type).
fn type_set(schema: &Map<String, Value>) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(t) => Some(BTreeSet::from([t.clone()])),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    }
}

/// True when every value of type set `small` is also of `large`.
fn covers(large: &Option<BTreeSet<String>>, small: &Option<BTreeSet<String>>) -> bool {
    match (large, small) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(l), Some(s)) => s
            .iter()
            .all(|t| l.contains(t) || (t == "integer" && l.contains("number"))),
    }
}

fn show(types: &Option<BTreeSet<String>>) -> String {
    match types {
        None => "any".into(),
        Some(t) => t.iter().cloned().collect::<Vec<_>>().join(" | "),
    }
}

fn types(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    flow: Flow,
    out: &mut Vec<Found>,
) {
    let (ot, nt) = (type_set(o), type_set(n));
    if ot == nt {
        return;
    }
    let widened = covers(&nt, &ot);
    let narrowed = covers(&ot, &nt);
    let what = format!(
        "type {} from {} to {}",
        match (widened, narrowed) {
            (true, _) => "widened",
            (_, true) => "narrowed",
            _ => "changed",
        },
        show(&ot),
        show(&nt)
    );
    let severity = match (flow, widened, narrowed) {
        (Flow::Input, true, _) | (Flow::Output, false, true) => Severity::Compatible,
        _ => Severity::Breaking,
    };
    out.push((severity, format!("{path}/type"), what));
}

/// The values a schema allows, when it lists them: `enum`, `const`, or
/// alternatives that each list strings (an enum of documented names).
fn listed(schema: &Map<String, Value>) -> Option<Vec<Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.clone());
    }
    if let Some(c) = schema.get("const") {
        return Some(vec![c.clone()]);
    }
    crate::schema::listed_strings(schema).map(|values| values.into_iter().cloned().collect())
}

/// The annotations (`description`, `title`, …) of each value of an
/// enumeration of strings, read from its alternatives (none when it has
/// no `anyOf`/`oneOf`); `None` when the schema is not such an enumeration.
fn value_notes(schema: &Map<String, Value>) -> Option<BTreeMap<String, Map<String, Value>>> {
    crate::schema::listed_strings(schema)?;
    if !schema.contains_key("anyOf") && !schema.contains_key("oneOf") {
        return Some(BTreeMap::new());
    }
    let mut notes = BTreeMap::new();
    for (values, annotations) in crate::schema::alternatives_listing(schema)? {
        for value in values.iter().filter_map(|v| v.as_str()) {
            let entry: &mut Map<String, Value> = notes.entry(value.to_owned()).or_default();
            for (key, note) in &annotations {
                entry.insert((*key).clone(), (*note).clone());
            }
        }
    }
    Some(notes)
}

/// A changed note (a description, a title) of a value both enumerations
/// list (`both`): compatible, as any documentation change.
fn notes<'a>(
    old: &BTreeMap<String, Map<String, Value>>,
    new: &BTreeMap<String, Map<String, Value>>,
    both: impl Iterator<Item = &'a Value>,
    path: &str,
    out: &mut Vec<Found>,
) {
    let none = Map::new();
    for value in both.filter_map(Value::as_str) {
        let o = old.get(value).unwrap_or(&none);
        let n = new.get(value).unwrap_or(&none);
        let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
        for key in keys.into_iter().filter(|k| o.get(*k) != n.get(*k)) {
            out.push((
                Severity::Compatible,
                format!("{path}/enum"),
                format!("{key} of value {} changed", Value::from(value)),
            ));
        }
    }
}

fn enums(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    flow: Flow,
    out: &mut Vec<Found>,
) {
    let at = format!("{path}/enum");
    match (listed(o), listed(n)) {
        (Some(ov), Some(nv)) => {
            let removed: Vec<String> = ov
                .iter()
                .filter(|v| !nv.contains(v))
                .map(Value::to_string)
                .collect();
            let added: Vec<String> = nv
                .iter()
                .filter(|v| !ov.contains(v))
                .map(Value::to_string)
                .collect();
            if !removed.is_empty() {
                let severity = narrowing(flow);
                out.push((
                    severity,
                    at.clone(),
                    format!("enum value(s) removed: {}", removed.join(", ")),
                ));
            }
            if !added.is_empty() {
                let severity = widening(flow);
                out.push((
                    severity,
                    at,
                    format!("enum value(s) added: {}", added.join(", ")),
                ));
            }
        }
        (None, Some(_)) => {
            let severity = narrowing(flow);
            out.push((severity, at, "restricted to a list of values".into()));
        }
        (Some(_), None) => {
            let severity = widening(flow);
            out.push((
                severity,
                at,
                "no longer restricted to a list of values".into(),
            ));
        }
        (None, None) => {}
    }
}

/// Lower bounds (a larger value narrows), upper bounds (a smaller value
/// narrows), and string checks (any new or changed one narrows).
fn bounds(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    flow: Flow,
    out: &mut Vec<Found>,
) {
    let lower = [
        "minimum",
        "exclusiveMinimum",
        "minLength",
        "minItems",
        "minProperties",
    ];
    let upper = [
        "maximum",
        "exclusiveMaximum",
        "maxLength",
        "maxItems",
        "maxProperties",
    ];
    let mut push = |key: &str, narrowed: bool| {
        let severity = match (flow, narrowed) {
            (Flow::Input, true) | (Flow::Output, false) => Severity::Breaking,
            _ => Severity::Compatible,
        };
        let what = if narrowed { "narrowed" } else { "widened" };
        out.push((severity, format!("{path}/{key}"), format!("{key} {what}")));
    };
    for key in lower.iter().chain(upper.iter()) {
        let (ov, nv) = (
            o.get(*key).and_then(Value::as_f64),
            n.get(*key).and_then(Value::as_f64),
        );
        let is_lower = lower.contains(key);
        match (ov, nv) {
            (Some(a), Some(b)) if a != b => push(key, if is_lower { b > a } else { b < a }),
            (None, Some(_)) => push(key, true),
            (Some(_), None) => push(key, false),
            _ => {}
        }
    }
    for key in ["pattern", "format", "multipleOf"] {
        match (o.get(key), n.get(key)) {
            (a, b) if a == b => {}
            (Some(_), None) => push(key, false),
            _ => push(key, true),
        }
    }
}

fn required(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn properties(
    o: &Map<String, Value>,
    n: &Map<String, Value>,
    path: &str,
    flow: Flow,
    out: &mut Vec<Found>,
) {
    let empty = Map::new();
    let op = o
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let np = n
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let (or, nr) = (required(o), required(n));
    let word = if flow == Flow::Input {
        "property"
    } else {
        "output field"
    };
    for (name, old) in op {
        let at = format!("{path}/properties/{}", pointer(name));
        match np.get(name) {
            None => out.push((
                Severity::Breaking,
                at,
                format!("{word} `{name}` removed (a rename is a removal and an addition)"),
            )),
            Some(new) => {
                match (or.contains(name), nr.contains(name)) {
                    (false, true) => {
                        let severity = narrowing(flow);
                        out.push((
                            severity,
                            at.clone(),
                            format!("{word} `{name}` made required"),
                        ));
                    }
                    (true, false) => {
                        let severity = widening(flow);
                        out.push((
                            severity,
                            at.clone(),
                            format!("{word} `{name}` made optional"),
                        ));
                    }
                    _ => {}
                }
                compare(old, new, &at, flow, out);
            }
        }
    }
    for name in np.keys().filter(|k| !op.contains_key(*k)) {
        let at = format!("{path}/properties/{}", pointer(name));
        let severity = if flow == Flow::Input && nr.contains(name) {
            Severity::Breaking
        } else {
            Severity::Compatible
        };
        let kind = if nr.contains(name) {
            "required"
        } else {
            "optional"
        };
        out.push((severity, at, format!("new {kind} {word} `{name}`")));
    }
    if flow == Flow::Input {
        let closed =
            |s: &Map<String, Value>| s.get("additionalProperties") == Some(&Value::Bool(false));
        match (closed(o), closed(n)) {
            (false, true) => out.push((
                Severity::Breaking,
                format!("{path}/additionalProperties"),
                "extra properties now refused".into(),
            )),
            (true, false) => out.push((
                Severity::Compatible,
                format!("{path}/additionalProperties"),
                "extra properties now accepted".into(),
            )),
            _ => {}
        }
    }
}

fn alternatives(
    o: Option<&Value>,
    n: Option<&Value>,
    path: &str,
    flow: Flow,
    out: &mut Vec<Found>,
) {
    match (o.and_then(Value::as_array), n.and_then(Value::as_array)) {
        (Some(a), Some(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                compare(x, y, &format!("{path}/{i}"), flow, out);
            }
        }
        (None, None) => {}
        _ if o == n => {}
        _ => out.push((
            Severity::Breaking,
            path.to_owned(),
            "alternatives changed".into(),
        )),
    }
}
