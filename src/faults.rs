//! Faults on a timeline: kill, stop, start, pause or resume one node of a server that
//! hatshop started, at given offsets of the measured phase. Declared as `[[faults]]`
//! in a workload spec or in a file of their own (`--faults FILE`), checked before
//! anything runs (each problem one line), and played by the run through the server
//! module, by the node's own pid. Each fault is recorded with when it really happened.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::cluster::{self, Home, NodeAction, ServerKind};
use crate::runner::{PhaseClock, StopSignal};

/// One `[[faults]]` table as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultEntry {
    /// Offset into the measured phase: "20s", "1m30s", "500ms".
    pub at: String,
    /// kill | stop | start | pause | resume
    pub action: String,
    /// 1-based, as `hatshop server status` numbers the nodes.
    pub node: u64,
    /// The server (cassandra, galera, mysql, …); default: the one serving the URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// A checked fault.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    pub at: Duration,
    pub action: NodeAction,
    pub node: usize,
    pub server: Option<String>,
}

/// A file given to `--faults`: only `[[faults]]` tables.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultsFile {
    #[serde(default)]
    faults: Vec<FaultEntry>,
}

impl FaultEntry {
    /// Checks what can be checked without a server; `number` is 1-based.
    pub fn check(&self, number: usize) -> Result<Fault, String> {
        let at = humantime::parse_duration(self.at.trim()).map_err(|_| {
            format!(
                "fault {number}: at = \"{}\" is not a duration (write e.g. \"20s\", \"1m30s\", \"500ms\")",
                self.at
            )
        })?;
        let action = NodeAction::parse(&self.action).ok_or_else(|| {
            let actions: Vec<&str> = NodeAction::ALL.iter().map(|a| a.as_str()).collect();
            format!(
                "fault {number}: action = \"{}\" is not one of {}",
                self.action,
                actions.join(", ")
            )
        })?;
        if self.node == 0 || self.node > cluster::MAX_NODES as u64 {
            return Err(format!(
                "fault {number}: node = {} is out of range: nodes are numbered 1 to {}",
                self.node,
                cluster::MAX_NODES
            ));
        }
        if let Some(server) = &self.server
            && ServerKind::find(server).is_none()
        {
            let names: Vec<&str> = ServerKind::all().iter().map(|k| k.name()).collect();
            return Err(format!(
                "fault {number}: server = \"{server}\" is not one of {}",
                names.join(", ")
            ));
        }
        Ok(Fault {
            at,
            action,
            node: self.node as usize,
            server: self.server.clone(),
        })
    }
}

/// Checks every entry, in time order.
pub fn check_all(entries: &[FaultEntry]) -> Result<Vec<Fault>, String> {
    let mut faults = entries
        .iter()
        .enumerate()
        .map(|(i, entry)| entry.check(i + 1))
        .collect::<Result<Vec<_>, _>>()?;
    faults.sort_by_key(|f| f.at);
    Ok(faults)
}

/// Reads a `--faults` file: `[[faults]]` tables and nothing else.
pub fn read_file(path: &Path) -> Result<Vec<FaultEntry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read faults file {}", path.display()))?;
    let file: FaultsFile = toml::from_str(&text).map_err(|e| {
        let line = e
            .span()
            .map(|span| text[..span.start.min(text.len())].matches('\n').count() + 1);
        let message = e.message().trim().replace('\n', " ");
        match line {
            Some(line) => anyhow::anyhow!("{}: line {line}: {message}", path.display()),
            None => anyhow::anyhow!("{}: {message}", path.display()),
        }
    })?;
    check_all(&file.faults).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(file.faults)
}

/// The faults of a run and the server they go to.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub home: Home,
    pub kind: ServerKind,
    pub faults: Vec<Fault>,
}

