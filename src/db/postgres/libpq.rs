//! Where libpq finds what a login needs, read the same way: the URL first, then the
//! connection service it names (`service=`, else PGSERVICE: service.rs), then the `PG*`
//! variables (PGUSER, PGPASSWORD, PGSSLMODE, PGSSLROOTCERT, PGSSLCERT, PGSSLKEY), then
//! the password file (PGPASSFILE, else `~/.pgpass`: pgpass.rs) and the files under
//! `~/.postgresql/` (root.crt, postgresql.crt and .key) where they exist.

pub use super::environment::{Environment, ProcessEnvironment};
use super::pgpass::password_file;
use super::service::{Service, service};
use crate::db::login::{Login, in_url};
use crate::db::tls::{NamedFile, TlsMode, TlsSettings, named_file};
use crate::db::{DbError, ErrorKind, NetworkParts, Setting, Settings, Value};

/// libpq's service and TLS settings, as URL keys and flags.
pub const SETTINGS: [Setting; 5] = [
    Setting {
        name: "service",
        value: Value::Text("NAME"),
        default: "",
        help: "a section of libpq's connection service file (PGSERVICEFILE, else ~/.pg_service.conf, else pg_service.conf in PGSYSCONFDIR) whose user, password, dbname and ssl* stand where the URL gives none; its host and port are not used, the URL names them [default: $PGSERVICE]",
    },
    Setting {
        name: "sslmode",
        value: Value::Choice(&["disable", "prefer", "require", "verify-ca", "verify-full"]),
        default: "",
        help: "TLS, as libpq's sslmode: disable, prefer (TLS where the server offers it), require, verify-ca (the certificate signed by sslrootcert's CA), verify-full (and made out to the host) [default: $PGSSLMODE, else prefer]",
    },
    Setting {
        name: "sslrootcert",
        value: Value::Text("PATH"),
        default: "",
        help: "the CA that signs the server's certificate, PEM [default: $PGSSLROOTCERT, else ~/.postgresql/root.crt where it exists]",
    },
    Setting {
        name: "sslcert",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's certificate, PEM [default: $PGSSLCERT, else ~/.postgresql/postgresql.crt where it exists]",
    },
    Setting {
        name: "sslkey",
        value: Value::Text("PATH"),
        default: "",
        help: "the client's private key, PEM [default: $PGSSLKEY, else ~/.postgresql/postgresql.key where it exists]",
    },
];

/// Who logs in, with what, and how, and to which database.
pub struct PgLogin {
    pub login: Login,
    pub database: String,
}

/// The login for `address`'s first host, read as libpq reads it.
pub fn login(
    address: &NetworkParts,
    settings: &Settings,
    env: &impl Environment,
) -> Result<PgLogin, DbError> {
    let service = service(settings, env)?;
    let from_service = |key: &str| service.as_ref().and_then(|s| s.get(key));
    let user = address
        .user
        .clone()
        .or_else(|| from_service("user"))
        .or_else(|| env.var("PGUSER"))
        .unwrap_or_else(|| "postgres".into());
    let database = address
        .name
        .clone()
        .or_else(|| from_service("dbname"))
        .unwrap_or_else(|| "hatshop".into());
    let (host, port) = &address.hosts[0];
    let in_service = service
        .as_ref()
        .and_then(|s| Some((s.get("password")?, s.from.clone())));
    let before_the_file = in_url(address)
        .or(in_service)
        .or_else(|| Some((env.var("PGPASSWORD")?, "PGPASSWORD".to_string())));
    let found = match before_the_file {
        Some(found) => Some(found),
        None => password_file(env, host, *port, &database, &user)?,
    };
    let tls = tls_settings(settings, service.as_ref(), env)?;
    Ok(PgLogin {
        login: Login::new(user, found, tls),
        database,
    })
}

