//! The pieces of MySQL's protocol that need no connection: the greeting, the password
//! scramble, length-encoded fields, column definitions and errors as mysql_async's.

use mysql_async::{DriverError, Error, IoError, ServerError};

type Result<T> = std::result::Result<T, Error>;

/// The server's greeting (protocol 10): its capabilities, MariaDB's own, the nonce
/// and the plugin it names.
pub(super) struct Greeting {
    pub(super) caps: u32,
    pub(super) mariadb_caps: u32,
    pub(super) nonce: Vec<u8>,
    pub(super) plugin: String,
}

impl Greeting {
    pub(super) fn parse(packet: &[u8]) -> Result<Greeting> {
        match packet.first() {
            Some(10) => {}
            Some(0xFF) => return Err(server_error(packet)),
            _ => return Err(unexpected(packet)),
        }
        let bad = || unexpected(packet);
        let version_end = 1 + packet[1..].iter().position(|&b| b == 0).ok_or_else(bad)?;
        // After the version: connection id (4), nonce part 1 (8), filler (1), the
        // capabilities' low half, charset, status, high half, nonce length, 6 bytes of
        // filler, MariaDB's capabilities, nonce part 2, the plugin's name.
        let at = version_end + 1 + 4;
        let mut nonce = packet.get(at..at + 8).ok_or_else(bad)?.to_vec();
        let field = packet.get(at + 9..at + 9 + 18).ok_or_else(bad)?;
        let low = u16::from_le_bytes([field[0], field[1]]) as u32;
        let high = u16::from_le_bytes([field[5], field[6]]) as u32;
        let mariadb_caps = u32::from_le_bytes([field[14], field[15], field[16], field[17]]);
        let rest = &packet[at + 9 + 18..];
        let part2 = 12.min(rest.len());
        nonce.extend_from_slice(&rest[..part2]);
        let plugin = rest.get(part2 + 1..).unwrap_or_default();
        let plugin = plugin.strip_suffix(&[0]).unwrap_or(plugin);
        Ok(Greeting {
            caps: low | high << 16,
            mariadb_caps,
            nonce,
            plugin: String::from_utf8_lossy(plugin).into_owned(),
        })
    }
}

/// The body length and sequence number of the first packet in `buf`, `None` while it
/// has not all arrived. A body that goes on in a next packet (16 MiB or more: a row no
/// key-value table of hatshop's holds) is refused.
pub(super) fn packet_len(buf: &[u8]) -> Result<Option<(usize, u8)>> {
    let Some(header) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_le_bytes([header[0], header[1], header[2], 0]) as usize;
    if len == super::MAX_BODY {
        return Err(Error::Driver(DriverError::PacketTooLarge));
    }
    Ok((buf.len() >= 4 + len).then_some((len, header[3])))
}

/// Whether a column definition's type is one whose binary value is length-encoded
/// bytes (strings, blobs, decimals, JSON and the like).
pub(super) fn column_is_bytes(definition: &[u8]) -> bool {
    // Six length-encoded strings (catalog, schema, table, original table, name,
    // original name), the fixed fields' length, charset (2), length (4), type.
    let mut at = 0;
    for _ in 0..6 {
        if lenenc_bytes(definition, &mut at).is_none() {
            return false;
        }
    }
    let kind = definition.get(at + 1 + 2 + 4).copied();
    matches!(kind, Some(0x0F | 0xF5..=0xFE))
}

pub(super) fn put_lenenc(out: &mut Vec<u8>, n: u64) {
    match n {
        0..251 => out.push(n as u8),
        251..0x1_0000 => {
            out.push(0xFC);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        0x1_0000..0x100_0000 => {
            out.push(0xFD);
            out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&n.to_le_bytes());
        }
    }
}

/// The length-encoded integer at `at`, moving `at` past it.
pub(super) fn lenenc(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let first = *bytes.get(*at)?;
    let width = match first {
        0xFC => 2,
        0xFD => 3,
        0xFE => 8,
        0xFB | 0xFF => return None,
        n => {
            *at += 1;
            return Some(n as u64);
        }
    };
    let field = bytes.get(*at + 1..*at + 1 + width)?;
    let mut le = [0u8; 8];
    le[..width].copy_from_slice(field);
    *at += 1 + width;
    Some(u64::from_le_bytes(le))
}

/// The length-encoded string at `at`, moving `at` past it.
pub(super) fn lenenc_bytes<'a>(bytes: &'a [u8], at: &mut usize) -> Option<&'a [u8]> {
    let len = lenenc(bytes, at)? as usize;
    let field = bytes.get(*at..*at + len)?;
    *at += len;
    Some(field)
}

/// An ERR packet as mysql_async's `ServerError`.
pub(super) fn server_error(packet: &[u8]) -> Error {
    let code = packet
        .get(1..3)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .unwrap_or(0);
    let rest = packet.get(3..).unwrap_or_default();
    let (state, message) = match rest.strip_prefix(b"#") {
        Some(rest) if rest.len() >= 5 => (&rest[..5], &rest[5..]),
        _ => (&b"HY000"[..], rest),
    };
    Error::Server(ServerError {
        code,
        message: String::from_utf8_lossy(message).into_owned(),
        state: String::from_utf8_lossy(state).into_owned(),
    })
}

pub(super) fn unexpected(payload: &[u8]) -> Error {
    Error::Driver(DriverError::UnexpectedPacket {
        payload: payload.iter().take(64).copied().collect(),
    })
}

pub(super) fn io_error(error: std::io::Error) -> Error {
    Error::Io(IoError::Io(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_encoded_integers_read_back_what_was_written() {
        for n in [0, 250, 251, 65_535, 65_536, 0xFF_FFFF, 0x100_0000, u64::MAX] {
            let mut out = Vec::new();
            put_lenenc(&mut out, n);
            let mut at = 0;
            assert_eq!(lenenc(&out, &mut at), Some(n), "{n}");
            assert_eq!(at, out.len());
        }
        assert_eq!(lenenc(&[0xFC, 1], &mut 0), None, "cut short");
    }

    #[test]
    fn a_packet_is_framed_only_when_whole() {
        assert_eq!(packet_len(&[1, 0, 0, 7, 0xFE]).unwrap(), Some((1, 7)));
        assert_eq!(packet_len(&[2, 0, 0, 7, 0xFE]).unwrap(), None);
        assert_eq!(packet_len(&[2, 0]).unwrap(), None);
        assert!(packet_len(&[0xFF, 0xFF, 0xFF, 0]).is_err());
    }

    #[test]
    fn server_errors_keep_code_state_and_message() {
        let mut packet = vec![0xFF, 0x7A, 0x04, b'#'];
        packet.extend_from_slice(b"42S02Table 'x' doesn't exist");
        let Error::Server(e) = server_error(&packet) else {
            panic!("not a server error")
        };
        assert_eq!((e.code, e.state.as_str()), (1146, "42S02"));
        assert_eq!(e.message, "Table 'x' doesn't exist");
    }
}
