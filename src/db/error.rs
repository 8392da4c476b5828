//! Errors as values with a kind: the runner counts them per (event type, kind) and
//! decides by kind, never by message text.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No answer in time: the outcome is unknown (the write may still have happened).
    Timeout,
    /// The database refused at once because too few replicas or nodes are up.
    Unavailable,
    /// A concurrent change won (deadlock, certification failure, lost race).
    Conflict,
    /// A constraint refused the change (duplicate key, foreign key).
    Constraint,
    /// The connection failed or was lost.
    Connection,
    /// The order the event targets was not there.
    NotFound,
    /// A read returned something other than what the event stream says it must.
    WrongResult,
    Other,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Timeout => "timeout",
            ErrorKind::Unavailable => "unavailable",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Constraint => "constraint",
            ErrorKind::Connection => "connection",
            ErrorKind::NotFound => "not_found",
            ErrorKind::WrongResult => "wrong_result",
            ErrorKind::Other => "other",
        }
    }
}

/// One failed database call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct DbError {
    pub kind: ErrorKind,
    pub message: String,
}

impl DbError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        DbError {
            kind,
            message: message.into(),
        }
    }
}
