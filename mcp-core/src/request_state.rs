//! Sealing and opening `requestState` for multi round-trip requests
//! (2026-07-28): an HMAC-SHA256 over a small JSON payload, bound to the
//! request it continues, the principal and an expiry, with key rotation.
//!
//! Format: `v1.<key id>.<base64url payload>.<base64url tag>`; the tag covers
//! everything before it. The payload is readable by the client (it holds
//! only the answers the client itself gave), but any change is rejected.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use crate::protocol::base64::{decode_url, encode_url};

type HmacSha256 = Hmac<Sha256>;

/// One signing key with its id (ids appear in the sealed state, so rotation
/// can find the right key).
#[derive(Clone)]
pub struct StateKey {
    id: String,
    secret: Vec<u8>,
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "StateKey({:?}, {} bytes)", self.id, self.secret.len())
    }
}

/// Why [`StateKey::new`] refused a key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateKeyError {
    /// The id is empty or has characters other than letters, digits, `-`
    /// and `_`.
    InvalidId {
        /// The id given.
        id: String,
    },
    /// The secret is shorter than 32 bytes.
    ShortSecret {
        /// The key's id.
        id: String,
        /// The secret's length in bytes.
        len: usize,
    },
}

impl fmt::Display for StateKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidId { id } => write!(
                f,
                "invalid state key id {id:?}: use letters, digits, `-` and `_`"
            ),
            Self::ShortSecret { id, len } => write!(
                f,
                "state key {id:?} is {len} bytes; use at least 32 random bytes"
            ),
        }
    }
}

impl std::error::Error for StateKeyError {}

impl StateKey {
    /// A key with an id (letters, digits, `-`, `_`) and a secret of at least
    /// 32 bytes from a secure source.
    ///
    /// # Errors
    /// When the id has other characters or the secret is shorter than 32 bytes.
    pub fn new(id: impl Into<String>, secret: impl Into<Vec<u8>>) -> Result<Self, StateKeyError> {
        let id = id.into();
        let secret = secret.into();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(StateKeyError::InvalidId { id });
        }
        if secret.len() < 32 {
            return Err(StateKeyError::ShortSecret {
                id,
                len: secret.len(),
            });
        }
        Ok(Self { id, secret })
    }

    /// A random key for this process only (id `proc`): state it seals cannot
    /// be opened by another process or after a restart. Fine for a single
    /// stdio process; give every replica the same configured key instead
    /// when several processes serve one endpoint.
    ///
    /// The 32 bytes come from the OS random source (`getrandom`), with no
    /// fallback.
    ///
    /// # Panics
    /// When the OS random source fails: a server must never seal with a
    /// predictable key.
    pub fn random() -> Self {
        Self {
            id: "proc".into(),
            secret: crate::random::bytes::<32>().to_vec(),
        }
    }

    fn mac(&self) -> Option<HmacSha256> {
        HmacSha256::new_from_slice(&self.secret).ok()
    }
}

/// The keys a server seals with (the first) and accepts (all of them).
#[derive(Debug, Clone)]
pub struct StateKeys {
    keys: Vec<StateKey>,
    ttl: Duration,
    /// The default: one random key of this process only.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    per_process: bool,
}

impl Default for StateKeys {
    fn default() -> Self {
        Self {
            keys: vec![StateKey::random()],
            ttl: Duration::from_secs(600),
            per_process: true,
        }
    }
}

impl StateKeys {
    /// Seals with `current`; also accepts state sealed with any of `previous`.
    pub fn new(current: StateKey, previous: Vec<StateKey>) -> Self {
        let mut keys = vec![current];
        keys.extend(previous);
        Self {
            keys,
            ttl: Duration::from_secs(600),
            per_process: false,
        }
    }

