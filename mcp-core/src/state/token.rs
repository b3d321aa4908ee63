//! Handle tokens: `<kind>.<base64url(id ‖ tag)>`, where `id` is 16 random
//! bytes from the OS source and `tag` the first 16 bytes of an
//! HMAC-SHA256 of the kind and id under a key derived from the server's
//! `requestState` keys. The id alone is unguessable (128 bits); the tag
//! tells a forged or altered token from one this deployment made without
//! a store lookup.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::request_state::StateKeys;

/// What the handle key is derived for (a label no other use shares).
const PURPOSE: &str = "mcp-core/state/handles/v1";

/// Bytes of random id and of tag.
const ID_BYTES: usize = 16;
const TAG_BYTES: usize = 16;

/// Why a token is refused before any lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a token this deployment made (or altered).
    Forged,
    /// A genuine token of another kind (named).
    OtherKind(String),
}

/// Mints and checks handle tokens.
#[derive(Clone)]
pub(crate) struct Sealer {
    mac: Hmac<Sha256>,
}

impl Sealer {
    /// The sealer keyed from `keys`: replicas sharing their
    /// `request_state_keys` accept each other's handles.
    pub(crate) fn new(keys: &StateKeys) -> Self {
        let mac = Hmac::<Sha256>::new_from_slice(&keys.derive(PURPOSE))
            .expect("HMAC takes keys of any length");
        Self { mac }
    }

    fn tag(&self, kind: &str, id: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        // Length-prefixed: no two (kind, id) pairs hash alike.
        mac.update(&u64::try_from(kind.len()).unwrap_or(u64::MAX).to_le_bytes());
        mac.update(kind.as_bytes());
        mac.update(id);
        mac
    }

    /// A new token of `kind`, and its id (the store key).
    pub(crate) fn mint(&self, kind: &str) -> (String, String) {
        let id = crate::random::bytes::<ID_BYTES>();
        let tag = self.tag(kind, &id).finalize().into_bytes();
        let mut raw = [0u8; ID_BYTES + TAG_BYTES];
        raw[..ID_BYTES].copy_from_slice(&id);
        raw[ID_BYTES..].copy_from_slice(&tag[..TAG_BYTES]);
        let token = format!("{kind}.{}", URL_SAFE_NO_PAD.encode(raw));
        (token, URL_SAFE_NO_PAD.encode(id))
    }

    /// The id of `token` when this deployment made it for `kind`.
    pub(crate) fn open(&self, kind: &str, token: &str) -> Result<String, Refused> {
        let (token_kind, payload) = token.rsplit_once('.').ok_or(Refused::Forged)?;
        let raw = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| Refused::Forged)?;
        if raw.len() != ID_BYTES + TAG_BYTES {
            return Err(Refused::Forged);
        }
        let (id, tag) = raw.split_at(ID_BYTES);
        self.tag(token_kind, id)
            .verify_truncated_left(tag)
            .map_err(|_| Refused::Forged)?;
        if token_kind != kind {
            return Err(Refused::OtherKind(token_kind.to_owned()));
        }
        Ok(URL_SAFE_NO_PAD.encode(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_open_for_their_kind_only_and_resist_changes() {
        let sealer = Sealer::new(&StateKeys::default());
        let (token, id) = sealer.mint("cart");
        assert!(token.starts_with("cart."));
        assert_eq!(sealer.open("cart", &token), Ok(id));
        assert_eq!(
            sealer.open("conversation", &token),
            Err(Refused::OtherKind("cart".into()))
        );
        // One character changed in the id or the tag.
        let mut bytes = token.clone().into_bytes();
        let last = bytes.len() - 1;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(bytes).expect("ascii");
        assert_eq!(sealer.open("cart", &altered), Err(Refused::Forged));
        assert_eq!(sealer.open("cart", "cart.nothing"), Err(Refused::Forged));
        assert_eq!(sealer.open("cart", ""), Err(Refused::Forged));
        // Another deployment's key.
        let other = Sealer::new(&StateKeys::default());
        assert_eq!(other.open("cart", &token), Err(Refused::Forged));
        // Two mints differ.
        assert_ne!(sealer.mint("cart").0, token);
    }
}
