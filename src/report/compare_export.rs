//! A comparison's table for other tools (`compare --export-csv`, `--export-markdown`),
//! as hyperfine exports its own: the rows and verdicts of the terminal table.

use std::fmt::Write;

use super::compare::{advice_of, compare, event_types, numbers};
use super::load::LoadedRun;
use super::significance::ALPHA;

/// CSV with plain numbers (no separators; latencies in µs, to the nanosecond): a row per
/// event type and run, the run's folder and label, its ratio to run #1 and the p-value
/// (both empty for run #1, the baseline), the verdict, and the percentiles that rest
/// on too few samples.
pub fn csv(runs: &[LoadedRun]) -> String {
    let mut out = String::from(
        "event_type,run,dir,label,ops_s,mean_us,p50_us,p99_us,p99.9_us,p99.99_us,max_us,\
         ratio,p_value,verdict,thin_percentiles\n",
    );
    for event_type in event_types(runs) {
        for c in compare(runs, &event_type) {
            let s = c.summary;
            let latency = |us: f64| match s.ok {
                0 => String::new(),
                _ => format!("{us:.3}"),
            };
            let run = &runs[c.run];
            let _ = write!(
                out,
                "{},{},{},{},{:.1},{}",
                field(&event_type),
                c.run + 1,
                field(&run.dir.display().to_string()),
                field(&run.label()),
                s.throughput_ops_s,
                latency(s.mean_us)
            );
            for label in ["p50", "p99", "p99.9", "p99.99"] {
                let _ = write!(out, ",{}", latency(s.percentile(label)));
            }
            let thin: Vec<&str> = ["p50", "p99", "p99.9", "p99.99"]
                .into_iter()
                .filter(|label| s.is_thin(label))
                .collect();
            let _ = writeln!(
                out,
                ",{},{},{},{},{}",
                latency(s.max_us),
                c.ratio
                    .filter(|_| c.run > 0)
                    .map_or(String::new(), |r| format!("{r:.4}")),
                c.test
                    .filter(|_| c.run > 0)
                    .map_or(String::new(), |t| format!("{:.4}", t.p_value)),
                field(&c.verdict()),
                thin.join(" ")
            );
        }
    }
    out
}

/// A Markdown table as a person reads it (the terminal's numbers, `*` on a percentile
/// that rests on too few samples), the runs named above it and the advice below.
pub fn markdown(runs: &[LoadedRun]) -> String {
    let mut out = String::new();
    for (i, run) in runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "- **#{}** `{}`: {}",
            i + 1,
            run.dir.display(),
            run.label()
        );
    }
    out.push_str(
        "\n| event | run | ops/s | mean µs | p50 µs | p99 µs | p99.9 µs | p99.99 µs | max µs | ratio | p-value | verdict |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    let mut advice = Vec::new();
    for event_type in event_types(runs) {
        for c in compare(runs, &event_type) {
            let shown = if c.run == 0 { event_type.as_str() } else { "" };
            let _ = write!(out, "| {shown} | #{} |", c.run + 1);
            for value in numbers(&c) {
                let _ = write!(out, " {} |", value.replace('*', "\\*"));
            }
            let (verdict, why) = c.verdict_and_advice();
            let _ = writeln!(out, " {} |", verdict.replace('|', "\\|"));
            advice.push(why);
        }
    }
    let _ = writeln!(
        out,
        "\nratio = mean latency / run #1's; p-value of Welch's t-test (significant below {ALPHA}); \\* rests on fewer than 10 samples beyond it"
    );
    for line in advice_of(advice.into_iter()) {
        let _ = writeln!(out, "\n{line}");
    }
    out
}

/// A CSV field, quoted where it holds a comma, a quote or a line break.
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}
