//! The `[section]` and `key = value` lines that clients' own settings files are written
//! in (cqlsh's cqlshrc, libpq's pg_service.conf): blank lines and `#` or `;` comments
//! passed over, names and values trimmed. Each store reads its own file's names from
//! what this gives, in the case its client compares them.

use std::collections::BTreeMap;

/// Each section's `key = value` lines, by section name.
pub type Sections = BTreeMap<String, BTreeMap<String, String>>;

/// How a client's file is written: what separates a key from its value, and whether
/// names are compared without case (cqlsh's configparser) or as written (libpq).
#[derive(Clone, Copy)]
pub struct Dialect {
    pub separators: &'static [char],
    pub fold_case: bool,
}

/// The file's sections; lines before the first section stand in the one named "".
pub fn sections(text: &str, dialect: Dialect) -> Sections {
    let fold = |name: &str| match dialect.fold_case {
        true => name.trim().to_ascii_lowercase(),
        false => name.trim().to_string(),
    };
    let mut out = Sections::new();
    let mut current = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = fold(name);
            continue;
        }
        if let Some((key, value)) = line.split_once(dialect.separators) {
            out.entry(current.clone())
                .or_default()
                .insert(fold(key), value.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_hold_their_lines_in_each_dialect() {
        let text = "# a comment\n[Shop]\nUser = ada\n; another\nport: 5\n\n[other]\nx=1\n";
        let folded = sections(
            text,
            Dialect {
                separators: &['=', ':'],
                fold_case: true,
            },
        );
        assert_eq!(folded["shop"]["user"], "ada");
        assert_eq!(folded["shop"]["port"], "5");
        let kept = sections(
            text,
            Dialect {
                separators: &['='],
                fold_case: false,
            },
        );
        assert_eq!(kept["Shop"]["User"], "ada");
        assert!(!kept["Shop"].contains_key("port"));
        assert_eq!(kept["other"]["x"], "1");
    }
}
