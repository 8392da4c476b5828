//! Driver errors to error kinds, and Cassandra's own names for them.

use scylla::errors::{DbError as CqlError, ExecutionError, RequestAttemptError};

use crate::db::{DbError, ErrorKind};

/// An error of no particular kind.
pub fn other(error: impl std::fmt::Display) -> DbError {
    DbError::other(error)
}

/// What Cassandra said, as a kind.
fn kind_of_db_error(error: &CqlError) -> ErrorKind {
    match error {
        CqlError::Unavailable { .. }
        | CqlError::Overloaded
        | CqlError::IsBootstrapping
        | CqlError::RateLimitReached { .. }
        | CqlError::ReadFailure { .. } => ErrorKind::Unavailable,
        // The coordinator gave up waiting: the write may still have happened.
        CqlError::ReadTimeout { .. } | CqlError::WriteTimeout { .. } => ErrorKind::Timeout,
        // Some replica failed the write: others may have applied it.
        CqlError::WriteFailure { .. } => ErrorKind::Failure,
        CqlError::AlreadyExists { .. } => ErrorKind::Constraint,
        CqlError::AuthenticationError | CqlError::Unauthorized => ErrorKind::Connection,
        _ => ErrorKind::Other,
    }
}

/// Cassandra's name for the error (the protocol's error code, as its docs name it).
fn code_of_db_error(error: &CqlError) -> String {
    let name = match error {
        CqlError::ServerError => "ServerError",
        CqlError::ProtocolError => "ProtocolError",
        CqlError::AuthenticationError => "AuthenticationError",
        CqlError::Unavailable { .. } => "Unavailable",
        CqlError::Overloaded => "Overloaded",
        CqlError::IsBootstrapping => "IsBootstrapping",
        CqlError::TruncateError => "TruncateError",
        CqlError::WriteTimeout { .. } => "WriteTimeout",
        CqlError::ReadTimeout { .. } => "ReadTimeout",
        CqlError::ReadFailure { .. } => "ReadFailure",
        CqlError::FunctionFailure { .. } => "FunctionFailure",
        CqlError::WriteFailure { .. } => "WriteFailure",
        CqlError::SyntaxError => "SyntaxError",
        CqlError::Unauthorized => "Unauthorized",
        CqlError::Invalid => "Invalid",
        CqlError::ConfigError => "ConfigError",
        CqlError::AlreadyExists { .. } => "AlreadyExists",
        CqlError::Unprepared { .. } => "Unprepared",
        CqlError::RateLimitReached { .. } => "RateLimitReached",
        other => return format!("{other:?}"),
    };
    name.to_string()
}

/// The server's error inside a driver error, when the server answered with one.
fn server_error(error: &ExecutionError) -> Option<&CqlError> {
    let attempt = match error {
        ExecutionError::LastAttemptError(attempt) => attempt,
        ExecutionError::PrepareError(scylla::errors::PrepareError::AllAttemptsFailed {
            first_attempt,
        }) => first_attempt,
        _ => return None,
    };
    match attempt {
        RequestAttemptError::DbError(db, _) => Some(db),
        _ => None,
    }
}

fn kind_of_attempt(error: &RequestAttemptError) -> ErrorKind {
    match error {
        RequestAttemptError::DbError(db, _) => kind_of_db_error(db),
        RequestAttemptError::BrokenConnectionError(_)
        | RequestAttemptError::UnableToAllocStreamId => ErrorKind::Connection,
        // Serialising values or parsing a response: the client's side.
        _ => ErrorKind::Other,
    }
}

/// A driver error as a kind.
pub fn classify_kind(error: &ExecutionError) -> ErrorKind {
    match error {
        ExecutionError::LastAttemptError(attempt) => kind_of_attempt(attempt),
        ExecutionError::PrepareError(scylla::errors::PrepareError::AllAttemptsFailed {
            first_attempt,
        }) => kind_of_attempt(first_attempt),
        // No connection to send on: nothing was sent, the request did not happen.
        ExecutionError::ConnectionPoolError(_)
        | ExecutionError::PrepareError(scylla::errors::PrepareError::ConnectionPoolError(_)) => {
            ErrorKind::Unavailable
        }
        ExecutionError::MetadataError(_) => ErrorKind::Connection,
        ExecutionError::RequestTimeout(_) => ErrorKind::Timeout,
        ExecutionError::EmptyPlan => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    }
}

