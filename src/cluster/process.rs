//! Small process and port helpers for local servers: is a pid alive, signal it, wait
//! for a TCP port, find a free one, run a helper command and keep its output.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// True while a process with this pid exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Resident memory in MiB, if the process exists.
pub fn rss_mib(pid: u32) -> Option<u64> {
    Some(rss_bytes(pid)? >> 20)
}

/// Resident memory in bytes, if the process exists.
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

/// Sends `signal` to `pid`; a process that is gone is an error that says so.
pub fn signal(pid: u32, signal: i32) -> Result<()> {
    // SAFETY: kill(2) has no memory effects; a bad pid is an error, not UB.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    if rc != 0 {
        bail!(
            "cannot signal pid {pid}: {}",
            std::io::Error::last_os_error()
        );
    }
    Ok(())
}

/// Sends `sig`, waits up to `grace` for the process to go, then kills it.
pub fn stop_pid(pid: u32, sig: i32, grace: Duration) -> Result<()> {
    if !alive(pid) {
        return Ok(());
    }
    signal(pid, sig)?;
    let deadline = Instant::now() + grace;
    while alive(pid) {
        if Instant::now() >= deadline {
            signal(pid, libc::SIGKILL)?;
            std::thread::sleep(Duration::from_millis(200));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// The nodes a multi-node start has spawned so far. Dropped before `keep`, it kills
/// them: a start that fails at its third node (a port taken, a timeout, Ctrl-C) leaves
/// no half cluster running that no record names and `server stop` cannot find.
#[derive(Default)]
pub struct Spawned {
    pids: Vec<u32>,
}

impl Spawned {
    /// Takes `pid` into the set, to be killed unless the start succeeds.
    pub fn push(&mut self, pid: u32) -> u32 {
        self.pids.push(pid);
        pid
    }

    /// The processes started so far.
    pub fn pids(&self) -> &[u32] {
        &self.pids
    }

    /// The start succeeded: the nodes stay up, and their record takes them over.
    pub fn keep(mut self) -> Vec<u32> {
        std::mem::take(&mut self.pids)
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        for &pid in &self.pids {
            let _ = stop_pid(pid, libc::SIGKILL, Duration::from_secs(5));
        }
    }
}

/// Whether something accepts a TCP connection at `host:port` within 300 ms.
pub fn port_open(host: &str, port: u16) -> bool {
    let Ok(addr) = format!("{host}:{port}").parse::<SocketAddr>() else {
        return false;
    };
    TcpStream::connect_timeout(&addr, Duration::from_millis(300)).is_ok()
}

/// Where a port comes from when the preferred one is taken: below Linux's ephemeral
/// range (32768–60999). A port from that range was once taken by an outgoing
/// connection's local end between this check and the server's bind (a Voldemort node of
/// the test suite failed to start so, in CI).
const SPARE_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// `preferred` if nothing listens there and it can be bound, else a free spare port.
pub fn free_port(host: &str, preferred: u16) -> Result<u16> {
    free_port_besides(host, preferred, &[])
}

/// As [`free_port`], and none of `chosen`: the ports a cluster's plan has already given
/// its other nodes, free still since nothing binds them until the nodes start.
pub fn free_port_besides(host: &str, preferred: u16, chosen: &[u16]) -> Result<u16> {
    let free = |port: u16| {
        !chosen.contains(&port) && !port_open(host, port) && TcpListener::bind((host, port)).is_ok()
    };
    if free(preferred) {
        return Ok(preferred);
    }
    // Servers started side by side (the test suite's) start their scans apart.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let span = SPARE_PORTS.len() as u32;
    let first = (std::process::id().wrapping_mul(7_919) ^ nanos) % span;
    (0..span)
        .map(|step| SPARE_PORTS.start + ((first + step) % span) as u16)
        .find(|&port| free(port))
        .with_context(|| format!("cannot find a free port on {host} in {SPARE_PORTS:?}"))
}

/// Runs a helper to completion; on failure the error carries its last output lines.
pub fn run_command(cmd: &mut Command, what: &str) -> Result<String> {
    let output = cmd
        .output()
        .with_context(|| format!("cannot run {what} ({:?})", cmd.get_program()))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if !output.status.success() {
        bail!(
            "{what} failed: {}",
            last_lines(&text, 5).replace('\n', " | ")
        );
    }
    Ok(text)
}

/// The last `n` non-empty lines of `text`: the part of a log that says why.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last `n` lines of a log file, or a note that it is empty.
pub fn tail_file(path: &Path, n: usize) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => last_lines(&text, n),
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

/// Finds a program on PATH or in extra folders.
pub fn find_program(name: &str, extra_dirs: &[&str]) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(extra_dirs.iter().map(std::path::PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Whether hatshop runs as root: PostgreSQL's programs must then run as its own user,
/// and only root may install packages.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Loopback addresses for `n` nodes, `127.0.0.(base+1)` … `(base+n)`, on which every one
/// of `ports` is free: nodes of one server share their ports, each on its own address
/// (Linux routes all of 127.0.0.0/8 to `lo`). Bases 10, 20, … are tried in turn.
pub fn free_addresses(n: usize, ports: &[u16]) -> Result<Vec<String>> {
    for base in (10..=240).step_by(10) {
        let hosts: Vec<String> = (1..=n).map(|i| format!("127.0.0.{}", base + i)).collect();
        let free = hosts.iter().all(|host| {
            ports.iter().all(|&port| {
                !port_open(host, port) && TcpListener::bind((host.as_str(), port)).is_ok()
            })
        });
        if free {
            return Ok(hosts);
        }
    }
    bail!("no block of {n} loopback addresses has ports {ports:?} free")
}

/// Whether a process is stopped (SIGSTOP: state `T`).
pub fn paused(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().next().map(|s| s == "T"))
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_taken_port_gives_a_free_one_outside_the_ephemeral_range() {
        let taken = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let preferred = taken.local_addr().unwrap().port();
        let port = free_port("127.0.0.1", preferred).unwrap();
        assert!(SPARE_PORTS.contains(&port), "{port}");
        assert!(TcpListener::bind(("127.0.0.1", port)).is_ok());
    }

    #[test]
    fn ports_a_plan_has_given_are_not_given_again() {
        // Free, but given to another node already: a node of its own gets another.
        let given = TcpListener::bind(("127.0.0.1", 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert_ne!(
            free_port_besides("127.0.0.1", given, &[given]).unwrap(),
            given
        );
        let taken = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let preferred = taken.local_addr().unwrap().port();
        let mut chosen = Vec::new();
        for _ in 0..6 {
            chosen.push(free_port_besides("127.0.0.1", preferred, &chosen).unwrap());
        }
        let mut distinct = chosen.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), chosen.len(), "{chosen:?}");
    }

    #[test]
    fn spawned_nodes_are_killed_unless_kept() {
        let sleeper = || Command::new("sleep").arg("60").spawn().expect("sleep runs");
        let (mut dropped, mut kept) = (sleeper(), sleeper());
        let mut spawned = Spawned::default();
        spawned.push(dropped.id());
        drop(spawned);
        // Reaped here, since the test is its parent: the exit status says it was killed.
        let status = dropped.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(libc::SIGKILL)
        );
        let mut spawned = Spawned::default();
        spawned.push(kept.id());
        assert_eq!(spawned.keep(), vec![kept.id()]);
        assert!(
            kept.try_wait().unwrap().is_none(),
            "a kept node is left running"
        );
        kept.kill().unwrap();
        kept.wait().unwrap();
    }
}
