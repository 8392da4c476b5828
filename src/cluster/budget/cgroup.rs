//! The kernel's control groups a node's budget is kept in: one group per node and
//! controller, under a `hatshop` folder of the controller's root. The cgroup v1
//! controller is used where it is mounted (`/sys/fs/cgroup/cpu`, `/sys/fs/cgroup/memory`),
//! else cgroup v2's unified tree with the controller handed down to hatshop's groups.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The folder of hatshop's groups under the controller's root.
const GROUPS: &str = "hatshop";

/// The longest a stopped node's group is waited on to be let go by the kernel.
const LET_GO: std::time::Duration = std::time::Duration::from_secs(3);

/// A controller a budget is set through.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resource {
    Cpu,
    Memory,
}

impl Resource {
    /// The controller's name, as the kernel mounts and lists it.
    fn name(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu",
            Resource::Memory => "memory",
        }
    }

    /// A file of cgroup v1 that only this controller has, to tell it is mounted.
    fn v1_marker(self) -> &'static str {
        match self {
            Resource::Cpu => "cpu.cfs_quota_us",
            Resource::Memory => "memory.limit_in_bytes",
        }
    }
}

/// Where one controller's groups live.
#[derive(Debug, Clone)]
pub enum Controller {
    V1(PathBuf),
    V2(PathBuf),
}

impl Controller {
    /// The controller this machine offers for `resource`, or why there is none.
    pub fn find(resource: Resource) -> Result<Controller> {
        let v1 = Path::new("/sys/fs/cgroup").join(resource.name());
        if v1.join(resource.v1_marker()).exists() {
            return Ok(Controller::V1(v1));
        }
        let v2 = Path::new("/sys/fs/cgroup");
        let controllers =
            std::fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == resource.name()) {
            // Children of the root may use the controller only once it is handed down.
            let _ = std::fs::write(
                v2.join("cgroup.subtree_control"),
                format!("+{}", resource.name()),
            );
            return Ok(Controller::V2(v2.to_path_buf()));
        }
        bail!(
            "this machine's kernel offers no {0} budget (no cgroup {0} controller at \
             /sys/fs/cgroup/{0}, nor in cgroup v2's /sys/fs/cgroup)",
            resource.name()
        )
    }

    /// The group of one node's process: named by server, node and pid, so that a
    /// restarted node gets a group of its own and two homes never share one.
    pub fn group(&self, server: &str, node: usize, pid: u32) -> PathBuf {
        self.root()
            .join(GROUPS)
            .join(format!("{server}-node{node}-pid{pid}"))
    }

    /// Makes the group of a node, with the controller handed down to it on cgroup v2.
    pub fn create(&self, resource: Resource, dir: &Path) -> Result<()> {
        if let (Some(parent), Controller::V2(_)) = (dir.parent(), self) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
            let _ = std::fs::write(
                parent.join("cgroup.subtree_control"),
                format!("+{}", resource.name()),
            );
        }
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "cannot create the {} group {} (a budget needs root)",
                resource.name(),
                dir.display()
            )
        })
    }

    /// Whether it is cgroup v1's, whose files are named otherwise than v2's.
    pub fn is_v1(&self) -> bool {
        matches!(self, Controller::V1(_))
    }

    fn root(&self) -> &Path {
        match self {
            Controller::V1(root) | Controller::V2(root) => root,
        }
    }

    /// Removes the groups of `server` whose processes are gone (a stopped, killed or
    /// restarted node's); a group still in use is left. The kernel lets go of a process
    /// that has just exited a moment after it is gone from `/proc`, so the group of a
    /// node no longer alive is tried again for up to [`LET_GO`].
    pub fn remove_empty(&self, server: &str) {
        let Ok(entries) = std::fs::read_dir(self.root().join(GROUPS)) else {
            return;
        };
        let prefix = format!("{server}-node");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(&prefix) {
                continue;
            }
            let gone = name
                .rsplit_once("-pid")
                .and_then(|(_, pid)| pid.parse::<u32>().ok())
                .is_some_and(|pid| !crate::cluster::process::alive(pid));
            let deadline = std::time::Instant::now() + LET_GO;
            // The kernel refuses to remove a group that still holds a process.
            while std::fs::remove_dir(entry.path()).is_err()
                && gone
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        }
    }
}

/// Writes `text` to a group's `file`, the path and text in its error.
pub fn write(dir: &Path, file: &str, text: &str) -> Result<()> {
    std::fs::write(dir.join(file), text)
        .with_context(|| format!("cannot write {text} to {}", dir.join(file).display()))
}

/// A number a group's stat file gives after `name ` (`cpu.stat`, `memory.stat`).
pub fn stat_field(stat: &str, name: &str) -> Option<u64> {
    stat.lines().find_map(|line| {
        let (key, value) = line.split_once(' ')?;
        (key == name).then(|| value.trim().parse().ok())?
    })
}
