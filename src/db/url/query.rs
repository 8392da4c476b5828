//! A URL's query, `?key=value&…`: its settings, and a user and password where it names
//! them; and the percent-decoding every part of a URL takes.

use std::collections::BTreeMap;

/// What a URL's query holds: settings, and a user and password if it names them.
pub(super) struct QuerySettings {
    pub(super) params: BTreeMap<String, String>,
    pub(super) user: Option<String>,
    pub(super) password: Option<String>,
}

/// Reads `?key=value&…`; `hides_password`: the URL carries a password, so a pair
/// that does not parse is not echoed (it may be a piece of the password).
pub(super) fn read_query(
    query: Option<&str>,
    scheme: &str,
    hides_password: bool,
) -> Result<QuerySettings, String> {
    let mut settings = QuerySettings {
        params: BTreeMap::new(),
        user: None,
        password: None,
    };
    for pair in query.into_iter().flat_map(split_query) {
        let Some((k, v)) = pair.split_once('=') else {
            let shown = if hides_password {
                "a setting".to_string()
            } else {
                format!("setting '{pair}'")
            };
            return Err(format!(
                "{shown} in the query of a {scheme}:// URL needs a value (key=value; \
                 percent-encode & in a password as %26)"
            ));
        };
        match k {
            "password" => settings.password = Some(v.to_string()),
            "user" => settings.user = Some(percent_decode(v)),
            _ => {
                // `ssl-mode` and `ssl_mode` are one setting: MySQL's tools write the
                // first, flags and run.json the second.
                let key = percent_decode(k).replace('-', "_");
                settings.params.insert(key, percent_decode(v));
            }
        }
    }
    Ok(settings)
}

/// Query pairs; a pair that is a password's value may contain `&`-free text only.
fn split_query(query: &str) -> impl Iterator<Item = &str> {
    query.split('&').filter(|p| !p.is_empty())
}

/// Text with `%XX` escapes decoded, as URLs carry them; an escape that is not one is
/// kept as it stands.
pub(super) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
