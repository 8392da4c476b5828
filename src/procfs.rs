//! What `/proc` says about a process: when it started (with its pid, that tells a live
//! process from a new one that reused the pid) and the CPU it has spent.

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

/// CPU seconds process `pid` has spent, all its threads.
pub fn process_cpu_s(pid: u32) -> Option<f64> {
    stat_cpu_s(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// This machine's name, as the kernel has it.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_start_time() {
        let me = std::process::id();
        assert!(process_start(me).is_some());
        assert_eq!(process_start(me), process_start(me));
        assert!(process_start(u32::MAX).is_none());
    }
}