/// sslmode and its files: the URL or flag, else the service, else the variable, else
/// the default file.
fn tls_settings(
    settings: &Settings,
    service: Option<&Service>,
    env: &impl Environment,
) -> Result<TlsSettings, DbError> {
    let from_service = |key: &str| service.and_then(|s| s.get(key));
    let root = settings
        .given_text("sslrootcert")
        .map(str::to_string)
        .or_else(|| from_service("sslrootcert"))
        .or_else(|| env.var("PGSSLROOTCERT"));
    // libpq 16's `sslrootcert=system`: the system's CAs, and verify-full by default.
    let system = root.as_deref() == Some("system");
    let (mode, mode_source) = mode_of(settings, service, env, system)?;
    let given = |setting: &'static str, variable: &str| {
        let path = settings
            .given_text(setting)
            .map(str::to_string)
            .or_else(|| from_service(setting))
            .or_else(|| env.var(variable))?;
        Some(named_file(setting, &path))
    };
    let default = |setting: &'static str, name: &str| {
        let path = env.home()?.join(".postgresql").join(name);
        path.is_file().then_some(NamedFile { setting, path })
    };
    let ca = match system {
        true => None,
        false => {
            given("sslrootcert", "PGSSLROOTCERT").or_else(|| default("sslrootcert", "root.crt"))
        }
    };
    check_root(mode, &mode_source, system, ca.is_some(), env)?;
    // libpq takes its default client files only as a pair.
    let (cert, key) = match (given("sslcert", "PGSSLCERT"), given("sslkey", "PGSSLKEY")) {
        (None, None) => match (
            default("sslcert", "postgresql.crt"),
            default("sslkey", "postgresql.key"),
        ) {
            (Some(cert), Some(key)) => (Some(cert), Some(key)),
            _ => (None, None),
        },
        pair => pair,
    };
    if let Some(key) = &key {
        check_key_private(key)?;
    }
    // prefer never checks the certificate, whatever CA there is.
    Ok(TlsSettings {
        mode,
        mode_source,
        ca: ca.filter(|_| mode.required()),
        cert,
        key,
    })
}

/// sslmode, and where it was said: the URL or flag, else the service, else PGSSLMODE,
/// else verify-full where the system's CAs were asked for, else prefer.
fn mode_of(
    settings: &Settings,
    service: Option<&Service>,
    env: &impl Environment,
    system: bool,
) -> Result<(TlsMode, String), DbError> {
    let in_service = service.and_then(|s| Some((s.get("sslmode")?, s.from.clone())));
    let (mode_word, mode_source) = match (settings.given_text("sslmode"), in_service) {
        (Some(mode), _) => (mode.to_ascii_lowercase(), format!("sslmode={mode}")),
        (None, Some((mode, from))) => (
            mode.to_ascii_lowercase(),
            format!("sslmode={mode} ({from})"),
        ),
        (None, None) => match env.var("PGSSLMODE") {
            Some(mode) => (mode.to_ascii_lowercase(), format!("PGSSLMODE={mode}")),
            None if system => ("verify-full".into(), "sslrootcert=system".into()),
            None => ("prefer".into(), "sslmode=prefer".into()),
        },
    };
    let mode = match mode_word.as_str() {
        "disable" => TlsMode::Disable,
        "prefer" => TlsMode::Prefer,
        "require" => TlsMode::Require,
        "verify-ca" => TlsMode::VerifyCa,
        "verify-full" => TlsMode::VerifyFull,
        _ => {
            return Err(DbError::new(
                ErrorKind::Other,
                format!(
                    "{mode_source}: expected one of disable, prefer, require, verify-ca, verify-full"
                ),
            ));
        }
    };
    Ok((mode, mode_source))
}

