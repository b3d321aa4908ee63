//! The server's state service (store, handle key, limits), found by
//! handlers through the invoke context, and the check of handle arguments
//! that runs before a tool.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::token::{Refused, Sealer};
pub(crate) use crate::handler::handle_args::HandleArg;
use crate::handler::tool_error::ToolError;
use crate::storage::{StateKey, StateLimits, StateLookup, StateStore, StateStoreError};

/// The principal of calls that carry none (stdio without
/// `StdioOptions::principal`, HTTP without credentials or hook).
pub(crate) const ANONYMOUS: &str = "";

/// What a server's handlers reach state through (kept in its state map).
pub(crate) struct StateService {
    pub(crate) store: Arc<dyn StateStore>,
    pub(crate) sealer: Sealer,
    pub(crate) limits: StateLimits,
}

/// The error of a handle that names nothing for this caller.
pub(crate) fn unknown(arg: &str, kind: &str, minted_by: &str) -> ToolError {
    ToolError::new(
        "HANDLE_UNKNOWN",
        format!(
            "`{arg}`: no {kind} with this handle exists for you (it was removed, or never made for you)"
        ),
    )
    .hint(format!("call `{minted_by}` for a new {kind} handle"))
}

/// The error of a handle whose state expired.
pub(crate) fn expired(arg: &str, kind: &str, minted_by: &str, limits: &StateLimits) -> ToolError {
    ToolError::new(
        "HANDLE_EXPIRED",
        format!(
            "`{arg}`: this {kind} expired after {} s without use, and its state is gone",
            limits.idle_ttl.as_secs()
        ),
    )
    .hint(format!("call `{minted_by}` for a new {kind} handle"))
}

/// The error of a store that failed.
pub(crate) fn unavailable(e: &StateStoreError) -> ToolError {
    ToolError::new("STATE_UNAVAILABLE", "the state store is unavailable")
        .retryable()
        .detail(e)
}

/// The error of a token refused before any lookup.
pub(crate) fn refused(arg: &str, kind: &str, minted_by: &str, why: Refused) -> ToolError {
    match why {
        Refused::Forged => ToolError::new(
            "HANDLE_FORGED",
            format!(
                "`{arg}` is not a {kind} handle this server made: it was altered, truncated or made up"
            ),
        )
        .hint(format!(
            "pass the handle exactly as `{minted_by}` returned it, or call `{minted_by}` for a new one"
        )),
        Refused::OtherKind(other) => ToolError::new(
            "HANDLE_WRONG_KIND",
            format!("`{arg}` is a {other} handle, not a {kind} handle"),
        )
        .hint(format!("call `{minted_by}` for a {kind} handle")),
    }
}

impl StateService {
    /// The service over `storage`'s state store (a memory store of its own
    /// when it has none), with handles keyed from `keys`.
    pub(crate) fn new(
        storage: &crate::storage::Storage,
        keys: &crate::request_state::StateKeys,
        limits: StateLimits,
    ) -> Self {
        let store = storage.state().cloned().unwrap_or_else(|| {
            Arc::new(crate::storage::InMemoryStateStore::new()) as Arc<dyn StateStore>
        });
        Self {
            store,
            sealer: Sealer::new(keys),
            limits,
        }
    }

    /// The store key of `token` for `principal`, or why it is refused.
    pub(crate) fn key_of(
        &self,
        principal: &str,
        arg: &str,
        kind: &str,
        minted_by: &str,
        token: &str,
    ) -> Result<StateKey, ToolError> {
        let id = self
            .sealer
            .open(kind, token)
            .map_err(|why| refused(arg, kind, minted_by, why))?;
        Ok(StateKey {
            principal: principal.to_owned(),
            kind: kind.to_owned(),
            id,
        })
    }

    /// Checks every handle argument of a call before its tool runs:
    /// genuine, of its kind, and naming live state of `principal` (whose
    /// idle time then starts again). The first failure is the call's
    /// error result; a missing or non-string argument is left to the
    /// schema check.
    pub(crate) async fn check_args(
        &self,
        principal: &str,
        handles: &[HandleArg],
        args: &Map<String, Value>,
    ) -> Result<(), ToolError> {
        for h in handles {
            let Some(Value::String(token)) = args.get(&h.name) else {
                continue;
            };
            let key = self.key_of(principal, &h.name, &h.kind, &h.minted_by, token)?;
            match self.store.load(&key, &self.limits).await {
                Ok(StateLookup::Found { .. }) => {}
                Ok(StateLookup::Expired) => {
                    return Err(expired(&h.name, &h.kind, &h.minted_by, &self.limits))
                }
                Ok(StateLookup::Missing) => return Err(unknown(&h.name, &h.kind, &h.minted_by)),
                Err(e) => return Err(unavailable(&e)),
            }
        }
        Ok(())
    }
}
