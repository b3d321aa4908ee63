//! [`Handle<T>`] (state named by a handle) and [`PrincipalState<T>`]
//! (state keyed by the principal alone).

use std::fmt;
use std::marker::PhantomData;

use super::service::{expired, unavailable, unknown, StateService};
use super::{service, Stateful, MARKER};
use crate::handler::tool_error::ToolError;
use crate::storage::{StateKey, StateLookup, StateWrite};
use crate::InvokeContext;

/// How many times an update is applied again after losing a race.
const MAX_ATTEMPTS: usize = 64;

/// A handle to server-side state of kind `T`, for one principal: minted
/// by a tool ([`mint`](Self::mint)), returned to the model, and taken
/// back as a tool argument (`cart: Handle<Cart>`). On the wire it is a
/// string; its schema says it is a handle, of which kind, minted by which
/// tool (its description, and `x-mcp-handle: {kind, mintedBy}`; no
/// `format`, since listed schemas keep only the formats JSON Schema
/// defines).
///
/// Deserializing accepts any string: the framework checks a handle
/// argument before the tool runs, and every read or write checks it again
/// (so a handle inside a nested argument is as safe, only reported later).
pub struct Handle<T> {
    token: String,
    kind: PhantomData<fn() -> T>,
}

impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        Self {
            token: self.token.clone(),
            kind: PhantomData,
        }
    }
}

impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.token == other.token
    }
}

impl<T> Eq for Handle<T> {}

impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token is a bearer secret of its principal: not logged whole.
        let kind = self.token.rsplit_once('.').map_or("?", |(k, _)| k);
        write!(f, "Handle({kind}.…)")
    }
}

impl<T> Handle<T> {
    /// The handle's text, as the model sees it.
    pub fn as_str(&self) -> &str {
        &self.token
    }
}

/// A value read with its version.
struct Read<T> {
    version: u64,
    value: T,
}

/// The error of a stored value that no longer deserializes as `T`.
fn undecodable(kind: &str, e: &serde_json::Error) -> ToolError {
    ToolError::new(
        "STATE_UNREADABLE",
        format!("the stored {kind} cannot be read by this server version"),
    )
    .detail(e)
}

/// The error of a write over the principal's cap.
fn over_cap(kind: &str, used: usize, cap: usize) -> ToolError {
    ToolError::new(
        "STATE_FULL",
        format!("this {kind} cannot grow: your stored state would exceed {cap} bytes ({used} already held by your other state)"),
    )
    .hint("remove state you no longer need, or keep this one smaller")
}

fn encode<T: Stateful>(value: &T) -> Result<Vec<u8>, ToolError> {
    serde_json::to_vec(value).map_err(|e| {
        ToolError::new(
            "STATE_UNREADABLE",
            format!("this {} cannot be stored", T::KIND),
        )
        .detail(&e)
    })
}

/// Loads `key`; `Ok(None)` when missing (`Err` when expired or failed).
async fn load<T: Stateful>(
    service: &StateService,
    key: &StateKey,
    arg: &str,
) -> Result<Option<Read<T>>, ToolError> {
    match service.store.load(key, &service.limits).await {
        Ok(StateLookup::Found { version, value }) => {
            let value = serde_json::from_slice(&value).map_err(|e| undecodable(T::KIND, &e))?;
            Ok(Some(Read { version, value }))
        }
        Ok(StateLookup::Expired) => Err(expired(arg, T::KIND, T::MINTED_BY, &service.limits)),
        Ok(StateLookup::Missing) => Ok(None),
        Err(e) => Err(unavailable(&e)),
    }
}

