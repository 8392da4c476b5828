//! libpq's connection services: `service=NAME` (or PGSERVICE) names a section of
//! PGSERVICEFILE (else `~/.pg_service.conf`), else of `pg_service.conf` in PGSYSCONFDIR
//! (else Debian's `/etc/postgresql-common`), whose `key=value` lines stand for the
//! connection's settings where the URL gives none. A service named and found nowhere
//! is refused, as libpq refuses it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::environment::Environment;
use crate::db::ini::{self, Dialect};
use crate::db::{DbError, ErrorKind, Settings};

/// Where the system-wide file is when PGSYSCONFDIR does not say: Debian's libpq.
const SYSTEM_DIR: &str = "/etc/postgresql-common";

/// libpq's file: names as written, `=` after a key.
const DIALECT: Dialect = Dialect {
    separators: &['='],
    fold_case: false,
};

/// A service's settings, and where they were read.
pub struct Service {
    /// `service shop in /root/.pg_service.conf`, to say where a value came from.
    pub from: String,
    values: BTreeMap<String, String>,
}

impl Service {
    /// The value the service gives `key` (`user`, `dbname`, `sslmode`, …).
    pub fn get(&self, key: &str) -> Option<String> {
        self.values.get(key).filter(|v| !v.is_empty()).cloned()
    }
}

/// The service the settings or PGSERVICE name, if any.
pub fn service(settings: &Settings, env: &impl Environment) -> Result<Option<Service>, DbError> {
    let Some(name) = settings
        .given_text("service")
        .map(str::to_string)
        .or_else(|| env.var("PGSERVICE"))
    else {
        return Ok(None);
    };
    let user_file = match env.var("PGSERVICEFILE") {
        Some(path) => Some(PathBuf::from(path)),
        None => env.home().map(|home| home.join(".pg_service.conf")),
    };
    let system_dir = env.var("PGSYSCONFDIR").unwrap_or_else(|| SYSTEM_DIR.into());
    let system_file = PathBuf::from(system_dir).join("pg_service.conf");
    for path in user_file.into_iter().chain([system_file]) {
        let Some(text) = crate::files::read_settings_file(&path) else {
            continue;
        };
        if let Some(values) = ini::sections(&text, DIALECT).remove(&name) {
            let from = format!("service {name} in {}", path.display());
            if let Some(password) = values.get("password") {
                crate::secrets::register(password);
            }
            return Ok(Some(Service { from, values }));
        }
    }
    Err(DbError::new(
        ErrorKind::Other,
        format!(
            "definition of service \"{name}\" not found (in PGSERVICEFILE or \
             ~/.pg_service.conf, or pg_service.conf in PGSYSCONFDIR), as libpq looks"
        ),
    ))
}
