//! Progress while a run goes: a bar on a terminal, else a plain line on stderr every
//! `--progress-interval` seconds.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::config::RunConfig;
use crate::console::note;
use crate::numbers::{format_us, thousands};
use crate::runner::{IntervalLatency, PhaseClock, Progress};

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

/// Starts showing progress, unless `--quiet` (or a plain line is asked never); the
/// measured rate counts from when `phases` says measuring began.
pub(super) fn show_progress(
    config: &RunConfig,
    progress: Arc<Progress>,
    phases: Arc<PhaseClock>,
) -> Option<Shown> {
    if !config.show_progress {
        return None;
    }
    // A shard applies about its share of the stream; a stream that --duration ends, or
    // whose warm-up ends on the clock, has no total to count towards.
    let shards = config.shard.map_or(1, |shard| shard.count) as u64;
    let total = (!config.without_end() && config.warmup_until.is_none())
        .then(|| config.total_events().div_ceil(shards));
    if std::io::stderr().is_terminal() {
        return Some(progress_bar(total, progress, phases));
    }
    let every = config.progress_interval?;
    let started = Instant::now();
    let ticker = tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut reader = Reader::new(progress, phases, every);
        loop {
            tick.tick().await;
            let now = reader.read();
            note!(
                "progress: {:.1} s, {}, {}{} events, {}",
                started.elapsed().as_secs_f64(),
                now.phase,
                thousands(now.applied),
                total.map_or(String::new(), |total| format!("/{}", thousands(total))),
                now.rest
            );
        }
    });
    Some(Shown { bar: None, ticker })
}

/// The bar on a terminal, redrawn four times a second; without a total, a count.
fn progress_bar(total: Option<u64>, progress: Arc<Progress>, phases: Arc<PhaseClock>) -> Shown {
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
        // Over the last two seconds, so a steady rate reads steady.
        let mut reader = Reader::new(progress, phases, Duration::from_secs(2));
        loop {
            tick.tick().await;
            let now = reader.read();
            shown.set_position(now.applied);
            shown.set_message(format!("{}, {}", now.phase, now.rest));
        }
    });
    Shown {
        bar: Some(bar),
        ticker,
    }
}

/// The run's counters read for a progress line, the rate over a window of its own.
struct Reader {
    progress: Arc<Progress>,
    phases: Arc<PhaseClock>,
    rate: RateWindow,
    measuring: bool,
    latency: LatencyShown,
}

/// One reading: the events applied, the phase, and the rest of the line (`812 ops/s,
/// p50 …, 96,767 measured, 0 errors`).
struct Reading {
    applied: u64,
    phase: &'static str,
    rest: String,
}

impl Reader {
    fn new(progress: Arc<Progress>, phases: Arc<PhaseClock>, window: Duration) -> Reader {
        Reader {
            progress,
            phases,
            rate: RateWindow::new(window),
            measuring: false,
            latency: LatencyShown::default(),
        }
    }

    fn read(&mut self) -> Reading {
        let applied = self.progress.applied.load(Ordering::Relaxed);
        let measured = self.progress.measured.load(Ordering::Relaxed);
        let errors = self.progress.errors.load(Ordering::Relaxed);
        let began = self.phases.measure.get().copied();
        let ops_s = self.rate.of_phase(
            Instant::now(),
            applied,
            (measured, began),
            &mut self.measuring,
        );
        Reading {
            applied,
            phase: phase(&self.phases, measured),
            rest: format!(
                "{} ops/s{}, {} measured, {} errors",
                thousands(ops_s as u64),
                self.latency.text(&self.progress),
                thousands(measured),
                thousands(errors)
            ),
        }
    }
}

/// Which part of the run is going: nothing is measured before the load and warm-up end.
fn phase(phases: &PhaseClock, measured: u64) -> &'static str {
    if measured > 0 || phases.measure.get().is_some() {
        "measuring"
    } else if phases.load.get().is_some() && phases.loaded.get().is_none() {
        "load"
    } else {
        "warm-up"
    }
}

/// The latency part of a progress line: the p50 and p99 of the intervals completed
/// since the line before, or, where none completed since (a bar redrawn within an
/// interval), those last shown.
#[derive(Default)]
struct LatencyShown {
    from: u64,
    last: Option<IntervalLatency>,
}

