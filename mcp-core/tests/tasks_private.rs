//! [`FileTaskStore`] keeps its directory private to the user the server runs
//! as: a task's arguments, answers and result are readable by no other local
//! user, and no other local user can plant or answer a task.
#![cfg(unix)]

mod common;
use common::tasks::*;

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;

use mcp_core::storage::{Storage, TaskStore};
use mcp_core::tasks::{FileTaskStore, TaskRecord};
use mcp_core::{transport::CallContext, McpServer};
use serde_json::json;

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path)
        .expect("exists")
        .permissions()
        .mode()
        & 0o7777
}

/// A record as another local user would plant it: a task owned by nobody
/// (principal `None`, as every stdio caller is), already completed with a
/// result of the planter's choosing.
fn planted() -> Vec<u8> {
    let mut record = TaskRecord::new("planted".into(), None, 0);
    record.status = mcp_core::tasks::TaskStatus::Completed;
    record.result = Some(json!({"content": [{"type": "text", "text": "planted"}]}));
    serde_json::to_vec(&record).expect("serializable")
}

/// The directory the store creates is `0700` (its missing parents too) and
/// every record it writes `0600`, so no other local user reads a task's
/// arguments, questions, answers or result. Before, they were `0755` and
/// `0644`.
#[tokio::test]
async fn the_directory_is_created_0700_and_every_record_0600() {
    let parent = fresh("tasks-private-modes");
    let dir = parent.join("tasks");
    let store = FileTaskStore::new(&dir, 100).expect("a fresh directory");
    assert_eq!(mode(&parent), 0o700);
    assert_eq!(mode(&dir), 0o700);
    store
        .create(TaskRecord::new("t1".into(), None, 0))
        .await
        .expect("created");
    assert_eq!(mode(&dir.join("t1.json")), 0o600);
    store
        .update("t1", mcp_core::storage::TaskChange::Cancel)
        .await
        .expect("updated")
        .expect("there");
    assert_eq!(mode(&dir.join("t1.json")), 0o600, "a rewritten record too");
    // Only the record is left: no temporary file, no lock.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("listable")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["t1.json"]);
}

/// A directory that already exists with permissions for others (`0777`, as
/// a folder under a shared temp directory may be, or `0755`) is refused
/// when the store opens, with an error naming it; a record planted in it is
/// never served, since no store (and so no server) is built on it.
#[tokio::test]
async fn a_directory_open_to_others_is_refused_and_its_planted_record_never_served() {
    for open in [0o777, 0o755, 0o750, 0o701] {
        let dir = fresh("tasks-private-open");
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .expect("created");
        std::fs::write(dir.join("planted.json"), planted()).expect("planted");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(open)).expect("chmod");
        let err = FileTaskStore::new(&dir, 100).expect_err("a directory open to others");
        assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied, "{open:o}");
        assert!(
            err.to_string().contains(&dir.display().to_string()),
            "{err}"
        );
    }
}

/// A directory owned by another user is refused (checked only when the
/// test runs as root, the one user that can hand a directory to another;
/// the rule itself is also tested with an expected owner given, in the
/// library's unit tests).
#[tokio::test]
async fn a_directory_owned_by_another_user_is_refused() {
    let dir = fresh("tasks-private-owner");
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .expect("created");
    if std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).is_ok() {
        let err = FileTaskStore::new(&dir, 100).expect_err("another user's directory");
        assert!(err.to_string().contains("owned by uid 65534"), "{err}");
    }
}

/// A symbolic link in place of the directory is refused (it could be
/// pointed elsewhere after the check).
#[tokio::test]
async fn a_symbolic_link_in_place_of_the_directory_is_refused() {
    let target = fresh("tasks-private-link-target");
    FileTaskStore::new(&target, 100).expect("a private directory");
    let link = fresh("tasks-private-link");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    assert!(FileTaskStore::new(&link, 100).is_err());
    let _ = std::fs::remove_file(&link);
}

/// A record in the store's directory that is readable by others (`0644`, as
/// the store used to write them), or a symbolic link to a record elsewhere,
/// is refused by `tasks/get`, not served.
#[tokio::test]
async fn a_record_not_private_to_the_user_is_not_served() {
    let dir = fresh("tasks-private-record");
    let store = FileTaskStore::new(&dir, 100).expect("a private directory");
    let server = McpServer::builder()
        .server_info("private", "1")
        .storage(Storage::memory().with_tasks(store.clone()))
        .build()
        .expect("valid server");
    std::fs::write(dir.join("planted.json"), planted()).expect("planted");
    std::fs::set_permissions(
        dir.join("planted.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    assert!(store.get("planted").await.is_err());
    let reply = task_op(
        &server,
        &CallContext::new(),
        "tasks/get",
        json!({"taskId": "planted"}),
    )
    .await;
    assert!(reply.get("error").is_some(), "{reply}");
    assert!(!reply.to_string().contains("\"planted\"}"), "{reply}");

    let elsewhere = fresh("tasks-private-elsewhere.json");
    std::fs::write(&elsewhere, planted()).expect("written");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    std::fs::remove_file(dir.join("planted.json")).expect("removed");
    std::os::unix::fs::symlink(&elsewhere, dir.join("planted.json")).expect("symlink");
    assert!(store.get("planted").await.is_err());
}
