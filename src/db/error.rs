//! Errors as values with a kind: the runner counts them per (event type, kind) and
//! decides by kind, never by message text.

use serde::{Deserialize, Serialize};

/// Why an operation failed, in kinds every store sorts its errors into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No answer in time: the outcome is unknown (the write may still have happened).
    Timeout,
    /// The database refused at once because too few replicas or nodes are up.
    Unavailable,
    /// A concurrent change won (deadlock, certification failure, lost race); rolled back.
    Conflict,
    /// A constraint refused the change (duplicate key, foreign key).
    Constraint,
    /// The connection failed or was lost: if mid-request, the outcome is unknown.
    Connection,
    /// The order or key a write targets was not there.
    NotFound,
    /// A read returned an older state than the stream says it must.
    Stale,
    /// A read returned nothing where the stream says something must be.
    Missing,
    /// A read returned something that no state of the stream explains.
    WrongResult,
    /// A replica or the server failed mid-request (Cassandra's WriteFailure): the
    /// outcome is unknown.
    Failure,
    /// The run stopped (Ctrl-C, deadline) while the call was in flight: outcome unknown.
    Cancelled,
    Other,
}

impl ErrorKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::Timeout,
        ErrorKind::Unavailable,
        ErrorKind::Conflict,
        ErrorKind::Constraint,
        ErrorKind::Connection,
        ErrorKind::NotFound,
        ErrorKind::Stale,
        ErrorKind::Missing,
        ErrorKind::WrongResult,
        ErrorKind::Failure,
        ErrorKind::Cancelled,
        ErrorKind::Other,
    ];

    /// The kind's name in the op log, summary.json and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Constraint => "constraint",
            ErrorKind::Connection => "connection",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Stale => "stale",
            ErrorKind::Missing => "missing",
            ErrorKind::WrongResult => "wrong_result",
            ErrorKind::Failure => "failure",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Other => "other",
        }
    }

    /// The kind a name in a result file names.
    pub fn parse(name: &str) -> Option<ErrorKind> {
        Self::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether a write that failed this way may still have been applied.
    pub fn outcome_unknown(self) -> bool {
        matches!(
            self,
            ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::Failure | ErrorKind::Cancelled
        )
    }
}

/// One failed database call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
    /// The server's own name for the error, when it gave one: MySQL/MariaDB's error
    /// number (`1213`), PostgreSQL's SQLSTATE (`40001`), Cassandra's error
    /// (`WriteTimeout`). Counted apart in the summary; the message keeps it too.
    pub code: Option<String>,
}

/// The longest message an error keeps: a server's message is input, and one of
/// megabytes would fill the terminal, run.json and every page that shows it.
const MESSAGE_LIMIT: usize = 2000;

/// `message` cut to [`MESSAGE_LIMIT`] bytes (at a character's edge), saying so.
fn bounded(mut message: String) -> String {
    if message.len() <= MESSAGE_LIMIT {
        return message;
    }
    let total = message.len();
    let mut end = MESSAGE_LIMIT;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push_str(&format!("… (cut: the message was {total} bytes)"));
    message
}

impl DbError {
    /// The message is scrubbed of registered passwords (it may come from a driver) and
    /// cut to a length a person reads.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        let message = bounded(message.into());
        let message = match crate::secrets::redact(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(clean) => clean,
        };
        DbError {
            kind,
            message,
            code: None,
        }
    }

    /// The same error with the server's code for it.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// An error of no particular kind.
    pub fn other(message: impl std::fmt::Display) -> Self {
        DbError::new(ErrorKind::Other, message.to_string())
    }

    /// Whether no server answered at all: the client could not connect, or had no
    /// connection to send on (unavailable with no server's code). A server that says
    /// it is unavailable, or times out, answered.
    pub fn reached_no_server(&self) -> bool {
        match self.kind {
            ErrorKind::Connection => true,
            ErrorKind::Unavailable => self.code.is_none(),
            _ => false,
        }
    }

    /// The same error with `context: ` before its message.
    pub fn context(self, context: impl std::fmt::Display) -> Self {
        DbError {
            message: format!("{context}: {}", self.message),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_message_is_cut_and_says_so() {
        let huge = "é".repeat(3_000_000);
        let error = DbError::new(ErrorKind::Other, huge);
        assert!(
            error.message.len() < MESSAGE_LIMIT + 100,
            "{}",
            error.message.len()
        );
        assert!(
            error
                .message
                .ends_with("(cut: the message was 6000000 bytes)")
        );
        assert_eq!(DbError::other("short").message, "short");
    }
}
