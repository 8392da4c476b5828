//! Where Cassandra's tools find a login, read the same way: the URL first, then
//! cqlsh's `cqlshrc` ($CQLSH_RC, else `~/.cassandra/cqlshrc`): `[authentication]`
//! username and password (or the `credentials` file it names, whose
//! `[PlainTextAuthProvider]` holds them), `[connection] ssl`, and `[ssl]` certfile,
//! validate, usercert and userkey. TLS is latte's and cassandra-stress's `ssl`, with
//! the CA and client files (`ssl_ca`, `ssl_cert`, `ssl_key`) and how much to check.

use std::path::PathBuf;

use crate::db::ini::{self, Sections};
use crate::db::login::{Login, in_url};
use crate::db::tls::{NamedFile, TlsMode, TlsSettings, named_file};
use crate::db::{DbError, NetworkParts, Setting, Settings, Value};

/// TLS, as latte's `--ssl` and cqlsh's `--ssl` say it.
pub const SSL: Setting = Setting {
    name: "ssl",
    value: Value::Switch,
    default: "false",
    help: "TLS to every node (latte --ssl, cqlsh --ssl) [default: cqlshrc's [connection] ssl]",
};

/// How much of the nodes' certificates is checked.
pub const SSL_VERIFY: Setting = Setting {
    name: "ssl_verify",
    value: Value::Choice(&["none", "ca", "full"]),
    default: "",
    help: "with ssl: none (latte's default), ca (signed by ssl_ca's CA: cqlsh's validate) or full (and made out to the node's address) [default: ca where a CA is given, else none]",
};

/// The login for `address`, read as cqlsh reads it.
pub fn login(
    address: &NetworkParts,
    settings: &Settings,
    cqlshrc: Option<PathBuf>,
) -> Result<Login<Option<String>>, DbError> {
    let rc = Rc::read(cqlshrc);
    // A credentials file, as cqlsh 4.1 and later keep the password apart.
    let credentials = rc.get("authentication", "credentials").and_then(|path| {
        let path = named_file("credentials", &path).path;
        let text = crate::files::read_settings_file(&path)?;
        let section = sections(&text).remove("plaintextauthprovider")?;
        Some((path, section))
    });
    let user = address
        .user
        .clone()
        .or_else(|| rc.get("authentication", "username"))
        .or_else(|| credentials.as_ref()?.1.get("username").cloned());
    let in_credentials = credentials.as_ref().and_then(|(path, section)| {
        let password = section.get("password")?.clone();
        Some((
            password,
            format!("{} [PlainTextAuthProvider]", path.display()),
        ))
    });
    let found = in_url(address).or(in_credentials).or_else(|| {
        Some((
            rc.get("authentication", "password")?,
            rc.name("authentication")?,
        ))
    });
    Ok(Login::new(user, found, tls_of(settings, &rc)))
}

/// cqlshrc as read: its path and its sections, when there is one to read.
struct Rc(Option<(PathBuf, Sections)>);

impl Rc {
    fn read(path: Option<PathBuf>) -> Rc {
        Rc(path.and_then(|path| {
            let text = crate::files::read_settings_file(&path)?;
            Some((path, sections(&text)))
        }))
    }

    fn get(&self, section: &str, key: &str) -> Option<String> {
        self.0.as_ref()?.1.get(section)?.get(key).cloned()
    }

    /// `/root/.cassandra/cqlshrc [authentication]`.
    fn name(&self, section: &str) -> Option<String> {
        self.0
            .as_ref()
            .map(|(path, _)| format!("{} [{section}]", path.display()))
    }
}

