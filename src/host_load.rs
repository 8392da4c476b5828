//! How busy the host was while a run measured: the CPU every process used (from
//! `/proc/stat`), less what hatshop and the servers it watched used, is what other
//! processes took from the two; and the steal a hypervisor took. On a shared machine a
//! neighbour's load shows up as the database's latency, so a run that shared its host
//! says so rather than letting the figure stand for the database's speed.

use std::time::Instant;

use serde::{Deserialize, Serialize};

/// Past this share of the host's CPU taken by other processes, a run is warned of a
/// busy host. On 2 cores, a quiet host with idle servers beside the run measured 1 to
/// 6 %, and one core kept busy by another process 45 to 50 % (bench/NOTES.md).
pub const OTHERS_SHARE: f64 = 0.2;
/// Past this share of the host's CPU stolen by a hypervisor, likewise.
pub const STEAL_SHARE: f64 = 0.05;

/// The host's CPU counters at one instant, in clock ticks.
#[derive(Debug, Clone, Copy)]
pub struct HostTicks {
    at: Instant,
    /// user + nice + system + irq + softirq: what the host's processes used.
    busy: u64,
    steal: u64,
}

impl HostTicks {
    /// Now, from `/proc/stat`'s first line; `None` where it cannot be read.
    pub fn now() -> Option<HostTicks> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        let at = Instant::now();
        let (busy, steal) = busy_and_steal(&stat)?;
        Some(HostTicks { at, busy, steal })
    }
}

/// `/proc/stat`'s `cpu` line: the ticks the host's processes used, and those stolen.
fn busy_and_steal(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let at = |i: usize| ticks.get(i).copied().unwrap_or(0);
    // user nice system idle iowait irq softirq steal (guest is inside user).
    Some((at(0) + at(1) + at(2) + at(5) + at(6), at(7)))
}

/// What run.json records under `host_load`: the host's CPU over the measured phase.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostLoad {
    pub cores: usize,
    /// The share of the host's CPU (wall time × cores) all its processes used.
    pub busy_share: f64,
    /// CPU seconds other processes used: all, less hatshop's and the watched servers'.
    pub others_cpu_s: f64,
    pub others_share: f64,
    pub steal_share: f64,
    /// Whether the CPU of the database's server was taken out of the others' (one
    /// hatshop started and watched).
    pub servers_watched: bool,
}

impl HostLoad {
    /// From `start` until now, given the CPU seconds hatshop (`own_s`) and the servers
    /// it watched (`servers_s`, `None`: none watched) used meanwhile.
    pub fn since(start: &HostTicks, own_s: f64, servers_s: Option<f64>) -> Option<HostLoad> {
        let now = HostTicks::now()?;
        // SAFETY: sysconf only reads a constant of the system.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let hz = if hz > 0 { hz as f64 } else { 100.0 };
        let cores = crate::procfs::cores();
        let capacity = now.at.duration_since(start.at).as_secs_f64() * cores as f64;
        if capacity <= 0.0 {
            return None;
        }
        let busy_s = now.busy.saturating_sub(start.busy) as f64 / hz;
        let steal_s = now.steal.saturating_sub(start.steal) as f64 / hz;
        let others_cpu_s = (busy_s - own_s - servers_s.unwrap_or(0.0)).max(0.0);
        Some(HostLoad {
            cores,
            busy_share: (busy_s / capacity).min(1.0),
            others_cpu_s,
            others_share: (others_cpu_s / capacity).min(1.0),
            steal_share: (steal_s / capacity).min(1.0),
            servers_watched: servers_s.is_some(),
        })
    }

    /// The warning when other processes or a hypervisor took enough of the host to
    /// bend the run's figures. `database_inside`: the database runs inside hatshop.
    /// Where neither holds the database's CPU (a server hatshop did not start), the
    /// others may be the database itself, and only steal is warned of.
    pub fn busy(&self, database_inside: bool) -> Option<String> {
        let known = self.servers_watched || database_inside;
        let took = self.others_share > OTHERS_SHARE && known;
        let stolen = self.steal_share > STEAL_SHARE;
        (took || stolen).then(|| {
            format!(
                "the host was busy: other processes used {:.0} % of its {} cores while measuring, and a hypervisor stole {:.0} %; the database and hatshop waited for CPU, so latencies and throughput are the shared host's, not the database's alone",
                self.others_share * 100.0,
                self.cores,
                self.steal_share * 100.0
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_line_gives_the_busy_ticks_and_the_stolen() {
        let stat = "cpu  100 5 50 900 7 3 2 11 0 0\ncpu0 1 2 3 4\n";
        assert_eq!(busy_and_steal(stat), Some((160, 11)));
        assert_eq!(busy_and_steal("intr 1 2\n"), None);
        assert_eq!(busy_and_steal("cpu  1 x 3\n"), None);
    }

    #[test]
    fn others_are_warned_of_past_the_bound_unless_the_database_may_be_among_them() {
        let load = |others_share, servers_watched| HostLoad {
            cores: 2,
            busy_share: 0.9,
            others_cpu_s: 1.0,
            others_share,
            steal_share: 0.0,
            servers_watched,
        };
        assert!(load(0.05, true).busy(false).is_none());
        let said = load(0.45, true).busy(false).unwrap();
        assert!(said.starts_with("the host was busy: other processes used 45 % of its 2 cores"));
        assert!(load(0.45, false).busy(true).is_some());
        // A server hatshop did not start may be the busy one.
        assert!(load(0.45, false).busy(false).is_none());
    }
}
