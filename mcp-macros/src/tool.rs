//! `#[mcp_tool]`: parse → validate → expand.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::{Ident, ItemFn};

use crate::attr::{krate, Args, Kind};
use crate::diag::Errors;
use crate::docs::doc_text;
use crate::signature::{analyse, is_named, strip_param_attrs, ParamKind, Signature};

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
    if name.is_empty() || name.len() > 128 {
        return Some(format!(
            "invalid tool name `{name}`: a tool name has 1 to 128 characters"
        ));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .map(|c| {
            format!("invalid tool name `{name}`: `{c}` is not allowed; use only letters, digits, `_`, `-` and `.`")
        })
}

pub(crate) fn fn_name_string(ident: &Ident) -> String {
    ident.to_string().trim_start_matches("r#").to_owned()
}

pub(crate) fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(e) => {
            let e = syn::Error::new(
                e.span(),
                "#[mcp_tool] goes on a function (`async fn` or `fn`)",
            );
            let e = e.to_compile_error();
            return quote!(#e #item);
        }
    };
    let mut errors = Errors::default();
    let args = Args::parse(attr, KEYS, &mut errors);
    let descriptions = strip_param_attrs(&mut func, &mut errors);
    let sig = analyse(&func, &descriptions, "tool", &mut errors);
    let krate = krate(&args);
    let fn_ident = func.sig.ident.clone();
    let name = match args.str("name") {
        Some(lit) => {
            if let Some(problem) = tool_name_problem(&lit.value()) {
                errors.spanned(lit, problem);
            }
            lit.value()
        }
        None => {
            let name = fn_name_string(&fn_ident);
            if let Some(problem) = tool_name_problem(&name) {
                errors.spanned(&fn_ident, problem);
            }
            name
        }
    };
    let description = args
        .str("description")
        .map(syn::LitStr::value)
        .or_else(|| doc_text(&func.attrs))
        .unwrap_or_default();
    let vis = &func.vis;
    let doc = format!("MCP tool `{name}`: `{fn_ident}::tool()` returns its descriptor.");
    let body = if errors.is_empty() {
        build(&args, &sig, &krate, &fn_ident, &name, &description)
    } else {
        // Keep `name::tool()` resolvable so one mistake gives one error.
        quote!(::core::unimplemented!())
    };
    let errs = errors.to_compile_errors();
    quote! {
        #func

        #[doc = #doc]
        #[allow(non_camel_case_types, dead_code, clippy::all, clippy::pedantic)]
        #vis enum #fn_ident {}

        #[allow(dead_code, clippy::all, clippy::pedantic)]
        impl #fn_ident {
            #[doc = #doc]
            #vis fn tool() -> #krate::McpToolDef {
                #body
            }
        }

        #errs
    }
}

fn build(
    args: &Args,
    sig: &Signature,
    krate: &TokenStream,
    fn_ident: &Ident,
    name: &str,
    description: &str,
) -> TokenStream {
    let ctx = format_ident!("__mcp_ctx");
    let title = opt_str(args.str("title").map(syn::LitStr::value));
    let hint = |k: &str| match args.flag(k) {
        Some(b) => quote!(::core::option::Option::Some(#b)),
        None => quote!(::core::option::Option::None),
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
    let serde_path = format!("{}::__private::serde", krate.to_string().replace(' ', ""));
    let schemars_path = format!(
        "{}::__private::schemars",
        krate.to_string().replace(' ', "")
    );

    let plain: Vec<_> = sig.plain().collect();
    let struct_mode = plain.len() == 1 && !is_scalar(&plain[0].0.ty);
    let (args_ty, args_def, unpack) = if struct_mode {
        let (param, _, _, _) = plain[0];
        let ty = &param.ty;
        let local = &param.local;
        (quote!(#ty), quote!(), quote!(let #local = __mcp_args;))
    } else {
        let fields = plain.iter().map(|(param, name, optional, description)| {
            let ty = &param.ty;
            let default = optional.then(|| quote!(#[serde(default)]));
            let desc = description.map(|d| quote!(#[schemars(description = #d)]));
            quote!(#desc #default #name: #ty)
        });
        let names = plain.iter().map(|(_, name, _, _)| name);
        let locals = plain.iter().map(|(param, _, _, _)| &param.local);
        (
            quote!(__McpArgs),
            quote! {
                #[derive(#krate::__private::serde::Deserialize, #krate::__private::schemars::JsonSchema)]
                #[serde(crate = #serde_path)]
                #[schemars(crate = #schemars_path)]
                #[allow(non_camel_case_types, dead_code)]
                struct __McpArgs { #(#fields,)* }
            },
            quote!(let __McpArgs { #(#names: #locals,)* } = __mcp_args;),
        )
    };
    let bind = sig.bind_injected(krate, &ctx);
    let call = sig.call(fn_ident, &ctx);
    // Span the registration on the return type so a type that is not a tool
    // result is reported there.
    let register = quote_spanned! {sig.ret_span=>
        #krate::__private::tool::<#args_ty, _, _, _>(&META, |__mcp_args: #args_ty, #ctx: #krate::InvokeContext| async move {
            #unpack
            #bind
            #call
        })
    };
    let _ = ParamKind::Context { by_ref: false };
    quote! {
        #args_def
        static META: #krate::__private::ToolMeta = #krate::__private::ToolMeta {
            name: #name,
            description: #description,
            title: #title,
            hints: [#(#hints),*],
            icons: &[#(#icons),*],
            meta: #meta,
            keep_defs: #keep_defs,
        };
        #register
    }
}

pub(crate) fn opt_str(value: Option<String>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

fn is_scalar(ty: &syn::Type) -> bool {
    SCALARS.iter().any(|s| {
        is_named(ty, s)
            || crate::signature::generic_of(ty, s).is_some()
            || matches!(ty, syn::Type::Path(p) if p.path.segments.last().is_some_and(|seg| seg.ident == s))
    }) || matches!(ty, syn::Type::Tuple(_) | syn::Type::Array(_) | syn::Type::Slice(_))
}
