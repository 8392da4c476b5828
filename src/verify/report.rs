//! What verify found, as verify.json holds it and the terminal and pages show it: the
//! counts of what was expected, found, missing, extra, differing or uncertain, and the
//! first differences in words.

use std::fmt::Write;

use serde::{Deserialize, Serialize};

/// Differences listed in full; the rest are only counted.
const LISTED: usize = 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a verify came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The store holds what the stream says (where an outcome was known).
    Exact,
    /// So many orders, items and records differ.
    Differs(u64),
    /// Verify could not finish: nothing is known of the store.
    Unfinished,
}

/// What `verify` found: counts of what was expected, found, missing, extra or different.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct VerifyReport {
    /// The database read back (its password masked).
    #[serde(default)]
    pub database: String,
    /// When it was read.
    #[serde(default)]
    pub at: String,
    /// Why verify could not finish: the counts below mean nothing then, and the run is
    /// not verified (a verdict that replaces the previous one, so no page repeats it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub orders_expected: u64,
    pub orders_found: u64,
    pub missing_orders: u64,
    pub extra_orders: u64,
    pub differing_orders: u64,
    /// Orders a write with an unknown outcome touched: either outcome is fine.
    #[serde(default)]
    pub uncertain_orders: u64,
    /// Orders written after their lane's last logged operation (a killed run): there
    /// or not as some state from there says; content that matches none of those states
    /// (a write cut by the kill) counts as uncertain.
    #[serde(default)]
    pub past_log_orders: u64,
    /// Orders raced on (`conflicts`) whose final state is not the stream's last:
    /// an update was lost (last-write-wins, or applied out of stream order). Counted
    /// apart: racing clients make them, not the store's failure to keep data.
    #[serde(default)]
    pub lost_updates: u64,
    /// Orders raced on (`conflicts`), lost or not.
    #[serde(default)]
    pub raced_orders: u64,
    /// Raced orders the stream deleted that are there: a racing update applied after
    /// the delete wrote the order back (a store that writes an update as an upsert,
    /// like Cassandra). Counted apart, like lost updates.
    #[serde(default)]
    pub resurrected_orders: u64,
    pub items_expected: u64,
    pub items_found: u64,
    pub missing_items: u64,
    pub extra_items: u64,
    pub differing_items: u64,
    #[serde(default)]
    pub keys_expected: u64,
    #[serde(default)]
    pub keys_found: u64,
    #[serde(default)]
    pub missing_keys: u64,
    #[serde(default)]
    pub extra_keys: u64,
    /// Keys that hold an older version than the stream wrote (lost updates).
    #[serde(default)]
    pub stale_keys: u64,
    #[serde(default)]
    pub differing_keys: u64,
    #[serde(default)]
    pub uncertain_keys: u64,
    /// Keys written after their lane's last logged operation: any version from there
    /// is accepted.
    #[serde(default)]
    pub past_log_keys: u64,
    /// Orders that hold exactly what the stream's events write, but whose state after
    /// them is not the one the events (an edited events file) give: not the database's
    /// difference, and not counted as one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inconsistent_states: u64,
    /// The first differences, in words.
    pub first_differences: Vec<String>,
    /// Where only what the run's own events wrote was read back: the verdict the rest
    /// rests on. The counts above are of what was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rests_on: Option<RestsOn>,
    /// Where the op log's journal was damaged: what the damage leaves unknown, in
    /// words. The targets it may hide writes to are judged past their lane's log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damaged_log: Option<String>,
}

/// The earlier verdict a verify that read back only a run's own writes rests on: the
/// run whose tables this one went on from, verified exact.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct RestsOn {
    pub run: String,
    pub folder: String,
}

impl VerifyReport {
    /// Orders, items and records that differ from what the stream says (uncertain ones
    /// are counted apart).
    pub fn differences(&self) -> u64 {
        self.missing_orders
            + self.extra_orders
            + self.differing_orders
            + self.missing_items
            + self.extra_items
            + self.differing_items
            + self.missing_keys
            + self.extra_keys
            + self.stale_keys
            + self.differing_keys
    }

