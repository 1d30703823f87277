//! The loopback cluster over TLS (`Config::tls`, `--tls`), as a real API server is reached from
//! a pod: `https://`, a server certificate for `127.0.0.1`/`localhost` signed by a test CA that
//! the client must trust (`tests/fixtures/tls/`, valid until 2126). rustls with ring — the one
//! crypto provider the tool links — and HTTP/1.1 only (ALPN `http/1.1`).

use std::sync::Arc;

use base64::prelude::{Engine as _, BASE64_STANDARD};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// The CA clients trust (PEM): a pod's `ca.crt`, a kubeconfig's `certificate-authority-data`.
pub const CA_PEM: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tls/ca.crt"
));
const SERVER_CERT: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tls/server.crt"
));
const SERVER_KEY: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/tls/server.key"
));

/// The acceptor for the fixture's server certificate.
pub fn acceptor() -> std::io::Result<TlsAcceptor> {
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(SERVER_CERT)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid(format!("tests/fixtures/tls/server.crt: {e:?}")))?;
    let key = PrivateKeyDer::from_pem_slice(SERVER_KEY)
        .map_err(|e| invalid(format!("tests/fixtures/tls/server.key: {e:?}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| invalid(e.to_string()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The CA as a kubeconfig's `certificate-authority-data`.
pub fn ca_data() -> String {
    BASE64_STANDARD.encode(CA_PEM.as_bytes())
}
