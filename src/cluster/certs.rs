//! TLS for a local server (`hatshop server start NAME --tls`): a CA of the server's
//! own, made in its folder, and a certificate it signs for the addresses the nodes
//! listen on (and `localhost`), so that a client can check the whole chain and the
//! name (`verify-full`) with the CA alone.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType,
};

/// The files of a server's TLS, in its folder's `tls/`.
#[derive(Debug, Clone)]
pub struct ServerCerts {
    /// The CA a client checks the server against; its key (`ca.key`) is kept beside
    /// it, to sign a client certificate where a client wants one (sysbench's TLS
    /// always presents one).
    pub ca: PathBuf,
    /// The server's certificate and its private key (PEM, PKCS#8).
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The key and the certificate in one PEM file, as Cassandra's PEM keystore takes them.
    pub key_and_cert: PathBuf,
}

/// The server's TLS files in `dir/tls`: made now for `hosts`, or the ones made at an
/// earlier start (a restarted node keeps its certificate, and clients their CA).
pub fn server_certs(dir: &Path, hosts: &[&str]) -> Result<ServerCerts> {
    let tls = dir.join("tls");
    let certs = ServerCerts {
        ca: tls.join("ca.pem"),
        cert: tls.join("server.pem"),
        key: tls.join("server.key"),
        key_and_cert: tls.join("server-key-and-cert.pem"),
    };
    if certs.ca.is_file() && certs.cert.is_file() && certs.key.is_file() {
        return Ok(certs);
    }
    std::fs::create_dir_all(&tls).with_context(|| format!("cannot create {}", tls.display()))?;
    let made = make(hosts).context("cannot make the server's TLS certificates")?;
    write(&certs.ca, &made.ca, 0o644)?;
    write(&tls.join("ca.key"), &made.ca_key, 0o600)?;
    write(&certs.cert, &made.cert, 0o644)?;
    write(&certs.key, &made.key, 0o600)?;
    write(
        &certs.key_and_cert,
        &format!("{}{}", made.key, made.cert),
        0o600,
    )?;
    Ok(certs)
}

/// PEM texts of a new CA, and a server certificate it signed, with its key.
struct Made {
    ca: String,
    ca_key: String,
    cert: String,
    key: String,
}

fn make(hosts: &[&str]) -> std::result::Result<Made, rcgen::Error> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "hatshop local server CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key)?;
    let ca_key_pem = ca_key.serialize_pem();
    let issuer = Issuer::new(ca, ca_key);
    let server_key = KeyPair::generate()?;
    let mut server = CertificateParams::new(vec!["localhost".to_string()])?;
    server.distinguished_name.push(
        DnType::CommonName,
        hosts.first().copied().unwrap_or("localhost"),
    );
    for host in hosts {
        match host.parse::<IpAddr>() {
            Ok(ip) => server.subject_alt_names.push(SanType::IpAddress(ip)),
            Err(_) => server
                .subject_alt_names
                .push(SanType::DnsName((*host).try_into()?)),
        }
    }
    let server_cert = server.signed_by(&server_key, &issuer)?;
    Ok(Made {
        ca: ca_cert.pem(),
        ca_key: ca_key_pem,
        cert: server_cert.pem(),
        key: server_key.serialize_pem(),
    })
}

fn write(path: &Path, text: &str, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_certificates_are_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = server_certs(dir.path(), &["127.0.0.1", "127.0.0.12"]).unwrap();
        let ca = std::fs::read_to_string(&first.ca).unwrap();
        assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(
            std::fs::read_to_string(&first.key)
                .unwrap()
                .contains("PRIVATE KEY")
        );
        let again = server_certs(dir.path(), &["127.0.0.1"]).unwrap();
        assert_eq!(std::fs::read_to_string(&again.ca).unwrap(), ca);
    }
}
