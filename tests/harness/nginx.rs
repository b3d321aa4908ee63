//! The nginx harness of the multi-process tests (`scale_out.rs`,
//! `replicas.rs`): example servers as child processes on ports the OS
//! picked, and nginx in the foreground balancing round-robin over them.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_suite::{ensure_examples_built, example_path};

/// Hang guard for anything that should happen promptly (process start-up).
const GUARD: Duration = Duration::from_secs(60);

/// The load balancer.
pub(crate) const NGINX: &str = "/usr/sbin/nginx";

/// A child process killed (and reaped) when dropped.
pub(crate) struct KillOnDrop {
    pub(crate) what: String,
    pub(crate) child: Child,
}

impl KillOnDrop {
    pub(crate) fn assert_running(&mut self) {
        let status = self.child.try_wait().expect("querying a child process");
        assert!(status.is_none(), "{} exited: {status:?}", self.what);
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the example `example` with `args` and `env` (names with `None`
/// are removed), waits for its `MCP endpoint: URL` line and returns the
/// process and the address it serves on. Its stderr is echoed to the
/// test's, each line tagged with the process.
pub(crate) fn spawn_example(
    example: &str,
    args: &[&str],
    env: &[(&str, Option<&str>)],
) -> (KillOnDrop, SocketAddr) {
    if let Err(e) = ensure_examples_built() {
        panic!("{e}");
    }
    let path = example_path(example).expect("example path");
    assert!(
        path.exists(),
        "example binary {} not found; build it with `cargo build --example {example} --features full`",
        path.display()
    );
    let mut command = Command::new(&path);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (name, value) in env {
        match value {
            Some(value) => command.env(name, value),
            None => command.env_remove(name),
        };
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", path.display()));
    let stderr = child.stderr.take().expect("piped stderr");
    let mut process = KillOnDrop {
        what: format!("example `{example}` (pid {})", child.id()),
        child,
    };
    // The first line naming the endpoint gives the port; every line is
    // echoed to the test's stderr (and the pipe kept drained).
    let (tx, rx) = mpsc::channel();
    let tag = process.what.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            eprintln!("[{tag}] {line}");
            if let Some(url) = line.strip_prefix("MCP endpoint: ") {
                let _ = tx.send(url.to_owned());
            }
        }
    });
    let url = rx.recv_timeout(GUARD).unwrap_or_else(|e| {
        panic!(
            "{} did not report its endpoint ({e}); exit status: {:?}",
            process.what,
            process.child.try_wait()
        )
    });
    let addr = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .and_then(|authority| authority.parse().ok())
        .unwrap_or_else(|| panic!("unexpected endpoint URL {url:?}"));
    process.what = format!("{} at {addr}", process.what);
    (process, addr)
}

/// A private temporary directory, removed when dropped.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new() -> Self {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = std::env::temp_dir().join(format!(
            "mcp-scale-out-{}-{}-{nanos}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("creating a temporary directory");
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// nginx in the foreground, balancing `/mcp` round-robin over the replicas.
/// Field order matters: the process is killed before its directory goes.
pub(crate) struct LoadBalancer {
    pub(crate) process: KillOnDrop,
    pub(crate) addr: SocketAddr,
    _dir: TempDir,
}

impl LoadBalancer {
    /// nginx balancing over the replicas listening on `replicas`.
    pub(crate) fn start(replicas: &[SocketAddr]) -> Self {
        // The listening port is picked by binding port 0 and releasing it;
        // should another process grab it meanwhile, try another.
        let mut last_error = String::new();
        for _ in 0..5 {
            let dir = TempDir::new();
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("picking a free port")
                .port();
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let conf = dir.0.join("nginx.conf");
            std::fs::write(&conf, nginx_conf(&dir.0, addr, replicas)).expect("writing nginx.conf");
            let error_log = dir.0.join("error.log");
            let child = Command::new(NGINX)
                .arg("-c")
                .arg(&conf)
                .arg("-p")
                .arg(&dir.0)
                .arg("-e")
                .arg(&error_log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap_or_else(|e| panic!("starting {NGINX}: {e}"));
            let mut process = KillOnDrop {
                what: format!("nginx (pid {}) on {addr}", child.id()),
                child,
            };
            let deadline = Instant::now() + GUARD;
            loop {
                if let Some(status) = process.child.try_wait().expect("querying nginx") {
                    last_error = format!(
                        "nginx exited ({status}): {}",
                        std::fs::read_to_string(&error_log).unwrap_or_default()
                    );
                    break;
                }
                // Connecting (without sending anything) reaches no upstream,
                // so round robin is untouched.
                if TcpStream::connect(addr).is_ok() {
                    return Self {
                        process,
                        addr,
                        _dir: dir,
                    };
                }
                assert!(
                    Instant::now() < deadline,
                    "hang guard: nginx did not listen on {addr} within {GUARD:?}: {}",
                    std::fs::read_to_string(&error_log).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            if !last_error.contains("Address already in use") {
                break;
            }
        }
        panic!("{last_error}");
    }
}

/// One process (one round-robin state; no workers to outlive a killed
/// master), in the foreground, every path inside `dir`
/// (so it runs as root or not without touching /var), and the upstream that
/// served each response in `X-Upstream`. The replicas' Host check wants a
/// loopback Host, so the client's is passed on rather than `mcp`.
fn nginx_conf(dir: &Path, listen: SocketAddr, replicas: &[SocketAddr]) -> String {
    let d = dir.display();
    let servers: String = replicas
        .iter()
        .map(|r| format!("        server {r};\n"))
        .collect();
    format!(
        "daemon off;
master_process off;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{}}
http {{
    access_log off;
    client_body_temp_path {d}/client_body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    upstream mcp {{
{servers}    }}
    server {{
        listen {listen};
        location /mcp {{
            proxy_pass http://mcp;
            proxy_http_version 1.1;
            proxy_set_header Connection \"\";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            add_header X-Upstream $upstream_addr always;
        }}
    }}
}}
"
    )
}