    /// What it came to.
    pub fn verdict(&self) -> Verdict {
        match (&self.error, self.differences()) {
            (Some(_), _) => Verdict::Unfinished,
            (None, 0) => Verdict::Exact,
            (None, n) => Verdict::Differs(n),
        }
    }

    /// Whether the store holds exactly what the stream says.
    pub fn is_exact(&self) -> bool {
        self.verdict() == Verdict::Exact
    }

    /// The verdict of a verify that could not finish, reading `database`.
    pub fn failed(database: String, at: String, error: String) -> VerifyReport {
        VerifyReport {
            database,
            at,
            error: Some(error),
            ..VerifyReport::default()
        }
    }

    pub(super) fn note(&mut self, text: String) {
        if self.first_differences.len() < LISTED {
            self.first_differences.push(text);
        }
    }

    /// A few lines for the terminal.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Some(rests_on) = &self.rests_on {
            let _ = writeln!(
                out,
                "read back:  what this run's own events wrote; the rest as run {} left it, \
                 verified exact then ({}); `hatshop verify --full` reads everything",
                rests_on.run, rests_on.folder
            );
        }
        let orders = self.orders_expected + self.orders_found > 0;
        let keys = self.keys_expected + self.keys_found > 0;
        if orders || !keys {
            let _ = writeln!(
                out,
                "orders:     expected {}, found {}: {} missing, {} extra, {} differing{}{}",
                self.orders_expected,
                self.orders_found,
                self.missing_orders,
                self.extra_orders,
                self.differing_orders,
                uncertain(self.uncertain_orders),
                past_log(self.past_log_orders)
            );
            if self.raced_orders > 0 {
                let _ = writeln!(
                    out,
                    "lost updates: {} of the {} orders raced on (--conflicts) do not hold the stream's last state{}",
                    self.lost_updates,
                    self.raced_orders,
                    if self.resurrected_orders > 0 {
                        format!(
                            "; {} deleted orders were written back by a racing update",
                            self.resurrected_orders
                        )
                    } else {
                        String::new()
                    }
                );
            }
            let _ = writeln!(
                out,
                "line items: expected {}, found {}: {} missing, {} extra, {} differing",
                self.items_expected,
                self.items_found,
                self.missing_items,
                self.extra_items,
                self.differing_items
            );
        }
        if keys {
            let _ = writeln!(
                out,
                "records:    expected {}, found {}: {} missing, {} extra, {} stale, {} differing{}{}",
                self.keys_expected,
                self.keys_found,
                self.missing_keys,
                self.extra_keys,
                self.stale_keys,
                self.differing_keys,
                uncertain(self.uncertain_keys),
                past_log(self.past_log_keys)
            );
        }
        self.render_notes(&mut out);
        out
    }

    /// The first differences in words, and the notes on what was not judged.
    fn render_notes(&self, out: &mut String) {
        for d in &self.first_differences {
            let _ = writeln!(out, "  {d}");
        }
        if self.inconsistent_states > 0 {
            let _ = writeln!(
                out,
                "note: {} orders hold what the stream's events write, but not the state hash \
                 its events give after them (an edited events file?); not counted as differences",
                self.inconsistent_states
            );
        }
        if let Some(damage) = &self.damaged_log {
            let _ = writeln!(out, "note: {damage}");
        }
        let listed = self.first_differences.len() as u64;
        if self.differences() > listed {
            let _ = writeln!(out, "  … and {} more", self.differences() - listed);
        }
    }
}

/// The note on targets written after their lane's last logged operation (a killed
/// run), judged against every state they passed through from there.
fn past_log(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(
            "; {n} written after their lane's last logged operation, each judged against every state from there"
        )
    }
}

fn uncertain(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(", {n} uncertain (a write with an unknown outcome; not judged)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verify_that_could_not_finish_is_neither_exact_nor_counted() {
        let failed = VerifyReport::failed("db".into(), "now".into(), "gone".into());
        assert_eq!(failed.verdict(), Verdict::Unfinished);
        assert!(!failed.is_exact());
        let differing = VerifyReport {
            missing_orders: 2,
            stale_keys: 1,
            ..VerifyReport::default()
        };
        assert_eq!(differing.verdict(), Verdict::Differs(3));
        assert_eq!(VerifyReport::default().verdict(), Verdict::Exact);
    }
}
