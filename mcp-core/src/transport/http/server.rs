//! [`serve_http`]: bind, accept, serve connections, and [`HttpHandle::close`].

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};

use super::activity::Activity;
use super::conns::{ConnSlot, ConnTable};
use super::halfclose::ConnIo;
use super::lifetime::{self, IdleLimits};
use super::options::HttpOptions;
use super::service::{ConnService, McpHttpService};
use crate::cancel::CancelToken;
use crate::server::McpServer;

/// A running HTTP server.
///
/// Dropping the handle does not stop the server (it runs until the runtime
/// shuts down); call [`close`](Self::close) to stop it.
#[derive(Debug)]
pub struct HttpHandle {
    local_addr: SocketAddr,
    url: String,
    stop: CancelToken,
    task: JoinHandle<()>,
}

impl HttpHandle {
    /// The bound port (the real one when [`HttpOptions::port`] was 0).
    pub fn port(&self) -> u16 {
        self.local_addr.port()
    }

    /// The bound socket address.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, e.g. `http://127.0.0.1:41234/mcp` or
    /// `http://[::1]:41234/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Stops accepting connections, closes idle ones, ends sessions' GET
    /// streams, and lets in-flight calls finish for up to
    /// [`HttpOptions::drain_timeout`]; calls still running then are
    /// cancelled and their connections dropped. Returns once all is down.
    ///
    /// # Cancel safety
    /// Dropping the future stops waiting; the server still closes.
    pub async fn close(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Serves `server` over Streamable HTTP (see the [module docs](super)).
///
/// Must be called within a Tokio runtime; the server runs on spawned tasks.
///
/// # Errors
/// - `InvalidInput` when `host` is not loopback and neither
///   [`HttpOptions::authorize`] nor [`HttpOptions::allow_request`] is set,
///   or when it does not resolve;
/// - `InvalidInput` when the server's [`Storage`](crate::storage::Storage)
///   shares sessions ([`with_sessions`](crate::storage::Storage::with_sessions)) but sessions would be bound to a principal of this process only:
///   no [`HttpOptions::principal`] hook, no resource server, and the
///   server's per-process default `requestState` keys (give every replica
///   the same [`request_state_keys`](crate::McpServerBuilder::request_state_keys));
/// - the bind error itself (`AddrInUse`, `PermissionDenied`, …).
///
/// # Cancel safety
/// Dropping the future before it completes closes the listener it bound.
pub async fn serve_http(server: McpServer, options: HttpOptions) -> io::Result<HttpHandle> {
    if let Some(why) = super::principal::unshareable(&options, &server) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("serve_http: {why}"),
        ));
    }
    let addrs = resolve(&options.host, options.port).await?;
    #[cfg(feature = "auth")]
    let authenticated = options.resource_server.is_some();
    #[cfg(not(feature = "auth"))]
    let authenticated = false;
    let protected = authenticated || options.authorize.is_some() || options.allow_request.is_some();
    if !protected && !addrs.iter().all(|a| a.ip().is_loopback()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "serve_http: refusing to bind non-loopback host {} without authorize or \
                 allow_request (the Host/Origin guard is not authentication)",
                options.host
            ),
        ));
    }
    let mut last_error = None;
    let mut bound = None;
    for addr in &addrs {
        match TcpListener::bind(addr).await {
            Ok(listener) => {
                bound = Some(listener);
                break;
            }
            Err(e) => last_error = Some(e),
        }
    }
    let Some(listener) = bound else {
        return Err(last_error.unwrap_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "serve_http: no address to bind",
            )
        }));
    };
    let local_addr = listener.local_addr()?;
    let host = match local_addr.ip() {
        IpAddr::V6(ip) => format!("[{ip}]"),
        IpAddr::V4(ip) => ip.to_string(),
    };
    let url = format!("http://{host}:{}{}", local_addr.port(), options.path);
    let service = McpHttpService::new(server, options);
    let stop = CancelToken::new();
    let task = tokio::spawn(run(listener, service, stop.clone()));
    Ok(HttpHandle {
        local_addr,
        url,
        stop,
        task,
    })
}

async fn resolve(host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
        .await
        .map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("serve_http: cannot resolve host {host}: {e}"),
            )
        })?
        .collect();
    if addrs.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("serve_http: host {host} resolves to no address"),
        ));
    }
    Ok(addrs)
}

/// After the drain deadline of [`HttpHandle::close`]: how long cancelled
/// calls have to send their final error before their connections are dropped.
const ABORT_GRACE: Duration = Duration::from_secs(1);

async fn run(listener: TcpListener, service: McpHttpService, stop: CancelToken) {
    let shared = Arc::clone(service.shared());
    let table = ConnTable::new(
        shared.options.max_connections,
        shared.options.max_event_streams,
    );
    let mut next_key: u64 = 0;
    let closing = CancelToken::new();
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    // At the cap the connection idle the longest makes room;
                    // with none idle, close at once rather than queue.
                    let activity = Activity::new();
                    next_key += 1;
                    let Ok(slot) = table.admit(next_key, &activity) else {
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    conns.spawn(serve_connection(
                        stream,
                        peer,
                        service.clone(),
                        closing.clone(),
                        activity,
                        slot,
                    ));
                }
                // Out of file descriptors and the like: back off briefly.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
        }
    }
    drop(listener);
    // Drain: idle connections close now, busy ones after their response;
    // GET streams end so their connections can close too.
    closing.cancel();
    shared.closing.cancel();
    if let Some(table) = &shared.sessions {
        table.close_streams();
    }
    let drained = tokio::time::timeout(shared.options.drain_timeout, async {
        while conns.join_next().await.is_some() {}
        shared.calls.idle().await;
    })
    .await;
    if drained.is_err() {
        shared.abort.cancel();
        // Cancelled calls return promptly with their final error response
        // (503 JSON, or the last event of their stream): let the connections
        // deliver it and close on their own, within a bound, before dropping
        // whatever is left.
        let _ = tokio::time::timeout(ABORT_GRACE, async {
            shared.calls.idle().await;
            while conns.join_next().await.is_some() {}
        })
        .await;
        conns.abort_all();
        while conns.join_next().await.is_some() {}
    }
    if let Some(table) = &shared.sessions {
        table.clear();
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    service: McpHttpService,
    closing: CancelToken,
    activity: Arc<Activity>,
    _slot: ConnSlot,
) {
    let service = service
        .for_connection(Some(peer))
        .with_activity(Arc::clone(&activity));
    let opts = &service.shared().options;
    let limits = IdleLimits {
        keep_alive: opts.keep_alive_timeout,
        header_read: opts.header_read_timeout,
    };
    // No hyper timer: the idle clock in `lifetime` enforces the header-read
    // deadline without per-request timer work.
    let mut builder = http1::Builder::new();
    builder.keep_alive(true).max_buf_size(64 * 1024);
    let io = ConnIo::new(stream, Arc::clone(&activity.answer));
    let conn = builder.serve_connection(TokioIo::new(io), ConnService(Arc::new(service)));
    lifetime::serve(conn, &activity, &closing, limits).await;
}
