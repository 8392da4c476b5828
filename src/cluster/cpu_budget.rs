//! A node as a machine of its own in everything but the network: a fixed share of the
//! host's CPU, the kernel's CFS quota on a control group of the node's own, set once
//! the node has started (start-up and JIT under a small quota are slow). A node added
//! is then capacity added, as a separate machine's would be, up to the host's cores;
//! without it every node of a ring competes for the same cores, the setup study 001's
//! own Fig 1 and 2 found "unrealistic".
//!
//! Processes a node starts later (PostgreSQL's backends) inherit its group. The kernel's
//! cgroup v1 `cpu` controller is used where it is mounted, else cgroup v2's with the
//! `cpu` controller enabled.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The CFS period the quota is a share of. A node that has spent its share waits for
/// the next period: 10 ms keeps that wait under 10 ms, closer to a slower CPU than the
/// kernel's 100 ms default, which held a 3-node ring 9–17 % lower (bench/NOTES.md).
const PERIOD_US: u64 = 10_000;
/// The folder of hatshop's groups under the controller's root.
const GROUPS: &str = "hatshop";

/// Where the kernel's CPU quota is set.
#[derive(Debug, Clone)]
enum Controller {
    /// cgroup v1: `cpu.cfs_period_us` and `cpu.cfs_quota_us`.
    V1(PathBuf),
    /// cgroup v2: `cpu.max`.
    V2(PathBuf),
}

impl Controller {
    /// The controller this machine offers, or why there is none.
    fn find() -> Result<Controller> {
        let v1 = Path::new("/sys/fs/cgroup/cpu");
        if v1.join("cpu.cfs_quota_us").exists() {
            return Ok(Controller::V1(v1.to_path_buf()));
        }
        let v2 = Path::new("/sys/fs/cgroup");
        let controllers =
            std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "cpu") {
            // Children of the root may use the controller only once it is handed down.
            let _ = std::fs::write(v2.join("cgroup.subtree_control"), "+cpu");
            return Ok(Controller::V2(v2.to_path_buf()));
        }
        bail!(
            "this machine's kernel offers no CPU quota (no cgroup cpu controller at \
             /sys/fs/cgroup/cpu, nor in cgroup v2's /sys/fs/cgroup): run without a CPU budget"
        )
    }

    fn root(&self) -> &Path {
        match self {
            Controller::V1(root) | Controller::V2(root) => root,
        }
    }
}

/// The group of one node's process: named by server, node and pid, so that a restarted
/// node gets a group of its own and two homes never share one.
fn group(controller: &Controller, server: &str, node: usize, pid: u32) -> PathBuf {
    controller
        .root()
        .join(GROUPS)
        .join(format!("{server}-node{node}-pid{pid}"))
}

/// Caps process `pid` (node `node` of `server`) at `cores` of the host's CPU, or lifts
/// the cap (`None`); every thread of it, and every process it starts from now on.
pub fn apply(server: &str, node: usize, pid: u32, cores: Option<f64>) -> Result<()> {
    let controller = Controller::find()?;
    let dir = group(&controller, server, node, pid);
    if cores.is_none() && !dir.exists() {
        return Ok(());
    }
    if let Some(parent) = dir.parent()
        && let Controller::V2(_) = controller
    {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        let _ = std::fs::write(parent.join("cgroup.subtree_control"), "+cpu");
    }
    std::fs::create_dir_all(&dir).with_context(|| {
        format!(
            "cannot create the CPU group {} (a CPU budget needs root)",
            dir.display()
        )
    })?;
    let quota = cores.map(|cores| ((cores * PERIOD_US as f64).round() as u64).max(1_000));
    let write = |file: &str, text: String| {
        std::fs::write(dir.join(file), &text)
            .with_context(|| format!("cannot write {text} to {}", dir.join(file).display()))
    };
    match controller {
        Controller::V1(_) => {
            write("cpu.cfs_period_us", PERIOD_US.to_string())?;
            write(
                "cpu.cfs_quota_us",
                quota.map_or_else(|| "-1".to_string(), |q| q.to_string()),
            )?;
        }
        Controller::V2(_) => write(
            "cpu.max",
            format!(
                "{} {PERIOD_US}",
                quota.map_or_else(|| "max".to_string(), |q| q.to_string())
            ),
        )?,
    }
    write("cgroup.procs", pid.to_string())
}

/// How often a node was held back by its quota: periods it ran out of CPU in, of all
/// periods, and the time it waited (from the group's `cpu.stat`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Throttled {
    pub periods: u64,
    pub throttled_periods: u64,
    pub throttled_s: f64,
}

/// What node `node` (process `pid`) of `server` has been held back, if it has a group.
pub fn throttled(server: &str, node: usize, pid: u32) -> Option<Throttled> {
    let controller = Controller::find().ok()?;
    let stat =
        std::fs::read_to_string(group(&controller, server, node, pid).join("cpu.stat")).ok()?;
    let field = |name: &str| {
        stat.lines()
            .find_map(|line| line.strip_prefix(name)?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let throttled_s = match controller {
        Controller::V1(_) => field("throttled_time ") as f64 / 1e9,
        Controller::V2(_) => field("throttled_usec ") as f64 / 1e6,
    };
    Some(Throttled {
        periods: field("nr_periods "),
        throttled_periods: field("nr_throttled "),
        throttled_s,
    })
}

/// Removes the groups of `server` whose processes are gone (a stopped, killed or
/// restarted node's); a group still in use is left.
pub fn remove_empty(server: &str) {
    let Ok(controller) = Controller::find() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(controller.root().join(GROUPS)) else {
        return;
    };
    let prefix = format!("{server}-node");
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            // The kernel refuses to remove a group that still holds a process.
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

/// A budget as a flag gives it: a share of one core, more than 0 and at most the host's
/// cores.
pub fn check(cores: f64) -> Result<f64> {
    let host = crate::procfs::cores() as f64;
    if !(cores.is_finite() && cores >= 0.1 && cores <= host) {
        bail!("--cpu-per-node must be from 0.1 to {host} cores (this host's), got {cores}");
    }
    Ok(cores)
}
