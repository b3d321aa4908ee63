//! Resource descriptors ([`McpResourceDef`]): fixed URIs and URI templates.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::boxed::BoxFuture;
use crate::context::InvokeContext;
use crate::handler::uri_template::UriTemplate;
use crate::protocol::{ErrorObject, Icon, Resource, ResourceContents, ResourceTemplate};

/// What a resource read handler receives besides the [`InvokeContext`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRequest {
    /// The URI being read.
    pub uri: String,
    /// For a template: the variable values matched from `uri`.
    pub vars: HashMap<String, String>,
}

type ReadHandler = Arc<
    dyn Fn(ResourceRequest, InvokeContext) -> BoxFuture<Result<Vec<ResourceContents>, ErrorObject>>
        + Send
        + Sync,
>;

#[derive(Debug, Clone)]
pub(crate) enum ResourceKind {
    Fixed(Resource),
    Template(ResourceTemplate, UriTemplate),
}

/// A resource (fixed URI) or a resource template, plus its read function.
///
/// ```
/// use mcp_core::{McpResourceDef, InvokeContext, handler::ResourceRequest};
///
/// let context = McpResourceDef::new(
///     "demo://project/context",
///     "Project context",
///     |_req: ResourceRequest, _ctx: InvokeContext| async { r#"{"ok":true}"#.to_owned() },
/// )
/// .with_mime_type("application/json");
/// assert!(!context.is_template());
/// ```
#[derive(Clone)]
pub struct McpResourceDef {
    pub(crate) kind: ResourceKind,
    handler: ReadHandler,
    template_error: Option<String>,
    pub(crate) cache: Option<crate::protocol::CacheHint>,
    /// OAuth scopes a caller needs (see [`with_scopes`](Self::with_scopes)).
    scopes: Vec<String>,
    pub(crate) required_state: Vec<(std::any::TypeId, &'static str)>,
    /// Which mounted backend added it (none: the server's own); a backend
    /// may change only what it added to a live catalog.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) owner: Option<crate::server::registry::Owner>,
}

impl fmt::Debug for McpResourceDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpResourceDef")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

fn boxed<F, Fut, R>(read: F) -> ReadHandler
where
    F: Fn(ResourceRequest, InvokeContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceContents,
{
    Arc::new(move |req, ctx| {
        let fut = read(req, ctx);
        Box::pin(async move { fut.await.into_contents() })
    })
}

impl McpResourceDef {
    /// A resource at a fixed `uri`.
    pub fn new<F, Fut, R>(uri: impl Into<String>, name: impl Into<String>, read: F) -> Self
    where
        F: Fn(ResourceRequest, InvokeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        Self {
            kind: ResourceKind::Fixed(Resource::new(uri, name)),
            handler: boxed(read),
            template_error: None,
            cache: None,
            scopes: Vec::new(),
            required_state: Vec::new(),
            owner: None,
        }
    }

    /// A resource template such as `file:///logs/{date}`: listed by
    /// `resources/templates/list`, matched on `resources/read`, with the
    /// variables in [`ResourceRequest::vars`]. An unsupported template is
    /// reported by [`McpServerBuilder::build`](crate::McpServerBuilder::build).
    pub fn template<F, Fut, R>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        read: F,
    ) -> Self
    where
        F: Fn(ResourceRequest, InvokeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceContents,
    {
        let uri_template = uri_template.into();
        let (parsed, template_error) = match UriTemplate::parse(&uri_template) {
            Ok(t) => (t, None),
            Err(e) => (UriTemplate::empty(), Some(e.to_string())),
        };
        Self {
            kind: ResourceKind::Template(
                ResourceTemplate {
                    uri_template,
                    name: name.into(),
                    title: None,
                    description: None,
                    mime_type: None,
                    annotations: None,
                    icons: None,
                    meta: None,
                },
                parsed,
            ),
            handler: boxed(read),
            template_error,
            cache: None,
            scopes: Vec::new(),
            required_state: Vec::new(),
            owner: None,
        }
    }

    /// Declares that this handler reads state of type `T` (a `State<T>`
    /// argument, or [`InvokeContext::state`]): `McpServerBuilder::build`
    /// then fails with `BuildError::MissingState` unless a `T` was
    /// registered with `McpServerBuilder::state`. The macros declare every
    /// `State<T>` argument themselves.
    #[must_use]
    pub fn requires_state<T: std::any::Any + Send + Sync>(mut self) -> Self {
        self.required_state
            .push((std::any::TypeId::of::<T>(), std::any::type_name::<T>()));
        self
    }

    /// The state types this handler needs, as `(TypeId, type name)`.
    pub fn required_state(&self) -> &[(std::any::TypeId, &'static str)] {
        &self.required_state
    }

    /// Declares the OAuth scopes a caller needs for this resource (all of
    /// them): a caller whose [`AuthInfo`](crate::context::AuthInfo) lacks one is
    /// refused (over HTTP `403` with an `insufficient_scope` challenge,
    /// elsewhere a `-32003` JSON-RPC error) and does not see it listed.
    /// A caller with no `AuthInfo` at all lacks every scope. Repeats are
    /// dropped; see the `auth` module for where scopes come from.
    ///
    /// ```
    /// use mcp_core::{McpResourceDef, InvokeContext, handler::ResourceRequest};
    ///
    /// let secret = McpResourceDef::new("demo://secret", "Secret",
    ///     |_req: ResourceRequest, _ctx: InvokeContext| async { "s3cret".to_owned() })
    ///     .with_scopes(["secrets:read"]);
    /// assert_eq!(secret.scopes(), ["secrets:read"]);
    /// ```
    #[must_use]
    pub fn with_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        super::add_scopes(&mut self.scopes, scopes);
        self
    }

    /// The scopes a caller needs (empty: open to every caller).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        let d = Some(description.into());
        match &mut self.kind {
            ResourceKind::Fixed(r) => r.description = d,
            ResourceKind::Template(t, _) => t.description = d,
        }
        self
    }

    /// Sets the MIME type (the default for reads that do not set one).
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        let m = Some(mime_type.into());
        match &mut self.kind {
            ResourceKind::Fixed(r) => r.mime_type = m,
            ResourceKind::Template(t, _) => t.mime_type = m,
        }
        self
    }

