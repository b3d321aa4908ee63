//! What every macro emits: the user's function as written, the companion
//! type of the same name whose associated function returns the descriptor,
//! and any errors.
//!
//! The companion is emitted even when the macro reports an error (with a
//! body that is never reached), so code calling `echo::tool()` still
//! resolves and one mistake gives one error.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;

use crate::diag::Errors;

/// The three kinds of descriptor.
#[derive(Clone, Copy)]
pub(crate) enum Descriptor {
    Tool,
    Resource,
    Prompt,
}

impl Descriptor {
    fn accessor(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }

    fn def_type(self) -> &'static str {
        match self {
            Self::Tool => "McpToolDef",
            Self::Resource => "McpResourceDef",
            Self::Prompt => "McpPromptDef",
        }
    }
}

/// The macro's output. `body` builds the descriptor; it is only used when
/// `errors` is empty. `has_receiver` means the function is a method, where
/// a companion type cannot be declared.
pub(crate) fn emit(
    kind: Descriptor,
    func: &ItemFn,
    name: &str,
    krate: &TokenStream,
    body: impl FnOnce() -> TokenStream,
    has_receiver: bool,
    errors: &Errors,
) -> TokenStream {
    let errs = errors.to_compile_errors();
    if has_receiver {
        return quote!(#func #errs);
    }
    let fn_ident = &func.sig.ident;
    let vis = &func.vis;
    let accessor = format_ident!("{}", kind.accessor());
    let def_type = format_ident!("{}", kind.def_type());
    let doc = format!(
        "MCP {} `{name}`: `{}::{}()` returns its descriptor.",
        kind.accessor(),
        fn_ident.to_string().trim_start_matches("r#"),
        kind.accessor(),
    );
    let body = if errors.is_empty() {
        body()
    } else {
        quote!(::core::unreachable!("this MCP descriptor did not compile"))
    };
    quote! {
        #func

        #[doc = #doc]
        #[allow(
            non_camel_case_types,
            dead_code,
            missing_debug_implementations,
            clippy::all,
            clippy::pedantic
        )]
        #vis enum #fn_ident {}

        #[allow(dead_code, clippy::all, clippy::pedantic)]
        impl #fn_ident {
            #[doc = #doc]
            #[must_use]
            #vis fn #accessor() -> #krate::#def_type {
                #body
            }
        }

        #errs
    }
}

/// The output when the macro is not on a function: the error and the item
/// unchanged.
pub(crate) fn not_a_function(
    kind: Descriptor,
    item: TokenStream,
    error: &syn::Error,
) -> TokenStream {
    let message = match kind {
        Descriptor::Tool => "#[mcp_tool] goes on a function (`async fn` or `fn`) whose arguments are the tool's arguments",
        Descriptor::Resource => "#[mcp_resource] goes on a function (`async fn` or `fn`) that returns the resource's contents",
        Descriptor::Prompt => "#[mcp_prompt] goes on a function (`async fn` or `fn`) that returns the prompt's messages",
    };
    let mut out = syn::Error::new(error.span(), message).to_compile_error();
    out.extend(item);
    out
}
