//! A run that goes on where an earlier run left the database (`--reuse-load`), so a
//! series loads once. hatshop keeps a note beside its marker of how far the seeded
//! stream went in its tables: a run that finished (its stream's end, or its floor),
//! with no failed write and no raced update, leaves them holding exactly the stream's
//! first events up to the last it handed out, and the next run of a stream of the same
//! shape goes on from there instead of loading again. Its events are the ones one long
//! run would have sent after them, so the stream's contract holds for the whole series,
//! and verify replays the stream from its start.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::cli::ReuseLoad;
use crate::config::RunConfig;
use crate::db::{AnyStore, DbError, Marker, Store};
use crate::numbers::thousands;
use crate::result_dir::{RunRecord, RunStatus, WentOnFrom};
use crate::workload::{EventSource, STREAM_VERSION, WorkloadSpec};

/// The note: what the tables hold, and who wrote it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holding {
    /// Names what shapes the stream and the tables ([`shape_of`]).
    pub shape: String,
    /// The stream's first events the tables hold.
    pub events: u64,
    /// The run that wrote the note, and its result folder.
    pub run: String,
    #[serde(default)]
    pub folder: String,
    /// The run's process as hatshop's marker names one (`Marker::of_run`): run ids
    /// repeat across folders, a process does not.
    #[serde(default)]
    pub by: String,
    /// Why the tables do not hold exactly those events, where they do not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_whole: Option<String>,
    /// Whether verify read the tables back since and found them exact: a run going on
    /// from them then has only its own writes read back.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verified_exact: bool,
}

/// The longest note read back: a server's answer is bounded before it is parsed.
const MOST_NOTE_BYTES: usize = 4096;

/// Names what makes two runs' streams and tables the same, whatever their counts: the
/// stream's shape (seed, load, mix, sizes), the generator's version, hatshop's (its
/// tables' layout) and the store's settings.
pub fn shape_of(workload: &WorkloadSpec, config: &RunConfig) -> String {
    let mut sha = Sha256::new();
    let shape = serde_json::to_string(&workload.shape()).expect("a spec serialises");
    let settings = serde_json::to_string(config.settings.given()).expect("settings serialise");
    for part in [
        env!("CARGO_PKG_VERSION"),
        &STREAM_VERSION.to_string(),
        &shape,
        &settings,
    ] {
        sha.update(part.as_bytes());
        sha.update([0]);
    }
    crate::workload::hex(&sha.finalize()[..16])
}

/// The note the store holds, if any; a note too long or not hatshop's reads as none
/// that can be gone on from.
pub async fn read(store: &impl Store) -> Result<Option<Holding>, String> {
    let note = store.holding().await.map_err(|e| e.to_string())?;
    let Some(note) = note else {
        return Ok(None);
    };
    if note.len() > MOST_NOTE_BYTES {
        return Err(format!(
            "its note of what it holds is {} bytes, not hatshop's",
            thousands(note.len() as u64)
        ));
    }
    let not_ours = || "its note of what it holds is not hatshop's".to_string();
    let holding: Holding = serde_json::from_str(&note).map_err(|_| not_ours())?;
    // Its names go to the terminal and the pages: no control character gets there.
    let named = [&holding.shape, &holding.run, &holding.folder, &holding.by];
    if named.iter().any(|text| text.chars().any(char::is_control)) {
        return Err(not_ours());
    }
    Ok(Some(holding))
}

/// Writes the note.
pub async fn write(store: &impl Store, holding: &Holding) -> Result<(), DbError> {
    let note = serde_json::to_string(holding).expect("a note serialises");
    store.write_holding(&note).await
}

/// What a run goes on from: the events the tables hold and the run that left them.
#[derive(Debug, Clone)]
pub struct GoingOn {
    pub events: u64,
    pub from: WentOnFrom,
}

/// Whether the run can go on from what the store holds: `Ok(Some)` where it holds a
/// whole stream of this run's shape, `Ok(None)` where the run is to load (`if-held`),
/// an error naming why it cannot (`must`).
pub async fn going_on(
    store: &AnyStore,
    config: &RunConfig,
    when: ReuseLoad,
) -> Result<Option<GoingOn>> {
    let held = match store.check_owned().await {
        Ok(_) => read(store).await,
        Err(_) => Err("it holds no tables of hatshop's".to_string()),
    };
    let why_not = match (&config.source, held) {
        (EventSource::File(_), _) => {
            "an events file is replayed whole, from its first event".to_string()
        }
        (_, Err(why)) => why,
        (_, Ok(None)) => "hatshop has no note of a whole stream in it".to_string(),
        (EventSource::Generated { workload }, Ok(Some(holding))) => {
            match why_not_going_on(&holding, workload, config) {
                None => {
                    return Ok(Some(GoingOn {
                        events: holding.events,
                        from: WentOnFrom {
                            run: holding.run,
                            folder: holding.folder,
                            verified_exact: holding.verified_exact,
                        },
                    }));
                }
                Some(why) => why,
            }
        }
    };
    match when {
        ReuseLoad::IfHeld => Ok(None),
        ReuseLoad::Must => bail!(
            "--reuse-load: {} cannot be gone on from: {why_not}; run without --reuse-load to \
             load it",
            config.db
        ),
    }
}

