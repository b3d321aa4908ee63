//! Reading skills from the file system.

use std::fs;
use std::path::Path;

use super::{Skill, SkillError, MAX_FILES_PER_SKILL};

fn io_error(path: &Path, e: &std::io::Error) -> SkillError {
    SkillError(format!("{}: {e}", path.display()))
}

/// Reads `path`, which must be a regular file inside `root` (canonical):
/// a symbolic link is refused (on Unix it is not even opened, `O_NOFOLLOW`),
/// and so is a file whose canonical path leaves `root` (a directory above it
/// replaced by a link, say). Every file of a skill is read through here.
fn read_inside(root: &Path, path: &Path) -> Result<Vec<u8>, SkillError> {
    use std::io::Read as _;
    let refuse = |why: &str| SkillError(format!("{}: {why}", path.display()));
    if fs::symlink_metadata(path)
        .map_err(|e| io_error(path, &e))?
        .file_type()
        .is_symlink()
    {
        return Err(refuse(
            "a symbolic link (skill files must be inside the skill's directory)",
        ));
    }
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NOFOLLOW.bits() as i32,
    );
    let mut file = options.open(path).map_err(|e| io_error(path, &e))?;
    if !file.metadata().map_err(|e| io_error(path, &e))?.is_file() {
        return Err(refuse("not a regular file"));
    }
    let canonical = fs::canonicalize(path).map_err(|e| io_error(path, &e))?;
    if !canonical.starts_with(root) {
        return Err(refuse("outside the skill's directory"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| io_error(path, &e))?;
    Ok(bytes)
}

/// One skill directory: `SKILL.md` plus every other file under it, each
/// read only if it is a regular file (not a symbolic link) inside the
/// directory's canonical path.
pub(super) fn from_dir(dir: &Path) -> Result<Skill, SkillError> {
    let root = fs::canonicalize(dir).map_err(|e| io_error(dir, &e))?;
    let skill_md = dir.join("SKILL.md");
    let text = String::from_utf8(read_inside(&root, &skill_md)?)
        .map_err(|_| SkillError(format!("{}: not UTF-8", skill_md.display())))?;
    let mut skill =
        Skill::new(text).map_err(|e| SkillError(format!("{}: {e}", skill_md.display())))?;
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    for rel in files {
        if rel == "SKILL.md" {
            continue;
        }
        let bytes = read_inside(&root, &dir.join(&rel))?;
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
        // Not followed: a `SKILL.md` that is a link makes the directory a
        // skill, which `from_dir` then refuses.
        if fs::symlink_metadata(path.join("SKILL.md")).is_ok() {
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
