//! Where a run's events come from: generated from a spec (its seed included), or
//! replayed from a JSON Lines file that was checked before the run. Recorded in
//! run.json, so `verify` and reports replay and name the same events.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::WorkloadSpec;

/// Where the events come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EventSource {
    /// Generated from the spec (its seed included).
    Generated { workload: WorkloadSpec },
    /// Replayed from a JSON Lines file, checked before the run.
    File(EventsFileInfo),
}

impl EventSource {
    /// The preset's or spec's name, or the events file's path: what a run replays.
    pub fn name(&self) -> String {
        match self {
            EventSource::Generated { workload } => workload.name.clone(),
            EventSource::File(info) => info.path.display().to_string(),
        }
    }
}

/// An events file, checked: its path, hash and counts.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EventsFileInfo {
    pub path: PathBuf,
    pub sha256: String,
    pub events: u64,
    pub measured_events: u64,
    /// Whether every order write carries its state hash (files from `hatshop generate`
    /// do); when not, hatshop computes the missing ones as it reads.
    #[serde(default)]
    pub has_states: bool,
}
