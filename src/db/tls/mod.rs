//! TLS for every networked store, on one library: rustls (with aws-lc-rs's
//! cryptography), which all four drivers speak and whose session is a value apart from
//! its socket, so that hatshop's own wires keep moving a connection to the event loop
//! of the lane using it (bench/NOTES.md has the handshake and per-read costs).
//!
//! Each store reads its ecosystem's own words (libpq's `sslmode`, MySQL's `ssl-mode`,
//! `rediss://`, cqlsh's `ssl`) into one [`TlsSettings`]; [`TlsSettings::client`] makes
//! the client side for one host, or a one-line error naming the file or setting at fault.

mod describe;
mod session;
mod verify;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};

pub use describe::{describe, explain, server_refused, tls_error_in};
pub use session::{Session, TlsFacts, facts_of, handshake};

use super::{DbError, ErrorKind, Setting, Value};

/// How much a client asks of TLS, in libpq's words (each store maps its own onto these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsMode {
    /// Never.
    Disable,
    /// Where the server offers it; its certificate is not checked.
    Prefer,
    /// Always; the certificate is not checked (unless a CA is given: then as `VerifyCa`).
    Require,
    /// Always, with a certificate signed by the CA.
    VerifyCa,
    /// Always, with a certificate signed by the CA and made out to the host's name.
    VerifyFull,
}

impl TlsMode {
    /// Whether a server without TLS is refused.
    pub fn required(self) -> bool {
        !matches!(self, TlsMode::Disable | TlsMode::Prefer)
    }
}

/// A store's TLS settings: the mode and the files, each with the name the user gave
/// it (for messages: `sslrootcert`, `ssl-ca`, `cacert`).
#[derive(Debug, Clone)]
pub struct TlsSettings {
    pub mode: TlsMode,
    /// The setting that chose the mode, as the user wrote it (`sslmode=require`).
    pub mode_source: String,
    pub ca: Option<NamedFile>,
    pub cert: Option<NamedFile>,
    pub key: Option<NamedFile>,
}

/// A file a setting names, and that setting's name.
#[derive(Debug, Clone)]
pub struct NamedFile {
    pub setting: &'static str,
    pub path: PathBuf,
}

/// What a store needs to speak TLS to one host.
#[derive(Clone)]
pub struct Tls {
    pub config: Arc<ClientConfig>,
    pub server_name: ServerName<'static>,
    pub mode: TlsMode,
    /// `host:port` and the mode's setting, for messages.
    pub target: String,
    pub mode_source: String,
    pub ca: Option<NamedFile>,
}

impl TlsSettings {
    /// No TLS.
    pub fn disabled() -> TlsSettings {
        TlsSettings {
            mode: TlsMode::Disable,
            mode_source: String::new(),
            ca: None,
            cert: None,
            key: None,
        }
    }

    /// The client side of TLS to `host:port`, `None` when the mode is `Disable`; an
    /// unreadable file or a key without its certificate is one line naming it.
    pub fn client(&self, host: &str, port: u16) -> Result<Option<Tls>, DbError> {
        if self.mode == TlsMode::Disable {
            return Ok(None);
        }
        let config = self.config()?;
        let server_name = ServerName::try_from(host.trim_matches(['[', ']']).to_string())
            .map_err(|_| bad(format!("'{host}' is not a host name TLS can check")))?;
        Ok(Some(Tls {
            config: Arc::new(config),
            server_name,
            mode: self.checked_mode(),
            target: format!("{host}:{port}"),
            mode_source: self.mode_source.clone(),
            ca: self.ca.clone(),
        }))
    }

    /// The mode as applied: `require` with a CA checks the chain, as libpq does.
    fn checked_mode(&self) -> TlsMode {
        match (self.mode, &self.ca) {
            (TlsMode::Require, Some(_)) => TlsMode::VerifyCa,
            (mode, _) => mode,
        }
    }

