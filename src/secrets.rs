//! Passwords never leave the process. Every password hatshop parses is registered here,
//! and every text that reaches a terminal, a file or a report passes through
//! [`redact`], so a driver that echoes a URL or a password in an error cannot leak it.
//! URLs are also masked by structure (`DbUrl`'s `Display`), which covers passwords too
//! short to scrub from free text.

use std::borrow::Cow;
use std::sync::RwLock;

/// Shorter passwords are only masked in URLs: scrubbing "ab" from every message would
/// garble them.
const MIN_SCRUBBED: usize = 4;
/// What a password is shown as.
pub const MASK: &str = "***";

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers a password (as given and as decoded) so that it is scrubbed from all output.
pub fn register(secret: &str) {
    if secret.len() < MIN_SCRUBBED {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_string());
        // Longest first, so a secret that contains another is masked whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// `text` with every registered password replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut out = text.to_string();
    for secret in secrets.iter() {
        out = out.replace(secret.as_str(), MASK);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_scrubbed_and_short_ones_left() {
        register("s3cr/t?@pw");
        register("xy");
        assert_eq!(
            redact("Access denied for root using s3cr/t?@pw"),
            "Access denied for root using ***"
        );
        assert_eq!(redact("xy stays"), "xy stays");
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }
}
