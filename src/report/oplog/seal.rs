//! A killed run's op log made whole for every reader: the journal's rows written as
//! its last part, and the files the kill left half-made removed.

use std::path::Path;

use anyhow::{Context, Result};

use super::journal::JOURNAL;
use super::{OpLog, PartWriter};

/// Seals the op log of `run_dir`: afterwards its parts hold every row it kept.
pub fn seal(run_dir: &Path) -> Result<()> {
    let log = OpLog::open(run_dir)?;
    if log.has_journal() {
        let mut parts: Option<PartWriter> = None;
        let next = log.next_part();
        log.for_each_journal_row(|run, row| {
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
        match parts {
            Some(writer) => writer.finish()?,
            // Killed before its first row: an empty part still gives readers the columns.
            None if next == 0 => PartWriter::create(log.dir(), 0, false, "", "")?.finish()?,
            None => {}
        }
    }
    let cannot = || format!("cannot tidy {}", log.dir().display());
    for entry in std::fs::read_dir(log.dir()).with_context(cannot)? {
        let entry = entry.with_context(cannot)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == JOURNAL || (name.starts_with("_part-") && name.ends_with(".partial")) {
            std::fs::remove_file(entry.path()).with_context(cannot)?;
        }
    }
    Ok(())
}
