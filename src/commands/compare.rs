//! `hatshop compare`: runs side by side, a table on the terminal and a page on disk.

use anyhow::{Context, Result};

use crate::cli::CompareArgs;
use crate::console::say;
use crate::files::write_atomic;
use crate::report::compare::{html, terminal};
use crate::report::load::LoadedRun;

/// Loads every folder (each checked whole), prints the table and writes the page.
pub fn run(args: &CompareArgs) -> Result<()> {
    let runs = args
        .result_dirs
        .iter()
        .map(|dir| LoadedRun::load_checked(dir))
        .collect::<Result<Vec<_>>>()?;
    crate::console::out(&terminal(&runs));
    let page = args.page();
    if let Some(dir) = page.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    write_atomic(&page, html(&runs).as_bytes())?;
    say!("page: {}", page.display());
    Ok(())
}