/// Whether and how TLS is spoken: the `ssl*` settings, else cqlshrc's `[connection]`
/// and `[ssl]`.
fn tls_of(settings: &Settings, rc: &Rc) -> TlsSettings {
    let truthy = |v: Option<String>| {
        v.is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "yes" | "1" | "on"))
    };
    let ssl = match settings.given_text(SSL.name) {
        Some(on) => on == "true",
        None => truthy(rc.get("connection", "ssl")),
    };
    if !ssl {
        return TlsSettings::disabled();
    }
    let file = |name: &'static str, rc_key: &str| -> Option<NamedFile> {
        let path = settings
            .given_text(name)
            .map(str::to_string)
            .or_else(|| rc.get("ssl", rc_key))?;
        Some(named_file(name, &path))
    };
    let ca = file("ssl_ca", "certfile");
    let validate = rc.get("ssl", "validate").map(|v| truthy(Some(v)));
    let (mode, mode_source) = match settings.given_text(SSL_VERIFY.name) {
        Some("full") => (TlsMode::VerifyFull, "ssl_verify=full".to_string()),
        Some("ca") => (TlsMode::VerifyCa, "ssl_verify=ca".to_string()),
        Some(_) => (TlsMode::Require, "ssl_verify=none".to_string()),
        None if ca.is_some() && validate != Some(false) => {
            (TlsMode::VerifyCa, "ssl with ssl_ca".to_string())
        }
        None => (TlsMode::Require, "ssl".to_string()),
    };
    TlsSettings {
        mode,
        mode_source,
        ca: ca.filter(|_| mode != TlsMode::Require),
        cert: file("ssl_cert", "usercert"),
        key: file("ssl_key", "userkey"),
    }
}

/// cqlsh's file: $CQLSH_RC, else `~/.cassandra/cqlshrc`.
pub fn cqlshrc() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("CQLSH_RC") {
        return Some(PathBuf::from(path));
    }
    Some(PathBuf::from(std::env::var_os("HOME")?).join(".cassandra/cqlshrc"))
}

/// cqlshrc's sections, as Python's configparser reads them: names in lower case, `=`
/// or `:` after a key.
fn sections(text: &str) -> Sections {
    ini::sections(
        text,
        ini::Dialect {
            separators: &['=', ':'],
            fold_case: true,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        crate::db::settings::given_with_tls_files("cassandra", &[SSL, SSL_VERIFY], pairs)
    }

    fn address(user: Option<&str>, password: Option<&str>) -> NetworkParts {
        NetworkParts::local(9042, user, password)
    }

    #[test]
    fn cqlshrc_gives_the_login_and_tls_the_url_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let credentials = dir.path().join("credentials");
        std::fs::write(
            &credentials,
            "[PlainTextAuthProvider]\nusername = bench\npassword = apart\n",
        )
        .unwrap();
        let rc = dir.path().join("cqlshrc");
        std::fs::write(
            &rc,
            "[authentication]\nusername = bench\npassword = inline\n[connection]\nssl = true\n[ssl]\ncertfile = /ca.pem\nvalidate = true\n",
        )
        .unwrap();
        let login_of = |address: &NetworkParts, pairs: &[(&str, &str)]| {
            login(address, &settings(pairs), Some(rc.clone())).unwrap()
        };
        let from_rc = login_of(&address(None, None), &[]);
        assert_eq!(from_rc.user.as_deref(), Some("bench"));
        assert_eq!(from_rc.password.as_deref(), Some("inline"));
        assert!(
            from_rc
                .password_from
                .unwrap()
                .ends_with("cqlshrc [authentication]")
        );
        assert_eq!(from_rc.tls.mode, TlsMode::VerifyCa);
        assert_eq!(from_rc.tls.ca.unwrap().path, PathBuf::from("/ca.pem"));
        let url = login_of(&address(Some("u"), Some("p")), &[("ssl", "false")]);
        assert_eq!(
            (url.user.as_deref(), url.password.as_deref()),
            (Some("u"), Some("p"))
        );
        assert_eq!(url.tls.mode, TlsMode::Disable);
        std::fs::write(
            &rc,
            format!(
                "[authentication]\ncredentials = {}\n",
                credentials.display()
            ),
        )
        .unwrap();
        let apart = login_of(
            &address(None, None),
            &[("ssl", "true"), ("ssl_verify", "full")],
        );
        assert_eq!(apart.password.as_deref(), Some("apart"));
        assert_eq!(apart.tls.mode, TlsMode::VerifyFull);
    }
}
