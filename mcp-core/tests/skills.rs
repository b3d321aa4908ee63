//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640):
//! skills from a directory and from code, their entries (frontmatter
//! verbatim, every file with size and SHA-256 digest), `skills/get`,
//! `resources/directory/read`, the files as resources, and the skills
//! refused at build time.

mod common;
use common::guard;

use std::path::PathBuf;

use mcp_core::skills::{digest, Skill, SKILLS_EXTENSION};
use mcp_core::{transport::CallContext, BuildError, McpServer};
use serde_json::{json, Value};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";

const SKILL_MD: &str = "---\nname: pdf-processing\ndescription: Work with PDF files\nmetadata:\n  author: tests\n---\nBody.\n";

fn mreq(method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CAPS: {}});
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

async fn send(server: &McpServer, message: Value) -> Value {
    let shown = message.to_string();
    guard(&shown, server.handle_message(message, &CallContext::new()))
        .await
        .unwrap_or_else(|| panic!("no reply to {shown}"))
}

#[track_caller]
fn result(reply: &Value) -> &Value {
    assert!(reply.get("error").is_none(), "unexpected error: {reply}");
    &reply["result"]
}

/// A fresh directory under the target dir holding `files` (path, text).
fn skills_dir(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&root);
    for (path, text) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    root
}

/// The test server; `name` keeps each test's directory its own.
fn server(name: &str) -> McpServer {
    let root = skills_dir(
        name,
        &[
            ("pdf-processing/SKILL.md", SKILL_MD),
            ("pdf-processing/references/FORMS.md", "Forms.\n"),
            ("pdf-processing/.hidden", "never published"),
            (
                "team/review/SKILL.md",
                "---\nname: review\ndescription: Review code\n---\n",
            ),
        ],
    );
    let coded = Skill::new("---\nname: greeting\ndescription: Greets\n---\nHi\n")
        .expect("valid")
        .with_file("a.bin", vec![0xff, 0xfe])
        .expect("valid file");
    McpServer::builder()
        .server_info("skills-test", "1.0.0")
        .skills_dir(&root)
        .skill(coded)
        .build()
        .expect("valid server")
}

#[tokio::test]
async fn the_extension_is_advertised_with_resources() {
    let server = server("skills-1");
    let reply = send(&server, mreq("server/discover", json!({}))).await;
    let caps = &result(&reply)["capabilities"];
    assert_eq!(
        caps["extensions"][SKILLS_EXTENSION],
        json!({"directoryRead": true}),
        "{caps}"
    );
    assert!(caps["resources"].is_object(), "{caps}");
}

