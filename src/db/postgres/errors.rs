//! PostgreSQL's errors as hatshop's kinds: by SQLSTATE when the server answered, else
//! by what failed on the way.

use crate::db::classify::{find_io, io_kind};
use crate::db::{DbError, ErrorKind};

/// PostgreSQL's SQLSTATE codes as kinds.
pub(super) fn kind_of_sqlstate(code: &str) -> ErrorKind {
    match code {
        // serialization failure, deadlock
        "40001" | "40P01" => ErrorKind::Conflict,
        // statement timeout / cancel, lock not available
        "57014" | "55P03" => ErrorKind::Timeout,
        // invalid password or authorization, unknown database, too many connections,
        // shutting down, starting up
        "28P01" | "28000" | "3D000" | "53300" | "57P01" | "57P02" | "57P03" => {
            ErrorKind::Connection
        }
        _ if code.starts_with("08") => ErrorKind::Connection,
        _ if code.starts_with("23") => ErrorKind::Constraint,
        // insufficient resources (disk full, out of memory)
        _ if code.starts_with("53") => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    }
}

fn kind_of(error: &tokio_postgres::Error) -> ErrorKind {
    if let Some(db) = error.as_db_error() {
        return kind_of_sqlstate(db.code().code());
    }
    if error.is_closed() {
        return ErrorKind::Connection;
    }
    match find_io(error) {
        Some(io) => io_kind(io),
        // Encoding a parameter, decoding a column, a bad config: client-side.
        None => ErrorKind::Other,
    }
}

pub(super) fn classify(error: tokio_postgres::Error) -> DbError {
    let message = match (error.as_db_error(), std::error::Error::source(&error)) {
        (Some(db), _) => format!(
            "{}: {} (SQLSTATE {})",
            db.severity(),
            db.message(),
            db.code().code()
        ),
        (None, Some(cause)) => format!("{error}: {cause}"),
        (None, None) => error.to_string(),
    };
    let classified = DbError::new(kind_of(&error), message);
    match error.as_db_error() {
        Some(db) => classified.with_code(db.code().code()),
        None => classified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_sort_into_kinds() {
        for (code, kind) in [
            ("40001", ErrorKind::Conflict),
            ("40P01", ErrorKind::Conflict),
            ("57014", ErrorKind::Timeout),
            ("55P03", ErrorKind::Timeout),
            ("28P01", ErrorKind::Connection),
            ("3D000", ErrorKind::Connection),
            ("57P01", ErrorKind::Connection),
            ("08006", ErrorKind::Connection),
            ("23505", ErrorKind::Constraint),
            ("23503", ErrorKind::Constraint),
            ("53100", ErrorKind::Unavailable),
            ("42P01", ErrorKind::Other),
        ] {
            assert_eq!(kind_of_sqlstate(code), kind, "{code}");
        }
    }
}
