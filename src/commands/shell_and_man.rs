//! `hatshop completions` and `hatshop man`: what a shell and `man` read, made from the
//! same clap definitions as `--help`, so they never drift from the flags.

use std::path::Path;

use anyhow::{Context, Result, anyhow};
use clap::CommandFactory;

use crate::cli::Cli;
use crate::console::note;

/// Writes `shell`'s completion script for every subcommand and flag to standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hatshop", &mut out);
    write_out(&out)
}

/// Writes the man page of `command` (hatshop(1) when empty, hatshop-run(1) for `run`)
/// to standard output, or every page into `out`.
pub fn man(command: &[String], out: Option<&Path>) -> Result<()> {
    let mut cli = Cli::command().disable_help_subcommand(true);
    // Built, each subcommand's page is named hatshop-<command>.
    cli.build();
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        clap_mangen::generate_to(cli, dir)
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
    clap_mangen::Man::new(page)
        .render(&mut text)
        .context("cannot render the man page")?;
    write_out(&text)
}

/// On standard output; a reader that stops early (`| head`) is not an error.
fn write_out(bytes: &[u8]) -> Result<()> {
    crate::console::out(&String::from_utf8_lossy(bytes));
    Ok(())
}
