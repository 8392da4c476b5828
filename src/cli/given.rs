//! The flags a command line gave a subcommand, as words, read by the subcommand's own
//! definitions: what a sweep hands each of its runs.

use super::Cli;

/// The words after subcommand `name` in `argv`, without the flags whose ids are in
/// `left_out` (each with its value, however given: `--out d`, `--out=d`, `-o d`,
/// `-od`, and a switch's `--no-` form).
pub fn flags_without(argv: &[String], name: &str, left_out: &[&str]) -> Vec<String> {
    let command = Cli::definitions();
    let Some(sub) = command.find_subcommand(name) else {
        return Vec::new();
    };
    let Some(start) = argv.iter().skip(1).position(|w| w == name) else {
        return Vec::new();
    };
    let dropped = |id: &str| {
        let id = id.strip_prefix("no_").unwrap_or(id);
        left_out.contains(&id)
    };
    let mut kept = Vec::new();
    let mut words = argv[start + 2..].iter();
    while let Some(word) = words.next() {
        if word == "--" {
            kept.push(word.clone());
            kept.extend(words.by_ref().cloned());
            break;
        }
        let (arg, attached) = if let Some(long) = word.strip_prefix("--") {
            let (flag, value) = match long.split_once('=') {
                Some((flag, _)) => (flag, true),
                None => (long, false),
            };
            let arg = sub.get_arguments().find(|a| {
                a.get_long() == Some(flag)
                    || a.get_all_aliases().is_some_and(|old| old.contains(&flag))
            });
            (arg, value)
        } else if let Some(short) = word.strip_prefix('-').and_then(|s| s.chars().next()) {
            let arg = sub.get_arguments().find(|a| a.get_short() == Some(short));
            (arg, word.len() > 2)
        } else {
            (None, true)
        };
        let Some(arg) = arg else {
            // A word no flag names (a value clap will refuse, or a positional one).
            kept.push(word.clone());
            continue;
        };
        let takes_next =
            !attached && arg.get_action().takes_values() && !arg.is_require_equals_set();
        let value = if takes_next { words.next() } else { None };
        if !dropped(arg.get_id().as_str()) {
            kept.push(word.clone());
            kept.extend(value.cloned());
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_flags_left_out_go_with_their_values_however_given() {
        let argv = words(
            "hatshop sweep --vary rate=1,2 -c 4 --db sqlite://a.db --out=d -w hatshop-random \
             --verify --no-quiet --rate 5 --pool 3 -od2 --events 100",
        );
        let kept = flags_without(
            &argv,
            "sweep",
            &["vary", "db", "out", "verify", "quiet", "rate"],
        );
        assert_eq!(kept, words("-c 4 -w hatshop-random --pool 3 --events 100"));
    }
}
