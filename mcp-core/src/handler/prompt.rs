//! Prompt descriptors ([`McpPromptDef`]).

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::boxed::BoxFuture;
use crate::context::InvokeContext;
use crate::protocol::{ErrorObject, GetPromptResult, Icon, Prompt, PromptArgument, PromptMessage};

/// Prompt arguments: every value is a string.
pub type PromptArgs = HashMap<String, String>;

type GetHandler = Arc<
    dyn Fn(PromptArgs, InvokeContext) -> BoxFuture<Result<GetPromptResult, ErrorObject>>
        + Send
        + Sync,
>;

/// A prompt: its advertised descriptor plus the function that renders it.
///
/// Arguments marked `required` are checked before the function runs: a
/// missing one is a `-32602` naming it.
///
/// ```
/// use mcp_core::{McpPromptDef, InvokeContext, handler::PromptArgs, protocol::{PromptArgument, PromptMessage}};
///
/// let greet = McpPromptDef::new("greet", |args: PromptArgs, _ctx: InvokeContext| async move {
///     vec![PromptMessage::user(format!("Hi {}", args["who"]))]
/// })
/// .with_description("A greeting template")
/// .with_arguments(vec![PromptArgument::required("who", "Name to greet")]);
/// assert_eq!(greet.name(), "greet");
/// ```
#[derive(Clone)]
pub struct McpPromptDef {
    prompt: Prompt,
    handler: GetHandler,
    /// OAuth scopes a caller needs (see [`with_scopes`](Self::with_scopes)).
    scopes: Vec<String>,
    pub(crate) required_state: Vec<(std::any::TypeId, &'static str)>,
    /// Which mounted backend added it (none: the server's own); a backend
    /// may change only what it added to a live catalog.
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    pub(crate) owner: Option<crate::server::registry::Owner>,
}

impl fmt::Debug for McpPromptDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpPromptDef")
            .field("prompt", &self.prompt)
            .finish_non_exhaustive()
    }
}

impl McpPromptDef {
    /// A prompt named `name` rendered by `get`.
    pub fn new<F, Fut, R>(name: impl Into<String>, get: F) -> Self
    where
        F: Fn(PromptArgs, InvokeContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoPromptResult,
    {
        Self {
            prompt: Prompt {
                name: name.into(),
                title: None,
                description: None,
                arguments: None,
                icons: None,
                meta: None,
            },
            handler: Arc::new(move |args, ctx| {
                let fut = get(args, ctx);
                Box::pin(async move { fut.await.into_prompt_result() })
            }),
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

    /// Declares the OAuth scopes a caller needs for this prompt (all of
    /// them): a caller whose [`AuthInfo`](crate::context::AuthInfo) lacks one is
    /// refused (over HTTP `403` with an `insufficient_scope` challenge,
    /// elsewhere a `-32003` JSON-RPC error) and does not see it listed.
    /// A caller with no `AuthInfo` at all lacks every scope. Repeats are
    /// dropped; see the `auth` module for where scopes come from.
    ///
    /// ```
    /// use mcp_core::{McpPromptDef, InvokeContext, handler::PromptArgs};
    ///
    /// let admin = McpPromptDef::new("admin", |_args: PromptArgs, _ctx: InvokeContext| async {
    ///     "You are the administrator's assistant.".to_owned()
    /// })
    /// .with_scopes(["admin"]);
    /// assert_eq!(admin.scopes(), ["admin"]);
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
        self.prompt.description = Some(description.into());
        self
    }

    /// Sets the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// Sets the advertised arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: Vec<PromptArgument>) -> Self {
        self.prompt.arguments = Some(arguments);
        self
    }

    /// Sets the icons.
    #[must_use]
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.prompt.icons = Some(icons);
        self
    }

    /// Renames the prompt (what [`McpServerBuilder::mount`](crate::McpServerBuilder::mount)
    /// does with a prefix).
    #[must_use]
    pub fn renamed(mut self, name: impl Into<String>) -> Self {
        self.prompt.name = name.into();
        self
    }

    /// The prompt name.
    pub fn name(&self) -> &str {
        &self.prompt.name
    }

    /// The descriptor `prompts/list` advertises.
    pub fn prompt(&self) -> &Prompt {
        &self.prompt
    }

    /// Checks required arguments, then renders the prompt.
    ///
    /// # Errors
    /// `-32602` for a missing required argument, or the function's error.
    ///
    /// # Cancel safety
    /// Dropping the future drops the handler's future.
    pub async fn get(
        &self,
        args: PromptArgs,
        ctx: InvokeContext,
    ) -> Result<GetPromptResult, ErrorObject> {
        for arg in self.prompt.arguments.iter().flatten() {
            if arg.required == Some(true) && !args.contains_key(&arg.name) {
                return Err(ErrorObject::invalid_params(format!(
                    "Missing required argument `{}` for prompt {}",
                    arg.name, self.prompt.name
                )));
            }
        }
        (self.handler)(args, ctx).await
    }
}

/// Conversion of a prompt function's return value into a `prompts/get` result.
pub trait IntoPromptResult {
    /// Performs the conversion.
    ///
    /// # Errors
    /// The error of a `Result`.
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

/// `Err(e)` with any `Display` error (`String`, `anyhow::Error`,
/// `Box<dyn Error + Send + Sync>`, an own error type) is a JSON-RPC error:
/// an [`ErrorObject`] as it is, any other error `-32603` with the text a
/// tool's `Err` gives (`{e:#}`, cut to
/// [`MAX_ERROR_TEXT`](crate::protocol::MAX_ERROR_TEXT) bytes).
impl<T: IntoPromptResult, E: std::fmt::Display + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ErrorObject> {
        self.map_err(crate::protocol::jsonrpc::handler_error)?
            .into_prompt_result()
    }
}
