//! The directory of a [`FileTaskStore`](super::FileTaskStore), private to the
//! user the server runs as.
//!
//! On Unix the directory is opened once, checked (a directory, owned by the
//! process's effective user, no group or other permission bits) and kept
//! open; every record, temporary file and lock is then reached relative to
//! that descriptor without following symbolic links, so replacing the path
//! (or a directory above it) afterwards changes nothing. Records are created
//! `0600` (with the mode, so there is no moment where they are readable by
//! others) and a record owned by another user, or readable by others, is
//! refused.
//!
//! Elsewhere the directory is used by path and none of this is checked.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(unix)]
use std::sync::Arc;
use std::time::Duration;

/// Distinguishes the temporary files of one process's writes.
static WRITES: AtomicU64 = AtomicU64::new(0);

fn refused(what: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, what)
}

/// Checks that `meta` (of `path`) belongs to `uid` and grants nothing to
/// its group or to others.
#[cfg(unix)]
pub(super) fn check_private(path: &Path, meta: &std::fs::Metadata, uid: u32) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != uid {
        return Err(refused(format!(
            "{} is owned by uid {}, not by this process's user (uid {uid})",
            path.display(),
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(refused(format!(
            "{} has mode {mode:04o}: group and others must have no access (0700 for a directory, 0600 for a file)",
            path.display()
        )));
    }
    Ok(())
}

/// A task directory, checked private when opened.
#[derive(Debug, Clone)]
pub(super) struct TaskDir {
    path: PathBuf,
    #[cfg(unix)]
    fd: Arc<std::os::fd::OwnedFd>,
    #[cfg(unix)]
    uid: u32,
}

#[cfg(unix)]
impl TaskDir {
    /// Creates `path` (and missing parents) `0700` if missing, then opens
    /// it; refuses a symbolic link, a non-directory, or a directory not
    /// owned by the effective user or open to its group or others.
    pub(super) fn open(path: &Path) -> io::Result<Self> {
        Self::open_owned_by(path, rustix::process::geteuid().as_raw())
    }

    /// [`open`](Self::open), with the expected owner given.
    pub(super) fn open_owned_by(path: &Path, uid: u32) -> io::Result<Self> {
        use rustix::fs::{Mode, OFlags};
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)?;
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!(
                    "{}: not a directory one can open without following a symbolic link ({e})",
                    path.display()
                ),
            )
        })?;
        let dir = std::fs::File::from(fd);
        check_private(path, &dir.metadata()?, uid)?;
        Ok(Self {
            path: path.to_path_buf(),
            fd: Arc::new(dir.into()),
            uid,
        })
    }

    /// The record `name`, or `None` when there is none; a record that is
    /// not a regular file, or not private to the user, is refused.
    pub(super) fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        use rustix::fs::{Mode, OFlags};
        use std::io::Read as _;
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&*self.fd, name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        let mut file = std::fs::File::from(fd);
        let meta = file.metadata()?;
        let path = self.path.join(name);
        if !meta.is_file() {
            return Err(refused(format!("{} is not a regular file", path.display())));
        }
        check_private(&path, &meta, self.uid)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(Some(bytes))
    }

    /// Replaces the record `name` by a new file (mode `0600`) holding
    /// `bytes`, by rename: a reader never sees half a record.
    pub(super) fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        use rustix::fs::{Mode, OFlags};
        use std::io::Write as _;
        let tmp = format!(
            "{name}.tmp{}-{}",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        );
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(0o600);
        let fd = match rustix::fs::openat(&*self.fd, tmp.as_str(), flags, mode) {
            // Left by a process that died with this process id.
            Err(rustix::io::Errno::EXIST) => {
                self.remove(&tmp);
                rustix::fs::openat(&*self.fd, tmp.as_str(), flags, mode)?
            }
            other => other?,
        };
        let written = std::fs::File::from(fd).write_all(bytes).and_then(|()| {
            Ok(rustix::fs::renameat(
                &*self.fd,
                tmp.as_str(),
                &*self.fd,
                name,
            )?)
        });
        if written.is_err() {
            self.remove(&tmp);
        }
        written
    }

    /// Removes the record `name`, if there is one.
    pub(super) fn remove(&self, name: &str) {
        let _ = rustix::fs::unlinkat(&*self.fd, name, rustix::fs::AtFlags::empty());
    }

    /// The names of the directory's entries.
    pub(super) fn names(&self) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&*self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy();
            if name != "." && name != ".." {
                names.push(name.into_owned());
            }
        }
        Ok(names)
    }

    /// Takes the lock `name` (a directory, created atomically); `false`
    /// when another holds it.
    pub(super) fn try_lock(&self, name: &str) -> io::Result<bool> {
        match rustix::fs::mkdirat(&*self.fd, name, rustix::fs::Mode::from_raw_mode(0o700)) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// How long ago the lock `name` was taken, if it is there.
    pub(super) fn lock_age(&self, name: &str) -> Option<Duration> {
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        let stat = rustix::fs::statat(&*self.fd, name, flags).ok()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        let taken = u64::try_from(stat.st_mtime).ok()?;
        Some(now.saturating_sub(Duration::from_secs(taken)))
    }

    /// Releases the lock `name`.
    pub(super) fn unlock(&self, name: &str) {
        let _ = rustix::fs::unlinkat(&*self.fd, name, rustix::fs::AtFlags::REMOVEDIR);
    }
}

