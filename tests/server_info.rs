//! The server's name: `mcp_core::server_info!()` names the crate that
//! writes it (this test crate, `mcp-suite-tests`, not `mcp-core`), and a server
//! built without a name says so once on stderr, naming the fix.
//!
//! The stderr checks run this test binary again as a child process (the
//! `child_*` tests, which do their work only when `MCP_SERVER_INFO_CHILD`
//! is set) so the real stderr of a fresh process is what is read.

use std::process::Command;

use mcp_core::McpServer;

const CHILD: &str = "MCP_SERVER_INFO_CHILD";

#[test]
fn server_info_macro_names_the_calling_crate() {
    let server = McpServer::builder()
        .implementation(mcp_core::server_info!())
        .build()
        .expect("server");
    assert_eq!(server.info().name, "mcp-suite-tests");
    assert_eq!(server.info().version, env!("CARGO_PKG_VERSION"));
}

#[test]
fn a_server_without_info_still_reports_the_framework() {
    let server = McpServer::builder().build().expect("server");
    assert_eq!(server.info().name, "mcp-core");
}

/// Runs one `child_*` test of this binary in a fresh process; its stderr.
fn child_stderr(test: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("run the child");
    assert!(out.status.success(), "child {test} failed: {out:?}");
    String::from_utf8(out.stderr).expect("utf-8 stderr")
}

#[test]
fn build_without_info_warns_once_on_stderr_naming_the_fix() {
    let stderr = child_stderr("child_builds_two_servers_without_info");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("without `.server_info(..)`"))
        .collect();
    assert_eq!(warnings.len(), 1, "stderr: {stderr}");
    assert!(warnings[0].contains("mcp_core::server_info!()"), "{stderr}");
    assert!(warnings[0].contains(".server_info(\"name\""), "{stderr}");
}

#[test]
fn build_with_info_is_silent() {
    let stderr = child_stderr("child_builds_a_named_server");
    assert!(!stderr.contains("server_info"), "stderr: {stderr}");
}

#[test]
fn child_builds_two_servers_without_info() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    for _ in 0..2 {
        McpServer::builder().build().expect("server");
    }
}

#[test]
fn child_builds_a_named_server() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    McpServer::builder()
        .implementation(mcp_core::server_info!())
        .build()
        .expect("server");
    McpServer::builder()
        .server_info("named", "1.0.0")
        .build()
        .expect("server");
}
