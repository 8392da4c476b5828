//! Cassandra's garbage-collector pauses, from the JVM's unified GC log (the nodes
//! hatshop starts write `gc.log` with `-Xlog:gc*:…:time,uptime,level,tags`). Only the
//! pause summaries count: lines tagged exactly `gc` that say `Pause`, e.g.
//!
//! ```text
//! [2026-11-22T11:40:09.834+0000][0.980s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->10M(1024M) 19.287ms
//! ```
//!
//! The line is written when the pause ends; it began `pause_ms` earlier.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// One stop-the-world pause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct GcPause {
    /// The node (1-based) whose JVM paused.
    pub node: usize,
    /// When the pause began (RFC 3339, UTC, milliseconds).
    pub began_at: String,
    /// Seconds from the start of the measured phase to the pause (negative: before it).
    pub at_s: f64,
    /// `young`, `mixed`, `full`, `remark` or `cleanup`.
    pub kind: String,
    /// What the JVM says caused it (`G1 Evacuation Pause`, `Metadata GC Threshold`).
    pub cause: String,
    pub pause_ms: f64,
    pub heap_before_mb: Option<u64>,
    pub heap_after_mb: Option<u64>,
}

/// A pause as parsed, before it is placed on the run's time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedPause {
    pub ended: SystemTime,
    pub kind: &'static str,
    pub cause: String,
    pub pause_ms: f64,
    pub heap_before_mb: Option<u64>,
    pub heap_after_mb: Option<u64>,
}

impl ParsedPause {
    /// When the pause started: its end less its length.
    pub fn began(&self) -> SystemTime {
        self.ended - Duration::from_secs_f64(self.pause_ms / 1_000.0)
    }
}

/// The pauses in a log's text, in order. A line that is a pause summary but cannot be
/// read is an error naming it: a log that changed format must not pass as pause-free.
pub fn parse(text: &str) -> Result<Vec<ParsedPause>, String> {
    let mut pauses = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if !is_pause_summary(line) {
            continue;
        }
        let pause = parse_line(line).ok_or_else(|| {
            format!(
                "line {} of the GC log is not a pause I can read: {line}",
                i + 1
            )
        })?;
        pauses.push(pause);
    }
    Ok(pauses)
}

/// `[time][uptime][level][gc          ] GC(n) Pause …`: the summary, not the
/// `gc,start` line or a phase.
fn is_pause_summary(line: &str) -> bool {
    let mut fields = line.splitn(5, ']');
    let tags = fields.nth(3).unwrap_or("");
    tags.trim_start_matches('[').trim() == "gc"
        && fields
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with("GC(") && rest.contains(") Pause "))
}

fn parse_line(line: &str) -> Option<ParsedPause> {
    let time = line.strip_prefix('[')?.split(']').next()?;
    let ended = parse_time(time)?;
    let rest = line.splitn(5, ']').nth(4)?.trim();
    let after = rest.split_once(") Pause ")?.1;
    let ms_text = after.rsplit_once(' ')?.1.strip_suffix("ms")?;
    let pause_ms: f64 = ms_text.parse().ok()?;
    let (what, heap) = match after.rsplit_once(' ')?.0.rsplit_once(' ') {
        Some((what, heap)) if heap.contains("->") => (what, Some(heap)),
        _ => (after.rsplit_once(' ')?.0, None),
    };
    // `Young (Normal) (G1 Evacuation Pause)`, `Young (Mixed) (…)`, `Full (System.gc())`,
    // `Remark`, `Cleanup`.
    let (name, detail) = match what.split_once(' ') {
        Some((name, detail)) => (name, detail),
        None => (what, ""),
    };
    let groups = parenthesised(detail);
    let kind = match name {
        "Young" if groups.first() == Some(&"Mixed") => "mixed",
        "Young" => "young",
        "Full" => "full",
        "Remark" => "remark",
        "Cleanup" => "cleanup",
        _ => return None,
    };
    let cause = match kind {
        "young" | "mixed" => groups.get(1).copied().unwrap_or(""),
        _ => groups.first().copied().unwrap_or(""),
    }
    .to_string();
    let (heap_before_mb, heap_after_mb) = match heap {
        Some(heap) => {
            let (before, after) = heap.split_once("->")?;
            let after = after.split('(').next()?;
            (megabytes(before), megabytes(after))
        }
        None => (None, None),
    };
    Some(ParsedPause {
        ended,
        kind,
        cause,
        pause_ms,
        heap_before_mb,
        heap_after_mb,
    })
}

