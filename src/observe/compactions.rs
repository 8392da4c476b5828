//! Cassandra's compactions, from each node's `system.log`: the line CompactionTask
//! writes when one ends, with how long it took (the nodes hatshop starts log their
//! times in UTC), e.g.
//!
//! ```text
//! INFO  [CompactionExecutor:2] 2026-11-22 13:52:49,793 CompactionTask.java:258 - Compacted (0154…) 4 sstables to [/…/data/data/system_schema/tables-afdd…/nb-419-big,] to level=0.  6.521KiB to 5.562KiB (~85% of original) in 9ms.  Read Throughput = …
//! ```

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// One compaction of one node, as compactions.csv holds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Compaction {
    pub node: usize,
    /// When it began (RFC 3339, UTC, milliseconds).
    pub began_at: String,
    /// Seconds from the start of the measured phase (negative: before it).
    pub at_s: f64,
    pub took_ms: f64,
    pub keyspace: String,
    pub table: String,
    pub sstables: u64,
}

/// A compaction as parsed, before it is placed on the run's time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCompaction {
    pub ended: SystemTime,
    pub took_ms: f64,
    pub keyspace: String,
    pub table: String,
    pub sstables: u64,
}

impl ParsedCompaction {
    /// When the compaction started: its end less its duration.
    pub fn began(&self) -> SystemTime {
        self.ended
            .checked_sub(Duration::from_secs_f64(self.took_ms / 1_000.0))
            .unwrap_or(self.ended)
    }
}

/// Every compaction a log tells of. A "Compacted (" line that cannot be read is an
/// error, never skipped: a silent gap would read as "no compaction then".
pub fn parse(text: &str) -> Result<Vec<ParsedCompaction>, String> {
    text.lines()
        .filter(|l| l.contains("CompactionTask.java") && l.contains(" - Compacted ("))
        .map(|l| parse_line(l).ok_or_else(|| format!("cannot read the compaction line: {l}")))
        .collect()
}

fn parse_line(line: &str) -> Option<ParsedCompaction> {
    // LEVEL [thread] DATE TIME,MS File:line - message
    let after_thread = &line[line.find("] ")? + 2..];
    let mut words = after_thread.split_whitespace();
    let (date, time) = (words.next()?, words.next()?);
    let ended = humantime::parse_rfc3339(&format!("{date}T{}Z", time.replace(',', "."))).ok()?;
    let message = &line[line.find(" - Compacted (")? + 3..];
    let sstables: u64 = message
        .split(") ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // The first output path: …/data/<keyspace>/<table>-<id>/…
    let paths = &message[message.find('[')? + 1..];
    let path = &paths[..paths.find([',', ']'])?];
    // A compaction whose data all expired writes nothing: `to []`, no table named.
    let (keyspace, table) = if path.is_empty() {
        (String::new(), String::new())
    } else {
        let mut parts = path.split('/').collect::<Vec<_>>();
        parts.pop();
        let table_dir = parts.pop()?;
        let keyspace = parts.pop()?.to_string();
        let table = table_dir.rsplit_once('-').map_or(table_dir, |(t, _)| t);
        (keyspace, table.to_string())
    };
    let took = message.split(" in ").nth(1)?.split("ms").next()?;
    let took_ms: f64 = took.replace(',', "").trim().parse().ok()?;
    Some(ParsedCompaction {
        ended,
        took_ms,
        keyspace,
        table,
        sstables,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Recorded from a Cassandra 5.0.4 node started by hatshop (paths shortened).
    const LOG: &str = "\
INFO  [main] 2026-11-22 13:52:40,001 CassandraDaemon.java:600 - Startup complete
INFO  [CompactionExecutor:2] 2026-11-22 13:52:49,793 CompactionTask.java:258 - Compacted (01542160-e67c-11f1-80a8-79a6dd6e79d5) 4 sstables to [/tmp/c/node1/data/data/system_schema/tables-afddfb9dbc1e30688056eed6c302ba09/nb-419-big,] to level=0.  6.521KiB to 5.562KiB (~85% of original) in 9ms.  Read Throughput = 697.061KiB/s, Write Throughput = 594.454KiB/s, Row Throughput = ~101/s.  17 total partitions merged to 17.
INFO  [CompactionExecutor:2] 2026-11-22 13:52:35,039 CompactionTask.java:258 - Compacted (f88752aa-e67b-11f1-80a8-79a6dd6e79d5) 4 sstables to [] to level=0.  0B to 0B (~0% of original) in 19ms.  Read Throughput = 0B/s
INFO  [CompactionExecutor:1] 2026-11-22 13:53:10,250 CompactionTask.java:258 - Compacted (11aa2160-e67c-11f1-80a8-79a6dd6e79d5) 32 sstables to [/tmp/c/node1/data/data/hatshop/load_rows-5c1e3a10e67b11f1/nb-77-big,] to level=0.  301.110MiB to 299.982MiB (~99% of original) in 12,345ms.  Read Throughput = 24.391MiB/s
";

    #[test]
    fn compactions_are_read_with_table_and_duration() {
        let mut found = parse(LOG).unwrap();
        assert_eq!(found.len(), 3);
        let empty = found.remove(1);
        assert_eq!((empty.keyspace.as_str(), empty.took_ms), ("", 19.0));
        assert_eq!(found[0].keyspace, "system_schema");
        assert_eq!(found[0].table, "tables");
        assert_eq!(found[0].sstables, 4);
        assert_eq!(found[0].took_ms, 9.0);
        assert_eq!(
            humantime::format_rfc3339_millis(found[0].ended).to_string(),
            "2026-11-22T13:52:49.793Z"
        );
        assert_eq!(
            (found[1].keyspace.as_str(), found[1].table.as_str()),
            ("hatshop", "load_rows")
        );
        assert_eq!(found[1].took_ms, 12_345.0);
        assert_eq!(
            humantime::format_rfc3339_millis(found[1].began()).to_string(),
            "2026-11-22T13:52:57.905Z"
        );
    }

    #[test]
    fn a_compaction_line_that_cannot_be_read_is_an_error() {
        let cut = "INFO  [CompactionExecutor:2] 2026-11-22 13:52:49,793 CompactionTask.java:258 - Compacted (0154) 4 sstables to";
        assert!(
            parse(cut)
                .unwrap_err()
                .contains("cannot read the compaction line")
        );
    }
}
