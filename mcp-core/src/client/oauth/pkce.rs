//! PKCE with S256 (RFC 7636) and the `state` value of an authorization
//! request: both from the OS random source (`crate::random`).

use sha2::{Digest, Sha256};

use crate::protocol::base64;

/// A code verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    /// 43 characters of unpadded URL-safe base64 (32 random bytes).
    pub(crate) verifier: String,
    /// `BASE64URL(SHA256(verifier))`.
    pub(crate) challenge: String,
}

impl Pkce {
    pub(crate) fn new() -> Self {
        let verifier = base64::encode_url(&crate::random::bytes::<32>());
        let challenge = challenge_of(&verifier);
        Self {
            verifier,
            challenge,
        }
    }
}

/// The S256 challenge of `verifier`.
pub(crate) fn challenge_of(verifier: &str) -> String {
    base64::encode_url(&Sha256::digest(verifier.as_bytes()))
}

/// A fresh `state`: 32 random bytes, URL-safe.
pub(crate) fn state() -> String {
    base64::encode_url(&crate::random::bytes::<32>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_rfc_7636_example() {
        // RFC 7636, appendix B.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
        let p = Pkce::new();
        assert_eq!(p.verifier.len(), 43);
        assert_eq!(p.challenge, challenge_of(&p.verifier));
        assert_ne!(Pkce::new().verifier, p.verifier);
    }
}