#[cfg(not(unix))]
impl TaskDir {
    /// Creates `path` if missing. Neither its owner nor its permissions are
    /// checked on this platform: give a directory only the server's user
    /// can read.
    pub(super) fn open(path: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(path)?;
        if !std::fs::symlink_metadata(path)?.is_dir() {
            return Err(refused(format!("{} is not a directory", path.display())));
        }
        Ok(Self {
            path: path.to_path_buf(),
        })
    }

    /// The record `name`, or `None` when there is none.
    pub(super) fn read(&self, name: &str) -> io::Result<Option<Vec<u8>>> {
        let path = self.path.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(refused(format!("{} is not a regular file", path.display())));
        }
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the record `name` by rename.
    pub(super) fn write(&self, name: &str, bytes: &[u8]) -> io::Result<()> {
        let tmp = self.path.join(format!(
            "{name}.tmp{}-{}",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let written =
            std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, self.path.join(name)));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Removes the record `name`, if there is one.
    pub(super) fn remove(&self, name: &str) {
        let _ = std::fs::remove_file(self.path.join(name));
    }

    /// The names of the directory's entries.
    pub(super) fn names(&self) -> io::Result<Vec<String>> {
        std::fs::read_dir(&self.path)?
            .map(|entry| Ok(entry?.file_name().to_string_lossy().into_owned()))
            .collect()
    }

    /// Takes the lock `name`; `false` when another holds it.
    pub(super) fn try_lock(&self, name: &str) -> io::Result<bool> {
        match std::fs::create_dir(self.path.join(name)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// How long ago the lock `name` was taken, if it is there.
    pub(super) fn lock_age(&self, name: &str) -> Option<Duration> {
        let at = std::fs::metadata(self.path.join(name))
            .ok()?
            .modified()
            .ok()?;
        std::time::SystemTime::now().duration_since(at).ok()
    }

    /// Releases the lock `name`.
    pub(super) fn unlock(&self, name: &str) {
        let _ = std::fs::remove_dir(self.path.join(name));
    }
}

impl TaskDir {
    /// The directory's path.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn fresh(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A directory owned by another user than the one expected is refused,
    /// though private: that user could plant and read records. (The owner
    /// expected is given, so this runs as any user.)
    #[test]
    fn a_directory_owned_by_another_user_is_refused() {
        let dir = fresh("mcp-taskdir-owner");
        let me = rustix::process::geteuid().as_raw();
        TaskDir::open_owned_by(&dir, me).expect("mine");
        let err = TaskDir::open_owned_by(&dir, me.wrapping_add(1)).expect_err("not theirs");
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert!(err.to_string().contains("is owned by uid"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }

    /// A record owned by another user than the store's is refused, never
    /// read, even when private and in the store's own directory.
    #[test]
    fn a_record_owned_by_another_user_is_refused() {
        let dir = fresh("mcp-taskdir-record-owner");
        let mut store = TaskDir::open(&dir).expect("mine");
        store.write("t1.json", b"{}").expect("written");
        assert_eq!(
            store.read("t1.json").expect("mine").as_deref(),
            Some(&b"{}"[..])
        );
        store.uid = store.uid.wrapping_add(1);
        let err = store.read("t1.json").expect_err("not the store's user's");
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        let _ = std::fs::remove_dir_all(dir);
    }
}