/// Read–apply–compare-and-set on `key`, retried on a conflict. `start`
/// makes the value when there is none (`None`: missing is an error).
async fn update<T: Stateful, R>(
    service: &StateService,
    key: &StateKey,
    arg: &str,
    start: Option<fn() -> T>,
    mut change: impl FnMut(&mut T) -> R,
) -> Result<R, ToolError> {
    for _ in 0..MAX_ATTEMPTS {
        let (expected, mut value) = match load::<T>(service, key, arg).await {
            Ok(Some(read)) => (Some(read.version), read.value),
            Ok(None) => match start {
                Some(make) => (None, make()),
                None => return Err(unknown(arg, T::KIND, T::MINTED_BY)),
            },
            // Expired principal-keyed state starts again.
            Err(e) => match start {
                Some(make) if e.code() == "HANDLE_EXPIRED" => (None, make()),
                _ => return Err(e),
            },
        };
        let out = change(&mut value);
        let bytes = encode(&value)?;
        match service
            .store
            .write(key, expected, bytes, &service.limits)
            .await
        {
            Ok(StateWrite::Written { .. }) => return Ok(out),
            Ok(StateWrite::Conflict) => continue,
            Ok(StateWrite::OverCap { used, cap }) => return Err(over_cap(T::KIND, used, cap)),
            Ok(StateWrite::Expired) if start.is_none() => {
                return Err(expired(arg, T::KIND, T::MINTED_BY, &service.limits))
            }
            Ok(StateWrite::Missing) if start.is_none() => {
                return Err(unknown(arg, T::KIND, T::MINTED_BY))
            }
            // Principal-keyed state that expired or was cleared meanwhile:
            // read again (and start afresh).
            Ok(StateWrite::Expired | StateWrite::Missing) => continue,
            Err(e) => return Err(unavailable(&e)),
        }
    }
    Err(ToolError::new(
        "STATE_BUSY",
        format!("this {} changed too often at once to update it", T::KIND),
    )
    .retryable())
}

impl<T: Stateful> Handle<T> {
    /// Stores `value` as new state of kind `T` for the caller's principal
    /// and returns its handle (to return to the model).
    ///
    /// # Errors
    /// `STATE_FULL` over the principal's byte cap; `STATE_UNAVAILABLE`
    /// when the store fails (retryable).
    pub async fn mint(ctx: &InvokeContext, value: T) -> Result<Self, ToolError> {
        let (service, principal) = service(ctx)?;
        let (token, id) = service.sealer.mint(T::KIND);
        let key = StateKey {
            principal: principal.to_owned(),
            kind: T::KIND.to_owned(),
            id,
        };
        match service
            .store
            .write(&key, None, encode(&value)?, &service.limits)
            .await
        {
            Ok(StateWrite::Written { .. }) => Ok(Self {
                token,
                kind: PhantomData,
            }),
            Ok(StateWrite::OverCap { used, cap }) => Err(over_cap(T::KIND, used, cap)),
            // A fresh 128-bit id cannot meet a live one.
            Ok(_) => Err(ToolError::new("STATE_BUSY", "try again").retryable()),
            Err(e) => Err(unavailable(&e)),
        }
    }

    fn key(&self, service: &StateService, principal: &str) -> Result<StateKey, ToolError> {
        service.key_of(principal, T::KIND, T::KIND, T::MINTED_BY, &self.token)
    }

    /// The state this handle names, for the caller's principal.
    ///
    /// # Errors
    /// `HANDLE_FORGED`, `HANDLE_WRONG_KIND`, `HANDLE_UNKNOWN` (another
    /// principal's handle included), `HANDLE_EXPIRED`, `STATE_UNAVAILABLE`.
    pub async fn get(&self, ctx: &InvokeContext) -> Result<T, ToolError> {
        let (service, principal) = service(ctx)?;
        let key = self.key(service, principal)?;
        match load::<T>(service, &key, T::KIND).await? {
            Some(read) => Ok(read.value),
            None => Err(unknown(T::KIND, T::KIND, T::MINTED_BY)),
        }
    }

