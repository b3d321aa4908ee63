//! The skills extension in the pipeline: `skills/list`, `skills/get` and
//! `resources/directory/read` over the skills a server publishes (their
//! files are ordinary resources, registered at build time).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::registry::Registry;
use super::request_facts::RequestFacts;
use crate::handler::resource::McpResourceDef;
use crate::protocol::{ErrorObject, ResourceContents};
use crate::skills::{entry, Skill};

/// The MIME type of a directory child.
const DIRECTORY: &str = "inode/directory";

/// The skills of a server, with their entries and directories computed once.
pub(crate) struct SkillCatalog {
    /// Each skill's URI and entry, in listing order.
    entries: Vec<(String, Value)>,
    /// Directory URI → its direct children (`{uri, name, mimeType}`).
    directories: BTreeMap<String, Vec<Value>>,
}

impl SkillCatalog {
    pub(crate) fn new(skills: &[Skill]) -> Self {
        let entries = skills.iter().map(|s| (s.uri(), entry(s))).collect();
        let mut directories: BTreeMap<String, BTreeMap<String, Value>> = BTreeMap::new();
        for skill in skills {
            let root = format!("skill://{}", skill.path());
            directories.entry(root.clone()).or_default();
            for file in skill.files() {
                let mut dir = root.clone();
                let segments: Vec<&str> = file.path.split('/').collect();
                for (i, segment) in segments.iter().enumerate() {
                    let uri = format!("{dir}/{segment}");
                    let last = i + 1 == segments.len();
                    let child = if last {
                        json!({"uri": uri, "name": segment, "mimeType": mime_type(segment, &file.bytes)})
                    } else {
                        json!({"uri": uri, "name": segment, "mimeType": DIRECTORY})
                    };
                    directories
                        .entry(dir.clone())
                        .or_default()
                        .insert(uri.clone(), child);
                    if !last {
                        directories.entry(uri.clone()).or_default();
                    }
                    dir = uri;
                }
            }
        }
        Self {
            entries,
            directories: directories
                .into_iter()
                .map(|(dir, children)| (dir, children.into_values().collect()))
                .collect(),
        }
    }

    /// The capability: skills, with `resources/directory/read`.
    pub(crate) fn capability() -> Value {
        json!({"directoryRead": true})
    }
}

/// The resources that serve every file of `skills`; `SKILL.md` is named
/// and described by its frontmatter and typed `text/markdown`.
pub(crate) fn resources(skills: &[Skill]) -> Vec<McpResourceDef> {
    let mut out = Vec::new();
    for skill in skills {
        for file in skill.files() {
            let uri = skill.file_uri(&file.path);
            let mime = mime_type(&file.path, &file.bytes);
            let bytes = std::sync::Arc::clone(&file.bytes);
            let read_uri = uri.clone();
            let read_mime = mime.to_owned();
            let name = if file.path == "SKILL.md" {
                skill.name().to_owned()
            } else {
                file.path.clone()
            };
            let mut def = McpResourceDef::new(uri, name, move |_req, _ctx| {
                let contents = match std::str::from_utf8(&bytes) {
                    Ok(text) => ResourceContents::text(read_uri.clone(), text),
                    Err(_) => ResourceContents::blob(read_uri.clone(), &bytes),
                };
                let contents = contents.with_mime_type(read_mime.clone());
                async move { contents }
            })
            .with_mime_type(mime);
            if file.path == "SKILL.md" {
                def = def.with_description(skill.description());
            }
            out.push(def);
        }
    }
    out
}

/// The MIME type of a skill file, by extension (UTF-8 text otherwise
/// `text/plain`, bytes `application/octet-stream`).
fn mime_type(path: &str, bytes: &[u8]) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("py") => "text/x-python",
        Some("sh") => "application/x-sh",
        Some("html" | "htm") => "text/html",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

fn catalog(skills: Option<&SkillCatalog>) -> Result<&SkillCatalog, ErrorObject> {
    skills.ok_or_else(|| ErrorObject::method_not_found("skills/list"))
}

fn string_param<'a>(params: &'a Map<String, Value>, key: &str) -> Result<&'a str, ErrorObject> {
    params
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorObject::invalid_params(format!("`{key}` must be a string")))
}

/// Adds the list cache hint to a 2026-07-28 result.
fn cached(registry: &Registry, facts: &RequestFacts, mut map: Map<String, Value>) -> Value {
    if facts.is_modern() {
        registry.list_cache.apply(&mut map);
    }
    Value::Object(map)
}

/// `skills/list`: every entry, in one page.
pub(crate) fn list(
    skills: Option<&SkillCatalog>,
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    super::methods::check_cursor(params)?;
    let skills = catalog(skills)?;
    let mut map = Map::new();
    map.insert(
        "skills".into(),
        Value::Array(skills.entries.iter().map(|(_, e)| e.clone()).collect()),
    );
    Ok(cached(registry, facts, map))
}

/// `skills/get`: the entry of the skill whose `SKILL.md` is `uri`
/// (`-32602` for any other URI).
pub(crate) fn get(
    skills: Option<&SkillCatalog>,
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    let uri = string_param(params, "uri")?;
    let skills = catalog(skills)?;
    let entry = skills
        .entries
        .iter()
        .find(|(u, _)| u == uri)
        .map(|(_, e)| e.clone())
        .ok_or_else(|| unknown("skill", uri))?;
    let mut map = Map::new();
    map.insert("skill".into(), entry);
    Ok(cached(registry, facts, map))
}

/// `resources/directory/read`: the direct children of a skill directory
/// (subdirectories typed `inode/directory`), in one page; `-32602` for a
/// URI that is not a served directory.
pub(crate) fn directory_read(
    skills: Option<&SkillCatalog>,
    registry: &Registry,
    facts: &RequestFacts,
    params: &Map<String, Value>,
) -> Result<Value, ErrorObject> {
    super::methods::check_cursor(params)?;
    let uri = string_param(params, "uri")?;
    let skills = catalog(skills)?;
    let key = uri.strip_suffix('/').unwrap_or(uri);
    let children = skills
        .directories
        .get(key)
        .ok_or_else(|| unknown("directory", uri))?;
    let mut map = Map::new();
    map.insert("resources".into(), Value::Array(children.clone()));
    Ok(cached(registry, facts, map))
}

fn unknown(what: &str, uri: &str) -> ErrorObject {
    let shown: String = uri.chars().take(256).collect();
    ErrorObject::invalid_params(format!("Unknown {what}: {shown}"))
}
