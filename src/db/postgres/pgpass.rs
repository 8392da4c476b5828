//! libpq's password file (PGPASSFILE, else `~/.pgpass`): the password of the first line
//! that matches a login, read only where others may not read the file, as libpq has it.

use std::path::{Path, PathBuf};

use super::environment::Environment;
use crate::db::DbError;

/// The password the password file gives for this login, and where: libpq's format
/// (`host:port:database:user:password`, `*` for any, `\` escaping `:` and `\`), its
/// first matching line. A file others may read is passed over with a line, as libpq
/// does.
pub(super) fn password_file(
    env: &impl Environment,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Result<Option<(String, String)>, DbError> {
    let path = match env.var("PGPASSFILE") {
        Some(path) => PathBuf::from(path),
        None => match env.home() {
            Some(home) => home.join(".pgpass"),
            None => return Ok(None),
        },
    };
    let Ok(text) = read_private(&path) else {
        return Ok(None);
    };
    let port = port.to_string();
    for (number, line) in text.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let fields = split_fields(line);
        let [h, p, d, u, password] = fields.as_slice() else {
            continue;
        };
        // The host as written: libpq takes a `localhost` line for a socket, never for
        // 127.0.0.1.
        let matches = |field: &str, value: &str| field == "*" || field == value;
        if matches(h, host) && matches(p, &port) && matches(d, database) && matches(u, user) {
            let from = format!("{} line {}", path.display(), number + 1);
            return Ok(Some((password.clone(), from)));
        }
    }
    Ok(None)
}

/// The file's text, unless it is not a plain file or group or others may read it
/// (then libpq ignores it; so does hatshop, with a line saying so).
fn read_private(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        crate::console::note!(
            "warning: password file {} is not a plain file: not read",
            path.display()
        );
        return Err(std::io::ErrorKind::InvalidInput.into());
    }
    if meta.permissions().mode() & 0o077 != 0 {
        crate::console::note!(
            "warning: password file {} has group or world access; permissions should be u=rw (0600) or less: not read",
            path.display()
        );
        return Err(std::io::ErrorKind::PermissionDenied.into());
    }
    crate::files::read_bounded_text(path, crate::files::SETTINGS_FILE_LIMIT)
}

/// A password file line's fields: `:` separates, `\` escapes the next character.
fn split_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("one field at least").push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("one field at least").push(c),
        }
    }
    fields
}
