//! Where a URL's credentials stand in its text (the values of `password=`, the `@` that
//! ends the userinfo), and the one redaction that hides them in any message.

use crate::secrets::MASK;

/// Byte ranges of the values of `password=` in the query (they may hold `@`).
pub(super) fn query_password_spans(rest: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for marker in ["?password=", "&password="] {
        let mut from = 0;
        while let Some(found) = rest[from..].find(marker) {
            let start = from + found + marker.len();
            let end = rest[start..].find('&').map_or(rest.len(), |e| start + e);
            spans.push((start, end));
            from = start;
        }
    }
    spans
}

/// The `@` that ends the credentials: the last one, outside a `password=` value, that
/// is followed by a list of hosts.
pub(super) fn userinfo_end(rest: &str, password_spans: &[(usize, usize)]) -> Option<usize> {
    rest.char_indices()
        .filter(|&(i, c)| c == '@' && !password_spans.iter().any(|&(s, e)| i >= s && i < e))
        .map(|(i, _)| i)
        .rfind(|&i| {
            let after = &rest[i + 1..];
            let hosts = after.split(['/', '?']).next().unwrap_or("");
            is_host_list(hosts)
        })
}

fn is_host_list(text: &str) -> bool {
    !text.is_empty()
        && text.split(',').all(|host| {
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
        })
}

/// A URL as a message may show it, parsed or not: the one redaction for URL text.
/// Masked are the values of `password=`, everything before the last `@` (the
/// credentials), and a port that is not a number (`user:password` with its `@`
/// forgotten reads as host `user`, port `password`).
pub fn shown(raw: &str) -> String {
    let (prefix, rest) = match raw.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), raw),
    };
    let mut spans = query_password_spans(rest);
    spans.sort_unstable();
    let mut masked = String::new();
    let mut from = 0;
    for (start, end) in spans {
        masked.push_str(&rest[from..start]);
        masked.push_str(MASK);
        from = end;
    }
    masked.push_str(&rest[from..]);
    let (credentials, after) = match masked.rfind('@') {
        Some(at) => (format!("{MASK}@"), &masked[at + 1..]),
        None => (String::new(), masked.as_str()),
    };
    let end = after.find(['/', '?']).unwrap_or(after.len());
    let hosts: Vec<String> = after[..end]
        .split(',')
        .map(|host| match host.rsplit_once(':') {
            Some((name, port))
                if !host.ends_with(']') && !port.chars().all(|c| c.is_ascii_digit()) =>
            {
                format!("{name}:{MASK}")
            }
            _ => host.to_string(),
        })
        .collect();
    format!("{prefix}{credentials}{}{}", hosts.join(","), &after[end..])
}

/// Whether `rest` holds an `@` outside the values of `password=`.
pub(super) fn has_at_outside(rest: &str, password_spans: &[(usize, usize)]) -> bool {
    rest.char_indices()
        .any(|(i, c)| c == '@' && !password_spans.iter().any(|&(s, e)| i >= s && i < e))
}
