//! [`AppView`]: a `ui://` HTML resource and its `_meta.ui`
//! ([`ResourceUi`], [`Csp`], [`Permissions`]).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{MIME_TYPE, UI_SCHEME};
use crate::context::InvokeContext;
use crate::handler::resource::{McpResourceDef, ResourceKind, ResourceRequest};
use crate::protocol::ResourceContents;

/// The origins a view may reach (`_meta.ui.csp`). The host builds the
/// iframe's Content Security Policy from them; without any, the view may
/// load nothing from the network. Each entry is an origin such as
/// `https://cdn.example.com`, `https://*.example.com` or
/// `http://localhost:8080` (no path, query or spaces), checked by
/// [`build`](crate::McpServerBuilder::build).
///
/// ```
/// use mcp_core::apps::Csp;
///
/// let csp = Csp::new()
///     .resource_domain("https://cdn.jsdelivr.net")
///     .connect_domain("https://api.example.com");
/// assert_eq!(csp.to_meta()["resourceDomains"][0], "https://cdn.jsdelivr.net");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csp {
    connect: Vec<String>,
    resource: Vec<String>,
    frame: Vec<String>,
    base_uri: Vec<String>,
}

impl Csp {
    /// No origins: the view loads nothing from the network.
    pub fn new() -> Self {
        Self::default()
    }

    /// An origin the view may `fetch`, XHR or open a WebSocket to
    /// (`connectDomains`, CSP `connect-src`).
    #[must_use]
    pub fn connect_domain(mut self, origin: impl Into<String>) -> Self {
        self.connect.push(origin.into());
        self
    }

    /// An origin the view may load scripts, styles, images, fonts and
    /// media from (`resourceDomains`).
    #[must_use]
    pub fn resource_domain(mut self, origin: impl Into<String>) -> Self {
        self.resource.push(origin.into());
        self
    }

    /// An origin the view may embed in a nested iframe (`frameDomains`,
    /// CSP `frame-src`).
    #[must_use]
    pub fn frame_domain(mut self, origin: impl Into<String>) -> Self {
        self.frame.push(origin.into());
        self
    }

    /// An origin the view's `<base href>` may name (`baseUriDomains`,
    /// CSP `base-uri`).
    #[must_use]
    pub fn base_uri_domain(mut self, origin: impl Into<String>) -> Self {
        self.base_uri.push(origin.into());
        self
    }

    /// The `_meta.ui.csp` object (lists that are empty are left out).
    pub fn to_meta(&self) -> Value {
        let mut csp = Map::new();
        for (key, list) in self.lists() {
            if !list.is_empty() {
                csp.insert(key.into(), list.clone().into());
            }
        }
        Value::Object(csp)
    }

