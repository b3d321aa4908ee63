//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect
//! Core §9; feature `client-oauth-jwt`): a short-lived JWT, signed ES256
//! with the client's P-256 key, names the client as issuer and subject
//! and the authorization server as audience.

use std::time::{SystemTime, UNIX_EPOCH};

use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::DecodePrivateKey;
use serde_json::json;

use crate::client::ClientError;
use crate::protocol::base64;

/// The `client_assertion_type` of a JWT client assertion.
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// A P-256 private key from PKCS#8 PEM.
pub(crate) fn key_from_pem(pem: &str) -> Result<SigningKey, ClientError> {
    SigningKey::from_pkcs8_pem(pem).map_err(|e| {
        ClientError::Authorization(format!("the client's private key (PKCS#8 P-256 PEM): {e}"))
    })
}

/// A signed assertion for `client_id` at the authorization server `audience`.
pub(crate) fn sign(
    key: &SigningKey,
    client_id: &str,
    audience: &str,
) -> Result<String, ClientError> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": base64::encode_url(&crate::random::bytes::<16>()),
    });
    let encode = |v: &serde_json::Value| {
        serde_json::to_vec(v)
            .map(|b| base64::encode_url(&b))
            .map_err(|e| ClientError::Authorization(e.to_string()))
    };
    let input = format!("{}.{}", encode(&header)?, encode(&claims)?);
    let signature: Signature = key.sign(input.as_bytes());
    Ok(format!(
        "{input}.{}",
        base64::encode_url(&signature.to_bytes())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use p256::ecdsa::signature::Verifier;
    use p256::ecdsa::VerifyingKey;

    #[test]
    fn assertions_verify_with_the_public_key_and_name_the_client() {
        let key = SigningKey::from_slice(&[7u8; 32]).unwrap_or_else(|e| panic!("key: {e}"));
        let jwt = sign(&key, "client-1", "http://as.example").unwrap_or_default();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let signature = base64::decode_url(parts[2])
            .and_then(|b| Signature::from_slice(&b).ok())
            .unwrap_or_else(|| panic!("signature"));
        let input = format!("{}.{}", parts[0], parts[1]);
        assert!(VerifyingKey::from(&key)
            .verify(input.as_bytes(), &signature)
            .is_ok());
        let claims: serde_json::Value = base64::decode_url(parts[1])
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "http://as.example");
        assert!(key_from_pem("not a key").is_err());
    }
}