    /// Changes the state atomically: `change` runs on the current value
    /// and the result is written only if no one changed it meanwhile (else
    /// `change` runs again on the newer value, so it must not have other
    /// effects). Returns what `change` returned.
    ///
    /// # Errors
    /// Those of [`get`](Self::get), `STATE_FULL` over the byte cap, and
    /// `STATE_BUSY` (retryable) after 64 lost races.
    pub async fn update<R>(
        &self,
        ctx: &InvokeContext,
        change: impl FnMut(&mut T) -> R + Send,
    ) -> Result<R, ToolError> {
        let (service, principal) = service(ctx)?;
        let key = self.key(service, principal)?;
        update(service, &key, T::KIND, None, change).await
    }

    /// Removes the state; later uses of the handle are `HANDLE_UNKNOWN`.
    /// True when there was live state to remove.
    ///
    /// # Errors
    /// Those of [`get`](Self::get) for a refused handle; `STATE_UNAVAILABLE`.
    pub async fn remove(&self, ctx: &InvokeContext) -> Result<bool, ToolError> {
        let (service, principal) = service(ctx)?;
        let key = self.key(service, principal)?;
        service
            .store
            .remove(&key)
            .await
            .map_err(|e| unavailable(&e))
    }
}

impl<T> serde::Serialize for Handle<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.token)
    }
}

impl<'de, T> serde::Deserialize<'de> for Handle<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self {
            token: String::deserialize(deserializer)?,
            kind: PhantomData,
        })
    }
}

impl<T: Stateful> schemars::JsonSchema for Handle<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Handle_{}", T::KIND).into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "description": format!(
                "A {kind} handle, as `{tool}` returned it: pass it back unchanged.",
                kind = T::KIND,
                tool = T::MINTED_BY,
            ),
            MARKER: { "kind": T::KIND, "mintedBy": T::MINTED_BY },
        })
    }
}

/// State of kind `T` keyed by the caller's principal alone (no handle):
/// a principal has at most one `T`, [`Default`] until changed. Same store,
/// TTL and byte cap as handles.
pub struct PrincipalState<T>(PhantomData<fn() -> T>);

impl<T> fmt::Debug for PrincipalState<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrincipalState")
    }
}

impl<T: Stateful + Default> PrincipalState<T> {
    fn key(ctx: &InvokeContext) -> Result<(&StateService, StateKey), ToolError> {
        let (service, principal) = service(ctx)?;
        Ok((
            service,
            StateKey {
                principal: principal.to_owned(),
                kind: T::KIND.to_owned(),
                id: String::new(),
            },
        ))
    }

    /// The caller's `T` (`T::default()` when there is none, or it expired).
    ///
    /// # Errors
    /// `STATE_UNAVAILABLE`; `STATE_UNREADABLE` for a stored value that no
    /// longer deserializes.
    pub async fn get(ctx: &InvokeContext) -> Result<T, ToolError> {
        let (service, key) = Self::key(ctx)?;
        match load::<T>(service, &key, T::KIND).await {
            Ok(Some(read)) => Ok(read.value),
            Ok(None) => Ok(T::default()),
            Err(e) if e.code() == "HANDLE_EXPIRED" => Ok(T::default()),
            Err(e) => Err(e),
        }
    }

    /// Changes the caller's `T` atomically (see [`Handle::update`]).
    ///
    /// # Errors
    /// `STATE_FULL`, `STATE_BUSY`, `STATE_UNAVAILABLE`.
    pub async fn update<R>(
        ctx: &InvokeContext,
        change: impl FnMut(&mut T) -> R + Send,
    ) -> Result<R, ToolError> {
        let (service, key) = Self::key(ctx)?;
        update(service, &key, T::KIND, Some(T::default), change).await
    }

    /// Removes the caller's `T`; true when there was one.
    ///
    /// # Errors
    /// `STATE_UNAVAILABLE`.
    pub async fn clear(ctx: &InvokeContext) -> Result<bool, ToolError> {
        let (service, key) = Self::key(ctx)?;
        service
            .store
            .remove(&key)
            .await
            .map_err(|e| unavailable(&e))
    }
}
