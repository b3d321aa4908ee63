//! A skill's entry in `skills/list` and `skills/get`: its URI, its
//! frontmatter verbatim, and every file with its size and digest.

use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::Skill;

/// `sha256:<64 lowercase hex>` of `bytes`: the digest a skill entry lists
/// for each file.
///
/// ```
/// assert_eq!(
///     mcp_core::skills::digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let hash = Sha256::digest(bytes);
    hash.iter().fold(String::from("sha256:"), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// The skill's entry.
pub(crate) fn entry(skill: &Skill) -> Value {
    let resources: Vec<Value> = skill
        .files()
        .iter()
        .map(|f| {
            json!({
                "uri": skill.file_uri(&f.path),
                "digest": digest(&f.bytes),
                "size": f.bytes.len(),
            })
        })
        .collect();
    let mut map = Map::with_capacity(3);
    map.insert("uri".into(), Value::String(skill.uri()));
    map.insert(
        "frontmatter".into(),
        Value::Object(skill.frontmatter().clone()),
    );
    map.insert("resources".into(), Value::Array(resources));
    Value::Object(map)
}
