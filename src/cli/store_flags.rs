//! Every store's settings as flags (`--cl`, `--connections`, …): not written here, but
//! made from what each store declares, shown in `--help` under the stores that take it.

use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, ArgMatches};

use super::quantities;

use crate::db::{RENAMED_SETTINGS as RENAMED, STORES, Setting, Value};

/// Store settings given as flags; each may also be given in the URL as `?key=value`.
#[derive(Debug, Clone, Default)]
pub struct StoreArgs {
    /// (setting name, value), in declaration order.
    pub given: Vec<(String, String)>,
}

/// Every setting any store declares, once, with the stores that take it.
pub fn all_settings() -> Vec<(&'static Setting, Vec<&'static str>)> {
    let mut out: Vec<(&'static Setting, Vec<&'static str>)> = Vec::new();
    for store in STORES {
        for setting in store.settings {
            match out.iter_mut().find(|(s, _)| s.name == setting.name) {
                Some((_, stores)) => stores.push(store.scheme),
                None => out.push((setting, vec![store.scheme])),
            }
        }
    }
    out
}

impl clap::FromArgMatches for StoreArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let mut given = Vec::new();
        for (setting, _) in all_settings() {
            match setting.value {
                Value::Switch => {
                    if matches.get_flag(setting.name) {
                        given.push((setting.name.to_string(), "true".to_string()));
                    }
                }
                Value::Count { .. } => {
                    if let Some(n) = matches.get_one::<u64>(setting.name) {
                        given.push((setting.name.to_string(), n.to_string()));
                    }
                }
                _ => {
                    if let Some(value) = matches.get_one::<String>(setting.name) {
                        given.push((setting.name.to_string(), value.clone()));
                    }
                }
            }
        }
        Ok(StoreArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

/// Each store's declaration of setting `name`, with the store's scheme.
fn declarations(name: &str) -> Vec<(&'static str, &'static Setting)> {
    STORES
        .iter()
        .flat_map(|store| {
            store
                .settings
                .iter()
                .filter(move |s| s.name == name)
                .map(move |s| (store.scheme, s))
        })
        .collect()
}

/// A setting's help with its default.
fn help_of(setting: &Setting) -> String {
    let mut help = setting.help.to_string();
    if !setting.default.is_empty() && setting.value != Value::Switch {
        help.push_str(&format!(" [default: {}]", setting.default));
    }
    help
}

/// A flag's help: one text where every store that takes the setting declares it
/// alike, else each store's own, named (`kv_table` is sysbench's table on mysql and
/// pgbench's on postgres).
fn flag_help(setting: &Setting) -> String {
    let declared = declarations(setting.name);
    if declared.iter().all(|(_, d)| {
        d.help == setting.help && d.value == setting.value && d.default == setting.default
    }) {
        return help_of(setting);
    }
    let each: Vec<String> = declared
        .iter()
        .map(|(scheme, d)| format!("{scheme}: {}", help_of(d)))
        .collect();
    each.join("; ")
}

/// The words a choice flag takes on any store that declares it.
fn choice_words(name: &str) -> Vec<&'static str> {
    let mut words = Vec::new();
    for (_, setting) in declarations(name) {
        if let Value::Choice(choices) = setting.value {
            for word in choices {
                if !words.contains(word) {
                    words.push(*word);
                }
            }
        }
    }
    words
}

/// The least count any store that declares setting `name` takes.
fn least_count(name: &str) -> u64 {
    declarations(name)
        .iter()
        .filter_map(|(_, setting)| match setting.value {
            Value::Count { min } => Some(min),
            _ => None,
        })
        .min()
        .unwrap_or(0)
}

/// A count in the one grammar (`20k`).
fn count_at_least(text: &str, least: u64) -> Result<u64, String> {
    let n: u64 = quantities::count(text)?;
    if n < least {
        return Err(format!("it must be at least {least}"));
    }
    Ok(n)
}

impl clap::Args for StoreArgs {
    fn augment_args(mut cmd: clap::Command) -> clap::Command {
        for (setting, stores) in all_settings() {
            let mut arg = Arg::new(setting.name)
                .long(setting.name.replace('_', "-"))
                .help(flag_help(setting))
                .help_heading(format!("Settings of {}", stores.join(", ")));
            arg = match setting.value {
                Value::Switch => arg.action(ArgAction::SetTrue),
                Value::Count { .. } => {
                    let least = least_count(setting.name);
                    arg.value_name("N")
                        .value_parser(move |text: &str| count_at_least(text, least))
                }
                Value::Choice(_) => {
                    let words = choice_words(setting.name);
                    arg.value_name(words.join("|"))
                        .value_parser(PossibleValuesParser::new(words))
                        .ignore_case(true)
                        .hide_possible_values(true)
                }
                Value::Text(placeholder) => arg.value_name(placeholder),
            };
            for (old, _) in RENAMED.iter().filter(|(_, new)| *new == setting.name) {
                arg = arg.alias(old.replace('_', "-"));
            }
            cmd = cmd.arg(arg);
        }
        cmd
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}
