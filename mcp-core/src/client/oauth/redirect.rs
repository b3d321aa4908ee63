//! The user's part of the flow, behind [`AuthorizationStep`]: show the
//! authorization URL, then hand back where the authorization server
//! redirected to. [`LoopbackRedirect`] receives that redirect on a
//! loopback port (for CLI tools); [`HeadlessRedirect`] follows the URL
//! itself, for authorization servers that approve without a user
//! (tests, conformance suites).

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::fetch::Fetcher;
use crate::client::ClientError;

/// Shows the authorization URL to the user and returns the redirect.
#[async_trait::async_trait]
pub trait AuthorizationStep: Send + Sync + 'static {
    /// The `redirect_uri` sent with every authorization request (and
    /// registered by dynamic registration).
    fn redirect_uri(&self) -> String;

    /// Sends the user to `url` (opens a browser, prints it) and returns
    /// the full URL the authorization server redirected back to, with
    /// its query (`code`, `state`, `iss` or `error`).
    ///
    /// # Errors
    /// The user did not come back, or the redirect could not be received.
    ///
    /// # Cancel safety
    /// Dropping the future abandons this authorization attempt.
    async fn authorize(&self, url: &str) -> Result<String, ClientError>;
}

type Opener = Arc<dyn Fn(&str) + Send + Sync>;

/// Receives the redirect on `http://127.0.0.1:PORT/callback`: for a CLI
/// tool, which opens (or prints) the URL and waits there for the browser.
pub struct LoopbackRedirect {
    listener: TcpListener,
    port: u16,
    open: Opener,
    timeout: Duration,
}

impl LoopbackRedirect {
    /// Listens on `127.0.0.1:port` (`0`: a free port). The URL is printed
    /// to stderr unless [`LoopbackRedirect::open_with`] says otherwise;
    /// the wait for the browser is 5 minutes.
    ///
    /// # Errors
    /// The port cannot be bound.
    ///
    /// # Cancel safety
    /// Dropping the future binds nothing.
    pub async fn bind(port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener,
            port,
            open: Arc::new(|url| eprintln!("Open this URL to authorize: {url}")),
            timeout: Duration::from_secs(300),
        })
    }

    /// Calls `open` with each authorization URL (to launch a browser).
    #[must_use]
    pub fn open_with(mut self, open: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.open = Arc::new(open);
        self
    }

    /// How long to wait for the redirect.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Accepts connections until one asks for `/callback`.
    async fn receive(&self) -> Result<String, ClientError> {
        loop {
            let (mut stream, _) =
                self.listener.accept().await.map_err(|e| {
                    ClientError::Authorization(format!("the redirect listener: {e}"))
                })?;
            // The request line is all that matters; 8 KiB bounds it.
            let mut head = vec![0u8; 8192];
            let mut len = 0;
            while len < head.len() && !head[..len].windows(2).any(|w| w == b"\r\n") {
                match stream.read(&mut head[len..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => len += n,
                }
            }
            let line = String::from_utf8_lossy(&head[..len]);
            let target = line
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or_default()
                .to_owned();
            let is_callback = target == "/callback" || target.starts_with("/callback?");
            let reply: &[u8] = if is_callback {
                b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nAuthorization received: you can close this window.\n"
            } else {
                b"HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
            };
            let _ = stream.write_all(reply).await;
            let _ = stream.shutdown().await;
            if is_callback {
                return Ok(format!("http://127.0.0.1:{}{target}", self.port));
            }
        }
    }
}

impl std::fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("port", &self.port)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl AuthorizationStep for LoopbackRedirect {
    fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}/callback", self.port)
    }

    async fn authorize(&self, url: &str) -> Result<String, ClientError> {
        (self.open)(url);
        tokio::time::timeout(self.timeout, self.receive())
            .await
            .map_err(|_| {
                ClientError::Authorization("no authorization redirect arrived in time".into())
            })?
    }
}

/// Follows the authorization URL itself and reads the redirect from the
/// answer's `Location`: only for authorization servers that approve
/// without a user (test servers, the conformance suite's).
#[derive(Debug, Clone)]
pub struct HeadlessRedirect {
    redirect_uri: String,
}

impl HeadlessRedirect {
    /// Sends `redirect_uri` (nothing needs to listen there).
    pub fn new(redirect_uri: impl Into<String>) -> Self {
        Self {
            redirect_uri: redirect_uri.into(),
        }
    }
}

#[async_trait::async_trait]
impl AuthorizationStep for HeadlessRedirect {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    async fn authorize(&self, url: &str) -> Result<String, ClientError> {
        let answer = Fetcher::new(64 * 1024, Duration::from_secs(30))
            .get(url)
            .await?;
        answer.location.ok_or_else(|| {
            ClientError::Authorization(format!(
                "the authorization endpoint answered {} without a redirect",
                answer.status
            ))
        })
    }
}
