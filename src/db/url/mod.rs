//! Database URLs: which store, where, with which settings and credentials, and how
//! they are shown without their password.
//!
//! `scheme://[user[:password]@]host[:port][,host[:port]…][/name][?key=value&…]`
//!
//! Passwords may hold any character, percent-encoded or not (`/`, `?`, `@`, `#` too):
//! the credentials end at the last `@` that is followed by a list of hosts. A password
//! may also come as `?password=…`. Every password is registered with `secrets`.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

mod credentials;
mod query;

use super::stores::{StoreDeclarations, store_declarations};
use credentials::{has_at_outside, query_password_spans, userinfo_end};
use query::{percent_decode, read_query};

use crate::secrets::{self, MASK};
pub use credentials::shown;

/// The switch a store's TLS scheme sets (`rediss://` is `redis://…?tls=true`).
pub const TLS_SWITCH: &str = "tls";

/// A database URL that cannot be read: one line, any password in it masked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlError(String);

impl UrlError {
    /// The same error with `context: ` before it (`HATSHOP_DB: …`).
    pub fn context(self, context: &str) -> UrlError {
        UrlError(format!("{context}: {}", self.0))
    }
}

/// A parsed `--db` value. `Display` masks any password.
#[derive(Clone, PartialEq, Eq)]
pub struct DbUrl {
    scheme: &'static str,
    user: Option<String>,
    password: Option<String>,
    /// Hosts and name (servers), or the path (files), as written.
    location: String,
    /// `?key=value` settings, decoded, credentials taken out.
    params: BTreeMap<String, String>,
}

/// The network parts of a store's URL: who logs in, at which hosts, into what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkParts {
    pub user: Option<String>,
    pub password: Option<String>,
    /// `host:port` pairs (the port filled with the default when absent).
    pub hosts: Vec<(String, u16)>,
    /// Store or keyspace name.
    pub name: Option<String>,
}

#[cfg(test)]
impl NetworkParts {
    /// One host on 127.0.0.1 at `port`, with `user` and `password`, as a unit test
    /// of a login gives it.
    pub fn local(port: u16, user: Option<&str>, password: Option<&str>) -> NetworkParts {
        NetworkParts {
            user: user.map(String::from),
            password: password.map(String::from),
            hosts: vec![("127.0.0.1".into(), port)],
            name: None,
        }
    }
}

impl DbUrl {
    /// Reads a URL; the error is one line with any password masked.
    pub fn parse(raw: &str) -> Result<DbUrl, UrlError> {
        DbUrl::read(raw).map_err(UrlError)
    }

    fn read(raw: &str) -> Result<DbUrl, String> {
        let Some((scheme, rest)) = raw.split_once("://") else {
            return Err(format!(
                "'{}' is not a database URL: expected scheme://…, e.g. sqlite://hatshop.db",
                shown(raw)
            ));
        };
        let Some(meta) = store_declarations(scheme) else {
            return Err(unknown_scheme(scheme, raw));
        };
        let password_spans = query_password_spans(rest);
        if meta.own_file.is_some() {
            refuse_login_in_file_path(scheme, rest, raw)?;
        }
        // A file's path may hold an '@': only a server's URL carries credentials there.
        let at = match meta.own_file {
            Some(_) => None,
            None => userinfo_end(rest, &password_spans),
        };
        if at.is_none() && meta.own_file.is_none() && has_at_outside(rest, &password_spans) {
            return Err(format!(
                "{} names no host after its '@': expected {scheme}://user:password@host:port/name",
                shown(raw)
            ));
        }
        let (userinfo, after) = match at {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let (user, password) = match userinfo {
            Some(info) => match info.split_once(':') {
                Some((u, p)) => (Some(percent_decode(u)), Some(p.to_string())),
                None => (Some(percent_decode(info)), None),
            },
            None => (None, None),
        };
        let (location, query) = match after.split_once('?') {
            Some((l, q)) => (l, Some(q)),
            None => (after, None),
        };
        let hides_password = password.is_some() || !password_spans.is_empty();
        let mut settings = read_query(query, scheme, hides_password)?;
        if meta.tls_scheme == Some(scheme) {
            settings.params.insert(TLS_SWITCH.into(), "true".into());
        }
        let user = settings.user.or(user);
        let mut password = settings.password.or(password);
        if let (Some(word), None, true) = (&user, &password, meta.lone_user_is_password) {
            secrets::register(word);
        }
        if let Some(p) = &password {
            secrets::register(p);
            let decoded = percent_decode(p);
            secrets::register(&decoded);
            password = Some(decoded);
        }
        if !meta.login && (user.is_some() || password.is_some()) {
            return Err(format!(
                "{scheme}:// takes no user or password: nothing there checks them (leave them out of the URL)"
            ));
        }
        let url = DbUrl {
            scheme: meta.scheme,
            user,
            password,
            location: location.to_string(),
            params: settings.params,
        };
        // A file store's location is a path, with no port to check.
        // A server's URL with a port that is not one is bad input, said when the URL is
        // read, not later as a server that cannot be reached.
        if meta.own_file.is_none() {
            url.hosts(1)
                .map_err(|e| format!("{e} in {}: a port is a number up to 65535", shown(raw)))?;
        }
        Ok(url)
    }

    /// The `host:port` pairs, `default_port` filling missing ports.
    fn hosts(&self, default_port: u16) -> Result<Vec<(String, u16)>, String> {
        self.host_list()
            .map(|host| host_and_port(host, default_port))
            .collect()
    }

    /// The same URL with no password: the store then looks where its own tools keep
    /// one (a URL read back from run.json holds the mask in its place).
    pub fn without_password(&self) -> DbUrl {
        DbUrl {
            password: None,
            ..self.clone()
        }
    }

    /// The store's one name (aliases resolved).
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// What the store declares about itself: every question about a store goes here.
    pub fn store(&self) -> &'static StoreDeclarations {
        store_declarations(self.scheme).expect("a parsed URL names a known store")
    }