/// A client key others may read is refused, as libpq refuses it: at most u=rw (0600),
/// or u=rw,g=r (0640) where root owns it.
fn check_key_private(key: &NamedFile) -> Result<(), DbError> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(meta) = std::fs::metadata(&key.path) else {
        // One that cannot be read is said where it is read.
        return Ok(());
    };
    let mode = meta.permissions().mode();
    let allowed = if meta.uid() == 0 { 0o037 } else { 0o077 };
    if meta.is_file() && mode & allowed != 0 {
        return Err(DbError::new(
            ErrorKind::Other,
            format!(
                "{}={} has group or world access ({:o}): it must be u=rw (0600) or less, \
                 or u=rw,g=r (0640) or less where root owns it, as libpq asks",
                key.setting,
                key.path.display(),
                mode & 0o777
            ),
        ));
    }
    Ok(())
}

/// A mode that checks the server's certificate needs a root to check it against, as
/// libpq has it: the file given, `~/.postgresql/root.crt`, or the system's CAs asked for
/// by name (`sslrootcert=system`, which libpq allows with verify-full alone); never the
/// system's CAs unasked, which would take a certificate any public CA made out.
fn check_root(
    mode: TlsMode,
    mode_source: &str,
    system: bool,
    has_file: bool,
    env: &impl Environment,
) -> Result<(), DbError> {
    let refuse = |why: String| Err(DbError::new(ErrorKind::Other, why));
    if system && mode != TlsMode::VerifyFull {
        return refuse(format!(
            "sslrootcert=system needs sslmode=verify-full, as libpq has it ({mode_source} given)"
        ));
    }
    if matches!(mode, TlsMode::VerifyCa | TlsMode::VerifyFull) && !system && !has_file {
        let default = env.home().map_or_else(
            || "~/.postgresql/root.crt".to_string(),
            |home| home.join(".postgresql/root.crt").display().to_string(),
        );
        return refuse(format!(
            "{mode_source} checks the server's certificate, but root certificate file \
             {default} does not exist: give sslrootcert=PATH, or sslrootcert=system for the \
             system's CAs, as libpq asks"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::path::{Path, PathBuf};

    use super::*;

    struct Given {
        vars: HashMap<&'static str, String>,
        home: PathBuf,
    }

    impl Environment for Given {
        fn var(&self, name: &str) -> Option<String> {
            self.vars.get(name).cloned()
        }
        fn home(&self) -> Option<PathBuf> {
            Some(self.home.clone())
        }
    }

    fn address(user: Option<&str>, password: Option<&str>) -> NetworkParts {
        NetworkParts {
            name: Some("shop".into()),
            ..NetworkParts::local(5433, user, password)
        }
    }

    fn settings(pairs: &[(&str, &str)]) -> Settings {
        let given: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::checked("postgres", &SETTINGS, given).unwrap()
    }

    fn private_file(path: &Path, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    #[test]
    fn the_url_then_pgpassword_then_the_password_file() {
        let home = tempfile::tempdir().unwrap();
        private_file(
            &home.path().join(".pgpass"),
            "# comment\nother:*:*:*:no\n127.0.0.1:5433:shop:bench:from\\:file\n",
        );
        let mut env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        let none = settings(&[]);
        let login = login(&address(Some("bench"), None), &none, &env).unwrap();
        assert_eq!(login.login.password.as_deref(), Some("from:file"));
        let from = login.login.password_from.unwrap();
        assert!(from.ends_with(".pgpass line 3"), "{from}");
        env.vars.insert("PGPASSWORD", "from-env".into());
        let login = super::login(&address(Some("bench"), None), &none, &env).unwrap();
        assert_eq!(login.login.password.as_deref(), Some("from-env"));
        assert_eq!(login.login.password_from.as_deref(), Some("PGPASSWORD"));
        let login = super::login(&address(Some("bench"), Some("url")), &none, &env).unwrap();
        assert_eq!(login.login.password.as_deref(), Some("url"));
        // PGUSER names the user where the URL does not; another user finds no line.
        env.vars.remove("PGPASSWORD");
        env.vars.insert("PGUSER", "nobody".into());
        let login = super::login(&address(None, None), &none, &env).unwrap();
        assert_eq!(
            (login.login.user.as_str(), login.login.password),
            ("nobody", None)
        );
    }

    #[test]
    fn a_client_key_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let key = home.path().join("client.key");
        std::fs::write(&key, "").unwrap();
        let env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        let with_key = |mode: u32| {
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
            let pairs = [
                ("sslmode", "require"),
                ("sslcert", "/c.pem"),
                ("sslkey", key.to_str().unwrap()),
            ];
            login(&address(None, None), &settings(&pairs), &env)
        };
        let refused = with_key(0o644).err().unwrap();
        assert!(
            refused.message.contains("has group or world access (644)"),
            "{}",
            refused.message
        );
        assert!(with_key(0o600).is_ok());
    }

    /// The password a login to 127.0.0.1 finds in a `.pgpass` of `text` and `mode`
    /// alone (no URL password, no variables).
    fn password_from_pgpass(text: &str, mode: u32) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".pgpass");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        let login = login(&address(None, None), &settings(&[]), &env).unwrap();
        login.login.password
    }

    #[test]
    fn a_password_file_line_for_localhost_is_not_taken_for_127_0_0_1() {
        assert_eq!(
            password_from_pgpass("localhost:*:*:*:socket-only\n", 0o600),
            None
        );
        assert_eq!(
            password_from_pgpass("127.0.0.1:*:*:*:by-address\n", 0o600).as_deref(),
            Some("by-address")
        );
    }

    #[test]
    fn a_password_file_others_can_read_is_not_read() {
        assert_eq!(password_from_pgpass("*:*:*:*:open\n", 0o644), None);
        assert_eq!(
            password_from_pgpass("*:*:*:*:open\n", 0o600).as_deref(),
            Some("open")
        );
    }

    #[test]
    fn sslmode_comes_from_the_url_then_pgsslmode_then_prefer() {
        let home = tempfile::tempdir().unwrap();
        let mut env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        let tls = |env: &Given, pairs: &[(&str, &str)]| {
            login(&address(None, None), &settings(pairs), env)
                .unwrap()
                .login
                .tls
        };
        assert_eq!(tls(&env, &[]).mode, TlsMode::Prefer);
        env.vars.insert("PGSSLMODE", "verify-full".into());
        env.vars.insert("PGSSLROOTCERT", "/ca.pem".into());
        let from_env = tls(&env, &[]);
        assert_eq!(from_env.mode, TlsMode::VerifyFull);
        assert_eq!(from_env.mode_source, "PGSSLMODE=verify-full");
        assert_eq!(from_env.ca.unwrap().path, PathBuf::from("/ca.pem"));
        let given = tls(
            &env,
            &[("sslmode", "require"), ("sslrootcert", "/mine.pem")],
        );
        assert_eq!(given.mode, TlsMode::Require);
        assert_eq!(given.ca.unwrap().path, PathBuf::from("/mine.pem"));
        env.vars.insert("PGSSLMODE", "sometimes".into());
        let bad = login(&address(None, None), &settings(&[]), &env)
            .err()
            .unwrap();
        assert!(
            bad.message.contains("PGSSLMODE=sometimes"),
            "{}",
            bad.message
        );
    }

    #[test]
    fn the_default_files_under_dot_postgresql_are_taken_where_they_exist() {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".postgresql");
        std::fs::create_dir_all(&dir).unwrap();
        let env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        let tls = |pairs: &[(&str, &str)]| {
            login(&address(None, None), &settings(pairs), &env)
                .unwrap()
                .login
                .tls
        };
        // A mode that checks the certificate needs a root, as psql does: "root
        // certificate file … does not exist"; the system's CAs only when asked for.
        for mode in ["verify-ca", "verify-full"] {
            let refused = login(&address(None, None), &settings(&[("sslmode", mode)]), &env)
                .err()
                .unwrap();
            assert!(
                refused
                    .message
                    .contains(".postgresql/root.crt does not exist"),
                "{}",
                refused.message
            );
        }
        let system = tls(&[("sslrootcert", "system")]);
        assert_eq!(
            (system.mode, system.ca.is_none()),
            (TlsMode::VerifyFull, true)
        );
        let weaker = login(
            &address(None, None),
            &settings(&[("sslmode", "verify-ca"), ("sslrootcert", "system")]),
            &env,
        );
        assert!(
            weaker
                .err()
                .unwrap()
                .message
                .contains("needs sslmode=verify-full")
        );
        std::fs::write(dir.join("root.crt"), "").unwrap();
        assert!(tls(&[("sslmode", "verify-ca")]).ca.is_some());
        std::fs::write(dir.join("postgresql.crt"), "").unwrap();
        // A client certificate without its key is not taken.
        assert!(tls(&[("sslmode", "require")]).cert.is_none());
        private_file(&dir.join("postgresql.key"), "");
        let found = tls(&[("sslmode", "require")]);
        assert_eq!(found.ca.unwrap().path, dir.join("root.crt"));
        assert_eq!(found.cert.unwrap().path, dir.join("postgresql.crt"));
        assert_eq!(found.key.unwrap().path, dir.join("postgresql.key"));
        // prefer checks nothing, whatever CA there is.
        assert!(tls(&[]).ca.is_none());
    }

    #[test]
    fn a_service_stands_where_the_url_gives_nothing_as_libpq_reads_it() {
        let home = tempfile::tempdir().unwrap();
        let system = home.path().join("etc");
        std::fs::create_dir_all(&system).unwrap();
        std::fs::write(
            home.path().join(".pg_service.conf"),
            "# mine\n[shop]\nuser=ada\ndbname=orders\npassword=from-service\nsslmode=disable\n",
        )
        .unwrap();
        std::fs::write(
            system.join("pg_service.conf"),
            "[shared]\nuser=everyone\n[Shop]\nuser=not-this-case\n",
        )
        .unwrap();
        let mut env = Given {
            vars: HashMap::new(),
            home: home.path().to_path_buf(),
        };
        env.vars
            .insert("PGSYSCONFDIR", system.to_string_lossy().into_owned());
        env.vars.insert("PGUSER", "below-the-service".into());
        let shop = settings(&[("service", "shop")]);
        let login = login(&address(None, None), &shop, &env).unwrap();
        let bare = NetworkParts {
            name: None,
            ..address(None, None)
        };
        let from_service = super::login(&bare, &shop, &env).unwrap();
        assert_eq!(from_service.login.user, "ada");
        assert_eq!(from_service.database, "orders");
        assert_eq!(from_service.login.password.as_deref(), Some("from-service"));
        let from = from_service.login.password_from.unwrap();
        assert!(from.starts_with("service shop in ") && from.ends_with(".pg_service.conf"));
        assert_eq!(from_service.login.tls.mode, TlsMode::Disable);
        // The URL stands over the service: its database and its password.
        assert_eq!(login.database, "shop");
        let url = super::login(&address(Some("bob"), Some("url")), &shop, &env).unwrap();
        assert_eq!(
            (url.login.user.as_str(), url.login.password.as_deref()),
            ("bob", Some("url"))
        );
        // PGSERVICE names one too; the system's file is read where the user's has none.
        env.vars.insert("PGSERVICE", "shared".into());
        let shared = super::login(&bare, &settings(&[]), &env).unwrap();
        assert_eq!(shared.login.user, "everyone");
        // Names are compared as written, and one found nowhere is refused.
        for missing in ["SHOP", "nowhere"] {
            let refused = super::login(&bare, &settings(&[("service", missing)]), &env)
                .err()
                .unwrap();
            assert!(
                refused
                    .message
                    .contains(&format!("definition of service \"{missing}\" not found")),
                "{}",
                refused.message
            );
        }
    }
}
