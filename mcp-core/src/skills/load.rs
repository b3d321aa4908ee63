//! Reading skills from the file system.

use std::fs;
use std::path::Path;

use super::{Skill, SkillError, MAX_FILES_PER_SKILL};

fn io_error(path: &Path, e: &std::io::Error) -> SkillError {
    SkillError(format!("{}: {e}", path.display()))
}

/// One skill directory: `SKILL.md` plus every other file under it.
pub(super) fn from_dir(dir: &Path) -> Result<Skill, SkillError> {
    let skill_md = dir.join("SKILL.md");
    let text = fs::read_to_string(&skill_md).map_err(|e| io_error(&skill_md, &e))?;
    let mut skill =
        Skill::new(text).map_err(|e| SkillError(format!("{}: {e}", skill_md.display())))?;
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    for rel in files {
        if rel == "SKILL.md" {
            continue;
        }
        let path = dir.join(&rel);
        let bytes = fs::read(&path).map_err(|e| io_error(&path, &e))?;
        skill = skill.with_file(&rel, bytes)?;
    }
    Ok(skill)
}

/// The relative paths of the regular files under `dir` (hidden entries and
/// symbolic links skipped), bounded by the file limit.
fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), SkillError> {
    let entries = fs::read_dir(dir).map_err(|e| io_error(dir, &e))?;
    for entry in entries {
        let entry = entry.map_err(|e| io_error(dir, &e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let kind = entry.file_type().map_err(|e| io_error(&entry.path(), &e))?;
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if kind.is_dir() {
            walk(&entry.path(), &rel, out)?;
        } else if kind.is_file() {
            out.push(rel);
            if out.len() > MAX_FILES_PER_SKILL {
                return Err(SkillError(format!(
                    "{}: more than {MAX_FILES_PER_SKILL} files",
                    dir.display()
                )));
            }
        }
    }
    Ok(())
}

/// Every skill under `root`: each directory (at any depth) holding a
/// `SKILL.md` is one skill; below the root, the directories above a skill
/// become its path prefix.
pub(crate) fn skills_under(root: &Path) -> Result<Vec<Skill>, SkillError> {
    let mut skills = Vec::new();
    find(root, "", &mut skills)?;
    Ok(skills)
}

fn find(dir: &Path, prefix: &str, skills: &mut Vec<Skill>) -> Result<(), SkillError> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .map_err(|e| io_error(dir, &e))?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    entries.sort_by_key(fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.join("SKILL.md").is_file() {
            let skill = from_dir(&path)?;
            let skill = if prefix.is_empty() {
                skill
            } else {
                skill.under(prefix)?
            };
            skills.push(skill);
        } else {
            let prefix = if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            };
            find(&path, &prefix, skills)?;
        }
    }
    Ok(())
}
