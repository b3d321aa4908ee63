//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): a
//! server publishes agent skills — a `SKILL.md` with YAML frontmatter and
//! the files beside it — as resources under `skill://<skill-path>/…`, with
//! `skills/list` and `skills/get` returning each skill's entry: its URI,
//! its frontmatter, and every file with its size and SHA-256 digest.
//!
//! Skills come from a directory ([`Skill::from_dir`],
//! [`McpServerBuilder::skills_dir`](crate::McpServerBuilder::skills_dir)) or
//! from code ([`Skill::new`]); add them with
//! [`McpServerBuilder::skill`](crate::McpServerBuilder::skill).
//!
//! ```
//! use mcp_core::skills::Skill;
//!
//! let skill = Skill::new("---\nname: greeting\ndescription: Greets people\n---\nSay hello.\n")
//!     .expect("valid SKILL.md")
//!     .with_file("examples/hello.txt", b"Hello!".to_vec())
//!     .expect("valid file");
//! assert_eq!(skill.uri(), "skill://greeting/SKILL.md");
//! assert_eq!(skill.files().len(), 2);
//! ```

mod frontmatter;
mod load;
mod manifest;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

pub use manifest::digest;
pub(crate) use manifest::entry;

/// The extension's identifier, as it appears under `extensions` in
/// capabilities.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The most files one skill may have (its `SKILL.md` included).
pub const MAX_FILES_PER_SKILL: usize = 512;

/// The most bytes one skill's files may hold together (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One skill: where it is published, its frontmatter, and its files.
#[derive(Clone, PartialEq)]
pub struct Skill {
    path: String,
    frontmatter: Map<String, Value>,
    files: Vec<SkillFile>,
}

impl fmt::Debug for Skill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skill")
            .field("uri", &self.uri())
            .field("files", &self.files.len())
            .finish_non_exhaustive()
    }
}

/// One file of a skill.
#[derive(Clone, PartialEq)]
pub struct SkillFile {
    /// Its path inside the skill directory (`SKILL.md`, `references/FORMS.md`).
    pub path: String,
    /// Its raw bytes (what the digest covers).
    pub bytes: Arc<[u8]>,
}

impl fmt::Debug for SkillFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillFile")
            .field("path", &self.path)
            .field("size", &self.bytes.len())
            .finish()
    }
}

/// Why a skill is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillError(pub String);

impl fmt::Display for SkillError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SkillError {}

impl Skill {
    /// A skill from the text of its `SKILL.md`, published at
    /// `skill://<name>/SKILL.md` where `<name>` is the frontmatter `name`.
    ///
    /// # Errors
    /// No frontmatter (or a construct of YAML the reader does not support),
    /// a missing `name` or `description`, or a name that breaks the Agent
    /// Skills naming rules (1–64 of `a-z 0-9 -`, no leading, trailing or
    /// doubled hyphen).
    pub fn new(skill_md: impl Into<String>) -> Result<Self, SkillError> {
        let text: String = skill_md.into();
        let frontmatter = frontmatter::parse(&text).map_err(SkillError)?;
        let name = match frontmatter.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => return Err(SkillError("the frontmatter has no string `name`".into())),
        };
        if !matches!(frontmatter.get("description"), Some(Value::String(d)) if !d.is_empty()) {
            return Err(SkillError(
                "the frontmatter has no non-empty string `description`".into(),
            ));
        }
        if !valid_name(&name) {
            return Err(SkillError(format!(
                "skill name `{name}`: use 1 to 64 of a-z 0-9 and `-`, no leading, trailing or doubled `-`"
            )));
        }
        Ok(Self {
            path: name,
            frontmatter,
            files: vec![SkillFile {
                path: "SKILL.md".into(),
                bytes: Arc::from(text.into_bytes()),
            }],
        })
    }

    /// Publishes the skill under `prefix` (`skill://<prefix>/<name>/SKILL.md`),
    /// to group skills; the last segment stays the skill's name.
    ///
    /// # Errors
    /// A prefix segment that is empty or not of `A-Z a-z 0-9 . _ -`.
    pub fn under(mut self, prefix: &str) -> Result<Self, SkillError> {
        check_relative(prefix)?;
        self.path = format!("{prefix}/{}", self.path);
        Ok(self)
    }

    /// Adds a file beside `SKILL.md` at `path` (relative, `/`-separated).
    ///
    /// # Errors
    /// A path that is absolute, climbs out (`..`), has an empty segment or a
    /// character outside `A-Z a-z 0-9 . _ -`; a path already there; more
    /// than [`MAX_FILES_PER_SKILL`] files or [`MAX_SKILL_BYTES`] bytes.
    pub fn with_file(mut self, path: &str, bytes: Vec<u8>) -> Result<Self, SkillError> {
        check_relative(path)?;
        if self.files.iter().any(|f| f.path == path) {
            return Err(SkillError(format!("file `{path}` is there twice")));
        }
        if self.files.len() >= MAX_FILES_PER_SKILL {
            return Err(SkillError(format!(
                "skill `{}` has more than {MAX_FILES_PER_SKILL} files",
                self.path
            )));
        }
        let total: u64 =
            self.files.iter().map(|f| f.bytes.len() as u64).sum::<u64>() + bytes.len() as u64;
        if total > MAX_SKILL_BYTES {
            return Err(SkillError(format!(
                "skill `{}` holds more than {MAX_SKILL_BYTES} bytes",
                self.path
            )));
        }
        self.files.push(SkillFile {
            path: path.to_owned(),
            bytes: Arc::from(bytes),
        });
        Ok(self)
    }

    /// Reads a skill directory: its `SKILL.md` and every other file under
    /// it (hidden files and symbolic links are skipped).
    ///
    /// Nothing outside `dir` is read: every file, `SKILL.md` included, is
    /// opened only if it is a regular file, not a symbolic link (on Unix
    /// with `O_NOFOLLOW`), whose canonical path lies inside `dir`'s.
    ///
    /// # Errors
    /// An unreadable directory or file, a `SKILL.md` that is a symbolic
    /// link or not a regular file, a file whose canonical path leaves
    /// `dir`, or what [`new`](Self::new) and [`with_file`](Self::with_file)
    /// refuse.
    pub fn from_dir(dir: impl AsRef<std::path::Path>) -> Result<Self, SkillError> {
        load::from_dir(dir.as_ref())
    }

    /// The skill's name (the frontmatter `name`).
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The skill path (`<prefix>/<name>`, or the name alone).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The URI of its `SKILL.md`: `skill://<skill-path>/SKILL.md`.
    pub fn uri(&self) -> String {
        self.file_uri("SKILL.md")
    }

    /// The URI of one of its files.
    pub fn file_uri(&self, path: &str) -> String {
        format!("skill://{}/{path}", self.path)
    }

    /// Its frontmatter, as parsed.
    pub fn frontmatter(&self) -> &Map<String, Value> {
        &self.frontmatter
    }

    /// The frontmatter `description`.
    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// Its files, `SKILL.md` first.
    pub fn files(&self) -> &[SkillFile] {
        &self.files
    }
}

/// The Agent Skills naming rule.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

fn check_relative(path: &str) -> Result<(), SkillError> {
    let ok = !path.is_empty()
        && path.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && segment
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        });
    if ok {
        Ok(())
    } else {
        Err(SkillError(format!(
            "path `{path}`: use relative `/`-separated segments of A-Z a-z 0-9 . _ -"
        )))
    }
}

pub(crate) use load::skills_under;
