//! [`ResultLimit`]: how large a tool result may be before the server cuts
//! it (or refuses it). The guide chapter `mcp_core::guide::result_size`
//! walks through the whole guard.

use std::time::Duration;

/// What a limit counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Bytes of the result's `content` and `structuredContent` as JSON.
    Bytes,
    /// Tokens of that JSON, counted with the catalog's tokenizer.
    #[cfg(feature = "catalog")]
    Tokens,
}

/// The largest tool result a server sends as it is.
///
/// The size measured is that of the result's `content` and
/// `structuredContent` serialized as JSON (what a client hands its model).
/// The default, [`ResultLimit::DEFAULT`], is 102,400 bytes (100 KiB, about
/// 25,000 tokens: Claude Code refuses tool results above 25,000 tokens).
///
/// A result over the limit is cut at a clean boundary (whole content
/// blocks first, then a text block at a line, else a character boundary),
/// a note saying so is appended, and the whole result is kept for the same
/// caller to read back through a `resource_link`
/// (`mcp-result://<id>`). With [`fail`](Self::fail), the call is refused
/// with a tool error instead.
///
/// Set per server with
/// [`McpServerBuilder::result_limit`](crate::McpServerBuilder::result_limit)
/// (off: [`no_result_limit`](crate::McpServerBuilder::no_result_limit)),
/// per tool with [`McpToolDef::with_result_limit`](crate::McpToolDef::with_result_limit)
/// (off: [`without_result_limit`](crate::McpToolDef::without_result_limit)),
/// or `#[mcp_tool(max_result_bytes = 50_000, result_over_limit = "fail")]`.
///
/// ```
/// use mcp_core::handler::ResultLimit;
///
/// let cut = ResultLimit::bytes(50_000);
/// assert_eq!(cut.amount(), 50_000);
/// assert!(!cut.fails());
/// assert!(ResultLimit::bytes(50_000).fail().fails());
/// assert_eq!(ResultLimit::DEFAULT, ResultLimit::bytes(102_400));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimit {
    pub(crate) amount: usize,
    pub(crate) unit: Unit,
    pub(crate) fail: bool,
}

impl ResultLimit {
    /// 102,400 bytes (100 KiB, about 25,000 tokens), cut when over.
    pub const DEFAULT: Self = Self::bytes(102_400);

    /// How long a kept result stays readable without being read: 10
    /// minutes (each read starts the time again).
    pub const KEPT_IDLE_TTL: Duration = Duration::from_secs(10 * 60);

    /// The most bytes of kept results one principal holds at once: 8 MiB.
    /// Past it a result is still cut, but not kept (its note says so).
    /// Kept results are bounded apart from the principal's own state
    /// ([`McpServerBuilder::state_byte_cap`](crate::McpServerBuilder::state_byte_cap)).
    ///
    /// The bound is per principal: nothing caps the total, which is up to
    /// 8 MiB times the principals that had a result cut within
    /// [`KEPT_IDLE_TTL`](Self::KEPT_IDLE_TTL). Each token with neither
    /// `sub` nor `client_id` is a principal of its own; all anonymous
    /// callers (stdio, HTTP without auth) share one 8 MiB bucket.
    pub const KEPT_BYTES_PER_PRINCIPAL: usize = 8 << 20;

    /// At most `n` bytes of serialized content (at least 1,024: room for
    /// the note and the link of a cut result).
    pub const fn bytes(n: usize) -> Self {
        Self {
            amount: if n < 1024 { 1024 } else { n },
            unit: Unit::Bytes,
            fail: false,
        }
    }

    /// At most `n` tokens of serialized content (at least 256), counted
    /// with the catalog's tokenizer (`o200k_base`, see
    /// [`catalog::tokens`](crate::catalog::tokens)). Counting costs more
    /// than measuring bytes; it runs only for a result that may be over
    /// (a token is at least one byte, so a result of at most `n` bytes is
    /// never counted).
    #[cfg(feature = "catalog")]
    #[cfg_attr(docsrs, doc(cfg(feature = "catalog")))]
    pub const fn tokens(n: usize) -> Self {
        Self {
            amount: if n < 256 { 256 } else { n },
            unit: Unit::Tokens,
            fail: false,
        }
    }

    /// Refuse a result over the limit (a tool error saying how large it
    /// was) instead of cutting it.
    #[must_use]
    pub const fn fail(mut self) -> Self {
        self.fail = true;
        self
    }

    /// The limit, in bytes or tokens.
    pub const fn amount(&self) -> usize {
        self.amount
    }

    /// True when a result over the limit is refused rather than cut.
    pub const fn fails(&self) -> bool {
        self.fail
    }

    /// True when the limit counts tokens rather than bytes.
    pub const fn counts_tokens(&self) -> bool {
        !matches!(self.unit, Unit::Bytes)
    }
}

impl Default for ResultLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A tool's own choice: the server's limit, its own, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ToolLimit {
    /// The server's limit applies.
    #[default]
    Inherit,
    /// This limit applies, whatever the server's.
    Own(ResultLimit),
    /// No limit for this tool.
    Off,
}

impl ToolLimit {
    /// The limit a call of the tool runs under, given the server's.
    #[inline]
    pub(crate) fn resolve(self, server: Option<ResultLimit>) -> Option<ResultLimit> {
        match self {
            Self::Inherit => server,
            Self::Own(limit) => Some(limit),
            Self::Off => None,
        }
    }
}
