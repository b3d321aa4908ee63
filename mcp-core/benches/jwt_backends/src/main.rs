//! Time `jsonwebtoken::decode` (signature, then claims) of an EdDSA, ES256
//! and RS256 token, its key already parsed (a `DecodingKey` built once from
//! the JWK, as `JwtVerifier` keeps them), under the backend named by the
//! first argument: `rust_crypto` or `aws_lc_rs`.

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use jsonwebtoken::{crypto, Algorithm, DecodingKey, Validation};
use serde_json::{json, Map, Value};

const ISSUER: &str = "http://127.0.0.1:1";
const AUDIENCE: &str = "http://127.0.0.1:40000/mcp";

fn b64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// A compact JWS of the claims, signed by `sign`.
fn jws(alg: &str, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let header = json!({"alg": alg, "typ": "at+jwt", "kid": "k"});
    let claims = json!({"iss": ISSUER, "aud": AUDIENCE, "sub": "bench", "scope": "echo:use",
        "client_id": "bench", "iat": now, "exp": now + 3600});
    let input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(claims.to_string().as_bytes())
    );
    let sig = sign(input.as_bytes());
    format!("{input}.{}", b64(&sig))
}

fn main() {
    let backend = std::env::args().nth(1).unwrap_or_default();
    let provider = match backend.as_str() {
        "rust_crypto" => &crypto::rust_crypto::DEFAULT_PROVIDER,
        "aws_lc_rs" => &crypto::aws_lc::DEFAULT_PROVIDER,
        _ => panic!("usage: jwt-backends rust_crypto|aws_lc_rs"),
    };
    provider
        .install_default()
        .unwrap_or_else(|_| panic!("a provider was installed already"));
    let rng = SystemRandom::new();

    let ed = Ed25519KeyPair::from_pkcs8(
        Ed25519KeyPair::generate_pkcs8(&rng)
            .expect("ed25519")
            .as_ref(),
    )
    .expect("ed25519");
    let ed_token = jws("EdDSA", |m| ed.sign(m).as_ref().to_vec());
    let ed_key = DecodingKey::from_ed_components(&b64(ed.public_key().as_ref())).expect("ed jwk");

    let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let ec = EcdsaKeyPair::from_pkcs8(
        alg,
        EcdsaKeyPair::generate_pkcs8(alg, &rng)
            .expect("p256")
            .as_ref(),
    )
    .expect("p256");
    let ec_token = jws("ES256", |m| {
        ec.sign(&rng, m).expect("sign").as_ref().to_vec()
    });
    let point = ec.public_key().as_ref();
    let ec_key =
        DecodingKey::from_ec_components(&b64(&point[1..33]), &b64(&point[33..65])).expect("ec jwk");

    let rsa = RsaKeyPair::generate(aws_lc_rs::rsa::KeySize::Rsa2048).expect("rsa");
    let rs_token = jws("RS256", |m| {
        let mut sig = vec![0; rsa.public_modulus_len()];
        rsa.sign(&signature::RSA_PKCS1_SHA256, &rng, m, &mut sig)
            .expect("sign");
        sig
    });
    let parts = signature::RsaPublicKeyComponents::<Vec<u8>>::from(rsa.public_key());
    let rs_key = DecodingKey::from_rsa_raw_components(&parts.n, &parts.e);

    let cases = [
        (Algorithm::EdDSA, ed_token, ed_key),
        (Algorithm::ES256, ec_token, ec_key),
        (Algorithm::RS256, rs_token, rs_key),
    ];
    let mut per_op: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(6) || per_op[0].len() < 5 {
        for (i, (alg, token, key)) in cases.iter().enumerate() {
            let mut v = Validation::new(*alg);
            v.set_issuer(&[ISSUER]);
            v.set_audience(&[AUDIENCE]);
            let batch = 20;
            let t = Instant::now();
            for _ in 0..batch {
                let data = jsonwebtoken::decode::<Map<String, Value>>(black_box(token), key, &v);
                black_box(data.expect("a valid token"));
            }
            per_op[i].push(t.elapsed() / batch);
        }
    }
    for ((alg, _, _), times) in cases.iter().zip(per_op.iter_mut()) {
        times.sort();
        println!(
            "{backend:<12} {alg:?}: {:>10?} / token (median of {} batches)",
            times[times.len() / 2],
            times.len()
        );
    }
}