#[tokio::test]
async fn skills_list_gives_every_entry_with_digests_and_cache_hints() {
    let server = server("skills-2");
    let reply = send(&server, mreq("skills/list", json!({}))).await;
    let listing = result(&reply);
    assert!(
        listing["ttlMs"].is_number() && listing["cacheScope"].is_string(),
        "{listing}"
    );
    assert!(listing.get("nextCursor").is_none());
    let uris: Vec<&str> = listing["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|s| s["uri"].as_str())
        .collect();
    assert_eq!(
        uris,
        [
            "skill://pdf-processing/SKILL.md",
            "skill://team/review/SKILL.md",
            "skill://greeting/SKILL.md"
        ]
    );
    let pdf = &listing["skills"][0];
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Work with PDF files", "metadata": {"author": "tests"}})
    );
    assert_eq!(
        pdf["resources"],
        json!([
            {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(SKILL_MD.as_bytes()), "size": SKILL_MD.len()},
            {"uri": "skill://pdf-processing/references/FORMS.md", "digest": digest(b"Forms.\n"), "size": 7},
        ]),
        "hidden files are not published"
    );
    let reply = send(&server, mreq("skills/list", json!({"cursor": "x"}))).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

#[tokio::test]
async fn skills_get_answers_one_entry_and_32602_for_others() {
    let server = server("skills-3");
    let uri = "skill://team/review/SKILL.md";
    let reply = send(&server, mreq("skills/get", json!({"uri": uri}))).await;
    let got = result(&reply);
    assert_eq!(got["skill"]["uri"], uri);
    assert_eq!(got["skill"]["frontmatter"]["name"], "review");
    assert!(got.get("nextCursor").is_none() && got["ttlMs"].is_number());
    for bad in [
        json!({"uri": "skill://nope/SKILL.md"}),
        json!({"uri": 3}),
        json!({}),
    ] {
        let reply = send(&server, mreq("skills/get", bad)).await;
        assert_eq!(reply["error"]["code"], -32602, "{reply}");
    }
}

#[tokio::test]
async fn files_are_resources_and_directories_can_be_read() {
    let server = server("skills-4");
    let reply = send(&server, mreq("resources/list", json!({}))).await;
    let resources = result(&reply)["resources"]
        .as_array()
        .expect("list")
        .clone();
    let skill_md = resources
        .iter()
        .find(|r| r["uri"] == "skill://pdf-processing/SKILL.md")
        .expect("SKILL.md listed");
    assert_eq!(skill_md["name"], "pdf-processing");
    assert_eq!(skill_md["description"], "Work with PDF files");
    assert_eq!(skill_md["mimeType"], "text/markdown");

    let reply = send(
        &server,
        mreq(
            "resources/read",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        ),
    )
    .await;
    assert_eq!(result(&reply)["contents"][0]["text"], SKILL_MD);
    let reply = send(
        &server,
        mreq("resources/read", json!({"uri": "skill://greeting/a.bin"})),
    )
    .await;
    assert!(
        result(&reply)["contents"][0]["blob"].is_string(),
        "bytes are a blob: {reply}"
    );

    let reply = send(
        &server,
        mreq(
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing"}),
        ),
    )
    .await;
    assert_eq!(
        result(&reply)["resources"],
        json!([
            {"uri": "skill://pdf-processing/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
            {"uri": "skill://pdf-processing/references", "name": "references", "mimeType": "inode/directory"},
        ])
    );
    let reply = send(
        &server,
        mreq(
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing/references"}),
        ),
    )
    .await;
    assert_eq!(result(&reply)["resources"][0]["name"], "FORMS.md");
    for not_a_dir in [
        "skill://pdf-processing/SKILL.md",
        "skill://elsewhere",
        "file:///etc",
    ] {
        let reply = send(
            &server,
            mreq("resources/directory/read", json!({"uri": not_a_dir})),
        )
        .await;
        assert_eq!(reply["error"]["code"], -32602, "{not_a_dir}: {reply}");
    }
}

#[test]
fn invalid_skills_are_refused() {
    for (text, why) in [
        ("no frontmatter", "frontmatter"),
        ("---\ndescription: d\n---\n", "name"),
        ("---\nname: x\n---\n", "description"),
        ("---\nname: Bad_Name\ndescription: d\n---\n", "skill name"),
        ("---\nname: a--b\ndescription: d\n---\n", "skill name"),
        (
            "---\nname: x\ndescription: |\n  block\n---\n",
            "not supported",
        ),
    ] {
        let err = Skill::new(text).expect_err(text);
        assert!(err.0.contains(why), "{text}: {err}");
    }
    let skill = Skill::new(SKILL_MD).expect("valid");
    for path in ["../escape", "/abs", "a//b", "sp ace", "SKILL.md"] {
        assert!(skill.clone().with_file(path, Vec::new()).is_err(), "{path}");
    }
    let big = vec![0u8; (mcp_core::skills::MAX_SKILL_BYTES + 1) as usize];
    assert!(skill.clone().with_file("big", big).is_err());

    let root = skills_dir(
        "skills-invalid",
        &[("bad/SKILL.md", "---\nname: bad\n---\n")],
    );
    let err = McpServer::builder()
        .skills_dir(&root)
        .build()
        .expect_err("invalid");
    assert!(matches!(err, BuildError::InvalidSkill(_)), "{err}");
    // Two skills at one URI collide like any two resources.
    let err = McpServer::builder()
        .skill(skill.clone())
        .skill(skill)
        .build()
        .expect_err("duplicate");
    assert!(matches!(err, BuildError::DuplicateResource(_)), "{err}");
}

/// A skills root where a skill's `SKILL.md` is a symbolic link to a file
/// outside the root (any file the server's user can read: its text would
/// be published as the skill, and its frontmatter errors would echo it).
/// Building a server on that root fails, and the file is read neither
/// through `Skill::from_dir` nor through `skills_dir`: nothing outside a
/// skill's directory is ever loaded.
#[cfg(unix)]
#[test]
fn a_skill_md_linked_outside_the_root_is_not_loaded() {
    let outside = skills_dir(
        "skills-linked-outside",
        &[(
            "secret.md",
            "---\nname: leaked\ndescription: a file outside the skills root\n---\nsecret\n",
        )],
    );
    let root = skills_dir(
        "skills-linked",
        &[("ok/SKILL.md", "---\nname: ok\ndescription: d\n---\n")],
    );
    std::fs::create_dir_all(root.join("leaked")).expect("mkdir");
    std::os::unix::fs::symlink(outside.join("secret.md"), root.join("leaked/SKILL.md"))
        .expect("symlink");
    let err = Skill::from_dir(root.join("leaked")).expect_err("a linked SKILL.md");
    assert!(err.0.contains("symbolic link"), "{err}");
    let err = McpServer::builder()
        .skills_dir(&root)
        .build()
        .expect_err("a linked SKILL.md");
    assert!(matches!(err, BuildError::InvalidSkill(_)), "{err}");
    assert!(!err.to_string().contains("secret"), "{err}");

    // A linked directory inside a skill is skipped: its files (outside
    // the skill) are not published.
    let skill = skills_dir(
        "skills-linked-file",
        &[("s/SKILL.md", "---\nname: s\ndescription: d\n---\n")],
    );
    std::os::unix::fs::symlink("../../skills-linked-outside", skill.join("s/up")).expect("symlink");
    let loaded = Skill::from_dir(skill.join("s")).expect("links are skipped");
    assert!(loaded.files().iter().all(|f| !f.path.starts_with("up")));
}
