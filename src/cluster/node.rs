//! What can be done to one node of a running server, by its own pid: kill it (SIGKILL),
//! stop it cleanly, start it again, pause it (SIGSTOP) and resume it (SIGCONT). The
//! server command and a run's fault timeline both come here.

use std::time::Duration;

use super::{Home, ServerDeclarations, process};
use crate::workload::NodeAction;
use anyhow::{Result, bail};

/// Does `action` to `node` (1-based) of the server; returns what happened, in words.
pub fn act(
    home: &Home,
    kind: &'static ServerDeclarations,
    node: usize,
    action: NodeAction,
) -> Result<String> {
    let Some(mut record) = home.record(kind) else {
        bail!(
            "{} has never been started under {}",
            kind.name,
            home.root.display()
        );
    };
    let count = record.nodes.len();
    if node == 0 || node > count {
        bail!(
            "node {node} is out of range: {} has {count} node{}",
            kind.name,
            if count == 1 { "" } else { "s" }
        );
    }
    let index = node - 1;
    let target = record.nodes[index].clone();
    let alive = target.alive();
    let what = match (action, alive) {
        (NodeAction::Start, true) => format!("node {node} already runs (pid {})", target.pid),
        (NodeAction::Start, false) => {
            let fresh = (kind.restart_node)(home, &record, node)?;
            let pid = fresh.pid;
            // A node started again is the same machine: its budget stays.
            let budget = record.budget();
            if !budget.is_none() {
                budget.apply(kind.name, node, pid)?;
                super::budget::remove_empty(kind.name);
            }
            record.nodes[index] = fresh;
            home.save(&record)?;
            format!("node {node} started (pid {pid})")
        }
        (_, false) => format!("node {node} is not running"),
        (NodeAction::Kill, true) => {
            // A paused node dies on SIGKILL too; wait until it is gone.
            process::stop_pid(target.pid, libc::SIGKILL, Duration::from_secs(10))?;
            format!("node {node} killed (pid {})", target.pid)
        }
        (NodeAction::Stop, true) => {
            let _ = process::signal(target.pid, libc::SIGCONT);
            process::stop_pid(target.pid, kind.stop_signal, Duration::from_secs(90))?;
            format!("node {node} stopped (pid {})", target.pid)
        }
        (NodeAction::Pause, true) => {
            process::signal(target.pid, libc::SIGSTOP)?;
            format!("node {node} paused (pid {})", target.pid)
        }
        (NodeAction::Resume, true) => {
            process::signal(target.pid, libc::SIGCONT)?;
            format!("node {node} resumed (pid {})", target.pid)
        }
    };
    Ok(what)
}
