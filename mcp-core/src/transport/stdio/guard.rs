//! The stdout guard of [`serve_stdio`](super::serve_stdio) (see the module docs).

use std::io::{self, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::sync::{Mutex, PoisonError};

use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use tokio::net::unix::pipe;

use super::serve::BoxedWriter;

/// The original stdout while a guard is live.
struct Saved {
    original: OwnedFd,
    /// Whether it was non-blocking before the protocol writer made it so.
    nonblocking: bool,
    /// Live guards.
    count: usize,
}

static SAVED: Mutex<Option<Saved>> = Mutex::new(None);

/// While alive, fd 1 points at stderr; the last one dropped restores it.
pub(super) struct StdoutGuard(());

impl StdoutGuard {
    /// Points fd 1 at stderr. Returns the guard and a private duplicate
    /// of the original stdout (close-on-exec, so child processes never
    /// inherit it) for the protocol messages.
    pub(super) fn install() -> io::Result<(Self, OwnedFd)> {
        let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(saved) = saved.as_mut() {
            let protocol = saved.original.try_clone()?;
            saved.count += 1;
            return Ok((Self(()), protocol));
        }
        // Under std's stdout lock: what was printed before goes out on
        // the real stdout, and no `print!` lands between flush and dup2.
        let mut stdout = io::stdout().lock();
        stdout.flush()?;
        let original = stdout.as_fd().try_clone_to_owned()?;
        let protocol = original.try_clone()?;
        let nonblocking = fcntl_getfl(&original)?.contains(OFlags::NONBLOCK);
        rustix::stdio::dup2_stdout(io::stderr())?;
        drop(stdout);
        *saved = Some(Saved {
            original,
            nonblocking,
            count: 1,
        });
        Ok((Self(()), protocol))
    }
}

impl Drop for StdoutGuard {
    fn drop(&mut self) {
        let mut saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(live) = saved.as_mut() else {
            return;
        };
        live.count -= 1;
        if live.count > 0 {
            return;
        }
        let Some(Saved {
            original,
            nonblocking,
            ..
        }) = saved.take()
        else {
            return;
        };
        let mut stdout = io::stdout().lock();
        // What was printed while serving belongs on stderr, where fd 1 still points.
        let _ = stdout.flush();
        // The protocol writer made the shared file description
        // non-blocking; `println!` expects a blocking stdout.
        if !nonblocking {
            if let Ok(flags) = fcntl_getfl(&original) {
                let _ = fcntl_setfl(&original, flags - OFlags::NONBLOCK);
            }
        }
        let _ = rustix::stdio::dup2_stdout(&original);
    }
}

/// The protocol messages' writer on `fd`: driven by the reactor when it
/// is a pipe, through Tokio's blocking pool otherwise (a file, a terminal).
pub(super) fn protocol_writer(fd: OwnedFd) -> BoxedWriter {
    match fd.try_clone().and_then(pipe::Sender::from_owned_fd) {
        Ok(pipe) => Box::new(pipe),
        Err(_) => Box::new(tokio::fs::File::from_std(std::fs::File::from(fd))),
    }
}
