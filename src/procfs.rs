//! What `/proc` says about a process: when it started (with its pid, that tells a live
//! process from a new one that reused the pid) and the CPU it has spent; and what the
//! system says about this machine: its name and its cores.

/// When a process started, in clock ticks since boot (field 22 of /proc/PID/stat): with
/// the pid, it tells a live run from a new process that reused its pid.
pub fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = stat.rsplit_once(')')?.1;
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// User + system CPU seconds in a /proc `stat` line, a process's or a thread's.
pub fn stat_cpu_s(stat: &str) -> Option<f64> {
    // SAFETY: sysconf only reads a constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    // The name sits in parentheses and may hold spaces: fields count after it.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of stat; after the name, 12th and 13th.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / ticks)
}

/// CPU seconds in a /proc `schedstat` line (its first field: ns on a CPU): a thread's
/// time to the nanosecond, where `stat` counts clock ticks of 10 ms.
pub fn schedstat_cpu_s(schedstat: &str) -> Option<f64> {
    let ns: u64 = schedstat.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// CPU seconds process `pid` has spent, all its threads.
pub fn process_cpu_s(pid: u32) -> Option<f64> {
    stat_cpu_s(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// CPU seconds a server has spent, with its child processes: PostgreSQL serves each
/// connection from a backend process of its own, alive (read here) or ended (then in
/// the parent's count of its reaped children). A server of one process is its own.
pub fn server_cpu_s(pid: u32) -> Option<f64> {
    server_cpu_over(pid, &children_of(pid))
}

/// [`server_cpu_s`] over the children already listed.
pub fn server_cpu_over(pid: u32, children: &[u32]) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let reaped = reaped_children_cpu_s(&stat).unwrap_or(0.0);
    let mut total = stat_cpu_s(&stat)? + reaped;
    for &child in children {
        total += process_cpu_s(child).unwrap_or(0.0);
    }
    Some(total)
}

/// The live child processes of `pid` (PostgreSQL's backends under its postmaster): the
/// kernel's lists of each of its threads' children, one read a thread, where reading
/// every process's parent from its `stat` (the way left where the kernel keeps no such
/// list) read a few hundred files, twice a second while sampling a server.
pub fn children_of(pid: u32) -> Vec<u32> {
    if let Some(children) = listed_children(pid) {
        return children;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&child| {
            // Ended meanwhile: not a child any more.
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .is_ok_and(|stat| parent_of(&stat) == Some(pid))
        })
        .collect()
}

/// The children the kernel lists under each thread of `pid` (none once the process is
/// gone); None where it keeps no such lists (a kernel without `CONFIG_PROC_CHILDREN`).
fn listed_children(pid: u32) -> Option<Vec<u32>> {
    let mut children = Vec::new();
    // Every live process has its task folder: without one, it is gone, and scanning
    // /proc for its children would find none, at the scan's cost each second.
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Some(children);
    };
    for task in tasks.flatten() {
        let list = std::fs::read_to_string(task.path().join("children"));
        match list {
            Ok(list) => children.extend(
                list.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            ),
            // A thread that ended meanwhile has no list: the others still count.
            Err(_) if task.path().exists() => return None,
            Err(_) => {}
        }
    }
    Some(children)
}

/// The parent's pid in a /proc `stat` line (field 4).
fn parent_of(stat: &str) -> Option<u32> {
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// cutime + cstime (fields 16 and 17): the CPU of the children it has reaped.
fn reaped_children_cpu_s(stat: &str) -> Option<f64> {
    // SAFETY: sysconf only reads a constant.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let cutime: f64 = fields.get(13)?.parse().ok()?;
    let cstime: f64 = fields.get(14)?.parse().ok()?;
    Some((cutime + cstime) / ticks)
}

/// This machine's name, as the kernel has it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The cores this process may run on (at least one).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |cores| cores.get())
}

/// This machine's memory, bytes (0 where `/proc/meminfo` does not say).
pub fn memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedstat_gives_the_time_on_a_cpu_in_seconds() {
        assert_eq!(
            schedstat_cpu_s("573519502 241221863 1167\n"),
            Some(0.573519502)
        );
        assert_eq!(schedstat_cpu_s(""), None);
        assert_eq!(schedstat_cpu_s("x 1 2"), None);
    }

    #[test]
    fn a_servers_cpu_counts_its_children() {
        let me = std::process::id();
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 5",
            ])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let child_cpu = loop {
            let cpu = process_cpu_s(child.id()).unwrap_or(0.0);
            if cpu >= 0.05 || std::time::Instant::now() > deadline {
                break cpu;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        // Spawned from a test's thread, not the main one: listed all the same.
        assert!(listed_children(me).is_some_and(|listed| listed.contains(&child.id())));
        assert!(children_of(me).contains(&child.id()));
        assert_eq!(listed_children(u32::MAX), Some(Vec::new()));
        let alone = process_cpu_s(me).unwrap();
        let with_children = server_cpu_s(me).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(child_cpu >= 0.05, "the child spent {child_cpu} s");
        assert!(
            with_children >= alone + child_cpu * 0.9,
            "{with_children} < {alone} + {child_cpu}"
        );
    }

    #[test]
    fn this_process_has_a_start_time() {
        let me = std::process::id();
        assert!(process_start(me).is_some());
        assert_eq!(process_start(me), process_start(me));
        assert!(process_start(u32::MAX).is_none());
    }
}
