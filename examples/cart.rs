//! A shopping cart kept across calls without sessions: `open_cart` mints a
//! handle (`{"cart": "<handle>"}`), `add_item {cart, item}` returns the new
//! count, `show_cart {cart}` returns `{"items": [...]}`. The handle is an
//! ordinary tool argument; the framework checks it for the caller's
//! principal before the tool runs (see `mcp_core::state`).
//!
//! Run: `cargo run --example cart` (stdio), or over HTTP:
//! `cargo run --example cart -- --http 127.0.0.1:8080`.
//!
//! Flags:
//! - `--http ADDR` (and `--stateless`): serve Streamable HTTP instead of stdio;
//! - `--redis URL`: keep carts on Redis, shared by every replica started
//!   with the same URL (needs `--features redis`, and `MCP_REQUEST_STATE_KEY`
//!   set alike on every replica: handles are keyed by it; `MCP_REDIS_PREFIX`
//!   sets the key prefix, default `mcp:`);
//! - `--principal-header NAME`: over HTTP, the caller is the value of the
//!   header NAME, as set by a trusted gateway in front (never expose such a
//!   server directly: any client could claim any principal);
//! - `--state-ttl SECS`: a cart unused this long expires (default 3600).

mod common;

use std::time::Duration;

use mcp_core::state::{Handle, Stateful};
use mcp_core::{mcp_tool, InvokeContext, Json, McpServer, StdioOptions, ToolError};
use serde::{Deserialize, Serialize};

/// A cart: the items added, in order.
#[derive(Default, Serialize, Deserialize)]
struct Cart {
    items: Vec<String>,
}

impl Stateful for Cart {
    const KIND: &'static str = "cart";
    const MINTED_BY: &'static str = "open_cart";
}

/// What `open_cart` returns.
#[derive(Serialize, schemars::JsonSchema)]
struct Opened {
    /// The new cart's handle: pass it to `add_item` and `show_cart`.
    cart: Handle<Cart>,
}

/// What `show_cart` returns.
#[derive(Serialize, schemars::JsonSchema)]
struct Contents {
    /// The items, in the order they were added.
    items: Vec<String>,
}

/// Opens an empty cart and returns its handle.
#[mcp_tool]
async fn open_cart(ctx: &InvokeContext) -> Result<Json<Opened>, ToolError> {
    let cart = Handle::mint(ctx, Cart::default()).await?;
    Ok(Json(Opened { cart }))
}

/// Adds an item to a cart; returns how many items it now holds.
#[mcp_tool]
async fn add_item(
    ctx: &InvokeContext,
    cart: Handle<Cart>,
    #[arg(description = "The item to add")] item: String,
) -> Result<Json<usize>, ToolError> {
    let count = cart
        .update(ctx, |c| {
            c.items.push(item.clone());
            c.items.len()
        })
        .await?;
    Ok(Json(count))
}

/// Lists a cart's items.
#[mcp_tool(read_only)]
async fn show_cart(ctx: &InvokeContext, cart: Handle<Cart>) -> Result<Json<Contents>, ToolError> {
    let items = cart.get(ctx).await?.items;
    Ok(Json(Contents { items }))
}

/// The flags this example reads; the rest go to `common::serve_args`.
#[derive(Default)]
struct Flags {
    redis: Option<String>,
    principal_header: Option<String>,
    state_ttl: Option<Duration>,
}

fn flags(args: Vec<String>) -> Result<(Flags, Vec<String>), String> {
    let mut flags = Flags::default();
    let mut rest = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--redis" => flags.redis = Some(value("--redis URL")?),
            "--principal-header" => {
                flags.principal_header = Some(value("--principal-header NAME")?)
            }
            "--state-ttl" => {
                let secs: u64 = value("--state-ttl SECS")?
                    .parse()
                    .map_err(|_| "--state-ttl needs a whole number of seconds".to_owned())?;
                flags.state_ttl = Some(Duration::from_secs(secs.max(1)));
            }
            _ => rest.push(arg),
        }
    }
    if flags.principal_header.is_some() && !rest.iter().any(|a| a == "--http") {
        return Err("--principal-header needs --http (stdio has no headers)".into());
    }
    Ok((flags, rest))
}

/// The storage `--redis URL` names.
#[cfg(feature = "redis")]
fn redis_storage(url: &str) -> Result<mcp_core::storage::Storage, String> {
    if std::env::var_os(common::STATE_KEY_ENV).is_none() {
        return Err(format!(
            "--redis needs {} (64 hex digits, the same on every replica: cart handles are keyed by it)",
            common::STATE_KEY_ENV
        ));
    }
    // `MCP_REDIS_PREFIX`: the key prefix (deployments, or tests, sharing
    // one Redis use different ones).
    let prefix = std::env::var("MCP_REDIS_PREFIX")
        .unwrap_or_else(|_| mcp_core::redis::DEFAULT_REDIS_PREFIX.to_owned());
    let redis = mcp_core::redis::RedisBackend::open_with(
        url,
        &prefix,
        mcp_core::redis::DEFAULT_REDIS_TIMEOUT,
    )
    .map_err(|e| e.to_string())?;
    Ok(redis.storage())
}

#[cfg(not(feature = "redis"))]
fn redis_storage(_: &str) -> Result<mcp_core::storage::Storage, String> {
    Err("--redis needs the `redis` feature: cargo run --example cart --features redis -- --redis URL".into())
}

async fn serve(flags: Flags, rest: Vec<String>) -> std::io::Result<()> {
    let mut builder = McpServer::builder()
        .server_info("cart", env!("CARGO_PKG_VERSION"))
        .tool(open_cart::tool())
        .tool(add_item::tool())
        .tool(show_cart::tool());
    builder = common::with_env_state_key(builder);
    if let Some(url) = &flags.redis {
        let storage = redis_storage(url).map_err(|e| bad_usage(&e))?;
        builder = builder.storage(storage);
    }
    if let Some(ttl) = flags.state_ttl {
        builder = builder.state_ttl(ttl);
    }
    let server = builder.build().map_err(std::io::Error::other)?;
    let header = flags.principal_header;
    common::serve_args(
        server,
        StdioOptions::default(),
        rest,
        move |options| match header {
            Some(name) => options.principal(move |parts| {
                let value = parts.headers.get(name.as_str())?.to_str().ok()?;
                (!value.is_empty()).then(|| format!("header:{value}"))
            }),
            None => options,
        },
    )
    .await
}

/// A command-line problem, with the flags this example adds.
fn bad_usage(problem: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{problem}\nusage: [--http HOST:PORT|PORT [--stateless]] [--redis URL] [--principal-header NAME] [--state-ttl SECS]"),
    )
}

fn main() -> std::io::Result<()> {
    let (flags, rest) = flags(std::env::args().skip(1).collect()).map_err(|e| bad_usage(&e))?;
    common::runtime_for(&rest)?.block_on(serve(flags, rest))
}
