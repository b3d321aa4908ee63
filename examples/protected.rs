//! An MCP server protected as an OAuth 2.1 resource server (feature `auth`):
//! every request needs a bearer token of the authorization server given by
//! `--issuer`, issued for this server (`--resource`, default
//! `http://127.0.0.1:PORT/mcp`).
//!
//! Tools: `whoami` (no scope) answers who the token belongs to,
//! `read_notes` needs `notes:read`, `add_note` needs `notes:write`. A call
//! without its scope is answered `403 insufficient_scope`, so a client can
//! step up. `--required-scope S` makes `S` a baseline every request needs
//! (named in the `401` challenge, so clients ask for it first). Protected
//! Resource Metadata is at
//! `/.well-known/oauth-protected-resource/mcp`.
//!
//! ```text
//! cargo run --example protected --features auth -- --port 8000 --issuer http://127.0.0.1:9000
//! cargo run --example protected --features auth -- --port 8000 --issuer http://127.0.0.1:9000 \
//!     --introspect http://127.0.0.1:9000/token/introspection --client-id mcp --client-secret s3cret
//! ```
//! JWT access tokens are verified against the issuer's JWKS (from its
//! metadata); with `--introspect`, tokens are introspected (RFC 7662)
//! instead. The issuer is reached over `http://` or `https://` (see `mcp_core::auth`).

use std::sync::{Arc, Mutex};

use mcp_core::auth::{IntrospectionVerifier, JwtVerifier, ResourceServer};
use mcp_core::{context::AuthInfo, mcp_tool, InvokeContext, McpServer, State};
use mcp_core::{serve_http, HttpOptions};

/// Notes kept in memory, shared by every caller.
#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Vec<String>>>);

impl Notes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Who the access token belongs to: principal, client and granted scopes.
#[mcp_tool(read_only)]
async fn whoami(ctx: InvokeContext) -> String {
    match ctx.extensions().get::<AuthInfo>() {
        Some(who) => serde_json::json!({
            "principal": who.principal(),
            "client_id": who.client_id,
            "scopes": who.scopes,
        })
        .to_string(),
        None => "anonymous".to_owned(),
    }
}

/// List the notes (needs the `notes:read` scope).
#[mcp_tool(read_only, scopes = ["notes:read"])]
async fn read_notes(notes: State<Notes>) -> String {
    let notes = notes.0.lock();
    if notes.is_empty() {
        "no notes yet".to_owned()
    } else {
        notes.join("\n")
    }
}

/// Add a note (needs the `notes:write` scope).
#[mcp_tool(scopes = ["notes:write"])]
async fn add_note(
    #[arg(description = "The note's text")] text: String,
    notes: State<Notes>,
) -> String {
    let mut notes = notes.0.lock();
    notes.push(text);
    format!("{} notes", notes.len())
}

struct Args {
    host: String,
    port: u16,
    issuer: String,
    resource: Option<String>,
    introspect: Option<(String, String, String)>,
    required: Vec<String>,
}

const USAGE: &str = "usage: protected --issuer URL [--port P] [--host H] [--resource URL] \
                     [--required-scope S]... [--introspect URL --client-id ID --client-secret SECRET]";

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut host, mut port, mut issuer, mut resource) = ("127.0.0.1".to_owned(), 0u16, None, None);
    let (mut introspect, mut client_id, mut client_secret) = (None, None, None);
    let mut required = Vec::new();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))
        };
        match flag.as_str() {
            "--host" => host = value()?,
            "--port" => port = value()?.parse().map_err(|e| format!("--port: {e}"))?,
            "--issuer" => issuer = Some(value()?),
            "--resource" => resource = Some(value()?),
            "--introspect" => introspect = Some(value()?),
            "--client-id" => client_id = Some(value()?),
            "--client-secret" => client_secret = Some(value()?),
            "--required-scope" => required.push(value()?),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    let issuer = issuer.ok_or_else(|| format!("--issuer is required\n{USAGE}"))?;
    let introspect = match (introspect, client_id, client_secret) {
        (None, _, _) => None,
        (Some(url), Some(id), Some(secret)) => Some((url, id, secret)),
        _ => {
            return Err(format!(
                "--introspect needs --client-id and --client-secret\n{USAGE}"
            ))
        }
    };
    Ok(Args {
        host,
        port,
        issuer,
        resource,
        introspect,
        required,
    })
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    // Token checks and fetch failures are logged through tracing: on
    // stderr, filtered by RUST_LOG.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let args = args().map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // The resource URI names the port: pick a free one first when asked for 0.
    let port = match args.port {
        0 => std::net::TcpListener::bind((args.host.as_str(), 0))?
            .local_addr()?
            .port(),
        port => port,
    };
    let resource = args
        .resource
        .unwrap_or_else(|| format!("http://{}:{port}/mcp", args.host));
    let rs = match &args.introspect {
        Some((url, id, secret)) => ResourceServer::new(
            resource.clone(),
            IntrospectionVerifier::new(url.clone(), id, secret, resource.clone())
                .issuer(args.issuer.clone()),
        ),
        None => ResourceServer::new(
            resource.clone(),
            JwtVerifier::new(args.issuer.clone(), resource.clone()),
        ),
    }
    .authorization_server(args.issuer.clone())
    .required_scopes(args.required.clone())
    .resource_name("Protected notes");
    let server = McpServer::builder()
        .server_info("protected", env!("CARGO_PKG_VERSION"))
        .state(Notes::default())
        .tool(whoami::tool())
        .tool(read_notes::tool())
        .tool(add_note::tool())
        .build()
        .map_err(std::io::Error::other)?;
    let metadata = rs.metadata_url().to_owned();
    let options = HttpOptions::new()
        .host(args.host.clone())
        .port(port)
        .resource_server(rs);
    let handle = serve_http(server, options).await?;
    eprintln!(
        "protected: MCP server over Streamable HTTP as an OAuth resource server for {resource} \
         (tokens of {}; metadata at {metadata}; Ctrl-C stops)",
        args.issuer
    );
    eprintln!("MCP endpoint: {}", handle.url());
    tokio::signal::ctrl_c().await?;
    handle.close().await;
    Ok(())
}