impl Timeline {
    /// Finds the server each fault goes to (the one whose nodes the URL names, unless a
    /// fault names another) and checks every node number against it.
    pub fn resolve(
        faults: Vec<Fault>,
        home: Home,
        store: &str,
        hosts: &[(String, u16)],
    ) -> Result<Timeline> {
        if !ServerKind::all().iter().any(|k| k.meta().store == store) {
            bail!("faults go to a server that hatshop started: {store}:// is not a server");
        }
        let named = faults.iter().find_map(|f| f.server.clone());
        let record = match &named {
            Some(name) => {
                let kind = ServerKind::find(name).expect("checked");
                home.running(kind).with_context(|| {
                    format!(
                        "faults name server {name}, which is not running under {}",
                        home.root.display()
                    )
                })?
            }
            None => home.serving(store, hosts).with_context(|| {
                let hosts: Vec<String> = hosts.iter().map(|(h, p)| format!("{h}:{p}")).collect();
                format!(
                    "faults need a server started by hatshop, and none under {} serves {} \
                     (start one with `hatshop server start`, or give --home)",
                    home.root.display(),
                    hosts.join(",")
                )
            })?,
        };
        if faults
            .iter()
            .any(|f| f.server.is_some() && f.server != named)
        {
            bail!("faults name more than one server: one timeline goes to one server");
        }
        let count = record.nodes.len();
        if let Some(fault) = faults.iter().find(|f| f.node > count) {
            bail!(
                "fault at {}: node {} is out of range: {} has {count} node{}",
                humantime::format_duration(fault.at),
                fault.node,
                record.kind.name(),
                if count == 1 { "" } else { "s" }
            );
        }
        Ok(Timeline {
            home,
            kind: record.kind,
            faults,
        })
    }
}

/// One fault as it happened (run.json and faults.csv).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FaultRecord {
    /// When it was due, seconds into the measured phase.
    pub at_s: f64,
    pub action: String,
    pub node: usize,
    pub server: String,
    /// When it began, seconds into the measured phase (empty: it never began).
    pub began_s: Option<f64>,
    /// Its wall time, RFC 3339.
    pub began_at: Option<String>,
    /// How long the action took (a start waits until the node serves again).
    pub took_s: Option<f64>,
    pub done: bool,
    /// What happened, in words ("node 2 killed (pid 4242)", an error, "not reached").
    pub outcome: String,
}

/// How long a fault already under way may finish after the run's end.
const FINISH_IN_FLIGHT: Duration = Duration::from_secs(120);

