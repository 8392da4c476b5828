//! A node's memory of its own: the kernel's memory controller caps what the node's
//! processes hold, their page cache included, so a data set larger than the budget is
//! read from the disk as on a machine of that size, not from the host's spare memory.
//! The kernel leaves what a process held before it moved in charged where it was, so
//! the group's limit is the budget less what the node holds outside it: the node as a
//! whole never holds more than its budget. A node that needs more than its budget and
//! cannot drop cache is stopped by the kernel, as a machine out of memory would be.

use anyhow::{Context, Result, bail};

use super::cgroup::{self, Controller, Resource};
use crate::cluster::process;

/// The smallest budget taken: below it no server hatshop starts would run.
const FLOOR: u64 = 64 << 20;
/// The least a group's limit leaves a node beyond what it held before: less, and the
/// node would be stopped by the kernel at its first allocation.
const HEADROOM: u64 = 16 << 20;

/// Caps process `pid` (node `node` of `server`) at `bytes` of memory, page cache
/// included, or lifts the cap (`None`).
pub fn apply(server: &str, node: usize, pid: u32, bytes: Option<u64>) -> Result<()> {
    let controller = Controller::find(Resource::Memory)?;
    let dir = controller.group(server, node, pid);
    if bytes.is_none() && !dir.exists() {
        return Ok(());
    }
    controller.create(Resource::Memory, &dir)?;
    cgroup::write(&dir, "cgroup.procs", &pid.to_string())?;
    let limit_file = if controller.is_v1() {
        "memory.limit_in_bytes"
    } else {
        "memory.max"
    };
    let Some(bytes) = bytes else {
        let unlimited = if controller.is_v1() { "-1" } else { "max" };
        return cgroup::write(&dir, limit_file, unlimited);
    };
    let outside = held_outside(&controller, &dir, pid);
    if bytes < outside + HEADROOM {
        bail!(
            "node {node} of {server} already holds {}, more than a memory budget of {} \
             leaves room for",
            said(outside),
            said(bytes)
        );
    }
    // The kernel refuses a limit below what the group holds and cannot drop.
    let limit = bytes - outside;
    std::fs::write(dir.join(limit_file), limit.to_string()).with_context(|| {
        format!(
            "node {node} of {server} holds more than a memory budget of {} and cannot drop it",
            said(bytes)
        )
    })
}

/// What process `pid` holds resident that is charged outside its group `dir`: what it
/// held before it moved in, which the kernel leaves where it was.
fn held_outside(controller: &Controller, dir: &std::path::Path, pid: u32) -> u64 {
    let resident = process::rss_bytes(pid).unwrap_or(0);
    let stat = std::fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
    let (anon, mapped) = if controller.is_v1() {
        ("rss", "mapped_file")
    } else {
        ("anon", "file_mapped")
    };
    let inside = cgroup::stat_field(&stat, anon).unwrap_or(0)
        + cgroup::stat_field(&stat, mapped).unwrap_or(0);
    resident.saturating_sub(inside)
}

/// What a node holds against its budget (from its group).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MemoryUse {
    /// Everything charged to the node: its processes' memory and the page cache.
    pub bytes: u64,
    /// Of that, the page cache: the data the node has cached from its files.
    pub cache_bytes: u64,
}

/// What node `node` (process `pid`) of `server` holds, if it has a group.
pub fn used(server: &str, node: usize, pid: u32) -> Option<MemoryUse> {
    let controller = Controller::find(Resource::Memory).ok()?;
    let dir = controller.group(server, node, pid);
    let read = |file: &str| std::fs::read_to_string(dir.join(file)).ok();
    let stat = read("memory.stat")?;
    let (usage_file, cache_field) = if controller.is_v1() {
        ("memory.usage_in_bytes", "cache")
    } else {
        ("memory.current", "file")
    };
    let inside: u64 = read(usage_file)?.trim().parse().ok()?;
    Some(MemoryUse {
        bytes: inside + held_outside(&controller, &dir, pid),
        cache_bytes: cgroup::stat_field(&stat, cache_field).unwrap_or(0),
    })
}

/// A budget as a flag gives it: `768M`, `1G`, `1.5GiB` or bytes, from 64 MiB to the
/// host's memory.
pub fn check(text: &str) -> Result<u64> {
    let host = crate::procfs::memory_bytes();
    let bytes = parse(text).with_context(|| {
        format!("--memory-per-node takes a size such as 768M or 1.5G, got {text:?}")
    })?;
    if bytes < FLOOR || (host > 0 && bytes > host) {
        bail!(
            "--memory-per-node must be from {} to {} (this host's memory), got {text}",
            said(FLOOR),
            said(host)
        );
    }
    Ok(bytes)
}

/// `"768M"`, `"1G"`, `"1.5GiB"`, `"1073741824"`: binary units, as the JVM's `-Xmx`.
pub fn parse(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..split].parse().ok()?;
    let unit: u64 = match text[split..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    let bytes = number * unit as f64;
    (bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64).then_some(bytes.round() as u64)
}

/// A budget as a server's record keeps it and `check` reads it back: "768M", "2G".
pub fn kept(bytes: u64) -> String {
    match bytes {
        b if b.is_multiple_of(1 << 30) => format!("{}G", b >> 30),
        b if b.is_multiple_of(1 << 20) => format!("{}M", b >> 20),
        b => b.to_string(),
    }
}

/// A budget as people say it: "768 MiB", "1.5 GiB".
pub fn said(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        let gib = bytes as f64 / (1u64 << 30) as f64;
        format!("{} GiB", trimmed(gib))
    } else {
        format!("{} MiB", (bytes as f64 / (1u64 << 20) as f64).round())
    }
}

/// 1.50 → "1.5", 2.00 → "2".
fn trimmed(value: f64) -> String {
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_the_jvm_reads_them() {
        assert_eq!(parse("768M"), Some(768 << 20));
        assert_eq!(parse("1G"), Some(1 << 30));
        assert_eq!(parse("1.5GiB"), Some(3 << 29));
        assert_eq!(parse("1048576"), Some(1 << 20));
        assert_eq!(parse("lots"), None);
        assert_eq!(parse("1T"), None);
        assert_eq!(said(768 << 20), "768 MiB");
        assert_eq!(said(3 << 29), "1.5 GiB");
        for bytes in [768 << 20, 2 << 30, 3 << 29, 1_000_001] {
            assert_eq!(parse(&kept(bytes)), Some(bytes));
        }
    }

    #[test]
    fn a_budget_below_the_floor_is_refused_in_one_line() {
        let error = check("1M").unwrap_err().to_string();
        assert!(error.contains("from 64 MiB"), "{error}");
        assert!(!error.contains('\n'), "{error}");
        assert!(check("half").is_err());
    }
}
