//! A result folder read back for reports and comparisons: run.json and summary.json
//! must be there; intervals.csv, latency.hlog and verify.json are used when present.

use std::path::{Path, PathBuf};

use anyhow::Result;

use super::hlog::{self, LoggedHistogram};
use super::intervals::{self, IntervalRow};
use super::read_json;
use crate::result_dir::{self, RunRecord};
use crate::stats::Summary;
use crate::verify::VerifyReport;

pub struct LoadedRun {
    pub dir: PathBuf,
    pub record: RunRecord,
    pub summary: Summary,
    pub intervals: Vec<IntervalRow>,
    pub histograms: Vec<LoggedHistogram>,
    pub verify: Option<VerifyReport>,
}

impl LoadedRun {
    pub fn load(dir: &Path) -> Result<LoadedRun> {
        let file = |name| result_dir::file(dir, name);
        let record: RunRecord = read_json(&file(result_dir::RUN_JSON))?;
        let summary: Summary = read_json(&file(result_dir::SUMMARY_JSON))?;
        let intervals = match file(result_dir::INTERVALS_CSV) {
            path if path.exists() => intervals::read(&path)?,
            _ => Vec::new(),
        };
        let histograms = match file(result_dir::LATENCY_HLOG) {
            path if path.exists() => hlog::read(&path)?,
            _ => Vec::new(),
        };
        let verify = match file(result_dir::VERIFY_JSON) {
            path if path.exists() => Some(read_json(&path)?),
            _ => None,
        };
        Ok(LoadedRun {
            dir: dir.to_path_buf(),
            record,
            summary,
            intervals,
            histograms,
            verify,
        })
    }

    /// "hatshop-random on cassandra 5.0.4".
    pub fn label(&self) -> String {
        let workload = match &self.record.events {
            crate::config::EventSource::Generated { workload } => workload.name.clone(),
            crate::config::EventSource::File(info) => info
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        };
        format!(
            "{workload} on {} {}",
            self.record.database.store.name, self.record.database.store.server_version
        )
    }

    /// The interval rows of one event type (or `all`), in time order.
    pub fn series(&self, event_type: &str) -> Vec<&IntervalRow> {
        self.intervals
            .iter()
            .filter(|r| r.event_type == event_type)
            .collect()
    }

    pub fn interval_s(&self) -> f64 {
        self.histograms
            .first()
            .map(|h| h.duration.as_secs_f64())
            .unwrap_or(1.0)
    }
}
