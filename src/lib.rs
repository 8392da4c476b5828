//! hatshop: a database workload workbench.
//!
//! One seeded, deterministic stream of hat-shop order events is replayed against a
//! database; every operation is timed and logged; the database is then checked
//! against what the stream says it must hold. The modules follow the data flow:
//!
//! - [`workload`]: domain types, the seeded generator, specs, presets, JSON Lines.
//! - [`runner`]: the run plan, lanes by order id, the one run loop, per-op timing.
//! - [`db`]: the `Database` trait and one file per database.
//! - [`stats`]: HdrHistograms per event type, error counts, summaries.
//! - [`report`]: the op log, summary.json, the terminal table.
//! - [`verify`]: the expected state versus what the database holds.
//! - [`cluster`]: real local servers (Cassandra, MariaDB, PostgreSQL) started by hatshop.
//! - [`cli`], [`config`], [`commands`], [`result_dir`]: flags, validated settings,
//!   the wiring of each subcommand, and the result folder's layout.

pub mod cli;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod db;
pub mod report;
pub mod result_dir;
pub mod runner;
pub mod stats;
pub mod verify;
pub mod workload;

use std::process::ExitCode;

use anyhow::{Context, Result};

use cli::{Cli, Command};

/// Runs one command; `main` prints the error, if any.
pub async fn run(cli: Cli) -> Result<ExitCode> {
    match &cli.command {
        Command::Run(args) => commands::run::run(args).await,
        Command::Generate(args) => commands::generate::run(args).map(|()| ExitCode::SUCCESS),
        Command::Verify(args) => Ok(if commands::verify::run(args).await? {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        }),
        Command::Report(args) => {
            let path = report::html::write_report(&args.result_dir)?;
            println!("{}", path.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(args) => {
            let runs = args
                .result_dirs
                .iter()
                .map(|dir| report::load::LoadedRun::load(dir))
                .collect::<Result<Vec<_>>>()?;
            print!("{}", report::compare::terminal(&runs));
            std::fs::write(&args.output, report::compare::html(&runs))
                .with_context(|| format!("cannot write {}", args.output.display()))?;
            println!("page: {}", args.output.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Sweep(args) => commands::sweep::run(args).await,
        Command::Workloads(args) => commands::workloads::run(args).map(|()| ExitCode::SUCCESS),
        Command::Server(args) => commands::server::run(args).map(|()| ExitCode::SUCCESS),
    }
}
