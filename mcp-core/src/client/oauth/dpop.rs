//! DPoP (RFC 9449; the `io.modelcontextprotocol/auth/dpop` extension,
//! feature `client-oauth-jwt`): tokens bound to a P-256 key this client
//! holds, each request carrying a fresh proof (`typ: dpop+jwt`, the
//! public key as `jwk`, the method and URL, the token's hash, the
//! server's nonce when it asked for one).

use std::time::{SystemTime, UNIX_EPOCH};

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey, VerifyingKey};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::client::ClientError;
use crate::protocol::base64;

/// The client's DPoP key.
pub(crate) struct Dpop {
    key: SigningKey,
    jwk: Value,
}

impl Dpop {
    /// A fresh key from the OS random source.
    pub(crate) fn generate() -> Result<Self, ClientError> {
        // A random 32-byte string is a valid P-256 scalar but with
        // negligible odds; draw again then.
        for _ in 0..8 {
            if let Ok(key) = SigningKey::from_slice(&crate::random::bytes::<32>()) {
                let point = VerifyingKey::from(&key).to_encoded_point(false);
                let (Some(x), Some(y)) = (point.x(), point.y()) else {
                    continue;
                };
                let jwk = json!({
                    "kty": "EC",
                    "crv": "P-256",
                    "x": base64::encode_url(x),
                    "y": base64::encode_url(y),
                });
                return Ok(Self { key, jwk });
            }
        }
        Err(ClientError::Authorization(
            "could not make a DPoP key".into(),
        ))
    }

    /// A proof for `method` on `url` (its query and fragment dropped),
    /// bound to `access_token` when given, with the server's `nonce`.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, ClientError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let mut claims = json!({
            "jti": base64::encode_url(&crate::random::bytes::<16>()),
            "htm": method,
            "htu": htu,
            "iat": now,
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(base64::encode_url(&Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let encode = |v: &Value| {
            serde_json::to_vec(v)
                .map(|b| base64::encode_url(&b))
                .map_err(|e| ClientError::Authorization(e.to_string()))
        };
        let input = format!("{}.{}", encode(&header)?, encode(&claims)?);
        let signature: Signature = self.key.sign(input.as_bytes());
        Ok(format!(
            "{input}.{}",
            base64::encode_url(&signature.to_bytes())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;

    #[test]
    fn proofs_verify_with_the_embedded_key_and_carry_the_claims() {
        let dpop = Dpop::generate().unwrap_or_else(|e| panic!("{e}"));
        let proof = dpop
            .proof("POST", "http://rs.example/mcp?x=1", Some("tok"), Some("n1"))
            .unwrap_or_default();
        let parts: Vec<&str> = proof.split('.').collect();
        assert_eq!(parts.len(), 3);
        let decode = |s: &str| -> Value {
            base64::decode_url(s)
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default()
        };
        let header = decode(parts[0]);
        let claims = decode(parts[1]);
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(claims["htu"], "http://rs.example/mcp");
        assert_eq!(claims["nonce"], "n1");
        assert_eq!(
            claims["ath"],
            json!(base64::encode_url(&Sha256::digest(b"tok")))
        );
        let signature = base64::decode_url(parts[2])
            .and_then(|b| Signature::from_slice(&b).ok())
            .unwrap_or_else(|| panic!("signature"));
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(VerifyingKey::from(&dpop.key)
            .verify(input.as_bytes(), &signature)
            .is_ok());
        let again = dpop
            .proof("POST", "http://rs.example/mcp", None, None)
            .unwrap_or_default();
        assert_ne!(
            decode(again.split('.').nth(1).unwrap_or_default())["jti"],
            claims["jti"]
        );
    }
}
