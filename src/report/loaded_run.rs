//! A result folder read back for reports and comparisons: a complete folder (run.json
//! and summary.json; a run that did not finish is pointed to `hatshop recover`), with
//! intervals.csv, latency.hlog and verify.json when present. The checked form also
//! counts the op log's rows against run.json, so a cut or edited op log is noticed.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::hlog::{self, Logged};
use super::intervals::{self, IntervalRow};
use crate::files::read_json;
use crate::op_log::OpLog;
use crate::result_dir::{self, RunRecord};
use crate::stats::Summary;
use crate::verify::VerifyReport;

/// A result folder read back: everything a report or a comparison draws from.
pub struct LoadedRun {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub summary: Summary,
    pub intervals: Vec<IntervalRow>,
    pub histograms: Logged,
    pub verify: Option<VerifyReport>,
    /// server-metrics.csv: CPU, RSS, disk and network of the nodes and the client.
    pub metrics: Vec<crate::observe::resources::MetricsRow>,
    /// gc.csv: Cassandra's GC pauses during the run.
    pub gc: Vec<crate::observe::gc_log::GcPause>,
    /// compactions.csv: Cassandra's compactions during the run; `None`: not read.
    pub compactions: Option<Vec<crate::observe::compactions::Compaction>>,
    /// thread-pools.csv: Cassandra's thread pools during the run.
    pub pools: Vec<crate::observe::thread_pools::PoolRow>,
    /// A repeat folder (`run --repeat N`): every repeat's summary. `summary` then holds
    /// the medians, and the rest is the repeat nearest the median.
    pub repeats: Vec<Summary>,
    /// Of a repeat folder: the repeats cut short, left out of its figures.
    pub left_out: Vec<String>,
}

impl LoadedRun {
    /// A folder, with its op log checked against run.json; a repeat folder as its
    /// medians over the repeats.
    pub fn load_checked(dir: &Path) -> Result<LoadedRun> {
        if let Some(dirs) = super::repeats::repeat_dirs(dir) {
            return Self::load_repeats(dir, &dirs);
        }
        let run = Self::load(dir)?;
        check_op_log(dir, &run.record)?;
        Ok(run)
    }

    fn load_repeats(dir: &Path, dirs: &[PathBuf]) -> Result<LoadedRun> {
        let (runs, cut_short): (Vec<LoadedRun>, Vec<LoadedRun>) = dirs
            .iter()
            .map(|d| Self::load_checked(d))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .partition(|r| r.record.ran_its_plan());
        let left_out: Vec<String> = cut_short
            .iter()
            .map(|r| {
                let name = r.dir.file_name().unwrap_or_default().to_string_lossy();
                format!("{name} ({})", r.ending())
            })
            .collect();
        if runs.is_empty() {
            bail!(
                "{}: no repeat ran whole ({}), so it has no medians: name a repeat's own folder",
                dir.display(),
                left_out.join(", ")
            );
        }
        let summaries: Vec<Summary> = runs.iter().map(|r| r.summary.clone()).collect();
        let median = super::repeats::median_summary(&summaries);
        let nearest = runs
            .into_iter()
            .min_by(|a, b| {
                let d = |r: &LoadedRun| (r.summary.overall.mean_us - median.overall.mean_us).abs();
                d(a).total_cmp(&d(b))
            })
            .expect("a repeat folder has a repeat");
        Ok(LoadedRun {
            dir: dir.to_path_buf(),
            summary: median,
            repeats: summaries,
            left_out,
            ..nearest
        })
    }

