//! Inspecting the annotated function: receiver, parameters, return type.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type};

use crate::diag::Errors;

mod borrow;
mod param_attrs;

use borrow::{borrow_in, borrow_in_arguments, OWNED};
pub(crate) use param_attrs::{strip_param_attrs, ParamAttrs};

/// What one parameter is.
pub(crate) enum ParamKind {
    /// The invoke context, by value or by reference.
    Context { by_ref: bool },
    /// `State<T>`: injected application state.
    State { inner: Type },
    /// A parameter whose spelling does not say whether it is injected or
    /// from the client (`ctx: Ctx`, `args: SearchArgs`): the generated code
    /// lets the compiler decide, through `mcp_core::__private::Param` (tools)
    /// or an injected-only trait (patterns, prompts, resources).
    Typed {
        /// The identifier, unless the parameter is a pattern (`State(db)`, `_`).
        ident: Option<Ident>,
        /// Its name on the wire.
        name: String,
        description: Option<String>,
    },
    /// `#[args] params: T`: the whole arguments object is one `T` (tools only).
    Whole,
    /// A plain argument from the client, spelled as one (`String`, `u32`,
    /// `Option<_>`, `Vec<_>`, ...).
    Plain {
        /// The identifier as written (possibly raw: `r#type`).
        ident: Ident,
        /// Its name on the wire (`type`).
        name: String,
        optional: bool,
        description: Option<String>,
    },
}

/// One parameter, in signature order.
pub(crate) struct Param {
    pub(crate) kind: ParamKind,
    pub(crate) ty: Type,
    /// The local the generated code binds this parameter to.
    pub(crate) local: Ident,
    /// The span of the parameter's pattern (its name).
    pub(crate) pat_span: Span,
}

/// A plain argument, as `Signature::plain` lists them.
pub(crate) struct PlainArg<'a> {
    pub(crate) param: &'a Param,
    pub(crate) name: &'a str,
    pub(crate) optional: bool,
    pub(crate) description: Option<&'a String>,
}

/// A parameter the compiler classifies, as `Signature::typed` lists them.
pub(crate) struct TypedArg<'a> {
    pub(crate) param: &'a Param,
    /// `None` for a pattern.
    pub(crate) ident: Option<&'a Ident>,
    pub(crate) name: &'a str,
}

/// The analysed signature.
pub(crate) struct Signature {
    pub(crate) params: Vec<Param>,
    pub(crate) is_async: bool,
    /// The return type, or the function name when there is none.
    pub(crate) ret_span: Span,
    /// The return type as written, when it can be named in the generated
    /// code (it is not `impl Trait`): checks name it in a turbofish so that
    /// rustc underlines all of it.
    pub(crate) ret_ty: Option<Type>,
    /// The function name.
    pub(crate) fn_span: Span,
    /// The function takes `self`: it is a method, so no companion type can
    /// be emitted beside it.
    pub(crate) has_receiver: bool,
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The `T` of `Name<T>` when the type's last path segment is `Name`.
pub(crate) fn generic_of<'a>(ty: &'a Type, name: &str) -> Option<&'a Type> {
    let seg = last_segment(ty)?;
    if seg.ident != name {
        return None;
    }
    match &seg.arguments {
        PathArguments::AngleBracketed(args) if args.args.len() == 1 => match args.args.first() {
            Some(GenericArgument::Type(t)) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// True when the type's last path segment is `name` with no generics.
pub(crate) fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name && s.arguments.is_empty())
}

/// Types that are a single property rather than a whole arguments struct,
/// and never an injected argument.
const SCALARS: &[&str] = &[
    "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
    "u32", "u64", "u128", "usize", "f32", "f64", "Option", "Vec", "HashMap", "BTreeMap", "HashSet",
    "BTreeSet", "Value", "Box", "Cow",
];

/// True when the type is spelled as a plain value (a scalar, a standard
/// container, a tuple, an array or a slice).
pub(crate) fn is_scalar(ty: &Type) -> bool {
    match ty {
        Type::Group(g) => is_scalar(&g.elem),
        Type::Paren(p) => is_scalar(&p.elem),
        Type::Tuple(_) | Type::Array(_) | Type::Slice(_) => true,
        _ => last_segment(ty).is_some_and(|seg| SCALARS.iter().any(|s| seg.ident == s)),
    }
}

