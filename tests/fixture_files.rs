//! The conformance fixture's files (examples/conformance.rs) are private to
//! the user running it: its tasks directory and its `requestState` key file
//! are never a fixed name under a shared temp directory that another local
//! user could create first, read or answer through.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use mcp_suite::example_command;

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("created");
    dir
}

/// Runs the fixture over stdio with no input (it ends at once) in an
/// environment of `vars` only (plus `PATH`); its exit status and stderr.
async fn run(args: &[&str], vars: &[(&str, &Path)]) -> (bool, String) {
    let mut command = example_command("conformance").expect("the fixture");
    command
        .args(args)
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .envs(vars.iter().map(|(k, v)| (*k, v.as_os_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let out = command.output().await.expect("ran");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Without `MCP_CONFORMANCE_TASK_DIR` the fixture keeps its tasks in
/// memory: it creates no tasks directory under the temp directory (it used
/// to share `$TMPDIR/mcp-conformance-tasks` between every stdio caller of
/// every local user, who could read and answer each other's tasks).
#[tokio::test]
async fn without_a_task_dir_no_directory_is_made_under_the_temp_dir() {
    let tmp = fresh("fixture-no-task-dir");
    let (ok, stderr) = run(&[], &[("TMPDIR", &tmp)]).await;
    assert!(ok, "{stderr}");
    let dirs: Vec<_> = std::fs::read_dir(&tmp)
        .expect("listable")
        .map(|e| e.expect("entry"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name())
        .collect();
    assert!(dirs.is_empty(), "{dirs:?}");
    // A task process needs the directory: it says so instead of guessing.
    let (ok, stderr) = run(&["--run-task", "t1"], &[("TMPDIR", &tmp)]).await;
    assert!(!ok);
    assert!(stderr.contains("MCP_CONFORMANCE_TASK_DIR"), "{stderr}");
}

/// A tasks directory that others can enter (`0777`) stops the fixture with
/// an error naming it, rather than serving (or answering) what is in it.
#[tokio::test]
async fn a_task_dir_open_to_others_stops_the_fixture() {
    let tmp = fresh("fixture-open-task-dir");
    let tasks = tmp.join("tasks");
    std::fs::create_dir(&tasks).expect("created");
    std::fs::set_permissions(&tasks, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let (ok, stderr) = run(
        &[],
        &[("TMPDIR", &tmp), ("MCP_CONFORMANCE_TASK_DIR", &tasks)],
    )
    .await;
    assert!(!ok);
    assert!(stderr.contains("has mode 0777"), "{stderr}");
}

/// A key file planted by another user (private, 32 bytes, but owned by
/// uid 65534) is not used as the shared `requestState` key: whoever wrote
/// it could forge state. Only root can hand a file to another user, so the
/// check runs when the tests run as root (as in CI); a symbolic link to a
/// key file is refused for every user.
#[tokio::test]
async fn a_key_file_owned_by_another_user_or_a_link_is_not_used() {
    let tmp = fresh("fixture-key-file");
    let key = tmp.join("planted.key");
    std::fs::write(&key, [7u8; 32]).expect("written");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = tmp.join("link.key");
    std::os::unix::fs::symlink(&key, &link).expect("symlink");
    let (ok, stderr) = run(
        &[],
        &[("TMPDIR", &tmp), ("MCP_CONFORMANCE_STATE_KEY_FILE", &link)],
    )
    .await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("using a per-process key"), "{stderr}");
    if std::os::unix::fs::chown(&key, Some(65534), None).is_ok() {
        let (ok, stderr) = run(
            &[],
            &[("TMPDIR", &tmp), ("MCP_CONFORMANCE_STATE_KEY_FILE", &key)],
        )
        .await;
        assert!(ok, "{stderr}");
        assert!(stderr.contains("owned by uid 65534"), "{stderr}");
        assert!(stderr.contains("using a per-process key"), "{stderr}");
    }
}
