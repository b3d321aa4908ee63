//! Applying a [`ToolTransforms`] set to tool descriptors: the one function
//! both an in-process mount and a proxied backend use ([`apply`]), the
//! schema edits, and the rewrite of a call's arguments back to what the
//! mounted tool was written for ([`ArgPlan`]).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{ArgEdit, ToolEdit, ToolTransforms, TransformProblem};
use crate::handler::args;
use crate::handler::handle_args::MARKER;
use crate::McpToolDef;

/// The tools a transform set leaves, each with the name it had before
/// (its own), and every problem met on the way.
pub(crate) struct Transformed {
    /// `(own name, transformed tool)`, in the order given, hidden and
    /// withheld tools left out; no two share a name unless two given
    /// tools did.
    pub(crate) tools: Vec<(String, McpToolDef)>,
    /// What could not be applied (empty: everything was).
    pub(crate) problems: Vec<TransformProblem>,
}

/// Applies `transforms` to `tools` (named as their server lists them).
///
/// A hidden tool is left out. A tool whose argument transforms cannot all
/// be applied is left out too (its problems say why), so that an argument
/// meant to be fixed is never served open. A rename that is invalid, or
/// that would give two tools one name, is not made: that tool keeps its
/// own name (and the problem is reported). A transform naming a tool that
/// is not there is reported.
pub(crate) fn apply(transforms: &ToolTransforms, tools: Vec<McpToolDef>) -> Transformed {
    let mut problems = Vec::new();
    for (name, _) in &transforms.tools {
        if !tools.iter().any(|t| t.name() == name) {
            problems.push(TransformProblem::UnknownTool(name.clone()));
        }
    }
    let edits: HashMap<&str, &ToolEdit> = transforms
        .tools
        .iter()
        .map(|(name, edit)| (name.as_str(), edit))
        .collect();
    // Each kept tool: its own name, the name it is to get, and itself.
    let mut kept: Vec<(String, String, McpToolDef)> = Vec::with_capacity(tools.len());
    for def in tools {
        let own = def.name().to_owned();
        let Some(edit) = edits.get(own.as_str()) else {
            kept.push((own.clone(), own, def));
            continue;
        };
        if edit.hide {
            continue;
        }
        let Some(def) = edit_tool(def, edit, &mut problems) else {
            continue;
        };
        let target = match &edit.rename {
            Some(to) if valid_name(to) => to.clone(),
            Some(to) => {
                problems.push(TransformProblem::InvalidName {
                    tool: own.clone(),
                    name: to.clone(),
                });
                own.clone()
            }
            None => own.clone(),
        };
        kept.push((own, target, def));
    }
    undo_colliding_renames(&mut kept, &mut problems);
    let tools = kept
        .into_iter()
        .map(|(own, target, def)| {
            let def = if target == own {
                def
            } else {
                def.renamed(target)
            };
            (own, def)
        })
        .collect();
    Transformed { tools, problems }
}

/// A tool name the spec allows: 1 to 128 of `A-Z a-z 0-9 _ - .`.
fn valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
}

/// Gives back its own name to every renamed tool whose new name another
/// kept tool also ends up with, until no rename collides (each undo is
/// final, so this ends).
fn undo_colliding_renames(
    kept: &mut [(String, String, McpToolDef)],
    problems: &mut Vec<TransformProblem>,
) {
    loop {
        let mut count: HashMap<&str, usize> = HashMap::new();
        for (_, target, _) in kept.iter() {
            *count.entry(target.as_str()).or_default() += 1;
        }
        let colliding: Vec<usize> = kept
            .iter()
            .enumerate()
            .filter(|(_, (own, target, _))| own != target && count[target.as_str()] > 1)
            .map(|(i, _)| i)
            .collect();
        if colliding.is_empty() {
            return;
        }
        for i in colliding {
            let (own, target, _) = &mut kept[i];
            problems.push(TransformProblem::NameTaken {
                tool: own.clone(),
                argument: None,
                name: std::mem::replace(target, own.clone()),
            });
        }
    }
}

/// `def` with `edit`'s description, title, annotations and argument
/// changes; `None` (with the problems recorded) when an argument change
/// cannot be made.
fn edit_tool(
    mut def: McpToolDef,
    edit: &ToolEdit,
    problems: &mut Vec<TransformProblem>,
) -> Option<McpToolDef> {
    if !edit.args.is_empty() {
        let before = problems.len();
        let edited = edit_schema(def.name(), &def.tool().input_schema, &edit.args, problems);
        let (schema, plan) = edited.filter(|_| problems.len() == before)?;
        def = def.with_rewritten_input(schema, Arc::new(move |args| plan.rewrite(args)));
    }
    if let Some(text) = &edit.description {
        def = def.with_description(text.clone());
    }
    if let Some(title) = &edit.title {
        def = def.with_title(title.clone());
    }
    if let Some(annotations) = &edit.annotations {
        def = def.with_annotations(annotations.clone());
    }
    Some(def)
}

