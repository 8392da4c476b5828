//! The command line: clap derive structs, help from the doc comments. Parsing only;
//! `config` turns these into a validated `RunConfig`. Store settings are not written
//! here: each store declares its own, and [`StoreArgs`] makes a flag of each, shown in
//! `--help` under the stores that take it.

pub mod config_file;
pub mod given;
mod load;
pub mod manual;
pub mod quantities;
mod results;
mod run;
mod series;
mod server;
mod store_flags;
mod stream;
mod switches;
pub mod threshold;
mod values;
mod vary;

use std::path::PathBuf;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
pub use load::LoadArgs;
pub use results::{CompareArgs, ExportArgs, MergeArgs, ReportArgs, ShowArgs, VerifyArgs};
pub use run::{PrepareArgs, ReuseLoad, RunArgs};
pub use series::{StudyArgs, StudyShow, SweepArgs};
pub use server::{NodeArgs, ServerAction, ServerArgs};
pub use store_flags::{StoreArgs, all_settings};
pub use stream::{GenerateArgs, StreamArgs, WorkloadsAction, WorkloadsArgs};
pub use values::{PercentileList, RateArg, WarmupArg};
pub use vary::{RUN_KEYS, Vary};

/// hatshop: one seeded stream of hat-shop order events and key-value operations,
/// replayed against real databases, every operation timed and logged, the result verified.
#[derive(Debug, Parser)]
#[command(name = "hatshop", version, about, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// `--client-threads` before the subcommand, as it was once given: kept for old
    /// scripts, shown only in the help of the commands that run work.
    #[arg(long = "client-threads", id = "client_threads_before", hide = true, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub client_threads_before: Option<u16>,
    /// Settings used every time, a table per subcommand. A flag on the command line
    /// wins, then its environment variable, then this file [default: ./hatshop.toml,
    /// when there is one].
    #[arg(long = "config", global = true, value_name = "FILE")]
    pub settings_file: Option<std::path::PathBuf>,
}

impl Cli {
    /// Every flag and subcommand, with each switch's off form: what parses, `--help`,
    /// the man pages and the completions are all made from this.
    pub fn definitions() -> clap::Command {
        switches::with_off_forms(<Cli as CommandFactory>::command())
    }

    /// The command line parsed, or clap's error for it.
    pub fn from_command_line<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        let mut command = Cli::definitions();
        let mut matches = command.try_get_matches_from_mut(&args)?;
        let mut cli =
            Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut command))?;
        let given = match &mut cli.command {
            Command::Run(run) => Some(run),
            Command::Sweep(sweep) => Some(&mut sweep.run),
            _ => None,
        };
        if let Some(run) = given {
            run.argv = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
        }
        Ok(cli)
    }

    /// Worker threads asked for the async runtime, by the commands that run work.
    pub fn client_threads(&self) -> Option<u16> {
        let of_command = match &self.command {
            Command::Run(run) => run.runtime.client_threads,
            Command::Sweep(sweep) => sweep.run.runtime.client_threads,
            Command::Load(load) => load.runtime.client_threads,
            _ => None,
        };
        of_command.or(self.client_threads_before)
    }
}

/// What each exit code means, the same for every subcommand; docs/runs.md holds the
/// same table, and a test holds the two together.
pub const EXIT_CODES: &str = "\
Exit codes:
  0    the command did what it was asked
  1    it could not (bad input its own checks caught, a database out of reach, a failed run), or verify found differences
  2    the command line is wrong (an unknown flag, a missing or malformed value, flags that do not go together): one line ending \"; see --help\"
  3    the run ended with more failed operations than --max-errors allows
  4    the run's numbers broke a --threshold (its folder is complete; run.json says by how much)
  130  interrupted by Ctrl-C or SIGTERM; the result folder is complete";

