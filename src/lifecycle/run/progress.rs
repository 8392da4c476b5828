//! Progress while a run goes: a bar on a terminal, else a plain line on stderr every
//! `--progress-interval` seconds.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::config::RunConfig;
use crate::console::note;
use crate::report::table::thousands;
use crate::runner::Progress;

/// Progress while a run goes: a bar on a terminal, else a plain line on stderr every
/// `--progress-interval` seconds (a CI log then shows the run moving).
pub(super) struct Shown {
    bar: Option<ProgressBar>,
    ticker: tokio::task::JoinHandle<()>,
}

impl Shown {
    /// Stops the ticker and clears the bar.
    pub(super) fn end(self) {
        self.ticker.abort();
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Starts showing progress, unless `--quiet` (or a plain line is asked never).
pub(super) fn show_progress(config: &RunConfig, progress: Arc<Progress>) -> Option<Shown> {
    if !config.show_progress {
        return None;
    }
    // A shard applies about its share of the stream; a stream that --duration ends has
    // no total to count towards.
    let shards = config.shard.map_or(1, |shard| shard.count) as u64;
    let total = (!config.without_end()).then(|| config.total_events().div_ceil(shards));
    if std::io::stderr().is_terminal() {
        return Some(progress_bar(total, progress));
    }
    let every = config.progress_interval?;
    let started = std::time::Instant::now();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut last = 0u64;
        loop {
            tick.tick().await;
            let applied = progress.applied.load(Ordering::Relaxed);
            note!(
                "progress: {:.1} s, {}{} events, {} ops/s, {} measured, {} errors",
                started.elapsed().as_secs_f64(),
                thousands(applied),
                total.map_or(String::new(), |total| format!("/{}", thousands(total))),
                thousands((applied.saturating_sub(last) as f64 / every.as_secs_f64()) as u64),
                thousands(progress.measured.load(Ordering::Relaxed)),
                thousands(progress.errors.load(Ordering::Relaxed))
            );
            last = applied;
        }
    });
    Some(Shown { bar: None, ticker })
}

/// The bar on a terminal, redrawn four times a second; without a total, a count.
fn progress_bar(total: Option<u64>, progress: Arc<Progress>) -> Shown {
    let (bar, template) = match total {
        Some(total) => (
            ProgressBar::new(total),
            "{elapsed_precise} [{bar:32}] {human_pos}/{human_len} {msg}",
        ),
        None => (
            ProgressBar::no_length(),
            "{elapsed_precise} {human_pos} events {msg}",
        ),
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("a valid template")
            .progress_chars("=> "),
    );
    let shown = bar.clone();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let mut last = 0u64;
        loop {
            tick.tick().await;
            let applied = progress.applied.load(Ordering::Relaxed);
            let measured = progress.measured.load(Ordering::Relaxed);
            let errors = progress.errors.load(Ordering::Relaxed);
            shown.set_position(applied);
            shown.set_message(format!(
                "{} ops/s, {} measured, {} errors",
                thousands(applied.saturating_sub(last) * 4),
                thousands(measured),
                thousands(errors)
            ));
            last = applied;
        }
    });
    Shown {
        bar: Some(bar),
        ticker,
    }
}
