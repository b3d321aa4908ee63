//! `#[mcp_tool]`'s result size keys: `max_result_bytes = N`,
//! `result_over_limit = "fail" | "cut"`, `no_result_limit`.

use proc_macro2::{Span, TokenStream};
use quote::quote;

use crate::attr::Args;
use crate::diag::Errors;

/// The smallest `max_result_bytes`: room for the note and link of a cut
/// result (`ResultLimit::bytes` has the same floor).
const MIN_RESULT_BYTES: u64 = 1024;

/// The result limit keys: a byte count of at least [`MIN_RESULT_BYTES`],
/// `"fail"` (with a byte count) or `"cut"`, and no limit keys beside
/// `no_result_limit`.
pub(crate) fn check(args: &Args, errors: &mut Errors) {
    if let Some(lit) = args.int("max_result_bytes") {
        match lit.base10_parse::<u64>() {
            Ok(n) if n >= MIN_RESULT_BYTES => {}
            _ => errors.spanned(
                lit,
                format!(
                    "`max_result_bytes = {lit}` is too small: a cut result needs room for its note and link; use at least {MIN_RESULT_BYTES}, or `no_result_limit` to send results whole"
                ),
            ),
        }
    }
    if let Some(lit) = args.str("result_over_limit") {
        if !matches!(lit.value().as_str(), "fail" | "cut") {
            errors.spanned(
                lit,
                format!(
                    "unknown `result_over_limit = \"{}\"`: use `\"cut\"` (the default: cut the result, keep the whole for the caller) or `\"fail\"` (refuse it with a tool error)",
                    lit.value()
                ),
            );
        }
        // Alone, "fail" would need an amount: the default one would
        // replace the server's limit (or switch one on where it is off).
        if lit.value() == "fail"
            && !args.has("max_result_bytes")
            && args.flag("no_result_limit") != Some(true)
        {
            errors.spanned(
                lit,
                "`result_over_limit = \"fail\"` needs the limit to refuse over: add `max_result_bytes = N` (the server's own limit is refused over with `McpServerBuilder::result_limit(ResultLimit::bytes(N).fail())`)",
            );
        }
    }
    if args.flag("no_result_limit") == Some(true) {
        for key in ["max_result_bytes", "result_over_limit"] {
            if args.has(key) {
                errors.push(syn::Error::new(
                    Span::call_site(),
                    format!("`no_result_limit` sends results whole: `{key}` beside it has no effect; keep one"),
                ));
            }
        }
    }
}

/// `.with_result_limit(…)` or `.without_result_limit()` from the result
/// limit keys, else nothing (the server's limit applies).
pub(crate) fn call(args: &Args, krate: &TokenStream) -> TokenStream {
    if args.flag("no_result_limit") == Some(true) {
        return quote!(.without_result_limit());
    }
    let bytes = args
        .int("max_result_bytes")
        .and_then(|lit| lit.base10_parse::<usize>().ok());
    let fail = args
        .str("result_over_limit")
        .is_some_and(|l| l.value() == "fail");
    // No byte count: the server's limit applies (`check` refused "fail"
    // without one).
    let Some(n) = bytes else {
        return TokenStream::new();
    };
    let fail = fail.then(|| quote!(.fail()));
    quote!(.with_result_limit(#krate::handler::ResultLimit::bytes(#n) #fail))
}