    fn lists(&self) -> [(&'static str, &Vec<String>); 4] {
        [
            ("connectDomains", &self.connect),
            ("resourceDomains", &self.resource),
            ("frameDomains", &self.frame),
            ("baseUriDomains", &self.base_uri),
        ]
    }
}

/// The four origin lists of `_meta.ui.csp`.
const CSP_LISTS: [&str; 4] = [
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
];

/// Why `csp` (the JSON of a view's `_meta.ui.csp`, however it was
/// written) is not one a host may build its policy from: not an object,
/// a list that is not an array, or an entry that is not an origin.
pub(super) fn csp_problem(csp: &Value) -> Option<String> {
    let Value::Object(csp) = csp else {
        return Some("`_meta.ui.csp` must be an object".to_owned());
    };
    CSP_LISTS.into_iter().find_map(|key| {
        let list = csp.get(key)?;
        let Some(list) = list.as_array() else {
            return Some(format!("csp.{key} must be an array of origins"));
        };
        list.iter()
            .find(|o| !o.as_str().is_some_and(is_origin))
            .map(|o| match o.as_str() {
                Some(o) => format!("`{o}` in csp.{key} is not an origin (scheme://host[:port], host may start with `*.`)"),
                None => format!("{o} in csp.{key} is not an origin (a string scheme://host[:port])"),
            })
    })
}

/// Whether `s` is an origin a CSP source list may hold: `http`, `https`,
/// `ws` or `wss`, then a host (optionally starting with `*.`) of letters,
/// digits, `-` and `.`, or a bracketed IPv6 address, then an optional
/// port. Nothing else: a space, `;` or quote would let the entry add
/// directives of its own to the policy the host builds.
fn is_origin(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    if !["http", "https", "ws", "wss"].contains(&scheme) {
        return false;
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) if !rest.ends_with(']') => (h, Some(p)),
        _ => (rest, None),
    };
    if let Some(port) = port {
        if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return !v6.is_empty() && v6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
    }
    let host = host.strip_prefix("*.").unwrap_or(host);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Browser capabilities a view asks for (`_meta.ui.permissions`); a host
/// may grant them through the iframe's `allow` attribute, so a view
/// should still detect each feature before using it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions {
    /// The camera (`camera`).
    pub camera: bool,
    /// The microphone (`microphone`).
    pub microphone: bool,
    /// The location (`geolocation`).
    pub geolocation: bool,
    /// Writing to the clipboard (`clipboardWrite`, `clipboard-write`).
    pub clipboard_write: bool,
}

impl Permissions {
    /// The `_meta.ui.permissions` object: `{}` for each one asked.
    pub fn to_meta(&self) -> Value {
        let mut out = Map::new();
        let asked = [
            ("camera", self.camera),
            ("microphone", self.microphone),
            ("geolocation", self.geolocation),
            ("clipboardWrite", self.clipboard_write),
        ];
        for (key, on) in asked {
            if on {
                out.insert(key.into(), Value::Object(Map::new()));
            }
        }
        Value::Object(out)
    }
}

/// How a host should render a view: `_meta.ui` of the view resource.
///
/// ```
/// use mcp_core::apps::{Csp, Permissions, ResourceUi};
///
/// let ui = ResourceUi::new()
///     .csp(Csp::new().connect_domain("https://api.example.com"))
///     .permissions(Permissions { clipboard_write: true, ..Permissions::default() })
///     .prefers_border(true);
/// let meta = ui.to_meta();
/// assert_eq!(meta["prefersBorder"], true);
/// assert!(meta["permissions"]["clipboardWrite"].is_object());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceUi {
    csp: Option<Csp>,
    permissions: Option<Permissions>,
    domain: Option<String>,
    prefers_border: Option<bool>,
}

impl ResourceUi {
    /// Nothing declared: no network access, no permissions, the host's
    /// default origin and border.
    pub fn new() -> Self {
        Self::default()
    }

    /// The origins the view may reach.
    #[must_use]
    pub fn csp(mut self, csp: Csp) -> Self {
        self.csp = Some(csp);
        self
    }

    /// The browser capabilities the view asks for.
    #[must_use]
    pub fn permissions(mut self, permissions: Permissions) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// A dedicated origin for the view's sandbox (`domain`), in the form
    /// the host documents (each host has its own rules).
    #[must_use]
    pub fn domain(mut self, domain: impl Into<String>) -> Self {
        self.domain = Some(domain.into());
        self
    }

    /// Whether the view wants a visible border and background from the
    /// host (`prefersBorder`); unset, the host decides.
    #[must_use]
    pub fn prefers_border(mut self, border: bool) -> Self {
        self.prefers_border = Some(border);
        self
    }

    /// The `_meta.ui` object.
    pub fn to_meta(&self) -> Value {
        let mut ui = Map::new();
        if let Some(csp) = &self.csp {
            ui.insert("csp".into(), csp.to_meta());
        }
        if let Some(p) = &self.permissions {
            ui.insert("permissions".into(), p.to_meta());
        }
        if let Some(d) = &self.domain {
            ui.insert("domain".into(), d.clone().into());
        }
        if let Some(b) = self.prefers_border {
            ui.insert("prefersBorder".into(), b.into());
        }
        Value::Object(ui)
    }
}

