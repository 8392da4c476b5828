//! `hatshop run --find-max --p99-under 10ms`: the highest open-loop rate whose response
//! time p99 stays under a bound. Each rate is a run of its own (the rate's events for
//! `--duration`, 10 s by default, each step going on from the tables the step before
//! left: one load) in a folder under the search's folder: the rate doubles from `--rate`
//! (default 1,000) until a run misses (p99 over the bound, or it could not keep up),
//! then the gap between the last good rate and the first bad one is halved until they
//! are within 5 %. `sweep.csv` and `sweep.html` hold every run, drawn by rate: the knee;
//! `search.json` the answer, once the search reached one.
//! Several `--db` and `--repeat N` search each database N times, the searches taking
//! turns (a round of every database at a time), each in a folder of its own, and end
//! in one table: each database's highest rate under the bound, with its repeats'
//! spread (`findmax.csv`). A search whose curve is not monotonic (a rate kept the bound
//! above one that broke it) says so, with both.

mod each;

use std::path::Path;

use anyhow::{Result, bail};

use crate::cli::RunArgs;
use crate::config::RunConfig;
use crate::console::{note, say};
use crate::interrupt;
use crate::lifecycle::run::{EXIT_INTERRUPTED, execute, refuse_export_in_series};
use crate::numbers::{format_us, thousands};
use crate::report::sweep::{self, RunPlace, SearchAnswer, SweepRow};
use crate::result_dir;
use crate::result_dir::folder::{
    create_empty_folder, missing_folders, remove_if_unused, unique_dir,
};
use crate::stats::Summary;

/// Where the search starts, ops/s, without `--rate`.
const FIRST_RATE: f64 = 1_000.0;
/// Each run's length without `--duration`.
const STEP_SECONDS: f64 = 10.0;
/// A step whose database falls behind its rate is cut at this many times its length.
const STEP_CAP: f64 = 3.0;
/// A run keeps up when it did at least this share of the rate asked.
const KEPT_UP: f64 = 0.95;
/// The search ends when the bad rate is within this factor of the good one.
const CLOSE_ENOUGH: f64 = 1.05;
/// No search runs more steps than this.
const MOST_STEPS: usize = 20;

/// What one rate gave.
struct Step {
    rate: f64,
    measured_ops: u64,
    done_ops_s: f64,
    response_p99_us: f64,
}

impl Step {
    fn passes(&self, bound_us: f64) -> bool {
        self.response_p99_us <= bound_us && self.done_ops_s >= self.rate * KEPT_UP
    }
}

/// What one step says of its rate.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    Under,
    Over,
    BehindRate,
    /// Neither under nor over: the step says nothing of its rate.
    CutShort,
    MeasuredNothing,
}

impl Verdict {
    fn words(self) -> &'static str {
        match self {
            Verdict::Under => "under the bound",
            Verdict::Over => "over the bound",
            Verdict::BehindRate => "could not keep up",
            Verdict::CutShort => "cut short, not judged",
            Verdict::MeasuredNothing => "measured nothing, not judged",
        }
    }
}

/// The verdict on a step that ran its plan (`ran_its_plan`) or was cut short.
fn judge(step: &Step, ran_its_plan: bool, bound_us: f64) -> Verdict {
    if !ran_its_plan {
        Verdict::CutShort
    } else if step.measured_ops == 0 {
        Verdict::MeasuredNothing
    } else if step.passes(bound_us) {
        Verdict::Under
    } else if step.done_ops_s < step.rate * KEPT_UP {
        Verdict::BehindRate
    } else {
        Verdict::Over
    }
}

/// The next rate to try, from the rates that passed and failed so far; `None`: done.
fn next_rate(good: Option<f64>, bad: Option<f64>, first: f64) -> Option<f64> {
    match (good, bad) {
        (None, None) => Some(first),
        (Some(good), None) => Some(good * 2.0),
        // Even the first rate missed: halve, down to 1 op/s.
        (None, Some(bad)) => (bad > 1.0).then_some((bad / 2.0).max(1.0)),
        (Some(good), Some(bad)) => (bad / good > CLOSE_ENOUGH).then_some((good + bad) / 2.0),
    }
}

/// The next rate to try, in whole operations a second, or none when the search is
/// done: whole rates a step apart (8 under, 9 over) leave none between them, and a
/// rate already tried (a step cut short) is not tried again.
fn next_whole_rate(good: Option<f64>, bad: Option<f64>, first: f64, tried: &[f64]) -> Option<f64> {
    let rate = next_rate(good, bad, first)?.round().max(1.0);
    (!tried.contains(&rate)).then_some(rate)
}

