//! `#[mcp_tool(ui = "ui://…", ui_visibility = "…")]`: a tool's MCP Apps
//! view, checked at compile time and expanded to `McpToolDef::with_ui`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::attr::Args;
use crate::diag::Errors;

/// The values `ui_visibility = "..."` takes, and the `Visibility` variants
/// of each (MCP Apps: who may call the tool).
const UI_VISIBILITY_VALUES: &[(&str, &[&str])] = &[
    ("model", &["Model"]),
    ("app", &["App"]),
    ("model_and_app", &["Model", "App"]),
];

/// `ui = "ui://…"` must name a view URI, and `ui_visibility` one of
/// [`UI_VISIBILITY_VALUES`], with a `ui` beside it.
pub(crate) fn check_ui(args: &Args, errors: &mut Errors) {
    if let Some(lit) = args.str("ui") {
        let uri = lit.value();
        if uri.strip_prefix("ui://").is_none_or(str::is_empty) {
            errors.spanned(
                lit,
                format!("`ui = \"{uri}\"` is not a view URI: MCP Apps views are `ui://` resources, such as `ui = \"ui://charts/view.html\"`"),
            );
        }
    }
    if let Some(lit) = args.str("ui_visibility") {
        if !UI_VISIBILITY_VALUES.iter().any(|(v, _)| *v == lit.value()) {
            errors.spanned(
                lit,
                format!(
                    "unknown ui_visibility `{}`: use `\"model\"` (only the model calls it), `\"app\"` (only its view calls it, through the host) or `\"model_and_app\"` (both, the default)",
                    lit.value()
                ),
            );
        } else if args.str("ui").is_none() {
            errors.spanned(
                lit,
                "`ui_visibility` needs the tool's view: add `ui = \"ui://…\"`",
            );
        }
    }
}

/// `.with_ui(ToolUi::new(uri)[.visibility([...])])` for `ui = "…"`.
pub(crate) fn ui_call(args: &Args, krate: &TokenStream) -> Option<TokenStream> {
    let uri = args.str("ui")?;
    let visibility = args
        .str("ui_visibility")
        .and_then(|lit| UI_VISIBILITY_VALUES.iter().find(|(v, _)| *v == lit.value()))
        .map(|(_, variants)| {
            let variants = variants.iter().map(|v| format_ident!("{}", v));
            quote!(.visibility([#(#krate::apps::Visibility::#variants),*]))
        });
    Some(quote!(.with_ui(#krate::apps::ToolUi::new(#uri)#visibility)))
}
