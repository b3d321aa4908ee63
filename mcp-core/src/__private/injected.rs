//! Injected arguments, recognised by type.
//!
//! The macros see tokens, not types: `ctx: Ctx` after
//! `use mcp_core::InvokeContext as Ctx` is spelled like any client
//! argument. A parameter whose spelling does not settle what it is (not
//! `String`, `u32`, `Option<_>`, ... and not spelled `InvokeContext` or
//! `State<_>`) goes through the items below, so the compiler, which knows
//! the type, decides: an injected type is filled from the invoke context
//! and left out of the schema, any other type is a client argument.

use std::marker::PhantomData;

use std::any::TypeId;

use serde_json::Value;

use super::{state_arg, ArgDeserialize, ArgSchema, StateValue, ToolArgs};
use crate::context::InvokeContext;
use crate::handler::state::State;

/// The field type an injected argument has in the generated arguments
/// struct: nothing is read from the client for it and it has no schema
/// (its property is removed from the tool's input schema).
#[derive(Debug, Clone, Copy, Default)]
pub struct Skip;

impl<'de> serde::Deserialize<'de> for Skip {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Nothing;
        impl<'de> serde::de::Visitor<'de> for Nothing {
            type Value = Skip;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("nothing (the server injects this argument)")
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Skip, E> {
                Ok(Skip)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Skip, D::Error> {
                <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d).map(|_| Skip)
            }
        }
        // A missing field deserializes through `deserialize_option`, as `None`.
        deserializer.deserialize_option(Nothing)
    }
}

impl schemars::JsonSchema for Skip {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Injected".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::Schema::default()
    }
}

/// A type the server injects: the invoke context (by value or by
/// reference) or `State<T>`.
pub trait Injected<'a>: Sized {
    /// The value for this call.
    fn from_ctx(ctx: &'a InvokeContext) -> Self;
}

impl<'a> Injected<'a> for InvokeContext {
    fn from_ctx(ctx: &'a InvokeContext) -> Self {
        ctx.clone()
    }
}

impl<'a> Injected<'a> for &'a InvokeContext {
    fn from_ctx(ctx: &'a InvokeContext) -> Self {
        ctx
    }
}

impl<T: StateValue> Injected<'_> for State<T> {
    fn from_ctx(ctx: &InvokeContext) -> Self {
        match state_arg::<T>(ctx) {
            Ok(value) => value,
            // The same report as a `State<T>` argument spelled as such.
            Err(error) => panic!("{}", error.message),
        }
    }
}

/// Classifies a type at compile time without requiring any bound of it:
/// `(&&Probe::<T>::new()).__mcp_kind()` (with [`ProbeInjected`] and
/// [`ProbePlain`] in scope) is an injected kind when `T` is
/// `InvokeContext`, `&InvokeContext` or `State<_>`, whatever they are
/// called at the use site, and [`PlainKind<T>`] otherwise: method lookup
/// tries the `&Probe<_>` impls of [`ProbeInjected`] before it derefs to the
/// blanket impl of [`ProbePlain`] (autoref specialization on concrete types).
pub struct Probe<T: ?Sized>(PhantomData<fn() -> PhantomData<T>>);

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: ?Sized> Probe<T> {
    /// The probe of `T`.
    #[must_use]
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

/// The injected kinds of [`Probe`].
pub trait ProbeInjected {
    /// The kind.
    type Kind;
    /// The kind value.
    fn __mcp_kind(&self) -> Self::Kind;
}

impl ProbeInjected for &Probe<InvokeContext> {
    type Kind = ContextKind;
    fn __mcp_kind(&self) -> ContextKind {
        ContextKind
    }
}

impl ProbeInjected for &Probe<&InvokeContext> {
    type Kind = ContextRefKind;
    fn __mcp_kind(&self) -> ContextRefKind {
        ContextRefKind
    }
}

impl<T> ProbeInjected for &Probe<State<T>> {
    type Kind = StateKind<T>;
    fn __mcp_kind(&self) -> StateKind<T> {
        StateKind(PhantomData)
    }
}

/// The fallback of [`Probe`]: a client argument.
pub trait ProbePlain<T> {
    /// The kind value.
    fn __mcp_kind(&self) -> PlainKind<T>;
}

impl<T> ProbePlain<T> for Probe<T> {
    fn __mcp_kind(&self) -> PlainKind<T> {
        PlainKind(PhantomData)
    }
}

/// The state [`Probe`] finds a type needs: `State<T>` needs a `T`
/// registered with `McpServerBuilder::state` (see [`ProbeStatePlain`]).
pub trait ProbeStateInjected {
    /// `TypeId` and name of the state type.
    fn __mcp_state(&self) -> Option<(TypeId, &'static str)>;
}

impl<T: 'static> ProbeStateInjected for &Probe<State<T>> {
    fn __mcp_state(&self) -> Option<(TypeId, &'static str)> {
        Some((TypeId::of::<T>(), std::any::type_name::<T>()))
    }
}

/// The fallback of [`ProbeStateInjected`]: any other type needs no state.
pub trait ProbeStatePlain {
    /// `None`.
    fn __mcp_state(&self) -> Option<(TypeId, &'static str)>;
}

impl<T: ?Sized> ProbeStatePlain for Probe<T> {
    fn __mcp_state(&self) -> Option<(TypeId, &'static str)> {
        None
    }
}

/// The kind of a client argument of type `T`.
pub struct PlainKind<T>(PhantomData<fn() -> T>);
/// The kind of `InvokeContext` by value.
#[derive(Debug, Clone, Copy)]
pub struct ContextKind;
/// The kind of `&InvokeContext`.
#[derive(Debug, Clone, Copy)]
pub struct ContextRefKind;
/// The kind of `State<T>`.
pub struct StateKind<T>(PhantomData<fn() -> T>);

/// How a parameter of type `Self`, of kind `K` (found by [`Probe`]), is
/// passed. The generated code requires `T: Arg<K>` with `T` written at the
/// parameter's type, so a client argument type that is not `Deserialize` +
/// `JsonSchema` is reported there, and once.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "tool arguments are deserialized from the client's JSON and described by the input schema",
    note = "derive both on the type: `#[derive(serde::Deserialize, schemars::JsonSchema)]`"
)]
pub trait Arg<K>: Sized {
    /// Its field type in the generated arguments struct: the argument's
    /// type, or [`Skip`] for an injected one.
    type Wire: ArgDeserialize + ArgSchema + 'static;
    /// The argument passed to the function.
    type Out<'a>;
    /// True for an injected type.
    const INJECTED: bool;
    /// The argument for the call.
    fn inject(wire: Self::Wire, ctx: &InvokeContext) -> Self::Out<'_>;
}

