//! A node's share of the host's CPU: the kernel's CFS quota on the node's group, set
//! once the node has started (start-up and JIT under a small quota are slow). A node
//! then cannot take its neighbours' cores, as a separate machine could not; without it
//! every node of a ring competes for the same cores, the setup study 001's own Fig 1
//! and 2 found "unrealistic". Whether a node added adds capacity is the node's own
//! affair: work it does whatever the load (a JVM's compiler) takes a small share first.

use anyhow::{Result, bail};

use super::cgroup::{self, Controller, Resource};

/// The CFS period the quota is a share of. A node that has spent its share waits for
/// the next period: 10 ms keeps that wait under 10 ms, closer to a slower CPU than the
/// kernel's 100 ms default, which held a 3-node ring 9–17 % lower (bench/NOTES.md).
const PERIOD_US: u64 = 10_000;

/// Caps process `pid` (node `node` of `server`) at `cores` of the host's CPU, or lifts
/// the cap (`None`); every thread of it, and every process it starts from now on.
pub fn apply(server: &str, node: usize, pid: u32, cores: Option<f64>) -> Result<()> {
    let controller = Controller::find(Resource::Cpu)?;
    let dir = controller.group(server, node, pid);
    if cores.is_none() && !dir.exists() {
        return Ok(());
    }
    controller.create(Resource::Cpu, &dir)?;
    let quota = cores.map(|cores| ((cores * PERIOD_US as f64).round() as u64).max(1_000));
    if controller.is_v1() {
        cgroup::write(&dir, "cpu.cfs_period_us", &PERIOD_US.to_string())?;
        cgroup::write(
            &dir,
            "cpu.cfs_quota_us",
            &quota.map_or_else(|| "-1".to_string(), |q| q.to_string()),
        )?;
    } else {
        let quota = quota.map_or_else(|| "max".to_string(), |q| q.to_string());
        cgroup::write(&dir, "cpu.max", &format!("{quota} {PERIOD_US}"))?;
    }
    cgroup::write(&dir, "cgroup.procs", &pid.to_string())
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
    let controller = Controller::find(Resource::Cpu).ok()?;
    let stat =
        std::fs::read_to_string(controller.group(server, node, pid).join("cpu.stat")).ok()?;
    let field = |name| cgroup::stat_field(&stat, name).unwrap_or(0);
    let throttled_s = if controller.is_v1() {
        field("throttled_time") as f64 / 1e9
    } else {
        field("throttled_usec") as f64 / 1e6
    };
    Some(Throttled {
        periods: field("nr_periods"),
        throttled_periods: field("nr_throttled"),
        throttled_s,
    })
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