/// A driver error, sorted into its kind, with the server's code where it gave one.
pub fn classify(error: ExecutionError) -> DbError {
    let classified = DbError::new(classify_kind(&error), error.to_string());
    match server_error(&error) {
        Some(db) => classified.with_code(code_of_db_error(db)),
        None => classified,
    }
}

/// A paged read's error as a kind: its first page's request failing is classified
/// like any request.
pub fn classify_pager(error: scylla::errors::PagerExecutionError) -> DbError {
    use scylla::errors::{NextPageError, PagerExecutionError};
    let request = match &error {
        PagerExecutionError::NextPageError(NextPageError::RequestFailure(request)) => {
            Some(request.clone().into_execution_error())
        }
        _ => None,
    };
    let classified = DbError::new(
        request.as_ref().map_or(ErrorKind::Other, classify_kind),
        error.to_string(),
    );
    match request.as_ref().and_then(server_error) {
        Some(db) => classified.with_code(code_of_db_error(db)),
        None => classified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scylla::statement::Consistency;

    fn db(error: CqlError) -> ExecutionError {
        ExecutionError::LastAttemptError(RequestAttemptError::DbError(error, "msg".into()))
    }

    #[test]
    fn cassandra_errors_sort_into_kinds() {
        use scylla::errors::{OperationType, WriteType};
        let cases = [
            (
                CqlError::Unavailable {
                    consistency: Consistency::All,
                    required: 3,
                    alive: 2,
                },
                ErrorKind::Unavailable,
            ),
            (CqlError::Overloaded, ErrorKind::Unavailable),
            (
                CqlError::WriteTimeout {
                    consistency: Consistency::All,
                    received: 2,
                    required: 3,
                    write_type: WriteType::Simple,
                },
                ErrorKind::Timeout,
            ),
            (
                CqlError::ReadTimeout {
                    consistency: Consistency::All,
                    received: 2,
                    required: 3,
                    data_present: false,
                },
                ErrorKind::Timeout,
            ),
            (
                CqlError::WriteFailure {
                    consistency: Consistency::Quorum,
                    received: 1,
                    required: 2,
                    numfailures: 1,
                    write_type: WriteType::Simple,
                },
                ErrorKind::Failure,
            ),
            (
                CqlError::ReadFailure {
                    consistency: Consistency::Quorum,
                    received: 1,
                    required: 2,
                    numfailures: 1,
                    data_present: false,
                },
                ErrorKind::Unavailable,
            ),
            (CqlError::SyntaxError, ErrorKind::Other),
            (CqlError::AuthenticationError, ErrorKind::Connection),
            (
                CqlError::RateLimitReached {
                    op_type: OperationType::Write,
                    rejected_by_coordinator: true,
                },
                ErrorKind::Unavailable,
            ),
        ];
        for (error, kind) in cases {
            let label = format!("{error:?}");
            assert_eq!(classify_kind(&db(error)), kind, "{label}");
        }
    }

    /// The driver's own errors sort too; only what a server said carries its code, so
    /// a store said unavailable by a server was reached, one with no node to send to
    /// was not.
    #[test]
    fn driver_errors_sort_into_kinds_and_only_a_servers_carry_a_code() {
        use scylla::errors::WriteType;
        let timeout = classify(db(CqlError::WriteTimeout {
            consistency: Consistency::All,
            received: 2,
            required: 3,
            write_type: WriteType::Simple,
        }));
        assert_eq!(timeout.code.as_deref(), Some("WriteTimeout"));
        let client_side = classify(ExecutionError::RequestTimeout(
            std::time::Duration::from_secs(1),
        ));
        assert_eq!(client_side.code, None, "the server said nothing");
        assert_eq!(
            classify_kind(&ExecutionError::RequestTimeout(
                std::time::Duration::from_secs(1)
            )),
            ErrorKind::Timeout
        );
        assert_eq!(
            classify_kind(&ExecutionError::EmptyPlan),
            ErrorKind::Unavailable
        );
        assert_eq!(
            classify_kind(&ExecutionError::LastAttemptError(
                RequestAttemptError::UnableToAllocStreamId
            )),
            ErrorKind::Connection
        );
        let said_unavailable = classify(db(CqlError::Unavailable {
            consistency: Consistency::All,
            required: 3,
            alive: 2,
        }));
        assert!(!said_unavailable.reached_no_server());
        assert!(classify(ExecutionError::EmptyPlan).reached_no_server());
    }
}