impl LatencyShown {
    /// `, p50 812 µs, p99 2,315 µs`, or nothing before the first measured interval.
    fn text(&mut self, progress: &Progress) -> String {
        if let Some(latest) = progress.latency_since(&mut self.from) {
            self.last = Some(latest);
        }
        self.last.map_or(String::new(), |l| {
            format!(
                ", p50 {} µs, p99 {} µs",
                format_us(l.p50_us),
                format_us(l.p99_us)
            )
        })
    }
}

/// Events a second over a trailing window, from the times the counts were read.
struct RateWindow {
    span: Duration,
    seen: VecDeque<(Instant, u64)>,
}

impl RateWindow {
    /// A window that counts from zero, now.
    fn new(span: Duration) -> RateWindow {
        RateWindow {
            span,
            seen: VecDeque::from([(Instant::now(), 0)]),
        }
    }

    /// The rate of the phase going: events applied during the load and warm-up, then
    /// measured operations alone, `(count, when measuring began)`: the window starts
    /// afresh there (at the last reading, where that is not known), so the first
    /// measured rate holds none of the load's and no time before it.
    fn of_phase(
        &mut self,
        now: Instant,
        applied: u64,
        (measured, began): (u64, Option<Instant>),
        measuring: &mut bool,
    ) -> f64 {
        if measured > 0 && !*measuring {
            *measuring = true;
            let last = self.seen.back().map_or(now, |&(at, _)| at);
            self.seen = VecDeque::from([(began.filter(|&b| b < now).unwrap_or(last), 0)]);
        }
        self.add(now, if *measuring { measured } else { applied })
    }

    /// Notes `count` at `now`; the rate since the oldest reading within the window
    /// (the reading just before it, so the window is always spanned).
    fn add(&mut self, now: Instant, count: u64) -> f64 {
        while self.seen.len() > 1 && now.duration_since(self.seen[1].0) >= self.span {
            self.seen.pop_front();
        }
        let rate = match self.seen.front() {
            Some(&(then, before)) if now > then => {
                count.saturating_sub(before) as f64 / now.duration_since(then).as_secs_f64()
            }
            _ => 0.0,
        };
        self.seen.push_back((now, count));
        rate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window of 10 s, not yet measuring, and the instant `s` seconds from now.
    fn ten_seconds() -> (RateWindow, bool, impl Fn(f64) -> Instant) {
        let start = Instant::now();
        let at = move |s: f64| start + Duration::from_secs_f64(s);
        (RateWindow::new(Duration::from_secs(10)), false, at)
    }

    #[test]
    fn the_measured_rate_holds_none_of_the_loads() {
        let (mut window, mut measuring, at) = ten_seconds();
        // 50,000 events loaded in the first second, then 1,000 measured a second.
        window.of_phase(at(1.0), 50_000, (0, None), &mut measuring);
        let rate = window.of_phase(at(2.0), 51_000, (1_000, None), &mut measuring);
        assert!((rate - 1_000.0).abs() < 1.0, "{rate}");
        let rate = window.of_phase(at(3.0), 52_000, (2_000, None), &mut measuring);
        assert!((rate - 1_000.0).abs() < 1.0, "{rate}");
    }

    #[test]
    fn the_first_measured_rate_counts_from_when_measuring_began() {
        let (mut window, mut measuring, at) = ten_seconds();
        // Lines 10 s apart; the warm-up ends at 8 s, then 30,000 measured a second.
        window.of_phase(at(0.5), 1_000, (0, None), &mut measuring);
        let rate = window.of_phase(at(10.0), 150_000, (60_000, Some(at(8.0))), &mut measuring);
        assert!((rate - 30_000.0).abs() < 1.0, "{rate}");
    }

    #[test]
    fn a_steady_rate_reads_steady_whatever_the_ticks() {
        let mut window = RateWindow::new(Duration::from_secs(2));
        let start = window.seen[0].0;
        // 2,000 events a second, counted in steps of 64 as lanes add them.
        let mut rates = Vec::new();
        for tick in 1..=40u64 {
            let at = start + Duration::from_millis(250 * tick);
            let counted = (2_000 * 250 * tick / 1_000) / 64 * 64;
            rates.push(window.add(at, counted));
        }
        // From the first second on, within 2 % whatever step the count moved by.
        for rate in &rates[3..] {
            assert!((rate - 2_000.0).abs() < 40.0, "{rates:?}");
        }
    }
}
