//! Attribute macros for [`mcp-core`](https://docs.rs/mcp-core): `#[mcp_tool]`,
//! `#[mcp_resource]` and `#[mcp_prompt]`.
//!
//! Depend on `mcp-core` (which re-exports these with its default `macros`
//! feature) rather than on this crate directly. Each macro leaves the
//! function as written, so it stays callable and unit-testable, and adds a
//! companion type of the same name whose associated function returns the
//! descriptor: `echo::tool()`, `week::resource()`, `greet::prompt()`.

mod attr;
mod diag;
mod docs;
mod prompt;
mod resource;
mod signature;
mod tool;

use proc_macro::TokenStream;

/// Turns an `async fn` (or a plain `fn`) into an MCP tool; `name::tool()`
/// returns its [`McpToolDef`](https://docs.rs/mcp-core).
///
/// Keys: `name`, `title`, `description`, `read_only`, `destructive`,
/// `idempotent`, `open_world`, `icon`, `meta`, `keep_defs`, `crate`.
#[proc_macro_attribute]
pub fn mcp_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    tool::expand(attr.into(), item.into()).into()
}

/// Turns a function into an MCP resource (or, when `uri` has `{variables}`,
/// a resource template); `name::resource()` returns its descriptor.
///
/// Keys: `uri` (required), `name`, `title`, `description`, `mime_type`, `crate`.
#[proc_macro_attribute]
pub fn mcp_resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    resource::expand(attr.into(), item.into()).into()
}

/// Turns a function of `String` / `Option<String>` arguments into an MCP
/// prompt; `name::prompt()` returns its descriptor.
///
/// Keys: `name`, `title`, `description`, `crate`.
#[proc_macro_attribute]
pub fn mcp_prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    prompt::expand(attr.into(), item.into()).into()
}
