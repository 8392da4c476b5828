//! `hatshop completions` and `hatshop man`: what a shell and `man` read, made from the
//! same clap definitions as `--help`, so they never drift from the flags.

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;

/// Writes `shell`'s completion script for every subcommand and flag to standard output.
pub fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hatshop", &mut out);
    write_out(&out)
}

/// Writes the man page, hatshop(1), to standard output.
pub fn man() -> Result<()> {
    let mut out = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut out)
        .context("cannot render the man page")?;
    write_out(&out)
}

/// On standard output; a reader that stops early (`| head`) is not an error.
fn write_out(bytes: &[u8]) -> Result<()> {
    crate::console::out(&String::from_utf8_lossy(bytes));
    Ok(())
}
