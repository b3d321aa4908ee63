//! Outbound HTTPS (feature `tls`) against servers started here behind a
//! TLS front whose certificates come from a CA made at test time (rcgen):
//! the client reaches an https MCP server, the JWT verifier fetches its
//! JWKS over https, and a certificate from an untrusted CA is refused with
//! an error that says so.

#[path = "common/oauth.rs"]
mod oauth;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use mcp_core::auth::{JwtVerifier, TokenVerifier};
use mcp_core::client::ClientBuilder;
use mcp_core::tls::TlsConfig;
use mcp_core::{serve_http, HttpOptions, InvokeContext, McpServer, McpToolDef};
use oauth::{AuthServer, TestKey};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

const RESOURCE: &str = "https://mcp.example.test/mcp";

/// A CA and a server certificate it signed for `localhost` and 127.0.0.1.
struct Pki {
    ca_pem: String,
    server: Arc<rustls::ServerConfig>,
}

impl Pki {
    fn new(name: &str) -> Self {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, format!("{name} test CA"));
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key"))
            .expect("CA");
        let key = KeyPair::generate().expect("server key");
        let cert = CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("server params")
            .signed_by(&key, &ca)
            .expect("server certificate");
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![CertificateDer::from(cert.der().to_vec())],
                PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .expect("server config");
        Self {
            ca_pem: ca.pem(),
            server: Arc::new(server),
        }
    }
}

/// The CA every test here trusts (one per process: the installed roots
/// are process-wide), installed once as the only root.
fn trusted() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| {
        let pki = Pki::new("trusted");
        TlsConfig::empty()
            .add_root_pem(pki.ca_pem.as_bytes())
            .expect("the CA's PEM")
            .install()
            .expect("install");
        pki
    })
}

/// A TLS front on an ephemeral loopback port: each connection is
/// decrypted with `pki`'s certificate and relayed to `backend`.
async fn tls_front(pki: &Pki, backend: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let acceptor = TlsAcceptor::from(Arc::clone(&pki.server));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                if let Ok(mut plain) = TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                }
            });
        }
    });
    addr
}

fn server() -> McpServer {
    McpServer::builder()
        .server_info("tls-test", "1.0.0")
        .tool(McpToolDef::new(
            "hello",
            "Greets",
            json!({"type": "object"}),
            |_a, _c: InvokeContext| async { "hello over tls" },
        ))
        .build()
        .expect("server")
}

#[tokio::test]
async fn the_client_reaches_an_https_mcp_server() {
    let pki = trusted();
    let http = serve_http(server(), HttpOptions::new().port(0))
        .await
        .expect("serve_http");
    let front = tls_front(pki, http.local_addr()).await;
    let url = format!("https://localhost:{}/mcp", front.port());
    let client = ClientBuilder::new("tls-test-client", "0.1")
        .connect_http(&url)
        .await
        .expect("connected over https");
    let result = client.call_tool("hello", json!({})).await.expect("call");
    let text = serde_json::to_value(&result).expect("json");
    assert_eq!(text["content"][0]["text"], "hello over tls", "{text}");
    client.close().await;
    http.close().await;
}

#[tokio::test]
async fn the_jwt_verifier_fetches_its_jwks_over_https() {
    let pki = trusted();
    let key = TestKey::new("tls-key");
    let auth = AuthServer::start(&[&key]).await;
    let front = tls_front(pki, auth.addr).await;
    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE)
        .jwks_uri(format!("https://localhost:{}/jwks", front.port()));
    let token = key.sign(&auth.claims(RESOURCE, "alice", "files:read"));
    let info = verifier.verify(&token).await.expect("verified");
    assert_eq!(info.principal(), "sub:alice");
    assert_eq!(auth.fetches(), 1, "the JWKS came through the https front");
}

#[tokio::test]
async fn a_certificate_from_an_untrusted_ca_is_refused_with_a_clear_error() {
    let _ = trusted();
    let stranger = Pki::new("untrusted");
    let key = TestKey::new("k");
    let auth = AuthServer::start(&[&key]).await;
    let front = tls_front(&stranger, auth.addr).await;

    let verifier = JwtVerifier::new(auth.issuer.clone(), RESOURCE)
        .jwks_uri(format!("https://localhost:{}/jwks", front.port()));
    let token = key.sign(&auth.claims(RESOURCE, "alice", ""));
    let refused = verifier.verify(&token).await.expect_err("untrusted");
    let why = refused.to_string();
    assert!(
        why.contains("certificate") && why.contains("UnknownIssuer"),
        "{why}"
    );
    assert_eq!(auth.fetches(), 0, "nothing was sent past the handshake");

    let http = serve_http(server(), HttpOptions::new().port(0))
        .await
        .expect("serve_http");
    let front = tls_front(&stranger, http.local_addr()).await;
    let url = format!("https://localhost:{}/mcp", front.port());
    let Err(refused) = ClientBuilder::new("tls-test-client", "0.1")
        .connect_http(&url)
        .await
    else {
        panic!("an untrusted server was accepted");
    };
    let why = refused.to_string();
    assert!(
        why.contains("certificate") && why.contains("UnknownIssuer"),
        "{why}"
    );
    http.close().await;
}

#[test]
fn a_root_that_is_not_a_certificate_is_refused() {
    let refused = TlsConfig::empty().add_root_pem(b"not a certificate");
    assert!(refused.is_err_and(|e| e.to_string().contains("no CERTIFICATE")));
    let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    assert!(TlsConfig::empty().add_root_pem(garbage.as_bytes()).is_err());
    assert!(
        TlsConfig::with_default_roots().root_count() > 100,
        "Mozilla's roots"
    );
}
