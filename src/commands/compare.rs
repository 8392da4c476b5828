//! `hatshop compare`: runs side by side, a table on the terminal and a page on disk.

use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::CompareArgs;
use crate::console::say;
use crate::report::compare::{TITLE, page, terminal};
use crate::report::load::LoadedRun;

/// Loads every folder (each checked whole), prints the table and writes the page.
pub fn run(args: &CompareArgs) -> Result<()> {
    let runs = args
        .result_dirs
        .iter()
        .map(|dir| LoadedRun::load_checked(dir))
        .collect::<Result<Vec<_>>>()?;
    crate::console::out(&terminal(&runs));
    let path = args.page();
    let dir = path.parent().unwrap_or(Path::new(""));
    if !dir.as_os_str().is_empty() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let file_name = path.file_name().map_or_else(
        || "compare.html".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let written = page(&runs, &file_name).write(dir, TITLE)?;
    say!("page: {}", written.display());
    Ok(())
}
