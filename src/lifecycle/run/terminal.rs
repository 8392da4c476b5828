//! What a run prints for a person: the line it starts with, and the table, costs and
//! warnings it ends with.

use std::time::Duration;

use crate::config::RunConfig;
use crate::console::{note, say};
use crate::numbers::thousands;
use crate::report::run_text;
use crate::result_dir::{RunRecord, RunStatus};
use crate::stats::Summary;

/// "running W on URL (concurrency C); results in DIR", and how long an open loop
/// nothing bounds will take when that is long. A series (sweep, repeats) says its own
/// line for each run, after its header; `--quiet` leaves out the first line (it is
/// progress), not the warning.
pub(super) fn say_running(config: &RunConfig) {
    if config.print_details && config.show_progress {
        note!(
            "running {} on {} (concurrency {}); results in {}",
            config.workload_name(),
            config.db,
            config.concurrency,
            config.out_dir.display()
        );
    }
    if let Some(length) = config.unbounded_length.filter(|l| *l >= LONG_PLAN) {
        note!(
            "at this --rate the plan takes {} to send its events; --duration bounds it",
            crate::config::years_or_time(length.as_secs_f64())
        );
    }
}

/// An open loop this long is said before it starts.
const LONG_PLAN: Duration = Duration::from_secs(3600);

/// The header, the table and any warning, on stdout.
pub(super) fn print_result(config: &RunConfig, record: &RunRecord, summary: &Summary) {
    let width = crate::console::text_width().filter(|_| !config.wide);
    crate::console::out(&run_text::render(
        record,
        summary,
        &config.percentiles,
        width,
    ));
    if summary.ops == 0 && !config.without_end() {
        say!(
            "warning: no operation was measured, so there is no latency or throughput to \
             read (the measured phase had {} events)",
            thousands(config.measured_events())
        );
    }
    if record.unmeasured_errors > 0 {
        say!(
            "warning: {} operations failed during load and warm-up",
            thousands(record.unmeasured_errors)
        );
    }
    if record.status == RunStatus::StoppedAtDeadline && record.measured_ops == 0 {
        say!("warning: --duration ran out before anything was measured (in the load or warm-up)");
    }
}
