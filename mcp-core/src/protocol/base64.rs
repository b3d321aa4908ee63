//! Standard base64 (RFC 4648, with padding) for binary content and blobs.
//!
//! Small enough to keep in-tree rather than pull a dependency.

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Encodes bytes as padded standard base64.
pub fn encode(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    encode_into(&mut out, input, ALPHABET, true);
    out
}

/// Encodes bytes as unpadded URL-safe base64 (`-` and `_`).
pub fn encode_url(input: &[u8]) -> String {
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    encode_url_into(&mut out, input);
    out
}

/// Appends the unpadded URL-safe base64 of `input` to `out`.
pub(crate) fn encode_url_into(out: &mut String, input: &[u8]) {
    const URL_ALPHABET: &[u8; 64] =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    encode_into(out, input, URL_ALPHABET, false);
}

fn encode_into(out: &mut String, input: &[u8], alphabet: &[u8; 64], pad: bool) {
    out.reserve(input.len().div_ceil(3) * 4);
    for chunk in input.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let sextet = |shift: u32| char::from(alphabet[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        match (chunk.len() > 1, pad) {
            (true, _) => out.push(sextet(6)),
            (false, true) => out.push('='),
            (false, false) => {}
        }
        match (chunk.len() > 2, pad) {
            (true, _) => out.push(sextet(0)),
            (false, true) => out.push('='),
            (false, false) => {}
        }
    }
}

/// Decodes unpadded URL-safe base64 in its canonical form only: `None` on
/// any invalid character, an impossible length, or unused bits that are not
/// zero (so one byte string has exactly one spelling).
pub fn decode_url(input: &str) -> Option<Vec<u8>> {
    if input.contains(['+', '/', '=']) || input.len() % 4 == 1 {
        return None;
    }
    let unused_bits = match input.len() % 4 {
        2 => 4,
        3 => 2,
        _ => 0,
    };
    if let (Some(&last), true) = (input.as_bytes().last(), unused_bits > 0) {
        let sextet = match last {
            b'A'..=b'Z' => last - b'A',
            b'a'..=b'z' => last - b'a' + 26,
            b'0'..=b'9' => last - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        if sextet & ((1 << unused_bits) - 1) != 0 {
            return None;
        }
    }
    let standard: String = input
        .chars()
        .map(|c| match c {
            '-' => '+',
            '_' => '/',
            c => c,
        })
        .collect();
    decode(&standard)
}

/// Decodes padded or unpadded standard base64; `None` on any invalid character.
pub fn decode(input: &str) -> Option<Vec<u8>> {
    let digits = input.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for &c in digits {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(((acc >> bits) & 0xff) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn url_safe_is_the_standard_alphabet_swapped_and_unpadded() {
        for len in 0..12u8 {
            let bytes: Vec<u8> = (0..len)
                .map(|i| i.wrapping_mul(97).wrapping_add(0xfb))
                .collect();
            let expected: String = super::encode(&bytes)
                .trim_end_matches('=')
                .replace('+', "-")
                .replace('/', "_");
            let url = super::encode_url(&bytes);
            assert_eq!(url, expected);
            assert_eq!(super::decode_url(&url).as_deref(), Some(&bytes[..]));
        }
    }

    #[test]
    fn url_decoding_accepts_only_the_canonical_spelling() {
        // "f" is `Zg`; `Zh`, `Zi`, `Zj` differ only in unused bits.
        assert_eq!(super::decode_url("Zg").as_deref(), Some(&b"f"[..]));
        for other in ["Zh", "Zi", "Zj", "Zm9", "Z"] {
            assert_eq!(super::decode_url(other), None, "{other}");
        }
        assert_eq!(super::decode_url("Zm8").as_deref(), Some(&b"fo"[..]));
    }

    #[test]
    fn round_trips_all_lengths() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::encode(plain.as_bytes()), coded);
            assert_eq!(super::decode(coded).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(super::decode("Zm9v!"), None);
    }
}