    /// Sets the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        let v = Some(title.into());
        match &mut self.kind {
            ResourceKind::Fixed(r) => r.title = v,
            ResourceKind::Template(t, _) => t.title = v,
        }
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        match &mut self.kind {
            ResourceKind::Fixed(r) => r.icons = Some(icons),
            ResourceKind::Template(t, _) => t.icons = Some(icons),
        }
        self
    }

    /// Sets the caching hint of `resources/read` results for this resource
    /// (2026-07-28). Default: 0 ms (immediately stale), `private`.
    #[must_use]
    pub fn with_cache(mut self, ttl_ms: u64, scope: crate::protocol::CacheScope) -> Self {
        self.cache = Some(crate::protocol::CacheHint::new(ttl_ms, scope));
        self
    }

    /// True for a template.
    pub fn is_template(&self) -> bool {
        matches!(self.kind, ResourceKind::Template(..))
    }

    /// The URI, or the URI template: the registry key.
    pub fn key(&self) -> &str {
        match &self.kind {
            ResourceKind::Fixed(r) => &r.uri,
            ResourceKind::Template(t, _) => &t.uri_template,
        }
    }

    /// The listing of a fixed resource.
    pub fn resource(&self) -> Option<&Resource> {
        match &self.kind {
            ResourceKind::Fixed(r) => Some(r),
            ResourceKind::Template(..) => None,
        }
    }

    /// The listing of a template.
    pub fn resource_template(&self) -> Option<&ResourceTemplate> {
        match &self.kind {
            ResourceKind::Template(t, _) => Some(t),
            ResourceKind::Fixed(_) => None,
        }
    }

    pub(crate) fn template_error(&self) -> Option<&str> {
        self.template_error.as_deref()
    }

    pub(crate) fn match_template(&self, uri: &str) -> Option<HashMap<String, String>> {
        match &self.kind {
            ResourceKind::Template(_, t) => t.match_uri(uri),
            ResourceKind::Fixed(_) => None,
        }
    }

    /// Reads the resource, filling each content's empty `uri` and missing
    /// `mimeType` from the request and descriptor.
    ///
    /// # Errors
    /// Whatever the read function returned as an error.
    ///
    /// # Cancel safety
    /// Dropping the future drops the handler's future.
    pub async fn read(
        &self,
        request: ResourceRequest,
        ctx: InvokeContext,
    ) -> Result<Vec<ResourceContents>, ErrorObject> {
        let uri = request.uri.clone();
        let mime = match &self.kind {
            ResourceKind::Fixed(r) => r.mime_type.clone(),
            ResourceKind::Template(t, _) => t.mime_type.clone(),
        };
        let mut contents = (self.handler)(request, ctx).await?;
        for c in &mut contents {
            if c.uri.is_empty() {
                c.uri.clone_from(&uri);
            }
            if c.mime_type.is_none() {
                c.mime_type.clone_from(&mime);
            }
        }
        Ok(contents)
    }
}

/// Conversion of a read function's return value into resource contents.
///
/// Strings become text contents, byte vectors base64 blobs; an empty `uri`
/// is filled from the request. `Err` becomes a JSON-RPC error.
pub trait IntoResourceContents {
    /// Performs the conversion.
    ///
    /// # Errors
    /// The error of a `Result`.
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject>;
}

impl IntoResourceContents for String {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![ResourceContents::text("", self)])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![ResourceContents::text("", self)])
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![ResourceContents::blob("", &self)])
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        Ok(self)
    }
}

/// `Err(e)` with any `Display` error (`String`, `anyhow::Error`,
/// `Box<dyn Error + Send + Sync>`, an own error type) is a JSON-RPC error:
/// an [`ErrorObject`] as it is, any other error `-32603` with the text a
/// tool's `Err` gives (`{e:#}`, cut to
/// [`MAX_ERROR_TEXT`](crate::protocol::MAX_ERROR_TEXT) bytes).
impl<T: IntoResourceContents, E: std::fmt::Display + 'static> IntoResourceContents
    for Result<T, E>
{
    fn into_contents(self) -> Result<Vec<ResourceContents>, ErrorObject> {
        self.map_err(crate::protocol::jsonrpc::handler_error)?
            .into_contents()
    }
}