    /// True for the default keys (random, of this process only): nothing
    /// keyed by them is recognised by another process.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_per_process(&self) -> bool {
        self.per_process
    }

    /// A secret for `purpose`, derived from the sealing key (HMAC-SHA256
    /// of the purpose): the same in every process given the same keys,
    /// and telling nothing about the sealing key.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn derive(&self, purpose: &str) -> [u8; 32] {
        let mut mac = match self.keys.first().and_then(StateKey::mac) {
            Some(mac) => mac,
            // No usable key (never built so): a secret of this process.
            None => return crate::random::bytes::<32>(),
        };
        mac.update(purpose.as_bytes());
        mac.finalize().into_bytes().into()
    }

    /// How long sealed state stays valid (default 10 minutes).
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Seals `answers` for a request identified by `binding`.
    pub(crate) fn seal(
        &self,
        binding: &str,
        principal: Option<&str>,
        answers: &Map<String, Value>,
        pending: &[String],
    ) -> String {
        let exp = now_ms().saturating_add(u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX));
        let payload = json!({ "b": binding, "p": principal, "e": exp, "a": answers, "q": pending });
        let body = encode_url(payload.to_string().as_bytes());
        let Some(key) = self.keys.first() else {
            return String::new();
        };
        let head = format!("v1.{}.{body}", key.id);
        let tag = key
            .mac()
            .map(|mut mac| {
                mac.update(head.as_bytes());
                encode_url(&mac.finalize().into_bytes())
            })
            .unwrap_or_default();
        format!("{head}.{tag}")
    }

    /// Opens state: checks the tag (constant time), the binding, the
    /// principal and the expiry. Returns the answers so far and the keys
    /// that were pending.
    pub(crate) fn open(
        &self,
        state: &str,
        binding: &str,
        principal: Option<&str>,
    ) -> Result<(Map<String, Value>, Vec<String>), &'static str> {
        if state.len() > 1 << 20 {
            return Err("requestState is too large");
        }
        let (head, tag) = state.rsplit_once('.').ok_or("requestState is malformed")?;
        let mut parts = head.splitn(3, '.');
        let (Some("v1"), Some(kid), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
            return Err("requestState is malformed");
        };
        let key = self
            .keys
            .iter()
            .find(|k| k.id == kid)
            .ok_or("requestState was sealed with an unknown key")?;
        let tag = decode_url(tag).ok_or("requestState is malformed")?;
        let mut mac = key.mac().ok_or("requestState key is unusable")?;
        mac.update(head.as_bytes());
        mac.verify_slice(&tag)
            .map_err(|_| "requestState failed verification")?;
        let payload: Value = decode_url(body)
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("requestState is malformed")?;
        if payload["b"].as_str() != Some(binding) {
            return Err("requestState belongs to a different request");
        }
        if payload["p"].as_str() != principal {
            return Err("requestState belongs to a different principal");
        }
        if payload["e"].as_u64().is_none_or(|exp| exp < now_ms()) {
            return Err("requestState has expired");
        }
        let answers = payload["a"].as_object().cloned().unwrap_or_default();
        let pending = payload["q"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok((answers, pending))
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The binding of a request: its method and a SHA-256 digest of what
/// identifies it (tool or prompt name and arguments, or resource URI),
/// hashed as the JSON array `[method, name_or_uri, arguments]` streamed
/// straight into the hasher (no copy of the arguments).
pub(crate) fn binding(method: &str, key: &str, args: &Map<String, Value>) -> String {
    struct HashWriter(Sha256);
    impl std::io::Write for HashWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.update(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hasher = HashWriter(Sha256::new());
    // Serializing our own JSON values into a hasher cannot fail.
    let _ = serde_json::to_writer(&mut hasher, &(method, key, args));
    let mut out = String::with_capacity(method.len() + 44);
    out.push_str(method);
    out.push(':');
    crate::protocol::base64::encode_url_into(&mut out, &hasher.0.finalize());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> StateKeys {
        StateKeys::new(
            StateKey::new("k2", [7u8; 32]).expect("key"),
            vec![StateKey::new("k1", [9u8; 32]).expect("key")],
        )
    }

    #[test]
    fn seal_and_open_round_trip() {
        let mut answers = Map::new();
        answers.insert("elicit-0".into(), json!({"action": "accept"}));
        let sealed = keys().seal("b", Some("alice"), &answers, &["elicit-1".into()]);
        let (a, p) = keys().open(&sealed, "b", Some("alice")).expect("opens");
        assert_eq!(a, answers);
        assert_eq!(p, vec!["elicit-1".to_owned()]);
    }

    #[test]
    fn rejects_tampering_foreign_binding_principal_and_expiry() {
        let sealed = keys().seal("b", None, &Map::new(), &[]);
        let mut tampered = sealed.clone().into_bytes();
        let i = sealed.find('.').map_or(0, |i| i + 5);
        tampered[i] = if tampered[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(tampered).expect("ascii");
        assert!(keys().open(&tampered, "b", None).is_err());
        assert_eq!(
            keys().open(&sealed, "other", None),
            Err("requestState belongs to a different request")
        );
        assert_eq!(
            keys().open(&sealed, "b", Some("mallory")),
            Err("requestState belongs to a different principal")
        );
        let expired = keys().with_ttl(Duration::ZERO);
        let old = expired.seal("b", None, &Map::new(), &[]);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(
            expired.open(&old, "b", None),
            Err("requestState has expired")
        );
        assert!(
            StateKeys::default().open(&sealed, "b", None).is_err(),
            "another process's key"
        );
    }

    #[test]
    fn random_keys_are_32_distinct_bytes() {
        let (a, b) = (StateKey::random(), StateKey::random());
        assert_eq!((a.id.as_str(), a.secret.len()), ("proc", 32));
        assert_eq!(b.secret.len(), 32);
        assert_ne!(a.secret, b.secret);
        assert_ne!(a.secret, [0u8; 32]);
    }

    #[test]
    fn rotation_accepts_previous_keys() {
        let old = StateKeys::new(StateKey::new("k1", [9u8; 32]).expect("key"), vec![]);
        let sealed = old.seal("b", None, &Map::new(), &[]);
        assert!(keys().open(&sealed, "b", None).is_ok());
        assert!(StateKey::new("bad id", [0u8; 32]).is_err());
        assert!(StateKey::new("short", [0u8; 8]).is_err());
    }
}
