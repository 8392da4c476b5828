//! How a run, a load or a merged folder stands: the one word run.json and load.json
//! give it, and what each word lets a reader do with the folder.

use std::fmt;

use serde::{Deserialize, Serialize};

/// run.json's and load.json's `status`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Only while its process lives; a folder left so was killed. Every record starts
    /// so.
    #[default]
    Running,
    /// It ran its whole stream.
    Finished,
    /// It ran to its `--duration`.
    StoppedAtDeadline,
    /// Ctrl-C or SIGTERM ended it; its files were written.
    Interrupted,
    /// A failure ended it (a dead database, a file it could not write).
    Failed,
    /// A second signal stopped it at once: the folder needs `hatshop recover`.
    Aborted,
    /// `hatshop recover` rebuilt its files from the op log.
    Recovered,
    /// Only as a recovery's `from_status`: a merged folder none of whose shards was
    /// killed.
    Merged,
}

impl RunStatus {
    /// The word the records and pages use.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::StoppedAtDeadline => "stopped_at_deadline",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
            RunStatus::Aborted => "aborted",
            RunStatus::Recovered => "recovered",
            RunStatus::Merged => "merged",
        }
    }

    /// Whether the run ended as its plan says (its stream, or its `--duration`), not
    /// cut short by a signal, a kill or a failure: only such runs are comparable whole.
    pub fn ran_its_plan(self) -> bool {
        matches!(self, RunStatus::Finished | RunStatus::StoppedAtDeadline)
    }

    /// Whether the run wrote its own ending (its summary, its lanes' last events):
    /// false while it runs, and for one killed or stopped at once by a second signal.
    pub fn wrote_its_end(self) -> bool {
        !matches!(self, RunStatus::Running | RunStatus::Aborted)
    }

    /// How far from finished, for a merged folder, which stands as its least finished
    /// shard: 0 for a failure, up to a run that finished.
    pub fn finish_rank(self) -> u8 {
        match self {
            RunStatus::Running | RunStatus::Aborted | RunStatus::Failed => 0,
            RunStatus::Interrupted => 1,
            RunStatus::Recovered | RunStatus::Merged => 2,
            RunStatus::StoppedAtDeadline => 3,
            RunStatus::Finished => 4,
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [RunStatus; 8] = [
        RunStatus::Running,
        RunStatus::Finished,
        RunStatus::StoppedAtDeadline,
        RunStatus::Interrupted,
        RunStatus::Failed,
        RunStatus::Aborted,
        RunStatus::Recovered,
        RunStatus::Merged,
    ];

    #[test]
    fn each_status_is_written_and_read_as_its_word() {
        for status in ALL {
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(json, format!("\"{status}\""));
            assert_eq!(serde_json::from_str::<RunStatus>(&json).unwrap(), status);
        }
        assert!(serde_json::from_str::<RunStatus>("\"done\"").is_err());
    }

    #[test]
    fn only_a_run_that_ran_its_plan_counts_whole() {
        let whole: Vec<_> = ALL.into_iter().filter(|s| s.ran_its_plan()).collect();
        assert_eq!(whole, [RunStatus::Finished, RunStatus::StoppedAtDeadline]);
        assert!(!RunStatus::Aborted.wrote_its_end());
        assert!(RunStatus::Interrupted.wrote_its_end());
        assert!(RunStatus::Failed.finish_rank() < RunStatus::Interrupted.finish_rank());
        assert!(RunStatus::Recovered.finish_rank() < RunStatus::Finished.finish_rank());
    }
}