/// How a caller's arguments become the mounted tool's: keys renamed,
/// defaults filled in, fixed values set (and refused from the caller).
struct ArgPlan {
    /// Listed name → the tool's own name.
    renamed: HashMap<String, String>,
    /// Own names listed under another name now (a caller sending one is told).
    renamed_away: HashMap<String, String>,
    /// Own name → default.
    defaults: Vec<(String, Value)>,
    /// Own name → fixed value.
    fixed: Vec<(String, Value)>,
}

impl ArgPlan {
    /// The tool's arguments for the caller's `args`, or the text of an
    /// `Invalid arguments` tool error.
    fn rewrite(&self, args: Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut problems = Vec::new();
        let mut out = Map::with_capacity(args.len() + self.fixed.len() + self.defaults.len());
        for (key, value) in args {
            if self.fixed.iter().any(|(name, _)| *name == key) {
                problems.push(format!(
                    "`{key}`: set by the server for this tool; leave it out"
                ));
            } else if let Some(own) = self.renamed.get(&key) {
                out.insert(own.clone(), value);
            } else if let Some(listed) = self.renamed_away.get(&key) {
                problems.push(format!("`{key}`: unknown field; did you mean `{listed}`?"));
            } else {
                out.insert(key, value);
            }
        }
        if !problems.is_empty() {
            return Err(format!("Invalid arguments:\n- {}", problems.join("\n- ")));
        }
        for (name, value) in &self.defaults {
            if out.get(name).is_none_or(Value::is_null) {
                out.insert(name.clone(), value.clone());
            }
        }
        for (name, value) in &self.fixed {
            out.insert(name.clone(), value.clone());
        }
        Ok(out)
    }
}

