//! A study file read: by a built-in study's name or a path, parsed with every error
//! naming the file, the line and the key (and what a mistyped key may have meant),
//! and checked whole before anything runs: its parts, candidates and figures agree,
//! and every cell is a command hatshop takes.

use std::path::Path;

use anyhow::{Result, anyhow, bail};

use super::{BUILT_IN, Study, built_in};
use crate::cli::Cli;

/// The study `name_or_path` names: a built-in study's name, or a study file (a path
/// with a '/' or ending in .toml, or any other path that exists).
pub fn open(name_or_path: &str) -> Result<Study> {
    let path = Path::new(name_or_path);
    let looks_like_a_file = name_or_path.contains('/') || name_or_path.ends_with(".toml");
    let text = match built_in(name_or_path) {
        Some(text) if !looks_like_a_file => text.to_string(),
        _ if looks_like_a_file || path.exists() => {
            crate::files::read_bounded_text(path, crate::files::SETTINGS_FILE_LIMIT)
                .map_err(|e| anyhow!("cannot read {name_or_path}: {e}"))?
        }
        _ => {
            let names = BUILT_IN.iter().map(|(n, _)| *n);
            bail!(
                "no study named '{name_or_path}'{}: the studies are {}; or give a study \
                 file (docs/studies.md)",
                crate::suggest::did_you_mean(name_or_path, names.clone()),
                names.collect::<Vec<_>>().join(", ")
            );
        }
    };
    parse(&text, name_or_path)
}

/// A study from its file's `text`; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> Result<Study> {
    let study: Study = toml::from_str(text).map_err(|e| located(&e, text, origin))?;
    study.check().map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(study)
}

/// A parse error as one line: the file, the line, the key, and the message, an
/// unknown key's with the key it may have meant.
fn located(error: &toml::de::Error, text: &str, origin: &str) -> anyhow::Error {
    let message = error.message().trim();
    let Some(span) = error.span() else {
        return anyhow!("{origin}: {message}");
    };
    let before = text.get(..span.start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let source = text.lines().nth(line - 1).unwrap_or_default();
    if let Some(unknown) = unknown_key(message) {
        return anyhow!("{origin}: line {line}: {unknown}");
    }
    match source.split_once('=') {
        Some((key, _)) if !key.trim().starts_with('[') => {
            anyhow!("{origin}: line {line}: {}: {message}", key.trim())
        }
        _ => anyhow!("{origin}: line {line}: {message}"),
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" as hatshop says it.
fn unknown_key(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (key, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    Some(format!(
        "unknown key '{key}'{}; the keys here are {}",
        crate::suggest::did_you_mean(key, expected.iter().copied()),
        expected.join(", ")
    ))
}

impl Study {
    /// That its parts, candidates and figures agree, and that its cells are commands
    /// hatshop takes, at full scale and at a small one.
    fn check(&self) -> Result<(), String> {
        for bound in &self.slo {
            crate::cli::threshold::threshold(bound).map_err(|e| format!("slo: {e}"))?;
        }
        let parts: Vec<&str> = self.parts.iter().map(|p| p.id.as_str()).collect();
        let known_part = |part: &str, what: &str| {
            if parts.contains(&part) {
                Ok(())
            } else {
                Err(format!(
                    "{what}: no part named '{part}'{}",
                    crate::suggest::did_you_mean(part, parts.iter().copied())
                ))
            }
        };
        for figure in &self.figures {
            known_part(&figure.part, &format!("figure '{}'", figure.title))?;
            for also in &figure.also {
                known_part(also, &format!("figure '{}'", figure.title))?;
            }
        }
        for scale in [1.0, 0.05] {
            let cells = self.cells(scale)?;
            let mut ids = std::collections::HashSet::new();
            for cell in &cells {
                known_part(&cell.part, &format!("cell {}", cell.id))?;
                if !ids.insert(cell.id.as_str()) {
                    return Err(format!(
                        "two cells are named {}: give their group an id with the axes' \
                         {{settings}} in it",
                        cell.id
                    ));
                }
                let argv = cell.argv(crate::db::DEFAULT_URL, Path::new("x"), Path::new("h"));
                Cli::from_command_line(&argv).map_err(|e| {
                    let said = e.to_string();
                    let first = said.lines().next().unwrap_or_default().to_string();
                    format!("cell {}: hatshop {} refuses it: {first}", cell.id, argv[1])
                })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
name = "mine"
title = "PostgreSQL or MariaDB"
question = "Which answers our reads faster?"

[[parts]]
id = "reads"
title = "Reads"
about = "Point reads."

[candidates.pg]
server = "postgres"

[[cells]]
part = "reads"
set = { workload = "kv-read", events = 1000 }
"#;

    #[test]
    fn a_small_file_makes_a_cell_per_candidate() {
        let study = parse(SMALL, "mine.toml").unwrap();
        let cells = study.cells(1.0).unwrap();
        assert_eq!(cells.len(), 1);
        assert_eq!(cells[0].id, "reads-pg");
        assert_eq!(
            cells[0].shown(),
            "hatshop run -w kv-read --events 1000 --min-duration 20s --db '<postgres>'"
        );
    }

    #[test]
    fn a_mistyped_key_is_named_with_its_line_and_what_it_may_have_meant() {
        let typo = SMALL.replace("part = \"reads\"\nset", "prat = \"reads\"\nset");
        let error = parse(&typo, "mine.toml").unwrap_err().to_string();
        assert!(error.starts_with("mine.toml: line "), "{error}");
        assert!(
            error.contains("unknown key 'prat' (did you mean 'part'?)"),
            "{error}"
        );
        let flag = SMALL.replace("events = 1000", "evnets = 1000");
        let error = parse(&flag, "mine.toml").unwrap_err().to_string();
        assert!(error.contains("a run needs events"), "{error}");
        let bad = SMALL.replace("events = 1000 }", "events = 1000, concurrenc = 4 }");
        let error = parse(&bad, "mine.toml").unwrap_err().to_string();
        assert!(error.contains("--concurrenc"), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }

    #[test]
    fn a_candidates_own_settings_are_laid_last_and_one_for_no_candidate_is_refused() {
        let own = format!("{SMALL}\n[cells.for.pg]\nconcurrency = 3\n");
        let cells = parse(&own, "mine.toml").unwrap().cells(1.0).unwrap();
        assert!(
            cells[0].shown().contains("--concurrency 3"),
            "{}",
            cells[0].shown()
        );
        let stray = format!("{SMALL}\n[cells.for.pgg]\nconcurrency = 3\n");
        let error = parse(&stray, "mine.toml").unwrap_err().to_string();
        assert!(
            error.contains("[cells.for.pgg] names no candidate"),
            "{error}"
        );
        assert!(error.contains("did you mean 'pg'"), "{error}");
    }

    #[test]
    fn a_cell_of_a_part_the_study_lacks_is_refused() {
        let other = SMALL.replace("part = \"reads\"\nset", "part = \"read\"\nset");
        let error = parse(&other, "mine.toml").unwrap_err().to_string();
        assert!(
            error.contains("no part named 'read' (did you mean 'reads'?)"),
            "{error}"
        );
    }
}
