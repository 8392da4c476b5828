//! MySQL and MariaDB errors as kinds, by the server's code or the driver's error; the
//! message and the code are kept.

use mysql_async::DriverError;

use crate::db::classify::io_kind;
use crate::db::{DbError, ErrorKind};

/// MySQL and MariaDB server error codes as kinds.
fn kind_of_code(code: u16) -> ErrorKind {
    match code {
        // Deadlock or Galera certification failure, record changed since read, error
        // during COMMIT, Galera's "plugin instructed … rollback": rolled back.
        1213 | 1020 | 1180 | 3101 => ErrorKind::Conflict,
        // Lock wait timeout, query interrupted, max_statement_time exceeded.
        1205 | 1317 | 1969 => ErrorKind::Timeout,
        // Galera node not ready (no quorum), server shutting down.
        1047 | 1053 => ErrorKind::Unavailable,
        // Duplicate key, foreign key.
        1062 | 1451 | 1452 => ErrorKind::Constraint,
        // Too many connections, access denied, unknown database, connection killed,
        // server gone, lost connection.
        1040 | 1044 | 1045 | 1049 | 1927 | 2006 | 2013 => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}

fn kind_of(error: &mysql_async::Error) -> ErrorKind {
    use mysql_async::Error as E;
    match error {
        E::Server(server) => kind_of_code(server.code),
        E::Io(mysql_async::IoError::Io(io)) => io_kind(io),
        // A handshake or certificate that failed: nothing was sent.
        E::Io(mysql_async::IoError::Tls(_)) => ErrorKind::Connection,
        E::Driver(
            DriverError::ConnectionClosed
            | DriverError::PoolDisconnected
            | DriverError::PacketOutOfOrder
            | DriverError::UnexpectedPacket { .. },
        ) => ErrorKind::Connection,
        // Client-side mistakes (parameters, decoding, URL): nothing reached the server.
        E::Driver(_) | E::Url(_) | E::Other(_) => ErrorKind::Other,
    }
}

pub(super) fn classify(error: mysql_async::Error) -> DbError {
    let message = match &error {
        // The driver says "Input/output error: " twice around the OS error.
        mysql_async::Error::Io(mysql_async::IoError::Io(io)) => format!("I/O error: {io}"),
        _ => error.to_string(),
    };
    let classified = DbError::new(kind_of(&error), message);
    match &error {
        mysql_async::Error::Server(server) => classified.with_code(server.code.to_string()),
        _ => classified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mysql_async::Value as SqlValue;

    #[test]
    fn server_codes_sort_into_kinds() {
        for (code, kind) in [
            (1213, ErrorKind::Conflict),
            (1020, ErrorKind::Conflict),
            (1180, ErrorKind::Conflict),
            (3101, ErrorKind::Conflict),
            (1205, ErrorKind::Timeout),
            (1317, ErrorKind::Timeout),
            (1969, ErrorKind::Timeout),
            (1047, ErrorKind::Unavailable),
            (1062, ErrorKind::Constraint),
            (1452, ErrorKind::Constraint),
            (1045, ErrorKind::Connection),
            (1927, ErrorKind::Connection),
            (2013, ErrorKind::Connection),
            (1146, ErrorKind::Other),
        ] {
            assert_eq!(kind_of_code(code), kind, "{code}");
        }
    }

    #[test]
    fn client_side_errors_are_other_and_lost_connections_connection() {
        let params = mysql_async::Error::Driver(DriverError::StmtParamsMismatch {
            required: 2,
            supplied: 1,
        });
        assert_eq!(kind_of(&params), ErrorKind::Other);
        let decode = mysql_async::Error::Driver(DriverError::FromValue {
            value: SqlValue::NULL,
        });
        assert_eq!(kind_of(&decode), ErrorKind::Other);
        let closed = mysql_async::Error::Driver(DriverError::ConnectionClosed);
        assert_eq!(kind_of(&closed), ErrorKind::Connection);
        let eof = mysql_async::Error::Io(mysql_async::IoError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed",
        )));
        assert_eq!(kind_of(&eof), ErrorKind::Connection);
    }
}
