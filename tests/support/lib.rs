//! Helpers shared by the integration tests: locating the example servers that
//! `cargo test` builds and spawning them behind a [`TestClient`].

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;

use mcp_core::protocol::LATEST_PROTOCOL_VERSION;
use mcp_core::testing::{ClientOptions, TestClient};
use serde_json::Value;
use tokio::process::{Child, Command};

/// The directory holding the test executables (`target/<profile>/deps`).
fn deps_dir() -> io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    exe.parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| io::Error::other(format!("{} has no parent directory", exe.display())))
}

/// The path where cargo puts the example `name`: `target/<profile>/examples/<name>`,
/// derived from the running test executable (`target/<profile>/deps/<test>-<hash>`).
///
/// # Errors
/// When the current executable's path cannot be determined or has no
/// `target/<profile>` ancestor.
pub fn example_path(name: &str) -> io::Result<PathBuf> {
    let deps = deps_dir()?;
    let profile_dir = deps.parent().ok_or_else(|| {
        io::Error::other(format!("{} is not inside target/<profile>", deps.display()))
    })?;
    Ok(profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX)))
}

/// Makes sure the example binaries exist and are up to date.
///
/// `cargo test --workspace` builds the examples itself (this package turns
/// on the examples' `full` feature), but a run restricted to some targets
/// (`cargo test -p mcp-suite-tests --test examples`) does not, so this runs
/// `cargo build --workspace --examples` once per test process with the same
/// profile and target directory: over the whole workspace, Cargo resolves
/// the features `cargo test --workspace` did and finds what it built up to
/// date. When cargo is unavailable the already-built binaries are used as
/// they are.
///
/// # Errors
/// The failed build's status.
pub fn ensure_examples_built() -> Result<(), String> {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let Some(cargo) =
                std::env::var_os("CARGO").or_else(|| option_env!("CARGO").map(Into::into))
            else {
                return Ok(());
            };
            let deps = deps_dir().map_err(|e| e.to_string())?;
            let Some(profile_dir) = deps.parent() else {
                return Ok(());
            };
            let Some(target_dir) = profile_dir.parent() else {
                return Ok(());
            };
            let mut command = std::process::Command::new(cargo);
            command
                .arg("build")
                .arg("--examples")
                .arg("--quiet")
                .arg("--manifest-path")
                .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml"))
                .arg("--workspace")
                .arg("--target-dir")
                .arg(target_dir)
                .stdin(Stdio::null())
                .stdout(Stdio::null());
            if profile_dir.file_name().is_some_and(|n| n == "release") {
                command.arg("--release");
            }
            match command.status() {
                Ok(status) if status.success() => Ok(()),
                Ok(status) => Err(format!(
                    "`cargo build --workspace --examples` failed: {status}"
                )),
                // No cargo on PATH: rely on binaries built by `cargo test`.
                Err(_) => Ok(()),
            }
        })
        .clone()
}

/// A command that runs the example `name` (built first, see
/// [`ensure_examples_built`]), its stdio and arguments left for the caller
/// to set, killed when its child is dropped.
///
/// # Errors
/// When the example binary cannot be found or built.
pub fn example_command(name: &str) -> io::Result<Command> {
    ensure_examples_built().map_err(io::Error::other)?;
    let path = example_path(name)?;
    if !path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "example binary {} not found; build it with `cargo build --example {name} --features full`",
                path.display()
            ),
        ));
    }
    let mut command = Command::new(&path);
    command.kill_on_drop(true);
    Ok(command)
}

/// Spawns the example `name` with piped stdin/stdout (stderr inherited, so
/// its logs show up in the test output) and returns a [`TestClient`] talking
/// to it with default options, not yet initialized, plus the child process
/// (killed when dropped).
///
/// # Errors
/// When the example binary cannot be found, built or started.
pub fn spawn_example(name: &str) -> io::Result<(TestClient, Child)> {
    spawn_example_with(name, ClientOptions::default())
}

/// Like [`spawn_example`] with explicit client options (for example
/// [`ClientOptions::without_elicitation`] or a custom elicitation handler).
///
/// # Errors
/// When the example binary cannot be found, built or started.
pub fn spawn_example_with(name: &str, options: ClientOptions) -> io::Result<(TestClient, Child)> {
    let mut child = example_command(name)?
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| io::Error::other("child stdout was not piped"))?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("child stdin was not piped"))?;
    Ok((TestClient::over(stdout, stdin, options), child))
}

/// Spawns the example `name` (see [`spawn_example_with`]) and performs the
/// `initialize` handshake with the newest protocol revision.
///
/// # Errors
/// When the example cannot be started or answers `initialize` with an error.
pub async fn connect_example(
    name: &str,
    options: ClientOptions,
) -> io::Result<(TestClient, Child)> {
    let (mut client, child) = spawn_example_with(name, options)?;
    client
        .initialize(LATEST_PROTOCOL_VERSION)
        .await
        .map_err(|e| io::Error::other(format!("initialize failed: {} {}", e.code, e.message)))?;
    Ok((client, child))
}

/// Asserts that progress notifications (their `params`) count up strictly and
/// all carry `total`.
///
/// # Panics
/// When they do not.
pub fn assert_progress_counts_up(progress: &[serde_json::Value], total: f64) {
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["progress"].as_f64().expect("numeric progress"))
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress strictly increases: {values:?}"
    );
    assert!(
        progress.iter().all(|p| p["total"] == total),
        "progress: {progress:?}"
    );
}

/// One POST of `body` (with `headers`) to `http://127.0.0.1:{port}/mcp`
/// over a fresh connection, asserting a 200; the JSON-RPC reply, from a
/// JSON body or the last `data:` line of an event stream (chunked or not).
///
/// # Panics
/// When the connection, the status or the reply is not as expected (a
/// test helper: the panic is the test's failure).
pub fn post_mcp(port: u16, body: &Value, headers: &[(&str, &str)]) -> Value {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).expect("write");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("read");
    let (head, payload) = response.split_once("\r\n\r\n").expect("a response");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}\n{payload}");
    let payload = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(payload)
    } else {
        payload.to_owned()
    };
    let json = payload
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data:"))
        .map_or(payload.as_str(), str::trim);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {payload}"))
}

/// The body of a chunked transfer, decoded.
fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Starts the example `name` with `args` (which make it serve HTTP on
/// `127.0.0.1:0`) and waits for its `MCP endpoint` start line: the child
/// and the port it took. Its stderr is drained on a thread from then on.
///
/// # Panics
/// When the example cannot be started or prints no endpoint line (a test
/// helper: the panic is the test's failure).
pub fn serve_example_http(name: &str, args: &[&str]) -> (std::process::Child, u16) {
    use std::io::{BufRead, BufReader};
    let command = example_command(name).unwrap_or_else(|e| panic!("the {name} example: {e}"));
    let mut child = std::process::Command::new(command.as_std().get_program())
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{name} starts: {e}"));
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let port: u16 = loop {
        let line = lines.next().expect("a start line").expect("readable");
        if let Some(url) = line.strip_prefix("MCP endpoint: http://127.0.0.1:") {
            break url.trim_end_matches("/mcp").parse().expect("a port");
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (child, port)
}
