//! The default principal: who a request is when no principal hook is set
//! and no resource server verified it — a keyed hash of its
//! `Authorization` header, the same on every replica given the same
//! `requestState` keys.

use hmac::{Hmac, KeyInit, Mac};
use hyper::header::AUTHORIZATION;
use hyper::http::request::Parts;
use sha2::Sha256;

use super::options::HttpOptions;
use crate::request_state::StateKeys;

/// What the principal key is derived for (a label no other use shares).
const PURPOSE: &str = "mcp-core/http/default-principal/v1";

/// The default principal of requests: `auth:` and 32 hex digits, the
/// first 128 bits of an HMAC-SHA256 of every `Authorization` value (the
/// credential itself is never stored). Its key is derived from the
/// server's sealing `requestState` key, so replicas configured with the
/// same [`request_state_keys`](crate::McpServerBuilder::request_state_keys)
/// bind a session, a task or sealed state to the same principal, and a
/// principal read from a log or a shared store does not let anyone guess
/// the credential offline. With the default (per-process) keys it is this
/// process's own.
#[derive(Clone)]
pub(crate) struct DefaultPrincipal {
    mac: Hmac<Sha256>,
}

impl DefaultPrincipal {
    /// The default principal keyed from `keys`.
    pub(crate) fn new(keys: &StateKeys) -> Self {
        let mac = Hmac::<Sha256>::new_from_slice(&keys.derive(PURPOSE))
            .expect("HMAC takes keys of any length");
        Self { mac }
    }

    /// The principal of `parts`; `None` without an `Authorization` header.
    pub(crate) fn of(&self, parts: &Parts) -> Option<String> {
        let mut values = parts.headers.get_all(AUTHORIZATION).iter().peekable();
        values.peek()?;
        let mut mac = self.mac.clone();
        for v in values {
            // Length-prefixed: no two lists of values hash alike.
            mac.update(&u64::try_from(v.len()).unwrap_or(u64::MAX).to_le_bytes());
            mac.update(v.as_bytes());
        }
        let tag = mac.finalize().into_bytes();
        let mut out = String::with_capacity(5 + 32);
        out.push_str("auth:");
        for b in &tag[..16] {
            out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            out.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
        }
        Some(out)
    }
}

/// Why `options` cannot serve sessions shared with other replicas: a
/// session store is set, yet requests would be bound to this process's
/// own default principal (no principal hook, no resource server, and
/// the server's `requestState` keys are the per-process default), so a
/// session with an `Authorization` header would be unknown (`404`) on
/// every other replica and after a restart.
pub(crate) fn unshareable(options: &HttpOptions, server: &crate::McpServer) -> Option<String> {
    let keys: &StateKeys = server.state_keys();
    #[cfg(feature = "auth")]
    let verified = options.resource_server.is_some();
    #[cfg(not(feature = "auth"))]
    let verified = false;
    let shared = server.storage().sessions().is_some() && options.sessions.is_some();
    (shared && !verified && options.principal.is_none() && keys.is_per_process()).then(|| {
        "a session store shares sessions between replicas, but each would bind them to \
         a principal of its own (the default principal is keyed by the requestState keys, \
         here random per process): give every replica the same \
         McpServerBuilder::request_state_keys, or set HttpOptions::principal"
            .to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request_state::StateKey;

    fn parts(values: &[&str]) -> Parts {
        let mut builder = hyper::Request::builder();
        for v in values {
            builder = builder.header("authorization", *v);
        }
        builder.body(()).expect("request").into_parts().0
    }

    fn keys(byte: u8) -> StateKeys {
        StateKeys::new(StateKey::new("k", [byte; 32]).expect("key"), vec![])
    }

    #[test]
    fn the_default_principal_depends_on_every_value() {
        let p = DefaultPrincipal::new(&keys(1));
        let one = p.of(&parts(&["Bearer a"]));
        assert!(one
            .as_deref()
            .is_some_and(|s| s.starts_with("auth:") && s.len() == 37));
        assert_ne!(one, p.of(&parts(&["Bearer a", "Bearer b"])));
        assert_ne!(one, p.of(&parts(&["Bearer b"])));
        assert_eq!(one, p.of(&parts(&["Bearer a"])));
        assert_eq!(p.of(&parts(&[])), None);
    }

    /// Two replicas with the same configured keys agree on who owns a
    /// session (so the second can serve the first's); with other keys, or
    /// the per-process default, they do not.
    #[test]
    fn replicas_with_the_same_keys_agree_on_the_principal() {
        let request = parts(&["Basic dXNlcjpwYXNz"]);
        let a = DefaultPrincipal::new(&keys(7)).of(&request);
        let b = DefaultPrincipal::new(&keys(7)).of(&request);
        assert_eq!(a, b);
        assert_ne!(a, DefaultPrincipal::new(&keys(8)).of(&request));
        let own = StateKeys::default();
        assert!(own.is_per_process());
        assert_ne!(
            DefaultPrincipal::new(&own).of(&request),
            DefaultPrincipal::new(&StateKeys::default()).of(&request)
        );
    }
}
