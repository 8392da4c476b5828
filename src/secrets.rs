//! Passwords never leave the process. Every password hatshop parses is registered here,
//! and every text that reaches a terminal, a file or a report passes through
//! [`redact`], so a driver that echoes a URL or a password in an error cannot leak it.
//! URLs are also masked by structure: `DbUrl`'s `Display`, and in free text any
//! `scheme://user:password@…` (a URL given by mistake where a path or a name belongs is
//! never parsed, so its password was never registered), which also covers passwords too
//! short to scrub by value. Where a store reads a URL's lone user-info word as a
//! password (Redis), that word is masked too.

use std::borrow::Cow;
use std::sync::RwLock;

/// Shorter passwords are only masked in URLs: scrubbing "ab" from every message would
/// garble them.
const MIN_SCRUBBED: usize = 4;
/// What a password is shown as.
pub const MASK: &str = "***";

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());
/// Schemes whose URLs' lone user-info word (`scheme://WORD@host`) is a password.
static SECRET_USER_SCHEMES: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

/// Says that a URL of `scheme` with a lone user-info word carries a password there.
pub fn user_info_is_secret(scheme: &'static str) {
    let mut schemes = SECRET_USER_SCHEMES
        .write()
        .unwrap_or_else(|p| p.into_inner());
    if !schemes.contains(&scheme) {
        schemes.push(scheme);
    }
}

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

/// `text` with every registered password, and the password of every URL in it,
/// replaced by `***`.
pub fn redact(text: &str) -> Cow<'_, str> {
    let text = mask_url_credentials(text);
    let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    if !secrets.iter().any(|s| text.contains(s.as_str())) {
        return text;
    }
    let mut out = text.into_owned();
    for secret in secrets.iter() {
        out = out.replace(secret.as_str(), MASK);
    }
    Cow::Owned(out)
}

/// Free text with the password of each `scheme://user:password@host` in it masked (and
/// the lone user-info word of a scheme that reads it as one).
fn mask_url_credentials(text: &str) -> Cow<'_, str> {
    if !text.contains("://") {
        return Cow::Borrowed(text);
    }
    let schemes = SECRET_USER_SCHEMES
        .read()
        .unwrap_or_else(|p| p.into_inner());
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut changed = false;
    while let Some(at) = rest.find("://") {
        let (before, after) = (&rest[..at], &rest[at + 3..]);
        let scheme_start = before
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(0, |i| i + 1);
        let scheme = &before[scheme_start..];
        // The URL runs to the first blank or quote: a password with one of those in it
        // cannot be told from the text around it, and is scrubbed by value if at all.
        let end = after
            .find(|c: char| c.is_whitespace() || "'\"`<>".contains(c))
            .unwrap_or(after.len());
        let url = &after[..end];
        out.push_str(&rest[..at + 3]);
        match url.rfind('@') {
            Some(credentials_end) => {
                let info = &url[..credentials_end];
                let shown = match info.split_once(':') {
                    Some((user, password)) if password != MASK => format!("{user}:{MASK}"),
                    None if info != MASK && schemes.contains(&scheme) => MASK.to_string(),
                    _ => info.to_string(),
                };
                changed |= shown != info;
                out.push_str(&shown);
                out.push_str(&url[credentials_end..]);
            }
            None => out.push_str(url),
        }
        rest = &after[end..];
    }
    if !changed {
        return Cow::Borrowed(text);
    }
    out.push_str(rest);
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

    #[test]
    fn a_url_given_by_mistake_loses_its_password_and_keeps_the_rest() {
        user_info_is_secret("rediss-test");
        assert_eq!(
            redact("error: no result folder mysql://root:SECRETX@127.0.0.1/db"),
            "error: no result folder mysql://root:***@127.0.0.1/db"
        );
        assert_eq!(
            redact("'postgres://u:a:b@c@h:5/db' and rediss-test://WORD@h:1/0 and mysql://root@h"),
            "'postgres://u:***@h:5/db' and rediss-test://***@h:1/0 and mysql://root@h"
        );
        assert_eq!(
            redact("unexpected argument 'mysql://root:S@h/d' found"),
            "unexpected argument 'mysql://root:***@h/d' found"
        );
        assert!(matches!(redact("mysql://root:***@h"), Cow::Borrowed(_)));
        assert!(matches!(
            redact("see https://example.org/x"),
            Cow::Borrowed(_)
        ));
    }
}
