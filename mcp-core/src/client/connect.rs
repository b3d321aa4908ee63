//! Opening a connection: the transport, then the revision (the
//! `server/discover` probe, the `initialize` handshake, or neither).

use std::sync::Arc;

use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{json, Map, Value};
use tokio::io::{AsyncRead, AsyncWrite};

use super::engine::{modern_meta, Peer, Speaking};
use super::error::ClientError;
use super::link::http::{Http, HttpConfig};
use super::link::lines::Lines;
use super::link::{Inbox, Link};
use super::options::{ClientBuilder, Protocol, RequestOptions};
use super::Client;
use crate::protocol::{ErrorCode, MODERN_PROTOCOL_VERSIONS, SUPPORTED_PROTOCOL_VERSIONS};

/// What the server said about itself when the connection opened.
#[derive(Debug, Clone, Default)]
pub(crate) struct Greeting {
    /// The revision spoken.
    pub(crate) version: String,
    /// The `initialize` or `server/discover` result, whole.
    pub(crate) result: Value,
}

impl ClientBuilder {
    /// Starts `command` and speaks MCP over its stdin and stdout (its
    /// stderr goes to this process's stderr). The process is asked to exit
    /// by [`Client::close`] (its input closed, then killed after 2 s) and
    /// killed when the client is dropped.
    ///
    /// # Errors
    /// The process cannot start, or the handshake fails.
    ///
    /// # Cancel safety
    /// Dropping the future kills the process.
    pub async fn connect_stdio(
        self,
        command: tokio::process::Command,
    ) -> Result<Client, ClientError> {
        let max = self.max_message;
        self.open(false, move |inbox| {
            Ok(Box::new(Lines::spawn(command, inbox, max)?))
        })
        .await
    }

    /// Speaks MCP as newline-delimited JSON over `reader` and `writer` (a
    /// socket, a pipe, an in-process server's stream).
    ///
    /// # Errors
    /// The handshake fails.
    ///
    /// # Cancel safety
    /// Dropping the future closes the streams.
    pub async fn connect_io<R, W>(self, reader: R, writer: W) -> Result<Client, ClientError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let max = self.max_message;
        self.open(false, move |inbox| {
            Ok(Box::new(Lines::over(reader, writer, inbox, max)))
        })
        .await
    }

    /// Speaks Streamable HTTP to the endpoint at `url` (`http://`, and
    /// `https://` with the `tls` feature: see the `tls` module for the roots).
    ///
    /// # Errors
    /// A malformed URL or header, a refused connection, or a failed handshake.
    ///
    /// # Cancel safety
    /// Dropping the future abandons the handshake (a legacy session the
    /// server opened expires on its side).
    pub async fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let url: hyper::Uri = url
            .parse()
            .map_err(|e| ClientError::transport(format!("invalid URL {url:?}: {e}")))?;
        crate::http_client::check_scheme(url.scheme_str())
            .map_err(|e| ClientError::transport(format!("{url}: {e}")))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &self.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| ClientError::transport(format!("header {name:?}: {e}")))?;
            if name.as_str().starts_with("mcp-") || name.as_str() == "last-event-id" {
                return Err(ClientError::transport(format!(
                    "header {name} is set by the client itself"
                )));
            }
            let value = HeaderValue::from_str(value)
                .map_err(|e| ClientError::transport(format!("header {name} value: {e}")))?;
            headers.append(name, value);
        }
        let config = HttpConfig {
            url,
            headers,
            max_message: self.max_message,
            #[cfg(feature = "client-oauth")]
            oauth: self.oauth.clone(),
        };
        self.open(true, move |inbox| Ok(Box::new(Http::new(config, inbox))))
            .await
    }

    async fn open(
        self,
        http: bool,
        make_link: impl FnOnce(Inbox) -> Result<Box<dyn Link>, ClientError>,
    ) -> Result<Client, ClientError> {
        let cache = Arc::new(super::cache::Cache::new(&self.cache));
        let mut handlers = self.handlers.clone();
        cache.watch(&mut handlers);
        let peer = Peer::start(make_link, http, handlers, self.timeout)?;
        let info = serde_json::to_value(&self.info).map_err(ClientError::protocol)?;
        let capabilities = self.handlers.capabilities();
        let greeting = match &self.protocol {
            Protocol::Legacy(version) => initialize(&peer, version, &capabilities, &info).await?,
            Protocol::Modern(version) => {
                discover(&peer, version, &capabilities, &info, None).await?
            }
            Protocol::Auto => {
                let newest = MODERN_PROTOCOL_VERSIONS[0];
                match discover(
                    &peer,
                    newest,
                    &capabilities,
                    &info,
                    Some(self.probe_timeout),
                )
                .await
                {
                    Ok(greeting) => greeting,
                    Err(ClientError::Closed) => return Err(ClientError::Closed),
                    Err(e) => {
                        tracing::debug!(target: "mcp_core::client", "server/discover probe: {e}; falling back to initialize");
                        peer.speak(Speaking::default());
                        initialize(&peer, SUPPORTED_PROTOCOL_VERSIONS[0], &capabilities, &info)
                            .await?
                    }
                }
            }
        };
        Ok(Client::new(peer, greeting, cache))
    }
}

