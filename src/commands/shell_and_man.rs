//! `hatshop completions` and `hatshop man`: what a shell and `man` read, made from the
//! same clap definitions as `--help`, so they never drift from the flags.

use std::path::Path;

use anyhow::{Context, Result, anyhow};

use clap::builder::PossibleValuesParser;

use crate::cli::Cli;
use crate::console::note;

/// Writes `shell`'s completion script for every subcommand and flag to standard output,
/// with the names a value may be: workloads, studies and a setting's words.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut out = Vec::new();
    let mut definitions = with_studies_to_complete(with_workloads_to_complete(Cli::definitions()));
    clap_complete::generate(shell, &mut definitions, "hatshop", &mut out);
    write_out(&out)
}

/// `command` with the preset names offered for `--workload`. Only the completions see
/// them: `-w` also takes a spec file's path.
fn with_workloads_to_complete(command: clap::Command) -> clap::Command {
    let names: Vec<String> = crate::workload::presets()
        .into_iter()
        .map(|spec| spec.name)
        .collect();
    command.mut_subcommands(|sub| {
        if sub.get_arguments().any(|arg| arg.get_id() == "workload") {
            sub.mut_arg("workload", |arg| {
                arg.value_parser(PossibleValuesParser::new(names.clone()))
            })
        } else {
            sub
        }
    })
}

/// `command` with the studies' names offered for `study NAME`.
fn with_studies_to_complete(command: clap::Command) -> clap::Command {
    let names: Vec<&str> = crate::studies::STUDIES.iter().map(|s| s.name).collect();
    command.mut_subcommand("study", |sub| {
        sub.mut_arg("name", |arg| {
            arg.value_parser(PossibleValuesParser::new(names))
        })
    })
}

/// `command` with the values `--help`'s usage shows as required (`generate <FILE>`,
/// `study <NAME>`) required, as a man page's synopsis then shows them: clap_mangen
/// does not read the usage line. Each is required but for a hidden older spelling or
/// `--list`.
fn as_usage_says(command: clap::Command) -> clap::Command {
    command
        .mut_subcommand("generate", |sub| {
            sub.mut_arg("file", |arg| {
                arg.required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
                    .required(true)
            })
        })
        .mut_subcommand("study", |sub| {
            sub.mut_arg("name", |arg| {
                arg.required_unless_present(clap::builder::Resettable::<clap::Id>::Reset)
                    .required(true)
            })
        })
}

/// Writes the man page of `command` (hatshop(1) when empty, hatshop-run(1) for `run`)
/// to standard output, or every page into `out`.
pub fn man(command: &[String], out: Option<&Path>) -> Result<()> {
    let mut cli = as_usage_says(Cli::definitions()).disable_help_subcommand(true);
    // Built, each subcommand's page is named hatshop-<command>.
    cli.build();
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        write_pages(&cli, dir)
            .with_context(|| format!("cannot write the man pages into {}", dir.display()))?;
        note!("wrote the man pages into {}", dir.display());
        return Ok(());
    }
    let mut page = cli;
    for name in command {
        page = page.find_subcommand(name).cloned().ok_or_else(|| {
            anyhow!(
                "no man page for '{}': not a command of hatshop (see hatshop --help)",
                command.join(" ")
            )
        })?;
    }
    let mut text = Vec::new();
    page_of(page)
        .render(&mut text)
        .context("cannot render the man page")?;
    write_out(&text)
}

/// A command's page, its footer naming hatshop and its version as every page's does
/// (clap_mangen would put the subcommand's own name there).
fn page_of(command: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(command).source(format!("hatshop {}", env!("CARGO_PKG_VERSION")))
}

/// `command`'s page and its subcommands' into `dir`, each `<display name>.1`.
fn write_pages(command: &clap::Command, dir: &Path) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let name = command.get_display_name().unwrap_or(command.get_name());
    let mut text = Vec::new();
    page_of(command.clone()).render(&mut text)?;
    std::fs::write(dir.join(format!("{name}.1")), text)
}

/// On standard output; a reader that stops early (`| head`) is not an error.
fn write_out(bytes: &[u8]) -> Result<()> {
    crate::console::out(&String::from_utf8_lossy(bytes));
    Ok(())
}
