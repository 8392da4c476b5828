//! hatshop: a database workload workbench.
//!
//! One seeded, deterministic stream of hat-shop order events (and key-value
//! operations) is replayed against a database; every operation is timed and logged;
//! the database is then checked against what the stream says it must hold. The modules
//! stand in layers, each using only the ones below it (`docs/architecture.md`, held
//! by `cargo test architecture`):
//!
//! - [`console`], [`secrets`], [`interrupt`], [`files`], [`procfs`], [`stamp`],
//!   [`suggest`]: output that survives a closed pipe, passwords that never leave the
//!   process, Ctrl-C on its own thread, JSON and CSV files, what `/proc` says of a
//!   process, time as records write it, "did you mean" for a mistyped name.
//! - [`workload`], [`stats`], [`client_cost`]: domain types, the seeded generator,
//!   specs, presets and fault timelines; HdrHistograms per event type and interval;
//!   hatshop's own CPU and memory while measuring.
//! - [`db`]: the `Store` trait, one folder per store, and the one list of stores.
//! - [`cluster`]: real local servers (Cassandra, MariaDB, PostgreSQL, Redis, Voldemort).
//! - [`runner`], [`verify`], [`observe`]: the one run loop and the fault player; the
//!   expected state against what the store holds; the servers' own costs during a run.
//! - [`result_dir`], [`report`]: the records of a result folder; what is made of them.
//! - [`cli`], [`config`]: flags, and the validated settings a run sees.
//! - [`lifecycle`]: one run's life, from its folder to its last record and verdict.
//! - [`commands`]: the wiring of each subcommand, none calling another.

pub mod cli;
pub mod client_cost;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod console;
pub mod db;
pub mod event_loop;
pub mod files;
pub mod folder_lock;
pub mod host_load;
pub mod interrupt;
pub mod lifecycle;
pub mod numbers;
pub mod observe;
pub mod op_log;
pub mod procfs;
pub mod regular_file;
pub mod report;
pub mod result_dir;
pub mod runner;
pub mod secrets;
pub mod stamp;
pub mod stats;
pub mod studies;
pub mod suggest;
pub mod verify;
pub mod workload;

use std::process::ExitCode;

use anyhow::Result;

use cli::{Cli, Command};
use console::say;

/// The worker threads of hatshop's runtime: `--client-threads`, else what a run's store
/// chooses for its concurrency, else `None` (one per core; sweeps and loads too, whose
/// runs differ).
pub fn client_threads(cli: &Cli) -> Option<usize> {
    cli.client_threads()
        .map(usize::from)
        .or_else(|| match &cli.command {
            Command::Run(args) => config::chosen_client_threads(args),
            _ => None,
        })
}

/// Runs one command; `main` prints the error, if any.
pub async fn run(cli: Cli) -> Result<ExitCode> {
    match &cli.command {
        Command::Run(args) if args.find_max => lifecycle::find_max::run(args).await,
        Command::Run(args) if args.repeat != 1 => commands::repeat::run(args).await,
        Command::Run(args) => {
            if args.exports_to_stdout() > 0 {
                console::keep_stdout_for_data();
            }
            commands::run::run(args).await
        }
        Command::Generate(args) => commands::generate::run(args).map(|()| ExitCode::SUCCESS),
        Command::Load(args) => commands::load::run(args).await,
        Command::Prepare(args) => commands::prepare::run(args)
            .await
            .map(|()| ExitCode::SUCCESS),
        Command::Merge(args) => commands::merge::run(args).map(|()| ExitCode::SUCCESS),
        Command::Verify(args) => Ok(if commands::verify::run(args).await? {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }),
        Command::Report(args) if report::bulk::is_load(&args.result_dir) => {
            result_dir::folder::claim_for_writing(&args.result_dir)?;
            let path = report::bulk::write_report(&args.result_dir)?;
            say!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) if report::repeats::repeat_dirs(&args.result_dir).is_some() => {
            report::loaded_run::LoadedRun::load_checked(&args.result_dir)?;
            result_dir::folder::claim_for_writing(&args.result_dir)?;
            let path = report::repeats_page::write_report(&args.result_dir)?;
            say!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) => {
            report::loaded_run::LoadedRun::load_checked(&args.result_dir)?;
            result_dir::folder::claim_for_writing(&args.result_dir)?;
            let path = report::html::write_report(&args.result_dir)?;
            say!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Show(args) => commands::show::run(args).map(|()| ExitCode::SUCCESS),
        Command::Export(args) => commands::export::run(args).map(|()| ExitCode::SUCCESS),
        Command::Recover(args) => {
            commands::recover::run(&args.result_dir).map(|()| ExitCode::SUCCESS)
        }
        Command::Compare(args) => commands::compare::run(args).map(|()| ExitCode::SUCCESS),
        Command::Sweep(args) => commands::sweep::run(args).await,
        Command::Study(args) => commands::study::run(args).await,
        Command::Workloads(args) => commands::workloads::run(args).map(|()| ExitCode::SUCCESS),
        Command::Server(args) => commands::server::run(args).map(|()| ExitCode::SUCCESS),
        Command::Completions { shell } => {
            commands::shell_and_man::completions(*shell).map(|()| ExitCode::SUCCESS)
        }
        Command::Man { command, out } => {
            commands::shell_and_man::man(command, out.as_deref()).map(|()| ExitCode::SUCCESS)
        }
    }
}

/// An error as one line: its causes after it, each once (a cause that the message
/// already quotes is not repeated), with passwords scrubbed.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    secrets::redact(&line.replace('\n', " ")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causes_are_not_repeated() {
        let io = std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "Is a directory (os error 21)",
        );
        let error =
            anyhow::Error::new(io).context("cannot read x.toml: Is a directory (os error 21)");
        assert_eq!(
            one_line(&error),
            "cannot read x.toml: Is a directory (os error 21)"
        );
        let error = anyhow::anyhow!("inner").context("outer");
        assert_eq!(one_line(&error), "outer: inner");
    }
}