/// `run --find-max`: the highest rate whose response time p99 stays under the bound.
pub async fn run(args: &RunArgs) -> Result<std::process::ExitCode> {
    refuse_export_in_series(args)?;
    crate::lifecycle::run::refuse_bounds_in(args, "--find-max")?;
    let Some(bound) = args.p99_under else {
        return Err(crate::cli::UsageError(
            "--find-max needs --p99-under, the bound on response time p99 (e.g. 10ms)".into(),
        )
        .into());
    };
    let bound_us = bound.as_secs_f64() * 1e6;
    if args.shard.is_some() {
        crate::cli::usage_bail!(
            "--shard splits one run over client machines; --find-max runs on one"
        );
    }
    if args.rate.is_some_and(|r| r.is_ramp()) || args.ramp.is_some() || args.stages.is_some() {
        crate::cli::usage_bail!(
            "--find-max chooses its own rates: give --rate one starting rate, and no --ramp or --stages"
        );
    }
    let first = args.rate.map_or(FIRST_RATE, |r| r.from);
    let mut template = args.clone();
    template.quiet = true;
    template.find_max = false;
    template.repeat = 1;
    template.duration = Some(args.duration.unwrap_or(STEP_SECONDS));
    template.rate = Some(crate::cli::RateArg::fixed(first));
    // One template a database; the whole configuration of each must be valid before
    // anything runs.
    let templates: Vec<RunArgs> = match args.db.len() {
        0 | 1 => vec![template],
        _ => args
            .db
            .iter()
            .map(|db| RunArgs {
                db: vec![db.clone()],
                ..template.clone()
            })
            .collect(),
    };
    for template in &templates {
        RunConfig::from_args(template)?;
    }
    let dir = match &args.out {
        Some(dir) => dir.clone(),
        None => unique_dir(
            Path::new("results"),
            &format!("findmax-{}", crate::stamp::for_names()),
        ),
    };
    if templates.len() > 1 || args.repeat > 1 {
        return each::searches(args, &dir, bound_us).await;
    }
    let made = missing_folders(&dir);
    create_empty_folder(&dir, "search")?;
    let result = one_search(&templates[0], &dir, first, bound_us).await;
    if result.is_err() {
        remove_if_unused(&dir, &made);
    }
    result
}

/// One search into `dir`: its steps, its answer said and written, its exit.
async fn one_search(
    template: &RunArgs,
    dir: &Path,
    first: f64,
    bound_us: f64,
) -> Result<std::process::ExitCode> {
    let mut searched = search(template, dir, first, bound_us).await?;
    write_answer(template, dir, &mut searched, bound_us)?;
    searched.exit()
}

/// What one search found.
pub(super) struct Searched {
    /// The highest rate under the bound, the last rate over it.
    pub(super) good: Option<f64>,
    pub(super) bad: Option<f64>,
    /// A rate that kept the bound above one that broke it: (kept, broke).
    pub(super) not_monotonic: Option<(f64, f64)>,
    pub(super) interrupted: bool,
    /// Why it stopped before its answer, where it did.
    pub(super) unanswered: Option<String>,
    pub(super) rows: Vec<SweepRow>,
}

impl Searched {
    /// How the search ends the command.
    pub(super) fn exit(self) -> Result<std::process::ExitCode> {
        if self.interrupted {
            note!("interrupted: the folder holds the runs that finished");
            return Ok(std::process::ExitCode::from(EXIT_INTERRUPTED));
        }
        if let Some(why) = self.unanswered {
            bail!("the search stopped short of its answer: {why}");
        }
        Ok(std::process::ExitCode::SUCCESS)
    }
}