/// The listed schema and the call's rewrite for `edits` of `tool`'s
/// arguments; `None` when one cannot be made (each reason in `problems`).
fn edit_schema(
    tool: &str,
    schema: &Map<String, Value>,
    edits: &[(String, ArgEdit)],
    problems: &mut Vec<TransformProblem>,
) -> Option<(Map<String, Value>, ArgPlan)> {
    let mut schema = schema.clone();
    let empty = Map::new();
    let properties = match schema.get("properties") {
        Some(Value::Object(p)) => p,
        _ => &empty,
    };
    // The values are checked against the schema with nothing required:
    // only the argument itself is judged.
    let mut loose = schema.clone();
    loose.remove("required");
    let before = problems.len();
    let conflict = |argument: &str, reason: &str| TransformProblem::Conflict {
        tool: tool.to_owned(),
        argument: argument.to_owned(),
        reason: reason.to_owned(),
    };
    for (arg, edit) in edits {
        let Some(property) = properties.get(arg) else {
            problems.push(TransformProblem::UnknownArgument {
                tool: tool.to_owned(),
                argument: arg.clone(),
            });
            continue;
        };
        if edit.fixed.is_some() && (edit.default.is_some() || edit.rename.is_some()) {
            let reason = "a fixed argument is not listed, so it takes no default and no new name";
            problems.push(conflict(arg, reason));
        }
        let value = edit.fixed.as_ref().or(edit.default.as_ref());
        if value.is_some() && property.get(MARKER).is_some() {
            let reason = "a state handle takes no default or fixed value (each caller's handle is checked as theirs)";
            problems.push(conflict(arg, reason));
        }
        if let Some(value) = value {
            let one = Map::from_iter([(arg.clone(), value.clone())]);
            let found = args::problems(&one, &loose);
            if !found.is_empty() {
                problems.push(TransformProblem::BadValue {
                    tool: tool.to_owned(),
                    argument: arg.clone(),
                    reason: found.join("; "),
                });
            }
        }
    }
    // New argument names: none may be a name still listed, or another's.
    let renames: Vec<(&String, &String)> = edits
        .iter()
        .filter_map(|(arg, e)| e.rename.as_ref().map(|to| (arg, to)))
        .collect();
    let fixed: Vec<&String> = edits
        .iter()
        .filter(|(_, e)| e.fixed.is_some())
        .map(|(arg, _)| arg)
        .collect();
    for (i, (arg, to)) in renames.iter().enumerate() {
        let renamed_away = renames.iter().any(|(a, _)| a == to);
        let still_listed = properties.contains_key(to.as_str()) && !renamed_away;
        let twice = renames[..i].iter().any(|(_, t)| t == to);
        if (still_listed && to != arg) || twice || fixed.contains(to) || to.is_empty() {
            problems.push(TransformProblem::NameTaken {
                tool: tool.to_owned(),
                argument: Some((*arg).clone()),
                name: (*to).clone(),
            });
        }
    }
    if problems.len() > before {
        return None;
    }
    let mut plan = ArgPlan {
        renamed: HashMap::new(),
        renamed_away: HashMap::new(),
        defaults: Vec::new(),
        fixed: Vec::new(),
    };
    let mut properties = properties.clone();
    let mut required: Vec<Value> = match schema.get("required") {
        Some(Value::Array(r)) => r.clone(),
        _ => Vec::new(),
    };
    let mut moved = Map::new();
    for (arg, edit) in edits {
        if let Some(value) = &edit.fixed {
            properties.remove(arg);
            required.retain(|r| r.as_str() != Some(arg));
            plan.fixed.push((arg.clone(), value.clone()));
            continue;
        }
        if let Some(value) = &edit.default {
            if let Some(Value::Object(p)) = properties.get_mut(arg) {
                p.insert("default".into(), value.clone());
            }
            required.retain(|r| r.as_str() != Some(arg));
            plan.defaults.push((arg.clone(), value.clone()));
        }
        if let Some(to) = edit.rename.as_ref().filter(|to| *to != arg) {
            if let Some(p) = properties.remove(arg) {
                moved.insert(to.clone(), p);
            }
            plan.renamed.insert(to.clone(), arg.clone());
            plan.renamed_away.insert(arg.clone(), to.clone());
        }
    }
    properties.extend(moved);
    // All at once, so that two arguments may swap names.
    for r in &mut required {
        if let Some(to) = r.as_str().and_then(|own| plan.renamed_away.get(own)) {
            *r = Value::String(to.clone());
        }
    }
    // A name renamed away and taken by another argument is that one's now.
    plan.renamed_away
        .retain(|own, _| !plan.renamed.contains_key(own));
    schema.insert("properties".into(), Value::Object(properties));
    if required.is_empty() {
        schema.remove("required");
    } else {
        schema.insert("required".into(), Value::Array(required));
    }
    Some((schema, plan))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn search() -> McpToolDef {
        McpToolDef::new(
            "search",
            "",
            json!({"type": "object", "properties": {
                "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"}
            }, "required": ["a", "b"]}),
            |args, _ctx: crate::InvokeContext| async move { Value::Object(args).to_string() },
        )
    }

    fn one(transforms: &ToolTransforms) -> McpToolDef {
        let Transformed {
            mut tools,
            problems,
        } = apply(transforms, vec![search()]);
        assert_eq!(problems, []);
        tools.remove(0).1
    }

    #[test]
    fn two_arguments_may_swap_names() {
        let t = ToolTransforms::new()
            .rename_arg("search", "a", "b")
            .rename_arg("search", "b", "a");
        let def = one(&t);
        let schema = &def.tool().input_schema;
        assert_eq!(schema["properties"]["b"]["type"], "string");
        assert_eq!(schema["properties"]["a"]["type"], "integer");
        assert_eq!(schema["required"], json!(["b", "a"]));
    }

    #[test]
    fn a_renamed_argument_may_have_a_default_under_its_new_name() {
        let t = ToolTransforms::new()
            .rename_arg("search", "b", "count")
            .default("search", "b", 3);
        let def = one(&t);
        let schema = &def.tool().input_schema;
        assert_eq!(schema["required"], json!(["a"]));
        assert_eq!(schema["properties"]["count"]["default"], 3);
        assert!(schema["properties"].get("b").is_none());
    }

    #[test]
    fn the_plan_maps_fills_and_refuses() {
        let plan = ArgPlan {
            renamed: HashMap::from([("count".to_owned(), "b".to_owned())]),
            renamed_away: HashMap::from([("b".to_owned(), "count".to_owned())]),
            defaults: vec![("b".to_owned(), json!(3))],
            fixed: vec![("c".to_owned(), json!(true))],
        };
        let args = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert_eq!(
            plan.rewrite(args(json!({"a": "x"}))),
            Ok(args(json!({"a": "x", "b": 3, "c": true})))
        );
        assert_eq!(
            plan.rewrite(args(json!({"a": "x", "count": 7}))),
            Ok(args(json!({"a": "x", "b": 7, "c": true})))
        );
        assert_eq!(
            plan.rewrite(args(json!({"count": null}))),
            Ok(args(json!({"b": 3, "c": true})))
        );
        let refused = plan.rewrite(args(json!({"b": 1, "c": false})));
        let Err(message) = refused else {
            panic!("refused: {refused:?}")
        };
        assert!(message.starts_with("Invalid arguments:\n- "), "{message}");
        assert!(message.contains("`c`: set by the server"), "{message}");
        assert!(message.contains("did you mean `count`"), "{message}");
    }
}
