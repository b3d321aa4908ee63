//! What a verified token says, read the same way for a JWT's claims and an
//! RFC 7662 introspection answer: its times (NumericDate) and its
//! principal.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use super::cache::TokenKey;
use super::verifier::Rejection;
use crate::context::AuthInfo;

/// The principal prefix of a token's subject (`sub`).
pub(crate) const SUBJECT_PREFIX: &str = "sub:";
/// The principal prefix of a token naming only its client.
pub(crate) const CLIENT_PREFIX: &str = "client:";
/// The principal prefix of a token naming neither subject nor client.
pub(crate) const TOKEN_PREFIX: &str = "token:";

/// Seconds since the Unix epoch, with their fraction.
pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The NumericDate claim `name` (RFC 7519 §2: seconds since the epoch, a
/// fraction allowed): `None` when absent, refused when it is not a number.
pub(crate) fn numeric_date(
    claims: &Map<String, Value>,
    name: &str,
) -> Result<Option<f64>, Rejection> {
    match claims.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(t) if t.is_finite() => Ok(Some(t)),
            _ => Err(Rejection::invalid(format!("malformed claim `{name}`"))),
        },
        Some(_) => Err(Rejection::invalid(format!("malformed claim `{name}`"))),
    }
}

/// Checks `exp` (the token is refused once `now >= exp + leeway`) and
/// `nbf` (refused while `now < nbf - leeway`), both as NumericDates with
/// their fraction; `iat` must be a NumericDate when present.
pub(crate) fn check_times(claims: &Map<String, Value>, leeway: Duration) -> Result<(), Rejection> {
    let now = unix_now();
    let leeway = leeway.as_secs_f64();
    if numeric_date(claims, "exp")?.is_some_and(|exp| now >= exp + leeway) {
        return Err(Rejection::invalid("the token expired"));
    }
    if numeric_date(claims, "nbf")?.is_some_and(|nbf| now < nbf - leeway) {
        return Err(Rejection::invalid("the token is not valid yet (nbf)"));
    }
    numeric_date(claims, "iat")?;
    Ok(())
}

/// How long an answer about a token expiring at `exp` may be reused, at
/// most `ttl`: zero once it expired.
pub(crate) fn reusable_for(ttl: Duration, exp: Option<f64>) -> Duration {
    match exp {
        None => ttl,
        Some(exp) => {
            let left = exp - unix_now();
            if left > 0.0 {
                ttl.min(Duration::try_from_secs_f64(left).unwrap_or(ttl))
            } else {
                Duration::ZERO
            }
        }
    }
}

/// A non-empty text claim.
fn text(claims: &Map<String, Value>, name: &str) -> Option<String> {
    claims
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The principal of a token: `sub:<subject>`, else `client:<client id>`,
/// else `token:<hex>` (the first 128 bits of the token's SHA-256: a
/// principal of its own, shared with no other token). The prefixes keep
/// the three kinds apart, so no subject can ever equal a client's
/// principal (see the [module docs](super)).
pub(crate) fn principal(
    subject: Option<&str>,
    client_id: Option<&str>,
    token: &TokenKey,
) -> String {
    match (subject, client_id) {
        (Some(sub), _) => format!("{SUBJECT_PREFIX}{sub}"),
        (None, Some(client)) => format!("{CLIENT_PREFIX}{client}"),
        (None, None) => {
            let mut out = String::with_capacity(TOKEN_PREFIX.len() + 32);
            out.push_str(TOKEN_PREFIX);
            for b in &token[..16] {
                out.push_str(&format!("{b:02x}"));
            }
            out
        }
    }
}

/// The claims of a verified token (or an active introspection answer) as
/// an [`AuthInfo`]; `token` is the token's SHA-256.
pub(crate) fn auth_info(claims: Map<String, Value>, token: &TokenKey) -> AuthInfo {
    let subject = text(&claims, "sub");
    let client_id = text(&claims, "client_id").or_else(|| text(&claims, "azp"));
    let scopes: Vec<String> = match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(s)), _) | (_, Some(Value::String(s))) => s
            .split(' ')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        (_, Some(Value::Array(a))) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let principal = principal(subject.as_deref(), client_id.as_deref(), token);
    let mut info = AuthInfo::new(principal).with_scopes(scopes);
    info.subject = subject;
    info.client_id = client_id;
    info.issuer = text(&claims, "iss");
    // Rounded down: a caller comparing with it never sees the token as
    // valid for longer than it is.
    info.expires_at = numeric_date(&claims, "exp")
        .ok()
        .flatten()
        .map(|exp| Duration::try_from_secs_f64(exp.max(0.0)).map_or(u64::MAX, |d| d.as_secs()));
    info.claims = claims;
    info
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claims(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_fractional_exp_is_a_date_and_expires() {
        let now = unix_now();
        let past = claims(json!({"exp": now - 100.5}));
        assert!(check_times(&past, Duration::from_secs(30)).is_err());
        let soon = claims(json!({"exp": now + 100.5, "nbf": now - 1.5, "iat": now - 1.5}));
        assert!(check_times(&soon, Duration::ZERO).is_ok());
        let early = claims(json!({"exp": now + 100.5, "nbf": now + 100.5}));
        assert!(check_times(&early, Duration::from_secs(30)).is_err());
        let text = claims(json!({"exp": "tomorrow"}));
        assert!(check_times(&text, Duration::ZERO).is_err());
        assert_eq!(
            reusable_for(Duration::from_secs(60), Some(now - 100.5)),
            Duration::ZERO
        );
        assert!(reusable_for(Duration::from_secs(60), Some(now + 10.5)) <= Duration::from_secs(11));
    }

    #[test]
    fn principals_of_subjects_clients_and_bare_tokens_never_meet() {
        let a = [1u8; 32];
        let b = [2u8; 32];
        assert_eq!(principal(Some("alice"), Some("app"), &a), "sub:alice");
        assert_eq!(principal(None, Some("app1"), &a), "client:app1");
        assert_ne!(
            principal(Some("client:app1"), None, &a),
            principal(None, Some("app1"), &a)
        );
        assert_ne!(principal(None, None, &a), principal(None, None, &b));
        assert!(principal(None, None, &a).starts_with("token:"));
        // An empty subject is no subject.
        let info = auth_info(claims(json!({"sub": "", "client_id": "app1"})), &a);
        assert_eq!(info.principal(), "client:app1");
    }
}
