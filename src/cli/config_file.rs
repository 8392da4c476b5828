//! Settings used every time, in a TOML file: `hatshop.toml` in the current folder, or
//! the file `--config FILE` names. A table per subcommand holds its flags by their long
//! names (`[run]` `concurrency = 8`, `db = "mysql://…"`). A flag given on the command
//! line wins, then its environment variable, then the file, then the default.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;

use super::Cli;

/// The file read when `--config` names none.
pub const DEFAULT_FILE: &str = "hatshop.toml";

/// The command line with the file's settings for its subcommand added where neither
/// the command line nor the environment gave them; the error is one line.
pub fn with_file_settings(args: Vec<OsString>) -> Result<Vec<OsString>, String> {
    let Some(path) = file_of(&args)? else {
        return Ok(args);
    };
    let command = Cli::definitions();
    let tables = read_tables(&path, &command)?;
    // Parsed once to learn the subcommand and what the user gave; a bad command line is
    // left for the real parse to report.
    let Ok(matches) = Cli::definitions().try_get_matches_from(&args) else {
        return Ok(args);
    };
    let Some((name, given)) = matches.subcommand() else {
        return Ok(args);
    };
    let Some(table) = tables.get(name) else {
        return Ok(args);
    };
    let table = table
        .as_table()
        .ok_or_else(|| format!("{}: [{name}] must be a table of flags", path.display()))?;
    let sub = command.find_subcommand(name).expect("a parsed subcommand");
    let mut extended = args;
    for (key, value) in table {
        // A flag's name, or a name it had before (still read, as on the command line).
        let named = |a: &&clap::Arg| {
            a.get_long() == Some(key.as_str())
                || a.get_all_aliases()
                    .is_some_and(|old| old.contains(&key.as_str()))
                || a.get_id() == key.replace('-', "_").as_str()
        };
        let Some(arg) = sub.get_arguments().find(named) else {
            let flags = sub.get_arguments().filter_map(|a| a.get_long());
            return Err(format!(
                "{}: [{name}] has no setting '{key}'{} (the flags of `hatshop {name} --help`, without --)",
                path.display(),
                crate::suggest::did_you_mean(key, flags)
            ));
        };
        if arg.is_positional() {
            return Err(format!(
                "{}: [{name}] {key} is given on the command line, not in a settings file",
                path.display()
            ));
        }
        if set_elsewhere(sub, given, arg.get_id().as_str()) {
            continue;
        }
        let flag = format!("--{}", arg.get_long().unwrap_or(key));
        let bad = |e: String| format!("{}: [{name}] {key}: {e}", path.display());
        let texts = values_of(value).map_err(bad)?;
        check_shape(sub, arg, value, &texts).map_err(bad)?;
        for text in texts {
            match text {
                Some(text) => extended.extend([OsString::from(&flag), OsString::from(text)]),
                None => extended.push(OsString::from(&flag)),
            }
        }
        // Read as the command line would read it (the line read well without the
        // file): a value it refuses is this key's, and the error names the file.
        if let Err(e) = Cli::definitions().try_get_matches_from(&extended) {
            return Err(bad(super::usage_error_line(&e.render().to_string())
                .trim_start_matches("error: ")
                .trim_end_matches("; see --help")
                .to_string()));
        }
    }
    Ok(extended)
}

/// The settings file's tables, each of which must name a command.
fn read_tables(path: &Path, command: &clap::Command) -> Result<toml::Table, String> {
    let text = crate::files::read_bounded_text(path, crate::files::SETTINGS_FILE_LIMIT)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let tables: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
        format!("{} is not valid TOML: {message}", path.display())
    })?;
    for (table, _) in &tables {
        if command.find_subcommand(table).is_none() {
            let names = command.get_subcommands().map(|c| c.get_name());
            return Err(format!(
                "{}: [{table}] is not a command of hatshop{}",
                path.display(),
                crate::suggest::did_you_mean(table, names)
            ));
        }
    }
    Ok(tables)
}

