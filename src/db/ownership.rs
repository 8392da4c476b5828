//! hatshop owns what it made and nothing else. Its tables (or keyspace, or keys) are
//! created with a marker, `hatshop_meta`, that names the hatshop version and run; setup
//! drops only what carries the marker and refuses, in one line, to touch tables of the
//! same names that it did not create, unless `--recreate` is given.

use super::{DbError, ErrorKind};

/// The marker table (Redis: the marker key).
pub const MARKER: &str = "hatshop_meta";

/// What hatshop's marker says of who made the tables: `hatshop 0.1.0 run ID (pid P
/// started S)` (a run set them up; the process makes it one of its own, however alike
/// two runs' ids), or `hatshop 0.1.0 prepare` (shards share them), or a load's.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Marker {
    pub made_by: String,
}

impl Marker {
    /// The note run `run_id` of process `pid` (which started at `started`, in the
    /// kernel's ticks) writes.
    pub fn of_run(version: &str, run_id: &str, pid: u32, started: u64) -> String {
        format!("hatshop {version} run {run_id} (pid {pid} started {started})")
    }

    /// The run that set the tables up, if a run did.
    pub fn run_id(&self) -> Option<&str> {
        let (_, rest) = self.made_by.split_once(" run ")?;
        Some(rest.split_once(" (pid ").map_or(rest, |(id, _)| id))
    }
}

/// hatshop's tables, in the order they are dropped (items before the orders they name).
pub const TABLES: &[&str] = &["line_items", "orders", "kv", "load_rows", MARKER];

/// What setup may do, and what the marker will say.
#[derive(Debug, Clone)]
pub struct Ownership {
    /// Drop tables of hatshop's names even without the marker.
    pub recreate: bool,
    /// Written into the marker: who made the tables.
    pub note: String,
}

impl Ownership {
    /// Checks what was found: `existing` are hatshop's table names present in `target`.
    /// Fine when none exist, when the marker does, or with `--recreate`.
    pub fn may_drop(&self, target: &str, existing: &[String]) -> Result<(), DbError> {
        if existing.is_empty() || existing.iter().any(|t| t == MARKER) || self.recreate {
            return Ok(());
        }
        Err(DbError::new(
            ErrorKind::Other,
            format!(
                "refusing to drop {} in {target}: hatshop did not create {} (no {MARKER} \
                 marker); pass --recreate to drop {} anyway, or point --db at another database",
                existing.join(", "),
                if existing.len() == 1 { "it" } else { "them" },
                if existing.len() == 1 { "it" } else { "them" },
            ),
        ))
    }
}

/// The statement that reads the marker's note in a SQL store.
pub const READ_MARKER: &str = "SELECT made_by FROM hatshop_meta WHERE name = 'hatshop'";

/// The statement that reads the note of what the tables hold (`Store::holding`) in a
/// SQL store: a second row of the marker table, which setup makes anew.
pub const READ_HOLDING: &str = "SELECT made_by FROM hatshop_meta WHERE name = 'holding'";

/// Clears that note, before [`write_holding`] writes the new one.
pub const CLEAR_HOLDING: &str = "DELETE FROM hatshop_meta WHERE name = 'holding'";

/// Writes that note, its text bound to `placeholder` (`$1`, `?`).
pub fn write_holding(placeholder: &str) -> String {
    format!("INSERT INTO hatshop_meta (name, made_by) VALUES ('holding', {placeholder})")
}

/// Fine when `existing` (hatshop's table names found in `target`) holds the marker;
/// else the error that the store holds nothing of hatshop's (`verify`, a shard).
pub fn check_marked(target: &str, existing: &[String]) -> Result<(), DbError> {
    if existing.iter().any(|t| t == MARKER) {
        Ok(())
    } else {
        Err(not_ours(target))
    }
}

/// The error when the store holds nothing of hatshop's (`verify`, a shard).
pub fn not_ours(target: &str) -> DbError {
    DbError::new(
        ErrorKind::Other,
        format!("{target} holds no hatshop tables (no {MARKER} marker)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(recreate: bool) -> Ownership {
        Ownership {
            recreate,
            note: "test".into(),
        }
    }

    #[test]
    fn only_marked_tables_are_dropped() {
        let theirs = vec!["orders".to_string()];
        let err = owner(false).may_drop("sqlite://x.db", &theirs).unwrap_err();
        assert!(
            err.message
                .starts_with("refusing to drop orders in sqlite://x.db"),
            "{}",
            err.message
        );
        assert!(owner(true).may_drop("x", &theirs).is_ok());
        let ours = vec!["orders".to_string(), MARKER.to_string()];
        assert!(owner(false).may_drop("x", &ours).is_ok());
        assert!(owner(false).may_drop("x", &[]).is_ok());
    }
}
