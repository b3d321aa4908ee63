//! `#[mcp_tool]`: parse → validate → expand.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, Type};

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::expand::{emit, not_a_function, Descriptor};
use crate::signature::{analyse, is_named, respan, strip_param_attrs, Signature};

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
    ("crate", Kind::Path),
];

/// Types that are a single property rather than a whole arguments struct.
const SCALARS: &[&str] = &[
    "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
    "u32", "u64", "u128", "usize", "f32", "f64", "Option", "Vec", "HashMap", "BTreeMap", "HashSet",
    "BTreeSet", "Value", "Box", "Cow",
];

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
    let descriptions = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &descriptions, "tool", &mut errors);
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
    let description = args
        .str("description")
        .map(syn::LitStr::value)
        .or_else(|| doc_text(&func.attrs))
        .unwrap_or_default();
    emit(
        Descriptor::Tool,
        &func,
        &name,
        &krate,
        || build(&args, &sig, &krate, &fn_ident, &name, &description),
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

    let plain = sig.plain();
    let (items, check, args_ty, unpack) = if plain.len() == 1 && !is_scalar(&plain[0].param.ty) {
        // One struct argument: it is the whole arguments object.
        let ty = &plain[0].param.ty;
        let local = &plain[0].param.local;
        let span = ty.span();
        let k = respan(krate, span);
        (
            quote!(),
            quote_spanned!(span=> #k::__private::tool_args::<#ty>()),
            quote!(#ty),
            quote!(let #local = #args_ident;),
        )
    } else {
        plain_args(
            &plain
                .iter()
                .map(|a| (a.ident, a.description, &a.param.ty, &a.param.local))
                .collect::<Vec<_>>(),
            krate,
            &args_ident,
        )
    };
    let bind = sig.bind_injected(krate, &ctx);
    let call = sig.call(fn_ident, &ctx);
    let ret = respan(krate, sig.ret_span);
    let turbofish = sig.ret_turbofish();
    let result = quote_spanned!(sig.ret_span=> #ret::__private::tool_result #turbofish ());
    let def = respan(krate, sig.fn_span);
    let register = quote_spanned! {sig.fn_span=>
        #def::__private::tool_def(&META, __mcp_check, __mcp_result, |#args_ident: #args_ty, #ctx: #krate::InvokeContext| async move {
            #unpack
            #bind
            #call
        })
    };
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
        };
        let __mcp_check = #check;
        let __mcp_result = #result;
        #register
    }
}

/// Plain arguments become the fields of a generated struct, generic over
/// their types so that its derives need no bound of their own: the bounds
/// are required once, by `__mcp_args::<T, ...>()`, whose type arguments
/// are the user's argument types, where rustc reports them.
fn plain_args(
    plain: &[(&Ident, Option<&String>, &Type, &Ident)],
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
    let tys = plain.iter().map(|(_, _, ty, _)| ty);
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
    let tys = plain.iter().map(|(_, _, ty, _)| ty);
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

fn is_scalar(ty: &syn::Type) -> bool {
    SCALARS.iter().any(|s| {
        is_named(ty, s)
            || crate::signature::generic_of(ty, s).is_some()
            || matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|seg| seg.ident == s))
    }) || matches!(ty, syn::Type::Tuple(_) | syn::Type::Array(_) | syn::Type::Slice(_))
}
