//! MCP Apps (the `io.modelcontextprotocol/ui` extension, SEP-1865): a tool
//! names an interactive HTML view, which the host renders in a sandboxed
//! iframe next to the tool's result. The view talks to the host over
//! `postMessage` (the `App` API of `@modelcontextprotocol/ext-apps`) and
//! can call this server's tools through it.
//!
//! - A view is an [`AppView`]: a `ui://` resource served as
//!   [`MIME_TYPE`] (`text/html;profile=mcp-app`), with its
//!   [`ResourceUi`] (content security policy, permissions, dedicated
//!   domain, border preference) in `_meta.ui`. Add it with
//!   [`McpServerBuilder::app_view`](crate::McpServerBuilder::app_view):
//!   it is an ordinary resource of the registry.
//! - A tool links its view with [`McpToolDef::with_ui`] and a [`ToolUi`]
//!   (or `#[mcp_tool(ui = "ui://…")]`), which writes `_meta.ui`.
//!   [`Visibility`] says who may call it: the model, the view, or both.
//! - The server declares the extension in its capabilities (`extensions`
//!   map, both protocol eras) as soon as it has a view or a tool with
//!   `_meta.ui`; [`client_supports_apps`] tells whether the client
//!   declared it.
//!
//! [`McpServerBuilder::build`](crate::McpServerBuilder::build) refuses, with
//! [`BuildError::InvalidApp`](crate::BuildError::InvalidApp), a view whose
//! URI is not `ui://`, a CSP origin that is not an origin, a tool whose
//! `_meta.ui.resourceUri` names no view of the server, and an empty
//! visibility (a tool forwarded from a proxied backend is left to its
//! backend). The CSP of every view is checked, however it was made: on
//! its listing at build and when one is added while serving, and on its
//! contents at every `resources/read` (a read whose `_meta.ui.csp` is not
//! origins is refused with `-32603`). The guide chapter `guide::apps` (built with the crate's
//! docs) walks through a whole example.
//!
//! ```
//! use mcp_core::apps::{AppView, Csp, ResourceUi, ToolUi, Visibility};
//! use mcp_core::{InvokeContext, McpServer, McpToolDef};
//! use serde_json::json;
//!
//! let view = AppView::new("ui://clock/view.html", "Clock", "<!doctype html><p>…</p>")
//!     .with_ui(ResourceUi::new().csp(Csp::new().resource_domain("https://cdn.example.com")));
//! let now = McpToolDef::new("now", "The time", json!({"type": "object"}),
//!     |_args, _ctx: InvokeContext| async { "12:00" })
//!     .with_ui(ToolUi::new("ui://clock/view.html"));
//! let tick = McpToolDef::new("tick", "Called by the view", json!({"type": "object"}),
//!     |_args, _ctx: InvokeContext| async { "tock" })
//!     .with_ui(ToolUi::new("ui://clock/view.html").visibility([Visibility::App]));
//! let server = McpServer::builder().app_view(view).tool(now).tool(tick).build().expect("valid");
//! assert!(server.capabilities()["extensions"]["io.modelcontextprotocol/ui"].is_object());
//! ```

mod check;
mod view;

use serde_json::{Map, Value};

use crate::context::InvokeContext;
use crate::handler::tool::McpToolDef;

pub(crate) use check::{capability, contents_problem, view_problem};
pub use view::{AppView, Csp, Permissions, ResourceUi};

/// The extension's identifier, the key in the `extensions` capability map.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view: HTML under the MCP Apps profile.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme every view uses.
pub const UI_SCHEME: &str = "ui://";

/// The older, flat `_meta` key of a tool's view URI, still written next to
/// `_meta.ui.resourceUri` for hosts that read only it.
pub const LEGACY_RESOURCE_URI_KEY: &str = "ui/resourceUri";

/// Who may call a tool (`_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// The model sees the tool and may call it (`"model"`).
    Model,
    /// The view may call it through the host (`"app"`), for this
    /// server's views only.
    App,
}

impl Visibility {
    /// The wire name: `"model"` or `"app"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::App => "app",
        }
    }
}

/// A tool's link to its view: `_meta.ui` of the tool (see
/// [`McpToolDef::with_ui`]).
///
/// ```
/// use mcp_core::apps::{ToolUi, Visibility};
///
/// let ui = ToolUi::new("ui://shop/cart.html").visibility([Visibility::App]);
/// assert_eq!(ui.to_meta()["visibility"], serde_json::json!(["app"]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUi {
    resource_uri: String,
    visibility: Option<Vec<Visibility>>,
}

impl ToolUi {
    /// Links the view at `resource_uri` (a `ui://` URI the server serves
    /// with [`McpServerBuilder::app_view`](crate::McpServerBuilder::app_view)).
    /// Without [`visibility`](Self::visibility) the spec's default applies:
    /// both the model and the view may call the tool.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        Self {
            resource_uri: resource_uri.into(),
            visibility: None,
        }
    }

    /// Who may call the tool: `[Visibility::App]` makes it app-only (the
    /// host keeps it from the model; it is still listed by `tools/list`).
    /// An empty list is refused by
    /// [`build`](crate::McpServerBuilder::build).
    #[must_use]
    pub fn visibility(mut self, who: impl IntoIterator<Item = Visibility>) -> Self {
        let mut list: Vec<Visibility> = Vec::new();
        for v in who {
            if !list.contains(&v) {
                list.push(v);
            }
        }
        self.visibility = Some(list);
        self
    }

    /// The view's URI.
    pub fn resource_uri(&self) -> &str {
        &self.resource_uri
    }

    /// The `_meta.ui` object.
    pub fn to_meta(&self) -> Value {
        let mut ui = Map::new();
        ui.insert("resourceUri".into(), self.resource_uri.clone().into());
        if let Some(list) = &self.visibility {
            let names = list.iter().map(|v| Value::from(v.as_str())).collect();
            ui.insert("visibility".into(), Value::Array(names));
        }
        Value::Object(ui)
    }
}

impl McpToolDef {
    /// Links this tool to its view (MCP Apps): writes `_meta.ui` (and the
    /// older `_meta["ui/resourceUri"]`), keeping the rest of `_meta`. The
    /// server then declares the apps extension; a URI that names no view
    /// of the server fails [`build`](crate::McpServerBuilder::build).
    #[must_use]
    pub fn with_ui(self, ui: ToolUi) -> Self {
        let mut meta = self.tool().meta.clone().unwrap_or_default();
        meta.insert("ui".into(), ui.to_meta());
        meta.insert(
            LEGACY_RESOURCE_URI_KEY.into(),
            ui.resource_uri.clone().into(),
        );
        self.with_meta(meta)
    }
}

/// Whether the client of this call declared MCP Apps: its capabilities'
/// `extensions` map holds [`APPS_EXTENSION`] with [`MIME_TYPE`] among its
/// `mimeTypes`. A tool may then answer with less text, knowing a view
/// shows its result; a host that does not render views still gets the
/// tool's ordinary content.
pub fn client_supports_apps(ctx: &InvokeContext) -> bool {
    ctx.client_capabilities().is_some_and(|caps| {
        caps.extra
            .get("extensions")
            .and_then(|e| e.get(APPS_EXTENSION))
            .and_then(|ui| ui.get("mimeTypes"))
            .and_then(Value::as_array)
            .is_some_and(|types| types.iter().any(|t| t == MIME_TYPE))
    })
}
