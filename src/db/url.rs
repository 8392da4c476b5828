//! Database URLs: which store, where, and how they are shown without their password.

use std::fmt;

/// The stores this build can talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Sqlite,
    Null,
}

/// A parsed `--db` value. `Display` masks any password.
#[derive(Clone, PartialEq, Eq)]
pub struct DbUrl {
    pub scheme: Scheme,
    raw: String,
    /// Everything after `scheme://`.
    pub rest: String,
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
            other => {
                return Err(format!(
                    "unknown database URL scheme '{other}' in '{}': this build supports sqlite:// and null://",
                    mask_password(raw)
                ));
            }
        };
        Ok(DbUrl {
            scheme,
            raw: raw.to_string(),
            rest: rest.to_string(),
        })
    }

    /// The URL exactly as given, password included: only for connecting.
    pub fn secret(&self) -> &str {
        &self.raw
    }

    /// The same URL with a SQLite path made absolute (`sqlite://` alone: `hatshop.db`
    /// in `default_dir`), so the result folder can find the store from anywhere.
    pub fn resolved(self, default_dir: &std::path::Path) -> std::io::Result<DbUrl> {
        if self.scheme != Scheme::Sqlite {
            return Ok(self);
        }
        let path = if self.rest.is_empty() {
            default_dir.join("hatshop.db")
        } else {
            std::path::PathBuf::from(&self.rest)
        };
        let rest = std::path::absolute(path)?.display().to_string();
        Ok(DbUrl {
            scheme: self.scheme,
            raw: format!("sqlite://{rest}"),
            rest,
        })
    }

    pub fn scheme_name(&self) -> &'static str {
        match self.scheme {
            Scheme::Sqlite => "sqlite",
            Scheme::Null => "null",
        }
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
    }

    #[test]
    fn unknown_schemes_are_named() {
        let err = DbUrl::parse("oracle://scott:tiger@x/db").unwrap_err();
        assert!(err.contains("'oracle'") && !err.contains("tiger"), "{err}");
    }
}