/// The legacy handshake: `initialize`, then `notifications/initialized`.
async fn initialize(
    peer: &Arc<Peer>,
    version: &str,
    capabilities: &Map<String, Value>,
    info: &Value,
) -> Result<Greeting, ClientError> {
    let params = json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "clientInfo": info,
    });
    let Value::Object(params) = params else {
        return Err(ClientError::protocol("initialize params"));
    };
    let raw = peer
        .request("initialize", &params, &RequestOptions::new())
        .await?;
    let result: Value = serde_json::from_str(raw.get()).map_err(ClientError::protocol)?;
    let spoken = result
        .get("protocolVersion")
        .and_then(Value::as_str)
        .ok_or_else(|| ClientError::protocol("initialize result without protocolVersion"))?
        .to_owned();
    if !SUPPORTED_PROTOCOL_VERSIONS.contains(&spoken.as_str()) {
        return Err(ClientError::protocol(format!(
            "the server answered initialize with revision {spoken:?}, which this client does not speak"
        )));
    }
    peer.speak(Speaking::legacy(&spoken));
    peer.notify("notifications/initialized", &Map::new())
        .await?;
    peer.link().initialized().await;
    Ok(Greeting {
        version: spoken,
        result,
    })
}

/// The stateless opening: `server/discover` speaking `version` (once more
/// with another revision if the server answers `-32022` naming one this
/// client speaks).
async fn discover(
    peer: &Arc<Peer>,
    version: &str,
    capabilities: &Map<String, Value>,
    info: &Value,
    timeout: Option<std::time::Duration>,
) -> Result<Greeting, ClientError> {
    let mut version = version.to_owned();
    let mut options = RequestOptions::new();
    if let Some(t) = timeout {
        options = options.timeout(t);
    }
    for attempt in 0..2 {
        peer.speak(Speaking::modern(
            &version,
            modern_meta(&version, capabilities, info),
        ));
        match peer.request("server/discover", &Map::new(), &options).await {
            Ok(raw) => {
                let result: Value =
                    serde_json::from_str(raw.get()).map_err(ClientError::protocol)?;
                check_discover(&result)?;
                return Ok(Greeting { version, result });
            }
            Err(ClientError::Rpc(e))
                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0 && attempt == 0 =>
            {
                match supported_modern(e.data.as_ref()) {
                    Some(other) => version = other,
                    None => return Err(ClientError::Rpc(e)),
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(ClientError::protocol(
        "server/discover refused every revision offered",
    ))
}

/// The newest stateless revision this client speaks among a `-32022`
/// error's `data.supported`.
pub(crate) fn supported_modern(data: Option<&Value>) -> Option<String> {
    let supported = data?.get("supported")?.as_array()?;
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s.as_str() == Some(v)))
        .map(|v| (*v).to_owned())
}

fn check_discover(result: &Value) -> Result<(), ClientError> {
    let ok = result.get("supportedVersions").is_some_and(Value::is_array)
        && result.get("capabilities").is_some_and(Value::is_object);
    if ok {
        Ok(())
    } else {
        Err(ClientError::protocol(
            "a server/discover result without supportedVersions and capabilities",
        ))
    }
}
