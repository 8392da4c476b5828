//! What every store shares when it sorts errors into kinds: operating-system I/O errors.
//! Each store's own codes are sorted by a pure function in its own file.

use std::io;

use super::ErrorKind;

/// An I/O error from a socket: a timeout is `timeout`, anything else about the
/// connection is `connection`.
pub fn io_kind(error: &io::Error) -> ErrorKind {
    match error.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => ErrorKind::Timeout,
        _ => ErrorKind::Connection,
    }
}

/// The first `io::Error` in an error's chain of sources, if any.
pub fn find_io<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(io) = e.downcast_ref::<io::Error>() {
            return Some(io);
        }
        current = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_errors_are_timeouts_or_connection() {
        let timeout = io::Error::new(io::ErrorKind::TimedOut, "slow");
        assert_eq!(io_kind(&timeout), ErrorKind::Timeout);
        let refused = io::Error::new(io::ErrorKind::ConnectionRefused, "no");
        assert_eq!(io_kind(&refused), ErrorKind::Connection);
        let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "closed");
        assert_eq!(io_kind(&eof), ErrorKind::Connection);
    }
}
