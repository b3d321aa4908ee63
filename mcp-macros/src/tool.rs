//! `#[mcp_tool]`: parse → validate → expand.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn};

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::expand::{emit, not_a_function, Descriptor};
use crate::signature::{analyse, respan, strip_param_attrs, ParamKind, Signature};

const KEYS: &[(&str, Kind)] = &[
    ("name", Kind::Str),
    ("title", Kind::Str),
    ("description", Kind::Str),
    ("read_only", Kind::Flag),
    ("destructive", Kind::Flag),
    ("idempotent", Kind::Flag),
    ("open_world", Kind::Flag),
    ("icon", Kind::Str),
    ("meta", Kind::Str),
    ("keep_defs", Kind::Flag),
    ("task", Kind::Str),
    ("scopes", Kind::Scopes),
    ("timeout", Kind::Str),
    ("ui", Kind::Str),
    ("ui_visibility", Kind::Str),
    ("max_result_bytes", Kind::Int),
    ("result_over_limit", Kind::Str),
    ("no_result_limit", Kind::Flag),
    ("crate", Kind::Path),
];

/// The values `task = "..."` takes, and the `TaskSupport` variant of each.
const TASK_VALUES: &[(&str, &str)] = &[
    ("forbidden", "Forbidden"),
    ("optional", "Optional"),
    ("required", "Required"),
];

/// `timeout = "30s"`: a whole number of `ms`, `s`, `m` or `h`, above zero;
/// the limit in milliseconds, or why the value is not one.
pub(crate) fn timeout_millis(value: &str) -> Result<u64, String> {
    let hint =
        "use a whole number with a unit: `timeout = \"500ms\"`, `\"30s\"`, `\"5m\"` or `\"1h\"`";
    let digits = value.trim().bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = value.trim().split_at(digits);
    let scale: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(format!("`{value}` is not a duration; {hint}")),
    };
    match number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
    {
        Some(0) => Err(format!(
            "a timeout of `{value}` would end every call at once; {hint}"
        )),
        Some(ms) => Ok(ms),
        None => Err(format!("`{value}` is not a duration; {hint}")),
    }
}

/// The spec's tool-name rule: 1–128 characters of `A-Z a-z 0-9 _ - .`.
pub(crate) fn tool_name_problem(name: &str) -> Option<String> {
    let count = name.chars().count();
    if count == 0 {
        return Some(
            "a tool name cannot be empty; it has 1 to 128 characters of `A-Z a-z 0-9 _ - .`"
                .to_owned(),
        );
    }
    if count > 128 {
        return Some(format!(
            "tool name is {count} characters long; the limit is 128"
        ));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|c| {
            format!("invalid tool name `{name}`: {c:?} is not allowed; use only ASCII letters, digits, `_`, `-` and `.`")
        })
}

pub(crate) fn fn_name_string(ident: &Ident) -> String {
    ident.to_string().trim_start_matches("r#").to_owned()
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => return not_a_function(Descriptor::Tool, item, &e),
    };
    let mut errors = Errors::default();
    let args = Args::parse(attr, "#[mcp_tool(...)]", KEYS, &mut errors);
    let attrs = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &attrs, "tool", &mut errors);
    if sig
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Whole))
    {
        for arg in sig.plain() {
            errors.push(syn::Error::new(
                arg.param.pat_span,
                format!("`{}` is a client argument beside `#[args]`: with `#[args]`, the whole arguments object is that struct; add `{}` to it as a field, or remove `#[args]` to take every argument by name", arg.name, arg.name),
            ));
        }
    }
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    let name = if let Some(lit) = args.str("name") {
        if let Some(problem) = tool_name_problem(&lit.value()) {
            errors.spanned(lit, problem);
        }
        lit.value()
    } else {
        let name = fn_name_string(&fn_ident);
        if let Some(problem) = tool_name_problem(&name) {
            errors.spanned(
                &fn_ident,
                format!("{problem}; rename the function or set `#[mcp_tool(name = \"...\")]`"),
            );
        }
        name
    };
    if let Some(lit) = args.str("task") {
        if !TASK_VALUES.iter().any(|(v, _)| *v == lit.value()) {
            errors.spanned(
                lit,
                format!(
                    "unknown task support `{}`: use `task = \"optional\"` (a task when the client declares the tasks extension), `\"required\"` (always a task) or `\"forbidden\"` (never, the default)",
                    lit.value()
                ),
            );
        }
    }
    if let Some(lit) = args.str("timeout") {
        if let Err(why) = timeout_millis(&lit.value()) {
            errors.spanned(lit, why);
        }
    }
    crate::tool_ui::check_ui(&args, &mut errors);
    crate::result_limit::check(&args, &mut errors);
    let description = args
        .str("description")
        .map(syn::LitStr::value)
        .or_else(|| doc_text(&func.attrs))
        .unwrap_or_default();
    let undocumented = description.is_empty();
    emit(
        Descriptor::Tool,
        &func,
        &name,
        &krate,
        || {
            let mut body = quote!();
            if undocumented {
                body.extend(no_description_warning(&sig, &name));
            }
            body.extend(build(&args, &sig, &krate, &fn_ident, &name, &description));
            body
        },
        sig.has_receiver,
        &errors,
    )
}

