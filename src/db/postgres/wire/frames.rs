//! What PostgreSQL sends, read from bytes alone: where a message ends, a row's first
//! column, a command tag's row count, an error. Every length is checked against what
//! arrived before it is used; nothing here can panic or allocate more than it was sent.

use super::super::errors::kind_of_sqlstate;
use crate::db::{DbError, ErrorKind};

/// PostgreSQL's own limit on a message it accepts (PQ_LARGE_MESSAGE_LIMIT): a longer
/// length is a stream hatshop cannot read.
const MAX_MESSAGE: i32 = 0x3FFF_FFFF;

/// The tag and whole length (tag and length field included) of the first message in
/// `buf`; `None` while it has not all arrived. A length no message can have is an
/// error: the connection cannot be read on.
pub fn frame(buf: &[u8]) -> Result<Option<(u8, usize)>, DbError> {
    let Some(header) = buf.get(..5) else {
        return Ok(None);
    };
    let len = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    if !(4..=MAX_MESSAGE).contains(&len) {
        return Err(garbled(format!(
            "a message '{}' of length {len}",
            header[0].escape_ascii()
        )));
    }
    let whole = 1 + len as usize;
    Ok((buf.len() >= whole).then_some((header[0], whole)))
}

/// A DataRow's first column (`None` when it is NULL); an error where the row is cut.
pub fn first_column(body: &[u8]) -> Result<Option<Vec<u8>>, DbError> {
    let cut = || garbled("a row cut short".into());
    let columns = i16::from_be_bytes([
        *body.first().ok_or_else(cut)?,
        *body.get(1).ok_or_else(cut)?,
    ]);
    if columns < 1 {
        return Ok(None);
    }
    let len = i32::from_be_bytes(
        body.get(2..6)
            .ok_or_else(cut)?
            .try_into()
            .map_err(|_| cut())?,
    );
    if len < 0 {
        return Ok(None);
    }
    let value = body.get(6..6 + len as usize).ok_or_else(cut)?;
    Ok(Some(value.to_vec()))
}

/// The rows a CommandComplete tag counts: its last word ("SELECT 1", "INSERT 0 1").
pub fn command_rows(body: &[u8]) -> u64 {
    let end = body
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    let last_word = body[..end]
        .rsplit(|&b| b == b' ')
        .next()
        .unwrap_or_default();
    // Digit by digit, with no pass through text: this runs on every read's tag.
    last_word
        .iter()
        .try_fold(0u64, |n, &b| {
            let digit = b.is_ascii_digit().then(|| u64::from(b - b'0'))?;
            n.checked_mul(10)?.checked_add(digit)
        })
        .unwrap_or(0)
}

/// An ErrorResponse as tokio-postgres's errors read: "SEVERITY: message (SQLSTATE code)".
pub fn server_error(body: &[u8]) -> DbError {
    let (mut severity, mut code, mut message) = (String::new(), String::new(), String::new());
    for field in body.split(|&b| b == 0) {
        let Some((&kind, text)) = field.split_first() else {
            continue;
        };
        let text = String::from_utf8_lossy(text).into_owned();
        match kind {
            b'S' => severity = text,
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    DbError::new(
        kind_of_sqlstate(&code),
        format!("{severity}: {message} (SQLSTATE {code})"),
    )
    .with_code(code)
}

/// An Authentication message's code and the rest of its body.
pub fn auth_request(body: &[u8]) -> Result<(i32, &[u8]), DbError> {
    let code = body
        .get(..4)
        .ok_or_else(|| garbled("an authentication request cut short".into()))?;
    Ok((
        i32::from_be_bytes([code[0], code[1], code[2], code[3]]),
        &body[4..],
    ))
}

/// The names in a list of SASL mechanisms, each ended by a zero byte.
pub fn mechanisms(list: &[u8]) -> Vec<String> {
    list.split(|&b| b == 0)
        .filter(|name| !name.is_empty())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect()
}

/// A reply hatshop cannot read: the connection is dropped.
pub fn garbled(what: String) -> DbError {
    DbError::new(
        ErrorKind::Connection,
        format!("PostgreSQL sent {what}, which hatshop cannot read: the connection is dropped"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_read_as_the_driver_reads_them() {
        assert_eq!(command_rows(b"SELECT 1\0"), 1);
        assert_eq!(command_rows(b"INSERT 0 1\0"), 1);
        assert_eq!(command_rows(b"DELETE 0\0"), 0);
        assert_eq!(command_rows(b"UPDATE 12"), 12);
        assert_eq!(command_rows(b"UPDATE 18446744073709551616\0"), 0);
        for garbled in [&b""[..], b"\0\0", b"SELECT \xff1\0", b"SELECT x\0"] {
            assert_eq!(command_rows(garbled), 0, "{garbled:?}");
        }
        let mut row = 1i16.to_be_bytes().to_vec();
        row.extend_from_slice(&3i32.to_be_bytes());
        row.extend_from_slice(b"abc");
        assert_eq!(first_column(&row).unwrap(), Some(b"abc".to_vec()));
        assert!(first_column(&row[..7]).is_err(), "a value cut short");
        let mut null = 1i16.to_be_bytes().to_vec();
        null.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(first_column(&null).unwrap(), None);
        let error = server_error(b"SERROR\0VERROR\0C23505\0Mduplicate key\0\0");
        assert_eq!(error.kind, ErrorKind::Constraint);
        assert_eq!(error.message, "ERROR: duplicate key (SQLSTATE 23505)");
    }

    #[test]
    fn a_message_is_framed_only_when_whole_and_only_with_a_length_it_can_have() {
        assert_eq!(frame(b"Z\0\0\0\x05I").unwrap(), Some((b'Z', 6)));
        assert_eq!(frame(b"Z\0\0\0\x05").unwrap(), None);
        assert_eq!(frame(b"Z\0\0").unwrap(), None);
        assert!(
            frame(b"Z\0\0\0\x03").is_err(),
            "shorter than its own length"
        );
        assert!(
            frame(b"D\x7f\xff\xff\xff").is_err(),
            "longer than PostgreSQL sends"
        );
        assert!(frame(b"D\xff\xff\xff\xff").is_err(), "negative");
    }
}
