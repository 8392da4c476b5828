//! A TLS failure as one line that says what failed and where to look: the CA that did
//! not sign, the date a certificate expired, the name it was made out to, a port that
//! does not speak TLS.

use std::time::{Duration, UNIX_EPOCH};

use rustls::pki_types::UnixTime;
use rustls::{AlertDescription, CertificateError, Error};

use super::Tls;
use crate::db::{DbError, ErrorKind};

/// A failed handshake or certificate as one line.
pub fn describe(error: &Error, tls: &Tls) -> DbError {
    let why = match error {
        Error::InvalidCertificate(certificate) => certificate_words(certificate, tls),
        Error::AlertReceived(alert) => alert_words(*alert),
        Error::InvalidMessage(_) | Error::InappropriateMessage { .. } => {
            "the server did not answer in TLS (is this a port without TLS?)".into()
        }
        Error::NoCertificatesPresented => "the server sent no certificate".into(),
        other => other.to_string(),
    };
    failed(tls, why)
}

/// A driver's error as one line: the TLS failure in its chain of causes, said as
/// [`describe`] says it, else the driver's own words.
pub fn explain(error: &(dyn std::error::Error + 'static), tls: &Tls) -> DbError {
    match tls_error_in(error) {
        Some(tls_error) => describe(tls_error, tls),
        None => DbError::new(ErrorKind::Connection, error.to_string()),
    }
}

/// The TLS error in an error's chain of causes (I/O errors that carry one included).
pub fn tls_error_in<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a Error> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(tls_error) = e.downcast_ref::<Error>() {
            return Some(tls_error);
        }
        let inner = e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
            .and_then(|inner| inner.downcast_ref::<Error>());
        if inner.is_some() {
            return inner;
        }
        current = e.source();
    }
    None
}

/// A socket that failed during the handshake.
pub fn io_failed(error: &std::io::Error, tls: &Tls) -> DbError {
    let kind = crate::db::classify::io_kind(error);
    DbError::new(kind, format!("TLS to {} failed: {error}", tls.target))
}

/// The server said it speaks no TLS (`what`: how it said so) where the mode needs it.
pub fn server_refused(tls: &Tls, what: &str) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!(
            "{} does not speak TLS ({what}), and {} asks for it",
            tls.target, tls.mode_source
        ),
    )
}

fn failed(tls: &Tls, why: String) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!("TLS to {} failed: {why}", tls.target),
    )
}

fn certificate_words(error: &CertificateError, tls: &Tls) -> String {
    let signer = match &tls.ca {
        Some(ca) => format!("the CA in {}={}", ca.setting, ca.path.display()),
        None => "any CA this system trusts".into(),
    };
    match error {
        CertificateError::UnknownIssuer => {
            format!("the server's certificate is not signed by {signer}")
        }
        CertificateError::BadSignature => {
            format!("the server's certificate has a signature {signer} did not make")
        }
        CertificateError::Expired => "the server's certificate has expired".into(),
        CertificateError::ExpiredContext { time, not_after } => format!(
            "the server's certificate expired at {} (now {})",
            date(*not_after),
            date(*time)
        ),
        CertificateError::NotValidYet => "the server's certificate is not valid yet".into(),
        CertificateError::NotValidYetContext { time, not_before } => format!(
            "the server's certificate is valid only from {} (now {})",
            date(*not_before),
            date(*time)
        ),
        CertificateError::NotValidForName => format!(
            "the server's certificate is not made out to {} ({} checks the name)",
            name_of(tls),
            tls.mode_source
        ),
        CertificateError::NotValidForNameContext { presented, .. } => format!(
            "the server's certificate is made out to {}, not {} ({} checks the name)",
            if presented.is_empty() {
                "no name".into()
            } else {
                presented
                    .iter()
                    .map(|name| plain_name(name))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
            name_of(tls),
            tls.mode_source
        ),
        other => format!("the server's certificate was refused ({other:?})"),
    }
}

/// A name as rustls shows it (`DnsName("db.example.com")`), without its wrapping.
/// A name rustls presents (`DnsName("db.example")`, `IpAddress(127.0.0.1)`) as the
/// name alone.
fn plain_name(shown: &str) -> &str {
    match (shown.find('"'), shown.rfind('"'), shown.find('(')) {
        (Some(open), Some(close), _) if close > open => &shown[open + 1..close],
        (_, _, Some(open)) if shown.ends_with(')') => &shown[open + 1..shown.len() - 1],
        _ => shown,
    }
}

fn name_of(tls: &Tls) -> String {
    tls.server_name.to_str().into_owned()
}

fn alert_words(alert: AlertDescription) -> String {
    match alert {
        AlertDescription::CertificateRequired => {
            "the server wants a client certificate and key, and none was given".into()
        }
        AlertDescription::BadCertificate
        | AlertDescription::UnknownCA
        | AlertDescription::CertificateUnknown
        | AlertDescription::DecryptError => {
            format!("the server refused the client certificate ({alert:?})")
        }
        AlertDescription::ProtocolVersion | AlertDescription::HandshakeFailure => format!(
            "the server and hatshop share no TLS version or cipher (TLS 1.2 and 1.3 offered; alert {alert:?})"
        ),
        other => format!("the server ended the handshake ({other:?})"),
    }
}

/// A certificate's time as `2026-11-29 06:00:00 UTC`.
fn date(at: UnixTime) -> String {
    let stamp = crate::stamp::rfc3339(UNIX_EPOCH + Duration::from_secs(at.as_secs()));
    let second = stamp.get(..19).unwrap_or(&stamp);
    format!("{} UTC", second.replace('T', " "))
}

#[cfg(test)]
mod tests {
    use super::plain_name;

    #[test]
    fn a_presented_name_is_said_without_its_kind() {
        assert_eq!(plain_name("DnsName(\"db.example\")"), "db.example");
        assert_eq!(plain_name("IpAddress(127.0.0.1)"), "127.0.0.1");
        assert_eq!(plain_name("localhost"), "localhost");
    }
}