    /// The part between `scheme://` (and any credentials) and `?`: hosts and name, or a path.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// `?key=value` settings (credentials are not among them).
    pub fn params(&self) -> BTreeMap<String, String> {
        self.params.clone()
    }

    /// Hosts, user, password and name of a server URL; `default_port` fills missing ports.
    pub fn address(&self, default_port: u16) -> Result<NetworkParts, String> {
        let name = self
            .location
            .split_once('/')
            .and_then(|(_, n)| Some(n.trim_matches('/')).filter(|n| !n.is_empty()));
        let hosts = self
            .hosts(default_port)
            .map_err(|e| format!("{e} in {self}: a port is a number up to 65535"))?;
        if hosts.is_empty() {
            return Err(format!("{self} names no host"));
        }
        Ok(NetworkParts {
            user: self.user.clone(),
            password: self.password.clone(),
            hosts,
            name: name.map(percent_decode),
        })
    }

    /// The `host[:port]` entries of the location, before any `/name`.
    fn host_list(&self) -> impl Iterator<Item = &str> {
        let hosts = self.location.split('/').next().unwrap_or_default();
        hosts.split(',').filter(|h| !h.is_empty())
    }

    /// Whether the URL names a database kept in memory (`sqlite://:memory:`).
    pub fn in_memory(&self) -> bool {
        self.store().in_memory == Some(self.location.as_str())
    }

    /// The file of a file store (`sqlite://PATH`), or `None` when none is given.
    pub fn file(&self) -> Option<PathBuf> {
        (!self.location.is_empty()).then(|| PathBuf::from(percent_decode(&self.location)))
    }

    /// The same URL for another file (for SQLite paths resolved against a folder). The
    /// path is taken literally: a `?`, `#` or `%` in it is encoded, so the URL, written
    /// out and read back, names the same file.
    pub fn with_file(&self, path: &std::path::Path) -> DbUrl {
        let mut location = String::new();
        for c in path.display().to_string().chars() {
            match c {
                '%' => location.push_str("%25"),
                '?' => location.push_str("%3F"),
                '#' => location.push_str("%23"),
                c => location.push(c),
            }
        }
        DbUrl {
            location,
            ..self.clone()
        }
    }
}

impl fmt::Display for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The TLS scheme stands for the switch it sets, so the URL reads back the same.
        let tls_scheme = self
            .store()
            .tls_scheme
            .filter(|_| self.params.get(TLS_SWITCH).is_some_and(|on| on == "true"));
        write!(f, "{}://", tls_scheme.unwrap_or(self.scheme))?;
        match (&self.user, &self.password) {
            (Some(user), Some(_)) => write!(f, "{user}:{MASK}@")?,
            (Some(_), None) if self.store().lone_user_is_password => write!(f, "{MASK}@")?,
            (Some(user), None) => write!(f, "{user}@")?,
            (None, Some(_)) => write!(f, ":{MASK}@")?,
            (None, None) => {}
        }
        f.write_str(&self.location)?;
        let mut first = true;
        for (k, v) in &self.params {
            if tls_scheme.is_some() && k == TLS_SWITCH {
                continue;
            }
            write!(f, "{}{k}={v}", if first { '?' } else { '&' })?;
            first = false;
        }
        Ok(())
    }
}

