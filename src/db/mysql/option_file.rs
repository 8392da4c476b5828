//! Where MySQL's and MariaDB's clients find a login, read the same way: the URL
//! first, then the `[client]` group of `~/.my.cnf` (user, password, ssl-mode, ssl-ca,
//! ssl-cert, ssl-key; `-` or `_`, values quoted or not), then MYSQL_PWD for the
//! password. A world-writable option file is passed over with a line, as the clients
//! do.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::db::login::{Login, in_url};
use crate::db::tls::{NamedFile, TlsMode, TlsSettings, named_file};
use crate::db::{DbError, ErrorKind, NetworkParts, Setting, Settings, Value};

/// ssl-mode as a URL key and flag (`ssl-mode` or `ssl_mode` in the URL).
pub const SSL_MODE: Setting = Setting {
    name: "ssl_mode",
    value: Value::Choice(&[
        "DISABLED",
        "PREFERRED",
        "REQUIRED",
        "VERIFY_CA",
        "VERIFY_IDENTITY",
    ]),
    default: "",
    help: "TLS, as MySQL's --ssl-mode: DISABLED, PREFERRED (TLS where the server offers it), REQUIRED, VERIFY_CA (the certificate signed by ssl-ca's CA), VERIFY_IDENTITY (and made out to the host) [default: ~/.my.cnf's ssl-mode, else PREFERRED]",
};

/// The login for `address`, read as MySQL's clients read it; `home` and `env` are
/// the process's (a test gives its own).
pub fn login(
    address: &NetworkParts,
    settings: &Settings,
    home: Option<&Path>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Login, DbError> {
    let file = home
        .map(|home| home.join(".my.cnf"))
        .and_then(|path| client_group(&path).map(|group| (path, group)));
    let from_file = |key: &str| file.as_ref().and_then(|(_, group)| group.get(key).cloned());
    let file_name = file
        .as_ref()
        .map(|(path, _)| format!("{} [client]", path.display()));
    let user = address
        .user
        .clone()
        .or_else(|| from_file("user"))
        .unwrap_or_else(|| "root".into());
    let found = in_url(address)
        .or_else(|| Some((from_file("password")?, file_name.clone()?)))
        .or_else(|| {
            let password = env("MYSQL_PWD").filter(|p| !p.is_empty())?;
            Some((password, "MYSQL_PWD".to_string()))
        });
    Ok(Login::new(
        user,
        found,
        tls_of(settings, &from_file, file_name)?,
    ))
}

/// ssl-mode and its files: the URL or flag, else the option file's `[client]`.
fn tls_of(
    settings: &Settings,
    from_file: &dyn Fn(&str) -> Option<String>,
    file_name: Option<String>,
) -> Result<TlsSettings, DbError> {
    let (mode_word, mode_source) = match settings.given_text("ssl_mode") {
        Some(mode) => (mode.to_ascii_uppercase(), format!("ssl-mode={mode}")),
        None => match from_file("ssl_mode") {
            Some(mode) => (
                mode.to_ascii_uppercase(),
                format!(
                    "ssl-mode={mode} in {}",
                    file_name.clone().unwrap_or_default()
                ),
            ),
            None => ("PREFERRED".into(), "ssl-mode=PREFERRED".into()),
        },
    };
    let mode = match mode_word.as_str() {
        "DISABLED" => TlsMode::Disable,
        "PREFERRED" => TlsMode::Prefer,
        "REQUIRED" => TlsMode::Require,
        "VERIFY_CA" => TlsMode::VerifyCa,
        "VERIFY_IDENTITY" => TlsMode::VerifyFull,
        _ => {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "{mode_source}: expected one of DISABLED, PREFERRED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY"
                ),
            ));
        }
    };
    let file_setting = |name: &'static str| -> Option<NamedFile> {
        let path = settings
            .given_text(name)
            .map(str::to_string)
            .or_else(|| from_file(name))?;
        Some(named_file(name, &path))
    };
    Ok(TlsSettings {
        mode,
        mode_source,
        // PREFERRED never checks the certificate, as MySQL's client.
        ca: file_setting("ssl_ca").filter(|_| mode.required()),
        cert: file_setting("ssl_cert"),
        key: file_setting("ssl_key"),
    })
}