    /// Reads a finished result folder; an error names the file that is missing or bad.
    pub fn load(dir: &Path) -> Result<LoadedRun> {
        let file = |name| result_dir::file(dir, name);
        let record: RunRecord = result_dir::load_complete(dir)?;
        let summary: Summary = result_dir::seal::read_json(dir, result_dir::SUMMARY_JSON)?;
        let intervals = match file(result_dir::INTERVALS_CSV) {
            path if path.exists() => intervals::read(dir)?,
            _ => Vec::new(),
        };
        let histograms = match file(result_dir::LATENCY_HLOG) {
            path if path.exists() => hlog::read(dir)?,
            _ => Logged::default(),
        };
        let verify = match file(result_dir::VERIFY_JSON) {
            path if path.exists() => Some(read_json(&path)?),
            _ => None,
        };
        let metrics = read_rows(&file(result_dir::SERVER_METRICS_CSV))?;
        let gc = read_rows(&file(result_dir::GC_CSV))?;
        let compactions_csv = file(crate::observe::COMPACTIONS_CSV);
        let compactions = if compactions_csv.exists() {
            Some(read_rows(&compactions_csv)?)
        } else {
            None
        };
        let pools = read_rows(&file(crate::observe::thread_pools::THREAD_POOLS_CSV))?;
        Ok(LoadedRun {
            dir: dir.to_path_buf(),
            record,
            summary,
            intervals,
            histograms,
            verify,
            metrics,
            gc,
            compactions,
            pools,
            repeats: Vec::new(),
            left_out: Vec::new(),
        })
    }

    /// "hatshop-random on cassandra (Apache Cassandra 5.0.4)", after the run's
    /// `--tag` if it has one.
    pub fn label(&self) -> String {
        let workload = match &self.record.events {
            crate::workload::EventSource::Generated { workload } => workload.name.clone(),
            crate::workload::EventSource::File(info) => info
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        let mut repeats = match self.repeats.len() {
            0 => String::new(),
            1 if self.left_out.is_empty() => String::new(),
            1 => ", one whole repeat".to_string(),
            n => format!(", median of {n} repeats"),
        };
        if !self.left_out.is_empty() {
            repeats += &format!("; cut short and left out: {}", self.left_out.join(", "));
        } else if self.repeats.is_empty() && !self.record.ran_its_plan() {
            repeats += &format!(", {}", self.ending());
        }
        let tag = self
            .record
            .tag
            .as_ref()
            .map_or(String::new(), |tag| format!("{tag}: "));
        format!(
            "{tag}{workload} on {} ({}){repeats}",
            self.record.database.store.name, self.record.database.store.server_version
        )
    }

    /// "interrupted after 64,621 operations": how a run that did not run its plan ended.
    fn ending(&self) -> String {
        format!(
            "{} after {} operations",
            self.record.status,
            crate::numbers::thousands(self.record.summarised_ops())
        )
    }

    /// The interval rows of one event type (or `all`), in time order.
    pub fn series(&self, event_type: &str) -> Vec<&IntervalRow> {
        self.intervals
            .iter()
            .filter(|r| r.event_type == event_type)
            .collect()
    }

    /// The run's interval in seconds (1 where the log does not say).
    pub fn interval_s(&self) -> f64 {
        self.histograms
            .interval
            .map_or(1.0, |interval| interval.as_secs_f64())
    }
}

/// The rows of an optional CSV file (none when it is absent).
pub fn read_rows<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let bytes = crate::files::read_own(path, crate::files::RESULT_FILE_LIMIT)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    reader
        .deserialize()
        .collect::<Result<Vec<T>, _>>()
        .with_context(|| format!("{} is not valid", path.display()))
}

/// Checks that the op log of the folder `dir` is there and holds the rows run.json
/// says (each part and journal record checked on the way), where the run kept one.
pub fn check_op_log(dir: &Path, record: &RunRecord) -> Result<()> {
    let Some(rows) = record.expected_op_log_rows() else {
        return Ok(());
    };
    if !record.plan.op_log {
        return Ok(());
    }
    if !OpLog::exists(dir) {
        bail!(
            "op log lost: {} is gone, though run.json says the run kept {rows} rows in it",
            OpLog::dir_of(dir).display()
        );
    }
    let log = OpLog::open(dir)?.of_runs(record.op_log_runs());
    let found = log.count()?;
    if found.rows != rows || found.cut > 0 {
        bail!(
            "the op log {} has {} rows{} but run.json says {rows}: it was cut or changed",
            log.dir().display(),
            found.rows,
            if found.cut > 0 {
                " and a cut last row"
            } else {
                ""
            }
        );
    }
    Ok(())
}
