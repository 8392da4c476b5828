//! The fault player: finds the server a run's fault timeline goes to, then kills,
//! stops, starts, pauses or resumes its nodes at their offsets of the measured phase,
//! through the server module by each node's own pid, and records when each fault
//! really happened.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::{PhaseClock, StopSignal};
use crate::cluster::{self, Home, SERVERS, ServerDeclarations, server_declarations};
use crate::workload::Fault;

/// The faults of a run and the server they go to.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub home: Home,
    pub kind: &'static ServerDeclarations,
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
        if !SERVERS.iter().any(|k| k.store == store) {
            bail!("faults go to a server that hatshop started: {store}:// is not a server");
        }
        let named = faults.iter().find_map(|f| f.server.clone());
        let record = match &named {
            Some(name) => {
                let kind = server_declarations(name).expect("checked");
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
                record.kind.name,
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
    let server = kind.name.to_string();
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
    let measure_start = measure_started(&phases, &stop, &mut over).await;
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
        let (done, outcome) = apply(&home, kind, &fault, &stop).await;
        let took = began.elapsed();
        crate::console::note!(
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

/// When the measured phase began; now, if the run stopped or ended before it did.
async fn measure_started(
    phases: &PhaseClock,
    stop: &StopSignal,
    over: &mut tokio::sync::watch::Receiver<bool>,
) -> Instant {
    loop {
        if let Some(start) = phases.measure.get() {
            return *start;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            _ = stop.stopped() => return Instant::now(),
            _ = over.wait_for(|&o| o) => return Instant::now(),
        }
    }
}

/// Does one fault to its node, off the runtime's threads: whether it was done, and
/// what happened, in words.
async fn apply(
    home: &Home,
    kind: &'static ServerDeclarations,
    fault: &Fault,
    stop: &StopSignal,
) -> (bool, String) {
    let began = Instant::now();
    let home = home.clone();
    let action = fault.action;
    let node = fault.node;
    let work = tokio::task::spawn_blocking(move || cluster::act(&home, kind, node, action));
    // A fault under way is let finish after the run's end (a start waits until the
    // node serves again), but not forever, and not past Ctrl-C.
    let result = tokio::select! {
        result = tokio::time::timeout(FINISH_IN_FLIGHT, work) => Some(result),
        _ = stop.interrupted() => None,
    };
    match result {
        Some(Ok(Ok(Ok(what)))) => (true, what),
        Some(Ok(Ok(Err(e)))) => (false, format!("failed: {e:#}")),
        Some(Ok(Err(e))) => (false, format!("failed: {e}")),
        Some(Err(_)) => (
            false,
            format!("still under way after {} s", began.elapsed().as_secs()),
        ),
        None => (false, "under way when the run was interrupted".into()),
    }
}

/// Each server the faults name must be one hatshop can start; the problem in one line.
pub fn check_servers(faults: &[Fault]) -> Result<(), String> {
    for (number, server) in faults
        .iter()
        .enumerate()
        .filter_map(|(i, fault)| Some((i + 1, fault.server.as_ref()?)))
    {
        if server_declarations(server).is_none() {
            let names: Vec<&str> = SERVERS.iter().map(|k| k.name).collect();
            return Err(format!(
                "fault {number}: server = \"{server}\" is not one of {}",
                names.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::FaultEntry;
    use crate::workload::faults::check_all;

    #[test]
    fn a_fault_names_a_server_hatshop_can_start() {
        let named = FaultEntry {
            at: "1s".into(),
            action: "kill".into(),
            node: 1,
            server: Some("oracle".into()),
        };
        let faults = check_all(&[named]).unwrap();
        assert!(
            check_servers(&faults)
                .unwrap_err()
                .contains("server = \"oracle\"")
        );
    }
}