impl<T: ArgDeserialize + ArgSchema + 'static> Arg<PlainKind<T>> for T {
    type Wire = T;
    type Out<'a> = T;
    const INJECTED: bool = false;
    fn inject(wire: T, _: &InvokeContext) -> T {
        wire
    }
}

macro_rules! injected_arg {
    ([$($g:tt)*] $ty:ty, $kind:ty => $out:ty) => {
        impl<$($g)*> Arg<$kind> for $ty {
            type Wire = Skip;
            type Out<'a> = $out;
            const INJECTED: bool = true;
            fn inject(_: Skip, ctx: &InvokeContext) -> Self::Out<'_> {
                Injected::from_ctx(ctx)
            }
        }
    };
}

injected_arg!([] InvokeContext, ContextKind => InvokeContext);
injected_arg!(['r] &'r InvokeContext, ContextRefKind => &'a InvokeContext);
injected_arg!([T: StateValue] State<T>, StateKind<T> => State<T>);

/// One tool argument the macro classified with [`Probe`]: its field name
/// and whether its type is injected.
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    /// The field (and property) name.
    pub name: &'static str,
    /// `Arg::INJECTED` of its type and kind.
    pub injected: bool,
}

/// The arguments of a tool with [`Arg`] arguments (`params`, in field
/// order): the `fields` struct, one property per client argument, without
/// the injected properties.
#[must_use]
pub fn tool_args_select<A>(fields: ToolArgs<A>, params: &[ParamInfo]) -> ToolArgs<A> {
    ToolArgs {
        skip: params
            .iter()
            .filter(|p| p.injected)
            .map(|p| p.name)
            .collect(),
        ..fields
    }
}

/// Removes the injected arguments `skip` from an input schema.
pub(super) fn remove_injected(schema: &mut Value, skip: &[&str]) {
    if skip.is_empty() {
        return;
    }
    let Some(schema) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.retain(|name, _| !skip.contains(&name.as_str()));
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| !name.as_str().is_some_and(|n| skip.contains(&n)));
        if required.is_empty() {
            schema.remove("required");
        }
    }
}

macro_rules! injected_only {
    ($(#[$attr:meta])* $name:ident) => {
        $(#[$attr])*
        pub trait $name<'a>: Injected<'a> {
            /// The value for this call.
            fn injected(ctx: &'a InvokeContext) -> Self {
                Self::from_ctx(ctx)
            }
        }
        impl<'a> $name<'a> for InvokeContext {}
        impl<'a> $name<'a> for &'a InvokeContext {}
        impl<T: StateValue> $name<'_> for State<T> {}
    };
}

injected_only!(
    /// A tool argument written with a pattern (`State(db): AppState`,
    /// `_: Ctx`) must be injected: a client argument needs a name.
    #[diagnostic::on_unimplemented(
        message = "unsupported argument pattern for `{Self}`: give the argument a name (`text: String`); the name is what clients see for this tool argument",
        label = "only injected arguments (the invoke context, `State<T>`) can be destructured or ignored with `_`"
    )]
    ToolInjected
);

injected_only!(
    /// Beside an `#[args]` parameter, every other parameter must be
    /// injected: the arguments object is that struct.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument beside `#[args]`: with `#[args]`, the whole arguments object is that struct",
        label = "add this argument to the `#[args]` struct as a field, or remove `#[args]` to take every argument by name",
        note = "besides the `#[args]` struct, a tool can take the invoke context (`InvokeContext`, `&InvokeContext`) and `State<T>`"
    )]
    ArgsInjected
);

injected_only!(
    /// A prompt argument that is not `String` / `Option<String>` must be
    /// injected.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a prompt argument: prompt arguments must be `String` (required) or `Option<String>` (optional)",
        label = "clients send prompt arguments as strings; parse it in the function body",
        note = "besides its string arguments, a prompt can take the invoke context (`&InvokeContext`) and `State<T>`"
    )]
    PromptInjected
);

injected_only!(
    /// A resource argument that is not a URI template variable must be
    /// injected.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a resource argument: it is not a variable of the URI template",
        label = "add `{{name}}` to the `uri` for this argument, or remove it",
        note = "a resource takes its URI template variables, the invoke context (`&InvokeContext`) and `State<T>`"
    )]
    ResourceInjected
);
