//! Redis errors as hatshop's kinds.

use redis::ServerErrorKind;

use crate::db::{DbError, ErrorKind};

/// A Redis error as a kind.
pub(super) fn kind_of(error: &redis::RedisError) -> ErrorKind {
    use redis::ErrorKind as K;
    if error.is_timeout() {
        return ErrorKind::Timeout;
    }
    match error.kind() {
        K::Io => ErrorKind::Connection,
        K::AuthenticationFailed => ErrorKind::Connection,
        K::Server(
            ServerErrorKind::BusyLoading
            | ServerErrorKind::TryAgain
            | ServerErrorKind::ClusterDown
            | ServerErrorKind::MasterDown
            | ServerErrorKind::ReadOnly,
        ) => ErrorKind::Unavailable,
        K::Server(ServerErrorKind::NoPerm) => ErrorKind::Connection,
        K::Server(ServerErrorKind::ExecAbort) => ErrorKind::Conflict,
        _ => error.code().map_or(ErrorKind::Other, kind_of_code),
    }
}

/// The kind of a server error by its code, the word that begins it (`-LOADING …`).
pub(super) fn kind_of_code(code: &str) -> ErrorKind {
    match code {
        // Loading, a failover, a read-only replica; out of memory (maxmemory), a
        // script running too long: refused at once.
        "LOADING" | "TRYAGAIN" | "CLUSTERDOWN" | "MASTERDOWN" | "READONLY" | "OOM" | "BUSY" => {
            ErrorKind::Unavailable
        }
        "NOAUTH" | "WRONGPASS" | "NOPERM" => ErrorKind::Connection,
        "EXECABORT" => ErrorKind::Conflict,
        _ => ErrorKind::Other,
    }
}

pub(super) fn classify(error: redis::RedisError) -> DbError {
    DbError::new(kind_of(&error), error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_errors_sort_into_kinds() {
        use redis::ErrorKind as K;
        let cases = [
            (K::Io, ErrorKind::Connection),
            (K::AuthenticationFailed, ErrorKind::Connection),
            (
                K::Server(ServerErrorKind::BusyLoading),
                ErrorKind::Unavailable,
            ),
            (K::Server(ServerErrorKind::ReadOnly), ErrorKind::Unavailable),
            (K::Server(ServerErrorKind::ExecAbort), ErrorKind::Conflict),
            (K::Server(ServerErrorKind::ResponseError), ErrorKind::Other),
            (K::UnexpectedReturnType, ErrorKind::Other),
            (K::Client, ErrorKind::Other),
        ];
        for (kind, expected) in cases {
            let error = redis::RedisError::from((kind, "test"));
            assert_eq!(kind_of(&error), expected, "{kind:?}");
        }
        let timeout =
            redis::RedisError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, "slow"));
        assert_eq!(kind_of(&timeout), ErrorKind::Timeout);
        // hatshop's own wire reads the same codes the same way.
        assert_eq!(kind_of_code("BUSY"), ErrorKind::Unavailable);
        assert_eq!(kind_of_code("WRONGPASS"), ErrorKind::Connection);
        assert_eq!(kind_of_code("WRONGTYPE"), ErrorKind::Other);
    }
}
