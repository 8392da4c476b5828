//! "Did you mean" for every name a user types: workloads, studies, schemes, settings,
//! `--vary` names, a settings file's tables and keys.

/// ` (did you mean 'x'?)` for the candidate closest to `typed`, or nothing where none
/// is close: a word that differs in a letter or two, or in case, or is a prefix.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    match closest(typed, candidates) {
        Some(name) => format!(" (did you mean '{name}'?)"),
        None => String::new(),
    }
}

/// The candidate closest to `typed`, where one is close enough to be the one meant.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.trim().to_lowercase();
    if typed.is_empty() {
        return None;
    }
    candidates
        .into_iter()
        .filter_map(|name| {
            let lower = name.to_lowercase();
            let score = if lower.starts_with(&typed) && typed.len() >= 3 {
                0.95
            } else {
                strsim::jaro_winkler(&typed, &lower)
            };
            (score >= 0.8).then_some((score, name))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_name_is_suggested_and_a_far_one_is_not() {
        let names = [
            "hatshop-random",
            "hatshop-orders",
            "kv-read-heavy",
            "sqlite",
            "run",
        ];
        assert_eq!(closest("hatshop-randm", names), Some("hatshop-random"));
        assert_eq!(closest("sqlit", names), Some("sqlite"));
        assert_eq!(closest("SQLITE", names), Some("sqlite"));
        assert_eq!(closest("runn", names), Some("run"));
        assert_eq!(closest("kv-read", names), Some("kv-read-heavy"));
        assert_eq!(closest("postgres", names), None);
        assert_eq!(closest("", names), None);
        assert_eq!(did_you_mean("xyz", names), "");
        assert_eq!(did_you_mean("sqlit", names), " (did you mean 'sqlite'?)");
    }
}
