//! hatshop owns what it made and nothing else. Its tables (or keyspace, or keys) are
//! created with a marker, `hatshop_meta`, that names the hatshop version and run; setup
//! drops only what carries the marker and refuses, in one line, to touch tables of the
//! same names that it did not create, unless `--recreate` is given.

use super::{DbError, ErrorKind};

/// The marker table (Redis: the marker key).
pub const MARKER: &str = "hatshop_meta";

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