/// A view: HTML served at a `ui://` URI as [`MIME_TYPE`], with its
/// [`ResourceUi`] in `_meta.ui` of both its `resources/list` entry and its
/// `resources/read` contents. Add it with
/// [`McpServerBuilder::app_view`](crate::McpServerBuilder::app_view).
///
/// ```
/// use mcp_core::apps::AppView;
///
/// let view = AppView::new("ui://notes/list.html", "Notes", "<!doctype html><ul></ul>")
///     .with_description("The notes as a list");
/// assert_eq!(view.uri(), "ui://notes/list.html");
/// ```
#[derive(Debug, Clone)]
pub struct AppView {
    uri: String,
    name: String,
    html: Arc<str>,
    description: Option<String>,
    title: Option<String>,
    ui: ResourceUi,
}

impl AppView {
    /// The view at `uri` (a `ui://` URI), named `name`, serving `html`
    /// (typically `include_str!` of a file beside the server's code).
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<Arc<str>>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            html: html.into(),
            description: None,
            title: None,
            ui: ResourceUi::default(),
        }
    }

    /// How the host should render it (CSP, permissions, domain, border).
    #[must_use]
    pub fn with_ui(mut self, ui: ResourceUi) -> Self {
        self.ui = ui;
        self
    }

    /// What the view shows (the resource's `description`).
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// A human-readable title (the resource's `title`).
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// The view's URI.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// Why the view cannot be served: a URI that is not `ui://…`. (Its
    /// CSP is checked with every other view's, in `apps::capability`.)
    pub(crate) fn problem(&self) -> Option<String> {
        let rest = self.uri.strip_prefix(UI_SCHEME);
        if rest.is_none_or(|r| r.is_empty() || r.contains(char::is_whitespace)) {
            return Some(format!(
                "view `{}`: its URI must start with `ui://` and name the view",
                self.uri
            ));
        }
        None
    }

    /// The resource serving it.
    pub(crate) fn into_resource(self) -> McpResourceDef {
        let Self {
            uri,
            name,
            html,
            description,
            title,
            ui,
        } = self;
        let mut meta = Map::new();
        meta.insert("ui".into(), ui.to_meta());
        let read_meta = meta.clone();
        let mut def = McpResourceDef::new(
            uri,
            name,
            move |req: ResourceRequest, _ctx: InvokeContext| {
                let mut contents = ResourceContents::text(req.uri, html.as_ref());
                contents.mime_type = Some(MIME_TYPE.to_owned());
                contents.meta = Some(read_meta.clone());
                std::future::ready(contents)
            },
        )
        .with_mime_type(MIME_TYPE);
        if let Some(d) = description {
            def = def.with_description(d);
        }
        if let Some(t) = title {
            def = def.with_title(t);
        }
        if let ResourceKind::Fixed(r) = &mut def.kind {
            r.meta = Some(meta);
        }
        def
    }
}

#[cfg(test)]
mod tests {
    use super::is_origin;

    #[test]
    fn origins_are_checked() {
        for ok in [
            "https://cdn.example.com",
            "https://*.example.com",
            "http://localhost:8080",
            "wss://rt.example.com",
            "http://[::1]:3000",
            "http://127.0.0.1",
        ] {
            assert!(is_origin(ok), "{ok}");
        }
        for bad in [
            "cdn.example.com",
            "https://",
            "https://a.com/path",
            "https://a.com; script-src *",
            "https://a.com 'unsafe-eval'",
            "javascript://x",
            "https://a.com:",
            "https://a.com:99999x",
            "https://a..com",
            "*",
        ] {
            assert!(!is_origin(bad), "{bad}");
        }
    }
}
