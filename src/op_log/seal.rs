//! A killed run's op log made whole for every reader: the journal's rows written as
//! its last part, and the files the kill left half-made removed. A journal damaged
//! part-way gives the rows before the damage, and is kept beside, never removed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::journal::JOURNAL;
use super::{OpLog, PartWriter};

/// What sealing left beside the log.
#[derive(Debug, Default)]
pub struct Sealed {
    /// The damaged journal, kept under this name, and what is wrong with it.
    pub damaged: Option<(PathBuf, String)>,
}

/// The name a damaged journal is kept under.
pub const DAMAGED_JOURNAL: &str = "_journal.damaged";

/// Seals the op log of `run_dir`: afterwards its parts hold every row it kept.
pub fn seal(run_dir: &Path) -> Result<Sealed> {
    let log = OpLog::open(run_dir)?;
    let cannot = || format!("cannot tidy {}", log.dir().display());
    // Listed and killed before its rename: it takes its name now.
    if let Some((at, named)) = log.unnamed_part() {
        std::fs::rename(at, &named).with_context(cannot)?;
    }
    let mut sealed = Sealed::default();
    let next = log.next_part();
    let mut parts: Option<PartWriter> = None;
    let read = log.for_each_journal_row(|run, row| {
        let writer = match &mut parts {
            Some(writer) => writer,
            None => parts.insert(PartWriter::create(
                log.dir(),
                next,
                false,
                &run.run_id,
                &run.database,
            )?),
        };
        writer.push(&row)?;
        Ok(())
    })?;
    // With no row, still a finished manifest, and for a log with no part at all an
    // empty part, so that readers find the columns.
    match parts {
        Some(writer) => writer,
        None => PartWriter::create(log.dir(), next, false, "", "")?,
    }
    .finish()?;
    if let (Some(journal), Some(damage)) = (log.journal(), read.damage) {
        let kept = log.dir().join(DAMAGED_JOURNAL);
        std::fs::rename(journal, &kept).with_context(cannot)?;
        sealed.damaged = Some((kept, damage));
    }
    for entry in std::fs::read_dir(log.dir()).with_context(cannot)? {
        let entry = entry.with_context(cannot)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let half_made = name.starts_with("_part-") && name.ends_with(".partial");
        if name == JOURNAL || name == format!("{JOURNAL}.new") || half_made {
            std::fs::remove_file(entry.path()).with_context(cannot)?;
        }
    }
    Ok(sealed)
}

/// Whether the op log of `run_dir` was left unsealed: a journal, a part half-made or
/// not yet named, or a manifest its writer did not finish.
pub fn needs_sealing(run_dir: &Path) -> Result<bool> {
    let dir = OpLog::dir_of(run_dir);
    let cannot = || format!("cannot read {}", dir.display());
    for entry in std::fs::read_dir(&dir).with_context(cannot)? {
        let name = entry.with_context(cannot)?.file_name();
        let name = name.to_string_lossy();
        if name == JOURNAL || name == format!("{JOURNAL}.new") || name.ends_with(".partial") {
            return Ok(true);
        }
    }
    Ok(!super::manifest::Manifest::read(&dir)?.is_some_and(|m| m.finished))
}
