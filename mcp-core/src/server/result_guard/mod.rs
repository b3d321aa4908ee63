//! The result size guard: every tool result a handler returns passes here
//! (the end of `methods::tools::call`) before interceptors and the encoder
//! see it. A result within its limit costs one bound check over the
//! lengths of its strings; only a result that may be over is measured
//! exactly, then refused or cut (`cut.rs`), its whole kept for the caller
//! (`kept.rs`). The guide chapter `mcp_core::guide::result_size` is the
//! user's view.

mod cut;
pub(crate) mod kept;
mod measure;

use std::sync::Arc;

use crate::handler::result_limit::Unit;
use crate::handler::ResultLimit;
use crate::protocol::{CallToolResult, Content, Resource};
use crate::storage::StateStore;
use measure::{json_len, Measured};

/// True when `result` is surely within `limit`: settled from the lengths
/// of its strings, with nothing serialized.
#[inline]
pub(crate) fn surely_within(result: &CallToolResult, limit: &ResultLimit) -> bool {
    measure::quick_bound(result).is_some_and(|bound| bound <= limit.amount)
}

/// The word of a limit's unit.
fn unit(limit: &ResultLimit) -> &'static str {
    match limit.unit {
        Unit::Bytes => "bytes",
        #[cfg(feature = "catalog")]
        Unit::Tokens => "tokens",
    }
}

/// The size of `result` in the limit's unit, and in bytes.
fn size_of(result: &CallToolResult, limit: &ResultLimit) -> (usize, usize) {
    match limit.unit {
        Unit::Bytes => {
            let bytes = json_len(&Measured::of(result));
            (bytes, bytes)
        }
        #[cfg(feature = "catalog")]
        Unit::Tokens => {
            let json = serde_json::to_string(&Measured::of(result)).unwrap_or_default();
            (crate::catalog::tokens::count(&json), json.len())
        }
    }
}

/// Applies `limit` to the result of the tool `name` called by `principal`:
/// the result as it is when within, else a tool error (`fail`) or the cut
/// result with its note and (when the client's revision has them,
/// `links`) a `resource_link`.
pub(crate) async fn enforce(
    result: CallToolResult,
    limit: ResultLimit,
    name: &str,
    store: Option<&Arc<dyn StateStore>>,
    principal: &str,
    links: bool,
) -> CallToolResult {
    let (size, total_bytes) = size_of(&result, &limit);
    if size <= limit.amount {
        return result;
    }
    let unit = unit(&limit);
    if limit.fail {
        return CallToolResult::error(format!(
            "The result of `{name}` was {size} {unit}, over the limit of {} {unit}, and was not sent; ask for less (a narrower query, fewer items, a smaller page).",
            limit.amount
        ));
    }
    // A page of a kept result holds at most `amount` bytes: no more
    // tokens than that either (a token is at least one byte).
    let whole = serde_json::to_string(&result).unwrap_or_default();
    let kept = kept::keep(store, principal, &whole, limit.amount).await;
    let link = match &kept {
        kept::Kept::At(uri) if links => {
            let mut resource = Resource::new(uri.clone(), "result");
            resource.description = Some(format!(
                "The whole result of `{name}` as JSON, read page by page"
            ));
            resource.mime_type = Some("application/json".to_owned());
            resource.size = u64::try_from(whole.len()).ok();
            Some(Content::resource_link(resource))
        }
        _ => None,
    };
    // Room for the note (at its longest: `kept` has at most the digits of
    // the total) and the link.
    let longest = Content::text(note(
        total_bytes,
        total_bytes,
        &limit,
        Some(usize::MAX),
        &kept,
    ));
    let reserve = json_len(&longest) + link.as_ref().map_or(0, json_len) + 2;
    let mut out = result;
    #[cfg(feature = "catalog")]
    if limit.unit == Unit::Tokens {
        // Bytes in proportion to the tokens allowed; if that still counts
        // over, `amount` bytes (never more tokens than bytes).
        let ratio = u128::try_from(limit.amount).unwrap_or(u128::MAX)
            * u128::try_from(total_bytes).unwrap_or(u128::MAX)
            / u128::try_from(size.max(1)).unwrap_or(1);
        let mut bytes = usize::try_from(ratio).unwrap_or(usize::MAX);
        for _ in 0..3 {
            let mut attempt = out.clone();
            let budget = bytes.saturating_sub(reserve);
            let dropped = cut::cut(&mut attempt, budget).dropped_structured;
            let attempt = finish(attempt, total_bytes, &limit, dropped, &kept, link.clone());
            if size_of(&attempt, &limit).0 <= limit.amount {
                return attempt;
            }
            bytes = bytes / 10 * 9;
        }
    }
    let dropped = cut::cut(&mut out, limit.amount.saturating_sub(reserve)).dropped_structured;
    finish(out, total_bytes, &limit, dropped, &kept, link)
}

/// The cut result with its note and link appended.
fn finish(
    mut out: CallToolResult,
    total_bytes: usize,
    limit: &ResultLimit,
    dropped: Option<usize>,
    kept: &kept::Kept,
    link: Option<Content>,
) -> CallToolResult {
    let kept_bytes = json_len(&Measured::of(&out));
    out.content.push(Content::text(note(
        kept_bytes,
        total_bytes,
        limit,
        dropped,
        kept,
    )));
    out.content.extend(link);
    out
}

/// The note appended to a cut result.
fn note(
    kept_bytes: usize,
    total_bytes: usize,
    limit: &ResultLimit,
    dropped: Option<usize>,
    kept: &kept::Kept,
) -> String {
    let mut note = format!(
        "[Result cut: this is {kept_bytes} of its {total_bytes} bytes of content, to stay within the limit of {} {}.",
        limit.amount,
        unit(limit)
    );
    if let Some(size) = dropped {
        note.push_str(&format!(
            " Its structuredContent ({size} bytes) did not fit and was left out."
        ));
    }
    match kept {
        kept::Kept::At(uri) => note.push_str(&format!(
            " The whole result is kept as JSON at {uri} for {} minutes after its last read: read it with resources/read, page by page; each page's _meta.nextUri names the next page.]",
            ResultLimit::KEPT_IDLE_TTL.as_secs() / 60
        )),
        kept::Kept::Full => note.push_str(&format!(
            " The whole result was not kept: this caller already holds the most kept results allowed ({} MiB). Ask for less (a narrower query, fewer items, a smaller page).]",
            ResultLimit::KEPT_BYTES_PER_PRINCIPAL >> 20
        )),
        kept::Kept::TooLarge => note.push_str(&format!(
            " The whole result was not kept: it is larger than the most kept for one caller ({} MiB). Ask for less (a narrower query, fewer items, a smaller page).]",
            ResultLimit::KEPT_BYTES_PER_PRINCIPAL >> 20
        )),
        kept::Kept::Unavailable => note.push_str(
            " The whole result could not be kept (the store is unavailable). Ask for less (a narrower query, fewer items, a smaller page).]",
        ),
    }
    note
}
