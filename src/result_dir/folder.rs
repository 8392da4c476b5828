//! A result folder's name and claim: a folder of its own for each run (and series,
//! load, study), claimed empty before anything is written, and removed again, with the
//! folders made for it, if the work never began.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The folders that creating `dir` would make (it and any missing parents), deepest
/// first: what to remove when the work that needed them never began.
pub fn missing_folders(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.exists())
        .map(Path::to_path_buf)
        .collect()
}

/// Creates `dir` (the `what` folder: result, sweep, …) and takes its lock for this
/// process; refuses one that holds files or that another run is writing.
pub fn create_empty_folder(dir: &Path, what: &str) -> Result<()> {
    refuse_url_as_folder(dir, what)?;
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create {what} folder {}", dir.display()))?;
    crate::folder_lock::claim_empty(dir, what)
}

/// Takes the lock of the existing result folder `dir` for this process, for a command
/// that writes into it; refused while another command writes it.
pub fn claim_for_writing(dir: &Path) -> Result<()> {
    crate::folder_lock::claim_existing(dir, "result")
}

/// A database URL where a folder belongs (`-o mysql://…`) is a slip for `--db`: it is
/// refused before a folder is made of it (and its password is not shown).
pub fn refuse_url_as_folder(dir: &Path, what: &str) -> Result<()> {
    let text = dir.to_string_lossy();
    if text.contains("://") {
        bail!(
            "the {what} folder '{}' is a database URL: give a URL with --db, and a folder \
             with -o",
            crate::db::shown_url(&text)
        );
    }
    Ok(())
}

/// Removes `dir`, claimed with [`create_empty_folder`], if the work never wrote into it,
/// and the folders made for it.
pub fn remove_if_unused(dir: &Path, made: &[PathBuf]) {
    if crate::folder_lock::holds_nothing_else(dir) {
        let _ = std::fs::remove_file(dir.join(crate::folder_lock::NAME));
        remove_folders(made);
    }
}

/// Removes folders made for work that never began (each only if empty).
pub fn remove_folders(folders: &[PathBuf]) {
    for folder in folders {
        let _ = std::fs::remove_dir(folder);
    }
}

/// `base/id`, or `base/id-2`, `-3`, … if taken.
pub fn unique_dir(base: &Path, id: &str) -> PathBuf {
    let first = base.join(id);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| base.join(format!("{id}-{n}")))
        .find(|p| !p.exists())
        .expect("some suffix is free")
}

/// Creates the result folder; refuses one that already holds files.
pub fn claim_result_folder(dir: &Path) -> Result<()> {
    create_empty_folder(dir, "result")?;
    let probe = dir.join(".hatshop-write-test");
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write in result folder {}", dir.display()))?;
    std::fs::remove_file(&probe).ok();
    Ok(())
}
