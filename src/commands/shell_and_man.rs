//! `hatshop completions` and `hatshop man`: what a shell and `man` read, made from the
//! same clap definitions as `--help`, so they never drift from the flags.

use std::path::Path;

use anyhow::{Context, Result, anyhow};

use clap::builder::PossibleValuesParser;

use clap_mangen::roff::{Roff, bold, roman};

use crate::cli::{Cli, manual};
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
    let names: Vec<&str> = crate::studies::BUILT_IN
        .iter()
        .map(|(name, _)| *name)
        .collect();
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
    render(&page, &mut text).context("cannot render the man page")?;
    write_out(&text)
}

/// A command's page, its footer naming hatshop and its version as every page's does
/// (clap_mangen would put the subcommand's own name there).
fn page_of(command: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(command).source(format!("hatshop {}", env!("CARGO_PKG_VERSION")))
}

/// `command`'s page: clap's sections, then EXIT STATUS, EXAMPLES (where the command has
/// some) and ENVIRONMENT, where clap would put the exit codes under EXTRA.
fn render(command: &clap::Command, w: &mut Vec<u8>) -> std::io::Result<()> {
    let man = page_of(command.clone());
    man.render_title(w)?;
    man.render_name_section(w)?;
    man.render_synopsis_section(w)?;
    man.render_description_section(w)?;
    if command.get_arguments().any(|arg| !arg.is_hide_set()) {
        man.render_options_section(w)?;
    }
    if command.has_subcommands() {
        man.render_subcommands_section(w)?;
    }
    let mut roff = Roff::default();
    roff.control("SH", ["EXIT STATUS"]);
    for line in crate::cli::EXIT_CODES.lines().skip(1) {
        if let Some((code, meaning)) = line.trim().split_once(' ') {
            roff.control("TP", []);
            roff.text([bold(code)]);
            roff.text([roman(meaning.trim())]);
        }
    }
    let name = command.get_display_name().unwrap_or(command.get_name());
    let examples = manual::examples_of(name);
    if !examples.is_empty() {
        roff.control("SH", ["EXAMPLES"]);
        for (line, what) in examples {
            roff.control("TP", []);
            roff.text([bold(*line)]);
            roff.text([roman(*what)]);
        }
    }
    roff.control("SH", ["ENVIRONMENT"]);
    let own = command
        .get_arguments()
        .filter_map(|arg| {
            let variable = arg.get_env()?.to_string_lossy().into_owned();
            Some((variable, format!("the value of --{}", arg.get_long()?)))
        })
        .collect::<Vec<_>>();
    let always = manual::ENVIRONMENT
        .iter()
        .map(|(variable, what)| (variable.to_string(), what.to_string()));
    for (variable, what) in own.into_iter().chain(always) {
        roff.control("TP", []);
        roff.text([bold(variable)]);
        roff.text([roman(what)]);
    }
    roff.control("PP", []);
    roff.text([roman(manual::STORES_ENVIRONMENT)]);
    roff.to_writer(w)?;
    if command.get_version().is_some() {
        man.render_version_section(w)?;
    }
    Ok(())
}

/// `command`'s page and its subcommands' into `dir`, each `<display name>.1`.
fn write_pages(command: &clap::Command, dir: &Path) -> std::io::Result<()> {
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let name = command.get_display_name().unwrap_or(command.get_name());
    let mut text = Vec::new();
    render(command, &mut text)?;
    std::fs::write(dir.join(format!("{name}.1")), text)
}

/// On standard output; a reader that stops early (`| head`) is not an error.
fn write_out(bytes: &[u8]) -> Result<()> {
    crate::console::out(&String::from_utf8_lossy(bytes));
    Ok(())
}