/// The body of `name::tool()`.
///
/// Every check that can fail is spanned on the user's tokens: the arguments
/// type at the argument, the return type at the return type, and the
/// `Send`-ness of the future at the function name.
fn build(
    args: &Args,
    sig: &Signature,
    krate: &TokenStream,
    fn_ident: &Ident,
    name: &str,
    description: &str,
) -> TokenStream {
    let ctx = format_ident!("__mcp_ctx");
    let args_ident = format_ident!("__mcp_args");
    let title = opt_str(args.str("title").map(syn::LitStr::value));
    let hint = |k: &str| {
        if let Some(b) = args.flag(k) {
            quote!(::core::option::Option::Some(#b))
        } else {
            quote!(::core::option::Option::None)
        }
    };
    let hints = [
        hint("read_only"),
        hint("destructive"),
        hint("idempotent"),
        hint("open_world"),
    ];
    let icons: Vec<String> = args
        .str("icon")
        .map(syn::LitStr::value)
        .into_iter()
        .collect();
    let meta = opt_str(args.str("meta").map(syn::LitStr::value));
    let keep_defs = args.flag("keep_defs").unwrap_or(false);

    let (items, check, args_ty, unpack) = arguments(sig, krate, &args_ident, &ctx);
    let has_whole = sig
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Whole));
    let check_binding = if !has_whole
        && sig
            .params
            .iter()
            .any(|p| matches!(p.kind, ParamKind::Typed { ident: Some(_), .. }))
    {
        quote!(let (__mcp_check, __mcp_inject) = #check;)
    } else {
        quote!(let __mcp_check = #check;)
    };
    // Only a function that can reach the invoke context can ask the client
    // something; for the others a 2026-07-28 call skips binding its
    // arguments into a `requestState` it will never need. A named
    // parameter of an unsettled type counts when the compiler finds it
    // injected (`tool_def` adds those); a pattern one always does.
    let asks = sig.params.iter().any(|p| {
        matches!(
            p.kind,
            ParamKind::Context { .. } | ParamKind::Typed { ident: None, .. }
        )
    });
    // A function that reads no context at all (no context, no state, no
    // pattern): its calls build none. A named parameter of an unsettled
    // type counts when the compiler finds it injected (`tool_def` adds
    // those).
    let context = sig.params.iter().any(|p| {
        matches!(
            p.kind,
            ParamKind::Context { .. }
                | ParamKind::State { .. }
                | ParamKind::Typed { ident: None, .. }
        )
    });
    let bind = sig.bind_injected(krate, &ctx);
    let call = sig.call(fn_ident, &ctx);
    let ret = respan(krate, sig.ret_span);
    let turbofish = sig.ret_turbofish();
    let result = quote_spanned!(sig.ret_span=> #ret::__private::tool_result #turbofish ());
    let def = respan(krate, sig.fn_span);
    let register = if sig.is_async {
        quote_spanned! {sig.fn_span=>
            #def::__private::tool_def(&META, __mcp_check, __mcp_result, move |#args_ident: #args_ty, #ctx: #krate::InvokeContext| async move {
                #unpack
                #bind
                #call
            })
        }
    } else {
        // A sync function runs on `tokio::task::spawn_blocking`, off the
        // runtime's worker threads, so it never stalls other requests.
        quote_spanned! {sig.fn_span=>
            #def::__private::tool_def_blocking(&META, __mcp_check, __mcp_result, move |#args_ident: #args_ty, #ctx: #krate::InvokeContext| {
                #unpack
                #bind
                #call
            })
        }
    };
    let states = sig.state_probes(krate);
    let task = args
        .str("task")
        .and_then(|lit| TASK_VALUES.iter().find(|(v, _)| *v == lit.value()))
        .map(|(_, variant)| {
            let variant = format_ident!("{}", variant);
            quote!(.with_task_support(#krate::tasks::TaskSupport::#variant))
        });
    let scopes = crate::attr::scopes_call(args);
    let timeout = args
        .str("timeout")
        .and_then(|lit| timeout_millis(&lit.value()).ok())
        .map(|ms| quote!(.with_timeout(::core::time::Duration::from_millis(#ms))));
    let ui = crate::tool_ui::ui_call(args, krate);
    let result_limit = crate::result_limit::call(args, krate);
    quote! {
        #items
        static META: #krate::__private::ToolMeta = #krate::__private::ToolMeta {
            name: #name,
            description: #description,
            title: #title,
            hints: [#(#hints),*],
            icons: &[#(#icons),*],
            meta: #meta,
            keep_defs: #keep_defs,
            asks: #asks,
            context: #context,
        };
        #check_binding
        let __mcp_result = #result;
        #krate::__private::DeclareState::declare_state(#register, &[#(#states),*])#task #scopes #timeout #ui #result_limit
    }
}

/// A `#[deprecated]` item used at the function name: the usual way for a
/// proc macro to emit a warning on stable Rust.
fn no_description_warning(sig: &Signature, name: &str) -> TokenStream {
    let note = format!(
        "the tool `{name}` has no description, so clients and models see none: add a `///` doc comment to the function, or `#[mcp_tool(description = \"...\")]`"
    );
    let item = format_ident!("tool_without_description", span = sig.fn_span);
    quote_spanned! {sig.fn_span=>
        #[deprecated(note = #note)]
        #[allow(non_upper_case_globals)]
        const #item: () = ();
        let () = #item;
    }
}

/// One field of the generated arguments struct.
struct Field<'a> {
    ident: &'a Ident,
    description: Option<&'a String>,
    /// The argument's type.
    ty: &'a syn::Type,
    /// Its name on the wire.
    name: &'a str,
    /// Classified by the compiler (`ParamKind::Typed`).
    typed: bool,
    /// What the field is bound to when the struct is taken apart.
    bind: Ident,
}

/// `(&&Probe::<T>::new()).__mcp_kind()`: the kind value of `ty`, decided
/// by the compiler (see `mcp_core::__private::Probe`).
fn probe(krate: &TokenStream, ty: &syn::Type) -> TokenStream {
    let span = ty.span();
    let k = respan(krate, span);
    quote_spanned! {span=> {
        #[allow(unused_imports)]
        use #k::__private::{ProbeInjected as _, ProbePlain as _};
        (&&#k::__private::Probe::<#ty>::new()).__mcp_kind()
    }}
}

/// The arguments items, check, closure parameter type and unpacking
/// statements of a tool.
///
/// Plain arguments are fields of the generated struct: one property each,
/// by name, whatever their type. A parameter the compiler classifies
/// (`ParamKind::Typed`) is a field too, of type `<K as Kind>::Wire` for its
/// kind `K` (`Skip` when it is injected, and then left out of the schema),
/// turned into the argument by `Kind::inject`. Only an `#[args]` parameter
/// is the whole arguments object (`whole_args`).
fn arguments(
    sig: &Signature,
    krate: &TokenStream,
    args_ident: &Ident,
    ctx: &Ident,
) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    if let Some(whole) = sig
        .params
        .iter()
        .find(|p| matches!(p.kind, ParamKind::Whole))
    {
        return whole_args(whole, sig, krate, args_ident, ctx);
    }
    let mut fields = Vec::new();
    let mut patterns = Vec::new();
    for (i, p) in sig.params.iter().enumerate() {
        let ty = &p.ty;
        match &p.kind {
            ParamKind::Plain {
                ident,
                name,
                description,
                ..
            } => fields.push(Field {
                ident,
                description: description.as_ref(),
                ty,
                name,
                typed: false,
                bind: p.local.clone(),
            }),
            ParamKind::Typed {
                ident: Some(ident),
                name,
                description,
            } => fields.push(Field {
                ident,
                description: description.as_ref(),
                ty,
                name,
                typed: true,
                bind: format_ident!("__mcp_wire{}", i),
            }),
            ParamKind::Typed { ident: None, .. } => {
                let span = ty.span();
                let k = respan(krate, span);
                let local = &p.local;
                patterns.push(quote_spanned! {span=>
                    let #local = <#ty as #k::__private::ToolInjected<'_>>::injected(&#ctx);
                });
            }
            _ => {}
        }
    }
    let (items, check, args_ty, unpack) = if fields.iter().any(|f| f.typed) {
        typed_args(&fields, sig, krate, args_ident, ctx)
    } else {
        let plain: Vec<_> = fields
            .iter()
            .map(|f| (f.ident, f.description, f.ty, &f.bind))
            .collect();
        plain_args(&plain, krate, args_ident)
    };
    (items, check, args_ty, quote!(#unpack #(#patterns)*))
}

/// `arguments` of a tool with an `#[args]` parameter: its type is the
/// arguments object, and every parameter the compiler classifies must be
/// injected.
fn whole_args(
    whole: &crate::signature::Param,
    sig: &Signature,
    krate: &TokenStream,
    args_ident: &Ident,
    ctx: &Ident,
) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    let ty = &whole.ty;
    let span = ty.span();
    let k = respan(krate, span);
    let check = quote_spanned!(span=> #k::__private::tool_args_whole::<#ty>());
    let local = &whole.local;
    let injected = sig.bind_typed_injected(krate, ctx, "ArgsInjected", |_| false);
    let unpack = quote! {
        let #local = #args_ident;
        #injected
    };
    (quote!(), check, quote!(#ty), unpack)
}

/// `arguments` with classified fields: `__mcp_args` is generic over the
/// plain fields' types and the classified fields' kinds, takes the kind
/// values (so the kinds are inferred), and returns the checked arguments
/// and the injection function of each classified field.
fn typed_args(
    fields: &[Field<'_>],
    sig: &Signature,
    krate: &TokenStream,
    args_ident: &Ident,
    ctx: &Ident,
) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    let serde_path = format!("{}::__private::serde", krate.to_string().replace(' ', ""));
    let schemars_path = format!(
        "{}::__private::schemars",
        krate.to_string().replace(' ', "")
    );
    let p = quote!(#krate::__private);
    let generics: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__McpT{}", i))
        .collect();
    let struct_fields = fields.iter().zip(&generics).map(|(f, g)| {
        let ident = f.ident;
        let desc = f.description.map(|d| quote!(#[schemars(description = #d)]));
        quote!(#desc #ident: #g)
    });
    let kinds_of: Vec<Ident> = (0..fields.len())
        .map(|i| format_ident!("__McpK{}", i))
        .collect();
    // `<T as Arg<K>>` for the field of type generic `g`.
    let arg = |g: &Ident| -> TokenStream {
        let i = generics.iter().position(|x| x == g).unwrap_or_default();
        let kind = &kinds_of[i];
        quote!(<#g as #p::Arg<#kind>>)
    };
    let bounds: Vec<TokenStream> = fields
        .iter()
        .zip(&generics)
        .map(|(f, g)| {
            if f.typed {
                let i = generics.iter().position(|x| x == g).unwrap_or_default();
                let kind = &kinds_of[i];
                quote!(#g: #p::Arg<#kind>)
            } else {
                quote!(#g: #p::ArgSchema + #p::ArgDeserialize + 'static)
            }
        })
        .collect();
    let field_tys: Vec<TokenStream> = fields
        .iter()
        .zip(&generics)
        .map(|(f, g)| {
            if f.typed {
                let a = arg(g);
                quote!(#a::Wire)
            } else {
                quote!(#g)
            }
        })
        .collect();
    let typed: Vec<(&Field<'_>, &Ident)> = fields
        .iter()
        .zip(&generics)
        .filter(|(f, _)| f.typed)
        .collect();
    let all_generics: Vec<&Ident> = generics
        .iter()
        .chain(
            typed
                .iter()
                .map(|(_, g)| &kinds_of[generics.iter().position(|x| x == *g).unwrap_or_default()]),
        )
        .collect();
    let kind_params = typed.iter().map(|(_, g)| {
        let kind = &kinds_of[generics.iter().position(|x| x == *g).unwrap_or_default()];
        quote!(_: #kind)
    });
    let injectors = typed.iter().map(|(_, g)| {
        let a = arg(g);
        quote!(#a::inject as for<'__mcp> fn(#a::Wire, &'__mcp #krate::InvokeContext) -> #a::Out<'__mcp>)
    });
    let injector_tys = typed.iter().map(|(_, g)| {
        let a = arg(g);
        quote!(for<'__mcp> fn(#a::Wire, &'__mcp #krate::InvokeContext) -> #a::Out<'__mcp>)
    });
    let infos = typed.iter().map(|(f, g)| {
        let name = f.name;
        let a = arg(g);
        quote!(#p::ParamInfo { name: #name, injected: #a::INJECTED })
    });
    let items = quote! {
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        struct __McpArgs <#(#generics),*> { #(#struct_fields,)* }

        #[allow(clippy::type_complexity)]
        fn __mcp_args <#(#all_generics),*> (#(#kind_params),*) -> (
            #p::ToolArgs<__McpArgs<#(#field_tys),*>>,
            (#(#injector_tys,)*),
        )
        where #(#bounds,)*
        {
            let __mcp_fields = #p::tool_args::<__McpArgs<#(#field_tys),*>>();
            (
                #p::tool_args_select(__mcp_fields, &[#(#infos),*]),
                (#(#injectors,)*),
            )
        }
    };
    let turbofish = fields
        .iter()
        .map(|f| {
            let ty = f.ty;
            quote!(#ty)
        })
        .chain(typed.iter().map(|_| quote!(_)));
    let kinds = typed.iter().map(|(f, _)| probe(krate, f.ty));
    // Spanned at the first classified type: rustc reports a client
    // argument type that is not `Deserialize` + `JsonSchema` there.
    let span = typed
        .first()
        .map_or_else(Span::call_site, |(f, _)| f.ty.span());
    let check = quote_spanned!(span=> __mcp_args::<#(#turbofish),*>(#(#kinds),*));
    let names = fields.iter().map(|f| f.ident);
    let binds = fields.iter().map(|f| &f.bind);
    let injects = typed.iter().enumerate().map(|(n, (f, _))| {
        let index = syn::Index::from(n);
        let wire = &f.bind;
        let local = sig
            .params
            .iter()
            .find(|p| matches!(&p.kind, ParamKind::Typed { ident: Some(i), .. } if i == f.ident))
            .map(|p| p.local.clone());
        quote!(let #local = (__mcp_inject.#index)(#wire, &#ctx);)
    });
    let unpack = quote! {
        let __McpArgs { #(#names: #binds,)* } = #args_ident;
        #(#injects)*
    };
    (items, check, quote!(_), unpack)
}

/// Plain arguments become the fields of a generated struct, generic over
/// their types so that its derives need no bound of their own: the bounds
/// are required once, by `__mcp_args::<T, ...>()`, whose type arguments
/// are the user's argument types, where rustc reports them.
fn plain_args(
    plain: &[(&Ident, Option<&String>, &syn::Type, &Ident)],
    krate: &TokenStream,
    args_ident: &Ident,
) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
    let serde_path = format!("{}::__private::serde", krate.to_string().replace(' ', ""));
    let schemars_path = format!(
        "{}::__private::schemars",
        krate.to_string().replace(' ', "")
    );
    let generics: Vec<Ident> = (0..plain.len())
        .map(|i| format_ident!("__McpT{}", i))
        .collect();
    let fields = plain
        .iter()
        .zip(&generics)
        .map(|((ident, description, _, _), generic)| {
            let desc = description.map(|d| quote!(#[schemars(description = #d)]));
            quote!(#desc #ident: #generic)
        });
    let tys: Vec<&syn::Type> = plain.iter().map(|(_, _, ty, _)| *ty).collect();
    let (params, uses) = if generics.is_empty() {
        (quote!(), quote!())
    } else {
        (quote!(<#(#generics),*>), quote!(::<#(#tys),*>))
    };
    let bounds = generics.iter().map(
        |g| quote!(#g: #krate::__private::ArgSchema + #krate::__private::ArgDeserialize + 'static),
    );
    let items = quote! {
        #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        struct __McpArgs #params { #(#fields,)* }

        fn __mcp_args #params () -> #krate::__private::ToolArgs<__McpArgs #params>
        where #(#bounds,)*
        {
            #krate::__private::tool_args::<__McpArgs #params>()
        }
    };
    let check = quote!(__mcp_args #uses ());
    let args_ty = if generics.is_empty() {
        quote!(__McpArgs)
    } else {
        quote!(__McpArgs<#(#tys),*>)
    };
    let names = plain.iter().map(|(ident, _, _, _)| ident);
    let locals = plain.iter().map(|(_, _, _, local)| local);
    let unpack = quote!(let __McpArgs { #(#names: #locals,)* } = #args_ident;);
    (items, check, args_ty, unpack)
}

pub(crate) fn opt_str(value: Option<String>) -> TokenStream {
    if let Some(v) = value {
        quote!(::core::option::Option::Some(#v))
    } else {
        quote!(::core::option::Option::None)
    }
}