/// Plays the timeline: waits for the measured phase, then applies each fault at its
/// offset. Ends when every fault is done, or soon after `over` (the run ended) or a
/// stop: faults not reached are recorded as such.
pub async fn play(
    timeline: Timeline,
    phases: Arc<PhaseClock>,
    stop: Arc<StopSignal>,
    mut over: tokio::sync::watch::Receiver<bool>,
) -> Vec<FaultRecord> {
    let Timeline { home, kind, faults } = timeline;
    let mut records = Vec::with_capacity(faults.len());
    let server = kind.name().to_string();
    let unreached = |fault: &Fault, why: &str| FaultRecord {
        at_s: fault.at.as_secs_f64(),
        action: fault.action.as_str().into(),
        node: fault.node,
        server: server.clone(),
        began_s: None,
        began_at: None,
        took_s: None,
        done: false,
        outcome: why.into(),
    };
    // Wait for the measured phase.
    let measure_start = loop {
        if let Some(start) = phases.measure.get() {
            break *start;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = stop.stopped() => break Instant::now(),
            _ = over.wait_for(|&o| o) => break Instant::now(),
        }
    };
    let mut faults = faults.into_iter();
    for fault in faults.by_ref() {
        let due = measure_start + fault.at;
        let ended = tokio::select! {
            _ = tokio::time::sleep_until(due.into()) => None,
            _ = stop.stopped() => Some("not reached: the run was stopped first"),
            _ = over.wait_for(|&o| o) => Some("not reached: the run ended first"),
        };
        if let Some(why) = ended {
            records.push(unreached(&fault, why));
            break;
        }
        let began = Instant::now();
        let began_wall = SystemTime::now();
        let home = home.clone();
        let action = fault.action;
        let node = fault.node;
        let work = tokio::task::spawn_blocking(move || cluster::act(&home, kind, node, action));
        // A fault under way is let finish after the run's end (a start waits until
        // the node serves again), but not forever, and not past Ctrl-C.
        let result = tokio::select! {
            result = tokio::time::timeout(FINISH_IN_FLIGHT, work) => Some(result),
            _ = stop.interrupted() => None,
        };
        let took = began.elapsed();
        let (done, outcome) = match result {
            Some(Ok(Ok(Ok(what)))) => (true, what),
            Some(Ok(Ok(Err(e)))) => (false, format!("failed: {e:#}")),
            Some(Ok(Err(e))) => (false, format!("failed: {e}")),
            Some(Err(_)) => (false, format!("still under way after {} s", took.as_secs())),
            None => (false, "under way when the run was interrupted".into()),
        };
        crate::note!(
            "fault at {}: {outcome} ({:.1} s)",
            humantime::format_duration(fault.at),
            took.as_secs_f64()
        );
        records.push(FaultRecord {
            at_s: fault.at.as_secs_f64(),
            action: fault.action.as_str().into(),
            node: fault.node,
            server: server.clone(),
            began_s: Some(began.saturating_duration_since(measure_start).as_secs_f64()),
            began_at: Some(humantime::format_rfc3339_millis(began_wall).to_string()),
            took_s: Some(took.as_secs_f64()),
            done,
            outcome,
        });
    }
    for fault in faults {
        records.push(unreached(&fault, "not reached: the run ended first"));
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at: &str, action: &str, node: u64) -> FaultEntry {
        FaultEntry {
            at: at.into(),
            action: action.into(),
            node,
            server: None,
        }
    }

    #[test]
    fn good_entries_become_faults_in_time_order() {
        let faults = check_all(&[
            entry("40s", "start", 2),
            entry("1m", "resume", 1),
            entry("20s", "kill", 2),
        ])
        .unwrap();
        let at: Vec<u64> = faults.iter().map(|f| f.at.as_secs()).collect();
        assert_eq!(at, [20, 40, 60]);
        assert_eq!(faults[0].action, NodeAction::Kill);
    }

    #[test]
    fn each_problem_is_one_line_that_names_the_fault() {
        let cases = [
            (
                entry("soon", "kill", 1),
                "fault 1: at = \"soon\" is not a duration",
            ),
            (
                entry("20s", "explode", 1),
                "fault 1: action = \"explode\" is not one of kill, stop, start, pause, resume",
            ),
            (entry("20s", "kill", 0), "fault 1: node = 0 is out of range"),
            (entry("20s", "kill", 9), "fault 1: node = 9 is out of range"),
        ];
        for (bad, expected) in cases {
            let error = check_all(&[bad]).unwrap_err();
            assert!(error.starts_with(expected), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
        let mut named = entry("1s", "kill", 1);
        named.server = Some("oracle".into());
        assert!(
            check_all(&[named])
                .unwrap_err()
                .contains("server = \"oracle\"")
        );
    }

    #[test]
    fn a_faults_file_is_read_and_its_errors_name_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.toml");
        std::fs::write(
            &good,
            "[[faults]]\nat = \"20s\"\naction = \"kill\"\nnode = 2\n",
        )
        .unwrap();
        assert_eq!(read_file(&good).unwrap().len(), 1);
        let bad = dir.path().join("bad.toml");
        std::fs::write(
            &bad,
            "[[faults]]\nat = \"20s\"\nacton = \"kill\"\nnode = 2\n",
        )
        .unwrap();
        let error = format!("{:#}", read_file(&bad).unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("acton"),
            "{error}"
        );
        assert!(!error.contains('\n'), "{error}");
    }
}
