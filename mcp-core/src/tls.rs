//! TLS for outbound HTTPS: which certificate authorities the `auth`
//! fetches (authorization-server metadata, JWKS, introspection), the OAuth
//! client and the client's Streamable HTTP link trust.
//!
//! Those clients speak `https://` through rustls (AWS-LC as its crypto
//! provider, TLS 1.2 and 1.3) and trust, by default, Mozilla's roots (built
//! in, so a container without a CA bundle still reaches public servers) and
//! the platform's (where an organisation installs its own CA). To trust
//! another root — a private CA, or a test's — install a [`TlsConfig`]
//! before building the clients:
//!
//! ```no_run
//! use mcp_core::tls::TlsConfig;
//!
//! # fn main() -> Result<(), mcp_core::tls::TlsError> {
//! let pem = std::fs::read("/etc/my-org/ca.pem").map_err(|e| {
//!     mcp_core::tls::TlsError::new(format!("reading the CA: {e}"))
//! })?;
//! TlsConfig::with_default_roots().add_root_pem(&pem)?.install()?;
//! # Ok(())
//! # }
//! ```
//!
//! A client or verifier reads the installed configuration when it builds
//! its connection pool (a `Client` when it connects, a `JwtVerifier` or
//! `IntrospectionVerifier` at its first fetch); one built before keeps the
//! roots it had. A server whose certificate chains to no trusted root, or
//! names another host, is refused: the error says so ("invalid peer
//! certificate: UnknownIssuer", "… NotValidForName").

use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use rustls::{ClientConfig, RootCertStore};

/// A refused TLS configuration (a root that does not parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError(String);

impl TlsError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl std::fmt::Display for TlsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TlsError {}

/// The certificate authorities outbound HTTPS trusts.
#[derive(Clone)]
pub struct TlsConfig {
    roots: RootCertStore,
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig")
            .field("roots", &self.roots.len())
            .finish()
    }
}

/// What was installed with [`TlsConfig::install`] (none: the default roots).
static INSTALLED: RwLock<Option<Arc<ClientConfig>>> = RwLock::new(None);

/// The default roots, loaded once (reading the platform's store costs
/// milliseconds).
fn default_roots() -> &'static RootCertStore {
    static ROOTS: OnceLock<RootCertStore> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        // Unreadable platform certificates are skipped: Mozilla's roots
        // stay, and an added root is the way to trust a private CA.
        let platform = rustls_native_certs::load_native_certs();
        roots.add_parsable_certificates(platform.certs);
        roots
    })
}

impl TlsConfig {
    /// Mozilla's roots and the platform's.
    pub fn with_default_roots() -> Self {
        Self {
            roots: default_roots().clone(),
        }
    }

    /// No root at all: only those added afterwards are trusted (a test, or
    /// a deployment that trusts its own CA alone).
    pub fn empty() -> Self {
        Self {
            roots: RootCertStore::empty(),
        }
    }

    /// Also trusts the CA certificates of `pem` (one or more `CERTIFICATE`
    /// blocks).
    ///
    /// # Errors
    /// No certificate in `pem`, or one that is not a usable CA certificate.
    pub fn add_root_pem(mut self, pem: &[u8]) -> Result<Self, TlsError> {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| TlsError(format!("a root certificate's PEM: {e}")))?;
            self.roots
                .add(cert)
                .map_err(|e| TlsError(format!("a root certificate: {e}")))?;
            added += 1;
        }
        if added == 0 {
            return Err(TlsError("no CERTIFICATE block in the PEM".to_owned()));
        }
        Ok(self)
    }

    /// Also trusts the CA certificate `der` (DER-encoded X.509).
    ///
    /// # Errors
    /// `der` is not a usable CA certificate.
    pub fn add_root_der(mut self, der: impl Into<Vec<u8>>) -> Result<Self, TlsError> {
        self.roots
            .add(CertificateDer::from(der.into()))
            .map_err(|e| TlsError(format!("a root certificate: {e}")))?;
        Ok(self)
    }

    /// How many roots are trusted.
    pub fn root_count(&self) -> usize {
        self.roots.len()
    }

    /// Makes this the configuration of every outbound HTTPS client built
    /// from now on (in this process).
    ///
    /// # Errors
    /// The crypto provider refuses the protocol versions (never for the
    /// built-in AWS-LC provider and TLS 1.2/1.3).
    pub fn install(self) -> Result<(), TlsError> {
        let config = Arc::new(self.client_config()?);
        *INSTALLED.write().unwrap_or_else(PoisonError::into_inner) = Some(config);
        Ok(())
    }

    fn client_config(&self) -> Result<ClientConfig, TlsError> {
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        Ok(ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(format!("TLS versions: {e}")))?
            .with_root_certificates(self.roots.clone())
            .with_no_client_auth())
    }
}

/// The rustls configuration outbound clients use now.
fn current() -> Result<Arc<ClientConfig>, TlsError> {
    if let Some(config) = INSTALLED
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .as_ref()
    {
        return Ok(Arc::clone(config));
    }
    static DEFAULT: OnceLock<Result<Arc<ClientConfig>, TlsError>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            TlsConfig::with_default_roots()
                .client_config()
                .map(Arc::new)
        })
        .clone()
}

/// The connector of the crate's outbound client: `https://` on rustls,
/// `http://` as plain TCP, HTTP/1.1 (ALPN `http/1.1`).
pub(crate) fn connector() -> Result<
    hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>,
    TlsError,
> {
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(ClientConfig::clone(&*current()?))
        .https_or_http()
        .enable_http1()
        .build())
}