/// The top-level `(…)` groups of `(Normal) (System.gc())`, inner parentheses kept.
fn parenthesised(text: &str) -> Vec<&str> {
    let mut groups = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => {
                if depth == 0 {
                    start = i + 1;
                }
                depth += 1;
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    groups.push(&text[start..i]);
                }
            }
            _ => {}
        }
    }
    groups
}

/// `52M`, `1G`, `512K` in MB.
fn megabytes(text: &str) -> Option<u64> {
    let (number, unit) = text.split_at(text.len().checked_sub(1)?);
    let n: u64 = number.parse().ok()?;
    match unit {
        "K" => Some(n / 1024),
        "M" => Some(n),
        "G" => Some(n * 1024),
        _ => None,
    }
}

/// `2026-11-22T11:40:09.834+0000`.
fn parse_time(text: &str) -> Option<SystemTime> {
    let (local, offset) = text.split_at(text.len().checked_sub(5)?);
    let sign = match offset.as_bytes().first()? {
        b'+' => 1i64,
        b'-' => -1,
        _ => return None,
    };
    let hours: i64 = offset.get(1..3)?.parse().ok()?;
    let minutes: i64 = offset.get(3..5)?.parse().ok()?;
    let utc = humantime::parse_rfc3339(&format!("{local}Z")).ok()?;
    let shift = Duration::from_secs((hours * 3600 + minutes * 60).unsigned_abs());
    Some(if sign > 0 { utc - shift } else { utc + shift })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from a Cassandra 5.0.4 node hatshop started (JDK 17, G1), with a mixed
    /// and a full pause from the same JVM's format added.
    const LOG: &str = "\
[2026-11-22T11:40:09.814+0000][0.960s][info][gc,start    ] GC(0) Pause Young (Normal) (G1 Evacuation Pause)
[2026-11-22T11:40:09.834+0000][0.980s][info][gc,heap     ] GC(0) Eden regions: 51->0(50)
[2026-11-22T11:40:09.834+0000][0.980s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->10M(1024M) 19.287ms
[2026-11-22T11:40:10.034+0000][1.180s][info][gc          ] GC(1) Pause Young (Concurrent Start) (Metadata GC Threshold) 24M->12M(1024M) 13.654ms
[2026-11-22T11:40:10.034+0000][1.180s][info][gc          ] GC(2) Concurrent Mark Cycle
[2026-11-22T11:40:10.045+0000][1.191s][info][gc          ] GC(2) Pause Remark 13M->13M(1024M) 2.681ms
[2026-11-22T11:40:10.049+0000][1.195s][info][gc          ] GC(2) Pause Cleanup 13M->13M(1024M) 0.107ms
[2026-11-22T11:40:10.060+0000][1.206s][info][gc          ] GC(2) Concurrent Mark Cycle 25.235ms
[2026-11-22T11:45:01.500+0000][292.6s][info][gc          ] GC(20) Pause Young (Mixed) (G1 Evacuation Pause) 300M->120M(1024M) 8.500ms
[2026-11-22T11:46:00.000+0100][351.1s][info][gc          ] GC(21) Pause Full (System.gc()) 900M->200M(1024M) 412.250ms
";

    #[test]
    fn a_g1_log_gives_its_pauses_by_kind() {
        let pauses = parse(LOG).unwrap();
        let kinds: Vec<&str> = pauses.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            ["young", "young", "remark", "cleanup", "mixed", "full"]
        );
        let first = &pauses[0];
        assert_eq!(first.pause_ms, 19.287);
        assert_eq!(first.cause, "G1 Evacuation Pause");
        assert_eq!(
            (first.heap_before_mb, first.heap_after_mb),
            (Some(52), Some(10))
        );
        assert_eq!(
            humantime::format_rfc3339_millis(first.began()).to_string(),
            "2026-11-22T11:40:09.814Z"
        );
        assert_eq!(pauses[1].cause, "Metadata GC Threshold");
        assert_eq!(pauses[5].cause, "System.gc()");
        // +0100: an hour ahead of UTC.
        assert_eq!(
            humantime::format_rfc3339_millis(pauses[5].ended).to_string(),
            "2026-11-22T10:46:00.000Z"
        );
        assert_eq!(parse("").unwrap(), Vec::new());
    }

    #[test]
    fn a_pause_line_it_cannot_read_is_an_error_not_silence() {
        let bad = "[2026-11-22T11:40:09.834+0000][0.980s][info][gc          ] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 52M->10M(1024M) soon";
        let err = parse(bad).unwrap_err();
        assert!(err.starts_with("line 1 of the GC log"), "{err}");
    }
}
