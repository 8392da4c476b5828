//! How much of the server's certificate is checked, by mode: nothing but the
//! handshake's signatures (`prefer`, `require`, as libpq and MySQL's `REQUIRED`), the
//! chain to the CA (`verify-ca`, `VERIFY_CA`), or the chain and the host's name
//! (`verify-full`, `VERIFY_IDENTITY`).

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    CryptoProvider, WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature,
};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};

use crate::db::{DbError, ErrorKind};

/// Checks the chain to `roots`, and the host's name where `name` says so (`verify-full`,
/// not `verify-ca`); `given`: the certificates the user gave as roots.
pub fn chain(
    roots: RootCertStore,
    given: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
    name: bool,
) -> Result<Arc<dyn ServerCertVerifier>, DbError> {
    let algorithms = provider.signature_verification_algorithms;
    let chain = Chain {
        web_pki: web_pki(roots, provider)?,
        given,
        name,
    };
    Ok(Arc::new(Checked {
        algorithms,
        chain: Some(chain),
    }))
}

/// Checks only that the server holds the key of the certificate it sent: the
/// connection is encrypted, the server not authenticated.
pub fn any_certificate(provider: Arc<CryptoProvider>) -> Arc<dyn ServerCertVerifier> {
    Arc::new(Checked {
        algorithms: provider.signature_verification_algorithms,
        chain: None,
    })
}

fn web_pki(
    roots: RootCertStore,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, DbError> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| {
            DbError::new(
                ErrorKind::Connection,
                format!("TLS cannot check certificates: {e}"),
            )
        })
}

/// The handshake's signatures always; the certificate's chain where one is asked for.
#[derive(Debug)]
struct Checked {
    algorithms: WebPkiSupportedAlgorithms,
    chain: Option<Chain>,
}

/// The chain to the CA, and the name where `name` says so.
///
/// A server certificate the user gave as its own root (a self-signed one made as
/// PostgreSQL's docs make one, which marks itself a CA) is taken too: psql, mysql and
/// redis-cli take it, where webpki refuses a CA's certificate as a server's own. It is
/// taken where the server's certificate is byte for byte one of the roots given: webpki
/// checked its dates before it refused it, and its name is checked here.
#[derive(Debug)]
struct Chain {
    web_pki: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
    name: bool,
}

impl Chain {
    /// Whether `end_entity`, refused as `error`, is a root the user gave, refused only
    /// for being a CA's.
    fn given_root_refused(&self, end_entity: &CertificateDer<'_>, error: &Error) -> bool {
        let Error::InvalidCertificate(CertificateError::Other(other)) = error else {
            return false;
        };
        other.0.downcast_ref::<webpki::Error>() == Some(&webpki::Error::CaUsedAsEndEntity)
            && self
                .given
                .iter()
                .any(|root| root.as_ref() == end_entity.as_ref())
    }
}

/// A given root, presented as the server's own certificate: its name checked.
fn own_root(end_entity: &CertificateDer<'_>, server_name: &ServerName<'_>) -> Result<(), Error> {
    let cert = webpki::EndEntityCert::try_from(end_entity)
        .map_err(|_| Error::InvalidCertificate(CertificateError::BadEncoding))?;
    cert.verify_is_valid_for_subject_name(server_name)
        .map_err(|_| Error::InvalidCertificate(CertificateError::NotValidForName))
}

impl ServerCertVerifier for Checked {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        let checked = match chain.web_pki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(e) if chain.given_root_refused(end_entity, &e) => {
                own_root(end_entity, server_name).map(|()| ServerCertVerified::assertion())
            }
            checked => checked,
        };
        match checked {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !chain.name => Ok(ServerCertVerified::assertion()),
            checked => checked,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    use rustls::pki_types::PrivateKeyDer;
    use rustls::{ClientConnection, ServerConfig, ServerConnection};

    use super::super::{NamedFile, TlsMode, TlsSettings, provider};

    /// A self-signed certificate that marks itself a CA, for 127.0.0.1 and localhost,
    /// as `openssl req -x509` makes one; its PEM and a server that presents it.
    fn own_root(dir: &Path, name: &str) -> (NamedFile, std::sync::Arc<ServerConfig>) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, cert.pem()).unwrap();
        let server = ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
            )
            .unwrap();
        let file = NamedFile {
            setting: "sslrootcert",
            path,
        };
        (file, std::sync::Arc::new(server))
    }

    /// A whole handshake in memory: the client's verdict on the server's certificate.
    fn handshake(
        mode: TlsMode,
        root: &NamedFile,
        host: &str,
        server: std::sync::Arc<ServerConfig>,
    ) -> Result<(), rustls::Error> {
        let settings = TlsSettings {
            mode,
            mode_source: "sslmode".into(),
            ca: Some(root.clone()),
            cert: None,
            key: None,
        };
        let tls = settings.client(host, 5432).unwrap().unwrap();
        let mut client = ClientConnection::new(tls.config, tls.server_name)?;
        let mut server = ServerConnection::new(server)?;
        for _ in 0..10 {
            let mut bytes = Vec::new();
            client.write_tls(&mut bytes).unwrap();
            server.read_tls(&mut bytes.as_slice()).unwrap();
            server.process_new_packets()?;
            let mut bytes = Vec::new();
            server.write_tls(&mut bytes).unwrap();
            client.read_tls(&mut bytes.as_slice()).unwrap();
            client.process_new_packets()?;
            if !client.is_handshaking() {
                return Ok(());
            }
        }
        panic!("the handshake did not end");
    }

    #[test]
    fn a_self_signed_ca_certificate_given_as_its_own_root_is_taken_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (root, server) = own_root(dir.path(), "server.crt");
        let (other, _) = own_root(dir.path(), "other.crt");
        assert_eq!(
            handshake(TlsMode::VerifyFull, &root, "127.0.0.1", server.clone()),
            Ok(())
        );
        // verify-full still checks the name; verify-ca does not.
        let wrong_name = handshake(TlsMode::VerifyFull, &root, "db.example", server.clone());
        assert!(
            matches!(
                wrong_name,
                Err(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::NotValidForName
                ))
            ),
            "{wrong_name:?}"
        );
        assert_eq!(
            handshake(TlsMode::VerifyCa, &root, "db.example", server.clone()),
            Ok(())
        );
        // Another self-signed certificate given as the root is no proof of this one.
        assert!(handshake(TlsMode::VerifyFull, &other, "127.0.0.1", server).is_err());
    }
}
