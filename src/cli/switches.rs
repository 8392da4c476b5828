//! Every switch can be switched off on the command line, since a settings file may
//! have switched it on: `--quiet=false` (or `=no`, `=0`) and `--no-quiet` both do, and
//! `--quiet` alone or `--quiet=true` switches it on.

use clap::builder::BoolishValueParser;
use clap::{Arg, ArgAction, Command};

/// The id of the flag that switches `id` off (`no_quiet` for `quiet`).
pub fn off_id(id: &str) -> String {
    format!("no_{id}")
}

/// `command` and its subcommands with each on/off flag taking `=true|false`, and a
/// `--no-` form of its own; of the two, the one given last wins.
pub fn with_off_forms(command: Command) -> Command {
    let switches: Vec<(String, String)> = command
        .get_arguments()
        .filter(|arg| matches!(arg.get_action(), ArgAction::SetTrue))
        .filter_map(|arg| Some((arg.get_id().to_string(), arg.get_long()?.to_string())))
        .collect();
    let mut command = command;
    for (id, long) in switches {
        let off = off_id(&id);
        command = command
            .mut_arg(&id, |arg| {
                arg.action(ArgAction::Set)
                    .num_args(0..=1)
                    .require_equals(true)
                    .default_value("false")
                    .default_missing_value("true")
                    .hide_default_value(true)
                    .value_parser(BoolishValueParser::new())
                    .value_name("true|false")
                    .overrides_with(&off)
            })
            .arg(
                Arg::new(off)
                    .long(format!("no-{long}"))
                    .action(ArgAction::SetTrue)
                    .hide(true)
                    .overrides_with(&id),
            );
    }
    command.mut_subcommands(with_off_forms)
}
