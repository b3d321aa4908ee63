//! The one hyper client connector of every outbound request (the `auth`
//! fetches, the OAuth client's, the client's Streamable HTTP link): plain
//! TCP without the `tls` feature, rustls over it for `https://` with it.
// With `tls` alone (no client, no auth) nothing here is used yet.
#![cfg_attr(not(any(feature = "client", feature = "auth")), allow(dead_code))]

use std::error::Error;

use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// The connector of [`client`]: `http://` and, with `tls`, `https://`.
#[cfg(feature = "tls")]
pub(crate) type Connector =
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;
/// The connector of [`client`]: `http://` only (no `tls` feature).
#[cfg(not(feature = "tls"))]
pub(crate) type Connector = hyper_util::client::legacy::connect::HttpConnector;

/// A hyper client on [`Connector`]; with `tls`, trusting the roots
/// installed (`crate::tls::TlsConfig::install`) when it is built. `Err`
/// (why no HTTPS client could be made) is for the first request to report.
pub(crate) type HttpClient<B> = Result<Client<Connector, B>, String>;

/// See [`HttpClient`].
pub(crate) fn client<B>() -> HttpClient<B>
where
    B: hyper::body::Body + Send,
    B::Data: Send,
{
    let builder = Client::builder(TokioExecutor::new());
    #[cfg(feature = "tls")]
    {
        crate::tls::connector()
            .map(|c| builder.build(c))
            .map_err(|e| format!("no TLS client: {e}"))
    }
    #[cfg(not(feature = "tls"))]
    {
        Ok(builder.build_http())
    }
}

/// Whether [`client`] can reach URLs of `scheme`; `Err` says why not.
pub(crate) fn check_scheme(scheme: Option<&str>) -> Result<(), String> {
    match scheme {
        Some("http") => Ok(()),
        #[cfg(feature = "tls")]
        Some("https") => Ok(()),
        #[cfg(not(feature = "tls"))]
        Some("https") => Err("https needs mcp-core's `tls` feature".to_owned()),
        Some(other) => Err(format!("unsupported URL scheme `{other}`")),
        None => Err("not an absolute http(s) URL".to_owned()),
    }
}

/// `error` and its sources, outermost first (hyper's own message names
/// only its stage, say "client error (Connect)"; the cause, say a refused
/// certificate, is in the chain).
pub(crate) fn describe(error: &(dyn Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let next = cause.to_string();
        if !text.contains(&next) {
            text.push_str(": ");
            text.push_str(&next);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::check_scheme;

    #[test]
    fn schemes_other_than_http_are_refused_with_the_reason() {
        assert!(check_scheme(Some("http")).is_ok());
        assert_eq!(check_scheme(Some("https")).is_ok(), cfg!(feature = "tls"));
        assert!(check_scheme(Some("ftp")).is_err_and(|e| e.contains("ftp")));
        assert!(check_scheme(None).is_err());
    }
}