/// Why a note does not let this run go on, or `None` where it does.
fn why_not_going_on(
    holding: &Holding,
    workload: &WorkloadSpec,
    config: &RunConfig,
) -> Option<String> {
    if let Some(why) = &holding.not_whole {
        return Some(format!("run {} left it {why}", holding.run));
    }
    if holding.shape != shape_of(workload, config) {
        return Some(format!(
            "it holds the stream of run {}, of another seed, load, mix, size or store setting",
            holding.run
        ));
    }
    if holding.events < workload.load_events() {
        return Some(format!(
            "it holds {} events, fewer than this run's load of {}",
            thousands(holding.events),
            thousands(workload.load_events())
        ));
    }
    None
}

/// The note a run leaves at its end: the tables hold the stream's first events up to
/// the last it handed out, or why not. A run that finished handed out a stream's end,
/// or stopped handing out at its `--min-duration` floor and let its lanes apply all
/// they had been dealt; one its `--duration` stopped, and that drained, let them apply
/// all it had handed out: either way, every event before its last was applied.
pub fn left_by(record: &RunRecord, config: &RunConfig) -> Option<Holding> {
    let EventSource::Generated { workload } = &record.events else {
        return None;
    };
    // Events handed out start where the held ones end (at 0 for a run that loaded).
    let end = workload.held_events + record.planned_events;
    let applied_to = record.applied_to();
    // A run its --duration stopped is whole where its lanes drained what they had
    // been dealt (a run asked to go on drains); the count below says whether they did.
    let ended = matches!(
        record.status,
        RunStatus::Finished | RunStatus::StoppedAtDeadline
    );
    let not_whole = if !ended || record.cut_calls > 0 {
        Some(format!(
            "{} before the end of its stream",
            record.status.as_str()
        ))
    } else if applied_to != end {
        Some(format!(
            "with its lanes at event {} of the {} it handed out",
            thousands(applied_to),
            thousands(end)
        ))
    } else if record.failed_writes > 0 {
        Some(format!(
            "with {} failed writes",
            thousands(record.failed_writes)
        ))
    } else if config.conflicts > 0.0 {
        Some("with updates raced across lanes (--conflicts)".to_string())
    } else {
        None
    };
    Some(Holding {
        shape: shape_of(workload, config),
        events: end,
        run: record.run_id.clone(),
        folder: folder_of(config),
        by: Marker::of_run(
            &record.hatshop_version,
            &record.run_id,
            record.pid,
            record.process_start,
        ),
        not_whole,
        verified_exact: false,
    })
}

/// The note a run that goes on from `held` events writes before it sends anything:
/// until its end says otherwise, the tables hold no whole stream.
pub fn going_on_note(workload: &WorkloadSpec, held: u64, config: &RunConfig) -> Holding {
    Holding {
        shape: shape_of(workload, config),
        events: held,
        run: config.run_id.clone(),
        folder: folder_of(config),
        by: this_process(&config.run_id),
        not_whole: Some("part-way through its stream (still running, or killed)".to_string()),
        verified_exact: false,
    }
}

/// The run's folder as the note names it: whole, so another run's line can point at
/// it, and its end alone past [`MOST_FOLDER_CHARS`], so the note stays one a later run
/// reads.
fn folder_of(config: &RunConfig) -> String {
    let folder = std::path::absolute(&config.out_dir)
        .unwrap_or_else(|_| config.out_dir.clone())
        .display()
        .to_string();
    let chars = folder.chars().count();
    match chars.checked_sub(MOST_FOLDER_CHARS) {
        Some(over) if over > 0 => format!("…{}", folder.chars().skip(over + 1).collect::<String>()),
        _ => folder,
    }
}

/// The longest folder a note names, in characters.
const MOST_FOLDER_CHARS: usize = 512;

/// How the marker names run `run_id` of this process.
fn this_process(run_id: &str) -> String {
    let pid = std::process::id();
    Marker::of_run(
        env!("CARGO_PKG_VERSION"),
        run_id,
        pid,
        crate::procfs::process_start(pid).unwrap_or(0),
    )
}
