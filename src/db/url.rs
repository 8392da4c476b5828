//! Database URLs: which store, where, with which settings, and how they are shown
//! without their password.
//!
//! `scheme://[user[:password]@]host[:port][,host[:port]…][/name][?key=value&…]`

use std::collections::BTreeMap;
use std::fmt;

/// The stores this build can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Sqlite,
    Null,
    Cassandra,
    Mysql,
    Postgres,
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Sqlite => "sqlite",
            Scheme::Null => "null",
            Scheme::Cassandra => "cassandra",
            Scheme::Mysql => "mysql",
            Scheme::Postgres => "postgres",
        }
    }
}

/// A parsed `--db` value. `Display` masks any password.
#[derive(Clone, PartialEq, Eq)]
pub struct DbUrl {
    pub scheme: Scheme,
    raw: String,
    /// Everything after `scheme://`, query included.
    pub rest: String,
}

/// The network parts of a server URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAddress {
    pub user: Option<String>,
    pub password: Option<String>,
    /// `host:port` pairs (the port filled with the default when absent).
    pub hosts: Vec<(String, u16)>,
    /// Database or keyspace name.
    pub name: Option<String>,
}

impl DbUrl {
    pub fn parse(raw: &str) -> Result<DbUrl, String> {
        let Some((scheme, rest)) = raw.split_once("://") else {
            return Err(format!(
                "'{}' is not a database URL: expected scheme://…, e.g. sqlite://hatshop.db",
                mask_password(raw)
            ));
        };
        let scheme = match scheme {
            "sqlite" => Scheme::Sqlite,
            "null" => Scheme::Null,
            "cassandra" => Scheme::Cassandra,
            "mysql" | "mariadb" => Scheme::Mysql,
            "postgres" | "postgresql" => Scheme::Postgres,
            other => {
                return Err(format!(
                    "unknown database URL scheme '{other}' in '{}': this build supports \
                     sqlite://, cassandra://, mysql://, postgres:// and null://",
                    mask_password(raw)
                ));
            }
        };
        let url = DbUrl {
            scheme,
            raw: raw.to_string(),
            rest: rest.to_string(),
        };
        url.params()?;
        Ok(url)
    }

    /// The URL exactly as given, password included: only for connecting.
    pub fn secret(&self) -> &str {
        &self.raw
    }

    pub fn scheme_name(&self) -> &'static str {
        self.scheme.name()
    }

    /// The part before `?`.
    fn location(&self) -> &str {
        self.rest.split_once('?').map_or(&self.rest, |(l, _)| l)
    }

    /// `?key=value&…` as a map.
    pub fn params(&self) -> Result<BTreeMap<String, String>, String> {
        let Some((_, query)) = self.rest.split_once('?') else {
            return Ok(BTreeMap::new());
        };
        query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((k, v)) => Ok((percent_decode(k), percent_decode(v))),
                None => Err(format!(
                    "setting '{pair}' in {self} needs a value (key=value)"
                )),
            })
            .collect()
    }

    /// Hosts, user, password and name of a server URL; `default_port` fills missing ports.
    pub fn address(&self, default_port: u16) -> Result<ServerAddress, String> {
        let location = self.location();
        let (authority, name) = match location.split_once('/') {
            Some((a, n)) => (a, Some(n.trim_matches('/')).filter(|n| !n.is_empty())),
            None => (location, None),
        };
        let (userinfo, hostlist) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let (user, password) = match userinfo {
            Some(info) => match info.split_once(':') {
                Some((u, p)) => (Some(percent_decode(u)), Some(percent_decode(p))),
                None => (Some(percent_decode(info)), None),
            },
            None => (None, None),
        };
        let mut hosts = Vec::new();
        for host in hostlist.split(',').filter(|h| !h.is_empty()) {
            let (h, port) = match host.rsplit_once(':') {
                Some((h, p)) => (
                    h,
                    p.parse::<u16>()
                        .map_err(|_| format!("bad port '{p}' in {self}"))?,
                ),
                None => (host, default_port),
            };
            hosts.push((h.to_string(), port));
        }
        if hosts.is_empty() {
            return Err(format!("{self} names no host"));
        }
        Ok(ServerAddress {
            user,
            password,
            hosts,
            name: name.map(percent_decode),
        })
    }

    /// The same URL with a SQLite path made absolute (`sqlite://` alone: `hatshop.db`
    /// in `default_dir`), so the result folder can find the store from anywhere.
    pub fn resolved(self, default_dir: &std::path::Path) -> std::io::Result<DbUrl> {
        if self.scheme != Scheme::Sqlite {
            return Ok(self);
        }
        let location = self.location();
        let path = if location.is_empty() {
            default_dir.join("hatshop.db")
        } else {
            std::path::PathBuf::from(location)
        };
        let rest = std::path::absolute(path)?.display().to_string();
        Ok(DbUrl {
            scheme: self.scheme,
            raw: format!("sqlite://{rest}"),
            rest,
        })
    }
}

impl fmt::Display for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&mask_password(&self.raw))
    }
}

impl fmt::Debug for DbUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DbUrl({self})")
    }
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `scheme://user:secret@host/…` → `scheme://user:***@host/…`.
pub fn mask_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    match authority.rfind('@') {
        Some(at) => match authority[..at].split_once(':') {
            Some((user, _password)) => {
                format!("{scheme}://{user}:***{}", &rest[at..])
            }
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_masked() {
        assert_eq!(
            mask_password("mysql://root:hunter2@127.0.0.1:3306/hatshop"),
            "mysql://root:***@127.0.0.1:3306/hatshop"
        );
        assert_eq!(mask_password("mysql://root@h/db"), "mysql://root@h/db");
        assert_eq!(mask_password("sqlite://a/b.db"), "sqlite://a/b.db");
        let url = DbUrl::parse("postgres://u:s3cret@h:1/db?pool=2").unwrap();
        assert!(!format!("{url} {url:?}").contains("s3cret"));
    }

    #[test]
    fn unknown_schemes_are_named() {
        let err = DbUrl::parse("oracle://scott:tiger@x/db").unwrap_err();
        assert!(err.contains("'oracle'") && !err.contains("tiger"), "{err}");
    }

    #[test]
    fn server_urls_split_into_their_parts() {
        let url = DbUrl::parse("cassandra://a:9043,b/shop?rf=3&cl=QUORUM").unwrap();
        let address = url.address(9042).unwrap();
        assert_eq!(address.hosts, vec![("a".into(), 9043), ("b".into(), 9042)]);
        assert_eq!(address.name.as_deref(), Some("shop"));
        assert_eq!(url.params().unwrap()["cl"], "QUORUM");
        let url = DbUrl::parse("mysql://root:p%40ss@127.0.0.1:3307/hatshop").unwrap();
        let address = url.address(3306).unwrap();
        assert_eq!(address.user.as_deref(), Some("root"));
        assert_eq!(address.password.as_deref(), Some("p@ss"));
        assert!(DbUrl::parse("mysql://h/db?pool").is_err());
    }
}