/// The `[client]` group of an option file, keys with `_` for `-`; `None` where there
/// is no file, or one the clients would not read.
fn client_group(path: &Path) -> Option<BTreeMap<String, String>> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if meta.permissions().mode() & 0o002 != 0 {
        crate::console::note!(
            "warning: world-writable option file {} is ignored, as MySQL's clients ignore it",
            path.display()
        );
        return None;
    }
    let text = crate::files::read_settings_file(path)?;
    Some(parse_client_group(&text))
}

/// `[client]`'s `key = value` lines.
fn parse_client_group(text: &str) -> BTreeMap<String, String> {
    let mut group = BTreeMap::new();
    let mut in_client = false;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';', '!']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_client = name.trim().eq_ignore_ascii_case("client");
            continue;
        }
        if !in_client {
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or((line, ""));
        let key = key.trim().replace('-', "_").to_ascii_lowercase();
        group.insert(key, unquoted(value.trim()));
    }
    group
}

/// A value with its quotes taken off and their escapes read.
fn unquoted(value: &str) -> String {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            let mut out = String::new();
            let mut chars = inner.chars();
            while let Some(c) = chars.next() {
                match (c, chars.clone().next()) {
                    ('\\', Some(next)) => {
                        chars.next();
                        out.push(match next {
                            'n' => '\n',
                            't' => '\t',
                            other => other,
                        });
                    }
                    (c, _) => out.push(c),
                }
            }
            return out;
        }
    }
    // Unquoted, a `#` starts a comment.
    value.split(" #").next().unwrap_or(value).trim().to_string()
}

/// Where the process's home is.
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(user: Option<&str>, password: Option<&str>) -> NetworkParts {
        NetworkParts::local(3306, user, password)
    }

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        crate::db::settings::given_with_tls_files("mysql", &[SSL_MODE], pairs)
    }

    #[test]
    fn the_client_group_is_read_as_the_clients_read_it() {
        let group = parse_client_group(
            "[mysqld]\npassword=server\n[client]\nuser = bench\npassword=\"p#ss \\\"x\\\"\"\nssl-mode=VERIFY_CA # checked\nssl_ca='/ca.pem'\n[mysql]\nuser=other\n",
        );
        assert_eq!(group["user"], "bench");
        assert_eq!(group["password"], "p#ss \"x\"");
        assert_eq!(group["ssl_mode"], "VERIFY_CA");
        assert_eq!(group["ssl_ca"], "/ca.pem");
    }

    #[test]
    fn the_url_then_my_cnf_then_mysql_pwd() {
        let home = tempfile::tempdir().unwrap();
        let env = |name: &str| (name == "MYSQL_PWD").then(|| "from-env".to_string());
        let none = settings(&[]);
        let login_with =
            |address: &NetworkParts| login(address, &none, Some(home.path()), env).unwrap();
        let plain = login_with(&address(None, None));
        assert_eq!(plain.user, "root");
        assert_eq!(plain.password.as_deref(), Some("from-env"));
        assert_eq!(plain.tls.mode, TlsMode::Prefer);
        std::fs::write(
            home.path().join(".my.cnf"),
            "[client]\nuser=bench\npassword=from-file\nssl-mode=REQUIRED\n",
        )
        .unwrap();
        let filed = login_with(&address(None, None));
        assert_eq!(filed.user, "bench");
        assert_eq!(filed.password.as_deref(), Some("from-file"));
        assert!(filed.password_from.unwrap().ends_with(".my.cnf [client]"));
        assert_eq!(filed.tls.mode, TlsMode::Require);
        let given = login_with(&address(Some("u"), Some("url")));
        assert_eq!(
            (given.user.as_str(), given.password.as_deref()),
            ("u", Some("url"))
        );
        let flagged = login(
            &address(None, None),
            &settings(&[("ssl_mode", "disabled")]),
            Some(home.path()),
            env,
        )
        .unwrap();
        assert_eq!(flagged.tls.mode, TlsMode::Disable);
    }

    #[test]
    fn a_world_writable_option_file_is_not_read() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".my.cnf");
        std::fs::write(&path, "[client]\npassword=anyone\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let read = login(
            &address(None, None),
            &settings(&[]),
            Some(home.path()),
            |_| None,
        )
        .unwrap();
        assert_eq!(read.password, None);
    }
}