/// Flags that each read well but do not go together (`--p99-under` without
/// `--find-max`): the command line's fault, so it exits 2 with "; see --help", as a
/// malformed value does.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; see --help", self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns a [`UsageError`] from the function: flags that do not go together.
macro_rules! usage_bail {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::cli::UsageError(format!($($arg)*))))
    };
}
pub(crate) use usage_bail;

/// How hatshop's own runtime is laid out, for the commands that run work.
#[derive(Debug, Args, Clone)]
pub struct RuntimeArgs {
    /// Worker threads of hatshop's async runtime [default: one per core]. With the
    /// database on the same machine, 1 leaves it more CPU (see docs/peers.md).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub client_threads: Option<u16>,
}

/// A parse error as one line, as every other error is: clap's first line, with its tip
/// (a similar flag, how to pass a value that starts with `-`) in brackets, and where
/// to look. Its usage block is left to `--help`.
pub fn usage_error_line(rendered: &str) -> String {
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("error: bad command line");
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("Usage:")).collect();
    let tips: Vec<&str> = body
        .iter()
        .filter_map(|l| l.strip_prefix("tip: "))
        .collect();
    let mut line = first.to_string();
    // "the following required arguments were not provided:" names them below.
    if first.ends_with(':') {
        let named: Vec<&str> = body
            .iter()
            .copied()
            .filter(|l| !l.starts_with("tip: "))
            .collect();
        line = format!("{} {}", line, named.join(", "));
    }
    if !tips.is_empty() {
        line.push_str(&format!(" ({})", tips.join("; ")));
    }
    crate::secrets::redact(&shorten_values(&(line + "; see --help"))).into_owned()
}