/// Whether the command line or the environment already sets the flag `id` of `sub`:
/// `--no-quiet` sets `quiet` as surely as `--quiet` does.
fn set_elsewhere(sub: &clap::Command, given: &clap::ArgMatches, id: &str) -> bool {
    let off = super::switches::off_id(id);
    let has_off = sub.get_arguments().any(|a| a.get_id() == off.as_str());
    std::iter::once(id.to_string())
        .chain(has_off.then_some(off))
        .any(|id| {
            matches!(
                given.value_source(&id),
                Some(ValueSource::CommandLine | ValueSource::EnvVariable)
            )
        })
}

/// The file named by `--config FILE` (which must exist), else `hatshop.toml` here if
/// there is one.
fn file_of(args: &[OsString]) -> Result<Option<PathBuf>, String> {
    let named = args
        .windows(2)
        .find_map(|pair| (pair[0] == "--config").then(|| PathBuf::from(&pair[1])));
    let named = named.or_else(|| {
        args.iter()
            .find_map(|a| a.to_str()?.strip_prefix("--config=").map(PathBuf::from))
    });
    match named {
        Some(path) => settings_file(&path, "--config ").map(Some),
        // hatshop.toml here, where there is anything by that name: a folder, a FIFO or
        // a broken link is said, never passed over.
        None if std::fs::symlink_metadata(DEFAULT_FILE).is_ok() => {
            settings_file(Path::new(DEFAULT_FILE), "").map(Some)
        }
        None => Ok(None),
    }
}

/// `path`, where it is a regular file (or a link to one) to read settings from.
fn settings_file(path: &Path, flag: &str) -> Result<PathBuf, String> {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(path.to_path_buf()),
        Ok(meta) if meta.is_dir() => Err(format!("{flag}{shown}: is a folder; name a TOML file")),
        Ok(_) => Err(format!(
            "{flag}{shown}: is not a regular file (a FIFO or a device); name a TOML file"
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && flag.is_empty() => Err(format!(
            "{shown}: is a link to nothing; remove it or name a file with --config"
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("{flag}{shown}: no such file"))
        }
        Err(e) => Err(format!("{flag}{shown}: cannot be read: {e}")),
    }
}

/// Whether the value has the shape the flag takes: true/false for a switch, one value
/// for a flag given once.
fn check_shape(
    sub: &clap::Command,
    arg: &clap::Arg,
    value: &toml::Value,
    texts: &[Option<String>],
) -> Result<(), String> {
    // On/off flags take `=true|false`, and have a `--no-` form (switches.rs).
    let off = super::switches::off_id(arg.get_id().as_str());
    let switch =
        !arg.get_action().takes_values() || sub.get_arguments().any(|a| a.get_id() == off.as_str());
    if switch {
        if !value.is_bool() {
            return Err("a switch is true or false".into());
        }
    } else if texts.iter().any(Option::is_none) || value.is_bool() {
        return Err("takes a value, not true/false".into());
    } else if value.is_array() && !matches!(arg.get_action(), clap::ArgAction::Append) {
        return Err("takes one value, not an array".into());
    }
    Ok(())
}

/// A setting's value as flag values: a flag's argument, `None` for a switch that is
/// on, nothing for one that is off, one per element of an array.
fn values_of(value: &toml::Value) -> Result<Vec<Option<String>>, String> {
    Ok(match value {
        toml::Value::String(s) => vec![Some(s.clone())],
        toml::Value::Integer(n) => vec![Some(n.to_string())],
        toml::Value::Float(x) => vec![Some(x.to_string())],
        toml::Value::Boolean(true) => vec![None],
        toml::Value::Boolean(false) => Vec::new(),
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match values_of(item)?.as_slice() {
                [one] => Ok(one.clone()),
                _ => Err("an array holds strings or numbers".to_string()),
            })
            .collect::<Result<_, String>>()?,
        _ => return Err("a value is a string, number, true/false or an array".into()),
    })
}