impl fmt::Debug for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbUrl({self})")
    }
}

/// A file's path may hold an '@', but `user:password@host/…` there is a login a file
/// store does not have: refused, and the password never echoed.
fn refuse_login_in_file_path(scheme: &str, rest: &str, raw: &str) -> Result<(), String> {
    let first = rest.split(['/', '?']).next().unwrap_or_default();
    match first.rfind('@') {
        Some(at) if first[..at].contains(':') => Err(format!(
            "{} reads as a user and a password, which {scheme}:// has no use for (a file's \
             path goes there): leave them out",
            shown(raw)
        )),
        _ => Ok(()),
    }
}

/// The error for a scheme no store has, with the schemes this build supports.
fn unknown_scheme(scheme: &str, raw: &str) -> String {
    let known: Vec<String> = super::STORES
        .iter()
        .map(|m| format!("{}://", m.scheme))
        .collect();
    let names = super::STORES
        .iter()
        .flat_map(|m| std::iter::once(m.scheme).chain(m.aliases.iter().copied()));
    format!(
        "unknown database URL scheme '{scheme}'{} in '{}': this build supports {}",
        crate::suggest::did_you_mean(scheme, names),
        shown(raw),
        known.join(", ")
    )
}

/// One `host[:port]` entry, the port filled with `default_port` when absent; the error
/// names a port that is not one.
fn host_and_port(host: &str, default_port: u16) -> Result<(String, u16), String> {
    let (h, port) = match host.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') => {
            let port = p.parse::<u16>().map_err(|_| {
                // Only a number is echoed: text here may be a password.
                if !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) {
                    format!("port {p} is out of range")
                } else {
                    "bad port".to_string()
                }
            })?;
            (h, port)
        }
        _ => (host, default_port),
    };
    Ok((h.trim_matches(['[', ']']).to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_that_checks_no_login_refuses_one_and_a_files_at_is_its_path() {
        for raw in [
            "voldemort://u:s3cret@127.0.0.1:6666/hatshop",
            "sqlite://shop.db?password=s3cret",
            "null://u:s3cret@h",
        ] {
            let err = DbUrl::parse(raw).unwrap_err().to_string();
            assert!(err.contains("takes no user or password"), "{err}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        let url = DbUrl::parse("sqlite:///tmp/a@b.db").unwrap();
        assert_eq!(url.file(), Some(PathBuf::from("/tmp/a@b.db")));
        // A login written where the path goes: refused, its password not echoed.
        for raw in [
            "sqlite://admin:s3cret@localhost/shop.db",
            "sqlite://admin:s3cr@t@localhost",
        ] {
            let err = DbUrl::parse(raw).unwrap_err().to_string();
            assert!(err.contains("reads as a user and a password"), "{err}");
            assert!(!err.contains("s3cr"), "{err}");
        }
    }

    #[test]
    fn passwords_are_masked() {
        let url = DbUrl::parse("mysql://root:hunter2@127.0.0.1:3306/hatshop").unwrap();
        assert_eq!(url.to_string(), "mysql://root:***@127.0.0.1:3306/hatshop");
        let url = DbUrl::parse("postgres://u:s3cret@h:1/db?pool=2").unwrap();
        assert!(!format!("{url} {url:?}").contains("s3cret"));
        assert_eq!(url.params()["pool"], "2");
    }

    #[test]
    fn passwords_may_hold_any_character() {
        for password in ["p/a?s@s#w%rd", "a@b@c", "?x=1&y", "%2F%3F%40"] {
            let raw = format!("mysql://root:{password}@127.0.0.1:3307/hatshop?pool=2");
            let url = DbUrl::parse(&raw).unwrap();
            let address = url.address(3306).unwrap();
            assert_eq!(
                address.hosts,
                vec![("127.0.0.1".into(), 3307)],
                "{password}"
            );
            assert_eq!(address.user.as_deref(), Some("root"));
            assert_eq!(address.name.as_deref(), Some("hatshop"));
            assert_eq!(
                address.password.as_deref(),
                Some(percent_decode(password).as_str())
            );
            assert_eq!(url.params()["pool"], "2");
            assert!(!url.to_string().contains(password), "{url}");
        }
    }

    #[test]
    fn a_password_may_come_in_the_query() {
        let url = DbUrl::parse("postgres://u@h/db?password=p@ss&w0rd&pool=3")
            .unwrap_err()
            .to_string();
        assert!(url.contains("needs a value"), "{url}");
        let url = DbUrl::parse("postgres://u@h:5/db?password=p%40ss%26w0rd&pool=3").unwrap();
        let address = url.address(5432).unwrap();
        assert_eq!(address.password.as_deref(), Some("p@ss&w0rd"));
        assert_eq!(address.hosts, vec![("h".into(), 5)]);
        assert!(!url.params().contains_key("password"));
        assert!(!url.to_string().contains("w0rd"), "{url}");
    }

    #[test]
    fn urls_that_fail_to_parse_never_show_a_password() {
        for raw in [
            "mysql://u:SECRETX@/db",
            "mysql://u:SECRETX",
            "mysql://u:SECRETX@h:99999/db",
            "postgres://u:SECRETX@h:x/db",
            "cassandra://u:SECRETX@h1,h2:bad/ks",
            "mysql:/u:SECRETX@h/db",
            "oracle://u:SECRETX@h/db",
            "redis://:SECRETX@h:6379x",
            "mysql://u@h:5/db?password=SECRETX&x",
            "mysql://u:SEC@RETX@",
        ] {
            let err = DbUrl::parse(raw).unwrap_err().to_string();
            assert!(
                !err.contains("SECRETX") && !err.contains("RETX"),
                "{raw}: {err}"
            );
            assert!(!shown(raw).contains("SECRETX"), "{raw}");
        }
        assert!(
            DbUrl::parse("mysql://u:SECRETX@/db")
                .unwrap_err()
                .to_string()
                .contains("names no host")
        );
        let err = DbUrl::parse("mysql://h:99999/db").unwrap_err().to_string();
        assert!(err.contains("port 99999 is out of range"), "{err}");
        assert_eq!(
            shown("postgres://[::1]:5432/db"),
            "postgres://[::1]:5432/db"
        );
        assert_eq!(
            shown("cassandra://a:9042,b/ks?rf=3"),
            "cassandra://a:9042,b/ks?rf=3"
        );
    }

    #[test]
    fn unknown_schemes_are_named_without_credentials() {
        let err = DbUrl::parse("oracle://scott:tiger@x/db")
            .unwrap_err()
            .to_string();
        assert!(err.contains("'oracle'") && !err.contains("tiger"), "{err}");
    }

    #[test]
    fn server_urls_split_into_their_parts() {
        let url = DbUrl::parse("cassandra://a:9043,b/shop?rf=3&cl=QUORUM").unwrap();
        let address = url.address(9042).unwrap();
        assert_eq!(address.hosts, vec![("a".into(), 9043), ("b".into(), 9042)]);
        assert_eq!(address.name.as_deref(), Some("shop"));
        assert_eq!(url.params()["cl"], "QUORUM");
        let url = DbUrl::parse("mariadb://root:p%40ss@127.0.0.1:3307/hatshop").unwrap();
        assert_eq!(url.scheme(), "mysql");
        let address = url.address(3306).unwrap();
        assert_eq!(address.password.as_deref(), Some("p@ss"));
        assert!(DbUrl::parse("mysql://h/db?pool").is_err());
    }

    #[test]
    fn a_tls_scheme_is_its_store_with_tls_on_and_reads_back_the_same() {
        let url = DbUrl::parse("rediss://bench:pw@127.0.0.1:6380/0?cacert=/ca.pem").unwrap();
        assert_eq!(url.scheme(), "redis");
        assert_eq!(url.params()[TLS_SWITCH], "true");
        assert_eq!(
            url.to_string(),
            "rediss://bench:***@127.0.0.1:6380/0?cacert=/ca.pem"
        );
        let plain = DbUrl::parse("redis://127.0.0.1:6379/0").unwrap();
        assert_eq!(plain.to_string(), "redis://127.0.0.1:6379/0");
        // MySQL's own spelling and the flag's are one setting.
        let mysql = DbUrl::parse("mysql://root@h/db?ssl-mode=REQUIRED").unwrap();
        assert_eq!(mysql.params()["ssl_mode"], "REQUIRED");
    }
}