/// A rate that kept the bound above a rate that broke it, from the steps' verdicts:
/// the highest such kept rate, and the lowest broken rate under it.
fn not_monotonic(steps: &[(f64, Verdict)]) -> Option<(f64, f64)> {
    let broke = |v: &Verdict| matches!(v, Verdict::Over | Verdict::BehindRate);
    steps
        .iter()
        .filter(|(_, v)| *v == Verdict::Under)
        .filter_map(|(kept, _)| {
            let lowest_broken = steps
                .iter()
                .filter(|(rate, v)| broke(v) && rate < kept)
                .map(|(rate, _)| *rate)
                .min_by(f64::total_cmp)?;
            Some((*kept, lowest_broken))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The steps of one search into `dir`, from `first` ops/s.
pub(super) async fn search(
    template: &RunArgs,
    dir: &Path,
    first: f64,
    bound_us: f64,
) -> Result<Searched> {
    note!(
        "finding the highest rate with response p99 under {} µs ({} s a rate) into {}",
        format_us(bound_us),
        template.duration.unwrap_or(STEP_SECONDS),
        dir.display()
    );
    let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut interrupted = false;
    let mut tried: Vec<f64> = Vec::new();
    let mut verdicts: Vec<(f64, Verdict)> = Vec::new();
    // Why the search stopped before it found its answer, when it did.
    let mut unanswered: Option<String> = None;
    for _ in 0..MOST_STEPS {
        let Some(rate) = next_whole_rate(good, bad, first, &tried) else {
            break;
        };
        tried.push(rate);
        let run_dir = dir.join(format!("rate={rate}"));
        let config = match step_config(template, rate, &run_dir) {
            Ok(config) => config,
            Err(refused) => {
                unanswered = Some(refused);
                break;
            }
        };
        let code = execute(&config).await?;
        let (step, run_rows) = read_step(&run_dir, rate, config.db.scheme())?;
        let verdict = judge(&step, run_rows[0].ran_its_plan(), bound_us);
        match verdict {
            Verdict::Under => good = Some(rate),
            Verdict::Over | Verdict::BehindRate => bad = Some(rate),
            Verdict::MeasuredNothing => {
                unanswered = Some(format!(
                    "rate {} ops/s measured nothing: the load and warm-up took the whole --duration; \
                     give a longer --duration or a shorter --warmup",
                    thousands(rate as u64)
                ))
            }
            Verdict::CutShort => {}
        }
        say_step(rate, &step, verdict);
        verdicts.push((rate, verdict));
        rows.extend(run_rows);
        if code == std::process::ExitCode::from(EXIT_INTERRUPTED) || interrupt::requested() {
            interrupted = true;
            break;
        }
        if unanswered.is_some() {
            break;
        }
    }
    let not_monotonic = not_monotonic(&verdicts);
    if let Some((kept, broke)) = not_monotonic {
        note!(
            "not monotonic: {} ops/s kept the bound above {} ops/s, which broke it",
            thousands(kept as u64),
            thousands(broke as u64)
        );
    }
    Ok(Searched {
        good,
        bad,
        not_monotonic,
        interrupted,
        unanswered,
        rows,
    })
}

/// The run of one rate, in the step's folder; why not, where that rate's config is
/// refused (a lower rate stretches a warm-up counted in events past --duration).
///
/// A step is the rate's events for its `--duration` (without `--events`), not a time:
/// a step that sends its whole stream leaves the tables holding it, and the next step
/// goes on from there (`--reuse-load=if-held`), so the search loads once. A step whose
/// database falls behind is cut at [`STEP_CAP`] times its length, and the step after it
/// loads anew.
fn step_config(template: &RunArgs, rate: f64, run_dir: &Path) -> Result<RunConfig, String> {
    let mut run_args = template.clone();
    run_args.rate = Some(crate::cli::RateArg::fixed(rate));
    run_args.out = Some(run_dir.to_path_buf());
    let mut cut = String::new();
    if template.stream.events.is_none() {
        let secs = template.duration.unwrap_or(STEP_SECONDS);
        run_args.stream.events = Some(((rate * secs).round() as u64).max(1));
        run_args.duration = Some(secs * STEP_CAP);
        cut = format!(
            " (a step is cut at {} s, {STEP_CAP} times its length)",
            secs * STEP_CAP
        );
    }
    run_args
        .reuse_load
        .get_or_insert(crate::cli::ReuseLoad::IfHeld);
    RunConfig::from_args(&run_args)
        .map(RunConfig::in_series)
        .map_err(|refused| {
            format!(
                "rate {} ops/s was not tried{cut}: {refused}",
                thousands(rate as u64)
            )
        })
}

/// `rate 4,000 ops/s: did 3,998 ops/s, response p99 812.3 µs: under the bound`.
fn say_step(rate: f64, step: &Step, verdict: Verdict) {
    let p99 = if step.measured_ops == 0 {
        "none".to_string()
    } else {
        format!("{} µs", format_us(step.response_p99_us))
    };
    say!(
        "rate {} ops/s: did {} ops/s, response p99 {p99}: {}",
        thousands(rate as u64),
        thousands(step.done_ops_s.round() as u64),
        verdict.words()
    );
}

/// Says what the search found, and writes sweep.csv and sweep.html of its steps in
/// rate order.
fn write_answer(
    template: &RunArgs,
    dir: &Path,
    searched: &mut Searched,
    bound_us: f64,
) -> Result<()> {
    let (good, bad) = (searched.good, searched.bad);
    let rows = &mut searched.rows;
    rows.sort_by(|a, b| {
        let rate = |r: &SweepRow| r.value.parse::<f64>().unwrap_or(0.0);
        rate(a).total_cmp(&rate(b))
    });
    let title = format!(
        "hatshop: the highest rate of {} with response p99 under {} µs",
        template.stream.workload,
        format_us(bound_us)
    );
    match good {
        Some(rate) => say!(
            "highest rate under the bound: {} ops/s{}",
            thousands(rate as u64),
            bad.map(|b| format!(" ({} ops/s was over)", thousands(b as u64)))
                .unwrap_or_default()
        ),
        None => say!("no rate tried kept response p99 under the bound"),
    }
    let answer = SearchAnswer {
        highest_under: good,
        lowest_over: bad.filter(|over| good.is_none_or(|under| over > &under)),
        not_monotonic: searched.not_monotonic,
        bound_us,
    };
    let (table, chart) = sweep::write(dir, &title, rows, Some(&answer))?;
    say!("table: {}\nchart: {}", table.display(), chart.display());
    // Only an answer the search reached is kept: a study keeps the cell that has one.
    if !searched.interrupted && searched.unanswered.is_none() {
        crate::files::write_json(&dir.join(sweep::SEARCH_JSON), &answer)?;
    }
    Ok(())
}

fn read_step(run_dir: &Path, rate: f64, database: &str) -> Result<(Step, Vec<SweepRow>)> {
    let summary: Summary = result_dir::seal::read_json(run_dir, result_dir::SUMMARY_JSON)?;
    let response_p99_us = summary
        .overall
        .response
        .as_ref()
        .map_or(f64::INFINITY, |r| r.percentile("p99"));
    let value = format!("{rate}");
    let record = result_dir::load_complete(run_dir)?;
    let went_on_from = record.went_on_from.map(|from| from.folder);
    let place = RunPlace {
        setting: "rate",
        value: &value,
        database,
        repeat: 1,
        run_dir: &run_dir.display().to_string(),
        status: record.status,
        went_on_from: went_on_from.as_deref(),
    };
    let rows = sweep::rows_of(&place, &summary, None);
    Ok((
        Step {
            rate,
            measured_ops: summary.ops,
            done_ops_s: summary.throughput_ops_s,
            response_p99_us,
        },
        rows,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_doubles_then_the_gap_is_halved() {
        assert_eq!(next_rate(None, None, 1000.0), Some(1000.0));
        assert_eq!(next_rate(Some(1000.0), None, 1000.0), Some(2000.0));
        assert_eq!(next_rate(Some(4000.0), Some(8000.0), 1000.0), Some(6000.0));
        assert_eq!(next_rate(Some(6000.0), Some(6200.0), 1000.0), None);
        assert_eq!(next_rate(None, Some(1000.0), 1000.0), Some(500.0));
        assert_eq!(next_rate(None, Some(1.0), 1000.0), None);
    }

    #[test]
    fn a_rate_that_keeps_the_bound_above_one_that_broke_it_is_not_monotonic() {
        use Verdict::*;
        let monotonic = [
            (1000.0, Under),
            (2000.0, Under),
            (4000.0, Over),
            (3000.0, Under),
        ];
        assert_eq!(not_monotonic(&monotonic), None);
        // As Cassandra did: 3,125 over, 3,250 over, 3,500 under.
        let bent = [
            (3125.0, Over),
            (3250.0, BehindRate),
            (3500.0, Under),
            (4000.0, Over),
        ];
        assert_eq!(not_monotonic(&bent), Some((3500.0, 3125.0)));
    }

    #[test]
    fn a_whole_rate_is_tried_once() {
        // 8 under, 9 over: 8.5 rounds to 9, tried already, so the answer is 8.
        assert_eq!(
            next_whole_rate(Some(8.0), Some(9.0), 1000.0, &[8.0, 9.0]),
            None
        );
        assert_eq!(
            next_whole_rate(Some(8.0), Some(12.0), 1000.0, &[8.0, 12.0]),
            Some(10.0)
        );
        // A first rate cut short is not run again into its own folder.
        assert_eq!(next_whole_rate(None, None, 1000.0, &[1000.0]), None);
    }

    #[test]
    fn a_step_passes_under_the_bound_and_keeping_up() {
        let step = |done, p99| Step {
            rate: 1000.0,
            measured_ops: 1000,
            done_ops_s: done,
            response_p99_us: p99,
        };
        assert!(step(1000.0, 900.0).passes(1000.0));
        assert!(!step(1000.0, 1100.0).passes(1000.0));
        assert!(!step(800.0, 900.0).passes(1000.0), "it fell behind");
    }
}