    /// The rustls configuration: the verifier the mode asks for, and the client's own
    /// certificate where one is given.
    fn config(&self) -> Result<ClientConfig, DbError> {
        let provider = provider();
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(format!("TLS cannot be set up: {e}")))?;
        let verifier = match self.checked_mode() {
            TlsMode::Disable | TlsMode::Prefer | TlsMode::Require => {
                verify::any_certificate(provider)
            }
            mode @ (TlsMode::VerifyCa | TlsMode::VerifyFull) => {
                let name = mode == TlsMode::VerifyFull;
                verify::chain(self.roots()?, self.given_roots()?, provider, name)?
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match (&self.cert, &self.key) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(key)) => builder
                .with_client_auth_cert(certificates(cert)?, private_key(key)?)
                .map_err(|e| {
                    bad(format!(
                        "{}={} and {}={} do not make a client certificate: {e}",
                        cert.setting,
                        cert.path.display(),
                        key.setting,
                        key.path.display()
                    ))
                })?,
            (Some(file), None) | (None, Some(file)) => {
                let other = if self.cert.is_some() {
                    "key"
                } else {
                    "certificate"
                };
                return Err(bad(format!(
                    "{}={} is given without the client {other} that goes with it",
                    file.setting,
                    file.path.display()
                )));
            }
        };
        Ok(config)
    }

    /// The certificates the CA file holds (none where none is given).
    fn given_roots(&self) -> Result<Vec<CertificateDer<'static>>, DbError> {
        self.ca.as_ref().map_or(Ok(Vec::new()), certificates)
    }

    /// The CA's certificates, else the system's.
    fn roots(&self) -> Result<rustls::RootCertStore, DbError> {
        let mut roots = rustls::RootCertStore::empty();
        match &self.ca {
            Some(ca) => {
                for cert in certificates(ca)? {
                    roots.add(cert).map_err(|e| {
                        bad(format!(
                            "{}={} holds a certificate that is not a CA's: {e}",
                            ca.setting,
                            ca.path.display()
                        ))
                    })?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                for cert in found.certs {
                    let _ = roots.add(cert);
                }
                if roots.is_empty() {
                    return Err(bad(format!(
                        "{} checks the server's certificate, but no CA is given and the system has none",
                        self.mode_source
                    )));
                }
            }
        }
        Ok(roots)
    }
}

/// The one cryptographic provider every TLS connection of hatshop's uses.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// The certificates of a PEM file; none, or a file that cannot be read, is one line.
pub fn certificates(file: &NamedFile) -> Result<Vec<CertificateDer<'static>>, DbError> {
    let named = |what: String| bad(format!("{}={}: {what}", file.setting, file.path.display()));
    let bytes = read_file(file)?;
    let read = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| named(pem_error(&e)))?;
    if read.is_empty() {
        return Err(named("holds no PEM certificate".into()));
    }
    Ok(read)
}

/// A certificate or key file's bytes, read as a regular file of bounded size.
fn read_file(file: &NamedFile) -> Result<Vec<u8>, DbError> {
    crate::files::read_bounded(&file.path, crate::files::SETTINGS_FILE_LIMIT).map_err(|e| {
        bad(format!(
            "{}={}: {}",
            file.setting,
            file.path.display(),
            io_words(&e)
        ))
    })
}

fn private_key(file: &NamedFile) -> Result<PrivateKeyDer<'static>, DbError> {
    PrivateKeyDer::from_pem_slice(&read_file(file)?).map_err(|e| {
        bad(format!(
            "{}={}: {}",
            file.setting,
            file.path.display(),
            match e {
                rustls::pki_types::pem::Error::NoItemsFound => "holds no PEM private key".into(),
                e => pem_error(&e),
            }
        ))
    })
}

fn pem_error(error: &rustls::pki_types::pem::Error) -> String {
    match error {
        rustls::pki_types::pem::Error::Io(io) => io_words(io),
        other => format!("is not PEM that can be read ({other})"),
    }
}

/// "no such file", "permission denied": the OS's words without its error number.
fn io_words(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => error.to_string(),
    }
}

/// A TLS setting that cannot be used: nothing was sent anywhere.
fn bad(message: String) -> DbError {
    DbError::new(ErrorKind::Connection, message)
}

/// The file a setting names, relative paths as the user meant them (from the
/// working directory), `~/` from the home folder as the stores' own tools read it.
pub fn named_file(setting: &'static str, path: &str) -> NamedFile {
    let path = match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    };
    NamedFile { setting, path }
}

/// Whether a setting's name is one of the TLS settings any store takes.
pub fn is_tls_setting(name: &str) -> bool {
    name == crate::db::TLS_SWITCH
        || name.starts_with("ssl")
        || ["cacert", "cert", "key", "insecure"].contains(&name)
}

/// The CA and client files as MySQL's tools and latte name them (`--ssl-ca`,
/// `--ssl-cert`, `--ssl-key`), shared by the stores that take them.
pub const FILE_SETTINGS: [Setting; 3] = [
    Setting {
        name: "ssl_ca",
        value: Value::Text("PATH"),
        default: "",
        help: "the CA that signs the server's certificate, PEM (mysql --ssl-ca, latte --ssl-ca)",
    },
    Setting {
        name: "ssl_cert",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's certificate, PEM, for a server that asks for one",
    },
    Setting {
        name: "ssl_key",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's private key, PEM",
    },
];