/// True when the spelling of `ty` does not settle whether it is injected:
/// a path that is not a known plain type (it may be an alias of
/// `InvokeContext` or `State<T>`), or a shared reference to one.
pub(crate) fn is_undecided(ty: &Type) -> bool {
    match ty {
        Type::Group(g) => is_undecided(&g.elem),
        Type::Paren(p) => is_undecided(&p.elem),
        Type::Reference(r) => r.mutability.is_none() && is_undecided(&r.elem),
        Type::Path(p) => p.qself.is_none() && !is_scalar(ty),
        _ => false,
    }
}

/// True when `tokens` contain `impl` (an `impl Trait` type, which cannot
/// be named in a turbofish).
fn mentions_impl(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => i == "impl",
        TokenTree::Group(g) => mentions_impl(&g.stream()),
        _ => false,
    })
}

/// `tokens` with every token's span set to `span`, so that a path such as
/// `::mcp_core::__private::check` is reported at the user's code.
pub(crate) fn respan(tokens: &TokenStream, span: Span) -> TokenStream {
    tokens
        .clone()
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), respan(&g.stream(), span));
                group.set_span(span);
                TokenTree::Group(group)
            }
            mut other => {
                other.set_span(span);
                other
            }
        })
        .collect()
}

/// Checks the function shape shared by all three macros and classifies its
/// parameters. `what` is `tool`, `resource` or `prompt`.
#[allow(clippy::too_many_lines)]
pub(crate) fn analyse(
    func: &ItemFn,
    attrs: &[ParamAttrs],
    what: &str,
    errors: &mut Errors,
) -> Signature {
    let sig = &func.sig;
    if !sig.generics.params.is_empty() {
        errors.spanned(
            &sig.generics,
            format!("an MCP {what} cannot be generic: the macro must know each argument's concrete type to describe it to clients; remove the generic parameters and use concrete types"),
        );
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.spanned(
            clause,
            format!("an MCP {what} cannot have a `where` clause; use concrete types"),
        );
    }
    if let syn::Safety::Unsafe(unsafety) = &sig.safety {
        errors.spanned(
            unsafety,
            format!("an MCP {what} cannot be an `unsafe fn`: clients call it with arbitrary input; remove `unsafe` and put the unsafe code in an `unsafe` block inside, with the argument for why it is sound"),
        );
    }
    if let Some(constness) = &sig.constness {
        errors.spanned(
            constness,
            format!("an MCP {what} cannot be a `const fn`: it is called at run time for each request; remove `const`"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(
            abi,
            format!("an MCP {what} cannot have an ABI: remove the `extern`"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, format!("an MCP {what} cannot be variadic"));
    }
    let mut params = Vec::new();
    let mut context: Option<Span> = None;
    let mut has_receiver = false;
    let mut wholes = 0_usize;
    for (i, input) in sig.inputs.iter().enumerate() {
        let typed = match input {
            FnArg::Receiver(r) => {
                has_receiver = true;
                errors.spanned(
                    r,
                    format!(
                        "an MCP {what} cannot take `self`: write a free function, and receive application state as an argument `State(value): State<T>` registered with `McpServer::builder().state(value)`"
                    ),
                );
                continue;
            }
            FnArg::Typed(t) => t,
        };
        let ty = (*typed.ty).clone();
        let local = format_ident!("__mcp_arg{}", i);
        let pat_span = typed.pat.span();
        let by_ref_ctx = match &ty {
            Type::Reference(r) if is_named(&r.elem, "InvokeContext") => {
                if let Some(m) = &r.mutability {
                    errors.spanned(
                        m,
                        "take the invoke context as `&InvokeContext` or `InvokeContext`, not `&mut`",
                    );
                }
                Some(true)
            }
            t if is_named(t, "InvokeContext") => Some(false),
            _ => None,
        };
        if let Some(by_ref) = by_ref_ctx {
            if context.is_some() {
                errors.spanned(
                    typed,
                    "the invoke context can be received only once: remove this parameter (an `InvokeContext` is cheap to clone if you need two)",
                );
                continue;
            }
            context = Some(typed.span());
            params.push(Param {
                kind: ParamKind::Context { by_ref },
                ty,
                local,
                pat_span,
            });
            continue;
        }
        if let Some(inner) = generic_of(&ty, "State") {
            params.push(Param {
                kind: ParamKind::State {
                    inner: inner.clone(),
                },
                ty: ty.clone(),
                local,
                pat_span,
            });
            continue;
        }
        let description = attrs.get(i).and_then(|a| a.description.clone());
        if let Some(span) = attrs.get(i).and_then(|a| a.whole) {
            if what != "tool" {
                errors.push(syn::Error::new(
                    span,
                    format!("`#[args]` is for tools: a {what}'s arguments are read one by one"),
                ));
            } else if wholes > 0 {
                errors.push(syn::Error::new(
                    span,
                    "only one parameter can be `#[args]`: it is the whole arguments object",
                ));
            } else if let Some(borrow) = borrow_in(&ty) {
                errors.spanned(borrow, OWNED);
            } else {
                wholes += 1;
                params.push(Param {
                    kind: ParamKind::Whole,
                    ty,
                    local,
                    pat_span,
                });
            }
            continue;
        }
        let ident = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            _ if is_undecided(&ty) => {
                // Only an injected type can be a pattern; the generated code
                // requires it.
                params.push(Param {
                    kind: ParamKind::Typed {
                        ident: None,
                        name: local.to_string(),
                        description,
                    },
                    ty,
                    local,
                    pat_span,
                });
                continue;
            }
            other => {
                errors.spanned(
                    other,
                    format!("unsupported argument pattern: give the argument a name (`text: String`); the name is what clients see for this {what} argument"),
                );
                continue;
            }
        };
        if let Some(borrow) = (what != "prompt")
            .then(|| borrow_in_arguments(&ty))
            .flatten()
        {
            // `Wrapper<&str>`: not an injected type (those are spelled
            // without borrows) and not owned.
            errors.spanned(borrow, OWNED);
            continue;
        }
        if is_undecided(&ty) {
            let name = ident.to_string().trim_start_matches("r#").to_owned();
            params.push(Param {
                kind: ParamKind::Typed {
                    ident: Some(ident),
                    name,
                    description,
                },
                ty,
                local,
                pat_span,
            });
            continue;
        }
        if what == "prompt" {
            // Prompt arguments must be `String` / `Option<String>`; the
            // prompt macro reports any other type with that advice.
        } else if let Some(borrow) = borrow_in(&ty) {
            errors.spanned(borrow, OWNED);
            continue;
        } else if let Type::ImplTrait(t) = &ty {
            errors.spanned(
                t,
                "`impl Trait` arguments are not supported: the macro must know the concrete type to describe it to clients; use a concrete type such as `String`",
            );
            continue;
        }
        let optional = generic_of(&ty, "Option").is_some();
        let name = ident.to_string().trim_start_matches("r#").to_owned();
        params.push(Param {
            kind: ParamKind::Plain {
                ident,
                name,
                optional,
                description,
            },
            ty,
            local,
            pat_span,
        });
    }
    let ret_span = match &sig.output {
        ReturnType::Default => sig.ident.span(),
        ReturnType::Type(_, ty) => ty.span(),
    };
    let ret_ty = match &sig.output {
        ReturnType::Type(_, ty) if !mentions_impl(&quote!(#ty)) => Some((**ty).clone()),
        _ => None,
    };
    Signature {
        params,
        is_async: sig.asyncness.is_some(),
        ret_span,
        ret_ty,
        fn_span: sig.ident.span(),
        has_receiver,
    }
}

impl Signature {
    /// The `::<R>` turbofish naming the return type for a check, or nothing
    /// (the type is then inferred).
    pub(crate) fn ret_turbofish(&self) -> TokenStream {
        match &self.ret_ty {
            Some(ty) => quote_spanned!(self.ret_span=> ::<#ty>),
            None => quote!(),
        }
    }

    /// Statements that bind injected parameters (`State<T>`) from `ctx`.
    pub(crate) fn bind_injected(&self, krate: &TokenStream, ctx: &Ident) -> TokenStream {
        let binds = self.params.iter().filter_map(|p| match &p.kind {
            ParamKind::State { inner } => {
                let local = &p.local;
                let span = inner.span();
                let k = respan(krate, span);
                let fetch = quote_spanned!(span=> #k::__private::state_arg::<#inner>);
                Some(quote! {
                    let #local = match #fetch(&#ctx) {
                        ::core::result::Result::Ok(value) => value,
                        ::core::result::Result::Err(error) => ::core::panic!("{}", error.message),
                    };
                })
            }
            _ => None,
        });
        quote!(#(#binds)*)
    }

    /// Statements that bind the parameters the compiler classifies, other
    /// than those `keep` selects, as injected values through the trait
    /// `marker` of `mcp_core::__private` (which reports a type that is not
    /// injected).
    pub(crate) fn bind_typed_injected(
        &self,
        krate: &TokenStream,
        ctx: &Ident,
        marker: &str,
        keep: impl Fn(&TypedArg<'_>) -> bool,
    ) -> TokenStream {
        let marker = Ident::new(marker, Span::call_site());
        let binds = self.typed().into_iter().filter(|a| !keep(a)).map(|a| {
            let ty = &a.param.ty;
            let local = &a.param.local;
            let span = ty.span();
            let k = respan(krate, span);
            quote_spanned! {span=>
                let #local = <#ty as #k::__private::#marker<'_>>::injected(&#ctx);
            }
        });
        quote!(#(#binds)*)
    }

    /// The call of the user's function with every parameter in order
    /// (`.await`ed when it is async).
    pub(crate) fn call(&self, func: &Ident, ctx: &Ident) -> TokenStream {
        let args = self.params.iter().map(|p| match &p.kind {
            ParamKind::Context { by_ref: true } => quote!(&#ctx),
            ParamKind::Context { by_ref: false } => quote!(#ctx),
            _ => {
                let local = &p.local;
                quote!(#local)
            }
        });
        let call = quote!(#func(#(#args),*));
        if self.is_async {
            quote!(#call.await)
        } else {
            call
        }
    }

    /// For each parameter that may be `State<T>` (spelled so, or a type the
    /// compiler classifies), an expression of type
    /// `Option<(TypeId, &'static str)>`: the state it needs, found by the
    /// compiler (`mcp_core::__private::ProbeStateInjected`), so that
    /// `build()` can report state that was never registered.
    pub(crate) fn state_probes(&self, krate: &TokenStream) -> Vec<TokenStream> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::State { .. } | ParamKind::Typed { .. }))
            .map(|p| {
                let ty = &p.ty;
                let span = ty.span();
                let k = respan(krate, span);
                quote_spanned! {span=> {
                    #[allow(unused_imports)]
                    use #k::__private::{ProbeStateInjected as _, ProbeStatePlain as _};
                    (&&#k::__private::Probe::<#ty>::new()).__mcp_state()
                }}
            })
            .collect()
    }

    /// The parameters whose kind the compiler decides, in order.
    pub(crate) fn typed(&self) -> Vec<TypedArg<'_>> {
        self.params
            .iter()
            .filter_map(|p| match &p.kind {
                ParamKind::Typed { ident, name, .. } => Some(TypedArg {
                    param: p,
                    ident: ident.as_ref(),
                    name,
                }),
                _ => None,
            })
            .collect()
    }

    /// The plain (client-supplied) arguments, in order.
    pub(crate) fn plain(&self) -> Vec<PlainArg<'_>> {
        self.params
            .iter()
            .filter_map(|p| match &p.kind {
                ParamKind::Plain {
                    name,
                    optional,
                    description,
                    ..
                } => Some(PlainArg {
                    param: p,
                    name,
                    optional: *optional,
                    description: description.as_ref(),
                }),
                _ => None,
            })
            .collect()
    }
}
