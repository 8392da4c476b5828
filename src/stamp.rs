//! Time as hatshop writes it down: one format for every record and one for names.

use std::time::SystemTime;

/// `at` in RFC 3339, UTC, to the millisecond, as run.json and every record write times.
pub fn rfc3339(at: SystemTime) -> String {
    humantime::format_rfc3339_millis(at).to_string()
}

/// A time [`rfc3339`] wrote, read back.
pub fn parse(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text).ok()
}

/// Now, as [`rfc3339`] writes it.
pub fn now() -> String {
    rfc3339(SystemTime::now())
}

/// `20261121-224501`: now, to the second, sortable, for folder names and run ids.
pub fn for_names() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now())
        .to_string()
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect::<String>()
        .replace('T', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_have_their_shapes() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(1_795_804_792_123);
        assert_eq!(rfc3339(at), "2026-11-27T18:39:52.123Z");
        let name = for_names();
        assert_eq!(name.len(), 15, "{name}");
        assert_eq!(&name[8..9], "-");
    }
}