/// The line with each quoted value past [`SHOWN_VALUE`] characters cut, and its length
/// said: a 20 MB argument is not echoed whole.
fn shorten_values(line: &str) -> String {
    const SHOWN_VALUE: usize = 60;
    let parts: Vec<&str> = line.split('\'').collect();
    let mut out = String::with_capacity(line.len().min(1024));
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            out.push('\'');
        }
        // Odd parts sit between quotes.
        if i % 2 == 1 && i + 1 < parts.len() && part.chars().count() > SHOWN_VALUE {
            let cut: String = part.chars().take(SHOWN_VALUE).collect();
            out.push_str(&format!("{cut}… ({} bytes)", part.len()));
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The subcommands; each names what it does in `--help`.
#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum Command {
    /// Replay a workload against a database and record every operation.
    // Where numbers are given, `--rate -10` is read as a bad rate (and said to be one),
    // not as a flag `-1`.
    #[command(allow_negative_numbers = true, after_help = EXIT_CODES)]
    Run(RunArgs),
    /// Write a workload's event stream to a JSON Lines file.
    // A written stream takes its warm-up as a count: its length in time is the run's.
    #[command(
        allow_negative_numbers = true,
        override_usage = "hatshop generate [OPTIONS] <FILE>",
        mut_arg("warmup", |arg| arg.value_name("EVENTS").help(
            "Warm-up after the initial load, applied and not measured: a count of events \
             (20000, 20k) [default: the spec's count]"
        ))
    )]
    Generate(GenerateArgs),
    /// Bulk load: rows of a few values in batches of a given size, each batch timed and
    /// the server watched (study 002: `hatshop load --preset study-002`).
    #[command(allow_negative_numbers = true)]
    Load(LoadArgs),
    /// Make hatshop's tables empty and ready, for the shards of a run (`run --shard`).
    Prepare(PrepareArgs),
    /// Join the folders of a run's shards into one folder that reports and verifies.
    Merge(MergeArgs),
    /// Check that a run's database holds exactly what its event stream says.
    Verify(VerifyArgs),
    /// Write report.html (charts, tables, errors) for a result folder.
    Report(ReportArgs),
    /// Print a saved run's table again, as the run printed it when it ended.
    Show(ShowArgs),
    /// Write a run's op log as a CSV file a spreadsheet opens (`--csv`).
    Export(ExportArgs),
    /// Rebuild the summary of a run that was killed, from its op log.
    Recover(ReportArgs),
    /// Put runs side by side: a table here and an HTML page, with significance.
    Compare(CompareArgs),
    /// Run one workload several times while one setting varies, and chart the result.
    #[command(allow_negative_numbers = true)]
    Sweep(SweepArgs),
    /// Run a study, a built-in one or a file of yours: start its servers, run and verify
    /// every cell, and write one study.html with its verdict and figures (`hatshop study
    /// --list` names the built-in ones)
    #[command(
        override_usage = "hatshop study [OPTIONS] <NAME|FILE>\n       hatshop study show <NAME>\n       hatshop study --list"
    )]
    Study(StudyArgs),
    /// List the preset workloads, or print one as TOML.
    Workloads(WorkloadsArgs),
    /// Start, stop and inspect local database servers (Cassandra, MariaDB, PostgreSQL, Redis, Voldemort).
    Server(ServerArgs),
    /// Print a shell's completion script (e.g. `hatshop completions bash > /etc/bash_completion.d/hatshop`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print a man page: hatshop(1), or a command's (`hatshop man run`, `hatshop man
    /// server start`); `--out DIR` writes them all (e.g. `hatshop man -o
    /// /usr/local/share/man/man1`).
    Man {
        /// The command whose page to print.
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
        /// Write every page, hatshop.1 and hatshop-<command>.1, into this folder.
        #[arg(short, long, value_name = "DIR", conflicts_with = "command")]
        out: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::STORES;

    #[test]
    fn cli_is_well_formed() {
        Cli::definitions().debug_assert();
    }

    /// A global flag's id must not be a subcommand field's too: clap would then read one
    /// as the other's type and panic (`--config` beside `server start --set`).
    #[test]
    fn global_flags_do_not_clash_with_a_subcommands_fields() {
        let cli = Cli::from_command_line([
            "hatshop",
            "server",
            "start",
            "cassandra",
            "--set",
            "a=b",
            "--config",
            "h.toml",
        ])
        .unwrap();
        assert_eq!(cli.settings_file, Some("h.toml".into()));
        let Command::Server(ServerArgs {
            action: ServerAction::Start { config, .. },
            ..
        }) = cli.command
        else {
            panic!("a server start")
        };
        assert_eq!(config, [("a".to_string(), "b".to_string())]);
    }

    #[test]
    fn store_flags_come_from_the_stores() {
        let cli = Cli::from_command_line([
            "hatshop", "run", "--cl", "ONE", "--pool", "3", "--lwt", "--db", "null://",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("a run")
        };
        let given: Vec<(&str, &str)> = args
            .store
            .given
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert!(given.contains(&("cl", "ONE")));
        // `--pool` is the old name of `--connections`.
        assert!(given.contains(&("connections", "3")));
        assert!(given.contains(&("lwt", "true")));
        let help = Cli::definitions()
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("Settings of cassandra"), "{help}");
        assert!(help.contains("Settings of mysql, postgres"), "{help}");
        // A setting two stores declare differently reads as each store's own.
        assert!(
            help.contains("--kv-table <kv|sbtest|pgbench_accounts>"),
            "{help}"
        );
        assert!(
            help.contains("mysql: key-value records in hatshop's table"),
            "{help}"
        );
        assert!(
            help.contains("postgres: key-value records in hatshop's table"),
            "{help}"
        );
        for store in STORES {
            assert!(help.contains(store.example), "{}", store.example);
        }
    }

    #[test]
    fn a_long_value_is_cut_in_the_usage_error() {
        let long = "x".repeat(20_000);
        let line = usage_error_line(&format!(
            "error: invalid value '{long}' for '--tag <TAG>': a tag is one line\n\nUsage: x"
        ));
        assert!(line.len() < 300, "{line}");
        assert!(
            line.contains("… (20000 bytes)") && line.contains("'--tag <TAG>'"),
            "{line}"
        );
    }
}
